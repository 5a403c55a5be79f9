"""``torch.nn.modules.normalization``: layer normalisation."""

from ..normalization import LayerNorm

__all__ = ["LayerNorm"]
