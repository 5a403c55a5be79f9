"""``torch.nn.modules.dropout``: dropout."""

from ..layers import Dropout

__all__ = ["Dropout"]
