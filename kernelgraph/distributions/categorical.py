"""``torch.distributions.categorical.Categorical``."""

from __future__ import annotations

import numpy as np

from ..eager.creation import arange
from ..eager.grad_mode import no_grad
from ..eager.printing import Size
from ..eager.random_creation import multinomial as _draw_categories
from ..eager.tensors import Tensor
from .distribution import Distribution, _as_tensor, _shape

__all__ = ["Categorical"]


class Categorical(Distribution):
    """One of ``K`` categories, with ``probs`` (non-negative, normalised here) or ``logits``
    (unnormalised log-probabilities) over the last dimension.

    >>> import kernelgraph as kg
    >>> _ = kg.manual_seed(0)
    >>> Categorical(logits=kg.zeros(4)).sample((3,)).tolist()
    [3, 2, 1]
    """

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            probs = _as_tensor(probs)
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            eps = float(np.finfo(np.dtype(self.probs.dtype)).eps)
            self.logits = self.probs.clamp(eps, 1 - eps).log()
        else:
            logits = _as_tensor(logits)
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self.probs = self.logits.softmax(-1)
        self._num_events = self.probs.shape[-1]
        super().__init__(tuple(self.probs.shape[:-1]))

    @property
    def param_shape(self) -> Size:
        return Size(self.probs.shape)

    def sample(self, sample_shape=()) -> Tensor:
        """Category indices (int64) of shape ``sample_shape + batch_shape``."""
        n = int(np.prod(_shape(sample_shape), dtype=np.int64))
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = _draw_categories(probs_2d, n, True).t()
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value) -> Tensor:
        """``log p(value)`` (broadcast against ``batch_shape``)."""
        value = _as_tensor(value, "int64").long()
        if value.dtype.kind not in "iu":
            raise ValueError("Categorical.log_prob expects integer category indices")
        shape = np.broadcast_shapes(tuple(value.shape) + (1,), tuple(self.logits.shape))
        rows = int(np.prod(shape[:-1], dtype=np.int64))
        index = value.unsqueeze(-1).expand(*shape[:-1], 1).reshape(rows)
        log_pmf = self.logits.expand(*shape).reshape(rows, shape[-1])
        # PyTorch's log_pmf.gather(-1, value): one entry per row, with its gradient
        return log_pmf[arange(rows), index].reshape(shape[:-1])

    def entropy(self) -> Tensor:
        """``-sum p log p`` over the categories."""
        min_real = float(np.finfo(np.dtype(self.logits.dtype)).min)
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def __repr__(self):
        return f"Categorical(probs: {tuple(self.probs.shape)})"
