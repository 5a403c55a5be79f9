"""Loss modules with PyTorch's names, arguments and ``reduction``: ``MSELoss``,
``L1Loss``, ``SmoothL1Loss``, ``CrossEntropyLoss``, ``NLLLoss``, ``BCELoss``,
``BCEWithLogitsLoss`` (each calls :mod:`kernelgraph.nn.functional`; both modes).

>>> import kernelgraph as kg
>>> loss = kg.nn.CrossEntropyLoss()(kg.tensor([[2.0, 0.0], [0.0, 2.0]]), kg.tensor([0, 1]))
>>> round(loss.item(), 4)
0.1269
>>> kg.nn.MSELoss(reduction="sum")
MSELoss()
"""

from __future__ import annotations

from .. import dtypes as D
from ..eager import Tensor
from ..errors import shown
from ..graph import Node, shape_str
from . import functional as F
from .layers import as_input, shape_of
from .module import Module

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss",
           "SmoothL1Loss"]

_REDUCTIONS = ("mean", "sum", "none")


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        reduction = F._legacy_reduction(size_average, reduce, reduction)
        if reduction not in _REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction must be one of "
                             f"{', '.join(map(repr, _REDUCTIONS))}, got {shown(reduction)}")
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


def _broadcastable(what: str, a, b) -> None:
    """PyTorch broadcasts a target of another shape (with a warning): refuse only shapes
    that do not broadcast, naming both."""
    a, b = shape_of(a), shape_of(b)
    if a is None or b is None:
        return
    for x, y in zip(reversed(a), reversed(b)):
        if x is not None and y is not None and x != y and 1 not in (x, y):
            raise ValueError(f"{what}: input {shape_str(a)} and target {shape_str(b)} must "
                             "have the same shape (or broadcast)")


class MSELoss(_Loss):
    """Squared error ``(input - target) ** 2``, reduced (``torch.nn.MSELoss``).

    >>> import kernelgraph as kg
    >>> kg.nn.MSELoss()(kg.tensor([1.0, 2.0]), kg.tensor([0.0, 0.0])).item()
    2.5
    """

    def forward(self, input: Tensor | Node, target: Tensor | Node  # noqa: A002 - torch name
                ) -> Tensor | Node:
        x, t = as_input("MSELoss", input), as_input("MSELoss", target)
        _broadcastable("MSELoss", x, t)
        return F.mse_loss(x, t, reduction=self.reduction)


class L1Loss(_Loss):
    """Absolute error ``|input - target|``, reduced (``torch.nn.L1Loss``).

    >>> import kernelgraph as kg
    >>> kg.nn.L1Loss()(kg.tensor([1.0, -3.0]), kg.zeros(2)).item()
    2.0
    """

    def forward(self, input, target):  # noqa: A002
        x, t = as_input("L1Loss", input), as_input("L1Loss", target)
        _broadcastable("L1Loss", x, t)
        return F.l1_loss(x, t, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Huber-like loss with threshold ``beta`` (``torch.nn.SmoothL1Loss``)."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):  # noqa: A002
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class CrossEntropyLoss(_WeightedLoss):
    """Softmax cross-entropy of logits (N, C) against class ids (N,) or class
    probabilities (N, C) (``torch.nn.CrossEntropyLoss``; ``weight``, ``ignore_index``,
    ``label_smoothing`` as there).

    >>> import kernelgraph as kg
    >>> kg.nn.CrossEntropyLoss(reduction="sum")(kg.zeros(2, 4), kg.tensor([0, 3])).item()
    2.7725887298583984
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):  # noqa: A002
        logits = as_input("CrossEntropyLoss", input)
        target = as_input("CrossEntropyLoss", target)
        shape = shape_of(logits)
        if target.dtype not in D.INTS and shape_of(target) != shape:
            raise TypeError(f"CrossEntropyLoss: expected integer class targets (N,) of int32 "
                            f"or int64 (or class probabilities of the logits' shape), got "
                            f"{target.dtype.name} {shape_str(shape_of(target))}")
        if target.dtype in D.INTS and shape is not None and len(shape) == 1 and \
                shape_of(target) not in ((), None):
            raise ValueError(f"CrossEntropyLoss: expected logits of shape (N, C), got "
                             f"{shape_str(shape)} (with class targets of shape "
                             f"{shape_str(shape_of(target))})")
        return F.cross_entropy(logits, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of log-probabilities (N, C) at class ids (N,)
    (``torch.nn.NLLLoss``; put a ``LogSoftmax(dim=1)`` before it).

    >>> import kernelgraph as kg
    >>> kg.nn.NLLLoss()(kg.tensor([[-1.0, -2.0]]), kg.tensor([1])).item()
    2.0
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):  # noqa: A002
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities in [0, 1] (``torch.nn.BCELoss``).

    >>> import kernelgraph as kg
    >>> round(kg.nn.BCELoss()(kg.tensor([0.5]), kg.tensor([1.0])).item(), 4)
    0.6931
    """

    def forward(self, input, target):  # noqa: A002
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """Binary cross-entropy of logits, computed stably (``torch.nn.BCEWithLogitsLoss``).

    >>> import kernelgraph as kg
    >>> round(kg.nn.BCEWithLogitsLoss()(kg.tensor([0.0]), kg.tensor([1.0])).item(), 4)
    0.6931
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight=None):
        super().__init__(weight, size_average, reduce, reduction)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)
