"""More activation modules as PyTorch names them: ``LeakyReLU``, ``GELU``, ``ELU``,
``SiLU``, ``Softplus``, ``ReLU6``, ``Hardtanh``, ``Softsign``, ``LogSigmoid``, ``Softmin``
(each calls :mod:`kernelgraph.nn.functional`, so both modes work).

>>> import kernelgraph as kg
>>> kg.nn.LeakyReLU(0.2)
LeakyReLU(negative_slope=0.2)
>>> kg.nn.LeakyReLU(0.5)(kg.tensor([-2.0, 3.0])).tolist()
[-1.0, 3.0]
"""

from __future__ import annotations

from ..eager import Tensor
from ..graph import Node
from . import functional as F
from .module import Module

__all__ = ["ELU", "GELU", "Hardtanh", "LeakyReLU", "LogSigmoid", "ReLU6", "SiLU", "Softmin",
           "Softplus", "Softsign"]


class LeakyReLU(Module):
    """``x`` where positive, ``negative_slope * x`` elsewhere."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return F.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class GELU(Module):
    """``x * Phi(x)``; ``approximate='tanh'`` for the tanh approximation."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class ELU(Module):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return F.elu(x, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class SiLU(Module):
    """``x * sigmoid(x)``."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return F.silu(x)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """``x`` clipped to ``[min_val, max_val]``."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return F.hardtanh(x, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``."""

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return F.softsign(x)


class LogSigmoid(Module):
    """``log(sigmoid(x))``."""

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return F.logsigmoid(x)


class Softmin(Module):
    """``softmax(-x)`` along ``dim``."""

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return F.softmin(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
