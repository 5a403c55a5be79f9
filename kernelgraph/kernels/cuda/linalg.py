"""CUDA matmul: a register-blocked, shared-memory tiled GEMM, batched over broadcast dims.

Each block computes a ``BM x BN`` tile of the output; its ``TY x TX`` threads each own a
``BM/TY x BN/TX`` sub-block of accumulators held in registers. Per step along K the block
stages a ``BM x BK`` slice of A and a ``BK x BN`` slice of B in shared memory, then every
thread reads a column of A and a row of B from it into registers and does an outer-product
update: ``TM + TN`` shared loads feed ``TM * TN`` multiply-adds (64 per 16 loads on a GPU),
which is what lifts the kernel from memory-bound to compute-bound.

A thread's rows are ``ty, ty + TY, ...`` and its columns ``tx, tx + TX, ...`` (strided, not
a contiguous block): neighbouring threads then read neighbouring shared-memory words (no
bank conflicts) and write neighbouring output columns (coalesced stores).

Operands are addressed through (row, column) element strides, so a transposed operand
costs no copy (conv2d's input gradient uses ``W^T``), and batch dims through
:func:`core.offset` with stride 0 for broadcast dims, so a broadcast operand is never
materialised. Grid-stride loops over batches and tiles keep every grid shape correct; the
simulator runs one small block (4x4 threads, 8x8 tiles) through the very same kernel.
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np
from numba import cuda

from ... import dtypes as D
from ...ops.elementwise import _arith
from .. import cpu
from . import core

# Tile geometry: (BM, BN, BK, TY, TX). On a GPU 256 threads each own 8x8 outputs of a
# 128x128 tile. The simulator runs each CUDA thread as a Python thread and each barrier is
# slow, so it gets 16 threads with 4x4 outputs each (few threads, few K steps).
TILES = (16, 16, 8, 4, 4) if core.SIMULATOR else (128, 128, 8, 16, 16)
# Padding of A's shared tile rows: A is stored transposed (k-major), and without the pad the
# 8 k-columns a warp writes all land in one bank (128 floats = 4 x 32 banks).
_PAD_A = 4
_MAX_GRID_YZ = 65535


@functools.cache
def _gemm_kernel(dtype: np.dtype):
    """The tiled GEMM kernel for ``dtype`` (shared/local arrays need a compile-time type)."""
    bm, bn, bk, ty_, tx_ = TILES
    tm, tn = bm // ty_, bn // tx_
    nthreads = tx_ * ty_
    a_width = bm + _PAD_A  # shared array shapes must be closure constants, not expressions
    nb_type = numba.from_dtype(dtype)
    zero = dtype.type(0)
    offset = core.offset

    @cuda.jit
    def kernel(a, b, out, m, n, k, batch, a_batch, b_batch, sam, sak, sbk, sbn):
        a_tile = cuda.shared.array((bk, a_width), nb_type)  # a_tile[kk, row]
        b_tile = cuda.shared.array((bk, bn), nb_type)           # b_tile[kk, col]
        acc = cuda.local.array((tm, tn), nb_type)
        ra = cuda.local.array(tm, nb_type)
        rb = cuda.local.array(tn, nb_type)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        t = ty * tx_ + tx
        tiles_m = (m + bm - 1) // bm
        tiles_n = (n + bn - 1) // bn
        nbatch = out.size // (m * n)
        # Loads run along whichever operand axis is contiguous, so they coalesce.
        a_rows_fast = sam == 1 and sak != 1
        b_cols_fast = sbn == 1 or sbk != 1
        for z in range(cuda.blockIdx.z, nbatch, cuda.gridDim.z):
            a0 = offset(z, batch, a_batch)
            b0 = offset(z, batch, b_batch)
            o0 = z * m * n
            for tile_m in range(cuda.blockIdx.y, tiles_m, cuda.gridDim.y):
                row0 = tile_m * bm
                for tile_n in range(cuda.blockIdx.x, tiles_n, cuda.gridDim.x):
                    col0 = tile_n * bn
                    for i in range(tm):
                        for j in range(tn):
                            acc[i, j] = zero
                    for k0 in range(0, k, bk):
                        for q in range(t, bm * bk, nthreads):
                            if a_rows_fast:
                                r, c = q % bm, q // bm
                            else:
                                r, c = q // bk, q % bk
                            gr, gc = row0 + r, k0 + c
                            v = zero
                            if gr < m and gc < k:
                                v = a[a0 + gr * sam + gc * sak]
                            a_tile[c, r] = v
                        for q in range(t, bk * bn, nthreads):
                            if b_cols_fast:
                                r, c = q // bn, q % bn
                            else:
                                r, c = q % bk, q // bk
                            gr, gc = k0 + r, col0 + c
                            v = zero
                            if gr < k and gc < n:
                                v = b[b0 + gr * sbk + gc * sbn]
                            b_tile[r, c] = v
                        cuda.syncthreads()
                        for kk in range(bk):
                            for i in range(tm):
                                ra[i] = a_tile[kk, ty + i * ty_]
                            for j in range(tn):
                                rb[j] = b_tile[kk, tx + j * tx_]
                            for i in range(tm):
                                for j in range(tn):
                                    acc[i, j] += ra[i] * rb[j]
                        cuda.syncthreads()  # the tiles are overwritten next step
                    for i in range(tm):
                        gr = row0 + ty + i * ty_
                        if gr < m:
                            for j in range(tn):
                                gc = col0 + tx + j * tx_
                                if gc < n:
                                    out[o0 + gr * n + gc] = acc[i, j]

    return kernel


def _batch_strides(shape, batch, matrix_size):
    """Element strides of a C-contiguous operand's batch dims read as broadcast to ``batch``
    (0 for a broadcast dim), as the kernel's ``offset`` wants them."""
    if not batch:
        return (0,)
    return tuple(s * matrix_size for s in core.broadcast_strides(shape, batch))


def _logical(shape: tuple, trans: bool) -> tuple:
    """``shape`` with its last two dims swapped when the operand is read transposed."""
    return (*shape[:-2], shape[-1], shape[-2]) if trans and len(shape) >= 2 else shape


def gemm(a, b, trans_a: bool = False, trans_b: bool = False):
    """``a @ b`` of C-contiguous device arrays of one dtype, rank >= 2, batch dims
    broadcast (``np.matmul``'s rules). ``trans_a``/``trans_b`` use the transpose of the last
    two dims of that operand instead, without copying it. Returns a new C-contiguous array.

    This is the building block that conv2d (im2col) reuses; :func:`matmul` adds the op's
    dtype promotion on top."""
    if a.dtype != b.dtype:
        raise TypeError(f"gemm: operands must share a dtype, got {a.dtype} and {b.dtype}")
    sa, sb = tuple(a.shape), tuple(b.shape)  # the simulator's shapes refuse negative indices
    la, lb = _logical(sa, trans_a), _logical(sb, trans_b)
    shape = cpu.matmul_shape(la, lb)
    batch, (m, k), n = shape[:-2], la[-2:], lb[-1]
    # A 2-D b with a batched, untransposed a: fold a's batch into its rows (one big GEMM).
    if b.ndim == 2 and a.ndim > 2 and not trans_a:
        a = a.reshape(math.prod(sa[:-1]), k)
        m, batch = a.shape[0], ()
    out = core.empty((*batch, m, n), a.dtype)
    if out.size == 0:
        return out.reshape(shape)
    if k == 0:
        return core.full(shape, 0, a.dtype)
    # Element strides of the logical (row, column) axes of each operand.
    sam, sak = (1, m) if trans_a else (k, 1)
    sbk, sbn = (1, k) if trans_b else (n, 1)
    a_batch = _batch_strides(sa[:-2], batch, m * k)
    b_batch = _batch_strides(sb[:-2], batch, k * n)
    nbatch = math.prod(batch)
    bm, bn, _, ty, tx = TILES
    if core.SIMULATOR:  # one block: the simulator runs blocks one after another anyway
        grid = (1, 1, 1)
    else:
        grid = (math.ceil(n / bn), min(_MAX_GRID_YZ, math.ceil(m / bm)),
                min(_MAX_GRID_YZ, nbatch))
    kernel = _gemm_kernel(np.dtype(a.dtype))
    kernel[grid, (tx, ty)](core.flat(a), core.flat(b), core.flat(out), m, n, k,
                           tuple(batch) or (1,), a_batch, b_batch, sam, sak, sbk, sbn)
    return out.reshape(shape)


def matmul(a, b):
    """CUDA forward of ``matmul``: ``a @ b`` for rank >= 2 with broadcast batch dims, dtypes
    promoted as the CPU forward does (bool computes as int64)."""
    dt = _arith(D.promote(D.as_dtype(a.dtype), D.as_dtype(b.dtype)))
    return gemm(core.astype(a, dt), core.astype(b, dt))


FORWARDS = {"matmul": matmul}
