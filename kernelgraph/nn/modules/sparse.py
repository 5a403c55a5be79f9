"""``torch.nn.modules.sparse``: the embeddings."""

from ..extras import EmbeddingBag
from ..layers import Embedding

__all__ = ["Embedding", "EmbeddingBag"]
