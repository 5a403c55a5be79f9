"""``torch.distributed.algorithms._checkpoint``: see :mod:`.checkpoint_wrapper`."""

from . import checkpoint_wrapper

__all__ = ["checkpoint_wrapper"]
