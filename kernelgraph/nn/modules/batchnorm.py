"""``torch.nn.modules.batchnorm``: batch normalisation."""

from ..normalization import BatchNorm1d, BatchNorm2d

__all__ = ["BatchNorm1d", "BatchNorm2d"]
