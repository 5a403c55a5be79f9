"""CUDA matmul: a register-blocked, shared-memory tiled GEMM, batched over broadcast dims.

Each block computes a ``BM x BN`` tile of the output; its ``TY x TX`` threads each own a
``BM/TY x BN/TX`` sub-block of accumulators held in registers. Per step along K the block
stages a ``BM x BK`` slice of A and a ``BK x BN`` slice of B in shared memory, then every
thread reads a column of A and a row of B from it into registers and does an outer-product
update: ``TM + TN`` shared loads feed ``TM * TN`` multiply-adds (64 per 16 loads on a GPU),
which is what lifts the kernel from memory-bound to compute-bound.

The loads of the next K step are issued before the multiplications of this one, into
registers, and stored to shared memory after them: with 8 warps per SM (a thread needs
~220 registers) nothing else would hide their latency. On an H100 that took the 4096^3
float32 product from 16.4 to 9.3 ms; 32-deep K steps instead of 8 (fewer barriers per
multiply-add) to 8.2 ms, 0.33x cuBLAS (2.75 ms without TF32).

A thread's rows are ``ty, ty + TY, ...`` and its columns ``tx, tx + TX, ...`` (strided, not
a contiguous block): neighbouring threads then read neighbouring shared-memory words (no
bank conflicts) and write neighbouring output columns (coalesced stores).

Operands are addressed through (row, column) element strides, so a transposed operand
costs no copy (conv2d's input gradient uses ``W^T``), and batch dims through
:func:`core.offset` with stride 0 for broadcast dims, so a broadcast operand is never
materialised. Grid-stride loops over batches and tiles keep every grid shape correct; the
simulator runs one small block (4x4 threads, 16x16x8 tiles) through the very same kernel.
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np
from numba import cuda

from ..linalg import matmul_shape
from . import core


def tiles_for(dtype) -> tuple:
    """Tile geometry (BM, BN, BK, TY, TX) for ``dtype``. On a GPU 256 threads each own 8x8
    outputs of a 128x128 tile, 32 deep along K for 4-byte types and 16 for 8-byte ones (the
    two shared tiles must fit in 48 KB). The simulator runs each CUDA thread as a Python
    thread and each barrier is slow, so it gets 16 threads with 4x4 outputs each."""
    if core.SIMULATOR:
        return (16, 16, 8, 4, 4)
    return (128, 128, 32 if np.dtype(dtype).itemsize <= 4 else 16, 16, 16)

# Padding of A's shared tile rows: A is stored transposed (k-major), and without the pad the
# 8 k-columns a warp writes all land in one bank (128 floats = 4 x 32 banks).
_PAD_A = 4
_MAX_GRID_YZ = 65535


@functools.cache
def _gemm_kernel(dtype: np.dtype, a_rows_fast: bool, b_cols_fast: bool, tiles=None):
    """The tiled GEMM kernel for ``dtype`` and the operands' layouts (shared and local arrays
    need compile-time types and sizes; the layouts pick the load order at compile time).

    ``a_rows_fast``: A's rows are its contiguous axis (A read transposed), so consecutive
    threads load consecutive rows; else consecutive k. ``b_cols_fast``: likewise B's columns.
    ``tiles`` overrides :func:`tiles_for` (to try other geometries)."""
    bm, bn, bk, ty_, tx_ = tiles or tiles_for(dtype)
    tm, tn = bm // ty_, bn // tx_
    nthreads = tx_ * ty_
    if bm % ty_ or bn % tx_ or nthreads % bk or nthreads % bm or nthreads % bn \
            or bm * bk % nthreads or bk * bn % nthreads:
        raise ValueError(f"tile geometry {tiles}: the threads must split the tiles evenly")
    # Each thread stages la elements of A's tile and lb of B's per K step. Element p of its
    # share sits at (r0 + p*dr, c0 + p*dc) of the tile: whole rows/columns of threads move
    # together, so the per-element coordinates need no division.
    la, lb = bm * bk // nthreads, bk * bn // nthreads
    a_dr, a_dc = (0, nthreads // bm) if a_rows_fast else (nthreads // bk, 0)
    b_dk, b_dn = (nthreads // bn, 0) if b_cols_fast else (0, nthreads // bk)
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
        pa = cuda.local.array(la, nb_type)  # the next K step's share, loaded during this one
        pb = cuda.local.array(lb, nb_type)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        t = ty * tx_ + tx
        if a_rows_fast:
            a_r0, a_c0 = t % bm, t // bm
        else:
            a_r0, a_c0 = t // bk, t % bk
        if b_cols_fast:
            b_k0, b_n0 = t // bn, t % bn
        else:
            b_k0, b_n0 = t % bk, t // bk
        tiles_m = (m + bm - 1) // bm
        tiles_n = (n + bn - 1) // bn
        nbatch = out.size // (m * n)
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
                    # One pass more than there are K steps: pass s stores step s-1's share
                    # (loaded during the previous pass) to shared memory, starts loading
                    # step s's, and multiplies step s-1's tiles while those loads fly.
                    for k0 in range(0, k + bk, bk):
                        if k0 > 0:
                            for p in range(la):
                                a_tile[a_c0 + p * a_dc, a_r0 + p * a_dr] = pa[p]
                            for p in range(lb):
                                b_tile[b_k0 + p * b_dk, b_n0 + p * b_dn] = pb[p]
                            cuda.syncthreads()
                        if k0 < k:
                            for p in range(la):
                                gr = row0 + a_r0 + p * a_dr
                                gc = k0 + a_c0 + p * a_dc
                                v = zero
                                if gr < m and gc < k:
                                    v = a[a0 + gr * sam + gc * sak]
                                pa[p] = v
                            for p in range(lb):
                                gr = k0 + b_k0 + p * b_dk
                                gc = col0 + b_n0 + p * b_dn
                                v = zero
                                if gr < k and gc < n:
                                    v = b[b0 + gr * sbk + gc * sbn]
                                pb[p] = v
                        if k0 > 0:
                            for kk in range(bk):
                                for i in range(tm):
                                    ra[i] = a_tile[kk, ty + i * ty_]
                                for j in range(tn):
                                    rb[j] = b_tile[kk, tx + j * tx_]
                                for i in range(tm):
                                    for j in range(tn):
                                        acc[i, j] += ra[i] * rb[j]
                            cuda.syncthreads()  # the tiles are overwritten next pass
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
    shape = matmul_shape(la, lb)
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
    bm, bn, _, ty, tx = tiles_for(a.dtype)
    if core.SIMULATOR:  # one block: the simulator runs blocks one after another anyway
        grid = (1, 1, 1)
    else:
        grid = (math.ceil(n / bn), min(_MAX_GRID_YZ, math.ceil(m / bm)),
                min(_MAX_GRID_YZ, nbatch))
    # Loads run along whichever operand axis is contiguous, so they coalesce.
    kernel = _gemm_kernel(np.dtype(a.dtype), sam == 1 and sak != 1, sbn == 1 or sbk != 1)
    kernel[grid, (tx, ty)](core.flat(a), core.flat(b), core.flat(out), m, n, k,
                           tuple(batch) or (1,), a_batch, b_batch, sam, sak, sbk, sbn)
    return out.reshape(shape)


def matmul(a, b):
    """``a @ b`` for rank >= 2 with broadcast batch dims, of one dtype (the op refuses two
    dtypes and bools first, as on the CPU and in PyTorch)."""
    return gemm(a, b)

