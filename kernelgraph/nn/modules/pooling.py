"""``torch.nn.modules.pooling``: the pooling layers."""

from ..conv import AvgPool2d, MaxPool2d

__all__ = ["AvgPool2d", "MaxPool2d"]
