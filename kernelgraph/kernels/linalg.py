"""CPU matrix products: BLAS (through numba's ``np.dot``) for float32/float64, compiled
loops for integers, batch dims broadcast as ``np.matmul`` broadcasts them."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .gemm import gemm
from .loops import PARALLEL_MIN_WORK, by_work

ndarray = np.ndarray


@by_work(PARALLEL_MIN_WORK)
def _matmul_batched(a, b, out):  # integer dtypes (floats go to BLAS, below)
    nb, m, kk = a.shape
    n = b.shape[2]
    for p in prange(nb * m):
        bi = p // m
        i = p % m
        row = out[bi, i]
        row[:] = 0
        for k in range(kk):
            aik = a[bi, i, k]
            brow = b[bi, k]
            for j in range(n):
                row[j] += aik * brow[j]


# Floating-point matmul goes to BLAS: numba compiles ``np.dot`` into a call to the sgemm/dgemm
# that SciPy ships (hence the scipy dependency), on contiguous 2-D slices, one per batch entry.
# The loops above stay for integer dtypes, which BLAS does not do. OpenBLAS's threads keep
# spinning for a while after a product (OPENBLAS_THREAD_TIMEOUT, left as the user set it):
# shortening that freed the cores on a loaded machine, but on an idle one each small product
# of an MLP step then paid for waking them (bench rows 11b and 12b twice as slow).


@njit(cache=True)
def _matmul_batched_blas(a, b, out):
    for i in range(a.shape[0]):
        np.dot(a[i], b[i], out[i])


@njit(cache=True)
def _matmul_2d_blas(a, b, out):
    np.dot(a, b, out)


BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _blas_2d(a: ndarray, b: ndarray, out: ndarray) -> None:
    # numba compiles np.dot once per layout pair; a gradient's products read a transposed
    # (Fortran-ordered) matrix, and gemm serves those pairs with one compiled kernel and
    # the same BLAS call, so a first run compiles less. Vectors keep numba's other calls.
    if (a.flags.c_contiguous and b.flags.c_contiguous) or min(out.shape) < 2:
        _matmul_2d_blas(a, b, out)
    else:
        gemm(a, b, out)


def _blas_layout(x: ndarray) -> ndarray:
    """``x`` itself when BLAS can read it (C or Fortran order: a transposed matrix is
    passed with BLAS's transpose flag, not copied), else a C-ordered copy."""
    flags = x.flags
    return x if flags.c_contiguous or flags.f_contiguous else np.ascontiguousarray(x)


def matmul_shape(sa: tuple, sb: tuple) -> tuple:
    """Output shape of ``a @ b`` for tensors of rank >= 2 (batch dims broadcast)."""
    if len(sa) < 2 or len(sb) < 2:
        raise ValueError(f"matmul expects tensors of rank >= 2, got shapes {sa} and {sb}")
    if sa[-1] != sb[-2]:
        raise ValueError(f"matmul: the inner dimensions differ: {sa} @ {sb} "
                         f"({sa[-1]} != {sb[-2]})")
    batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    return (*batch, sa[-2], sb[-1])


def matmul_2d(a: ndarray, b: ndarray) -> ndarray:
    """``a @ b`` for non-empty 2-D float matrices of one dtype whose shapes are known to fit
    (a compiled plan checked them): :func:`matmul` without its checks."""
    out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    _blas_2d(_blas_layout(a), _blas_layout(b), out)
    return out


def matmul(a: ndarray, b: ndarray) -> ndarray:
    # The common case first, with no broadcasting bookkeeping: for small matrices (a batch-1
    # MLP layer) that bookkeeping cost ten times the product itself.
    if a.ndim == 2 and b.ndim == 2 and a.dtype in BLAS_DTYPES and b.dtype == a.dtype:
        (m, k), n = a.shape, b.shape[1]
        if k == b.shape[0] and m and n and k:
            out = np.empty((m, n), a.dtype)
            _blas_2d(_blas_layout(a), _blas_layout(b), out)
            return out
    shape = matmul_shape(a.shape, b.shape)
    batch = shape[:-2]
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    nb = int(np.prod(batch, dtype=np.int64)) if batch else 1
    if b.ndim == 2 and a.ndim > 2:  # fold a's batch into its rows: one big 2-D product
        a3 = np.ascontiguousarray(a).reshape(1, nb * m, k)
        b3 = np.ascontiguousarray(b).reshape(1, k, n)
    else:
        a3 = np.ascontiguousarray(np.broadcast_to(a, (*batch, m, k))).reshape(nb, m, k)
        b3 = np.ascontiguousarray(np.broadcast_to(b, (*batch, k, n))).reshape(nb, k, n)
    out = np.empty((a3.shape[0], a3.shape[1], n), a.dtype)
    if a3.dtype in BLAS_DTYPES and out.size and k:
        _matmul_batched_blas(a3, b3, out)
    else:
        _matmul_batched(nb * m * k * n if a3.shape[0] * a3.shape[1] > 1 else 0, a3, b3, out)
    return out.reshape(shape)

