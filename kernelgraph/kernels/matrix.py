"""numba CPU kernels of the matrix functions (kernelgraph/ops/matrix.py): determinant,
inverse, solve, Cholesky factor and symmetric eigendecomposition of a batch of square
matrices, and the reduced singular value decomposition of a batch of (m, n) matrices, each
matrix handed to the LAPACK routine numba compiles ``np.linalg`` into (the same SciPy LAPACK
as the matrix product's BLAS).

Inputs are C-contiguous (batch, n, n) (or (batch, m, n)) float32/float64 arrays the op has
checked. The eigenvectors and the right singular vectors are given a fixed sign (each one's
largest entry in absolute value positive, the earlier one on a tie; a left singular vector
along) so that every device returns the same vectors.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def det_batched(a, out):
    for i in range(a.shape[0]):
        out[i] = np.linalg.det(a[i])


@njit(cache=True)
def inv_batched(a, out):
    for i in range(a.shape[0]):
        out[i] = np.linalg.inv(a[i])


@njit(cache=True)
def solve_batched(a, b, out):
    for i in range(a.shape[0]):
        out[i] = np.linalg.solve(a[i], b[i])


@njit(cache=True)
def cholesky_batched(a, out):
    # of the symmetric part (A + A^T) / 2: its derivative is the symmetric gradient TF gives
    n = a.shape[1]
    for i in range(a.shape[0]):
        sym = np.empty((n, n), a.dtype)
        for r in range(n):
            for c in range(n):
                sym[r, c] = (a[i, r, c] + a[i, c, r]) / 2
        out[i] = np.linalg.cholesky(sym)


@njit(cache=True)
def fix_signs(v):
    # each column (an eigenvector): its largest |entry| made positive
    nb, n, _ = v.shape
    for i in range(nb):
        for c in range(n):
            best = 0
            for r in range(1, n):
                if abs(v[i, r, c]) > abs(v[i, best, c]):
                    best = r
            if v[i, best, c] < 0:
                for r in range(n):
                    v[i, r, c] = -v[i, r, c]


@njit(cache=True)
def eigh_batched(a, values, vectors):
    n = a.shape[1]
    for i in range(a.shape[0]):
        sym = np.empty((n, n), a.dtype)
        for r in range(n):
            for c in range(n):
                sym[r, c] = a[i, r, c] if r >= c else a[i, c, r]
        w, v = np.linalg.eigh(sym)
        values[i] = w
        vectors[i] = v
    fix_signs(vectors)


@njit(cache=True)
def fix_svd_signs(u, v):
    # each right singular vector (a column of v): its largest |entry| positive, the left
    # one (the same column of u) flipped along so that U diag(S) V^T stays A
    nb, n, k = v.shape
    for i in range(nb):
        for c in range(k):
            best = 0
            for r in range(1, n):
                if abs(v[i, r, c]) > abs(v[i, best, c]):
                    best = r
            if v[i, best, c] < 0:
                for r in range(n):
                    v[i, r, c] = -v[i, r, c]
                for r in range(u.shape[1]):
                    u[i, r, c] = -u[i, r, c]


@njit(cache=True)
def svd_batched(a, u, s, v):
    # the reduced SVD A = U diag(S) V^T: U (m, k), S (k,) descending, V (n, k), k = min(m, n)
    for i in range(a.shape[0]):
        left, values, right_t = np.linalg.svd(np.ascontiguousarray(a[i]), full_matrices=False)
        u[i] = left
        s[i] = values
        v[i] = right_t.T
    fix_svd_signs(u, v)
