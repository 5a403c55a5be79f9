"""Matrix functions of batches of square matrices ``[..., n, n]`` (float32/float64):
``matrix_determinant``, ``matrix_inverse``, ``matrix_solve`` (A^-1 B), ``cholesky`` (the
lower factor of the symmetric part ``(A + A^T) / 2``: TF reads the lower triangle instead,
which differs only for an input that is not symmetric, and TF's gradient is this one's) and
the symmetric eigendecomposition ``eigh_values`` / ``eigh_vectors`` (eigenvalues
ascending, eigenvectors as columns, each signed so that its largest entry is positive; the
lower triangle read), and the reduced singular value decomposition ``svd_u`` / ``svd_s`` /
``svd_v`` of matrices ``[..., m, n]`` (A = U diag(S) V^T, S descending, V's columns signed
as the eigenvectors are, U's along; for a zero singular value the CPU's LAPACK gives
orthonormal vectors where the CUDA kernel leaves zeros: the gradient needs distinct nonzero
singular values anyway).

Each gradient rule is the textbook one written with these ops and matmul, as TF's:
``d det = g det A^-T``; ``d inv = -A^-T g A^-T``; for ``X = solve(A, B)``: ``dB =
solve(A^T, g)``, ``dA = -dB X^T``; Cholesky and eigh as TF's ``CholeskyGrad`` and
``SelfAdjointEigV2`` gradient (eigh's is lower-triangular: only that triangle is read); the
SVD's is PyTorch's ``svd_backward`` of the reduced decomposition, split over the three cards
(it is linear in the gradients of U, S and V).

>>> import numpy as np
>>> round(float(matrix_determinant(np.array([[2.0, 1.0], [1.0, 3.0]]))), 6)
5.0
>>> matrix_inverse(np.array([[2.0, 1.0], [0.0, 4.0]])).tolist()
[[0.5, -0.125], [0.0, 0.25]]
"""

from __future__ import annotations

import numpy as np

from .. import devices
from .. import dtypes as D
from ..errors import ShapeError
from ..graph import Node
from ..kernels import matrix as K
from .elementwise import div, mul, neg, sub, where
from .indexing import getitem, normalize_index
from .linalg import matmul
from .registry import define
from .shape import matrix_transpose
from .transfer import to_device

_LAST2 = normalize_index((Ellipsis, None, None))  # [...] -> [..., 1, 1]
_ROW = normalize_index((Ellipsis, None, slice(None)))  # [..., n] -> [..., 1, n]
_COLUMN = normalize_index((Ellipsis, slice(None), None))  # [..., n] -> [..., n, 1]


def _square_infer(what):
    def infer(shapes_, dtypes, attrs):
        s, dt = shapes_[0], D.as_dtype(dtypes[0])
        if dt not in D.FLOATS:
            raise TypeError(f"{what}: the matrices must be float32 or float64, got {dt.name}")
        if s is None:
            return None, dt
        if len(s) < 2 or (s[-1] is not None and s[-2] is not None and s[-1] != s[-2]):
            raise ShapeError(f"{what}: input must be a batch of square matrices [..., n, n], "
                             f"got shape {tuple(s)}")
        return tuple(s), dt
    return infer


def _batched(x):
    return np.ascontiguousarray(x).reshape((-1,) + x.shape[-2:])


def _host(kernel, what, out_shape):
    def forward(a):
        _square_infer(what)([a.shape], [a.dtype], {})
        a3 = _batched(a)
        out = np.empty((a3.shape[0],) + out_shape(a3.shape[1:]), a.dtype)
        kernel(a3, out)
        return out.reshape(a.shape[:-2] + out_shape(a.shape[-2:]))
    return forward


def _device(name, what, out_shape):
    def build(k):
        def forward(a):
            shape = tuple(a.shape)  # (the simulator's shapes take no negative index)
            _square_infer(what)([shape], [a.dtype], {})
            a3 = k.core.copy(a).reshape((-1,) + shape[-2:]) if a.size else \
                k.core.empty((0,) + shape[-2:], a.dtype)
            out = getattr(k.matrix, name)(a3)
            return out.reshape(shape[:-2] + out_shape(shape[-2:]))
        return forward
    return build


def _same(s):
    return tuple(s)


def _scalar(s):
    return ()


# -- determinant and inverse -----------------------------------------------------------------
def _det_infer(shapes_, dtypes, attrs):
    s, dt = _square_infer("matrix_determinant")(shapes_, dtypes, attrs)
    return (None if s is None else s[:-2]), dt


def _det_grad(g, out, needs, attrs, a):
    return (mul(getitem(mul(g, out), index=_LAST2), matrix_transpose(matrix_inverse(a))),)


matrix_determinant = define(
    "matrix_determinant", _host(K.det_batched, "matrix_determinant", _scalar), _det_infer,
    _det_grad, traits=("fresh",), reference=lambda a: np.linalg.det(a).astype(a.dtype),
    cuda=_device("det", "matrix_determinant", _scalar), inputs=1,
    doc="The determinant of each square matrix of [..., n, n].", saves=(0, "out"),
    grad_fn="LinalgDetBackward0")


def _inv_grad(g, out, needs, attrs, a):
    t = matrix_transpose(out)
    return (neg(matmul(matmul(t, g), t)),)


matrix_inverse = define(
    "matrix_inverse", _host(K.inv_batched, "matrix_inverse", _same),
    _square_infer("matrix_inverse"), _inv_grad, traits=("fresh",),
    reference=lambda a: np.linalg.inv(a), cuda=_device("inv", "matrix_inverse", _same),
    inputs=1, doc="The inverse of each square matrix of [..., n, n].", saves=("out",),
    grad_fn="LinalgInvExBackward0")


# -- solve -----------------------------------------------------------------------------------
def _solve_infer(shapes_, dtypes, attrs):
    sa, dt = _square_infer("matrix_solve")(shapes_[:1], dtypes[:1], attrs)
    sb = shapes_[1]
    if D.as_dtype(dtypes[1]) != dt:
        raise TypeError(f"matrix_solve: matrix and rhs must have one dtype, got {dt.name} and "
                        f"{D.as_dtype(dtypes[1]).name}")
    if sa is None or sb is None:
        return sb, dt
    if len(sb) != len(sa) or any(x is not None and y is not None and x != y
                                 for x, y in zip(sa[:-1], sb[:-1])):
        raise ShapeError(f"matrix_solve: rhs of shape {tuple(sb)} does not fit matrices of "
                         f"shape {tuple(sa)} (want [..., n, k])")
    return tuple(sb), dt


def _solve_forward(a, b):
    _solve_infer([a.shape, b.shape], [a.dtype, b.dtype], {})
    a3, b3 = _batched(a), _batched(b)
    out = np.empty(b3.shape, a.dtype)
    K.solve_batched(a3, b3, out)
    return out.reshape(b.shape)


def _solve_cuda(k):
    def forward(a, b):
        sa, sb = tuple(a.shape), tuple(b.shape)
        _solve_infer([sa, sb], [a.dtype, b.dtype], {})
        if not a.size or not b.size:
            return k.core.empty(sb, b.dtype)
        a3 = k.core.copy(a).reshape((-1,) + sa[-2:])
        b3 = k.core.copy(b).reshape((-1,) + sb[-2:])
        return k.matrix.solve(a3, b3).reshape(sb)
    return forward


def _solve_grad(g, out, needs, attrs, a, b):
    db = matrix_solve(matrix_transpose(a), g)
    da = neg(matmul(db, matrix_transpose(out))) if needs[0] else None
    return da, (db if needs[1] else None)


matrix_solve = define(
    "matrix_solve", _solve_forward, _solve_infer, _solve_grad, traits=("fresh",),
    reference=lambda a, b: np.linalg.solve(a, b), cuda=_solve_cuda, inputs=2,
    doc="X with A X = B for each matrix A [..., n, n] and right-hand sides B [..., n, k].",
    saves=(0, ("out", 0)), grad_fn="LinalgSolveExBackward0")


# -- Cholesky --------------------------------------------------------------------------------
def _beside(value: np.ndarray, x):
    """A constant of a gradient rule, on the device of ``x`` (static placement copies it
    there itself; an eager CUDA value needs it there)."""
    dev = devices.device_of(x)
    return value if dev == devices.CPU or isinstance(x, Node) else to_device(value,
                                                                                device=dev.name)


def _lower_mask(n: int, dtype, like) -> np.ndarray:
    """1 below the diagonal, 1/2 on it: TF's 'lower triangle, half the diagonal'."""
    return _beside((np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)).astype(dtype), like)


def _cholesky_grad(g, out, needs, attrs, a):
    n = tuple(out.shape)[-1]
    l_inv = matrix_inverse(out)
    middle = mul(matmul(matrix_transpose(out), g), _lower_mask(n, np.dtype(out.dtype), out))
    grad = matmul(matmul(matrix_transpose(l_inv), middle), l_inv)
    return (mul(grad + matrix_transpose(grad), 0.5),)


cholesky = define(
    "cholesky", _host(K.cholesky_batched, "cholesky", _same), _square_infer("cholesky"),
    _cholesky_grad, traits=("fresh",),
    reference=lambda a: np.linalg.cholesky((a + np.swapaxes(a, -1, -2)) / 2),
    cuda=_device("cholesky", "cholesky", _same), inputs=1,
    doc="The lower Cholesky factor L (A = L L^T) of each symmetric positive-definite matrix "
        "(of its symmetric part (A + A^T) / 2).", saves=("out",),
    grad_fn="LinalgCholeskyExBackward0")


# -- symmetric eigendecomposition ------------------------------------------------------------
def _eigh_forward(which):
    def forward(a):
        _square_infer("eigh")([a.shape], [a.dtype], {})
        a3 = _batched(a)
        values = np.empty(a3.shape[:2], a.dtype)
        vectors = np.empty(a3.shape, a.dtype)
        K.eigh_batched(a3, values, vectors)
        return values.reshape(a.shape[:-1]) if which == "values" else vectors.reshape(a.shape)
    return forward


def _eigh_infer(which):
    def infer(shapes_, dtypes, attrs):
        s, dt = _square_infer("eigh")(shapes_, dtypes, attrs)
        return (s[:-1] if which == "values" and s is not None else s), dt
    return infer


def _eigh_cuda(which):
    def build(k):
        def forward(a):
            shape = tuple(a.shape)
            _square_infer("eigh")([shape], [a.dtype], {})
            if not a.size:
                return k.core.empty(shape[:-1] if which == "values" else shape, a.dtype)
            values, vectors = k.matrix.eigh(k.core.copy(a).reshape((-1,) + shape[-2:]))
            return values.reshape(shape[:-1]) if which == "values" else vectors.reshape(shape)
        return forward
    return build


def _eigh_reference(which):
    def reference(a):
        w, v = np.linalg.eigh(a)
        flat = v.reshape((-1,) + v.shape[-2:]).copy()
        K.fix_signs.py_func(flat)
        return w if which == "values" else flat.reshape(v.shape)
    return reference


def _symmetrized_lower(grad, n, dtype):
    """TF's last step: the forward reads the lower triangle, so the gradient lives there."""
    return mul(grad + matrix_transpose(grad), _lower_mask(n, dtype, grad))


def _eigh_values_grad(g, out, needs, attrs, a):
    v = eigh_vectors(a)
    grad = matmul(mul(v, getitem(g, index=_ROW)), matrix_transpose(v))
    return (_symmetrized_lower(grad, tuple(a.shape)[-1], np.dtype(a.dtype)),)


def _eigh_vectors_grad(g, out, needs, attrs, a):
    e = eigh_values(a)
    n = tuple(a.shape)[-1]
    gap = sub(getitem(e, index=_ROW), getitem(e, index=_COLUMN))  # e_j - e_i
    off = _beside(~np.eye(n, dtype=bool), gap)
    f = where(off, div(1.0, where(off, gap, 1.0)), 0.0)
    inner = mul(f, matmul(matrix_transpose(out), g))
    grad = matmul(matmul(out, inner), matrix_transpose(out))
    return (_symmetrized_lower(grad, n, np.dtype(a.dtype)),)


eigh_values = define(
    "eigh_values", _eigh_forward("values"), _eigh_infer("values"), _eigh_values_grad,
    traits=("fresh",), reference=_eigh_reference("values"), cuda=_eigh_cuda("values"),
    inputs=1, doc="The eigenvalues (ascending) of each symmetric matrix (its lower triangle "
                  "read).", saves=(0,), grad_fn="LinalgEighBackward0")
eigh_vectors = define(
    "eigh_vectors", _eigh_forward("vectors"), _eigh_infer("vectors"), _eigh_vectors_grad,
    traits=("fresh",), reference=_eigh_reference("vectors"), cuda=_eigh_cuda("vectors"),
    inputs=1, doc="The eigenvectors (columns, eigenvalues ascending, largest entry positive) "
                  "of each symmetric matrix (its lower triangle read).", saves=(0, "out"),
    grad_fn="LinalgEighBackward0")


# -- singular value decomposition ------------------------------------------------------------
def _svd_shapes(s):
    """(U, S, V) shapes of the reduced SVD of matrices of shape ``s`` [..., m, n]."""
    m, n = s[-2], s[-1]
    k = None if m is None or n is None else min(m, n)
    return tuple(s[:-2]) + (m, k), tuple(s[:-2]) + (k,), tuple(s[:-2]) + (n, k)


def _svd_infer(which):
    def infer(shapes_, dtypes, attrs):
        s, dt = shapes_[0], D.as_dtype(dtypes[0])
        if dt not in D.FLOATS:
            raise TypeError(f"svd: the matrices must be float32 or float64, got {dt.name}")
        if s is None:
            return None, dt
        if len(s) < 2:
            raise ShapeError(f"svd: input must be a batch of matrices [..., m, n], got shape "
                             f"{tuple(s)}")
        return _svd_shapes(s)["usv".index(which)], dt
    return infer


def _svd_forward(which):
    def forward(a):
        _svd_infer(which)([a.shape], [a.dtype], {})
        a3 = _batched(a)
        shapes = [(a3.shape[0],) + s[1:] for s in _svd_shapes(a3.shape)]
        u, s, v = (np.empty(sh, a.dtype) for sh in shapes)
        if u.size or v.size:
            K.svd_batched(a3, u, s, v)
        out = {"u": u, "s": s, "v": v}[which]
        return out.reshape(_svd_shapes(a.shape)["usv".index(which)])
    return forward


def _svd_cuda(which):
    def build(k):
        def forward(a):
            shape = tuple(a.shape)
            _svd_infer(which)([shape], [a.dtype], {})
            target = _svd_shapes(shape)["usv".index(which)]
            if not a.size:
                return k.core.empty(target, a.dtype)
            u, s, v = k.matrix.svd(k.core.copy(a).reshape((-1,) + shape[-2:]))
            return {"u": u, "s": s, "v": v}[which].reshape(target)
        return forward
    return build


def _svd_reference(which):
    def reference(a):
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        u3 = u.reshape((-1,) + u.shape[-2:]).copy()
        v3 = np.swapaxes(vt, -1, -2).reshape((-1,) + vt.shape[-1:] + vt.shape[-2:-1]).copy()
        K.fix_svd_signs.py_func(u3, v3)
        return {"u": u3.reshape(u.shape), "s": s,
                "v": v3.reshape(a.shape[:-2] + v3.shape[-2:])}[which]
    return reference


def _svd_inverse_gaps(s):
    """F_ij = 1 / (S_j^2 - S_i^2) off the diagonal, 0 on it (distinct singular values)."""
    s2 = mul(s, s)
    gap = sub(getitem(s2, index=_ROW), getitem(s2, index=_COLUMN))
    off = _beside(~np.eye(tuple(s.shape)[-1], dtype=bool), gap)
    return where(off, div(1.0, where(off, gap, 1.0)), 0.0)


def _skew(x):
    return sub(x, matrix_transpose(x))


def _svd_s_grad(g, out, needs, attrs, a):
    # U diag(gS) V^T
    return (matmul(mul(svd_u(a), getitem(g, index=_ROW)), matrix_transpose(svd_v(a))),)


def _svd_u_grad(g, out, needs, attrs, a):
    # PyTorch's svd_backward with only gU: U [skew(U^T gU) F S] V^T, plus the part of gU
    # outside U's span, (I - U U^T) gU S^-1 V^T (zero for a wide or square matrix)
    s, v = svd_s(a), svd_v(a)
    s_row = getitem(s, index=_ROW)
    inner = mul(mul(_skew(matmul(matrix_transpose(out), g)), _svd_inverse_gaps(s)), s_row)
    g_sinv = div(g, s_row)
    outside = sub(g_sinv, matmul(out, matmul(matrix_transpose(out), g_sinv)))
    return (matmul(matmul(out, inner) + outside, matrix_transpose(v)),)


def _svd_v_grad(g, out, needs, attrs, a):
    # with only gV: U [S skew(V^T gV) F V^T + S^-1 gV^T (I - V V^T)]
    u, s = svd_u(a), svd_s(a)
    inner = mul(getitem(s, index=_COLUMN),
                mul(_skew(matmul(matrix_transpose(out), g)), _svd_inverse_gaps(s)))
    g_sinv_t = matrix_transpose(div(g, getitem(s, index=_ROW)))
    outside = sub(g_sinv_t, matmul(matmul(g_sinv_t, out), matrix_transpose(out)))
    return (matmul(u, matmul(inner, matrix_transpose(out)) + outside),)


_SVD_DOC = ("of the reduced singular value decomposition A = U diag(S) V^T of each matrix of "
            "[..., m, n] (k = min(m, n); S descending; each column of V signed so that its "
            "largest entry is positive, U's column along). The gradient is PyTorch's, for "
            "distinct nonzero singular values.")
svd_u = define(
    "svd_u", _svd_forward("u"), _svd_infer("u"), _svd_u_grad, traits=("fresh",),
    reference=_svd_reference("u"), cuda=_svd_cuda("u"), inputs=1,
    doc="U [..., m, k] " + _SVD_DOC, saves=(0, "out"), grad_fn="LinalgSvdBackward0")
svd_s = define(
    "svd_s", _svd_forward("s"), _svd_infer("s"), _svd_s_grad, traits=("fresh",),
    reference=_svd_reference("s"), cuda=_svd_cuda("s"), inputs=1,
    doc="The singular values S [..., k] " + _SVD_DOC, saves=(0,), grad_fn="LinalgSvdBackward0")
svd_v = define(
    "svd_v", _svd_forward("v"), _svd_infer("v"), _svd_v_grad, traits=("fresh",),
    reference=_svd_reference("v"), cuda=_svd_cuda("v"), inputs=1,
    doc="V [..., n, k] " + _SVD_DOC, saves=(0, "out"), grad_fn="LinalgSvdBackward0")
