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
...     print(sess.explain([y, z], feed_dict={x: [[1.0, -2.0, 3.0]]}).summary())
prune            11 -> 10 nodes
specialize       10 -> 10 nodes  10 of 10 shapes known
fold_constants   10 -> 10 nodes  folded mul
simplify         10 -> 9 nodes  mul_2 -> relu
cse              9 -> 7 nodes  mul_3 -> mul_1, relu_1 -> relu
fuse             7 -> 6 nodes  relu <- mul_1
dce              6 -> 3 nodes

A plan is compiled per feed signature: ``specialize`` gives every node its concrete shape for
the fed shapes (here ``x`` is ``(1, 3)``), which lets later passes remove what only unknown
shapes needed. Node counts include the constants that Python numbers became; nodes a
rewrite orphaned stay until ``dce`` removes them. What is left: ``x``, the folded constant 6,
and one generated kernel computing ``relu(x * 6)`` in a single loop, fetched twice.

A *program* (:mod:`kernelgraph.static.program`) is the fetched subgraph: nodes in a
topological order, the fetches and the fed nodes. What each pass did is recorded for
``Session.explain`` (:mod:`kernelgraph.static.explanation`); after the passes, a plan plans
its memory and generates its source (:mod:`kernelgraph.static.plan`). A pass never changes
the user's graph: it returns new nodes where it rewrites (clones keep the name and source
line of the node they replace, so run-time errors still point at the user's code) and reuses
the user's nodes elsewhere. Stateful nodes (variables, assigns, placeholders), random ops
and nodes with control inputs are never folded, merged or simplified away. Fed nodes (any
node in ``feed_dict``, not only placeholders, as in TF1) are inputs of the run: never
computed, rewritten or fused, and a fed constant counts as no constant, so ``x * one``
with ``one`` fed 3 stays a multiplication.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import InvalidArgumentError, ShapeError, describe_location
from ..graph import Node, shape_str
from .build import const
from .explanation import Explanation, PassResult  # noqa: F401 - Explanation: read from here
from .fusion import fuse
from .program import Program, clone, const_value, needed, rewritable, rewrite
from .variables import ASSIGNS

FOLD_MAX_ELEMENTS = 1 << 20  # larger results stay computed at run time (TF limits this too)
_clone = clone  # the name the fusion pass and older code import from here


# -- the passes ----------------------------------------------------------------------------------
def prune(fetches, feeds, feed_shapes=None) -> Program:
    """The nodes a run of ``fetches`` needs, stopping at fed nodes (TF's subgraph extraction):
    everything else in the graph is left out."""
    fed = frozenset(id(n) for n in feeds)
    return Program(needed(fetches, feeds), list(fetches), fed, feed_shapes)


def specialize(program: Program) -> tuple[Program, list]:
    """Give every node the concrete shape it has for this run's fed shapes (a plan is made per
    feed signature, as ``tf.function`` traces one per input signature). Placeholders declared
    ``[None, 64]`` fed ``(32, 64)`` arrays make the whole batch dimension known, so the passes
    after this one can drop what only unknown shapes needed (``sum_to_like`` of a gradient
    that was not broadcast) and fold what depends on shapes alone (``ones_like``). A shape
    that cannot work is reported here, naming the node and its line, before anything runs."""
    shapes = program.feed_shapes
    if shapes is None:
        return program, []
    concrete: dict[int, tuple] = {}

    def shape_of(n):
        return concrete.get(id(n), n.shape)

    nodes, replaced, changes = [], {}, []
    for n in program.nodes:
        inputs = tuple(replaced.get(id(i), i) for i in n.inputs)
        controls = tuple(replaced.get(id(c), c) for c in n.control_inputs)
        if id(n) in program.feeds:
            shape = tuple(shapes[id(n)])
        elif n.op in ASSIGNS:
            shape = _checked_assign(n, shape_of(inputs[1]))
        elif not n.inputs or n.op.infer is None:
            shape = n.shape  # a source (variable, constant, random): its shape is its own
        else:
            try:
                shape, _ = n.op.infer([shape_of(i) for i in inputs],
                                      [i.dtype for i in inputs], n.attrs or {})
            except (ShapeError, TypeError, ValueError, IndexError) as e:
                raise _shape_error(n, inputs, shape_of, e) from None
        shape = n.shape if shape is None else tuple(shape)
        if shape != n.shape or inputs != n.inputs or controls != n.control_inputs:
            new = n if id(n) in program.feeds else _clone(n, inputs, shape=shape,
                                                          control_inputs=controls)
            if id(n) in program.feeds:
                concrete[id(n)] = shape  # fed nodes stay themselves: the plan feeds them
            else:
                replaced[id(n)] = new
                concrete[id(new)] = shape
            n = new
        nodes.append(n)
    known = sum(1 for n in nodes if (s := shape_of(n)) is not None and None not in s)
    changes.append(f"{known} of {len(nodes)} shapes known")
    fetches = [replaced.get(id(f), f) for f in program.fetches]
    return Program(nodes, fetches, program.feeds, shapes), changes


def _checked_assign(n, value_shape):
    var_shape = n.inputs[0].shape
    if value_shape is not None and var_shape is not None and tuple(value_shape) != var_shape:
        raise InvalidArgumentError(
            f"Cannot assign a value of shape {shape_str(tuple(value_shape))} to variable "
            f"'{n.inputs[0].name}' of shape {shape_str(var_shape)} (node '{n.name}')\n"
            f"{describe_location(n.location) if n.location else ''}", node=n)
    return var_shape


def _shape_error(n, inputs, shape_of, error):
    given = ", ".join(f"'{i.name}' {shape_str(shape_of(i))}" for i in inputs)
    where = describe_location(n.location)
    return InvalidArgumentError(
        f"node '{n.name}' (op {n.op.name}) cannot take the fed shapes: {error}\n"
        f"  inputs: {given}\n  the node was created at:\n{where}", node=n)


def _fold_input(n: Node, index: int, x: Node, feeds):
    """The compile-time value ``n`` reads from its input ``x``, or None if it has none. An
    input the op reads only the shape of (``op.shape_inputs``: the ``ones_like(loss)`` that
    starts every gradient) has one as soon as that shape is known."""
    if index in n.op.shape_inputs and x.shape is not None and None not in x.shape:
        # Only its shape is read; a fed value has it too (a feed must match a known shape).
        return np.empty(x.shape, x.dtype)
    return const_value(x, feeds)


def fold_constants(program: Program) -> tuple[Program, list]:
    """Compute at compile time every CPU node whose inputs are all constants (or inputs whose
    shape alone it needs, when that shape is known), with the op's own kernel (so the value is
    bit-for-bit what the run would compute)."""
    def rule(n, changes):
        if n.op.name == "const" or not rewritable(n) or n.device.type != "cpu":
            return None
        values = [_fold_input(n, k, i, program.feeds) for k, i in enumerate(n.inputs)]
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

    return rewrite(program, rule)


def _is_identity(c: Node, op: str, dtype, feeds) -> bool:
    """Whether the constant ``c`` (unfed, not empty) is an identity of ``op`` that keeps
    every bit of every value of the result's ``dtype``: 1 for ``*`` and ``/``; 0 for ``+``
    and ``-`` on integers and bools. Float zeros need their sign: IEEE makes -0.0 + 0.0 =
    +0.0, so only ``x + -0.0`` and ``x - 0.0`` give x back for every x, -0.0 included."""
    v = const_value(c, feeds)
    if v is None or v.size == 0:
        return False
    if op in ("mul", "div"):
        return bool(np.all(v == 1))
    if not np.all(v == 0):
        return False
    if np.dtype(dtype).kind != "f":
        return True
    negative = np.signbit(v)
    return bool(np.all(negative)) if op == "add" else not np.any(negative)


def _same_result(n: Node, x: Node) -> bool:
    """``x`` can stand for ``n``: same dtype, device and fully known shape. Two unknown
    dims are not provably equal (a ``(None, 2)`` gradient may be ``(5, 2)`` where the input
    it is summed to is ``(1, 2)``): a plan specialised to its fed shapes knows them all."""
    return (n.shape is not None and x.shape == n.shape and x.dtype == n.dtype
            and x.device == n.device and (None not in n.shape or _keeps_shape(n, x)))


def _keeps_shape(n: Node, x: Node) -> bool:
    """``n`` has ``x``'s shape by construction, unknown dims included: ``--x``, a transpose
    pair, identity, cast, or arithmetic with a one-element constant of no higher rank."""
    op = n.op.name
    if op in ("neg", "transpose", "identity", "cast"):
        return True
    if op in ("mul", "add", "sub", "div"):
        other = n.inputs[1] if n.inputs[0] is x else n.inputs[0]
        c = const_value(other)
        return c is not None and c.size == 1 and x.ndim is not None and c.ndim <= x.ndim
    return False


def _perm(n: Node) -> tuple | None:
    ndim = n.inputs[0].ndim
    if ndim is None:
        return None
    p = n.attrs.get("perm")
    return tuple(reversed(range(ndim))) if p is None else tuple(a % ndim for a in p)


def _simplified(n: Node, feeds=frozenset()):
    """The node ``n`` reduces to by one algebraic identity that changes no bit of any
    value, or None. A fed constant is not a constant (``x * one`` with ``one`` fed 3
    stays), and a fed node is not its op (``-y`` with ``y = -x`` fed stays)."""
    op, ins = n.op.name, n.inputs
    candidates = []
    if op in ("mul", "add"):
        candidates = [ins[0] for c in [ins[1]] if _is_identity(c, op, n.dtype, feeds)] + \
                     [ins[1] for c in [ins[0]] if _is_identity(c, op, n.dtype, feeds)]
    elif op in ("sub", "div"):
        candidates = [ins[0] for c in [ins[1]] if _is_identity(c, op, n.dtype, feeds)]
    elif op == "neg" and ins[0].op.name == "neg" and id(ins[0]) not in feeds:
        candidates = [ins[0].inputs[0]]
    elif op in ("identity", "reshape", "broadcast_to", "cast", "sum_to_like",
                "broadcast_like"):
        candidates = [ins[0]]  # kept only when nothing changes (checked below)
    elif op == "transpose" and ins[0].op.name == "transpose" and id(ins[0]) not in feeds:
        inner, outer = _perm(ins[0]), _perm(n)
        if inner is not None and outer is not None and \
                tuple(inner[a] for a in outer) == tuple(range(len(outer))):
            candidates = [ins[0].inputs[0]]
    for x in candidates:
        if _same_result(n, x):
            return x
    return None


def _swaps_last_two(t: Node) -> bool:
    """Whether ``t`` only swaps the last two dims of its input (``matrix_transpose``, or a
    ``transpose`` whose permutation does just that)."""
    if t.op.name == "matrix_transpose":
        return True
    perm = _perm(t) if t.op.name == "transpose" else None
    return perm is not None and len(perm) >= 2 and \
        perm == (*range(len(perm) - 2), len(perm) - 1, len(perm) - 2)


def _folded_transposes(n: Node, feeds, changes: list):
    """A CUDA ``matmul`` reading a transposed matrix reads the matrix itself with the layout
    flag ``trans_a`` / ``trans_b`` instead: the gemm swaps its strides, so the transpose's
    copy is never launched (and ``dce`` drops it where nothing else reads it). Same bits:
    the product is summed in the same order. On the CPU a transpose is a free view already."""
    if n.op.name != "matmul" or n.device.type != "cuda" or len(n.inputs) != 2:
        return None
    inputs, attrs, folded = list(n.inputs), dict(n.attrs or {}), []
    for k, flag in ((0, "trans_a"), (1, "trans_b")):
        t = inputs[k]
        if id(t) in feeds or not rewritable(t) or t.device != n.device or \
                not _swaps_last_two(t) or t.inputs[0].dtype != t.dtype:
            continue
        inputs[k] = t.inputs[0]
        attrs[flag] = not attrs.get(flag, False)
        folded.append(f"{n.name} reads {t.name} as a layout ({flag})")
    if not folded:
        return None
    changes.extend(folded)
    return clone(n, tuple(inputs), attrs=attrs)


def simplify(program: Program) -> tuple[Program, list]:
    """Algebraic identities that keep every bit: ``x*1``, ``x/1``, ``x-0.0``, ``x+(-0.0)``
    (on integers and bools, any zero: a float ``x + 0.0`` turns -0.0 into 0.0, so it
    stays), ``--x``, a transpose undone by a transpose, and identity / reshape / cast /
    broadcast_to / sum_to_like that change nothing become ``x`` (only where ``x`` has the
    very shape, dtype and device of the result). On a GPU a transpose feeding a matmul
    becomes the matmul's layout flag (:func:`_folded_transposes`)."""
    def rule(n, changes):
        if not rewritable(n) or not n.inputs:
            return None
        folded = _folded_transposes(n, program.feeds, changes)
        if folded is not None:
            return folded
        x = _simplified(n, program.feeds)
        if x is not None:
            changes.append(f"{n.name} -> {x.name}")
        return x

    return rewrite(program, rule)


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
        elif rewritable(n):
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

    return rewrite(program, rule)


def eliminate_dead_code(program: Program) -> tuple[Program, list]:
    """Drop nodes that no fetch needs any more (orphaned by the passes before)."""
    fed = [n for n in program.nodes if id(n) in program.feeds]
    reached = {id(n) for n in needed(program.fetches, fed)}
    kept = [n for n in program.nodes if id(n) in reached]
    return Program(kept, program.fetches, program.feeds, program.feed_shapes), []


def fuse_elementwise(program: Program) -> tuple[Program, list]:
    """Groups of elementwise ops become one generated numba kernel each (see
    :mod:`kernelgraph.static.fusion`)."""
    nodes, fetches, changes = fuse(program, {id(f) for f in program.fetches})
    return Program(nodes, fetches, program.feeds, program.feed_shapes), changes


PASSES = {
    "specialize": specialize,
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


def optimize(fetches, feeds, skip=(), feed_shapes=None) -> tuple[Program, list]:
    """Run the passes in :data:`ORDER` (except those named in ``skip``) on the subgraph of
    ``fetches``; returns the program and one :class:`PassResult` per pass. ``feed_shapes``
    ({fed node id: shape}) specialises the program to one run's fed shapes."""
    check_pass_names(skip)
    start = time.perf_counter()
    program = prune(fetches, feeds, feed_shapes)
    graph = fetches[0].graph if fetches else None
    total = len(graph.nodes) if graph is not None else len(program.nodes)
    results = [PassResult("prune", total, len(program.nodes),
                          seconds=time.perf_counter() - start, nodes=program.nodes,
                          fetches=program.fetches)]
    for name, run in PASSES.items():
        if name in skip:
            continue
        start = time.perf_counter()
        before = len(program.nodes)
        program, changes = run(program)
        results.append(PassResult(name, before, len(program.nodes), changes,
                                  time.perf_counter() - start, program.nodes,
                                  program.fetches))
    return program, results
