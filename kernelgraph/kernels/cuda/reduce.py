"""CUDA reductions (``sum mean max``) and the broadcasts that are their gradients.

A reduction over any axes is a 2-D problem: ``outer`` outputs, each combining ``inner``
elements. The kept axes and the reduced axes are each :func:`coalesced <elementwise.coalesce>`
into as few dims as possible, so the usual cases index with one multiply. Three kernels:

- *block*: one block per output (or per ``1/splits`` of one), its threads striding over the
  reduced elements, then a tree reduction in shared memory. Used when the reduced elements
  are contiguous (rows, or the whole array), so a warp reads consecutive addresses.
- *column*: a block of ``x × y`` threads takes ``x`` neighbouring outputs (a warp reads
  neighbouring addresses) and ``y`` lanes down the reduced axis for each, combined by a
  tree in shared memory. Used when the reduced elements are strided: reducing leading
  axes, as the bias gradient ``sum(g, axis=0)`` does, where one thread per output would
  leave most of the GPU idle (1024 columns are 4 blocks).
- *thread*: one thread per output (or per chunk of one), for short contiguous rows.

When there are too few outputs to fill the GPU, each output is split into ``splits``
pieces (blocks, or chunks) that write partials; a second pass reduces the partials. So a
reduction is at most two launches, and never one thread summing a large array alone. The
order of every combine depends only on the shapes and the launch sizes, so a reduction gives
the same bits run after run (no atomics).

Dtypes match :func:`kernelgraph.kernels.cpu.reduce_sum` etc.: sums accumulate in float64 or
int64 and are cast to the input dtype (bool sums to int64); max keeps the dtype and
propagates NaN (the combine is the CPU's ``maximum`` body). A mean divides in the last
pass's kernel (``divisor``): the sum rounded to the output dtype, then divided in float64
and rounded again, which is the output dtype's correctly rounded quotient (float64 has more
than twice float32's precision), the CPU's ``sum / count``.
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np
from numba import cuda

from ... import dtypes as D
from ...shapes import normalize_axes, reduced_shape
from .. import cpu
from . import core, indexing, launcher
from . import elementwise as E
from .shape import broadcast_to_shape, reshape

# Launch tuning, read at call time (the tests shrink them to exercise splitting and
# multi-block grids under the simulator).
_TARGET_BLOCKS = 4 if core.SIMULATOR else 1024  # blocks that fill a GPU (~8 per SM)
_TARGET_THREADS = 8 if core.SIMULATOR else 1 << 18  # threads that fill a GPU
_MAX_BLOCKS = 1 if core.SIMULATOR else core.MAX_BLOCKS
_BLOCK_MIN_INNER = 4 if core.SIMULATOR else 32  # fewer reduced elements: thread kernel
_PER_THREAD = 4 if core.SIMULATOR else 16  # elements a thread should reduce before a split
_SHARED = 256  # shared-memory slots: the largest block the block kernel is launched with
# The column kernel's block: _COL_X outputs x _COL_Y lanes (at most the shared tile's
# _COL_SHAPE). 32 x 8 on a GPU: a warp reads 32 neighbouring outputs' values.
_COL_SHAPE = (8, 32)
_COL_X = 4 if core.SIMULATOR else 32
_COL_Y = 2 if core.SIMULATOR else 8


@cuda.jit(device=True)
def _inner_offset(k, shape, strides):
    # One reduced dim (the usual case after coalescing): a multiply, no division.
    if len(shape) == 1:
        return k * strides[0]
    return core.offset(k, shape, strides)


@cuda.jit(device=True)
def _store(out, i, v, divisor):
    # Rounded to out's dtype first, then (a mean) divided: the CPU's sum / count.
    out[i] = v
    if divisor != 0.0:
        out[i] = out[i] / divisor


@functools.cache
def _block_kernel(combine_fn, acc_dtype: np.dtype):
    """Block-per-output tree reduction accumulating in ``acc_dtype`` (shared arrays need a
    compile-time type). Item ``j`` of ``out`` is split ``j % splits`` of output
    ``j // splits``."""
    combine = cuda.jit(device=True)(combine_fn)
    acc_t = numba.from_dtype(acc_dtype)
    offset = core.offset

    @cuda.jit
    def kernel(src, out, kshape, kstrides, rshape, rstrides, inner, splits, init, divisor):
        partial = cuda.shared.array(_SHARED, acc_t)
        tid = cuda.threadIdx.x
        nt = cuda.blockDim.x
        half = 1  # the largest power of two below nt: the tree works for any block size
        while half * 2 < nt:
            half *= 2
        # Every thread of a block runs the same items, so the syncthreads below are uniform.
        for item in range(cuda.blockIdx.x, out.size, cuda.gridDim.x):
            o = item // splits
            base = offset(o, kshape, kstrides)
            acc = init
            for k in range((item - o * splits) * nt + tid, inner, splits * nt):
                acc = combine(acc, src[base + _inner_offset(k, rshape, rstrides)])
            partial[tid] = acc
            cuda.syncthreads()
            s = half
            while s > 0:
                if tid < s and tid + s < nt:
                    partial[tid] = combine(partial[tid], partial[tid + s])
                cuda.syncthreads()
                s //= 2
            if tid == 0:
                _store(out, item, partial[0], divisor)
            cuda.syncthreads()  # partial[0] is read before the next item overwrites it

    return kernel


@functools.cache
def _column_kernel(combine_fn, acc_dtype: np.dtype):
    """Outputs in tiles of ``blockDim.x`` neighbours, ``blockDim.y`` lanes each down the
    reduced elements, a tree over the lanes in shared memory. Item ``j`` is tile
    ``j % tiles`` of chunk ``j // tiles`` (``chunk`` reduced elements; all of them when
    unsplit), written to ``out[chunk * outer + o]``: the partials are ``(splits, outer)``,
    reduced again as columns."""
    combine = cuda.jit(device=True)(combine_fn)
    acc_t = numba.from_dtype(acc_dtype)
    offset = core.offset

    @cuda.jit
    def kernel(src, out, kshape, kstrides, rshape, rstrides, outer, inner, chunk, init,
               divisor):
        partial = cuda.shared.array(_COL_SHAPE, acc_t)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        nx = cuda.blockDim.x
        ny = cuda.blockDim.y
        half = 1
        while half * 2 < ny:
            half *= 2
        tiles = (outer + nx - 1) // nx
        items = tiles * ((inner + chunk - 1) // chunk)
        for item in range(cuda.blockIdx.x, items, cuda.gridDim.x):  # uniform per block
            c = item // tiles
            o = (item - c * tiles) * nx + tx
            acc = init
            end = (c + 1) * chunk  # not min(): numba's CUDA min() does not always compile
            if end > inner:
                end = inner
            if o < outer:
                base = offset(o, kshape, kstrides)
                for k in range(c * chunk + ty, end, ny):
                    acc = combine(acc, src[base + _inner_offset(k, rshape, rstrides)])
            partial[ty, tx] = acc
            cuda.syncthreads()
            s = half
            while s > 0:
                if ty < s and ty + s < ny:
                    partial[ty, tx] = combine(partial[ty, tx], partial[ty + s, tx])
                cuda.syncthreads()
                s //= 2
            if ty == 0 and o < outer:
                _store(out, c * outer + o, partial[0, tx], divisor)
            cuda.syncthreads()

    return kernel


@functools.cache
def _thread_kernel(combine_fn):
    """Thread-per-output reduction: item ``j`` is chunk ``j // outer`` of output
    ``j % outer`` (neighbouring threads take neighbouring outputs), written to
    ``out[o * splits + chunk]``."""
    combine = cuda.jit(device=True)(combine_fn)
    offset = core.offset

    @cuda.jit
    def kernel(src, out, kshape, kstrides, rshape, rstrides, outer, inner, chunk, init,
               divisor):
        splits = out.size // outer
        start, step = cuda.grid(1), cuda.gridsize(1)
        for item in range(start, out.size, step):
            o = item % outer
            c = item // outer
            base = offset(o, kshape, kstrides)
            acc = init
            end = (c + 1) * chunk
            if end > inner:
                end = inner
            for k in range(c * chunk, end):
                acc = combine(acc, src[base + _inner_offset(k, rshape, rstrides)])
            _store(out, o * splits + c, acc, divisor)

    return kernel


def _dims(shape, strides):
    # Kernels take tuples; an empty group (nothing kept, or nothing reduced) is one element.
    return (shape or (1,)), (strides or (0,))


def _splits(inner, outer, per, target) -> int:
    """How many pieces to cut each output's reduction into: enough to give the GPU
    ``target`` blocks/threads, but no piece under ``per`` elements."""
    want = -(-target // outer)
    return max(1, min(want, -(-inner // per)))


def reduce_plan(kept, red, outer: int, inner: int, split: bool = True) -> tuple:
    """(kernel kind, blocks, threads, splits) for reducing ``outer`` outputs of ``inner``
    elements each (``kept``/``red``: the coalesced (shape, strides) of the kept and the
    reduced axes), as :func:`_reduce_into` launches its first pass. ``kind`` is ``"block"``,
    ``"column"`` or ``"thread"``; ``splits > 1`` means a second pass over the partials.

    >>> reduce_plan(((1024,), (1,)), ((512,), (1024,)), 1024, 512)[0]  # a bias gradient
    'column'
    """
    rstrides = _dims(*red)[1]
    if inner >= _BLOCK_MIN_INNER and rstrides[-1] == 1:
        threads = min(core.THREADS, _SHARED, inner if core.SIMULATOR
                      else 1 << (inner - 1).bit_length())
        splits = _splits(inner, outer, threads * _PER_THREAD, _TARGET_BLOCKS) if split else 1
        return "block", min(outer * splits, _MAX_BLOCKS), threads, splits
    if rstrides[-1] != 1 and inner >= _COL_Y:
        nx, ny = min(_COL_X, _COL_SHAPE[1]), min(_COL_Y, _COL_SHAPE[0])
        tiles = -(-outer // nx)
        splits = _splits(inner, tiles, ny * _PER_THREAD, _TARGET_BLOCKS) if split else 1
        splits = -(-inner // -(-inner // splits))  # no empty chunk at the end
        return "column", min(tiles * splits, _MAX_BLOCKS), (nx, ny), splits
    splits = _splits(inner, outer, _PER_THREAD, _TARGET_THREADS) if split else 1
    splits = -(-inner // -(-inner // splits))
    blocks, threads = core.launch(outer * splits)
    return "thread", blocks, threads, splits


def _reduce_into(src, out, kept, red, outer, inner, combine_fn, acc_dtype, init, split=True,
                 divisor=0.0):
    """Reduce flat ``src`` into flat ``out`` (``outer`` items). ``kept``/``red`` are the
    coalesced (shape, strides) of the kept and the reduced axes. With ``split``, outputs
    too few to fill the GPU are split into partials, reduced by a second (unsplit) pass.
    A nonzero ``divisor`` divides each output (a mean) in the last pass."""
    (kshape, kstrides), (rshape, rstrides) = _dims(*kept), _dims(*red)
    kind, blocks, threads, splits = reduce_plan(kept, red, outer, inner, split)
    target = out if splits == 1 else core.empty((outer * splits,), acc_dtype)
    last = divisor if splits == 1 else 0.0
    if kind == "block":
        launcher.launch(_block_kernel(combine_fn, acc_dtype), blocks, threads, src, target,
                        kshape, kstrides, rshape, rstrides, inner, splits, init, last)
        again = ((outer,), (splits,)), ((splits,), (1,))  # rows of `splits` partials
    else:
        chunk = -(-inner // splits)
        kernel = (_column_kernel(combine_fn, acc_dtype) if kind == "column"
                  else _thread_kernel(combine_fn))
        launcher.launch(kernel, blocks, threads, src, target, kshape, kstrides, rshape,
                        rstrides, outer, inner, chunk, init, last)
        again = (((outer,), (1,)), ((splits,), (outer,))) if kind == "column" else \
            (((outer,), (splits,)), ((splits,), (1,)))
    if splits > 1:
        _reduce_into(target, out, *again, outer, splits, combine_fn, acc_dtype, init,
                     split=False, divisor=divisor)


def _reduce(x, axis, keepdims, combine_fn, acc_dtype, out_dtype, init, divisor=0.0):
    """``x`` reduced over ``axis`` with ``combine_fn`` (identity ``init``), accumulating in
    ``acc_dtype``, as a new ``out_dtype`` array (each output divided by a nonzero
    ``divisor``)."""
    E.check_device_array(x)
    axes = normalize_axes(axis, x.ndim)
    out = core.empty(reduced_shape(x.shape, axes, keepdims), out_dtype)
    if out.size == 0:
        return out
    strides = core.contiguous_strides(x.shape)
    groups = []
    for reduced in (False, True):
        dims = [d for d in range(x.ndim) if (d in axes) == reduced]
        shape, (st,) = E.coalesce([x.shape[d] for d in dims], [[strides[d] for d in dims]])
        groups.append((shape, st))
    inner = math.prod(groups[1][0])
    if inner == 0:  # nothing to combine: every output is the identity
        return core.full(out.shape, init, out_dtype)
    _reduce_into(core.flat(x), core.flat(out), groups[0], groups[1], out.size, inner,
                 combine_fn, np.dtype(acc_dtype), np.dtype(acc_dtype).type(init),
                 divisor=float(divisor))
    return out


def reduce_sum(x, axis=None, keepdims=False):
    """Sum over ``axis`` (accumulating in float64/int64, as on the CPU; bools and ints sum
    to int64, as the op's dtype rule says)."""
    return _sum(x, axis, keepdims, D.sum_dtype(x.dtype))


def _sum(x, axis, keepdims, out_dtype, divisor=0.0):
    acc = D.float64 if x.dtype.kind == "f" else D.int64
    return _reduce(x, axis, keepdims, cpu._add, acc, out_dtype, 0, divisor)


def reduce_mean(x, axis=None, keepdims=False):
    """Mean over ``axis``: the sum in x's dtype divided by the count in x's dtype (NaN over
    an empty axis); floating inputs only (the op refuses others first)."""
    count = math.prod(x.shape[a] for a in normalize_axes(axis, x.ndim))
    if not count:
        return core.full(reduced_shape(x.shape, normalize_axes(axis, x.ndim), keepdims),
                         np.nan, D.sum_dtype(x.dtype))
    # The count rounded to x's dtype first, as np.divide(total, count, dtype=x.dtype) does.
    return _sum(x, axis, keepdims, D.sum_dtype(x.dtype), x.dtype.type(count))


def _lowest(dt: np.dtype):
    if dt.kind == "f":
        return -np.inf
    return False if dt == D.bool_ else np.iinfo(dt).min


def reduce_max(x, axis=None, keepdims=False):
    """Maximum over ``axis``; NaN if any NaN, as on the CPU (the op refuses to reduce an
    empty dimension first; one kept gives an empty result)."""
    return _reduce(x, axis, keepdims, cpu._maximum, x.dtype, x.dtype, _lowest(x.dtype))


# -- the broadcasts that undo reductions -----------------------------------------------------
@cuda.jit
def _broadcast_divide(src, out, shape, strides, count):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.size, step):
        out[i] = src[core.offset(i, shape, strides)] / count


def broadcast_reduced(g, like, axis=None, keepdims=False, mean=False):
    """Spread reduced ``g`` back over ``like``'s shape (divided by the count if ``mean``)."""
    axes = normalize_axes(axis, like.ndim)
    kept = reduced_shape(like.shape, axes, True)
    g = reshape(g, kept)  # the CPU's np.reshape, with its errors
    if not mean:
        return broadcast_to_shape(g, like.shape)
    if g.dtype not in D.FLOATS:  # np.divide(..., dtype=int) has no loop on the CPU either
        raise TypeError("No loop matching the specified signature and casting was found for "
                        "ufunc divide")
    count = math.prod(like.shape[a] for a in axes) or 1
    out = core.empty(like.shape, g.dtype)
    if out.size:
        shape, (strides,) = E.coalesce(out.shape, [core.broadcast_strides(kept, out.shape)])
        shape, strides = _dims(shape, strides)
        blocks, threads = core.launch(out.size)
        launcher.launch(_broadcast_divide, blocks, threads, core.flat(g), core.flat(out),
                        shape, strides, g.dtype.type(count))
    return out


def sum_to_like(g, like):
    """Sum ``g`` over the axes broadcasting added to reach ``like``'s shape."""
    shape = E.shape_of(like)
    if tuple(g.shape) == shape:
        return g
    lead = g.ndim - len(shape)
    if lead < 0:
        raise ValueError(f"cannot sum a gradient of shape {tuple(g.shape)} to shape {shape}")
    axes = list(range(lead)) + [lead + i for i, d in enumerate(shape)
                                if d == 1 and g.shape[lead + i] != 1]
    # An integer gradient keeps its dtype (int32 stays int32, as on the CPU kernel).
    dt = D.int64 if g.dtype == D.bool_ else g.dtype
    return reshape(_sum(g, tuple(axes), True, dt) if axes else g, shape)


def broadcast_like(x, like):
    """x broadcast to like's shape (a copy)."""
    return broadcast_to_shape(x, E.shape_of(like))



# -- issue 21: min, prod, all/any, argmin and the value at an index (torch.max(x, dim)) -----
def _highest(dt: np.dtype):
    if dt.kind == "f":
        return np.inf
    return True if dt == D.bool_ else np.iinfo(dt).max


def reduce_min(x, axis=None, keepdims=False):
    """Minimum over ``axis``; NaN if any NaN, as on the CPU."""
    return _reduce(x, axis, keepdims, cpu._minimum, x.dtype, x.dtype, _highest(x.dtype))


def reduce_prod(x, axis=None, keepdims=False):
    """Product over ``axis``, accumulating in float64 or int64 (integers and bools give
    int64, as on the CPU); 1 over an empty axis."""
    acc = D.float64 if x.dtype.kind == "f" else D.int64
    out = x.dtype if x.dtype.kind == "f" else D.int64
    return _reduce(x, axis, keepdims, cpu._mul, acc, out, 1)


_nonzero = E.binary(cpu._ne, D.same, D.bool_)


def reduce_all(x, axis=None, keepdims=False):
    """Whether every element over ``axis`` is nonzero (True over an empty axis)."""
    b = x if x.dtype == D.bool_ else _nonzero(x, 0)
    return _reduce(b, axis, keepdims, cpu._minimum, D.bool_, D.bool_, True)


def reduce_any(x, axis=None, keepdims=False):
    """Whether any element over ``axis`` is nonzero (False over an empty axis)."""
    b = x if x.dtype == D.bool_ else _nonzero(x, 0)
    return _reduce(b, axis, keepdims, cpu._maximum, D.bool_, D.bool_, False)


_negate = E.unary(cpu._neg, D.same)
_invert = E.unary(cpu._invert, D.same)


def argmin(x, axis=None, keepdims=False):
    """The argmin as the argmax of an order-reversed copy: ``-x`` for floats (exact, NaN
    stays NaN), ``~x`` for integers (no overflow at the lowest value)."""
    flipped = _negate(x) if x.dtype.kind == "f" else _invert(x)
    return indexing.argmax(flipped, axis, keepdims)


@cuda.jit
def _take(x, idx, out, n, inner):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for r in range(start, out.size, step):
        o = r // inner
        j = idx[r]
        if 0 <= j < n:  # the op checked the indices; never read outside x regardless
            out[r] = x[(o * n + j) * inner + (r - o * inner)]


@cuda.jit
def _put(g, idx, out, n, inner):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for r in range(start, g.size, step):
        o = r // inner
        j = idx[r]
        if 0 <= j < n:
            out[(o * n + j) * inner + (r - o * inner)] = g[r]


def _outer_inner(shape, axis):
    return math.prod(shape[:axis]), math.prod(shape[axis + 1:])


def take_along_axis(x, indices, axis, keepdims):
    """``x``'s element at ``indices`` along ``axis`` (normalized), as on the CPU."""
    _, inner = _outer_inner(x.shape, axis)
    out = core.empty(reduced_shape(x.shape, (axis,), keepdims), x.dtype)
    if out.size:
        blocks, threads = core.launch(out.size)
        launcher.launch(_take, blocks, threads, core.flat(x), core.flat(indices),
                        core.flat(out), x.shape[axis], inner)
    return out


def put_along_axis(g, indices, shape, axis):
    """Zeros of ``shape`` with ``g`` put at ``indices`` along ``axis``."""
    _, inner = _outer_inner(shape, axis)
    out = core.full(shape, 0, g.dtype)
    if g.size:
        blocks, threads = core.launch(g.size)
        launcher.launch(_put, blocks, threads, core.flat(g), core.flat(indices),
                        core.flat(out), shape[axis], inner)
    return out


@cuda.jit
def _cumsum(x, out, n, inner, zero):
    # One thread per line along the axis, accumulating in zero's type (float64 or int64).
    start, step = cuda.grid(1), cuda.gridsize(1)
    for r in range(start, out.size // n, step):
        o = r // inner
        base = o * n * inner + (r - o * inner)
        s = zero
        for j in range(n):
            s += x[base + j * inner]
            out[base + j * inner] = s


def cumsum(x, axis):
    """Running sums along ``axis`` (normalized), as on the CPU (floats keep their dtype,
    integers and bools give int64)."""
    E.check_device_array(x)
    n = x.shape[axis] if x.ndim else 1
    _, inner = _outer_inner(x.shape, axis) if x.ndim else (1, 1)
    out = core.empty(x.shape, x.dtype if x.dtype.kind == "f" else D.int64)
    if out.size:
        zero = np.float64(0) if x.dtype.kind == "f" else np.int64(0)
        blocks, threads = core.launch(out.size // n)
        launcher.launch(_cumsum, blocks, threads, core.flat(x), core.flat(out), n, inner, zero)
    return out
