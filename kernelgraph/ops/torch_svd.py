"""PyTorch's ``torch.svd`` (also the method ``x.svd()``) over the SVD cards of
ops/matrix.py, and ``torch.eig``, which PyTorch keeps only to say it was removed.

``torch.svd(A)`` returns the named tuple ``(U, S, V)`` of the reduced decomposition
``A = U diag(S) V^T`` (``V``, not PyTorch's ``linalg.svd``'s ``Vh``); the signs of singular
vectors are the solver's choice in PyTorch, and here each column of ``V`` is signed so that
its largest entry is positive (``U`` along), the same on every device.

>>> import kernelgraph as kg
>>> u, s, v = kg.svd(kg.tensor([[3.0, 0.0], [0.0, -2.0]]))
>>> s
tensor([3., 2.])
>>> (u @ kg.diag(s) @ v.T).tolist()
[[3.0, 0.0], [0.0, -2.0]]
"""

from __future__ import annotations

from .elementwise import zeros_like
from .linalg import matmul
from .matrix import svd_s, svd_u, svd_v
from .methods import METHODS, _function_method
from .shape import matrix_transpose

__all__ = ["eig", "svd"]  # linalg_svd, svdvals: kernelgraph/linalg.py


class _Triple(tuple):
    """A named triple like PyTorch's ``torch.return_types``: unpacking, indexing, its repr."""

    __slots__ = ()
    _name, _fields = "", ()

    def __new__(cls, first, second, third):
        return super().__new__(cls, (first, second, third))

    def __repr__(self):
        items = ",\n".join(f"{f}={x!r}" for f, x in zip(self._fields, self))
        return f"torch.return_types.{self._name}(\n{items})"


class _SvdResult(_Triple):
    """``torch.return_types.svd``: ``.U``, ``.S``, ``.V``."""

    __slots__ = ()
    _name, _fields = "svd", ("U", "S", "V")
    U = property(lambda self: self[0])
    S = property(lambda self: self[1])
    V = property(lambda self: self[2])


class _LinalgSvdResult(_Triple):
    """``torch.return_types.linalg_svd``: ``.U``, ``.S``, ``.Vh``."""

    __slots__ = ()
    _name, _fields = "linalg_svd", ("U", "S", "Vh")
    U = property(lambda self: self[0])
    S = property(lambda self: self[1])
    Vh = property(lambda self: self[2])


def _non_square(shape) -> bool:
    """Known to be non-square (a static shape may leave a dimension open)."""
    return len(shape) >= 2 and None not in shape[-2:] and shape[-1] != shape[-2]


def svd(input, some: bool = True, compute_uv: bool = True, *, out=None):  # noqa: A002
    """``torch.svd``: ``(U, S, V)`` with ``input = U diag(S) V^T`` for each matrix of
    ``[..., m, n]``: ``U`` [..., m, k], ``S`` [..., k] descending, ``V`` [..., n, k]
    (k = min(m, n)). With ``compute_uv=False`` ``U`` and ``V`` are zeros of shape
    [..., m, m] and [..., n, n], as PyTorch's. Differentiable for distinct nonzero
    singular values (grad_fn ``LinalgSvdBackward0``). ``some=False`` (the full ``U`` or
    ``V`` of a non-square matrix) is not supported.
    """
    if out is not None:
        raise TypeError("svd(): out= is not supported; assign the result instead")
    if not compute_uv:
        return _SvdResult(zeros_like(matmul(input, matrix_transpose(input))), svd_s(input),
                          zeros_like(matmul(matrix_transpose(input), input)))
    shape = tuple(input.shape)
    if not some and _non_square(shape):
        raise NotImplementedError(
            f"svd(some=False): kernelgraph computes the reduced decomposition only; for a "
            f"non-square matrix (shape {shape}) use some=True")
    return _SvdResult(svd_u(input), svd_s(input), svd_v(input))


def linalg_svd(A, full_matrices: bool = True, *, driver=None, out=None):  # noqa: N803
    """``torch.linalg.svd``: ``(U, S, Vh)`` with ``A = U diag(S) Vh`` (``Vh`` = ``V^T`` of
    :func:`svd`). ``full_matrices=True`` (PyTorch's default) is the same as ``False`` for
    square matrices; the full ``U`` or ``Vh`` of a non-square matrix is not supported
    (``full_matrices=False`` gives its reduced decomposition). ``Vh`` is the transpose of the
    card's ``V``, so its ``grad_fn`` is ``TransposeBackward0`` (PyTorch's: the SVD's own)."""
    if out is not None:
        raise TypeError("linalg.svd(): out= is not supported; assign the result instead")
    shape = tuple(A.shape)
    if full_matrices and _non_square(shape):
        raise NotImplementedError(
            f"linalg.svd(full_matrices=True): kernelgraph computes the reduced decomposition "
            f"only; for a non-square matrix (shape {shape}) pass full_matrices=False")
    return _LinalgSvdResult(svd_u(A), svd_s(A), matrix_transpose(svd_v(A)))


def svdvals(A, *, driver=None, out=None):  # noqa: N803
    """``torch.linalg.svdvals``: the singular values of each matrix, descending."""
    if out is not None:
        raise TypeError("linalg.svdvals(): out= is not supported; assign the result instead")
    return svd_s(A)


_EIG_REMOVED = (
    "This function was deprecated since version 1.9 and is now removed. `torch.linalg.eig` "
    "returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors "
    "mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\n"
    "L_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) "
    "should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)")


def eig(input, eigenvectors: bool = False, *, e=None, v=None):  # noqa: A002
    """``torch.eig``: removed from PyTorch, which keeps the name only to raise this
    RuntimeError pointing to ``torch.linalg.eig``; kernelgraph raises the same."""
    raise RuntimeError(_EIG_REMOVED)


METHODS.setdefault("svd", _function_method(svd))
