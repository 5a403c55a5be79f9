"""CUDA matmul: a register-blocked, shared-memory tiled GEMM, batched over broadcast dims.

Each block computes a ``BM x BN`` tile of the output; its ``TY x TX`` threads each own a
``BM/TY x BN/TX`` sub-block of accumulators held in registers. Per step along K the block
stages a ``BM x BK`` slice of A and a ``BK x BN`` slice of B in shared memory, then every
thread reads a column of A and a row of B from it into registers and does an outer-product
update: ``TM + TN`` values feed ``TM * TN`` multiply-adds (64 per 16 on a GPU), which is
what lifts the kernel from memory-bound to compute-bound. No TF32: every product is fp32 (or
the operands' own type).

The loads of the next K step are issued before the multiplications of this one, into
registers, and stored to shared memory after them: with 8 warps per SM (a thread needs
~240 registers) nothing else would hide their latency.

What the inner loop issues besides its multiply-adds decides the speed, so:

- A thread's rows are ``4*ty + {0..3}``, then the same 4 rows ``4*TY`` further, and so on
  (likewise its columns): runs of four neighbours, read from shared memory as one 16-byte
  *quad*. The tiles are declared as arrays of a 4-field record (16-byte aligned), viewed as
  plain elements for the stores, so NVVM emits ``ld.shared.v4`` (``v2`` for 8-byte types):
  4 loads per K element instead of 16. Within a warp, threads sharing ``ty`` read one A
  quad (a broadcast) and neighbouring B quads (no bank conflicts).
- Shared-memory and global indices are unsigned (``uint64``), which spares each access
  numba's negative-index fix-up, so a load's address is a base plus a constant.
- A thread's staging coordinates are shifts and masks (the tile sizes are powers of two),
  and element ``p`` of its share is ``p`` steps from the first (one add, no multiply).

Operands are addressed through (row, column) element strides, so a transposed operand
costs no copy (conv2d's input gradient uses ``W^T``; matmul's ``trans_a``/``trans_b``), and
batch dims through :func:`core.offset` with stride 0 for broadcast dims, so a broadcast
operand is never materialised. Grid-stride loops over batches and tiles keep every grid
shape correct; the simulator runs one small block (4x4 threads, 16x16x8 tiles) through the
very same kernel.
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np
from numba import cuda

from ..linalg import matmul_shape
from . import core, launcher, reduce


def tiles_for(dtype) -> tuple:
    """Tile geometry (BM, BN, BK, TY, TX) for ``dtype``. On a GPU 256 threads each own 8x8
    outputs of a 128x128 tile, 32 deep along K for 4-byte types and 16 for 8-byte ones (the
    two shared tiles must fit in 48 KB). The simulator runs each CUDA thread as a Python
    thread and each barrier is slow, so it gets 16 threads with 4x4 outputs each."""
    if core.SIMULATOR:
        return (16, 16, 8, 4, 4)
    return (128, 128, 32 if np.dtype(dtype).itemsize <= 4 else 16, 16, 16)

def _smaller_tiles(dtype) -> tuple:
    """The geometries a GPU tries when :func:`tiles_for`'s leave it idle, largest first:
    64x64 and 32x32 tiles, each thread owning 4x4 outputs (one quad each way)."""
    if core.SIMULATOR:
        return ()
    bk = 32 if np.dtype(dtype).itemsize <= 4 else 16
    return ((64, 64, bk, 16, 16), (32, 32, bk, 8, 8))


# A GEMM launch should have about one block per SM. With fewer output tiles it takes smaller
# tiles, then splits K into slices (computed as a batch into partials, summed by a column
# reduction: two launches, and the same bits run after run). A slice keeps at least
# _MIN_SLICE_K of K, so each block runs several K steps. Read at call time: the tests
# change them to split on the simulator.
_TARGET_BLOCKS = 1 if core.SIMULATOR else 128
_MIN_SLICE_K = 128


def gemm_plan(m: int, n: int, k: int, nbatch: int, dtype) -> tuple:
    """(tiles, splits) for an ``m x k @ k x n`` product over ``nbatch`` batches: the largest
    geometry whose grid reaches :data:`_TARGET_BLOCKS` blocks (else the smallest), and how
    many K slices a 2-D product is cut into when even that grid is short. The MLP's batch-64
    layer ``64x784 @ 784x1024`` gets 32x32 tiles and 2 slices on a GPU (128 blocks; 8 with
    128x128 tiles).

    >>> gemm_plan(4096, 4096, 4096, 1, np.float32)[1]
    1
    """
    geometries = (tiles_for(dtype), *_smaller_tiles(dtype))
    for tiles in geometries:
        blocks = math.ceil(m / tiles[0]) * math.ceil(n / tiles[1]) * nbatch
        if blocks >= _TARGET_BLOCKS:
            return tiles, 1
    splits = 1
    if nbatch == 1:
        for s in range(min(-(-_TARGET_BLOCKS // blocks), k // _MIN_SLICE_K), 1, -1):
            if k % s == 0:  # equal slices: each is one batch of the same kernel
                splits = s
                break
    return tiles, splits


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
    if any(v & (v - 1) for v in (bm, bn, bk, ty_, tx_)) or bm % ty_ or bn % tx_ \
            or nthreads % bk or nthreads % bm or nthreads % bn or bm * bk % nthreads \
            or bk * bn % nthreads or tm % 4 or tn % 4:
        raise ValueError(f"tile geometry {tiles}: the threads must split the tiles evenly "
                         "(powers of two, each thread's rows and columns in fours)")
    # Powers of two: a thread's coordinates are shifts and masks, not numba's floor divisions
    # (which the register allocator recomputes in the loop rather than keep).
    sh_bm, sh_bn, sh_bk = bm.bit_length() - 1, bn.bit_length() - 1, bk.bit_length() - 1
    # Each thread stages la elements of A's tile and lb of B's per K step. Element p of its
    # share sits at (r0 + p*dr, c0 + p*dc) of the tile: whole rows/columns of threads move
    # together, so the per-element coordinates need no division.
    la, lb = bm * bk // nthreads, bk * bn // nthreads
    a_dr, a_dc = (0, nthreads // bm) if a_rows_fast else (nthreads // bk, 0)
    b_dk, b_dn = (nthreads // bn, 0) if b_cols_fast else (0, nthreads // bk)
    a_width = bm + _PAD_A  # shared array shapes must be closure constants, not expressions
    a_quads, b_quads = a_width // 4, bn // 4
    quad_t = numba.from_dtype(np.dtype([(f, dtype) for f in "xyzw"], align=True))
    elem = dtype.type
    u64 = numba.uint64
    nb_type = numba.from_dtype(dtype)
    zero = dtype.type(0)
    offset = core.offset

    @cuda.jit
    def kernel(a, b, out, m, n, k, batch, a_batch, b_batch, sam, sak, sbk, sbn):
        a_quad = cuda.shared.array((bk, a_quads), quad_t)
        b_quad = cuda.shared.array((bk, b_quads), quad_t)
        a_tile = a_quad.view(elem)  # a_tile[kk, row]
        b_tile = b_quad.view(elem)  # b_tile[kk, col]
        acc = cuda.local.array((tm, tn), nb_type)
        ra = cuda.local.array(tm, nb_type)
        rb = cuda.local.array(tn, nb_type)
        pa = cuda.local.array(la, nb_type)  # the next K step's share, loaded during this one
        pb = cuda.local.array(lb, nb_type)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        t = ty * tx_ + tx
        if a_rows_fast:
            a_r0, a_c0 = t & (bm - 1), t >> sh_bm
        else:
            a_r0, a_c0 = t >> sh_bk, t & (bk - 1)
        if b_cols_fast:
            b_k0, b_n0 = t >> sh_bn, t & (bn - 1)
        else:
            b_k0, b_n0 = t & (bk - 1), t >> sh_bk
        a_step = a_dr * sam + a_dc * sak
        b_step = b_dk * sbk + b_dn * sbn
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
                            # Element p of the share is p steps from the first: one add
                            # each, and unsigned indices skip numba's negative-index fixup.
                            a_at = a0 + (row0 + a_r0) * sam + (k0 + a_c0) * sak
                            for p in range(la):
                                v = zero
                                if row0 + a_r0 + p * a_dr < m and k0 + a_c0 + p * a_dc < k:
                                    v = a[u64(a_at + p * a_step)]
                                pa[p] = v
                            b_at = b0 + (k0 + b_k0) * sbk + (col0 + b_n0) * sbn
                            for p in range(lb):
                                v = zero
                                if k0 + b_k0 + p * b_dk < k and col0 + b_n0 + p * b_dn < n:
                                    v = b[u64(b_at + p * b_step)]
                                pb[p] = v
                        if k0 > 0:
                            for kk in range(bk):
                                ku = u64(kk)
                                for q in range(tm // 4):
                                    v4 = a_quad[ku, u64(ty + q * ty_)]
                                    ra[4 * q] = v4['x']
                                    ra[4 * q + 1] = v4['y']
                                    ra[4 * q + 2] = v4['z']
                                    ra[4 * q + 3] = v4['w']
                                for q in range(tn // 4):
                                    v4 = b_quad[ku, u64(tx + q * tx_)]
                                    rb[4 * q] = v4['x']
                                    rb[4 * q + 1] = v4['y']
                                    rb[4 * q + 2] = v4['z']
                                    rb[4 * q + 3] = v4['w']
                                for i in range(tm):
                                    for j in range(tn):
                                        acc[i, j] += ra[i] * rb[j]
                            cuda.syncthreads()  # the tiles are overwritten next pass
                    for i in range(tm):
                        gr = row0 + ty * 4 + (i // 4) * (ty_ * 4) + i % 4
                        if gr < m:
                            for j in range(tn):
                                gc = col0 + tx * 4 + (j // 4) * (tx_ * 4) + j % 4
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


def gemm(a, b, trans_a: bool = False, trans_b: bool = False, *, tiles=None):
    """``a @ b`` of C-contiguous device arrays of one dtype, rank >= 2, batch dims
    broadcast (``np.matmul``'s rules). ``trans_a``/``trans_b`` use the transpose of the last
    two dims of that operand instead, without copying it. Returns a new C-contiguous array.
    ``tiles`` overrides the tile geometry (see :func:`_gemm_kernel`; to compare geometries).

    >>> from kernelgraph.kernels.cuda import core
    >>> a = core.to_device(np.arange(6.0).reshape(2, 3))
    >>> core.to_host(gemm(a, a, trans_b=True)).tolist()  # a @ a.T, a read transposed
    [[5.0, 14.0], [14.0, 50.0]]

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
    if m * n * math.prod(batch) == 0:
        return core.empty(shape, a.dtype)
    if k == 0:
        return core.full(shape, 0, a.dtype)
    # Element strides of the logical (row, column) axes of each operand.
    sam, sak = (1, m) if trans_a else (k, 1)
    sbk, sbn = (1, k) if trans_b else (n, 1)
    a_batch = _batch_strides(sa[:-2], batch, m * k)
    b_batch = _batch_strides(sb[:-2], batch, k * n)
    nbatch = math.prod(batch)
    plan, splits = gemm_plan(m, n, k, nbatch, a.dtype)
    tiles = tiles or plan
    if splits > 1:  # K slices as a batch: slice s starts s * k/splits along K
        k //= splits
        batch, nbatch, a_batch, b_batch = (splits,), splits, (k * sak,), (k * sbk,)
    out = core.empty((*batch, m, n), a.dtype)
    bm, bn, _, ty, tx = tiles
    if core.SIMULATOR:  # one block: the simulator runs blocks one after another anyway
        grid = (1, 1, 1)
    else:
        grid = (math.ceil(n / bn), min(_MAX_GRID_YZ, math.ceil(m / bm)),
                min(_MAX_GRID_YZ, nbatch))
    # Loads run along whichever operand axis is contiguous, so they coalesce.
    kernel = _gemm_kernel(np.dtype(a.dtype), sam == 1 and sak != 1, sbn == 1 or sbk != 1,
                          None if tiles == tiles_for(a.dtype) else tuple(tiles))
    launcher.launch(kernel, grid, (tx, ty), core.flat(a), core.flat(b), core.flat(out), m, n,
                    k, tuple(batch) or (1,), a_batch, b_batch, sam, sak, sbk, sbn)
    if splits > 1:  # the slices' partials summed (in float64 or int64, as every sum)
        out = reduce._sum(out, 0, False, a.dtype)
    return out.reshape(shape)


def matmul(a, b):
    """``a @ b`` for rank >= 2 with broadcast batch dims, of one dtype (the op refuses two
    dtypes and bools first, as on the CPU and in PyTorch)."""
    return gemm(a, b)

