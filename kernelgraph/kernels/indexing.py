"""numba CPU kernels for the indexing ops: block copies (concat/stack), gather and its
accumulating scatter, one_hot, clip and argmax.

Every kernel works on 1-D/2-D/3-D row-major views that its Python wrapper built and checked:
the wrappers validate shapes and index ranges first, so a kernel never reads or writes
outside its arrays whatever a user passes.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

ndarray = np.ndarray


@njit(cache=True)
def _copy_columns(src, dst, col0):
    # dst[:, col0:col0 + src.shape[1]] = src, for 2-D views of the same row count.
    rows, cols = src.shape
    for r in range(rows):
        for c in range(cols):
            dst[r, col0 + c] = src[r, c]


def concat(arrays, axis: int) -> ndarray:
    """Join arrays of one dtype and rank along ``axis`` (already normalized, in range); the
    other dims must agree (checked here)."""
    first = arrays[0]
    ndim = first.ndim
    before, after = first.shape[:axis], first.shape[axis + 1:]
    for a in arrays:
        if a.ndim != ndim or a.dtype != first.dtype or (
                a.shape[:axis] != before or a.shape[axis + 1:] != after):
            raise ValueError(f"concat: cannot join shapes {[x.shape for x in arrays]} "
                             f"({[x.dtype.name for x in arrays]}) along axis {axis}")
    total = 0
    for a in arrays:
        total += a.shape[axis]
    shape = first.shape[:axis] + (total,) + first.shape[axis + 1:]
    out = np.empty(shape, first.dtype)
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    if out.size == 0:
        return out
    dst = out.reshape(outer, total * inner)
    col = 0
    for a in arrays:
        width = a.shape[axis] * inner
        if width:
            _copy_columns(np.ascontiguousarray(a).reshape(outer, width), dst, col)
        col += width
    return out



def stack(arrays, axis: int) -> ndarray:
    """Stack arrays of one shape and dtype along a new ``axis`` (normalized, in range)."""
    return concat([np.expand_dims(a, axis) for a in arrays], axis)


@njit(cache=True)
def _gather3(params, idx, out):
    outer, m, inner = out.shape
    for o in range(outer):
        for j in range(m):
            src = idx[j]
            for k in range(inner):
                out[o, j, k] = params[o, src, k]


@njit(cache=True)
def _scatter_add3(g, idx, out):
    outer, m, inner = g.shape
    for o in range(outer):
        for j in range(m):
            dst = idx[j]
            for k in range(inner):
                out[o, dst, k] += g[o, j, k]


@njit(cache=True)
def _first_out_of_range(flat, size):
    # One compiled pass: NumPy's (flat < 0) | (flat >= size) costs four calls, most of a
    # small gather's time (autobatching gathers a few dozen rows per step).
    for i in range(flat.shape[0]):
        if flat[i] < 0 or flat[i] >= size:
            return i
    return -1


def check_indices(indices: ndarray, size: int, what: str, axis: int = 0) -> ndarray:
    """Flat int64 indices, all in ``[0, size)``, or an IndexError naming the first bad one."""
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{what}: indices must be integers, got {indices.dtype.name}")
    flat = np.ascontiguousarray(indices, dtype=np.int64).reshape(-1)
    bad = _first_out_of_range(flat, size) if flat.size else -1
    if bad >= 0:
        raise IndexError(f"{what}: index {int(flat[bad])} is out of range for axis {axis} "
                         f"with size {size} (expected 0 <= index < {size})")
    return flat


def _split3(shape, axis):
    """(outer, inner): the products of the dims before and after ``axis``."""
    return int(math.prod(shape[:axis])), int(math.prod(shape[axis + 1:]))


def gather(params: ndarray, indices: ndarray, axis: int) -> ndarray:
    """``params`` indexed by ``indices`` along ``axis`` (normalized)."""
    n = params.shape[axis]
    if indices.ndim == 0 and indices.dtype.kind in "iu" and 0 <= int(indices) < n:
        # One slice (a loop reading its step t): a copy of it, without first making the whole
        # of a strided params contiguous. An index out of range takes the checked path below.
        # (Basic indexing and a copy: np.take on a strided params costs 20x as much.)
        view = params[(slice(None),) * axis + (int(indices),)]
        return np.array(view, copy=True, order="C")  # 1-D params: a 0-d array
    flat = check_indices(indices, n, "gather", axis)
    shape = params.shape[:axis] + indices.shape + params.shape[axis + 1:]
    out = np.empty(shape, params.dtype)
    if out.size == 0:
        return out
    outer, inner = _split3(params.shape, axis)
    p3 = np.ascontiguousarray(params).reshape(outer, n, inner)
    _gather3(p3, flat, out.reshape(outer, flat.size, inner))
    return out


def scatter_add(g: ndarray, indices: ndarray, shape: tuple, axis: int) -> ndarray:
    """Zeros of ``shape`` with ``g``'s slices added at ``indices`` along ``axis``; repeated
    indices accumulate (the gradient of gather)."""
    n = shape[axis]
    flat = check_indices(indices, n, "scatter_add", axis)
    expected = tuple(shape[:axis]) + indices.shape + tuple(shape[axis + 1:])
    if g.shape != expected:
        raise ValueError(f"scatter_add: gradient of shape {g.shape}, expected {expected}")
    out = np.zeros(shape, g.dtype)
    if g.size == 0:
        return out
    outer, inner = _split3(shape, axis)
    _scatter_add3(np.ascontiguousarray(g).reshape(outer, flat.size, inner), flat,
                  out.reshape(outer, n, inner))
    return out


@njit(cache=True)
def _one_hot(idx, out):
    for i in range(idx.shape[0]):
        out[i, idx[i]] = 1


def one_hot(indices: ndarray, depth: int, dtype) -> ndarray:
    flat = check_indices(indices, depth, "one_hot", -1)
    out = np.zeros((flat.size, depth), dtype)
    if out.size:
        _one_hot(flat, out)
    return out.reshape(indices.shape + (depth,))


@njit(cache=True)
def _clip(x, lo, hi, has_lo, has_hi, out):
    for i in range(x.shape[0]):
        v = x[i]
        if has_lo and (v < lo or lo != lo):  # a NaN bound gives NaN, as torch.clamp
            v = lo
        if has_hi and (v > hi or hi != hi):
            v = hi
        out[i] = v


def clip(x: ndarray, lo, hi) -> ndarray:
    """x limited to ``[lo, hi]`` (either may be None; ``hi`` wins if ``lo > hi``); NaN
    stays NaN, and a NaN bound makes every element NaN, as in ``torch.clamp``; bounds in
    x's dtype."""
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty(flat.size, x.dtype)
    zero = np.zeros((), x.dtype)[()]
    _clip(flat, x.dtype.type(lo) if lo is not None else zero,
          x.dtype.type(hi) if hi is not None else zero, lo is not None, hi is not None, out)
    return out.reshape(x.shape)


@njit(cache=True)
def _argmax_rows(a, out):
    rows, cols = a.shape
    for r in range(rows):
        best = 0
        v = a[r, 0]
        if v == v:
            for c in range(1, cols):
                w = a[r, c]
                if w != w:  # NaN wins, as in NumPy
                    best = c
                    break
                if w > v:
                    v = w
                    best = c
        out[r] = best


def argmax(x: ndarray, axis=None, keepdims: bool = False) -> ndarray:
    """Index (int64) of the first maximum along ``axis`` (normalized int, or None: flat)."""
    if (x.size if axis is None else x.shape[axis]) == 0:
        raise ValueError(f"argmax: cannot take the argmax of an empty axis (shape {x.shape})")
    if axis is None:
        rows = np.ascontiguousarray(x).reshape(1, -1)
        shape = (1,) * x.ndim if keepdims else ()
    else:
        rows = np.ascontiguousarray(np.moveaxis(x, axis, -1)).reshape(-1, x.shape[axis])
        shape = x.shape[:axis] + ((1,) if keepdims else ()) + x.shape[axis + 1:]
    out = np.empty(rows.shape[0], np.int64)
    if out.size:
        _argmax_rows(rows, out)
    return out.reshape(shape)
