"""CUDA forwards of PyTorch's index-along-a-dim ops (``torch.gather``, ``scatter``,
``scatter_add``) and of ``topk``'s indices; the CPU side is :mod:`kernelgraph.kernels.
torch_select`, whose checks (PyTorch's words) these run first.

One thread per index element, in a grid-stride loop. A plain scatter with repeated indices
races, as PyTorch's own CUDA scatter does (one of the writes wins); ``add`` uses atomics; a
``multiply`` has no atomic, so one thread applies it in index order. ``topk`` ranks each
element against its row (one thread per element): its rank is the number of elements that
beat it, ties broken by index, which is the CPU's stable order.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import torch_select as K
from . import core, launcher


@cuda.jit(device=True)
def _offsets(i, ishape, axis, picked, strides_a, strides_b):
    rem = i
    off_a = 0
    off_b = 0
    for d in range(len(ishape) - 1, -1, -1):
        c = rem % ishape[d]
        rem //= ishape[d]
        off_b += c * strides_b[d]
        off_a += (picked if d == axis else c) * strides_a[d]
    return off_a, off_b


@cuda.jit
def _gather(x, xstrides, index, ishape, axis, out):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, index.size, step):
        off, _ = _offsets(i, ishape, axis, index[i], xstrides, xstrides)
        out[i] = x[off]


@cuda.jit
def _scatter(out, ostrides, index, ishape, axis, src, sstrides, mode):
    start, step = cuda.grid(1), cuda.gridsize(1)
    if mode == 2:  # multiply: no atomic; thread 0 alone, in index order
        if start == 0:
            for i in range(index.size):
                off, soff = _offsets(i, ishape, axis, index[i], ostrides, sstrides)
                out[off] *= src[soff]
        return
    for i in range(start, index.size, step):
        off, soff = _offsets(i, ishape, axis, index[i], ostrides, sstrides)
        if mode == 0:
            out[off] = src[soff]
        else:
            cuda.atomic.add(out, off, src[soff])


def _host_index(index, size, axis):
    # The values are checked on the host, with the CPU's words; the kernel then reads the
    # checked int64 copy.
    flat = K.check_index(index.copy_to_host(), size, axis)
    return core.to_device(flat)


def gather(x, index, axis: int):
    """CUDA ``torch.gather(x, axis, index)`` (``axis`` normalized, shapes checked)."""
    idx = _host_index(index, x.shape[axis] if x.ndim else 1, axis)
    out = core.empty(index.shape, x.dtype)
    if out.size:
        blocks, threads = core.launch(out.size)
        launcher.launch(_gather, blocks, threads, core.flat(x),
                        core.contiguous_strides(x.shape or (1,)), idx,
                        tuple(index.shape or (1,)), axis, core.flat(out))
    return out


def scatter(x, index, src, axis: int, mode: int):
    """CUDA scatter: a copy of ``x`` with ``src`` (a device array, or one number) written,
    added (mode 1) or multiplied (mode 2) at ``index`` along ``axis``."""
    idx = _host_index(index, x.shape[axis] if x.ndim else 1, axis)
    out = core.copy(x)
    if idx.size:
        if np.ndim(src) == 0 and not core.is_device_array(src):
            s, sstrides = core.full((1,), src, x.dtype), (0,) * max(len(index.shape), 1)
        else:
            s = src if src.dtype == x.dtype else core.astype(src, x.dtype)
            sstrides = core.contiguous_strides(s.shape)
        blocks, threads = core.launch(idx.size)
        launcher.launch(_scatter, blocks, threads, core.flat(out),
                        core.contiguous_strides(out.shape or (1,)), idx,
                        tuple(index.shape or (1,)), axis, core.flat(s), sstrides, mode)
    return out


@cuda.jit(device=True)
def _beats(w, v, j, i, largest):
    # Whether element j (value w) comes before element i (value v): NaN is the largest.
    w_nan, v_nan = w != w, v != v
    if w_nan or v_nan:
        if w_nan and v_nan:
            return j < i
        return w_nan if largest else v_nan
    if w == v:
        return j < i
    return w > v if largest else w < v


@cuda.jit
def _topk(x, n, inner, k, largest, out):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for e in range(start, x.size, step):
        o = e // (n * inner)
        i = (e // inner) % n
        q = e % inner
        v = x[e]
        rank = 0
        for j in range(n):
            if _beats(x[(o * n + j) * inner + q], v, j, i, largest):
                rank += 1
        if rank < k:
            out[(o * k + rank) * inner + q] = i


def topk_indices(x, k: int, axis: int, largest: bool):
    """CUDA indices of the ``k`` largest (or smallest) elements along ``axis``."""
    n = x.shape[axis] if x.ndim else 1
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:] if x.ndim else ()
    out = core.empty(shape, np.int64)
    if out.size:
        inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64)) if x.ndim else 1
        blocks, threads = core.launch(x.size)
        launcher.launch(_topk, blocks, threads, core.flat(x), n, inner, k, bool(largest),
                        core.flat(out))
    return out


@cuda.jit
def _triangle(x, rows, cols, diagonal, upper, out):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, x.size, step):
        c = i % cols
        r = (i // cols) % rows
        keep = c - r >= diagonal if upper else c - r <= diagonal
        out[i] = x[i] if keep else 0


def triangle(x, diagonal: int, upper: bool):
    """CUDA ``triu`` (``upper``) / ``tril`` of the last two dims (rank >= 2, checked)."""
    out = core.empty(x.shape, x.dtype)
    if out.size:
        rows, cols = tuple(x.shape)[-2:]  # (the simulator's shapes take no negative index)
        blocks, threads = core.launch(out.size)
        launcher.launch(_triangle, blocks, threads, core.flat(x), rows, cols, int(diagonal),
                        bool(upper), core.flat(out))
    return out
