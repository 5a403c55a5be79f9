"""``kg.nn.init``: fill a parameter in place, as ``torch.nn.init`` does.

Every random initialiser draws from :mod:`kernelgraph.ops.random`, so ``kg.random.seed(n)``
before building a model fixes its weights (in both modes: a module's graph variables start
from its parameters' values).

>>> import kernelgraph as kg
>>> w = kg.zeros(3, 4)
>>> kg.nn.init.ones_(w).tolist()[0]
[1.0, 1.0, 1.0, 1.0]
>>> kg.random.seed(0); a = kg.nn.init.xavier_uniform_(kg.zeros(3, 4)).tolist()
>>> kg.random.seed(0); a == kg.nn.init.xavier_uniform_(kg.zeros(3, 4)).tolist()
True
"""

from __future__ import annotations

import math

import numpy as np

from .. import devices
from ..eager import Tensor, no_grad
from ..errors import shown
from ..ops import random as R

__all__ = ["calculate_gain", "constant_", "kaiming_normal_", "kaiming_uniform_", "normal_",
           "ones_", "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_"]


def copy_into(t: Tensor, value) -> Tensor:
    """Write ``value`` (an array or tensor of ``t``'s shape) into ``t``'s own storage, so
    everything holding ``t`` (a module, an optimiser) sees the new values; not recorded by
    autograd (PyTorch's in-place update under ``no_grad``)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a kg.Tensor to fill, got {type(t).__name__}")
    if isinstance(value, Tensor):
        value = value.data
    if tuple(np.shape(value)) != tuple(t.data.shape):
        raise ValueError(f"cannot copy a value of shape {tuple(np.shape(value))} into a tensor "
                         f"of shape {tuple(t.data.shape)}")
    with no_grad():
        if type(t.data) is np.ndarray:
            np.copyto(t.data, devices.to_numpy(value), casting="unsafe")
        else:  # a GPU tensor: its device array is replaced by one holding the new values
            host = np.asarray(devices.to_numpy(value), t.data.dtype)
            t.data = devices.transfer(host, t.device)
    return t


def _fill(t: Tensor, draw) -> Tensor:
    return copy_into(t, draw(tuple(t.shape), t.dtype))


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill with U(a, b) samples.

    >>> import kernelgraph as kg
    >>> w = kg.nn.init.uniform_(kg.zeros(100), -1.0, 1.0)
    >>> bool((w.abs() <= 1).numpy().all())
    True
    """
    return _fill(tensor, lambda shape, dt: R.uniform(shape, low=a, high=b, dtype=dt))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill with N(mean, std^2) samples.

    >>> import kernelgraph as kg
    >>> kg.nn.init.normal_(kg.zeros(2, 3), std=0.0).tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    return _fill(tensor, lambda shape, dt: R.normal(shape, mean=mean, std=std, dtype=dt))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``.

    >>> import kernelgraph as kg
    >>> kg.nn.init.constant_(kg.zeros(2), 0.5).tolist()
    [0.5, 0.5]
    """
    return copy_into(tensor, np.full(tuple(tensor.shape), val, tensor.dtype))


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

    >>> import kernelgraph as kg
    >>> kg.nn.init.zeros_(kg.ones(2)).tolist()
    [0.0, 0.0]
    """
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

    >>> import kernelgraph as kg
    >>> kg.nn.init.ones_(kg.zeros(2)).tolist()
    [1.0, 1.0]
    """
    return constant_(tensor, 1.0)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (``torch.nn.init.calculate_gain``).

    >>> import kernelgraph as kg
    >>> kg.nn.init.calculate_gain("tanh")
    1.6666666666666667
    """
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, int | float):
            raise ValueError(f"negative_slope {shown(slope)} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unsupported nonlinearity {shown(nonlinearity)}; expected one of linear, "
                     "conv2d, sigmoid, tanh, relu, leaky_relu, selu")


def fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight: (in, out) features times the kernel size for a conv
    weight (out, in, kh, kw).

    >>> import kernelgraph as kg
    >>> kg.nn.init.fan_in_and_fan_out(kg.zeros(8, 3, 5, 5))
    (75, 200)
    """
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(f"fan in and fan out can not be computed for a tensor with fewer than "
                         f"2 dimensions, got shape {shape}")
    receptive = int(np.prod(shape[2:], dtype=np.int64))
    return shape[1] * receptive, shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {shown(mode)}")
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).

    >>> import kernelgraph as kg
    >>> w = kg.nn.init.xavier_uniform_(kg.zeros(3, 5))
    >>> bool((w.abs() <= (6 / 8) ** 0.5).numpy().all())
    True
    """
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).

    >>> import kernelgraph as kg
    >>> kg.nn.init.xavier_normal_(kg.zeros(3, 5)).shape
    (3, 5)
    """
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Tensor:
    """He uniform: U(-b, b) with b = gain * sqrt(3 / fan). ``a=sqrt(5)`` gives
    PyTorch's default Linear/Conv2d weights, U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

    >>> import kernelgraph as kg, math
    >>> w = kg.nn.init.kaiming_uniform_(kg.zeros(4, 16), a=math.sqrt(5))
    >>> bool((w.abs() <= 0.25).numpy().all())
    True
    """
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Tensor:
    """He normal: N(0, std^2) with std = gain / sqrt(fan).

    >>> import kernelgraph as kg
    >>> kg.nn.init.kaiming_normal_(kg.zeros(4, 16), nonlinearity="relu").shape
    (4, 16)
    """
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std)
