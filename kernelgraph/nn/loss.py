"""Loss modules: ``CrossEntropyLoss`` and ``MSELoss`` with PyTorch's ``reduction``.

>>> import kernelgraph as kg
>>> loss = kg.nn.CrossEntropyLoss()(kg.tensor([[2.0, 0.0], [0.0, 2.0]]), kg.tensor([0, 1]))
>>> round(loss.item(), 4)
0.1269
"""

from __future__ import annotations

from .. import dtypes as D
from .. import ops as O
from ..eager import Tensor
from ..errors import shown
from ..graph import Node, shape_str
from .layers import as_input, shape_of
from .module import Module

__all__ = ["CrossEntropyLoss", "MSELoss"]

_REDUCTIONS = ("mean", "sum", "none")


class _Loss(Module):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        if reduction not in _REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction must be one of "
                             f"{', '.join(map(repr, _REDUCTIONS))}, got {shown(reduction)}")
        self.reduction = reduction

    def _reduce(self, per_element):
        if self.reduction == "mean":
            return O.mean(per_element)
        if self.reduction == "sum":
            return O.sum(per_element)
        return per_element

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction={self.reduction!r}"


class CrossEntropyLoss(_Loss):
    """Softmax cross-entropy of logits (N, C) against integer class targets (N,)
    (``torch.nn.CrossEntropyLoss``); one fused op per example, then the reduction.

    >>> import kernelgraph as kg
    >>> kg.nn.CrossEntropyLoss(reduction="sum")(kg.zeros(2, 4), kg.tensor([0, 3])).item()
    2.7725887298583984
    """

    def forward(self, input: Tensor | Node, target: Tensor | Node  # noqa: A002 - torch name
                ) -> Tensor | Node:
        logits = as_input("CrossEntropyLoss", input)
        target = as_input("CrossEntropyLoss", target)
        shape = shape_of(logits)
        if shape is not None and len(shape) != 2:
            raise ValueError(f"CrossEntropyLoss: expected logits of shape (N, C), got "
                             f"{shape_str(shape)}")
        if target.dtype not in D.INTS:
            raise TypeError(f"CrossEntropyLoss: expected integer class targets (N,) of int32 "
                            f"or int64, got {target.dtype.name}")
        return self._reduce(O.softmax_cross_entropy(logits, target))


class MSELoss(_Loss):
    """Squared error ``(input - target) ** 2``, reduced (``torch.nn.MSELoss``); the two
    must have the same shape.

    >>> import kernelgraph as kg
    >>> kg.nn.MSELoss()(kg.tensor([1.0, 2.0]), kg.tensor([0.0, 0.0])).item()
    2.5
    """

    def forward(self, input: Tensor | Node, target: Tensor | Node  # noqa: A002 - torch name
                ) -> Tensor | Node:
        prediction = as_input("MSELoss", input)
        target = as_input("MSELoss", target)
        a, b = shape_of(prediction), shape_of(target)
        if a is not None and b is not None and (len(a) != len(b) or any(
                x is not None and y is not None and x != y for x, y in zip(a, b))):
            raise ValueError(f"MSELoss: input {shape_str(a)} and target {shape_str(b)} must "
                             "have the same shape")
        return self._reduce(O.square(O.sub(prediction, target)))
