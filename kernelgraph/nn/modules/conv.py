"""``torch.nn.modules.conv``: the convolution."""

from ..conv import Conv2d

__all__ = ["Conv2d"]
