"""CUDA forwards of the matrix functions (kernelgraph/ops/matrix.py): one thread per matrix
of the batch, each working in its own slice of a scratch copy -- Gaussian elimination with
partial pivoting (determinant, inverse, solve), the Cholesky-Banachiewicz recurrence, and
cyclic Jacobi rotations for the symmetric eigendecomposition (eigenvalues ascending,
eigenvectors signed as on the CPU). Small matrices, as a teaching framework's are: the
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
