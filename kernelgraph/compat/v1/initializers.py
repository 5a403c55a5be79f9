"""TF1's variable initializers: ``tf.zeros_initializer``, ``tf.constant_initializer``,
``tf.random_normal_initializer``, ``tf.glorot_uniform_initializer`` ...

Each is a callable ``init(shape, dtype=None)``. ``tf.get_variable`` and ``tf.layers`` call
it for the variable's initial value. The deterministic ones give TF's values exactly. The
random ones draw TF's distributions (TF's formulas for the fan, the scale and the
truncation at two standard deviations) from kernelgraph's seeded generator
(``tf.set_random_seed`` seeds it), so their numbers are not TF's: TF's come from its own
Philox streams, which kernelgraph does not reproduce.
"""

from __future__ import annotations

import math

import numpy as np

from ... import errors
from ...dtypes import as_dtype, float32
from ...graph import Node
from ...ops.random import _generator, _seed_attrs
from ...static.variables import constant


def _dtype(dtype, default):
    return np.dtype(as_dtype(dtype if dtype is not None else default or float32))


class Initializer:
    """``tf.keras.initializers.Initializer``: ``init(shape, dtype)`` is a tensor of the
    initial values (``value(shape, dtype)`` the NumPy array behind it)."""

    dtype = None

    def value(self, shape, dtype=None) -> np.ndarray:
        raise NotImplementedError

    def __call__(self, shape, dtype=None, partition_info=None) -> Node:
        return constant(self.value(tuple(shape), dtype))

    def get_config(self) -> dict:
        return {}


class zeros_initializer(Initializer):  # noqa: N801 - TF1's names
    """All zeros."""

    def __init__(self, dtype=None):
        self.dtype = dtype

    def value(self, shape, dtype=None):
        return np.zeros(shape, _dtype(dtype, self.dtype))


class ones_initializer(zeros_initializer):  # noqa: N801
    """All ones."""

    def value(self, shape, dtype=None):
        return np.ones(shape, _dtype(dtype, self.dtype))


class constant_initializer(Initializer):  # noqa: N801
    """``value`` (a number, filled; or a list/array of exactly the variable's size,
    reshaped), as TF1's.

    >>> constant_initializer([1, 2, 3, 4]).value((2, 2)).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """

    def __init__(self, value=0, dtype=None, verify_shape=False):
        self.constant, self.dtype = value, dtype

    def value(self, shape, dtype=None):
        dt = _dtype(dtype, self.dtype)
        arr = np.asarray(self.constant, dtype=dt)
        if arr.ndim == 0:
            return np.full(shape, arr, dt)
        size = int(np.prod(shape))
        if arr.size != size:
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor "
                            f"{errors.shown(self.constant)} (converted from "
                            f"{errors.shown(self.constant)}) has {arr.size} elements, but got "
                            f"`shape` {tuple(shape)} with {size} elements).")
        return arr.reshape(shape)


class _Random(Initializer):
    def __init__(self, seed=None, dtype=None):
        self.seed, self.dtype = seed, dtype

    def _rng(self):
        attrs = _seed_attrs(self.seed, True)
        return _generator(attrs["global_seed"], attrs["seed"], attrs["stream"])


def _truncated(rng, shape, mean, stddev):
    """Normal draws, redrawn until within two standard deviations (TF's truncation)."""
    out = rng.standard_normal(shape)
    bad = np.abs(out) > 2.0
    while bad.any():
        out[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(out) > 2.0
    return out * stddev + mean


class random_normal_initializer(_Random):  # noqa: N801
    """Normal draws (mean, stddev)."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=None):
        super().__init__(seed, dtype)
        self.mean, self.stddev = mean, stddev

    def value(self, shape, dtype=None):
        draws = self._rng().standard_normal(shape) * self.stddev + self.mean
        return draws.astype(_dtype(dtype, self.dtype))


class truncated_normal_initializer(random_normal_initializer):  # noqa: N801
    """Normal draws (mean, stddev) redrawn beyond two standard deviations."""

    def value(self, shape, dtype=None):
        return _truncated(self._rng(), shape, self.mean, self.stddev).astype(
            _dtype(dtype, self.dtype))


class random_uniform_initializer(_Random):  # noqa: N801
    """Uniform draws in [minval, maxval) (maxval None: 1)."""

    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=None):
        super().__init__(seed, dtype)
        self.minval, self.maxval = minval, 1.0 if maxval is None else maxval

    def value(self, shape, dtype=None):
        u = self._rng().random(shape)
        return (u * (self.maxval - self.minval) + self.minval).astype(_dtype(dtype, self.dtype))


def _fans(shape) -> tuple[float, float]:
    if len(shape) < 1:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = float(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class variance_scaling_initializer(_Random):  # noqa: N801
    """TF's variance scaling: ``scale / n`` (n the fan in, out or their mean) as the
    variance of a truncated normal (stddev corrected for the truncation), a normal, or a
    uniform distribution."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=None):
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        super().__init__(seed, dtype)
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def value(self, shape, dtype=None):
        fan_in, fan_out = _fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        scale = self.scale / max(1.0, n[self.mode])
        rng = self._rng()
        if self.distribution == "truncated_normal":
            out = _truncated(rng, shape, 0.0, math.sqrt(scale) / 0.87962566103423978)
        elif self.distribution == "untruncated_normal":
            out = rng.standard_normal(shape) * math.sqrt(scale)
        else:
            limit = math.sqrt(3.0 * scale)
            out = rng.random(shape) * 2 * limit - limit
        return np.asarray(out).astype(_dtype(dtype, self.dtype))


def glorot_uniform_initializer(seed=None, dtype=None):
    """Uniform in ``+-sqrt(6 / (fan_in + fan_out))`` (TF1's default for variables)."""
    return variance_scaling_initializer(1.0, "fan_avg", "uniform", seed, dtype)


def glorot_normal_initializer(seed=None, dtype=None):
    """Truncated normal of variance ``2 / (fan_in + fan_out)``."""
    return variance_scaling_initializer(1.0, "fan_avg", "truncated_normal", seed, dtype)


def he_normal(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return variance_scaling_initializer(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return variance_scaling_initializer(1.0, "fan_in", "uniform", seed)


def initial_value(init, shape, dtype) -> np.ndarray:
    """The NumPy initial value ``init`` gives a variable of ``shape`` and ``dtype``: an
    :class:`Initializer`, or any callable ``init(shape, dtype=...)`` returning an array."""
    if isinstance(init, Initializer):
        return init.value(tuple(shape), dtype)
    out = init(tuple(shape), dtype=dtype)
    if isinstance(out, Node):
        if out.op.name != "const":
            raise NotImplementedError("an initializer that returns a computed tensor is not "
                                      "implemented; return a NumPy array")
        out = out.attrs["value"]
    return np.asarray(out, dtype=np.dtype(as_dtype(dtype)))


__all__ = ["Initializer", "constant_initializer", "glorot_normal_initializer",
           "glorot_uniform_initializer", "he_normal", "he_uniform", "initial_value",
           "lecun_normal", "lecun_uniform", "ones_initializer", "random_normal_initializer",
           "random_uniform_initializer", "truncated_normal_initializer",
           "variance_scaling_initializer", "zeros_initializer"]
