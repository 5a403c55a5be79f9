"""``torch.utils.data.sampler``: the samplers (``from torch.utils.data.sampler import
SubsetRandomSampler``), and :class:`WeightedRandomSampler`.

>>> import kernelgraph as kg
>>> g = kg.Generator().manual_seed(0)
>>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 3, generator=g))
[1, 1, 1]
"""

from __future__ import annotations

from ...eager.creation import tensor
from ...eager.random_creation import multinomial
from ...eager.tensors import Tensor
from .loader import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``
    (``torch.multinomial`` over the float64 weights, so a seeded program draws PyTorch's
    indices)."""

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None):
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or \
                num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = weights.double() if isinstance(weights, Tensor) else tensor(weights, dtype="float64")
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights, self.num_samples = w, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self):
        drawn = multinomial(self.weights, self.num_samples, self.replacement,
                            generator=self.generator)
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples
