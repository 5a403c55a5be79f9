"""The static compiler's passes: each a small function from one program to a simpler one.

``Session.run`` compiles the part of the graph a run needs before it generates the plan:

>>> import kernelgraph as kg
>>> g = kg.Graph()
>>> with g.as_default():
...     x = kg.placeholder(kg.float32, shape=[None, 3], name="x")
...     scale = kg.constant(2.0) * kg.constant(3.0)        # folded to one constant
...     y = kg.relu(x * scale) * 1.0                         # "* 1.0" simplified away
...     z = kg.relu(x * scale)                               # the same as y's relu: merged
...     unused = kg.exp(x)                                   # not fetched: pruned
>>> with kg.Session(g) as sess:
...     print(sess.explain([y, z], feed_dict={x: None}).summary())
prune            11 -> 10 nodes
fold_constants   10 -> 10 nodes  folded mul
simplify         10 -> 9 nodes  mul_2 -> relu
cse              9 -> 7 nodes  mul_3 -> mul_1, relu_1 -> relu
fuse             7 -> 6 nodes  relu <- mul_1
dce              6 -> 3 nodes

Node counts include the constants that Python numbers became; nodes a rewrite orphaned stay
until ``dce`` removes them. What is left: ``x``, the folded constant 6, and one generated
kernel computing ``relu(x * 6)`` in a single loop, fetched twice.

A *program* is the fetched subgraph: nodes in a topological order, the fetches and the fed
nodes. A pass never changes the user's graph: it returns new nodes where it rewrites
(clones keep the name and source line of the node they replace, so run-time errors still
point at the user's code) and reuses the user's nodes elsewhere. Stateful nodes (variables,
assigns, placeholders), random ops and nodes with control inputs are never folded, merged or
simplified away.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..graph import Node
from .variables import STATEFUL

FOLD_MAX_ELEMENTS = 1 << 20  # larger results stay computed at run time (TF limits this too)
_RANDOM = ("random_normal", "random_uniform", "dropout_mask")
_ASSIGNS = ("assign", "assign_add", "assign_sub")
_KEEP = frozenset(op.name for op in STATEFUL) | frozenset(_RANDOM) | {"to_device"}


@dataclass
class Program:
    """The subgraph one run computes: ``nodes`` in an order where inputs come first."""

    nodes: list
    fetches: list
    feeds: frozenset  # ids of the fed nodes (they are inputs: never computed or rewritten)


@dataclass
class PassResult:
    """What one pass did, for ``Session.explain``."""

    name: str
    before: int
    after: int
    changes: list = field(default_factory=list)  # short texts: "folded mul", "a -> b"
    seconds: float = 0.0


@dataclass
class Explanation:
    """``Session.explain``: the passes' results, the nodes before and after, the plan."""

    passes: list
    before: list
    after: list
    source: str
    compile_seconds: float

    def summary(self) -> str:
        """One line per pass: node counts and (the first few) changes."""
        lines = []
        for r in self.passes:
            shown = ", ".join(r.changes[:4]) + (f", ... ({len(r.changes)})"
                                                if len(r.changes) > 4 else "")
            lines.append(f"{r.name:<16} {r.before} -> {r.after} nodes  {shown}".rstrip())
        return "\n".join(lines)

    @property
    def kernels(self) -> dict:
        """The generated source of each fused kernel, by the name of the node it computes."""
        return {n.name: n.op.forward.source for n in self.after
                if hasattr(n.op.forward, "members")}

    def __str__(self):
        fused = "".join(f"\n# {name}\n{src}" for name, src in self.kernels.items())
        return (f"{self.summary()}\ncompiled in {self.compile_seconds * 1e3:.2f} ms\n\n"
                f"{self.source}{fused}")


# -- rewriting helpers ---------------------------------------------------------------------------
def _clone(node: Node, inputs: tuple, **changes) -> Node:
    """A copy of ``node`` reading ``inputs`` (same name, source line and creation order)."""
    new = Node.__new__(Node)
    for slot in ("op", "attrs", "shape", "dtype", "device", "name", "location", "graph", "seq",
                 "control_inputs"):
        setattr(new, slot, getattr(node, slot))
    new.inputs = inputs
    for key, value in changes.items():
        setattr(new, key, value)
    return new


def _rewrite(program: Program, rule) -> tuple[Program, list]:
    """Apply ``rule(node, inputs) -> replacement or None`` to every node in order, re-wiring
    each node to the replacements of its inputs. Returns the new program and the changes."""
    replaced: dict[int, Node] = {}
    nodes, present, changes = [], set(), []
    for n in program.nodes:
        if id(n) in program.feeds:
            out = n
        else:
            inputs = tuple(replaced.get(id(i), i) for i in n.inputs)
            controls = tuple(replaced.get(id(c), c) for c in n.control_inputs)
            current = n
            if inputs != n.inputs or controls != n.control_inputs:
                current = _clone(n, inputs, control_inputs=controls)
            out = rule(current, changes)
            if out is None:
                out = current
            if out is not n:
                replaced[id(n)] = out
        if id(out) not in present:  # a node folded into a new constant takes its place
            present.add(id(out))
            nodes.append(out)
    fetches = [replaced.get(id(f), f) for f in program.fetches]
    return Program(nodes, fetches, program.feeds), changes


def _rewritable(n: Node) -> bool:
    return n.op.name not in _KEEP and not n.control_inputs and n.op.forward is not None


def _const_value(n: Node):
    return n.attrs["value"] if n.op.name == "const" else None


def _reachable(program: Program) -> list:
    needed, stack = set(), list(program.fetches)
    while stack:
        n = stack.pop()
        if id(n) in needed:
            continue
        needed.add(id(n))
        if id(n) not in program.feeds:
            stack.extend(_reads(n))
            stack.extend(n.control_inputs)
    return [n for n in program.nodes if id(n) in needed]


def _reads(n: Node):
    """The inputs whose values ``n`` reads: an assign writes its first input, not reads it."""
    return n.inputs[1:] if n.op.name in _ASSIGNS else n.inputs


# -- the passes ----------------------------------------------------------------------------------
def prune(fetches, feeds) -> Program:
    """The nodes a run of ``fetches`` needs, stopping at fed nodes (TF's subgraph extraction):
    everything else in the graph is left out."""
    fed = frozenset(id(n) for n in feeds)
    seen, stack = {}, list(fetches)
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = n
        if id(n) in fed:
            continue
        stack.extend(_reads(n))
        stack.extend(n.control_inputs)
    return Program(sorted(seen.values(), key=lambda n: n.seq), list(fetches), fed)


def fold_constants(program: Program) -> tuple[Program, list]:
    """Compute at compile time every CPU node whose inputs are all constants, with the op's
    own kernel (so the value is bit-for-bit what the run would compute)."""
    from .build import const

    def rule(n, changes):
        if n.op.name == "const" or not _rewritable(n) or n.device.type != "cpu":
            return None
        values = [_const_value(i) for i in n.inputs]
        if not n.inputs or any(v is None for v in values):
            return None
        try:
            value = np.asarray(n.op.forward(*values, **(n.attrs or {})))
        except Exception:  # noqa: BLE001 - left to fail at run time, naming the node
            return None
        if value.size > FOLD_MAX_ELEMENTS:
            return None
        value = value.copy() if not value.flags.owndata else value
        value.setflags(write=False)
        changes.append(f"folded {n.name}")
        return _clone(n, (), op=const, attrs={"value": value}, shape=value.shape,
                      dtype=value.dtype)

    return _rewrite(program, rule)


def _is_filled(n: Node, fill) -> bool:
    v = _const_value(n)
    return v is not None and v.size >= 1 and bool(np.all(v == fill))


def _same_result(n: Node, x: Node) -> bool:
    """``x`` can stand for ``n``: same static shape (fully known rank), dtype and device."""
    return (n.shape is not None and x.shape == n.shape and x.dtype == n.dtype
            and x.device == n.device)


def _perm(n: Node) -> tuple | None:
    ndim = n.inputs[0].ndim
    if ndim is None:
        return None
    p = n.attrs.get("perm")
    return tuple(reversed(range(ndim))) if p is None else tuple(a % ndim for a in p)


def _simplified(n: Node):
    """The node ``n`` reduces to by one algebraic identity, or None."""
    op, ins = n.op.name, n.inputs
    candidates = []
    if op == "mul":
        candidates = [ins[0] for c in [ins[1]] if _is_filled(c, 1)] + \
                     [ins[1] for c in [ins[0]] if _is_filled(c, 1)]
    elif op == "add":
        candidates = [ins[0] for c in [ins[1]] if _is_filled(c, 0)] + \
                     [ins[1] for c in [ins[0]] if _is_filled(c, 0)]
    elif op in ("sub", "div"):
        candidates = [ins[0] for c in [ins[1]] if _is_filled(c, 0 if op == "sub" else 1)]
    elif op == "neg" and ins[0].op.name == "neg":
        candidates = [ins[0].inputs[0]]
    elif op in ("identity", "reshape", "broadcast_to", "cast"):
        candidates = [ins[0]]  # kept only when nothing changes (checked below)
    elif op == "transpose" and ins[0].op.name == "transpose":
        inner, outer = _perm(ins[0]), _perm(n)
        if inner is not None and outer is not None and \
                tuple(inner[a] for a in outer) == tuple(range(len(outer))):
            candidates = [ins[0].inputs[0]]
    for x in candidates:
        if _same_result(n, x):
            return x
    return None


def simplify(program: Program) -> tuple[Program, list]:
    """Algebraic identities: ``x*1``, ``x+0``, ``x-0``, ``x/1``, ``--x``, a transpose undone
    by a transpose, and identity / reshape / cast / broadcast_to that change nothing become
    ``x`` (only where ``x`` has the very shape, dtype and device of the result)."""
    def rule(n, changes):
        if not _rewritable(n) or not n.inputs:
            return None
        x = _simplified(n)
        if x is not None:
            changes.append(f"{n.name} -> {x.name}")
        return x

    return _rewrite(program, rule)


def _attrs_key(attrs):
    try:
        key = tuple(sorted((k, v if not isinstance(v, list) else tuple(v))
                           for k, v in (attrs or {}).items()))
        hash(key)
        return key
    except TypeError:
        return None  # an array or other unhashable attribute: not merged


def eliminate_common_subexpressions(program: Program) -> tuple[Program, list]:
    """Merge nodes that compute the same op with the same attributes on the same inputs
    (and small constants with the same value): each is computed once."""
    seen: dict = {}

    def rule(n, changes):
        if n.op.name == "const":
            v = n.attrs["value"]
            if v.size > 64:
                return None
            key = ("const", v.dtype.str, v.shape, v.tobytes(), n.device.name)
        elif _rewritable(n):
            attrs = _attrs_key(n.attrs)
            if attrs is None:
                return None
            key = (n.op.name, tuple(id(i) for i in n.inputs), attrs, n.device.name)
        else:
            return None
        first = seen.setdefault(key, n)
        if first is n:
            return None
        changes.append(f"{n.name} -> {first.name}")
        return first

    return _rewrite(program, rule)


def eliminate_dead_code(program: Program) -> tuple[Program, list]:
    """Drop nodes that no fetch needs any more (orphaned by the passes before)."""
    kept = _reachable(program)
    return Program(kept, program.fetches, program.feeds), []


def fuse_elementwise(program: Program) -> tuple[Program, list]:
    """Groups of elementwise ops become one generated numba kernel each (see
    :mod:`kernelgraph.static.fusion`)."""
    from .fusion import fuse

    nodes, fetches, changes = fuse(program, {id(f) for f in program.fetches})
    return Program(nodes, fetches, program.feeds), changes


PASSES = {
    "fold_constants": fold_constants,
    "simplify": simplify,
    "cse": eliminate_common_subexpressions,
    "fuse": fuse_elementwise,
    "dce": eliminate_dead_code,
}
ORDER = ("prune", *PASSES)


def check_pass_names(names) -> tuple:
    """``names`` as a tuple of known pass names (one name may be given as a string)."""
    names = (names,) if isinstance(names, str) else tuple(names)
    unknown = set(names) - set(ORDER)
    if unknown:
        raise ValueError(f"unknown passes {sorted(unknown)}; the passes are {list(ORDER)}")
    return names


def optimize(fetches, feeds, skip=()) -> tuple[Program, list]:
    """Run the passes in :data:`ORDER` (except those named in ``skip``) on the subgraph of
    ``fetches``; returns the program and one :class:`PassResult` per pass."""
    check_pass_names(skip)
    start = time.perf_counter()
    program = prune(fetches, feeds)
    graph = fetches[0].graph if fetches else None
    total = len(graph.nodes) if graph is not None else len(program.nodes)
    results = [PassResult("prune", total, len(program.nodes),
                          seconds=time.perf_counter() - start)]
    for name, run in PASSES.items():
        if name in skip:
            continue
        start = time.perf_counter()
        before = len(program.nodes)
        program, changes = run(program)
        results.append(PassResult(name, before, len(program.nodes), changes,
                                  time.perf_counter() - start))
    return program, results
