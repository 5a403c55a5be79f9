"""``kg.utils`` (``torch.utils``): :mod:`kernelgraph.utils.data`, PyTorch's datasets and
data loaders, and :mod:`kernelgraph.utils.checkpoint` (recompute in backward).

>>> import kernelgraph as kg
>>> from kernelgraph.utils.data import DataLoader, TensorDataset
>>> len(DataLoader(TensorDataset(kg.zeros(10, 2)), batch_size=4))
3
"""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
