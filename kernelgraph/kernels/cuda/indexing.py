"""CUDA forwards of the indexing ops: concat/stack/split, basic indexing and their gradients,
gather and its accumulating scatter, pad, one_hot, clip and argmax.

The ops (:mod:`kernelgraph.ops.indexing`) check their arguments first, with the CPU side's
rules (the same errors, word for word), and hand these kernels normalized ones: an axis in
range, a decoded index, (before, after) pairs. Most ops are data movement, so they reduce
to two shared kernels:

- a *view* (getitem, split_piece, concat_slice) is :func:`core.strided_copy` with the
  strides and base offset that the index selects, computed on the host by :func:`view`;
- a *placement* (concat, stack, pad and the zeros-plus-piece gradients) is
  :func:`core.strided_write` of each input at its base offset in the output.

Index *values* (gather, gather_grad, one_hot) live on the device; :func:`check_indices`
checks them there and reads back one int64 (the first bad position), so a bad index raises
the CPU side's IndexError without copying the indices to the host.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int64

from .. import indexing as K
from . import core, launcher

# Shared-array sizes must be compile-time constants: a module global is one, while
# ``core.THREADS`` read inside a kernel is typed as a plain int64 (the simulator accepts
# both, a GPU build only the first).
_BLOCK = core.THREADS


# -- views and placements --------------------------------------------------------------------
def view(shape, index) -> tuple:
    """``(shape, element strides, base offset)`` of ``x[index]`` for a C-contiguous ``x`` of
    ``shape``, where ``index`` is a tuple of in-range ints, slices, None and at most one
    Ellipsis (a basic index, already checked): the arguments of :func:`core.strided_copy`
    (read the view) and :func:`core.strided_write` (write into it)."""
    shape = tuple(shape)
    own = core.contiguous_strides(shape)
    used = sum(1 for it in index if it is not None and it is not Ellipsis)
    if any(it is Ellipsis for it in index):
        k = next(i for i, it in enumerate(index) if it is Ellipsis)
        index = index[:k] + (slice(None),) * (len(shape) - used) + index[k + 1:]
    out_shape, strides, base, axis = [], [], 0, 0
    for it in index:
        if it is None:  # a new axis of length 1: its stride never matters
            out_shape.append(1)
            strides.append(0)
            continue
        d, s = shape[axis], own[axis]
        if isinstance(it, slice):
            start, stop, step = it.indices(d)  # NumPy's clamping, negative steps included
            out_shape.append(len(range(start, stop, step)))
            strides.append(step * s)
            base += start * s
        else:
            base += (int(it) % d) * s
        axis += 1
    return tuple(out_shape) + shape[axis:], tuple(strides) + own[axis:], base


def _assignable(g, shape):
    """``g`` as a C-contiguous array of ``shape``, broadcast as NumPy's ``out[idx] = g`` does
    (the CPU gradients assign that way), or the ValueError NumPy would raise."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    gs = tuple(g.shape)
    while len(gs) > len(shape) and gs[0] == 1:  # NumPy drops extra leading 1s of a value
        gs = gs[1:]
    try:
        fits = len(gs) <= len(shape) and np.broadcast_shapes(gs, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"could not broadcast input array from shape {_np_shape(gs)} into "
                         f"shape {_np_shape(shape)}")
    return core.strided_copy(g, shape, core.broadcast_strides(gs, shape))


def _np_shape(shape) -> str:
    """A shape as NumPy's error messages print it: ``(2,3)``, ``(3,)``, ``()``."""
    return "(" + ",".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def zeros_with(g, shape, index):
    """Zeros of ``shape`` (g's dtype) with ``g`` written into ``[index]``: the gradient of a
    view, as the CPU's ``out = np.zeros(...); out[index] = g``."""
    out = core.full(shape, 0, g.dtype)
    piece_shape, strides, base = view(shape, index)
    return core.strided_write(_assignable(g, piece_shape), out, strides, base)


def read(x, index):
    """A C-contiguous copy of the basic-index view ``x[index]`` (slices, ints, None, ...)."""
    shape, strides, base = view(x.shape, index)
    return core.strided_copy(x, shape, strides, base)


# -- concat / stack / split ------------------------------------------------------------------
def concat(arrays, ax: int):
    """``arrays`` (one dtype and rank, checked) joined along axis ``ax`` (0 <= ax < rank):
    each is written at its offset (one launch each)."""
    first = tuple(arrays[0].shape)
    shape = first[:ax] + (sum(a.shape[ax] for a in arrays),) + first[ax + 1:]
    out = core.empty(shape, arrays[0].dtype)
    strides = core.contiguous_strides(shape)
    start = 0
    for a in arrays:
        core.strided_write(a, out, strides, start * strides[ax])
        start += a.shape[ax]
    return out


def concat_slice(g, *tensors, index, axis):
    """The CUDA forward of ``concat_slice``: the piece of ``g`` along ``axis`` that input
    ``index`` had."""
    ax = axis % g.ndim
    start = sum(t.shape[ax] for t in tensors[:index])
    return read(g, (slice(None),) * ax + (slice(start, start + tensors[index].shape[ax]),))


def stack(arrays, ax: int):
    """``arrays`` (one shape and dtype, checked) stacked along a new axis ``ax`` (0 <= ax <=
    rank): input ``i`` is written at entry ``i`` of it."""
    first = tuple(arrays[0].shape)
    shape = first[:ax] + (len(arrays),) + first[ax:]
    out = core.empty(shape, arrays[0].dtype)
    strides = core.contiguous_strides(shape)
    inner = strides[:ax] + strides[ax + 1:]  # an input's dims, skipping the new axis
    for i, a in enumerate(arrays):
        core.strided_write(a, out, inner, i * strides[ax])
    return out


# -- index checks ----------------------------------------------------------------------------
@cuda.jit
def _first_bad(idx, size, first):
    # Each bad position competes for the lowest one, so the error names the same index as the
    # CPU's check (the first bad one in C order), whatever order the threads run in.
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, idx.size, step):
        v = idx[i]
        if v < 0 or v >= size:
            cuda.atomic.min(first, 0, int64(i))


def check_indices(indices, size: int, what: str, axis: int = 0):
    """The flat (1-D) view of device ``indices`` (empty ones come back as they are), all in
    ``[0, size)``, or the IndexError of the CPU's
    :func:`kernelgraph.kernels.indexing.check_indices`. The check runs on the device; only
    the first bad position (and then its value) comes back to the host."""
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{what}: indices must be integers, got {indices.dtype.name}")
    if not indices.size:
        return indices  # nothing to check (and core.flat cannot view an empty array)
    idx = core.flat(indices)
    first = core.full((1,), indices.size, np.int64)
    blocks, threads = core.launch(indices.size)
    launcher.launch(_first_bad, blocks, threads, idx, size, first)
    launcher.not_replayable(f"{what}: checks its indices on the host")
    pos = int(first.copy_to_host()[0])  # the sync that lets a bad index raise here
    if pos < indices.size:
        bad = int(idx[pos:pos + 1].copy_to_host()[0])
        raise IndexError(f"{what}: index {bad} is out of range for axis {axis} with size "
                         f"{size} (expected 0 <= index < {size})")
    return idx


# -- gather / scatter ------------------------------------------------------------------------
# Both see their arrays as (outer, n, inner) blocks around the gathered axis, with the m
# indices replacing n; consecutive threads take consecutive ``inner`` entries (coalesced).
@cuda.jit
def _gather(params, idx, out, n, m, inner):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.size, step):
        row = i // inner
        out[i] = params[((row // m) * n + idx[row % m]) * inner + i % inner]


@cuda.jit
def _scatter_add(g, idx, out, n, m, inner):
    # Repeated indices add into one element from many threads: atomics keep every add.
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, g.size, step):
        row = i // inner
        cuda.atomic.add(out, ((row // m) * n + idx[row % m]) * inner + i % inner, g[i])


@cuda.jit
def _scatter_or(g, idx, out, n, m, inner):
    # bool has no atomic add; the CPU's ``+=`` on bools is an OR, and racing writes of True
    # agree, so plain stores are exact.
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, g.size, step):
        if g[i]:
            row = i // inner
            out[((row // m) * n + idx[row % m]) * inner + i % inner] = True


def gather(params, indices, ax: int):
    """Slices of ``params`` at integer ``indices`` along axis ``ax`` (0 <= ax < rank)."""
    n = params.shape[ax]
    idx = check_indices(indices, n, "gather", ax)
    out = core.empty(params.shape[:ax] + indices.shape + params.shape[ax + 1:], params.dtype)
    if out.size:
        _, inner = K._split3(params.shape, ax)
        blocks, threads = core.launch(out.size)
        launcher.launch(_gather, blocks, threads, core.flat(params), idx, core.flat(out), n,
                        idx.size, inner)
    return out


def gather_grad(g, indices, like, axis=0):
    """CUDA ``gather_grad``: zeros of like's shape with g's slices added at ``indices``
    (repeats accumulate; float sums may round in any order, as atomics land)."""
    shape = tuple(like.shape)
    ax = axis % len(shape)
    n = shape[ax]
    idx = check_indices(indices, n, "scatter_add", ax)
    expected = shape[:ax] + tuple(indices.shape) + shape[ax + 1:]
    if g.shape != expected:
        raise ValueError(f"scatter_add: gradient of shape {g.shape}, expected {expected}")
    out = core.full(shape, 0, g.dtype)
    if g.size:
        _, inner = K._split3(shape, ax)
        blocks, threads = core.launch(g.size)
        kernel = _scatter_or if g.dtype == np.bool_ else _scatter_add
        launcher.launch(kernel, blocks, threads, core.flat(g), idx, core.flat(out), n, idx.size,
                        inner)
    return out


# -- pad, one_hot, clip ----------------------------------------------------------------------
def pad(x, shape, pairs, value=0):
    """A ``value``-filled array of ``shape`` (x's padded by the (before, after) ``pairs``)
    with ``x`` written at its ``before`` offsets."""
    out = core.full(shape, value, x.dtype)
    strides = core.contiguous_strides(shape)
    base = sum(b * s for (b, _), s in zip(pairs, strides))
    return core.strided_write(x, out, strides, base)


@cuda.jit
def _one_hot(idx, out, depth):
    # One pass over the output (no zero fill first): entry (r, c) is 1 where c == idx[r].
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.size, step):
        out[i] = 1 if idx[i // depth] == i % depth else 0


def one_hot(indices, depth: int, dtype):
    """A 1 (of ``dtype``) at each index along a new last axis of size ``depth``."""
    idx = check_indices(indices, depth, "one_hot", -1)
    out = core.empty(tuple(indices.shape) + (depth,), dtype)
    if out.size:
        blocks, threads = core.launch(out.size)
        launcher.launch(_one_hot, blocks, threads, idx, core.flat(out), depth)
    return out


@cuda.jit
def _clip(x, lo, hi, has_lo, has_hi, out):
    # The CPU kernel's comparisons: NaN stays NaN, a NaN bound gives NaN.
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, x.size, step):
        v = x[i]
        if has_lo and (v < lo or lo != lo):
            v = lo
        if has_hi and (v > hi or hi != hi):
            v = hi
        out[i] = v


def clip(x, min=None, max=None):  # noqa: A002 - the CPU forward's (torch.clamp's) names
    """x limited to ``[min, max]`` (either may be None; Python numbers); ``x`` already has
    the dtype the op promoted it and the bounds to."""
    cast = x.dtype.type  # bounds in x's dtype, converted exactly as the CPU forward does
    zero = cast(0)
    out = core.empty(x.shape, x.dtype)
    if out.size:
        blocks, threads = core.launch(out.size)
        launcher.launch(_clip, blocks, threads, core.flat(x),
                        zero if min is None else cast(min), zero if max is None else cast(max),
                        min is not None, max is not None, core.flat(out))
    return out


# -- argmax ----------------------------------------------------------------------------------
# x is seen as (outer, n, inner) around the reduced axis: output r = (o, k) reduces the n
# elements at ``base + j * inner`` with base = o * n * inner + k.
@cuda.jit(device=True)
def _row_scan(x, base, inner, first, stop, step):
    """The index among ``first, first + step, ... < stop`` of the first NaN, else of the
    first maximum (NumPy's argmax rule); ``first`` must be < stop."""
    best = first
    v = x[base + first * inner]
    if v == v:
        for j in range(first + step, stop, step):
            w = x[base + j * inner]
            if w != w:  # NaN wins, as in NumPy
                return j
            if w > v:
                v = w
                best = j
    return best


@cuda.jit(device=True)
def _pick(x, base, inner, a, b):
    """The winner of two candidate indices (-1: none) under NumPy's rule, whichever order
    they come in: a NaN beats a number, a larger value beats a smaller, ties go to the lower
    index. So a tree reduction of per-thread winners finds the row's winner."""
    if a < 0:
        return b
    if b < 0:
        return a
    va = x[base + a * inner]
    vb = x[base + b * inner]
    a_nan = va != va
    b_nan = vb != vb
    if a_nan != b_nan:
        return a if a_nan else b
    if not a_nan:
        if va > vb:
            return a
        if vb > va:
            return b
    return a if a < b else b


@cuda.jit
def _argmax_by_thread(x, out, n, inner):
    # Short rows: one thread per output.
    start, step = cuda.grid(1), cuda.gridsize(1)
    for r in range(start, out.size, step):
        out[r] = _row_scan(x, (r // inner) * n * inner + r % inner, inner, 0, n, 1)


@cuda.jit
def _argmax_by_block(x, out, n, inner):
    # Long rows: one block per output; each thread scans a strided share of the row, then a
    # shared-memory tree (halving, correct for any block size) combines the candidates. Only
    # indices are kept in shared memory; _pick rereads their values (any dtype, no rounding).
    best = cuda.shared.array(_BLOCK, int64)
    tid, width = cuda.threadIdx.x, cuda.blockDim.x
    for r in range(cuda.blockIdx.x, out.size, cuda.gridDim.x):
        base = (r // inner) * n * inner + r % inner
        best[tid] = _row_scan(x, base, inner, tid, n, width) if tid < n else -1
        cuda.syncthreads()
        m = width
        while m > 1:
            half = (m + 1) // 2
            if tid < m - half:
                best[tid] = _pick(x, base, inner, best[tid], best[tid + half])
            cuda.syncthreads()
            m = half
        if tid == 0:
            out[r] = best[0]
        cuda.syncthreads()  # best[0] is read before the next row overwrites it


def argmax(x, axis=None, keepdims=False):
    """int64 index of the first maximum (a NaN, if any: the first NaN) along ``axis`` (None:
    of the flattened tensor; else 0 <= axis < rank)."""
    ax = axis
    if (x.size if ax is None else x.shape[ax]) == 0:
        raise ValueError(f"argmax: cannot take the argmax of an empty axis (shape {x.shape})")
    if ax is None:
        n, inner = x.size, 1
        shape = (1,) * x.ndim if keepdims else ()
    else:
        n, (_, inner) = x.shape[ax], K._split3(x.shape, ax)
        shape = x.shape[:ax] + ((1,) if keepdims else ()) + x.shape[ax + 1:]
    out = core.empty(shape, np.int64)
    rows = out.size
    if not rows:
        return out
    if n >= core.THREADS:  # a row fills a block: share it out, don't leave it to one thread
        _, threads = core.launch(n)
        blocks, _ = core.launch(rows * threads, threads)
        launcher.launch(_argmax_by_block, blocks, threads, core.flat(x), core.flat(out), n, inner)
    else:
        blocks, threads = core.launch(rows)
        launcher.launch(_argmax_by_thread, blocks, threads, core.flat(x), core.flat(out), n, inner)
    return out

