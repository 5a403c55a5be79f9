"""``torch.distributions.normal.Normal``."""

from __future__ import annotations

import math

import numpy as np

from ..eager.grad_mode import no_grad
from ..eager.random_creation import normal as _draw_normal
from ..eager.tensors import Tensor
from .distribution import Distribution, _as_tensor

__all__ = ["Normal"]


class Normal(Distribution):
    """The normal distribution ``N(loc, scale**2)``; ``rsample`` is reparameterised
    (``loc + eps * scale``), so gradients reach ``loc`` and ``scale``."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        loc, scale = _as_tensor(loc), _as_tensor(scale)
        shape = np.broadcast_shapes(tuple(loc.shape), tuple(scale.shape))
        self.loc, self.scale = loc.expand(*shape), scale.expand(*shape)
        super().__init__(shape)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale ** 2

    def sample(self, sample_shape=()) -> Tensor:
        """Draws of shape ``sample_shape + batch_shape``, without gradient."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _draw_normal(self.loc.expand(*shape), self.scale.expand(*shape))

    def rsample(self, sample_shape=()) -> Tensor:
        """``loc + eps * scale`` with ``eps ~ N(0, 1)``: differentiable in loc and scale."""
        shape = self._extended_shape(sample_shape)
        eps = _draw_normal(0.0, 1.0, size=shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value) -> Tensor:
        value = _as_tensor(value)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() \
            - math.log(math.sqrt(2 * math.pi))

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def cdf(self, value) -> Tensor:
        value = _as_tensor(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal()
                           / math.sqrt(2)).erf())

    def __repr__(self):
        return f"Normal(loc: {tuple(self.loc.shape)}, scale: {tuple(self.scale.shape)})"
