"""How each kind of op runs on a batch: the two layouts a group's batched result can have
(STACKED, FLAT), one *batcher* per kind of op, and the table ``_BATCHERS``: batch kind ->
its batcher, for the kinds of :data:`kernelgraph.ops.registry.BATCHING`. Each op's card says
its kind (``op.batch``); an op without one runs node by node."""

from __future__ import annotations

import numpy as np

from .. import ops as O
from ..eager import Tensor
from .lazy import _arr

# How a group's batched result holds its members (a batcher picks one per group):
# STACKED: member i is ``out[i]`` -- the members stacked along a new leading axis;
# FLAT: member i, of shape (r, ...), is rows ``i*r`` to ``(i+1)*r`` of ``out`` -- the members
# joined along their own first axis. Row-wise ops (a cell step, ``x @ W``, elementwise ops on
# whole rows) run on FLAT operands as they are, with no reshape in the graph.
STACKED, FLAT = "stacked", "flat"


# batcher(p0, operands, n, layout): with layout None, the layout the group can run in
# (STACKED or FLAT; False: it cannot be batched), operands being (shared, None) pairs; given
# that layout, the batched result, operands being (shared, value) with the per-sample values
# batched in it. Every member has p0's shapes (the signature says so).
def _rank(operand_value) -> int:
    return len(operand_value.shape) - 1


def _rows_alike(p0, operands) -> bool:
    """Whether a row-wise op can run FLAT: every per-sample input has the result's whole
    shape (rank >= 1), and every shared one broadcasts the same along all rows of all
    members (its rank is lower, or its first of those dims is 1)."""
    shape = p0.shape
    if not shape:
        return False
    for (shared, _), a in zip(operands, p0.args):
        s = getattr(a, "shape", ())
        if shared:
            if len(s) == len(shape) and s[0] != 1:
                return False
        elif s != shape and type(a) is not float:  # (a number per member: see _numbers)
            return False
    return True


def _elementwise(p0, operands, n, layout):
    if layout is None:
        return FLAT if _rows_alike(p0, operands) else STACKED
    if layout is FLAT:
        return p0.op(*[v for _, v in operands], **p0.attrs)
    rank = len(p0.shape)
    args = []
    for shared, v in operands:
        if not shared and _rank(v) < rank:  # align per-sample dims to the right
            s = tuple(v.shape[1:])
            v = O.reshape(v, shape=(n,) + (1,) * (rank - len(s)) + s)
        args.append(v)
    return p0.op(*args, **p0.attrs)


def _matmul(p0, operands, n, layout):
    (sa, a), (sb, b) = operands
    if layout is None:  # a shared operand of rank > 2 would broadcast against the batch axis
        if not all(len(x.shape) <= 2 for (s, _), x in zip(operands, p0.args) if s):
            return False
        rows = not sa and sb and len(p0.args[0].shape) == 2 and len(p0.args[1].shape) == 2
        return FLAT if rows else STACKED  # x_i @ W: one (n*rows, k) @ W product
    if layout is STACKED and not sa and sb and len(b.shape) == 2:  # (n, ..., k) @ W
        k = a.shape[-1]
        out = O.matmul(O.reshape(a, shape=(-1, k)), b)
        return O.reshape(out, shape=(n, *p0.shape))
    return O.matmul(a, b)


def _axis_shift(axis, rank):
    return axis % rank + 1


def _reduce(p0, operands, n, layout):
    (shared, x), = operands
    shape = p0.args[0].shape
    rank = len(shape)
    axis = p0.attrs.get("axis")
    axes = (tuple(range(rank)) if axis is None else
            (axis % rank,) if isinstance(axis, int | np.integer) else
            tuple(a % rank for a in axis)) if rank else ()
    if layout is None:
        if not rank:
            return False
        # FLAT when the members' rows stay apart: axis 0 is kept, or has one row (a (1, k)
        # state summed whole: the rows' sums are then one number per member).
        return FLAT if 0 not in axes or (shape[0] == 1 and len(axes) > 1) else STACKED
    if layout is FLAT:
        return p0.op(x, **dict(p0.attrs, axis=tuple(a for a in axes if a != 0)))
    return p0.op(x, **dict(p0.attrs, axis=tuple(a + 1 for a in axes)))


def _softmax(p0, operands, n, layout):
    (shared, x), = operands
    rank = len(p0.shape)
    if layout is None:
        return rank > 0 and STACKED
    axis = p0.attrs.get("axis", -1)
    return p0.op(x, **dict(p0.attrs, axis=_axis_shift(-1 if axis is None else axis, rank)))


def _transpose(p0, operands, n, layout):
    if layout is None:
        return STACKED
    (shared, x), = operands
    rank = len(p0.shape)
    perm = p0.attrs.get("perm")
    perm = range(rank - 1, -1, -1) if perm is None else (p % rank for p in perm)
    return O.transpose(x, perm=(0, *(p + 1 for p in perm)))


def _reshape(p0, operands, n, layout):
    if layout is None:
        return STACKED
    return O.reshape(operands[0][1], shape=(n, *p0.shape))


def _getitem(p0, operands, n, layout):
    if layout is None:
        return STACKED
    return O.getitem(operands[0][1], index=((None, None, None), *p0.attrs["index"]))


def _join(p0, operands, n, layout):  # concat and stack: every input per-sample
    axis = p0.attrs.get("axis", 0) % len(p0.shape)
    if layout is None:
        if any(s for s, _ in operands):
            return False
        # concat along a member's later axis: the FLAT rows line up (one row per row)
        return FLAT if p0.op.name == "concat" and axis > 0 else STACKED
    return p0.op(*[v for _, v in operands], axis=axis if layout is FLAT else axis + 1)


def _gather(p0, operands, n, layout):  # embedding: shared table, per-sample ids, axis 0
    (sp, params), (si, ids) = operands
    if layout is None:
        if not (sp and not si and p0.attrs.get("axis", 0) % len(p0.args[0].shape) == 0):
            return False
        # ids of rank >= 1 join FLAT: (n*r,) ids pick (n*r, ...) rows
        return FLAT if len(p0.args[1].shape) >= 1 else STACKED
    return O.gather(params, ids, axis=0)


def _broadcast_to(p0, operands, n, layout):
    if layout is None:
        return STACKED
    (shared, x), = operands
    target = tuple(p0.shape)
    s = tuple(x.shape[1:])
    if len(s) < len(target):
        x = O.reshape(x, shape=(n,) + (1,) * (len(target) - len(s)) + s)
    return O.broadcast_to(x, shape=(n, *target))


def _split_piece(p0, operands, n, layout):  # an LSTM's gates: one piece of each member
    axis = p0.attrs.get("axis", 0) % len(p0.shape)
    if layout is None:
        return FLAT if axis > 0 else STACKED  # pieces along a later axis keep the rows
    return p0.op(operands[0][1], **dict(p0.attrs, axis=axis if layout is FLAT else axis + 1))


def _argmax(p0, operands, n, layout):
    axis = p0.attrs.get("axis")
    if layout is None:  # (axis None: an index into each member flattened, not batched)
        return axis is not None and (FLAT if axis % len(p0.args[0].shape) > 0 else STACKED)
    axis %= len(p0.args[0].shape)
    return p0.op(operands[0][1], **dict(p0.attrs, axis=axis if layout is FLAT else axis + 1))


def _one_hot(p0, operands, n, layout):  # per-sample ids; the classes along a new last axis
    if layout is None:
        return FLAT if len(p0.args[0].shape) >= 1 else STACKED
    return p0.op(operands[0][1], **p0.attrs)


def _images(p0, operands, n, layout):
    """conv2d and the pools: each member's images (N, C, H, W) along axis 0, joined FLAT;
    the filters shared."""
    if layout is None:
        return not operands[0][0] and all(s for s, _ in operands[1:]) and FLAT
    return p0.op(*[v for _, v in operands], **p0.attrs)


def _row_by_row(p0, operands, n, layout):
    """softmax_cross_entropy: logits (rows, classes) and labels (rows,), a loss per row;
    an input every member shares is repeated for each."""
    if layout is None:
        return FLAT
    return p0.op(*[_repeated(v, n) if s else v for s, v in operands], **p0.attrs)


def _cell(p0, operands, n, layout):
    """rnn_tanh_cell and lstm_cell: x and the state(s) FLAT, the four weights shared."""
    rows, weights = operands[:-4], operands[-4:]
    if layout is None:
        return all(s for s, _ in weights) and FLAT
    # A shared x or state (the first step's zero state) is repeated for every member.
    return p0.op(*[_repeated(v, n) if s else v for s, v in rows], *[w for _, w in weights])


def _repeated(v, n):
    """The shared operand ``v`` (shape (r, ...)) once per member, FLAT: (n*r, ...)."""
    shape = tuple(v.shape)
    if not (isinstance(v, Tensor) and v.requires_grad):
        # a real copy: a broadcast view is read-only with zero strides, which numba
        # compiles a second version of the cell's kernel for
        return np.tile(_arr(v), (n,) + (1,) * (len(shape) - 1))
    v = O.broadcast_to(O.reshape(v, shape=(1, *shape)), shape=(n, *shape))
    return O.reshape(v, shape=(n * shape[0], *shape[1:]))


_BATCHERS = {"elementwise": _elementwise, "matmul": _matmul, "reduce": _reduce,
             "softmax": _softmax, "transpose": _transpose, "reshape": _reshape,
             "getitem": _getitem, "join": _join, "gather": _gather,
             "broadcast_to": _broadcast_to, "cell": _cell, "split_piece": _split_piece,
             "argmax": _argmax, "one_hot": _one_hot, "images": _images,
             "row_by_row": _row_by_row}
