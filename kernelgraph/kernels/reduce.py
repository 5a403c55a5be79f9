"""CPU reductions (``sum mean max``) over any axes, as ``@njit(cache=True)`` loops over 2-D
views; sums accumulate in float64 (floats) or int64 (integers and bools), in row order.

A reduction over some axes is reshaped to one of two 2-D forms without copying when it can:
reducing the trailing axes of a C-contiguous array gives (outer, inner) "rows"; reducing
the leading axes gives "columns". Anything else is transposed into rows first (one copy).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..shapes import normalize_axes, reduced_shape
from .loops import PARALLEL_MIN_WORK, by_work

ndarray = np.ndarray
_BOOL = np.dtype(np.bool_)


@by_work(PARALLEL_MIN_WORK)
def _sum_rows(a, acc):
    for i in prange(a.shape[0]):
        s = acc[i]
        for k in range(a.shape[1]):
            s += a[i, k]
        acc[i] = s


@njit(cache=True)
def _sum_cols(a, acc):
    for i in range(a.shape[0]):
        for k in range(a.shape[1]):
            acc[k] += a[i, k]


@njit(cache=True)
def _max_rows(a, out):
    for i in range(a.shape[0]):
        m = a[i, 0]
        for k in range(1, a.shape[1]):
            v = a[i, k]
            if v > m or v != v:
                m = v
                if m != m:
                    break
        out[i] = m


@njit(cache=True)
def _max_cols(a, out):
    for k in range(a.shape[1]):
        out[k] = a[0, k]
    for i in range(1, a.shape[0]):
        for k in range(a.shape[1]):
            v = a[i, k]
            if v > out[k] or v != v:
                out[k] = v


_COMMON_AXES: dict = {}  # (axis, ndim) -> normalize_axes' answer, for None or an int axis


def _as_2d(x: ndarray, axes):
    """(2-D view, 'rows' or 'cols'): reduced axes become axis 1 for rows, axis 0 for cols."""
    nd = x.ndim
    nred = len(axes)
    inner = outer = 1
    for i, d in enumerate(x.shape):
        if i in axes:
            inner *= d
        else:
            outer *= d  # not size // inner: with an empty reduced axis that would be 0 rows
    if nd == 0:
        return x.reshape(1, 1), "rows"
    if axes == tuple(range(nd - nred, nd)):  # trailing axes
        return np.ascontiguousarray(x).reshape(outer, inner), "rows"
    if axes == tuple(range(nred)) and x.flags.c_contiguous:  # leading axes
        return x.reshape(inner, outer), "cols"
    keep = [i for i in range(nd) if i not in axes]
    return np.ascontiguousarray(x.transpose(keep + list(axes))).reshape(outer, inner), "rows"


def _accumulator(dt):
    return np.float64 if dt.kind == "f" else np.int64


def reduce_sum(x: ndarray, axis=None, keepdims=False) -> ndarray:
    axes = normalize_axes(axis, x.ndim)
    out_shape = reduced_shape(x.shape, axes, keepdims)
    # Sums of one element each (a bias gradient at batch 1) skip the kernel; a 0-d x
    # "reduced over axis 0" has no axis 0 to look at, and takes the kernel's path.
    if x.ndim and all(x.shape[a] == 1 for a in axes):
        return _sum_of_one(x, out_shape)
    a2, form = _as_2d(x, axes)
    if a2.dtype == _BOOL:
        a2 = a2.astype(np.int64)
    if form == "rows":
        acc = np.zeros(a2.shape[0], _accumulator(x.dtype))
        _sum_rows(a2.size if a2.shape[0] > 1 else 0, a2, acc)
    else:
        acc = np.zeros(a2.shape[1], _accumulator(x.dtype))
        _sum_cols(a2, acc)
    out_dt = np.int64 if x.dtype == _BOOL else x.dtype
    return acc.astype(out_dt, copy=False).reshape(out_shape)


def _sum_of_one(x: ndarray, out_shape: tuple) -> ndarray:
    """What the kernels return for sums over axes of size 1, without running them: each
    element itself (plus 0, which turns -0.0 into 0.0 as the kernels' 0 + x does)."""
    if x.dtype == _BOOL:
        return x.astype(np.int64).reshape(out_shape)
    if x.dtype.kind == "f":
        return np.add(x.reshape(out_shape), x.dtype.type(0), out=np.empty(out_shape, x.dtype))
    return x.reshape(out_shape).copy()


def sum_leading(x: ndarray, lead: int) -> ndarray:
    """``x`` (floating point) summed over its first ``lead`` axes: ``reduce_sum(x,
    range(lead))`` with the same kernel and order, for the bias-gradient hot path."""
    if all(d == 1 for d in x.shape[:lead]):
        return _sum_of_one(x, x.shape[lead:])
    a2, form = _as_2d(x, tuple(range(lead)))
    acc = np.zeros(a2.shape[1] if form == "cols" else a2.shape[0], np.float64)
    (_sum_cols if form == "cols" else _sum_rows.serial)(a2, acc)
    return acc.astype(x.dtype).reshape(x.shape[lead:])


@njit(cache=True)
def sum_rows_2d(a):
    """A 2-D float matrix summed over its rows (axis 0), accumulated in float64 in row order
    like :func:`reduce_sum`, returned in ``a``'s dtype: a bias gradient in one call."""
    acc = np.zeros(a.shape[1], np.float64)
    _sum_cols(a, acc)
    return acc.astype(a.dtype)


def reduce_mean(x: ndarray, axis=None, keepdims=False) -> ndarray:
    axes = normalize_axes(axis, x.ndim)
    count = 1
    for a in axes:
        count *= x.shape[a]
    total = reduce_sum(x, axes, keepdims)
    if not count:
        return np.full_like(total, np.nan)
    return np.asarray(np.divide(total, count, dtype=x.dtype))


def reduce_max(x: ndarray, axis=None, keepdims=False) -> ndarray:
    axes = normalize_axes(axis, x.ndim)
    out_shape = reduced_shape(x.shape, axes, keepdims)
    a2, form = _as_2d(x, axes)
    if a2.size == 0:
        raise ValueError(f"max of an empty tensor (shape {x.shape}) over axis {axis!r} has no "
                         "value; reduce over a non-empty dimension")
    if form == "rows":
        out = np.empty(a2.shape[0], x.dtype)
        _max_rows(a2, out)
    else:
        out = np.empty(a2.shape[1], x.dtype)
        _max_cols(a2, out)
    return out.reshape(out_shape)

