"""``DataLoader`` and its samplers as ``torch.utils.data`` has them, drawing from PyTorch's
generator exactly as torch does (one 64-bit draw per epoch for the loader's base seed,
then, when shuffling, one for the sampler's own generator and its ``randperm``), so a
seeded program sees the same batches, and the same random numbers after them, as in torch.

>>> import kernelgraph as kg
>>> from kernelgraph.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(kg.arange(5.0), kg.tensor([0, 1, 0, 1, 0]))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
[[0, 1], [0, 1], [0]]
>>> _ = kg.manual_seed(0)
>>> [x.tolist() for x, _ in DataLoader(ds, batch_size=2, shuffle=True)]
[[1.0, 4.0], [2.0, 3.0], [0.0]]
"""

from __future__ import annotations

import collections.abc as abc
import itertools

import numpy as np

from ... import ops as O
from ...eager import Tensor, tensor
from ...ops import torch_random as R
from .dataset import IterableDataset, TensorDataset

__all__ = ["BatchSampler", "DataLoader", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "default_collate"]


def _random64(generator=None) -> int:
    """``torch.empty((), dtype=torch.int64).random_(generator=...)``: 64 bits mod 2**63."""
    return R._gen(generator).random64() % (1 << 63)


class Sampler:
    """Base class of index samplers."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Indices ``0 .. len(data_source) - 1`` in order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation per epoch (``torch.utils.data.RandomSampler``): without a
    ``generator`` it seeds a fresh one from PyTorch's default generator at each epoch."""

    def __init__(self, data_source, replacement: bool = False, num_samples=None,
                 generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if self.generator is None:
            generator = R.Generator().manual_seed(_random64())
        else:
            generator = self.generator
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from R.randint_array(0, n, (32,), generator=generator).tolist()
            yield from R.randint_array(0, n, (self.num_samples % 32,),
                                       generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from R.randperm_array(n, generator=generator).tolist()
            yield from R.randperm_array(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order per epoch."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in R.randperm_array(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler`` (the last one shorter unless
    ``drop_last``)."""

    def __init__(self, sampler, batch_size: int, drop_last: bool):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            yield from (list(b) for b in zip(*[it] * self.batch_size))
            return
        batch = list(itertools.islice(it, self.batch_size))
        while batch:
            yield batch
            batch = list(itertools.islice(it, self.batch_size))

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def default_collate(batch):
    """Stack a list of samples into a batch as PyTorch's ``default_collate``: tensors and
    arrays stacked, Python floats to a float64 tensor, ints to int64, tuples and lists
    collated per position (a list), dicts per key.

    >>> default_collate([(1.0, 2), (3.0, 4)])
    [tensor([1., 3.], dtype=torch.float64), tensor([2, 4])]
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        if all(type(t._array) is np.ndarray and not t.requires_grad for t in batch):
            return tensor(np.stack([t._array for t in batch]))
        return O.stack(list(batch), axis=0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "US O":
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, "
                            f"numbers, dicts or lists; found {elem.dtype}")
        return tensor(np.stack(batch))
    if isinstance(elem, np.generic):
        return tensor(np.array(batch))
    if isinstance(elem, float):
        return tensor(np.array(batch, np.float64))
    if isinstance(elem, bool):
        return tensor(np.array(batch, np.bool_))
    if isinstance(elem, int):
        return tensor(np.array(batch, np.int64))
    if isinstance(elem, str | bytes):
        return list(batch)
    if isinstance(elem, abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(elem).__name__}")


def _fast_tensor_batch(dataset: TensorDataset, indices: list):
    """A TensorDataset's batch in one indexing per tensor (the values default_collate would
    stack), or None when a tensor needs autograd or lives on a GPU."""
    if not all(type(t._array) is np.ndarray and not t.requires_grad for t in dataset.tensors):
        return None
    idx = np.asarray(indices, np.int64)
    return [tensor(np.ascontiguousarray(t._array[idx])) for t in dataset.tensors]


class DataLoader:
    """Batches of a dataset (``torch.utils.data.DataLoader``): ``batch_size``, ``shuffle``,
    ``drop_last``, ``sampler`` / ``batch_sampler``, ``collate_fn``, ``generator``.
    ``num_workers`` and ``pin_memory`` are accepted and the data are loaded in this
    process (the batches are the same)."""

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True):
        self.dataset = dataset
        self.batch_size, self.drop_last = batch_size, drop_last
        self.num_workers, self.generator = num_workers, generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False) or sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 "shuffle, sampler and batch_sampler options")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
            self.batch_size, self.drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle \
                else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self._auto_collate = collate_fn is None
        self.collate_fn = default_collate if collate_fn is None else collate_fn

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __iter__(self):
        indices = iter(self.batch_sampler if self.batch_sampler is not None
                       else self.sampler if not self._iterable else ())
        _random64(self.generator)  # torch's _BaseDataLoaderIter draws its base seed here
        return self._batches(indices)

    def _batches(self, indices):
        if self._iterable:
            yield from self._iterable_batches()
            return
        fast = self._auto_collate and type(self.dataset) is TensorDataset
        for index in indices:
            if self.batch_sampler is None:  # batch_size=None: samples, not batches
                yield self.collate_fn(self.dataset[index]) if not self._auto_collate \
                    else self.dataset[index]
                continue
            batch = _fast_tensor_batch(self.dataset, index) if fast else None
            if batch is None:
                getitems = getattr(self.dataset, "__getitems__", None)
                samples = getitems(index) if getitems else [self.dataset[i] for i in index]
                batch = self.collate_fn(samples)
            yield batch

    def _iterable_batches(self):
        it = iter(self.dataset)
        if self.batch_size is None:
            yield from it
            return
        while True:
            samples = list(itertools.islice(it, self.batch_size))
            if not samples or (self.drop_last and len(samples) < self.batch_size):
                return
            yield self.collate_fn(samples)

