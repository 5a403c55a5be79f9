"""numba CPU kernels for PyTorch's index-along-a-dim ops (``torch.gather``, ``scatter``,
``scatter_add``) and for ``topk``'s indices, with their NumPy references.

The gather/scatter kernels walk the *index* tensor: each index element names, along one axis,
the element of the data tensor it reads (gather) or writes (scatter); along the other axes its
own coordinates are used (the index may be smaller than the data there, as PyTorch allows).
Arrays arrive flat and C-contiguous with their shapes and element strides, so one kernel serves
every rank. The wrappers check shapes and index ranges first (PyTorch's words), so a kernel
never reads or writes outside its arrays.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

ndarray = np.ndarray
SCATTER_MODES = {None: 0, "add": 1, "multiply": 2}  # how a scatter combines with the target


class IndexOutOfBounds(RuntimeError):
    """An index value outside its dim (PyTorch's RuntimeError and words)."""

    checked = True  # shown as it is by the op's error handling


def strides_of(shape) -> ndarray:
    """Element strides of a C-contiguous array of ``shape``."""
    out = np.ones(len(shape), np.int64)
    for d in range(len(shape) - 2, -1, -1):
        out[d] = out[d + 1] * shape[d + 1]
    return out


@njit(cache=True)
def _offsets(i, ishape, axis, picked, strides_a, strides_b):
    # The flat offsets in a and b of index element i (b's coordinate along ``axis`` is the
    # element's own; a's is ``picked``, the index value).
    rem = i
    off_a = 0
    off_b = 0
    for d in range(ishape.shape[0] - 1, -1, -1):
        c = rem % ishape[d]
        rem //= ishape[d]
        off_b += c * strides_b[d]
        off_a += (picked if d == axis else c) * strides_a[d]
    return off_a, off_b


@njit(cache=True)
def _gather(x, xstrides, index, ishape, axis, out):
    for i in range(index.shape[0]):
        off, _ = _offsets(i, ishape, axis, index[i], xstrides, xstrides)
        out[i] = x[off]


@njit(cache=True)
def _scatter(out, ostrides, index, ishape, axis, src, sstrides, mode):
    # In index order, so that of repeated indices the last write wins, as on PyTorch's CPU.
    for i in range(index.shape[0]):
        off, soff = _offsets(i, ishape, axis, index[i], ostrides, sstrides)
        if mode == 0:
            out[off] = src[soff]
        elif mode == 1:
            out[off] += src[soff]
        else:
            out[off] *= src[soff]


def check_index(index: ndarray, size: int, axis: int) -> ndarray:
    """``index`` as flat int64, every value in ``[0, size)``, or PyTorch's IndexError-like
    RuntimeError naming the first bad one."""
    flat = np.ascontiguousarray(index, dtype=np.int64).reshape(-1)
    if flat.size:
        bad = (flat < 0) | (flat >= size)
        if bad.any():
            raise IndexOutOfBounds(f"index {int(flat[np.argmax(bad)])} is out of bounds for "
                               f"dimension {axis} with size {size}")
    return flat


def gather(x: ndarray, index: ndarray, axis: int) -> ndarray:
    """``torch.gather(x, axis, index)`` (``axis`` normalized, shapes checked)."""
    flat = check_index(index, x.shape[axis] if x.ndim else 1, axis)
    out = np.empty(index.shape, x.dtype)
    if out.size:
        xs = np.ascontiguousarray(x)
        _gather(xs.reshape(-1), strides_of(xs.shape), flat,
                np.array(index.shape, np.int64), axis, out.reshape(-1))
    return out


def scatter(x: ndarray, index: ndarray, src, axis: int, mode: int) -> ndarray:
    """A copy of ``x`` with ``src``'s elements (an array at least index's size, or one
    number) written, added (mode 1) or multiplied (mode 2) at ``index`` along ``axis``."""
    flat = check_index(index, x.shape[axis] if x.ndim else 1, axis)
    out = np.array(x, copy=True, order="C")
    if flat.size:
        if np.ndim(src) == 0:  # one number (scatter's value=)
            s, sstrides = np.full(1, src, x.dtype), np.zeros(max(index.ndim, 1), np.int64)
        else:
            s = np.ascontiguousarray(src, dtype=x.dtype)
            sstrides = strides_of(s.shape)
        _scatter(out.reshape(-1), strides_of(out.shape), flat,
                 np.array(index.shape or (1,), np.int64), axis, s.reshape(-1), sstrides, mode)
    return out


@njit(cache=True)
def _topk_rows(x3, k, largest, out3):
    # Per (outer, inner) row: a stable sort, so that ties keep the lower index first; for the
    # largest, the row is sorted reversed and read from the end (NaN counts as the largest,
    # as in PyTorch, since argsort puts it last).
    n = x3.shape[1]
    row = np.empty(n, x3.dtype)
    for o in range(x3.shape[0]):
        for q in range(x3.shape[2]):
            for j in range(n):
                row[j] = x3[o, n - 1 - j, q] if largest else x3[o, j, q]
            order = np.argsort(row, kind="mergesort")
            for j in range(k):
                out3[o, j, q] = n - 1 - order[n - 1 - j] if largest else order[j]


def topk_indices(x: ndarray, k: int, axis: int, largest: bool) -> ndarray:
    """int64 indices of the ``k`` largest (or smallest) elements along ``axis``, best first,
    ties in index order."""
    n = x.shape[axis] if x.ndim else 1
    outer = int(math.prod(x.shape[:axis]))
    inner = int(math.prod(x.shape[axis + 1:]))
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:] if x.ndim else ()
    out = np.empty(shape, np.int64)
    if out.size:
        _topk_rows(np.ascontiguousarray(x).reshape(outer, n, inner), k, bool(largest),
                   out.reshape(outer, k, inner))
    return out


# -- NumPy references (the tests' oracle) ----------------------------------------------------
def _cut(x: ndarray, shape, axis: int) -> ndarray:
    # x cut down to ``shape`` along every axis but ``axis`` (PyTorch's smaller index).
    return x[tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(shape))]


def reference_gather(x, index, axis=None, keepdims=None):
    x, index = np.asarray(x), np.asarray(index)
    if axis is None:
        return x.reshape(-1)[index]
    if keepdims is not None:  # one index per reduced position
        index = np.expand_dims(index, axis) if not keepdims else index
        out = np.take_along_axis(x, index, axis)
        return out if keepdims else np.squeeze(out, axis)
    return np.take_along_axis(_cut(x, index.shape, axis), index, axis % max(x.ndim, 1))


def reference_scatter_add(g, index, like, axis=None, keepdims=None):
    like, g, index = np.asarray(like), np.asarray(g), np.asarray(index)
    out = np.zeros(like.shape, g.dtype)
    if axis is None:
        np.add.at(out.reshape(-1), index.reshape(-1), g.reshape(-1))
        return out
    if keepdims is not None and not keepdims:
        index, g = np.expand_dims(index, axis), np.expand_dims(g, axis)
    ax = axis % like.ndim
    grid = np.indices(index.shape, sparse=True)
    np.add.at(out, tuple(index if d == ax else grid[d] for d in range(like.ndim)), g)
    return out


def reference_scatter(x, index, src=None, axis=0, reduce=None, value=None):
    x, index = np.asarray(x), np.asarray(index)
    out = x.copy()
    ax = axis % max(x.ndim, 1)
    grid = np.indices(index.shape, sparse=True)
    where = tuple(index if d == ax else grid[d] for d in range(x.ndim))
    s = np.full(index.shape, value, x.dtype) if src is None else _cut(np.asarray(src),
                                                                       index.shape, -1)
    s = s[tuple(slice(0, n) for n in index.shape)]
    if reduce is None:
        for pos in np.ndindex(index.shape):  # in order: the last of repeated indices wins
            out[tuple(w[pos] if d == ax else pos[d] for d, w in enumerate(where))] = s[pos]
    elif reduce == "add":
        np.add.at(out, where, s)
    else:
        np.multiply.at(out, where, s)
    return out


def reference_topk(x, k, axis=-1, largest=True, sorted=True):  # noqa: A002 - torch's name
    x = np.asarray(x)
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    return np.take(order, np.arange(k), axis=axis).astype(np.int64)


# -- triangles ---------------------------------------------------------------------------------
@njit(cache=True)
def _triangle(x3, diagonal, upper, out3):
    for b in range(x3.shape[0]):
        for r in range(x3.shape[1]):
            for c in range(x3.shape[2]):
                keep = c - r >= diagonal if upper else c - r <= diagonal
                out3[b, r, c] = x3[b, r, c] if keep else 0


def triangle(x: ndarray, diagonal: int, upper: bool) -> ndarray:
    """``torch.triu`` (``upper``) or ``torch.tril`` of the last two dims of ``x`` (rank >= 2,
    checked): the elements on and above (below) the ``diagonal``-th diagonal, zeros
    elsewhere."""
    out = np.empty(x.shape, x.dtype)
    if out.size:
        rows, cols = x.shape[-2:]
        _triangle(np.ascontiguousarray(x).reshape(-1, rows, cols), int(diagonal), bool(upper),
                  out.reshape(-1, rows, cols))
    return out


def reference_tril(x, diagonal=0):
    return np.tril(np.asarray(x), diagonal)


def reference_triu(x, diagonal=0):
    return np.triu(np.asarray(x), diagonal)
