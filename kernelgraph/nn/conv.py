"""Convolution and pooling layers over NCHW inputs: ``Conv2d``, ``MaxPool2d``,
``AvgPool2d``, ``GlobalAvgPool2d`` (the ops of :mod:`kernelgraph.ops.conv` with
parameters and PyTorch's defaults).

>>> import kernelgraph as kg
>>> net = kg.nn.Sequential(kg.nn.Conv2d(1, 4, 3, padding=1), kg.nn.ReLU(),
...                        kg.nn.MaxPool2d(2), kg.nn.GlobalAvgPool2d())
>>> net(kg.ones(2, 1, 8, 8)).shape
torch.Size([2, 4])
"""

from __future__ import annotations

import math

from .. import ops as O
from ..eager import Tensor
from ..graph import Node, shape_str
from ..ops.conv import _pair
from . import init
from .layers import as_input, empty, float_dtype, positive_int, shape_of
from .module import Module

__all__ = ["AvgPool2d", "Conv2d", "GlobalAvgPool2d", "MaxPool2d"]


def _nchw(layer: str, x, channels: int | None = None):
    x = as_input(layer, x)
    shape = shape_of(x)
    want = "(N, C, H, W)" if channels is None else f"(N, {channels}, H, W)"
    if shape is not None and (len(shape) != 4 or (
            channels is not None and shape[1] not in (None, channels))):
        raise ValueError(f"{layer}: expected input of shape {want}, got {shape_str(shape)}")
    return x


class Conv2d(Module):
    """2-D convolution (cross-correlation) plus bias, as ``torch.nn.Conv2d`` without groups:
    x (N, in_channels, H, W) -> (N, out_channels, OH, OW).

    ``weight`` (out, in, kh, kw) is drawn by ``kaiming_uniform_(a=sqrt(5))`` and ``bias``
    from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in * kh * kw, as PyTorch does.

    >>> import kernelgraph as kg
    >>> conv = kg.nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1)
    >>> conv(kg.ones(1, 3, 9, 9)).shape
    torch.Size([1, 8, 5, 5])
    >>> conv
    Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None, name: str | None = None):
        super().__init__(name)
        if groups != 1 or padding_mode != "zeros":
            raise NotImplementedError("Conv2d: groups != 1 and padding modes other than "
                                      "'zeros' are not supported by kernelgraph")
        self.in_channels = positive_int("Conv2d", "in_channels", in_channels)
        self.out_channels = positive_int("Conv2d", "out_channels", out_channels)
        self.kernel_size = _pair(kernel_size, "kernel_size", 1, "Conv2d")
        self.stride = _pair(stride, "stride", 1, "Conv2d")
        self.dilation = _pair(dilation, "dilation", 1, "Conv2d")
        self._padding_text = padding if isinstance(padding, str) else None  # torch's repr
        if padding == "valid":
            padding = 0
        elif padding == "same":  # as torch: (dilation * (k - 1)) // 2 each side, odd totals only
            if self.stride != (1, 1) or any(d * (k - 1) % 2 for d, k in
                                            zip(self.dilation, self.kernel_size)):
                raise NotImplementedError("Conv2d: padding='same' with a stride or an even "
                                          "kernel is not supported by kernelgraph")
            padding = tuple(d * (k - 1) // 2 for d, k in zip(self.dilation, self.kernel_size))
        self.padding = _pair(padding, "padding", 0, "Conv2d")
        dtype = float_dtype("Conv2d", dtype)
        self.register_parameter("weight", empty(dtype, self.out_channels, self.in_channels,
                                                *self.kernel_size))
        self.register_parameter("bias", empty(dtype, self.out_channels) if bias else None)
        self.reset_parameters()
        if device is not None:
            self.to(device)

    def reset_parameters(self) -> None:
        """PyTorch's default initialisation (see the class docstring)."""
        weight = self._parameters["weight"]
        init.kaiming_uniform_(weight, a=math.sqrt(5))
        if self._parameters["bias"] is not None:
            bound = 1.0 / math.sqrt(init.fan_in_and_fan_out(weight)[0])
            init.uniform_(self._parameters["bias"], -bound, bound)

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        x = _nchw("Conv2d", x, self.in_channels)
        y = O.conv2d(x, self.weight, stride=self.stride, padding=self.padding,
                     dilation=self.dilation)
        if self._parameters["bias"] is not None:
            y = y + O.reshape(self.bias, shape=(self.out_channels, 1, 1))
        return y

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, " \
            f"stride={self.stride}"
        if self._padding_text is not None:
            s += f", padding={self._padding_text}"
        elif self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        return s + ("" if self._parameters["bias"] is not None else ", bias=False")


class _Pool2d(Module):
    op = None
    _plain: dict = {}

    def __init__(self, kernel_size, stride=None, padding=0, **options):
        super().__init__()
        what = type(self).__name__
        for key, value in options.items():
            if value != self._plain[key]:
                raise NotImplementedError(f"{what}: {key}={value!r} is not supported by "
                                          f"kernelgraph (only {self._plain[key]!r})")
        # as given, for PyTorch's repr ('kernel_size=2, stride=2')
        self._given = (kernel_size, kernel_size if stride is None else stride, padding)
        self.kernel_size = _pair(kernel_size, "kernel_size", 1, what)
        self.stride = self.kernel_size if stride is None else _pair(stride, "stride", 1, what)
        self.padding = _pair(padding, "padding", 0, what)
        if any(p > k // 2 for p, k in zip(self.padding, self.kernel_size)):
            raise ValueError(f"{what}: padding {self.padding} must be at most half the kernel "
                             f"size {self.kernel_size}")

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return type(self).op(_nchw(type(self).__name__, x), kernel_size=self.kernel_size,
                             stride=self.stride, padding=self.padding)

    def extra_repr(self) -> str:
        k, st, p = self._given
        return f"kernel_size={k}, stride={st}, padding={p}" + "".join(
            f", {key}={value}" for key, value in self._plain.items())


class MaxPool2d(_Pool2d):
    """Maximum over windows (``torch.nn.MaxPool2d``); stride defaults to kernel_size.

    >>> import kernelgraph as kg
    >>> kg.nn.MaxPool2d(2)(kg.arange(16.0).reshape(1, 1, 4, 4)).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """

    op = staticmethod(O.max_pool2d)
    _plain = {"dilation": 1, "ceil_mode": False}

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):
        if return_indices:
            raise NotImplementedError("MaxPool2d: return_indices=True is not supported by "
                                      "kernelgraph")
        super().__init__(kernel_size, stride, padding, dilation=dilation, ceil_mode=ceil_mode)


class AvgPool2d(_Pool2d):
    """Mean over windows (``torch.nn.AvgPool2d``, padding counted); stride defaults to
    kernel_size.

    >>> import kernelgraph as kg
    >>> kg.nn.AvgPool2d(2)(kg.arange(16.0).reshape(1, 1, 4, 4)).tolist()
    [[[[2.5, 4.5], [10.5, 12.5]]]]
    """

    op = staticmethod(O.avg_pool2d)
    _plain: dict = {}

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None):
        if ceil_mode or not count_include_pad or divisor_override is not None:
            raise NotImplementedError("AvgPool2d: ceil_mode, count_include_pad=False and "
                                      "divisor_override are not supported by kernelgraph")
        super().__init__(kernel_size, stride, padding)


class GlobalAvgPool2d(Module):
    """Mean over H and W: (N, C, H, W) -> (N, C).

    >>> import kernelgraph as kg
    >>> kg.nn.GlobalAvgPool2d()(kg.ones(2, 3, 4, 4)).shape
    torch.Size([2, 3])
    """

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return O.global_avg_pool2d(_nchw("GlobalAvgPool2d", x))
