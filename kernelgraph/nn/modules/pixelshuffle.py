"""``torch.nn.modules.pixelshuffle``: moving channels into space and back."""

from ..resampling import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
