"""A float matrix product compiled once for every memory layout: the BLAS call that numba's
``np.dot(a, b, out)`` makes, with the layout passed as a flag.

numba compiles ``np.dot`` once per combination of layouts (C or Fortran order for each
operand), each a quarter of a second, and a training step's products use three: the
forward product and the two of its gradient, which read a transposed matrix. Here an
operand in Fortran order is passed as its transpose, which is in C order, with BLAS's
transpose flag, so one compiled kernel per dtype serves all of them. It calls the same C
helper (``numba_xxgemm``, the sgemm/dgemm SciPy ships) with the same arguments numba's
``np.dot`` passes, so the products have the same bits.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

_xxgemm = types.ExternalFunction("numba_xxgemm", types.int32(
    types.char, types.char, types.char,  # kind ('s' or 'd'), transa, transb
    types.intp, types.intp, types.intp,  # m, n, k
    types.intp, types.intp, types.intp,  # alpha, a, lda (pointers as addresses)
    types.intp, types.intp, types.intp,  # b, ldb, beta
    types.intp, types.intp))  # c, ldc
_N, _T, _S, _D = ord("n"), ord("t"), ord("s"), ord("d")


@njit(cache=True)
def _gemm(a, a_flipped, b, b_flipped, out, one, zero):
    # numba's call_xxgemm: out is C ordered, so BLAS (Fortran order) computes
    # out.T = b.T @ a.T, an operand stored the other way round with the transpose flag;
    # the leading dimension is the stored matrix's row length either way.
    m, n = out.shape
    k = a.shape[0] if a_flipped else a.shape[1]
    kind = _S if out.itemsize == 4 else _D
    return _xxgemm(kind, _T if b_flipped else _N, _T if a_flipped else _N, n, m, k,
                   one.ctypes.data, b.ctypes.data, b.shape[1], a.ctypes.data, a.shape[1],
                   zero.ctypes.data, out.ctypes.data, n)


_ONE = {np.dtype(t): np.ones(1, t) for t in (np.float32, np.float64)}
_ZERO = {np.dtype(t): np.zeros(1, t) for t in (np.float32, np.float64)}


def gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = a @ b`` as numba's ``np.dot(a, b, out)`` computes it, for float32 or
    float64 matrices of ``out``'s dtype in C or Fortran order with m, n >= 2 and k >= 1
    (numba's np.dot calls other BLAS functions for vectors), ``out`` a new C-ordered
    (m, n) array: the caller checked all that.

    >>> a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 2))
    >>> out = np.empty((2, 2)); gemm(a, b.T.copy().T, out); out
    array([[ 3.,  3.],
           [12., 12.]])
    """
    a_flipped, b_flipped = not a.flags.c_contiguous, not b.flags.c_contiguous
    if _gemm(a.T if a_flipped else a, a_flipped, b.T if b_flipped else b, b_flipped, out,
             _ONE[out.dtype], _ZERO[out.dtype]):
        raise RuntimeError("no BLAS for the matrix product (numba looks for SciPy's)")
