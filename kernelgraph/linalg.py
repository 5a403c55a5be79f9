"""``torch.linalg``: what kernelgraph has of it, the singular value decomposition
(``torch.linalg.svd`` -> ``(U, S, Vh)``, ``torch.linalg.svdvals``) over the svd cards of
ops/matrix.py (see ops/torch_svd.py).

>>> import kernelgraph as kg
>>> kg.linalg.svdvals(kg.tensor([[0.0, 2.0], [1.0, 0.0]]))
tensor([2., 1.])
"""

from __future__ import annotations

from .ops.torch_svd import linalg_svd as svd
from .ops.torch_svd import svdvals

__all__ = ["svd", "svdvals"]
