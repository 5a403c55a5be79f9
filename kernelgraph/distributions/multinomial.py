"""``torch.distributions.multinomial.Multinomial``."""

from __future__ import annotations

import math

import numpy as np

from .. import devices
from ..eager.creation import tensor
from ..eager.tensors import Tensor
from .categorical import Categorical
from .distribution import Distribution, _as_tensor, _shape

__all__ = ["Multinomial"]


def _log_factorial(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.lgamma, otypes=[np.float64])(x + 1.0)


class Multinomial(Distribution):
    """Counts of ``total_count`` draws from a :class:`Categorical` (``probs`` or ``logits``).
    ``log_prob`` has gradients for the parameters; the log-factorial terms are constants
    computed from the counts (no gradient flows to ``value``)."""

    def __init__(self, total_count: int = 1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int) or isinstance(total_count, bool):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        super().__init__(self._categorical._batch_shape, (self._categorical._num_events,))

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> Tensor:
        """Counts of shape ``sample_shape + batch_shape + (K,)``, in ``probs``' dtype."""
        samples = self._categorical.sample((self.total_count, *_shape(sample_shape)))
        drawn = np.moveaxis(devices.to_numpy(samples._array), 0, -1)
        k = self._categorical._num_events
        counts = (drawn[..., None] == np.arange(k)).sum(axis=-2)
        return tensor(counts.astype(np.dtype(self.probs.dtype)), device=self.probs.device)

    def log_prob(self, value) -> Tensor:
        value = _as_tensor(value, np.dtype(self.logits.dtype).name)
        counts = devices.to_numpy(value._array).astype(np.float64)
        shape = np.broadcast_shapes(counts.shape, tuple(self.logits.shape))
        counts = np.broadcast_to(counts, shape)
        constant = _log_factorial(counts.sum(-1)) - _log_factorial(counts).sum(-1)
        logits = self.logits.expand(*shape)
        # a category with probability 0 and count 0 contributes 0, not 0 * -inf
        zero = (counts == 0) & np.isneginf(devices.to_numpy(logits.detach()._array))
        if zero.any():
            logits = logits.masked_fill(tensor(zero, device=logits.device), 0.0)
        log_powers = (logits * value.to(logits.dtype)).sum(-1)
        return log_powers + tensor(constant.astype(np.dtype(self.logits.dtype)),
                                   device=self.logits.device)

    def __repr__(self):
        return f"Multinomial(total_count: {self.total_count}, probs: {tuple(self.probs.shape)})"
