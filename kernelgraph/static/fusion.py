"""Elementwise fusion: a tree of elementwise ops becomes one generated numba kernel.

``relu(x * w + b)`` is three kernels and two temporary arrays when run op by op; fused, it is
one loop that reads x, w and b once and writes the result once. The pass finds *groups*: an
elementwise node together with the elementwise producers whose value nothing else needs
(not fetched, no other reader). Each group becomes one node whose kernel is generated Python
source, compiled by numba's ``vectorize`` into a NumPy ufunc (so broadcasting works as before)
and cached on disk, keyed by the source: a second process loads it instead of compiling.
A group never grows past what one ufunc or CUDA launch takes (:data:`MAX_OPERANDS`) nor past
:data:`MAX_GROUP` members, and groups whose code differs only in its comments (the member
nodes' names, escaped by :func:`kernelgraph.codegen.comment`) share one compiled kernel, so
a long chain costs compile time linear in its length.

Which ops may join a group is on their cards (trait ``fusable``; ``transcendental`` and
``logical`` limit where). The generated code calls the very scalar functions the single-op
kernels are made of (each card's ``scalar``, in :mod:`kernelgraph.kernels.cpu`) and converts
every intermediate to the dtype its node has (each card's ``compute`` rule), so a fused
result has the same bits as the unfused one::

    def fused(x0, x1, x2):
        t0 = float32(_mul(x0, x1))        # mul
        t1 = float32(_add(t0, x2))        # add
        return float32(_relu(t1))         # relu

Groups placed on a CUDA device fuse the same way (a group never mixes devices): the same
lines become a ``cuda.jit(device=True)`` function, each float intermediate wrapped in
``keep(...)`` so the GPU compiler cannot contract a multiply and the next node's add into
one fused multiply-add (see :mod:`kernelgraph.kernels.cuda.fused`), followed by the flat and
strided kernels that map it over the broadcast operands. On a GPU numba caches those
kernels on disk (``cache=True``); under the simulator they are compiled once per process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import tempfile

import numpy as np
from numba import from_dtype
from numba.core.event import install_recorder

from .. import codegen, devices
from .. import dtypes as D
from ..kernels import cpu, ufunc_cache
from ..ops import add, sub
from ..ops.elementwise import pow as _pow_op
from ..ops.elementwise import where as _where_op
from ..ops.registry import FusedOp, cuda_package
from .program import clone as _clone
from .variables import assign_add_op, assign_sub_op

_UPDATES = {assign_add_op: add, assign_sub_op: sub}  # the elementwise op each update applies
# Names the generated modules define or import: no scalar body may be bound to one.
_RESERVED = ("fused", "flat", "strided", "keep", "cpu", "cuda", "njit", "vectorize",
             "float32", "float64", "int32", "int64", "boolean")
# How big a group may grow. LLVM vectorises the loop numba builds around a group's scalar
# function only while that function is small enough to inline and holds at most one call to
# a math-library function (tanh, exp ...): measured on a 2-core x86 machine, a fused
# tanh-then-sigmoid loop over 65536 float32 ran 24 % slower than the two loops apart, and a
# 100-op chain 2.4x slower. Over a few dozen elements the loop hardly matters and one call
# instead of many is what counts, so small values fuse without limit.
SMALL_ELEMENTS = 64
MAX_MEMBERS = 16
# Limits on every group, small values included. numba's compile time grows faster than the
# scalar function it compiles, so a 4,000-op chain is compiled as many groups of MAX_GROUP
# (and groups with the same code, names aside, are compiled once: see compile_source).
MAX_GROUP = 32
# A group's CPU kernel is one NumPy ufunc, which NumPy 1.x builds with at most 32 operands
# (inputs and output; NumPy 2 allows 64). A CUDA launch passes every operand as an array, a
# step and a stride tuple in the kernel's parameter space, which CUDA caps at 4 KiB on
# older drivers: 16 operands leave room for strides of rank 20.
MAX_OPERANDS = {"cpu": 31, "cuda": 16}
# Generated code, its comments (node names) left out -> ufunc or CUDA kernel pair, this process
_KERNELS: dict[str, object] = {}
_COMMENTS = re.compile(r"^# kernelgraph fused CUDA kernel: .*$|  # .*$", re.MULTILINE)
_BODIES: list = []  # hash of kernels/cpu.py, computed once (see _bodies_version)
_TYPE_NAMES: dict = {}  # dtype -> its name in numba's signatures (see _numba_type)


def cache_dir() -> str:
    """Where generated kernels are kept (``KERNELGRAPH_CACHE``, else the user's cache folder,
    ``$XDG_CACHE_HOME`` or ~/.cache, under kernelgraph/)."""
    return os.path.join(ufunc_cache.cache_root(), "fused")


def fusable(n) -> bool:
    """Whether ``n`` can be computed inside a fused kernel (any shape: the kernel
    broadcasts at run time), on the CPU or on a CUDA device this process can use.

    >>> import kernelgraph as kg
    >>> with kg.Graph().as_default():
    ...     x = kg.placeholder(kg.float32, shape=[3])
    ...     fusable(kg.exp(x)), fusable(kg.reduce_sum(x))
    (True, False)
    """
    op = n.op
    if "fusable" not in op.traits or n.control_inputs or not _device_ok(n.device):
        return False
    if op is _pow_op and n.dtype.kind != "f":
        return False  # integer powers check for negative exponents first
    if op is _where_op and n.inputs[0].dtype.name != "bool":
        return False  # its forward converts a non-bool condition first
    if n.dtype.name == "bool" and "logical" in op.traits:
        return False  # True + True is 2 inside a fused body; only a bool loop stores it True
    return _importable(op.scalar)


def _importable(body) -> bool:
    """Whether the generated module can import ``body`` as ``cpu.<its name>`` (the cards'
    bodies live in kernels/cpu.py, whose hash names the generated kernels)."""
    name = getattr(body, "__name__", None)
    return codegen.is_identifier(name) and getattr(cpu, name, None) is body


def _device_ok(dev) -> bool:
    if dev.type == "cpu":
        return True
    try:  # left unfused, the plan reports an unusable device naming the user's node
        devices.require(dev)
    except devices.DeviceError:
        return False
    return True


def _bind_bodies(members: list) -> dict:
    """scalar body -> the name the generated module gives it: its own name (``_add``), kept
    apart from the module's other names by a :class:`kernelgraph.codegen.Namespace`."""
    ns = codegen.Namespace(reserved=_RESERVED)
    bodies = {id(n.op.scalar): n.op.scalar for n in members}
    return {key: ns.bind(body.__name__, body)
            for key, body in sorted(bodies.items(), key=lambda kv: kv[1].__name__)}


def _imports(names: dict, members: list, wrap: str) -> str:
    """One line per body: ``_add = njit(cpu._add)`` (``wrap`` the decorator), by name."""
    bodies = {id(n.op.scalar): n.op.scalar for n in members}
    return "".join(f"{names[key]} = {wrap}(cpu.{bodies[key].__name__})\n"
                   for key in sorted(bodies, key=lambda key: names[key]))


class FusedKernel:
    """One group's generated source and its compiled ufunc."""

    def __init__(self, key: str, source: str, ufunc, members: list[str], origin: str = ""):
        self.key = key
        self.source = source
        self.ufunc = ufunc
        self.members = members
        self.origin = origin  # "compiled", "loaded from cache" or "reused in this process"
        # "assign_sub" / "assign_add" when the kernel computes a variable's new value (its
        # first operand is the variable): the plan stores the result in the variable.
        self.updates = None

    def __call__(self, *args):
        out = self.ufunc(*args)
        return out if type(out) is np.ndarray else np.asarray(out)

    def __repr__(self):
        return f"<fused kernel of {', '.join(self.members)}>"


def generate(root, members: list, leaves: list) -> str:
    """The source of the fused CPU kernel for ``members`` (topological order, ``root``
    last) reading ``leaves`` as x0, x1, ..."""
    sig = f"{_numba_type(root.dtype)}({', '.join(_numba_type(x.dtype) for x in leaves)})"
    names = _bind_bodies(members)
    return (f"# scalar bodies: kernelgraph/kernels/cpu.py {_bodies_version()}\n"
            "from numba import float32, float64, int32, int64, njit, vectorize  # noqa\n"
            "from kernelgraph.kernels import cpu\n\n"
            + _imports(names, members, "njit") + "\n\n"
            f"@vectorize([{sig!r}], cache=True)\n"
            + _function(root, members, leaves, names, barrier=False))


def generate_cuda(root, members: list, leaves: list) -> str:
    """The source of the fused CUDA kernels for ``members`` (as :func:`generate`): the
    group as a device function ``fused`` and the kernels that map it over the operands.

    >>> import kernelgraph as kg
    >>> with kg.Graph().as_default():
    ...     x = kg.placeholder(kg.float32, shape=[None])
    ...     y = kg.relu(x * 2.0)
    >>> print(generate_cuda(y, [y.inputs[0], y], [x, y.inputs[0].inputs[1]])
    ...       .split("@cuda.jit(device=True)")[1].split("@")[0].strip())
    def fused(x0, x1):
        t0 = keep(float32(_mul(x0, x1)))  # mul
        return float32(_relu(t0))  # relu
    """
    names = _bind_bodies(members)
    listed = ", ".join(m.name for m in members)
    return (f"# kernelgraph fused CUDA kernel: {codegen.comment(listed)}\n"
            f"# scalar bodies: kernelgraph/kernels/cpu.py {_bodies_version()}\n"
            "from numba import cuda, float32, float64, int32, int64  # noqa\n"
            "from kernelgraph.kernels import cpu\n"
            "from kernelgraph.kernels.cuda.fused import keep  # noqa\n\n"
            + _imports(names, members, "cuda.jit(device=True)") + "\n\n"
            "@cuda.jit(device=True)\n"
            + _function(root, members, leaves, names, barrier=True) + "\n\n"
            + cuda_package().elementwise.nary_kernel_source(len(leaves), "fused"))


def _function(root, members: list, leaves: list, bodies: dict, barrier: bool) -> str:
    """``def fused(x0, ...)``: one line per member (calling its scalar body by its name in
    ``bodies``), each value in its node's dtype (as the single-op loop stores it).
    ``barrier``: float intermediates go through ``keep``."""
    names = {id(x): f"x{i}" for i, x in enumerate(leaves)}
    args = ", ".join(names[id(x)] for x in leaves)
    body = []
    for k, n in enumerate(members):
        operands = ", ".join(_cast(names[id(i)], i, n) for i in n.inputs)
        value = f"{bodies[id(n.op.scalar)]}({operands})"
        if n.dtype.kind != "b":
            value = f"{_numba_type(n.dtype)}({value})"
        if n is root:
            body.append(f"    return {value}  # {codegen.comment(n.name)}")
        else:
            if barrier and n.dtype in D.FLOATS:
                value = f"keep({value})"
            names[id(n)] = f"t{k}"
            body.append(f"    t{k} = {value}  # {codegen.comment(n.name)}")
    return f"def fused({args}):\n" + "\n".join(body) + "\n"


def _bodies_version() -> str:
    """A hash of kernels/cpu.py: numba's disk cache checks only the generated file's own
    date, so a changed scalar body must change the generated source (and so its name)."""
    if not _BODIES:
        try:
            with open(cpu.__file__, "rb") as f:
                _BODIES.append(hashlib.sha256(f.read()).hexdigest()[:12])
        except OSError:
            _BODIES.append("unknown")
    return _BODIES[0]


def _numba_type(dt) -> str:
    name = _TYPE_NAMES.get(dt)
    if name is None:  # dtype.name is computed on every read: slow over thousands of groups
        name = _TYPE_NAMES[dt] = "boolean" if dt.kind == "b" else dt.name
    return name


def _cast(name: str, x, consumer) -> str:
    """An operand converted to the dtype the consumer's single-op kernel computes in (the
    CPU forward casts its inputs to that dtype before the loop)."""
    compute = _compute_dtype(consumer)
    if x.dtype == compute or (consumer.op is _where_op and x is consumer.inputs[0]):
        return name
    return f"{_numba_type(compute)}({name})"


def _compute_dtype(n):
    """The dtype the single-op loop of ``n`` runs in: its card's compute rule applied to its
    inputs' promoted dtype (the output dtype but for comparisons, whose output is bool);
    for ``where``, which has none, its output dtype (that of its value operands)."""
    compute = n.op.compute
    if compute is None:
        return n.dtype
    dt = n.inputs[0].dtype
    for i in n.inputs[1:]:
        dt = D.promote(dt, i.dtype)
    return compute(dt)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _code_key(source: str) -> str:
    """The hash of what ``source`` computes: the source without its comments, which only
    name the member nodes. Groups of a repeated pattern (every layer's activation, every
    link of a long chain) differ only there and share one compiled kernel."""
    return _hash(_COMMENTS.sub("", source))


def compile_source(source: str, members: list[str], sig=None) -> FusedKernel:
    """Load (or compile once and cache on disk) the kernel in ``source``: once per process
    for each code (:func:`_code_key`), whatever its nodes are called. With its numba
    signature ``sig``, a loop kept whole on disk by an earlier process is loaded without
    importing the module (:mod:`kernelgraph.kernels.ufunc_cache`)."""
    key, code = _hash(source), _code_key(source)
    known = _KERNELS.get(code)
    if known is not None:
        return FusedKernel(key, source, known[0], members,
                           f"reused in this process ({known[1]})")
    stem = f"fused_{key}"
    path = _write(stem, source)
    ufunc = sig and ufunc_cache.lookup(path, "fused", sig, "fused")
    if ufunc is None:
        # numba runs its compiler passes only when its disk cache lacks the loop: whether
        # any ran is what `explain` reports.
        with install_recorder("numba:run_pass") as passes:
            fused = _import(stem, path).fused
        if sig is not None:
            ufunc_cache.keep(fused, sig)
        # The plain NumPy ufunc: cheaper to call than numba's wrapper.
        ufunc, origin = fused.ufunc, ("compiled" if passes.buffer else "loaded from cache")
    else:
        origin = "loaded from cache"
    _KERNELS[code] = (ufunc, origin)
    return FusedKernel(key, source, ufunc, members, origin)


def compile_cuda_source(source: str, members: list[str], leaf_dtypes: tuple, out_dtype):
    """Load the CUDA kernels in ``source`` (:func:`generate_cuda`), once per process: a
    :class:`kernelgraph.kernels.cuda.fused.FusedCudaKernel`. numba compiles them on first
    launch per argument types; on a GPU it keeps what it compiled on disk, next to the
    generated file (``cache=True``), so another process does not compile again."""
    key, code = _hash(source), _code_key(source)
    pair = _KERNELS.get(code)
    if pair is None:
        module = _load(f"cuda_{key}", source)
        pair = _KERNELS[code] = (module.flat, module.strided)
    return cuda_package().fused.FusedCudaKernel(key, source, pair, members, leaf_dtypes,
                                                out_dtype)


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


def _write(stem: str, source: str) -> str:
    """The path of ``<cache>/<stem>.py``, written first (atomically) if new."""
    folder = _writable_cache_dir()
    path = os.path.join(folder, f"{stem}.py")
    if not os.path.exists(path):  # written atomically: another process may read it now
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(source)
        os.replace(tmp, path)
    return path


def _import(stem: str, path: str):
    name = f"kernelgraph_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # numba's cache locates functions through their module
    spec.loader.exec_module(module)
    return module


def _load(stem: str, source: str):
    """The module in ``source``, imported from ``<cache>/<stem>.py`` (written first if new)."""
    return _import(stem, _write(stem, source))


def fuse(program, fetched_ids: set) -> tuple[list, list, list]:
    """(nodes, fetches, changes): ``program``'s nodes with every fusable group replaced by
    one fused node (named after the group's output)."""
    consumers: dict[int, list] = {}
    for n in program.nodes:
        for i in n.inputs:
            consumers.setdefault(id(i), []).append(n)
    group_of: dict[int, int] = {}  # node id -> id of its group's root
    root_nodes: dict[int, object] = {}
    # root id -> [members, math-library calls, ids of the group's operands] so far
    size: dict[int, list] = {}
    for n in reversed(program.nodes):
        if id(n) in program.feeds:
            continue  # a fed node is an input of the run: never computed, so never fused
        if _updatable(n):  # w.assign_sub(lr * g): the update joins its value's group
            group_of[id(n)] = id(n)
            root_nodes[id(n)] = n
            size[id(n)] = [1, 0, {id(i) for i in n.inputs}]
            continue
        if not fusable(n):
            continue
        users = consumers.get(id(n), [])
        roots = {group_of.get(id(u)) for u in users}
        root = roots.pop() if len(roots) == 1 else None
        if (id(n) not in fetched_ids and users and root is not None
                and root_nodes[root].device == n.device  # a kernel runs on one device
                and _room_for(n, root_nodes[root], size[root])):
            group_of[id(n)] = root  # only its group reads it: computed inside
            size[root][0] += 1
            size[root][1] += "transcendental" in n.op.traits
            size[root][2].discard(id(n))
            size[root][2].update(id(i) for i in n.inputs)
        else:
            group_of[id(n)] = id(n)
            root_nodes[id(n)] = n
            size[id(n)] = [1, int("transcendental" in n.op.traits), {id(i) for i in n.inputs}]
    groups: dict[int, list] = {}
    for n in program.nodes:
        root = group_of.get(id(n))
        if root is not None:
            groups.setdefault(root, []).append(n)
    replaced, changes, nodes = {}, [], []
    for n in program.nodes:  # in order, so every leaf is already rewired when it is read
        if id(n) in program.feeds:  # the run's input as it is: a rewired copy is no feed
            nodes.append(n)
            continue
        members = groups.get(group_of.get(id(n)), ())
        if len(members) < 2:
            new = _rewired(n, replaced)
            if new is not n:
                replaced[id(n)] = new
            nodes.append(new)
            continue
        if n is not members[-1]:
            continue  # computed inside the fused kernel of its group's root
        update = n.op.name if n.op in _UPDATES else None
        if update:  # computed as `variable - value`, the variable as operand x0
            members = [*members[:-1], _clone(n, n.inputs, op=_UPDATES[n.op], attrs={})]
        inside = {id(m) for m in members}
        leaves = [n.inputs[0]] if update else []
        for m in members:
            for i in m.inputs:
                if id(i) not in inside and all(i is not x for x in leaves):
                    leaves.append(i)
        names = [m.name for m in members]
        if n.device.type == "cpu":
            sig = from_dtype(members[-1].dtype)(*[from_dtype(x.dtype) for x in leaves])
            kernel = compile_source(generate(members[-1], members, leaves), names, sig)
        else:
            kernel = compile_cuda_source(generate_cuda(members[-1], members, leaves), names,
                                         tuple(x.dtype for x in leaves), n.dtype)
        kernel.updates = update
        fused = _fused_node(n, [replaced.get(id(i), i) for i in leaves], kernel)
        replaced[id(n)] = fused
        nodes.append(fused)
        changes.append(f"{n.name} <- {' '.join(m.name for m in members[:-1])}")
    fetches = [replaced.get(id(f), f) for f in program.fetches]
    return nodes, fetches, changes


def _room_for(n, root, size: list) -> bool:
    """Whether ``n`` may join the group of ``root`` that has ``size`` = [members,
    math-library calls, operand ids]: never past :data:`MAX_GROUP` members or
    :data:`MAX_OPERANDS` operands; on the CPU, over more than :data:`SMALL_ELEMENTS`
    values, at most :data:`MAX_MEMBERS` members and one math-library call."""
    operands = size[2]
    grown = len(operands) - 1 + len({id(i) for i in n.inputs} - operands)  # n itself leaves
    limit = MAX_OPERANDS["cpu" if root.device.type == "cpu" else "cuda"]
    if size[0] >= MAX_GROUP or grown > limit:
        return False
    if root.device.type != "cpu":
        return True
    shape = root.shape
    if shape is not None and None not in shape and int(np.prod(shape)) <= SMALL_ELEMENTS:
        return True
    return size[0] < MAX_MEMBERS and not ("transcendental" in n.op.traits and size[1] >= 1)


def _updatable(n) -> bool:
    """``n`` is a CPU ``assign_add``/``assign_sub`` whose value is computed by a fusable node
    of the variable's dtype that only it reads: then the value's group and the update are
    one kernel (one pass over the variable, no temporary)."""
    if n.op not in _UPDATES or n.device.type != "cpu" or n.control_inputs:
        return False
    var, value = n.inputs
    return (fusable(value) and value.device.type == "cpu" and value.dtype == var.dtype
            == n.dtype and value.shape == var.shape)


def _rewired(n, replaced):
    inputs = tuple(replaced.get(id(i), i) for i in n.inputs)
    # Control inputs too: a kg.group of assigns must keep pointing at the rewired assigns.
    controls = tuple(replaced.get(id(c), c) for c in n.control_inputs)
    if inputs == n.inputs and controls == n.control_inputs:
        return n
    return _clone(n, inputs, control_inputs=controls)


def _fused_node(root, leaves, kernel):
    # Named by its source's hash: groups with the same code share one kernel. The node's op
    # is a card of its own, for the one device the kernel was generated for.
    op = FusedOp(kernel.key, kernel, members=kernel.members, source=kernel.source,
                 device_type=root.device.type, ufunc=getattr(kernel, "ufunc", None),
                 updates=kernel.updates)
    return _clone(root, tuple(leaves), op=op, attrs={})
