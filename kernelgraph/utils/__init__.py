"""``kg.utils`` (``torch.utils``): :mod:`kernelgraph.utils.data`, PyTorch's datasets and
data loaders.

>>> import kernelgraph as kg
>>> from kernelgraph.utils.data import DataLoader, TensorDataset
>>> len(DataLoader(TensorDataset(kg.zeros(10, 2)), batch_size=4))
3
"""

from . import data

__all__ = ["data"]
