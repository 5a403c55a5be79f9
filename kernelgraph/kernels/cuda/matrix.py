"""CUDA forwards of the matrix functions (kernelgraph/ops/matrix.py): one thread per matrix
of the batch, each working in its own slice of a scratch copy -- Gaussian elimination with
partial pivoting (determinant, inverse, solve), the Cholesky-Banachiewicz recurrence, and
cyclic Jacobi rotations for the symmetric eigendecomposition (eigenvalues ascending,
eigenvectors signed as on the CPU) and one-sided Jacobi rotations for the singular value
decomposition. Small matrices, as a teaching framework's are: the
work is O(n^3) per thread, no shared memory.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from . import core, launcher


@cuda.jit
def _eliminate(w, rhs, det):
    # w (batch, n, n) becomes upper triangular; rhs (batch, n, m) gets the same row
    # operations, then back substitution leaves A^-1 rhs in it; det[i] = det(A_i).
    nb, n, _ = w.shape
    m = rhs.shape[2]
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, nb, step):
        d = 1.0
        for c in range(n):
            p = c
            for r in range(c + 1, n):
                if abs(w[i, r, c]) > abs(w[i, p, c]):
                    p = r
            if p != c:
                d = -d
                for k in range(n):
                    t = w[i, c, k]
                    w[i, c, k] = w[i, p, k]
                    w[i, p, k] = t
                for k in range(m):
                    t = rhs[i, c, k]
                    rhs[i, c, k] = rhs[i, p, k]
                    rhs[i, p, k] = t
            piv = w[i, c, c]
            d *= piv
            if piv == 0:
                continue
            for r in range(c + 1, n):
                f = w[i, r, c] / piv
                for k in range(c, n):
                    w[i, r, k] -= f * w[i, c, k]
                for k in range(m):
                    rhs[i, r, k] -= f * rhs[i, c, k]
        det[i] = d
        if d == 0:
            continue
        for c in range(n - 1, -1, -1):
            for k in range(m):
                s = rhs[i, c, k]
                for j in range(c + 1, n):
                    s -= w[i, c, j] * rhs[i, j, k]
                rhs[i, c, k] = s / w[i, c, c]


def _scratch(a):
    return core.copy(a)


def _batch(a):
    blocks, threads = core.launch(max(a.shape[0], 1))
    return blocks, threads


def det(a):
    """det of each (n, n) matrix of a (batch, n, n) device array."""
    w = _scratch(a)
    rhs = core.empty((a.shape[0], a.shape[1], 0), a.dtype)
    out = core.empty((a.shape[0],), a.dtype)
    if a.shape[0]:
        launcher.launch(_eliminate, *_batch(a), w, rhs, out)
    return out


def _singular(d) -> bool:
    launcher.not_replayable("reads back whether a matrix is singular")
    return bool((core.to_host(d) == 0).any())


def solve(a, b):
    """A^-1 B for each matrix of the batch; a LinAlgError for a singular matrix."""
    w = _scratch(a)
    rhs = core.copy(b)
    d = core.empty((a.shape[0],), a.dtype)
    if a.shape[0]:
        launcher.launch(_eliminate, *_batch(a), w, rhs, d)
        if _singular(d):
            raise np.linalg.LinAlgError("Singular matrix")
    return rhs


def inv(a):
    """A^-1 for each matrix of the batch."""
    n = a.shape[1]
    eye = core.to_device(np.ascontiguousarray(np.broadcast_to(
        np.eye(n, dtype=a.dtype), a.shape)))
    return solve(a, eye)


@cuda.jit
def _cholesky(a, out, ok):
    nb, n, _ = a.shape
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, nb, step):
        ok[i] = 1
        for r in range(n):
            for c in range(n):
                out[i, r, c] = 0
        for r in range(n):
            for c in range(r + 1):
                s = (a[i, r, c] + a[i, c, r]) / 2  # the symmetric part, as on the CPU
                for k in range(c):
                    s -= out[i, r, k] * out[i, c, k]
                if r == c:
                    if not s > 0:
                        ok[i] = 0
                        s = 1.0
                    out[i, r, c] = math.sqrt(s)
                else:
                    out[i, r, c] = s / out[i, c, c]


def cholesky(a):
    """The lower Cholesky factor of each matrix's symmetric part."""
    out = core.empty(a.shape, a.dtype)
    ok = core.empty((a.shape[0],), np.int64)
    if a.shape[0]:
        launcher.launch(_cholesky, *_batch(a), a, out, ok)
        launcher.not_replayable("reads back whether a matrix is positive definite")
        if not core.to_host(ok).all():
            raise np.linalg.LinAlgError("Matrix is not positive definite")
    return out


@cuda.jit
def _jacobi(w, v, values, sweeps):
    nb, n, _ = w.shape
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, nb, step):
        for r in range(n):  # the lower triangle, mirrored
            for c in range(r + 1, n):
                w[i, r, c] = w[i, c, r]
            for c in range(n):
                v[i, r, c] = 1.0 if r == c else 0.0
        for _ in range(sweeps):
            off = 0.0
            for p in range(n):
                for q in range(p + 1, n):
                    off += w[i, p, q] * w[i, p, q]
            if off == 0:
                break
            for p in range(n):
                for q in range(p + 1, n):
                    apq = w[i, p, q]
                    if apq == 0:
                        continue
                    theta = (w[i, q, q] - w[i, p, p]) / (2 * apq)
                    t = (1.0 if theta >= 0 else -1.0) / (abs(theta) + math.sqrt(theta * theta + 1))
                    cs = 1 / math.sqrt(t * t + 1)
                    sn = t * cs
                    for k in range(n):  # columns p, q
                        akp, akq = w[i, k, p], w[i, k, q]
                        w[i, k, p] = cs * akp - sn * akq
                        w[i, k, q] = sn * akp + cs * akq
                    for k in range(n):  # rows p, q
                        apk, aqk = w[i, p, k], w[i, q, k]
                        w[i, p, k] = cs * apk - sn * aqk
                        w[i, q, k] = sn * apk + cs * aqk
                    for k in range(n):
                        vkp, vkq = v[i, k, p], v[i, k, q]
                        v[i, k, p] = cs * vkp - sn * vkq
                        v[i, k, q] = sn * vkp + cs * vkq
        for c in range(n):
            values[i, c] = w[i, c, c]
        for c in range(1, n):  # ascending, vectors along (insertion sort)
            j = c
            while j > 0 and values[i, j - 1] > values[i, j]:
                t = values[i, j]
                values[i, j] = values[i, j - 1]
                values[i, j - 1] = t
                for k in range(n):
                    t = v[i, k, j]
                    v[i, k, j] = v[i, k, j - 1]
                    v[i, k, j - 1] = t
                j -= 1
        for c in range(n):  # the CPU's signs: the largest |entry| positive
            best = 0
            for r in range(1, n):
                if abs(v[i, r, c]) > abs(v[i, best, c]):
                    best = r
            if v[i, best, c] < 0:
                for r in range(n):
                    v[i, r, c] = -v[i, r, c]


def eigh(a):
    """(eigenvalues ascending, eigenvectors as columns) of each symmetric matrix."""
    w = _scratch(a)
    v = core.empty(a.shape, a.dtype)
    values = core.empty(a.shape[:2], a.dtype)
    if a.shape[0]:
        launcher.launch(_jacobi, *_batch(a), w, v, values, 50)
    return values, v


@cuda.jit
def _one_sided_jacobi(a, w, r, u, s, v, sweeps, tol):
    # Hestenes' one-sided Jacobi on W = A (or A^T when A is wide, so that W is tall p x q):
    # rotate pairs of W's columns until they are orthogonal, accumulating the rotations in
    # R (q x q); then the column norms are the singular values, W's normalised columns the
    # left vectors and R's columns the right ones (of A^T, swapped back for a wide A).
    nb, m, n = a.shape
    p, q = w.shape[1], w.shape[2]
    wide = n > m
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, nb, step):
        for x in range(p):
            for y in range(q):
                w[i, x, y] = a[i, y, x] if wide else a[i, x, y]
        for x in range(q):
            for y in range(q):
                r[i, x, y] = 1.0 if x == y else 0.0
        for _ in range(sweeps):
            rotated = False
            for c1 in range(q):
                for c2 in range(c1 + 1, q):
                    alpha = 0.0
                    beta = 0.0
                    gamma = 0.0
                    for k in range(p):
                        alpha += w[i, k, c1] * w[i, k, c1]
                        beta += w[i, k, c2] * w[i, k, c2]
                        gamma += w[i, k, c1] * w[i, k, c2]
                    if gamma == 0 or abs(gamma) <= tol * math.sqrt(alpha * beta):
                        continue
                    rotated = True
                    zeta = (beta - alpha) / (2 * gamma)
                    t = (1.0 if zeta >= 0 else -1.0) / (abs(zeta) + math.sqrt(1 + zeta * zeta))
                    cs = 1 / math.sqrt(1 + t * t)
                    sn = cs * t
                    for k in range(p):
                        x1, x2 = w[i, k, c1], w[i, k, c2]
                        w[i, k, c1] = cs * x1 - sn * x2
                        w[i, k, c2] = sn * x1 + cs * x2
                    for k in range(q):
                        x1, x2 = r[i, k, c1], r[i, k, c2]
                        r[i, k, c1] = cs * x1 - sn * x2
                        r[i, k, c2] = sn * x1 + cs * x2
            if not rotated:
                break
        for c in range(q):
            norm = 0.0
            for k in range(p):
                norm += w[i, k, c] * w[i, k, c]
            s[i, c] = math.sqrt(norm)
        for c in range(1, q):  # descending, the vectors along (insertion sort)
            j = c
            while j > 0 and s[i, j - 1] < s[i, j]:
                t = s[i, j]
                s[i, j] = s[i, j - 1]
                s[i, j - 1] = t
                for k in range(p):
                    t = w[i, k, j]
                    w[i, k, j] = w[i, k, j - 1]
                    w[i, k, j - 1] = t
                for k in range(q):
                    t = r[i, k, j]
                    r[i, k, j] = r[i, k, j - 1]
                    r[i, k, j - 1] = t
                j -= 1
        for c in range(q):
            for k in range(p):  # a zero singular value leaves a zero left vector
                left = w[i, k, c] / s[i, c] if s[i, c] > 0 else 0.0
                if wide:
                    v[i, k, c] = left
                else:
                    u[i, k, c] = left
            for k in range(q):
                if wide:
                    u[i, k, c] = r[i, k, c]
                else:
                    v[i, k, c] = r[i, k, c]
        for c in range(q):  # the CPU's signs: each right vector's largest |entry| positive
            best = 0
            for k in range(1, n):
                if abs(v[i, k, c]) > abs(v[i, best, c]):
                    best = k
            if v[i, best, c] < 0:
                for k in range(n):
                    v[i, k, c] = -v[i, k, c]
                for k in range(m):
                    u[i, k, c] = -u[i, k, c]


def svd(a):
    """(U, S, V) of the reduced SVD of each (m, n) matrix: S descending, A = U diag(S) V^T."""
    nb, m, n = a.shape
    k = min(m, n)
    u = core.empty((nb, m, k), a.dtype)
    s = core.empty((nb, k), a.dtype)
    v = core.empty((nb, n, k), a.dtype)
    if nb and k:
        w = core.empty((nb, max(m, n), k), a.dtype)
        r = core.empty((nb, k, k), a.dtype)
        launcher.launch(_one_sided_jacobi, *_batch(a), a, w, r, u, s, v, 60,
                        float(np.finfo(a.dtype).eps))
    return u, s, v
