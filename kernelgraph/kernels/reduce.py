"""CPU reductions (``sum mean max``) over any axes, as ``@njit(cache=True)`` loops over 2-D
views; sums accumulate in float64 (floats) or int64 (integers and bools), in a fixed order.

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


@njit(cache=True, inline="always")
def _add_row(row, s0):
    """``s0`` plus the elements of ``row`` in eight interleaved partial sums, combined at the
    end: one running sum is a chain of dependent float64 adds that the CPU can neither
    overlap nor vectorise; eight can be. The order is fixed, so a result does not depend on
    the machine."""
    n = row.shape[0]
    body = n - n % 8
    s1 = s2 = s3 = s4 = s5 = s6 = s7 = s0 - s0
    for k in range(0, body, 8):
        s0 += row[k]
        s1 += row[k + 1]
        s2 += row[k + 2]
        s3 += row[k + 3]
        s4 += row[k + 4]
        s5 += row[k + 5]
        s6 += row[k + 6]
        s7 += row[k + 7]
    for k in range(body, n):
        s0 += row[k]
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))


@by_work(PARALLEL_MIN_WORK)
def _sum_rows(a, acc):
    for i in prange(a.shape[0]):
        acc[i] = _add_row(a[i], acc[i])


@by_work(PARALLEL_MIN_WORK)
def _sum_middle(a, acc):
    """``a`` (outer, kept, inner) summed over its first and last axes, into ``acc`` (kept,):
    the per-channel sum of an NCHW array (a bias gradient, batch statistics) without
    transposing it first."""
    for j in prange(a.shape[1]):
        s = acc[j]
        for i in range(a.shape[0]):
            s = _add_row(a[i, j], s)
        acc[j] = s


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


def _middle_view(x: ndarray, axes):
    """``x`` as (lead, kept, trail) when the kept axes are one block with reduced axes on both
    sides (NCHW summed over N, H and W), else None."""
    kept = [i for i in range(x.ndim) if i not in axes]
    if not (kept and axes and axes[0] < kept[0] and axes[-1] > kept[-1] and x.size
            and kept == list(range(kept[0], kept[-1] + 1)) and x.flags.c_contiguous):
        return None
    lead = 1
    for d in x.shape[:kept[0]]:
        lead *= d
    middle = 1
    for d in x.shape[kept[0]:kept[-1] + 1]:
        middle *= d
    return x.reshape(lead, middle, x.size // (lead * middle))


def _accumulator(dt):
    return np.float64 if dt.kind == "f" else np.int64


def reduce_sum(x: ndarray, axis=None, keepdims=False) -> ndarray:
    axes = normalize_axes(axis, x.ndim)
    out_shape = reduced_shape(x.shape, axes, keepdims)
    # Sums of one element each (a bias gradient at batch 1) skip the kernel; a 0-d x
    # "reduced over axis 0" has no axis 0 to look at, and takes the kernel's path.
    if x.ndim and all(x.shape[a] == 1 for a in axes):
        return _sum_of_one(x, out_shape)
    out_dt = np.int64 if x.dtype == _BOOL else x.dtype
    a3 = _middle_view(x, axes) if x.dtype != _BOOL else None
    if a3 is not None:
        acc = np.zeros(a3.shape[1], _accumulator(x.dtype))
        _sum_middle(a3.size if a3.shape[1] > 1 else 0, a3, acc)
        return acc.astype(out_dt, copy=False).reshape(out_shape)
    a2, form = _as_2d(x, axes)
    if a2.dtype == _BOOL:
        a2 = a2.astype(np.int64)
    if form == "rows":
        acc = np.zeros(a2.shape[0], _accumulator(x.dtype))
        _sum_rows(a2.size if a2.shape[0] > 1 else 0, a2, acc)
    else:
        acc = np.zeros(a2.shape[1], _accumulator(x.dtype))
        _sum_cols(a2, acc)
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


def sum_rows_2d(a: ndarray) -> ndarray:
    """A 2-D float matrix summed over its rows (axis 0), accumulated in float64 in row order
    like :func:`reduce_sum`, returned in ``a``'s dtype: a bias gradient in one call. Plain
    Python around the loop: compiled whole, its np.zeros and astype took numba longer to
    compile than the loop, on every first run."""
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



# -- min, prod, all/any, argmin and the value at an index (torch.max(x, dim)) -----
@njit(cache=True)
def _min_rows(a, out):
    for i in range(a.shape[0]):
        m = a[i, 0]
        for k in range(1, a.shape[1]):
            v = a[i, k]
            if v < m or v != v:
                m = v
                if m != m:
                    break
        out[i] = m


@njit(cache=True)
def _min_cols(a, out):
    for k in range(a.shape[1]):
        out[k] = a[0, k]
    for i in range(1, a.shape[0]):
        for k in range(a.shape[1]):
            v = a[i, k]
            if v < out[k] or v != v:
                out[k] = v


@njit(cache=True)
def _prod_rows(a, acc):
    for i in range(a.shape[0]):
        p = acc[i]
        for k in range(a.shape[1]):
            p *= a[i, k]
        acc[i] = p


@njit(cache=True)
def _prod_cols(a, acc):
    for i in range(a.shape[0]):
        for k in range(a.shape[1]):
            acc[k] *= a[i, k]


def reduce_min(x: ndarray, axis=None, keepdims=False) -> ndarray:
    """Minimum over ``axis``; NaN where a NaN is reduced (the op refuses an empty axis)."""
    axes = normalize_axes(axis, x.ndim)
    out_shape = reduced_shape(x.shape, axes, keepdims)
    a2, form = _as_2d(x, axes)
    if a2.size == 0:
        raise ValueError(f"min of an empty tensor (shape {x.shape}) over axis {axis!r} has no "
                         "value; reduce over a non-empty dimension")
    out = np.empty(a2.shape[0] if form == "rows" else a2.shape[1], x.dtype)
    (_min_rows if form == "rows" else _min_cols)(a2, out)
    return out.reshape(out_shape)


def reduce_prod(x: ndarray, axis=None, keepdims=False) -> ndarray:
    """Product over ``axis``, accumulated in float64 or int64 in row order (wrapping on
    integer overflow, as PyTorch's); integers and bools give int64; 1 over an empty axis."""
    axes = normalize_axes(axis, x.ndim)
    out_shape = reduced_shape(x.shape, axes, keepdims)
    a2, form = _as_2d(x, axes)
    if a2.dtype == _BOOL:
        a2 = a2.astype(np.int64)
    acc = np.ones(a2.shape[0] if form == "rows" else a2.shape[1], _accumulator(x.dtype))
    (_prod_rows if form == "rows" else _prod_cols)(a2, acc)
    out_dt = x.dtype if x.dtype.kind == "f" else np.int64
    return acc.astype(out_dt, copy=False).reshape(out_shape)


def reduce_all(x: ndarray, axis=None, keepdims=False) -> ndarray:
    """Whether every element over ``axis`` is nonzero (True over an empty axis): bool."""
    return _logical(x, axis, keepdims, True)


def reduce_any(x: ndarray, axis=None, keepdims=False) -> ndarray:
    """Whether any element over ``axis`` is nonzero (False over an empty axis): bool."""
    return _logical(x, axis, keepdims, False)


def _logical(x, axis, keepdims, every):
    axes = normalize_axes(axis, x.ndim)
    out_shape = reduced_shape(x.shape, axes, keepdims)
    b = x if x.dtype == _BOOL else x != 0  # NaN counts as true, as in PyTorch
    a2, form = _as_2d(b, axes)
    if a2.size == 0:
        return np.full(out_shape, every, _BOOL)
    out = np.empty(a2.shape[0] if form == "rows" else a2.shape[1], _BOOL)
    if every:
        (_min_rows if form == "rows" else _min_cols)(a2, out)
    else:
        (_max_rows if form == "rows" else _max_cols)(a2, out)
    return out.reshape(out_shape)


@njit(cache=True)
def _argmin_rows(a, out):
    rows, cols = a.shape
    for r in range(rows):
        best = 0
        v = a[r, 0]
        if v == v:
            for c in range(1, cols):
                w = a[r, c]
                if w != w:  # the first NaN wins, as in PyTorch and NumPy
                    best = c
                    break
                if w < v:
                    v = w
                    best = c
        out[r] = best


def _split3(shape, axis):
    outer = inner = 1
    for d in shape[:axis]:
        outer *= d
    for d in shape[axis + 1:]:
        inner *= d
    return outer, inner


def argmin(x: ndarray, axis=None, keepdims: bool = False) -> ndarray:
    """Index (int64) of the first minimum along ``axis`` (normalized int, or None: flat), or
    of the first NaN."""
    if (x.size if axis is None else x.shape[axis]) == 0:
        raise ValueError(f"argmin: cannot take the argmin of an empty axis (shape {x.shape})")
    if axis is None:
        rows = np.ascontiguousarray(x).reshape(1, -1)
        shape = (1,) * x.ndim if keepdims else ()
    else:
        rows = np.ascontiguousarray(np.moveaxis(x, axis, -1)).reshape(-1, x.shape[axis])
        shape = x.shape[:axis] + ((1,) if keepdims else ()) + x.shape[axis + 1:]
    out = np.empty(rows.shape[0], np.int64)
    if out.size:
        _argmin_rows(rows, out)
    return out.reshape(shape)


@njit(cache=True)
def _take3(x, idx, out):
    for o in range(x.shape[0]):
        for k in range(x.shape[2]):
            out[o, k] = x[o, idx[o, k], k]


@njit(cache=True)
def _put3(g, idx, out):
    for o in range(g.shape[0]):
        for k in range(g.shape[1]):
            out[o, idx[o, k], k] = g[o, k]


def take_along_axis(x: ndarray, indices: ndarray, axis: int, keepdims: bool) -> ndarray:
    """``x``'s element at ``indices`` (one per position of the reduced shape, in range: an
    argmax's) along ``axis`` (normalized): the values of ``torch.max(x, dim)``."""
    outer, inner = _split3(x.shape, axis)
    n = x.shape[axis]
    out = np.empty(outer * inner, x.dtype)
    if out.size:
        _take3(np.ascontiguousarray(x).reshape(outer, n, inner),
               np.ascontiguousarray(indices, np.int64).reshape(outer, inner),
               out.reshape(outer, inner))
    return out.reshape(reduced_shape(x.shape, (axis,), keepdims))


def put_along_axis(g: ndarray, indices: ndarray, shape: tuple, axis: int) -> ndarray:
    """Zeros of ``shape`` with ``g`` put at ``indices`` along ``axis``: the gradient of
    :func:`take_along_axis`."""
    outer, inner = _split3(shape, axis)
    n = shape[axis]
    out = np.zeros(shape, g.dtype)
    if g.size:
        _put3(np.ascontiguousarray(g).reshape(outer, inner),
              np.ascontiguousarray(indices, np.int64).reshape(outer, inner),
              out.reshape(outer, n, inner))
    return out


@njit(cache=True)
def _cumsum3(x, acc, out):
    # Along axis 1 of (outer, n, inner), accumulating in acc's dtype (float64 or int64).
    for o in range(x.shape[0]):
        for k in range(x.shape[2]):
            s = acc[0]
            for j in range(x.shape[1]):
                s += x[o, j, k]
                out[o, j, k] = s


def cumsum(x: ndarray, axis: int) -> ndarray:
    """Running sums along ``axis`` (normalized), accumulated in float64 (floats, returned in
    x's dtype) or int64 (integers and bools, returned as int64, as PyTorch's)."""
    outer, inner = _split3(x.shape, axis)
    n = x.shape[axis] if x.ndim else 1
    out_dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.int64)
    src = x.astype(np.int64) if x.dtype == _BOOL else x
    out = np.empty((outer, n, inner), np.float64 if x.dtype.kind == "f" else np.int64)
    if out.size:
        _cumsum3(np.ascontiguousarray(src).reshape(outer, n, inner),
                 np.zeros(1, out.dtype), out)
    return out.astype(out_dt, copy=False).reshape(x.shape)
