"""CUDA softmax, log_softmax and sparse softmax cross-entropy (forward and gradient).

Row reductions go to *groups* of threads: a block is split into groups of ``group`` threads
(a power of two, about the row length), one group per row, which reduce their partial
max/sum in shared memory (:func:`group_sum`, :func:`group_max`). :func:`row_launch` gives a
block as few rows as keep the whole GPU busy (64 rows of 10 classes: 32 blocks of a warp,
not 4 of 256 threads), a long row a block of its own, and a few long rows groups of up to
:data:`ROW_SLOTS` threads. A softmax over an axis that is not the last one runs one
thread per (outer, inner) column instead, looping down the axis: neighbouring threads read
neighbouring addresses, so nothing is transposed and every load is coalesced.

Sums accumulate in float64 and the max stays in the input dtype, as the CPU kernels do, so
the results agree with them to a rounding or two. ``float(v)`` marks where numba computes in
float64 (float32 meeting a float64): the simulator follows NumPy's rules, where float32 with a
Python float stays float32, and would round differently without it.
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np
from numba import cuda

from ... import dtypes as D
from ...shapes import axis_arg, normalize_axes
from ..nn import _check_xent, no_rows
from . import core, launcher

# Threads of a row-reduction block (a power of two). The simulator pays per thread.
BLOCK = 8 if core.SIMULATOR else 256
# Shared slots of the softmax and cross-entropy kernels: the largest group they take, for
# a few long rows (a power of two, at least BLOCK).
ROW_SLOTS = 16 if core.SIMULATOR else 1024
# Blocks a row launch aims for (about two per SM), and the fewest threads worth a block
# (a warp). Read at call time: the tests change them.
_TARGET_BLOCKS = 3 if core.SIMULATOR else 264
_WARP = 4 if core.SIMULATOR else 32
_PER_LANE = 4  # a group wider than BLOCK only when each thread still reads this many


# -- group reductions (shared with conv.py's global average pooling) -------------------------
@cuda.jit(device=True)
def _group_reduce(buf, t, lane, group, v, is_max):
    buf[t] = v
    cuda.syncthreads()
    s = group // 2
    while s > 0:
        if lane < s:
            other = buf[t + s]
            if is_max:
                if other > buf[t]:
                    buf[t] = other
            else:
                buf[t] += other
        cuda.syncthreads()
        s //= 2
    total = buf[t - lane]
    cuda.syncthreads()  # every thread has read the result before buf is reused
    return total


@cuda.jit(device=True)
def group_sum(buf, t, lane, group, v):
    """The sum of ``v`` over the ``group`` threads (a power of two) of thread ``t``'s group,
    ``lane`` its index in the group, through ``buf``, a shared array of one slot per thread.
    Every thread of the block must call it (it synchronises the block)."""
    return _group_reduce(buf, t, lane, group, v, False)


@cuda.jit(device=True)
def group_max(buf, t, lane, group, v):
    """As :func:`group_sum`, for the maximum (NaN never wins: the rows using it turn NaN
    through their sum anyway)."""
    return _group_reduce(buf, t, lane, group, v, True)


@cuda.jit(device=True)
def _row_max_and_sum(x, start, n, t, lane, group, maxes, sums, lowest):
    """(m, sum of exp(x - m)) over ``x[start:start + n]``, m its maximum, computed by one
    thread group (the stable log-sum-exp's two parts; every thread of the block calls it)."""
    m = lowest
    for k in range(lane, n, group):
        if x[start + k] > m:
            m = x[start + k]
    m = group_max(maxes, t, lane, group, m)
    s = 0.0
    for k in range(lane, n, group):
        s += math.exp(x[start + k] - m)
    return m, group_sum(sums, t, lane, group, s)


def row_launch(nrows: int, length: int, max_threads: int = BLOCK) -> tuple[int, int, int]:
    """(blocks, threads, group) for ``nrows`` rows of ``length`` elements, one group of
    ``group`` threads each, ``threads // group`` rows per block.

    Blocks get as few rows as keep about :data:`_TARGET_BLOCKS` of them busy (but at least
    a warp of threads), so 64 rows of 10 classes spread over 32 SMs, not 4 blocks; with
    fewer rows than that, a long row gets up to ``max_threads`` threads of its own.

    >>> blocks, threads, group = row_launch(64, 10)  # 64 rows of 10 classes
    >>> threads % group == 0 and group & (group - 1) == 0  # whole groups, a power of two
    True
    """
    width = min(length, BLOCK)
    if nrows < _TARGET_BLOCKS and length > BLOCK:
        width = min(-(-length // _PER_LANE), max_threads)
    group = 1
    while group < width:
        group *= 2
    group = min(group, max_threads)
    per_block = max(1, min(BLOCK // group, nrows // _TARGET_BLOCKS))
    while group * per_block < min(_WARP, max_threads):
        per_block += 1
    blocks = -(-nrows // per_block)
    blocks = min(blocks, _TARGET_BLOCKS) if core.SIMULATOR else core.grid(blocks)
    return blocks, group * per_block, group


# -- softmax / log_softmax ------------------------------------------------------------------
@functools.cache
def _softmax_kernels(dtype: np.dtype):
    """(rows kernel, columns kernel) for ``dtype`` (the max buffer needs a compile-time type)."""
    nb_type = numba.from_dtype(dtype)
    cast = dtype.type
    lowest = cast(-np.inf)

    @cuda.jit
    def rows(x, out, nrows, length, group, log):
        # One group per contiguous row: softmax along the last axis.
        maxes = cuda.shared.array(ROW_SLOTS, nb_type)
        sums = cuda.shared.array(ROW_SLOTS, numba.float64)
        t = cuda.threadIdx.x
        lane = t % group
        per_block = cuda.blockDim.x // group
        for first in range(cuda.blockIdx.x * per_block, nrows, cuda.gridDim.x * per_block):
            row = first + t // group
            start = row * length
            n = length if row < nrows else 0
            m, s = _row_max_and_sum(x, start, n, t, lane, group, maxes, sums, lowest)
            if n == 0:
                continue  # an idle group (past the last row): no log(0)
            ls = math.log(s)
            for k in range(lane, n, group):
                if log:
                    out[start + k] = float(x[start + k] - m) - ls
                else:
                    out[start + k] = math.exp(x[start + k] - m) / s

    @cuda.jit
    def columns(x, out, outer, length, inner, log):
        # One thread per (outer, inner) column, walking down the axis with stride ``inner``.
        start, step = cuda.grid(1), cuda.gridsize(1)
        for col in range(start, outer * inner, step):
            base = (col // inner) * length * inner + col % inner
            m = x[base]
            for k in range(1, length):
                if x[base + k * inner] > m:
                    m = x[base + k * inner]
            s = 0.0
            for k in range(length):
                s += math.exp(x[base + k * inner] - m)
            ls = math.log(s)
            for k in range(length):
                v = x[base + k * inner]
                out[base + k * inner] = float(v - m) - ls if log else math.exp(v - m) / s

    return rows, columns


def _softmax_like(x, axis, log: bool):
    x = core.astype(x, D.floating(x.dtype))
    if x.ndim == 0:
        raise ValueError("softmax needs a tensor of rank >= 1")
    shape = tuple(x.shape)
    # None is the last axis, as TF1's softmax; else an int, refused in the CPU forward's words
    axis = -1 if axis is None else axis_arg(axis, "log_softmax" if log else "softmax")
    ax = normalize_axes(axis, x.ndim)[0]
    length = shape[ax]
    inner = math.prod(shape[ax + 1:])
    outer = math.prod(shape[:ax])
    out = core.empty(shape, x.dtype)
    if out.size == 0:
        return out
    rows, columns = _softmax_kernels(np.dtype(x.dtype))
    if inner == 1:
        blocks, threads, group = row_launch(outer, length, ROW_SLOTS)
        launcher.launch(rows, blocks, threads, core.flat(x), core.flat(out), outer, length,
                        group, log)
    else:
        blocks, threads = core.launch(outer * inner)
        launcher.launch(columns, blocks, threads, core.flat(x), core.flat(out), outer,
                        length, inner, log)
    return out


def softmax(x, axis=-1):
    """CUDA forward of ``softmax``: ``exp(x - max) / sum(exp(x - max))`` along ``axis``."""
    return _softmax_like(x, axis, False)


def log_softmax(x, axis=-1):
    """CUDA forward of ``log_softmax``: ``x - max - log(sum(exp(x - max)))`` along ``axis``."""
    return _softmax_like(x, axis, True)


# -- sparse softmax cross-entropy -----------------------------------------------------------
@functools.cache
def _xent_kernel(dtype: np.dtype):
    nb_type = numba.from_dtype(dtype)
    cast = dtype.type
    lowest = cast(-np.inf)

    @cuda.jit
    def xent(logits, labels, g, loss, grad, nrows, classes, group, l_step, g_step, want_grad,
             bad):
        """Output row r reads logits row ``r * l_step`` and ``g[r * g_step]`` (steps of 0
        broadcast a single row or a single g). A label out of range records its row in
        ``bad`` (the smallest wins) and leaves the row unwritten."""
        maxes = cuda.shared.array(ROW_SLOTS, nb_type)
        sums = cuda.shared.array(ROW_SLOTS, numba.float64)
        t = cuda.threadIdx.x
        lane = t % group
        per_block = cuda.blockDim.x // group
        for first in range(cuda.blockIdx.x * per_block, nrows, cuda.gridDim.x * per_block):
            row = first + t // group
            src = row * l_step
            lab = labels[src] if row < nrows else 0
            ok = row < nrows and 0 <= lab < classes
            if row < nrows and not ok and lane == 0:
                cuda.atomic.min(bad, 0, src)
            start = src * classes
            n = classes if ok else 0
            m, s = _row_max_and_sum(logits, start, n, t, lane, group, maxes, sums, lowest)
            if not ok:
                continue
            ls = math.log(s)
            if lane == 0 and not want_grad:
                loss[row] = ls + float(m) - float(logits[start + lab])
            if want_grad:
                gv = cast(g[row * g_step])
                for k in range(lane, classes, group):
                    p = cast(math.exp(float(logits[start + k] - m) - ls))
                    if k == lab:
                        p = cast(p - 1.0)
                    grad[row * classes + k] = p * gv

    return xent


def _run_xent(logits, labels, g=None):
    """Loss (``g`` None) or gradient ``(softmax - onehot) * g[:, None]``, after the CPU
    forward's checks; a label out of range raises the CPU forward's ValueError."""
    logits = core.astype(logits, D.floating(logits.dtype))
    if not no_rows(logits, labels):  # no rows need no classes (the CPU forward's rule)
        _check_xent(logits, labels)
    rows, classes = logits.shape
    want_grad = g is not None
    if want_grad:
        g = core.scalar_array(g, logits.dtype) if np.isscalar(g) else g
        out_rows = _broadcast_rows(rows, g.size, classes)
        # A single logits row broadcast against several g's reads row 0 for each.
        l_step, g_step = int(rows != 1 or out_rows == 1), int(g.size != 1)
        grad = out = core.empty((out_rows, classes), logits.dtype)
        loss = core.empty((1,), logits.dtype)  # not written
    else:
        out_rows, l_step, g_step = rows, 1, 0
        loss = out = core.empty((rows,), logits.dtype)
        g = grad = core.empty((1,), logits.dtype)  # not read / not written
    if out_rows == 0:
        return out
    bad = core.full((1,), rows, np.int64)
    blocks, threads, group = row_launch(out_rows, classes, ROW_SLOTS)
    launcher.launch(_xent_kernel(np.dtype(logits.dtype)), blocks, threads, core.flat(logits),
                    labels, core.flat(g), core.flat(loss), core.flat(grad), out_rows, classes,
                    group, l_step, g_step, want_grad, bad)
    # The one value synced back: the first bad row, if any. A replay of the launches alone
    # would skip this check, so a recording is told.
    launcher.not_replayable("checks its labels on the host")
    row = int(bad.copy_to_host()[0])
    if row < rows:
        label = labels[row:row + 1].copy_to_host()[0]
        raise ValueError(f"Received a label value of {label} which is outside the valid "
                         f"range of [0, {classes}) (row {row})")
    return out


def _broadcast_rows(rows: int, g_size: int, classes: int) -> int:
    """Rows of ``grad (rows, classes) * g.reshape(-1, 1)`` under NumPy broadcasting."""
    if g_size == rows or g_size == 1:
        return rows
    if rows == 1:
        return g_size
    raise ValueError(f"operands could not be broadcast together with shapes "
                     f"({rows},{classes}) ({g_size},1) ")


def softmax_cross_entropy(logits, labels):
    """CUDA forward of ``softmax_cross_entropy``: per-row ``-log softmax(logits)[label]``."""
    return _run_xent(logits, labels)


def softmax_cross_entropy_grad(logits, labels, g):
    """CUDA forward of ``softmax_cross_entropy_grad``: ``(softmax(logits) - onehot(labels))
    * g[:, None]`` (``g`` a device array or a number)."""
    return _run_xent(logits, labels, g)

