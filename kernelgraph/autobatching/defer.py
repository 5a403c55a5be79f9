"""Deferring: inside a block the eager front-end records each op call instead of running it
-- a :class:`~.lazy._Pending` with its **signature** (op, attributes, whether it records
gradients, each input's shape and dtype or a number's value), its depth and the pending
records it waits for -- after checking its shapes, so a bad shape fails at once, naming the
user's line. A call on parameters only is recorded once and handed to every caller; an RNN
cell's step has a quicker way in (:func:`record_cell`)."""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from .. import eager, trace
from .. import ops as O
from ..eager import Tensor
from ..errors import ShapeError, where
from ..graph import user_location
from .lazy import _DATA, LazyTensor, _flush, _Pending
from .stats import _active

ndarray = np.ndarray
_local = eager._local  # this thread's grad mode, and whether its ops are deferred
_new_tensor = Tensor.__new__
_CELL = O.rnn_tanh_cell

# Ops that are never deferred: they draw random numbers (deferring would change the order of
# the draws), move data between devices, or run control flow.
_RUN_NOW = frozenset({"random", "transfer", "host_only"})  # op traits

_pending: list = []  # _Pending records in creation order
_merged: dict = {}  # identity of a parameter-only call -> its pending tensor (reuse)
_infer_cache: dict = {}  # signature -> ((shape, dtype), its number)
_cell_weights: dict = {}  # id(RNN cell) -> (the cell, its weights' arrays, their keys)
# What an elementwise op's signature sees of a Python float: its type, not its value, so
# ``prediction - target`` of every sample is one group, the targets one per-sample operand.
_PER_SAMPLE_FLOAT = (float, None)
_totals = [0, 0]  # ops recorded (those pending not yet), of which merged: every block
# counts from its start


def _sync_counts():
    for block in _active:
        block._stats.nodes = _totals[0] + len(_pending) - block._start[0]
        block._stats.merged = _totals[1] - block._start[1]


def _run_now(op, args, attrs):
    """Run ``op`` eagerly (running what is pending first if it reads a pending tensor)."""
    if any(type(a) is LazyTensor for a in args):
        _flush[0]()
    saved, _local.batching = _local.batching, False
    try:
        return eager.apply(op, args, attrs)
    finally:
        _local.batching = saved


def _frozen(value):
    if isinstance(value, dict):
        return tuple((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    hash(value)
    return value


def _defer(op, args, attrs):
    """The eager front-end inside ``kg.autobatch()``: record ``op`` instead of running it.
    (The op registry calls it for tensors directly while a block is open, and eager.apply
    for the rest, so it also sees calls made while the pending work runs.)"""
    if not _local.batching:  # running the pending ops, a gradient, or another thread's op
        return eager.apply(op, args, attrs)
    if attrs and "name" in attrs:
        attrs = {k: v for k, v in attrs.items() if k != "name"}
    if not op.traits.isdisjoint(_RUN_NOW) or trace.active or eager._tracer is not None:
        return _run_now(op, args, attrs)
    # keys: what the signature sees of each input (shape and dtype, or a number's value:
    # a float's type only, for an elementwise op).
    # params: every input is a parameter (a leaf that requires grad), a number, or computed
    # from those only -- then the call is the same for every sample, and runs once.
    # (This runs once per op the user's code calls: plain Tensors, the common case, first,
    # read through their slots.)
    keys = []
    depth, need, params, lazy, tensors = 0, False, True, None, False
    for a in args:
        ta = type(a)
        if ta is Tensor:
            d = a._array
            if type(d) is not ndarray:
                return _run_now(op, args, attrs)  # a GPU tensor: not batched here
            keys.append((d.shape, d.dtype))
            if a.requires_grad:
                need = True
                if a._node is not None:
                    params = False
            else:
                params = False
            tensors = True
        elif ta is LazyTensor:
            p = _DATA.__get__(a)
            if p.depth >= depth:
                depth = p.depth + 1
            if p.cse is None:
                params = False
            keys.append(p.key)
            if a.requires_grad:
                need = True
            if lazy is None:
                lazy = [p]
            else:
                lazy.append(p)
        elif ta is float and op.elementwise:
            keys.append(_PER_SAMPLE_FLOAT)  # its value goes in per member (see _numbers)
        elif ta is float or ta is int or ta is bool:
            keys.append((ta, a))
        elif ta is ndarray:
            keys.append((a.shape, a.dtype))
            params = False
        else:
            return _run_now(op, args, attrs)  # lists, NumPy scalars ...: eager decides
    if lazy is None and not tensors:
        return _run_now(op, args, attrs)  # no tensor at all
    need = need and _local.grad_enabled and op.grad is not None
    keys = tuple(keys)
    try:
        sig = (op, tuple(attrs.items()) if attrs else (), keys, need)
        known = _infer_cache.get(sig)
    except TypeError:  # a list-valued attribute (pad's paddings ...): a tuple in the key
        try:
            sig = (op, _frozen(attrs), keys, need)
            known = _infer_cache.get(sig)
        except TypeError:
            return _run_now(op, args, attrs)
    cse = None
    if params:  # (the signature itself names the op, so it keys the merge)
        cse = (sig, tuple([_DATA.__get__(a).cse if type(a) is LazyTensor else
                           id(a) if type(a) is Tensor else (type(a), a) for a in args]))
        same = _merged.get(cse)
        if same is not None:
            _totals[0] += 1
            _totals[1] += 1
            return same
    if known is None:
        shape_dtype = _infer(op, keys, attrs)
        if shape_dtype is None:
            return _run_now(op, args, attrs)
        known = _infer_cache[sig] = (shape_dtype, len(_infer_cache))
    t = _record(op, args, attrs, need, depth, known, cse, lazy)
    if cse is not None:
        _merged[cse] = t
    return t


def _record(op, args, attrs, need, depth, known, cse, lazy):
    """The record of one deferred call (signature ``known``; ``lazy``: the records of its
    pending inputs, or None) and its lazy tensor, returned."""
    p = _Pending()
    p.op, p.args, p.attrs, p.need, p.depth = op, args, attrs, need, depth
    p.key, p.sig = known
    p.shape, p.dtype = known[0]
    p.cse, p.row, p.error, p.consumers = cse, None, None, None
    t = _new_tensor(Tensor)  # filled as a Tensor, then made lazy: its slots' plain stores
    t._array = p  # are cheaper than LazyTensor's descriptors (a tenth of a record)
    t._node = None
    t.requires_grad = need
    t.__class__ = LazyTensor
    p.out = t
    _pending.append(p)
    waiting = 0
    if lazy is not None:
        for q in lazy:  # (one that ran in an earlier flush, or failed there, is no edge)
            if q.row is None and q.out is not None:
                waiting += 1
                if q.consumers is None:
                    q.consumers = [p]
                else:
                    q.consumers.append(p)
    p.waiting = waiting
    return t


def record_cell(cell, x, h, weights):
    """An RNN step inside a block -- ``kg.nn.RNNCell`` ``cell`` on a data tensor ``x`` and a
    state ``h`` that a pending op computes, ``weights`` its (w_ih, w_hh, b_ih, b_hh) --
    recorded as :func:`_defer` records ``rnn_tanh_cell(x, h, *weights)``, but with the
    weights read as one: their arrays, compared by identity, are kept per block with the
    signatures of the steps seen so far. (An RNN reads the same weights at every step of
    every sample; reading each of them the way any input is read cost 0.8 µs of a 1.9 µs
    step.) A weight given a new array (``w.data = ...``) is seen; one whose array is
    reshaped in place during a block is not. None in any other case (a step whose
    signature no step of the block had yet, a 1-D x among them), for the caller to record
    the op the general way, which checks it."""
    if type(x) is not Tensor or type(h) is not LazyTensor or x.requires_grad or \
            trace.active or eager._tracer is not None or not _local.batching:
        return None
    d = x._array
    if type(d) is not ndarray:
        return None
    w_ih, w_hh, b_ih, b_hh = weights
    seen = _cell_weights.get(id(cell))
    if seen is not None:
        arrays = seen[1]
        if not (w_ih._array is arrays[0] and w_hh._array is arrays[1] and b_ih._array is arrays[2]
                and b_hh._array is arrays[3]):
            seen = None
    if seen is None:
        if any(type(w) is not Tensor or type(w._array) is not ndarray for w in weights):
            return None
        arrays = tuple(w._array for w in weights)
        seen = _cell_weights[id(cell)] = (cell, arrays, tuple((a.shape, a.dtype) for a in arrays),
                                          {})
    q = _DATA.__get__(h)
    need = (h.requires_grad or w_ih.requires_grad or w_hh.requires_grad or b_ih.requires_grad
            or b_hh.requires_grad) and _local.grad_enabled
    # The step's signature from x's key, h's signature number (which fixes h's key) and
    # need, given the weights': one small lookup, not the whole signature's hash.
    step = (d.shape, d.dtype, q.sig, need)
    known = seen[3].get(step)
    if known is None:
        known = _infer_cache.get((_CELL, (), ((d.shape, d.dtype), q.key, *seen[2]), need))
        if known is None:  # (not recorded yet in this block: the general way infers it)
            return None
        seen[3][step] = known
    return _record(_CELL, (x, h, w_ih, w_hh, b_ih, b_hh), {}, need, q.depth + 1, known, None,
                   (q,))


def _infer(op, keys, attrs):
    """The op's shape rule on the inputs' shapes: (shape, dtype), None when the shape is not
    fully known, or the rule's error naming the user's line."""
    shapes = [k[0] if type(k[0]) is tuple else () for k in keys]
    dts = [k[1] if type(k[0]) is tuple else D.scalar_dtype(k[0]()) for k in keys]
    try:
        shape, dtype = op.infer(shapes, dts, attrs)
    except (ShapeError, TypeError, ValueError, IndexError) as e:
        msg = str(e) if str(e).startswith(op.name) else f"{op.name}: {e}"
        raise type(e)(f"{msg}{where(user_location(3))}") from None
    if shape is None or None in shape:
        return None
    return tuple(shape), D.as_dtype(dtype)
