"""``kg.nn.init``: fill a parameter in place, as ``torch.nn.init`` does, with its numbers.

Every random initialiser draws from PyTorch's CPU generator
(:mod:`kernelgraph.ops.torch_random`) with PyTorch's formulas, so after
``kg.manual_seed(0)`` a ``kg.nn.Linear(3, 2)`` holds the weight and bias that
``torch.nn.Linear(3, 2)`` holds after ``torch.manual_seed(0)`` (in both modes: a module's
graph variables start from its parameters' values).

>>> import kernelgraph as kg
>>> w = kg.zeros(3, 4)
>>> kg.nn.init.ones_(w).tolist()[0]
[1.0, 1.0, 1.0, 1.0]
>>> _ = kg.manual_seed(0); [round(v, 4) for v in kg.nn.init.uniform_(kg.zeros(3)).tolist()]
[0.4963, 0.7682, 0.0885]
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import devices
from ..eager import Tensor, no_grad
from ..eager.inplace import mark_written
from ..errors import shown
from ..ops import torch_random as R

__all__ = ["calculate_gain", "constant_", "eye_", "kaiming_normal_", "kaiming_uniform_",
           "normal_", "ones_", "orthogonal_", "trunc_normal_", "uniform_", "xavier_normal_",
           "xavier_uniform_", "zeros_"]


def copy_into(t: Tensor, value) -> Tensor:
    """Write ``value`` (an array or tensor of ``t``'s shape) into ``t``'s own storage, so
    everything holding ``t`` (a module, an optimiser) sees the new values; not recorded by
    autograd but counted as a write (PyTorch's in-place update under ``no_grad``): a
    backward that needs the old values refuses to run."""
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a kg.Tensor to fill, got {type(t).__name__}")
    if isinstance(value, Tensor):
        value = value._array
    if tuple(np.shape(value)) != tuple(t._array.shape):
        raise ValueError(f"cannot copy a value of shape {tuple(np.shape(value))} into a tensor "
                         f"of shape {tuple(t._array.shape)}")
    with no_grad():
        if type(t._array) is np.ndarray:
            np.copyto(t._array, devices.to_numpy(value), casting="unsafe")
        else:  # a GPU tensor: its device array is replaced by one holding the new values
            host = np.asarray(devices.to_numpy(value), t._array.dtype)
            t._array = devices.transfer(host, t.device)
    mark_written(t)
    return t


def _draw(t: Tensor, fill) -> Tensor:
    """Run ``fill`` (an in-place NumPy filler) on ``t``'s values, in its own storage on the
    CPU (a GPU tensor's values are drawn on the CPU and copied, as they are not PyTorch's
    CUDA numbers anyway)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a kg.Tensor to fill, got {type(t).__name__}")
    if t._array.dtype.kind != "f":
        raise RuntimeError(f"expected a floating point tensor to fill at random, got "
                           f"{t._array.dtype.name}")
    if type(t._array) is np.ndarray:
        with no_grad():
            fill(t._array)
        return t
    host = devices.to_numpy(t._array).copy()
    fill(host)
    return copy_into(t, host)


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with U(a, b) draws from PyTorch's generator (``tensor.uniform_(a, b)``).

    >>> import kernelgraph as kg
    >>> w = kg.nn.init.uniform_(kg.zeros(100), -1.0, 1.0)
    >>> bool((w.abs() <= 1).numpy().all())
    True
    """
    return _draw(tensor, lambda arr: R.uniform_fill(arr, a, b, generator))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with N(mean, std^2) draws from PyTorch's generator (``tensor.normal_``).

    >>> import kernelgraph as kg
    >>> kg.nn.init.normal_(kg.zeros(2, 3), std=0.0).tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    return _draw(tensor, lambda arr: R.normal_fill(arr, mean, std, generator))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Fill with N(mean, std^2) draws truncated to [a, b], drawn as PyTorch 2.13 draws them
    (rejection sampling: from normals when [a, b] holds more than 30 % of the mass, else
    from uniforms accepted by the density).

    >>> import kernelgraph as kg
    >>> w = kg.nn.init.trunc_normal_(kg.zeros(1000), std=0.02, a=-0.04, b=0.04)
    >>> bool((w.abs() <= 0.04).numpy().all())
    True
    """
    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    p = cdf((b - mean) / std) - cdf((a - mean) / std)
    return _draw(tensor, lambda arr: (_trunc_by_normals if p > 0.3 else _trunc_by_uniforms)(
        arr, mean, std, a, b, generator))


def _trunc_by_normals(arr: np.ndarray, mean, std, a, b, generator) -> None:
    # PyTorch: normal draws, and the whole tensor drawn again for the ones out of [a, b]
    lo, hi = arr.dtype.type(a), arr.dtype.type(b)
    R.normal_fill(arr, mean, std, generator)
    while True:
        out = (arr < lo) | (arr > hi)
        if not out.any():
            return
        fresh = R.normal_fill(np.empty_like(arr), mean, std, generator)
        arr[out] = fresh[out]


def _trunc_by_uniforms(arr: np.ndarray, mean, std, a, b, generator) -> None:
    # PyTorch: uniform candidates in [a, b], accepted where log(U) <= log pdf - log peak
    t = arr.dtype.type
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_pdf(c: np.ndarray) -> np.ndarray:
        c = ((c - t(mean)) / t(std)).astype(arr.dtype)
        return ((c * c) * t(-0.5) - t(log_peak)).astype(arr.dtype)

    def rejected(c: np.ndarray) -> np.ndarray:
        u = R.uniform_fill(np.empty_like(arr), 0.0, 1.0, generator)
        with np.errstate(divide="ignore"):
            return np.log(u) > log_pdf(c)

    R.uniform_fill(arr, a, b, generator)
    pending = rejected(arr.copy())
    while pending.any():
        cand = R.uniform_fill(np.empty_like(arr), a, b, generator)
        arr[pending] = cand[pending]
        pending = pending & rejected(cand)


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


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix.

    >>> import kernelgraph as kg
    >>> kg.nn.init.eye_(kg.zeros(2, 3)).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    if len(tensor.shape) != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return copy_into(tensor, np.eye(*tensor.shape, dtype=tensor.dtype))


_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (``torch.nn.init.calculate_gain``).

    >>> import kernelgraph as kg
    >>> kg.nn.init.calculate_gain("tanh"), kg.nn.init.calculate_gain("linear")
    (1.6666666666666667, 1)
    """
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, int | float):
            raise ValueError(f"negative_slope {shown(slope)} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unsupported nonlinearity {shown(nonlinearity)}; expected one of linear, "
                     "conv2d, sigmoid, tanh, relu, leaky_relu, selu")


def fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight: (in, out) features times the kernel size for a conv
    weight (out, in, kh, kw) (``torch.nn.init._calculate_fan_in_and_fan_out``).

    >>> import kernelgraph as kg
    >>> kg.nn.init.fan_in_and_fan_out(kg.zeros(8, 3, 5, 5))
    (75, 200)
    """
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(f"Fan in and fan out can not be computed for tensor with fewer than "
                         f"2 dimensions, got shape {shape}")
    receptive = int(np.prod(shape[2:], dtype=np.int64))
    return shape[1] * receptive, shape[0] * receptive


_calculate_fan_in_and_fan_out = fan_in_and_fan_out


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    if not isinstance(mode, str) or mode.lower() not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {shown(mode)}")
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    return fan_in if mode.lower() == "fan_in" else fan_out


def _empty(tensor: Tensor) -> bool:
    return 0 in tuple(tensor.shape)  # PyTorch: "Initializing zero-element tensors is a no-op"


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: U(-a, a) with a = sqrt(3) * gain * sqrt(2 / (fan_in + fan_out)),
    computed as PyTorch computes it.

    >>> import kernelgraph as kg
    >>> w = kg.nn.init.xavier_uniform_(kg.zeros(3, 5))
    >>> bool((w.abs() <= (6 / 8) ** 0.5).numpy().all())
    True
    """
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).

    >>> import kernelgraph as kg
    >>> tuple(kg.nn.init.xavier_normal_(kg.zeros(3, 5)).shape)
    (3, 5)
    """
    fan_in, fan_out = fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He uniform: U(-b, b) with b = sqrt(3) * gain / sqrt(fan). ``a=sqrt(5)`` gives
    PyTorch's default Linear/Conv2d weights, U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

    >>> import kernelgraph as kg, math
    >>> w = kg.nn.init.kaiming_uniform_(kg.zeros(4, 16), a=math.sqrt(5))
    >>> bool((w.abs() <= 0.25).numpy().all())
    True
    """
    if _empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He normal: N(0, std^2) with std = gain / sqrt(fan).

    >>> import kernelgraph as kg
    >>> tuple(kg.nn.init.kaiming_normal_(kg.zeros(4, 16), nonlinearity="relu").shape)
    (4, 16)
    """
    if _empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix times ``gain``, as PyTorch draws it: N(0, 1) draws of shape
    (rows, numel / rows) from PyTorch's generator, the Q of their QR factorisation (of the
    transpose when rows < cols) with each column's sign set by R's diagonal. Dims past the
    second are flattened.

    >>> import kernelgraph as kg
    >>> w = kg.nn.init.orthogonal_(kg.zeros(3, 5)).numpy()
    >>> bool(abs(w @ w.T - kg.eye(3).numpy()).max() < 1e-5)
    True
    """
    if len(tuple(tensor.shape)) < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if _empty(tensor):
        return tensor
    rows = int(tensor.shape[0])
    cols = int(np.prod(tuple(tensor.shape))) // rows
    flat = R.normal_fill(np.empty((rows, cols), np.dtype(tensor.dtype.name)), 0.0, 1.0,
                         generator)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return copy_into(tensor, (q * gain).reshape(tuple(tensor.shape)))


def _deprecated(new) -> object:
    """PyTorch's old spelling without the underscore: warns, then calls ``new``."""
    old = new.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old
    deprecated_init.__doc__ = (f"``{old}(...)``: deprecated (with PyTorch's FutureWarning) in "
                               f"favour of :func:`{new.__name__}`, which it calls.")
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
