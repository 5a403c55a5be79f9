"""``torch.nn.modules.pooling``: the pooling layers."""

from ..conv import AvgPool2d, MaxPool2d
from ..conv_more import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    MaxPool1d,
)

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "AvgPool1d",
           "AvgPool2d", "MaxPool1d", "MaxPool2d"]
