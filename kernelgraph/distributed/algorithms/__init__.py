"""``torch.distributed.algorithms``: the activation-checkpoint wrapper
(:mod:`._checkpoint.checkpoint_wrapper`)."""

from . import _checkpoint

__all__ = ["_checkpoint"]
