"""``DataLoader``: mini-batches of arrays (or of ragged samples), seeded shuffling.

Like PyTorch's ``DataLoader`` but over NumPy: batches are NumPy arrays (feed them to a
``Session`` or wrap them with ``kg.tensor``), and samples of different shapes (sequences
of different lengths) come as lists, ready for :func:`~kernelgraph.data.pad_sequences`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ..errors import shown
from .progress import progress as _progress


def _length(field, what: str) -> int:
    try:
        return len(field)
    except TypeError:
        raise TypeError(f"DataLoader: {what} must be an array, a list or a dataset (with "
                        f"len() and [i]), got {type(field).__name__}") from None


def _take(field, idx: np.ndarray):
    """The items ``idx`` of one field: an array for an array, a list for anything else."""
    if isinstance(field, np.ndarray):
        return field[idx]
    return [field[int(i)] for i in idx]


def _collate(samples: list):
    """Samples (tuples of fields, or single values) -> one batch: per field, a stacked array
    when every sample's value has the same shape, else the list of values (ragged)."""
    first = samples[0]
    if isinstance(first, tuple):
        return tuple(_collate([s[k] for s in samples]) for k in range(len(first)))
    arrays = [np.asarray(s) for s in samples]
    if all(a.shape == arrays[0].shape for a in arrays) and arrays[0].dtype != object:
        return np.stack(arrays)
    return list(samples)


class DataLoader:
    """Iterate ``data`` in batches of ``batch_size`` samples.

    ``data`` is one of:

    - a **tuple of fields** ``(X, y, ...)`` of equal length (arrays or lists): each batch
      is a tuple with the same fields; an array field gives an array, a list field (ragged
      sequences, trees) gives a list;
    - a **single array** or list: each batch is an array or a list;
    - a **dataset**: any object with ``len()`` and ``[i]`` returning a sample (a tuple of
      fields or one value); a field is stacked into an array when every sample in the batch
      has the same shape, and is a list otherwise.

    ``shuffle=True`` draws a new order every epoch (each ``iter()``) from ``seed``: the same
    seed gives the same sequence of orders, epoch after epoch, in every run (``seed=None``:
    a fresh random seed). ``drop_last`` drops a last batch smaller than ``batch_size``.
    ``len()`` is the number of batches. ``progress=True`` (or a description string) shows a
    progress bar for each epoch (see :func:`~kernelgraph.data.progress`).

    >>> import kernelgraph as kg
    >>> X, y = np.arange(10).reshape(5, 2), np.arange(5)
    >>> loader = kg.data.DataLoader((X, y), batch_size=2)
    >>> len(loader), [yb.tolist() for _, yb in loader]
    (3, [[0, 1], [2, 3], [4]])
    >>> loader = kg.data.DataLoader((X, y), batch_size=2, shuffle=True, seed=0, drop_last=True)
    >>> len(loader), sorted(len(yb) for _, yb in loader)
    (2, [2, 2])
    """

    def __init__(self, data, batch_size: int = 1, shuffle: bool = False,
                 seed: int | None = None, drop_last: bool = False,
                 progress: bool | str = False):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer) \
                or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {shown(batch_size)}")
        if isinstance(data, tuple):
            if not data:
                raise ValueError("DataLoader: the tuple of fields is empty")
            lengths = [_length(f, f"field {k}") for k, f in enumerate(data)]
            if len(set(lengths)) != 1:
                raise ValueError(f"DataLoader: every field needs the same number of samples, "
                                 f"got lengths {lengths}")
            self._n, self._fields = lengths[0], data
        elif isinstance(data, np.ndarray | list):
            self._n, self._fields = _length(data, "data"), (data,)
        else:
            self._n, self._fields = _length(data, "data"), None  # a dataset of samples
        self.data, self.batch_size = data, int(batch_size)
        self.shuffle, self.drop_last, self.progress = shuffle, drop_last, progress
        # One seed for the whole life of the loader; epoch k's order comes from (seed, k).
        self.seed = int(np.random.SeedSequence().entropy % 2**63) if seed is None else seed
        self.epoch = 0

    def __len__(self) -> int:
        if self.drop_last:
            return self._n // self.batch_size
        return math.ceil(self._n / self.batch_size)

    def indices(self, epoch: int | None = None) -> np.ndarray:
        """The sample order of ``epoch`` (default: the next one to run), without running it.

        >>> import kernelgraph as kg
        >>> kg.data.DataLoader(np.arange(4), shuffle=True, seed=0).indices(0).tolist()
        [2, 0, 1, 3]
        """
        if not self.shuffle:
            return np.arange(self._n)
        epoch = self.epoch if epoch is None else epoch
        return np.random.default_rng((self.seed, epoch)).permutation(self._n)

    def __iter__(self) -> Iterator:
        order = self.indices()
        self.epoch += 1
        batches = self._batches(order)
        if self.progress:
            desc = self.progress if isinstance(self.progress, str) else None
            return iter(_progress(batches, desc=desc, total=len(self), leave=False))
        return batches

    def _batches(self, order: np.ndarray) -> Iterator:
        stop = len(self) * self.batch_size
        for start in range(0, min(stop, self._n), self.batch_size):
            idx = order[start:start + self.batch_size]
            if self._fields is None:
                yield _collate([self.data[int(i)] for i in idx])
            elif isinstance(self.data, tuple):
                yield tuple(_take(f, idx) for f in self._fields)
            else:
                yield _take(self.data, idx)

    def __repr__(self):
        return (f"DataLoader({self._n} samples, batch_size={self.batch_size}, "
                f"shuffle={self.shuffle}, drop_last={self.drop_last}, {len(self)} batches)")


