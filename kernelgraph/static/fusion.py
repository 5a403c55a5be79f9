"""Elementwise fusion: a tree of elementwise ops becomes one generated numba kernel.

``relu(x * w + b)`` is three kernels and two temporary arrays when run op by op; fused, it is
one loop that reads x, w and b once and writes the result once. The pass finds *groups*: an
elementwise node together with the elementwise producers whose value nothing else needs
(not fetched, no other reader). Each group becomes one node whose kernel is generated Python
source, compiled by numba's ``vectorize`` into a NumPy ufunc (so broadcasting works as before)
and cached on disk, keyed by the source: a second process loads it instead of compiling.

The generated code calls the very scalar functions the single-op kernels are made of
(:mod:`kernelgraph.kernels.cpu`) and converts every intermediate to the dtype its node
has, so a fused result has the same bits as the unfused one::

    def fused(x0, x1, x2):
        t0 = float32(_mul(x0, x1))        # mul
        t1 = float32(_add(t0, x2))        # add
        return float32(_relu(t1))         # relu
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile

import numpy as np

from .. import dtypes as D
from ..ops.registry import Op
from .passes import _clone

# Elementwise ops with a scalar body in kernels/cpu.py (cast, pow on ints, *_like are not
# fused: their CPU forwards do more than apply the body).
_FUSABLE = frozenset((
    "add", "sub", "mul", "div", "maximum", "minimum", "neg", "exp", "log", "sqrt", "tanh",
    "sigmoid", "relu", "abs", "tanh_grad", "sigmoid_grad", "relu_grad", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "where", "pow"))
_SCALAR_NAMES = {"equal": "_eq", "not_equal": "_ne", "less": "_lt", "less_equal": "_le",
                 "greater": "_gt", "greater_equal": "_ge"}
_KERNELS: dict[str, np.ufunc] = {}  # source hash -> ufunc, for this process


def cache_dir() -> str:
    """Where generated kernels are kept (``KERNELGRAPH_CACHE``, else ~/.cache/kernelgraph)."""
    root = os.environ.get("KERNELGRAPH_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "kernelgraph")
    return os.path.join(root, "fused")


def fusable(n) -> bool:
    """Whether ``n`` can be computed inside a fused kernel (any shape: the ufunc
    broadcasts at run time)."""
    if n.op.name not in _FUSABLE or n.device.type != "cpu" or n.control_inputs:
        return False
    if n.op.name == "pow" and n.dtype.kind != "f":
        return False  # integer powers check for negative exponents first
    if n.op.name == "where" and n.inputs[0].dtype.name != "bool":
        return False  # its forward converts a non-bool condition first
    return True


def _scalar_body(name: str) -> str:
    return _SCALAR_NAMES.get(name, f"_{name}")


class FusedKernel:
    """One group's generated source and its compiled ufunc."""

    def __init__(self, key: str, source: str, ufunc, members: list[str]):
        self.key = key
        self.source = source
        self.ufunc = ufunc
        self.members = members

    def __call__(self, *args):
        out = self.ufunc(*args)
        return out if type(out) is np.ndarray else np.asarray(out)

    def __repr__(self):
        return f"<fused kernel of {', '.join(self.members)}>"


def generate(root, members: list, leaves: list) -> str:
    """The source of the fused kernel for ``members`` (topological order, ``root`` last)
    reading ``leaves`` as x0, x1, ..."""
    names = {id(x): f"x{i}" for i, x in enumerate(leaves)}
    args = ", ".join(names[id(x)] for x in leaves)
    body = []
    for k, n in enumerate(members):
        operands = ", ".join(_cast(names[id(i)], i, n) for i in n.inputs)
        value = f"{_scalar_body(n.op.name)}({operands})"
        if n.dtype.name != "bool":  # as the single-op loop stores it: in the node's dtype
            value = f"{n.dtype.name}({value})"
        if n is root:
            body.append(f"    return {value}  # {n.name}")
        else:
            names[id(n)] = f"t{k}"
            body.append(f"    t{k} = {value}  # {n.name}")
    sig = f"{_numba_type(root.dtype)}({', '.join(_numba_type(x.dtype) for x in leaves)})"
    bodies = sorted({_scalar_body(n.op.name) for n in members})
    return ("from numba import float32, float64, int32, int64, njit, vectorize  # noqa\n"
            "from kernelgraph.kernels import cpu\n\n"
            + "".join(f"{b} = njit(cpu.{b})\n" for b in bodies) + "\n\n"
            f"@vectorize([{sig!r}], cache=True)\n"
            f"def fused({args}):\n" + "\n".join(body) + "\n")


def _numba_type(dt) -> str:
    return "boolean" if dt.name == "bool" else dt.name


def _cast(name: str, x, consumer) -> str:
    """An operand converted to the dtype the consumer's single-op kernel computes in (the
    CPU forward casts its inputs to that dtype before the loop)."""
    compute = _compute_dtype(consumer)
    if x.dtype == compute or (consumer.op.name == "where" and x is consumer.inputs[0]):
        return name
    return f"{_numba_type(compute)}({name})"


def _compute_dtype(n):
    """The dtype the single-op loop of ``n`` runs in: its output dtype, except comparisons
    (inputs promoted together, output bool) and where (its value operands)."""
    if n.op.name in _SCALAR_NAMES:
        return D.promote(n.inputs[0].dtype, n.inputs[1].dtype)
    return n.dtype


def compile_source(source: str, members: list[str]) -> FusedKernel:
    """Load (or compile once and cache on disk) the kernel in ``source``."""
    key = hashlib.sha256(source.encode()).hexdigest()[:20]
    ufunc = _KERNELS.get(key)
    if ufunc is None:
        ufunc = _KERNELS[key] = _load(key, source)
    return FusedKernel(key, source, ufunc, members)


def _writable_cache_dir() -> str:
    """:func:`cache_dir`, or a folder in the temporary directory when that cannot be
    written (a read-only home on a shared server): fusion must not make a run fail."""
    user = os.getuid() if hasattr(os, "getuid") else "user"
    for folder in (cache_dir(), os.path.join(tempfile.gettempdir(), f"kernelgraph-{user}",
                                             "fused")):
        try:
            os.makedirs(folder, exist_ok=True)
            if os.access(folder, os.W_OK):
                return folder
        except OSError:
            continue
    raise OSError("no writable folder for generated kernels; set KERNELGRAPH_CACHE")


def _load(key: str, source: str):
    folder = _writable_cache_dir()
    path = os.path.join(folder, f"fused_{key}.py")
    if not os.path.exists(path):  # written atomically: another process may read it now
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(source)
        os.replace(tmp, path)
    name = f"kernelgraph_fused_{key}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # numba's cache locates functions through their module
    spec.loader.exec_module(module)
    return module.fused.ufunc  # the plain NumPy ufunc: cheaper to call than numba's wrapper


def fuse(program, fetched_ids: set) -> tuple[list, list, list]:
    """(nodes, fetches, changes): ``program``'s nodes with every fusable group replaced by
    one fused node (named after the group's output)."""
    consumers: dict[int, list] = {}
    for n in program.nodes:
        for i in n.inputs:
            consumers.setdefault(id(i), []).append(n)
    group_of: dict[int, int] = {}  # node id -> id of its group's root
    for n in reversed(program.nodes):
        if id(n) in program.feeds or not fusable(n):
            continue
        users = consumers.get(id(n), [])
        roots = {group_of.get(id(u)) for u in users}
        if (id(n) not in fetched_ids and users and len(roots) == 1 and None not in roots):
            group_of[id(n)] = roots.pop()  # only its group reads it: computed inside
        else:
            group_of[id(n)] = id(n)
    groups: dict[int, list] = {}
    for n in program.nodes:
        root = group_of.get(id(n))
        if root is not None:
            groups.setdefault(root, []).append(n)
    replaced, changes, nodes = {}, [], []
    for n in program.nodes:  # in order, so every leaf is already rewired when it is read
        members = groups.get(group_of.get(id(n)), ())
        if len(members) < 2:
            new = _rewired(n, replaced)
            if new is not n:
                replaced[id(n)] = new
            nodes.append(new)
            continue
        if n is not members[-1]:
            continue  # computed inside the fused kernel of its group's root
        inside = {id(m) for m in members}
        leaves = []
        for m in members:
            for i in m.inputs:
                if id(i) not in inside and all(i is not x for x in leaves):
                    leaves.append(i)
        source = generate(n, members, leaves)
        kernel = compile_source(source, [m.name for m in members])
        fused = _fused_node(n, [replaced.get(id(i), i) for i in leaves], kernel)
        replaced[id(n)] = fused
        nodes.append(fused)
        changes.append(f"{n.name} <- {' '.join(m.name for m in members[:-1])}")
    fetches = [replaced.get(id(f), f) for f in program.fetches]
    return nodes, fetches, changes


def _rewired(n, replaced):
    inputs = tuple(replaced.get(id(i), i) for i in n.inputs)
    return n if inputs == n.inputs else _clone(n, inputs)


def _fused_node(root, leaves, kernel):
    # Named by its source's hash: groups with the same code share one kernel.
    op = Op(f"fused_{kernel.key[:8]}", kernel, None, None,
            doc="A group of elementwise ops run as one generated kernel.")
    return _clone(root, tuple(leaves), op=op, attrs={})
