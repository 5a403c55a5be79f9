"""``kg.utils.data`` (``torch.utils.data``): ``Dataset``, ``TensorDataset``, ``Subset``,
``ConcatDataset``, ``random_split``, ``DataLoader`` and its samplers, with PyTorch's
batches and PyTorch's random draws.

>>> import kernelgraph as kg
>>> from kernelgraph.utils.data import DataLoader, TensorDataset
>>> loader = DataLoader(TensorDataset(kg.ones(5, 2), kg.zeros(5)), batch_size=2,
...                     drop_last=True)
>>> [tuple(x.shape) for x, y in loader]
[(2, 2), (2, 2)]
"""

from . import dataloader, distributed, sampler
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .loader import (
    BatchSampler,
    DataLoader,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    default_collate,
)

__all__ = ["BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
           "TensorDataset", "default_collate", "random_split"]
from .distributed import DistributedSampler  # noqa: E402
from .sampler import WeightedRandomSampler  # noqa: E402

__all__ += ["DistributedSampler", "WeightedRandomSampler", "dataloader", "distributed",
            "sampler"]
