"""``torch.nn.modules.module``: the base class."""

from ..module import Module

__all__ = ["Module"]
