"""Running one group -- pending nodes of one signature, none depending on another -- as ONE
call of the op on batched operands: each per-sample column taken straight from the producing
groups' batched results (the whole result, a slice or a gather), numbers as one array, shared
inputs as they are; then each member's row handed out (to a tensor someone holds) or left for
its consumers to read from the batched result. A group that cannot be batched runs one by
one."""

from __future__ import annotations

import sys
from operator import attrgetter, itemgetter

import numpy as np

from .. import dtypes as D
from .. import eager
from .. import ops as O
from ..eager import Tensor
from .batchers import _BATCHERS, FLAT
from .lazy import _DATA, _NODE, LazyTensor, _arr, _materialize, _materialize_row
from .stats import _count, _record_launch

ndarray = np.ndarray
_local = eager._local  # this thread's grad mode, and whether its ops are deferred
# C-level getters for the per-member loops of a flush (map(...) instead of a Python loop)
_ARGS, _REQUIRES_GRAD = attrgetter("args"), attrgetter("requires_grad")
_BATCH, _ROW = itemgetter(0), itemgetter(1)
_DATA_OF = attrgetter("_array")  # (on plain Tensors only: a LazyTensor's data runs the flush)


_alias: dict = {}  # during a run: id(tensor) -> the one tensor a merged group computed
_derived: set = set()  # during a run: ids of results computed from parameters only


def _is_parameter(x) -> bool:
    """A leaf that requires grad, or a result computed from such leaves only (``W.T``)."""
    t = type(x)
    if t is Tensor:
        return (x.requires_grad and _NODE.__get__(x) is None) or id(x) in _derived
    return t is LazyTensor and id(x) in _derived


def _run(g, rowof):
    p0 = g[0]
    _local.grad_enabled = p0.need
    batcher = _BATCHERS.get(p0.op.batch)
    if len(g) > 1 and batcher is not None and _run_group(g, batcher, rowof):
        return
    for p in g:
        _ready(p.args, rowof)
        r = eager.apply(p.op, p.args, p.attrs)
        t = p.out
        _materialize(t, _DATA.__get__(r), _NODE.__get__(r))
        if p.shape:  # a batch of one for the groups it feeds (FLAT: all its rows)
            rowof[id(t)] = (t, 0, t.requires_grad, p.shape[0])
        _done(p)
    _count("launches", len(g))
    _count("single", len(g))


def _done(p):
    """Drop a record's links once it ran. A tensor left pending (its row not handed out:
    only other records used it) and its record point at each other; cutting that cycle lets
    both go, with the batched values they hold, without waiting for a garbage collection."""
    p.out = p.args = None


def _run_group(group, batcher, rowof) -> bool:
    """Run ``group`` as one batched call; False (nothing done) when it cannot be batched."""
    n, p0 = len(group), group[0]
    columns = list(zip(*map(_ARGS, group)))
    operands, all_shared = [], True
    for j, col in enumerate(columns):
        first = col[0]
        tf = type(first)
        if tf is float or tf is int or tf is bool:
            if tf is float and p0.op.elementwise and len(set(col)) > 1:
                all_shared = False
                operands.append((False, None))  # a number per member (see _numbers)
            else:
                operands.append((True, first))  # equal numbers
            continue
        same = [_alias.get(id(c), c) for c in col] if _alias else col
        if same[0] is not same[-1] and not _is_parameter(first):
            all_shared = False  # per-sample values (the first and last differ)
            operands.append((False, None))
            continue
        # (tensors hash by identity; arrays do not hash)
        distinct = len(set(map(id, same) if type(first) is ndarray else same))
        if distinct == 1:
            operands.append((True, same[0]))  # one tensor for everyone: shared
            continue
        if 2 * distinct <= n and _is_parameter(first):
            # A column of a few parameters (W_plus for some nodes, W_times for others):
            # one call per parameter, not a stack of weight copies.
            parts: dict = {}
            for p in group:
                parts.setdefault(id(p.args[j]), []).append(p)
            for part in parts.values():
                _run(part, rowof)
            return True
        all_shared = False
        operands.append((False, None))
    if all_shared:  # n identical calls: compute once, everyone gets the result
        _ready(p0.args, rowof)
        r = eager.apply(p0.op, p0.args, p0.attrs)
        data, node = _DATA.__get__(r), _NODE.__get__(r)
        # Later groups see one shared input, not n copies; where it meets other values in
        # a column it is a one-member batch.
        one = ((O.reshape(r, shape=(1,)), 0, r.requires_grad, 0) if not p0.shape else
               (r, 0, r.requires_grad, p0.shape[0]))
        for p in group:
            _materialize(p.out, data, node)
            _alias[id(p.out)] = r
            rowof[id(p.out)] = one
            _done(p)
        _record_launch(p0.op.name, n)
        return True
    layout = batcher(p0, operands, n, None)
    if not layout:
        return False
    flat = layout is FLAT
    helpers = [0]
    _ready([v for s, v in operands if s], rowof)
    batched = []  # the operands with the per-sample columns batched
    for (s, v), col in zip(operands, columns):
        if not s:
            v = _numbers(col, p0, flat) if type(col[0]) is float else \
                _stacked_once(col, n, rowof, helpers, flat, columns, batched)
        batched.append((s, v))
    operands = batched
    out = batcher(p0, operands, n, layout)
    if out is None:
        return False
    data = out if type(out) is ndarray else _DATA.__get__(out)
    # The result's layout shows in its rank: FLAT keeps the members' rank (a FLAT input
    # may give a STACKED result: a whole (1, k) row summed is a number per member).
    r = p0.shape[0] if p0.shape and data.ndim == len(p0.shape) else 0
    if data.shape != ((n * r, *p0.shape[1:]) if r else (n, *p0.shape)) or \
            data.dtype != p0.dtype:
        return False  # a case the batcher does not cover: run the nodes one by one
    # Each pending tensor's row. One that only pending ops of this run still reference
    # (refcount: its record, each use, and the two here) is left as it is: its consumers
    # read the batched result, and it goes away with the records. Rows someone else holds
    # (the user's variables, lists ...) become ordinary tensors now.
    need_node = type(out) is Tensor and out.requires_grad
    refs = sys.getrefcount
    for i, p in enumerate(group):
        t = p.out
        rowof[id(t)] = p.row = (out, i, need_node, r)
        if refs(t) > (3 if p.consumers is None else 3 + len(p.consumers)):
            _materialize_row(t, out, i, need_node, r)
        p.out = p.args = None  # _done(p), inline: once per member of every group
    _record_launch(p0.op.name, n)
    _count("helpers", helpers[0])
    return True


def _ready(args, rowof):
    """Give rows not yet handed out (see :func:`_run_group`) to ``args`` about to be used
    as tensors."""
    for a in args:
        if type(a) is LazyTensor:
            info = rowof.get(id(a))
            if info is not None:
                _materialize_row(a, *info)


def _in_layout(batched, r, flat, shape):
    """``batched`` (a group's result in the layout ``r`` rows per member, 0 for STACKED)
    in the layout the consumer wants: the same array, or a reshape of it (a view)."""
    if bool(r) == flat:
        return batched
    if flat:  # (m, r, ...) -> (m*r, ...)
        return O.reshape(batched, shape=(-1, *shape[1:]))
    return O.reshape(batched, shape=(-1, *shape))


def _stacked_once(col, n, rowof, helpers, flat, columns, done):
    """:func:`_stacked`, or the batched operand of an earlier per-sample column of the same
    tensors (``h * h``: one gather, one gradient path). ``done``: the operands batched so
    far, for ``columns``' first ones."""
    for other, (shared, v) in zip(columns, done):
        if not shared and other[0] is col[0] and other[-1] is col[-1] and \
                list(map(id, other)) == list(map(id, col)):
            return v
    return _stacked(col, n, rowof, helpers, flat)


def _stacked(col, n, rowof, helpers, flat):
    """The per-sample operands ``col`` as one batched operand in the FLAT or STACKED
    layout, from the producing groups' batched results where possible (a view or one
    gather), else stacked (or joined)."""
    shape = col[0].shape
    r = shape[0] if flat else 1  # rows of the wanted layout per member
    # (A first member that no group produced -- the user's input rows, the common case --
    # means some row must be joined anyway: no lookup for the others.)
    infos = list(map(rowof.get, map(id, col))) if id(col[0]) in rowof else (None,)
    if None not in infos:
        first, _, _, r_first = infos[0]
        if len(set(map(id, map(_BATCH, infos)))) == 1:  # all rows of one batched result
            whole = _in_layout(first, r_first, flat, shape)
            rows = list(map(_ROW, infos))
            total = _arr(whole).shape[0] // r
            start = rows[0]
            if rows == list(range(start, start + n)):
                if start == 0 and n == total:
                    return whole
                helpers[0] += 1
                return O.getitem(whole, index=((start * r, (start + n) * r, None),))
            helpers[0] += 1
            return O.gather(whole, _row_index(rows, r), axis=0)
        sources, offsets, index, joined = [], {}, [], 0
        for b, i, _, r_b in infos:
            off = offsets.get(id(b))
            if off is None:
                off = offsets[id(b)] = joined // r
                sources.append(_in_layout(b, r_b, flat, shape))
                joined += _arr(sources[-1]).shape[0]
            index.append(off + i)
        helpers[0] += 2
        return O.gather(O.concat(sources, axis=0), _row_index(index, r), axis=0)
    helpers[0] += 1
    plain = set(map(type, col)) == {Tensor}  # the common case: the user's input tensors
    if not plain:
        _ready(col, rowof)  # rows not handed out yet become tensors; arrays stay arrays
    if not (any(map(_REQUIRES_GRAD, col)) if plain else
            any(type(c) is Tensor and c.requires_grad for c in col)):
        # Per-sample data (inputs, no gradient): the rows copied into one array.
        arrays = (list(map(_DATA_OF, col)) if plain else
                  [_DATA.__get__(c) if type(c) is Tensor else c for c in col])
        return np.concatenate(arrays) if flat else np.stack(arrays)
    return O.concat(list(col), axis=0) if flat else O.stack(list(col), axis=0)


def _numbers(col, p0, flat):
    """A column of Python floats (one per member of an elementwise group) as an array in
    the dtype the op computes in -- a Python float is weak: the tensors' dtype -- so each
    member computes the same bits as with its own number: (n,), or in the FLAT layout
    each number repeated for its member's rows, (n*r, 1, ...)."""
    dts = [a.dtype for a in p0.args if isinstance(a, Tensor | ndarray)]
    dt = dts[0]
    for d in dts[1:]:
        dt = D.promote(dt, d)
    values = np.array(col, D.promote_with_scalar(dt, 0.0))
    if not flat:
        return values
    rows = p0.shape[0]
    return np.repeat(values, rows).reshape(len(col) * rows, *(1,) * (len(p0.shape) - 1))


def _row_index(members, r):
    """The rows of ``members`` in a layout with ``r`` rows per member."""
    members = np.array(members, np.int64)
    if r == 1:
        return members
    return (members[:, None] * r + np.arange(r)).ravel()

