"""Datasets as ``torch.utils.data`` has them: ``Dataset``, ``IterableDataset``,
``TensorDataset``, ``Subset``, ``ConcatDataset`` and ``random_split`` (which draws its
permutation from PyTorch's generator, so a seeded split picks the same samples as torch).

>>> import kernelgraph as kg
>>> from kernelgraph.utils.data import TensorDataset, random_split
>>> ds = TensorDataset(kg.arange(6.0).reshape(3, 2), kg.tensor([0, 1, 0]))
>>> x, y = ds[1]
>>> x.tolist(), y.item(), len(ds)
([2.0, 3.0], 1, 3)
>>> _ = kg.manual_seed(0)
>>> [list(s.indices) for s in random_split(range(5), [3, 2])]
[[4, 0, 1], [3, 2]]
"""

from __future__ import annotations

import bisect
import itertools
import math

from ...eager import Tensor
from ...ops import torch_random as R

__all__ = ["ConcatDataset", "Dataset", "IterableDataset", "Subset", "TensorDataset",
           "random_split"]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` (and ``__len__`` for
    a ``DataLoader`` that samples or counts batches)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read as a stream: subclasses define ``__iter__``."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        raise TypeError("IterableDataset does not support concatenation with +")


class TensorDataset(Dataset):
    """Samples ``(t[i] for t in tensors)``: tensors of one first-dimension size.

    >>> import kernelgraph as kg
    >>> TensorDataset(kg.zeros(2, 3), kg.zeros(3))
    Traceback (most recent call last):
    ...
    AssertionError: Size mismatch between tensors
    """

    def __init__(self, *tensors: Tensor):
        assert all(tensors[0].shape[0] == t.shape[0] for t in tensors), \
            "Size mismatch between tensors"
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return [self.dataset[self.indices[i]] for i in idx]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several datasets one after another."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        k = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[k - 1] if k else 0
        return self.datasets[k][idx - start]


def random_split(dataset, lengths, generator=None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping subsets of the given ``lengths`` (or
    fractions summing to 1), at random with ``randperm`` as PyTorch does.
    """
    lengths = list(lengths)
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = R.randperm_array(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]
