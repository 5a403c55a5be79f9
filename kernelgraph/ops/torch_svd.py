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

__all__ = ["eig", "svd"]


class _SvdResult(tuple):
    """``torch.return_types.svd``: ``.U``, ``.S``, ``.V``, unpacking and indexing."""

    __slots__ = ()

    def __new__(cls, u, s, v):
        return super().__new__(cls, (u, s, v))

    U = property(lambda self: self[0])
    S = property(lambda self: self[1])
    V = property(lambda self: self[2])

    def __repr__(self):
        return f"torch.return_types.svd(\nU={self[0]!r},\nS={self[1]!r},\nV={self[2]!r})"


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
    if not some and len(shape) >= 2 and shape[-1] != shape[-2]:
        raise NotImplementedError(
            f"svd(some=False): kernelgraph computes the reduced decomposition only; for a "
            f"non-square matrix (shape {shape}) use some=True")
    return _SvdResult(svd_u(input), svd_s(input), svd_v(input))


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
