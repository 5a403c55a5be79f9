"""The base class of the distributions, and the helpers they share."""

from __future__ import annotations

from ..eager.creation import tensor
from ..eager.printing import Size
from ..eager.tensors import Tensor

__all__ = ["Distribution"]


def _as_tensor(x, dtype=None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    return tensor(x, dtype=dtype or "float32")


def _shape(sample_shape) -> tuple:
    if isinstance(sample_shape, int):
        return (sample_shape,)
    return tuple(int(s) for s in sample_shape)


class Distribution:
    """Base class: ``batch_shape``, ``event_shape``, ``sample``, ``log_prob``, ``entropy``."""

    has_rsample = False

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape, self._event_shape = tuple(batch_shape), tuple(event_shape)

    @property
    def batch_shape(self) -> Size:
        return Size(self._batch_shape)

    @property
    def event_shape(self) -> Size:
        return Size(self._event_shape)

    def _extended_shape(self, sample_shape=()) -> tuple:
        return _shape(sample_shape) + self._batch_shape + self._event_shape

    def sample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} does not implement sample")

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} does not implement rsample")

    def log_prob(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def __repr__(self):
        return f"{type(self).__name__}()"
