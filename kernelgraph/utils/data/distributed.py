"""``torch.utils.data.distributed.DistributedSampler``: each process of a process group
takes its own share of the dataset's indices, as PyTorch deals them.

>>> s = DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False)
>>> list(s), len(s)
([1, 3, 0], 3)
"""

from __future__ import annotations

import math

from ...distributed import process_group as pg
from ...ops import torch_random as R
from .loader import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Indices for replica ``rank`` of ``num_replicas`` (by default the process group's rank
    and world size): shuffled per epoch from ``seed + epoch`` (call :meth:`set_epoch` at
    each epoch), padded by repeating indices so that every replica gets as many (or, with
    ``drop_last``, trimmed)."""

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False):
        if num_replicas is None:
            num_replicas = pg.get_world_size()
        if rank is None:
            rank = pg.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = R.Generator().manual_seed(self.seed + self.epoch)
            indices = R.randperm_array(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Shuffle differently at this epoch (every replica must call it with the same
        number)."""
        self.epoch = epoch
