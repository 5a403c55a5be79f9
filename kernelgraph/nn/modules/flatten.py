"""``torch.nn.modules.flatten``: ``Flatten``."""

from ..layers import Flatten

__all__ = ["Flatten"]
