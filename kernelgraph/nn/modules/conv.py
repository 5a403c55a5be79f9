"""``torch.nn.modules.conv``: the convolutions."""

from ..conv import Conv2d
from ..conv_more import Conv1d, Conv3d, ConvTranspose1d, ConvTranspose2d

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d"]
