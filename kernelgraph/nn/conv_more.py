"""More convolution and pooling layers, as PyTorch's: ``Conv1d``, ``Conv3d``,
``ConvTranspose1d``,
``ConvTranspose2d``, ``MaxPool1d``, ``AvgPool1d``, ``AdaptiveAvgPool1d``,
``AdaptiveAvgPool2d``, ``AdaptiveMaxPool2d`` (the functions of
:mod:`kernelgraph.nn.functional_conv` with parameters and PyTorch's defaults).

>>> import kernelgraph as kg
>>> up = kg.nn.ConvTranspose2d(8, 3, kernel_size=4, stride=2, padding=1)
>>> up(kg.ones(1, 8, 5, 5)).shape, tuple(up.weight.shape)
(torch.Size([1, 3, 10, 10]), (8, 3, 4, 4))
>>> kg.nn.Conv1d(3, 4, 3)(kg.ones(2, 3, 10)).shape
torch.Size([2, 4, 8])
"""

from __future__ import annotations

import math

from ..eager import Tensor
from ..graph import Node
from . import functional_conv as FC
from . import init
from .layers import as_input, empty, float_dtype, positive_int
from .module import Module

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "AvgPool1d",
           "Conv1d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d"]


def _tuple(value, n: int, what: str, layer: str, minimum: int) -> tuple:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * n
    if (not isinstance(value, tuple | list) or len(value) != n
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise TypeError(f"{layer}: {what} must be an int or {n} ints, got {value!r}")
    if min(value) < minimum:
        raise ValueError(f"{layer}: {what} must be {'positive' if minimum else 'non-negative'}"
                         f", got {value!r}")
    return tuple(value)


class _ConvNd(Module):
    """What Conv1d and the transposed convolutions share: arguments, parameters, PyTorch's
    initialisation and repr."""

    dims = 2
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__()
        what, n = type(self).__name__, self.dims
        if groups != 1 or padding_mode != "zeros":
            raise NotImplementedError(f"{what}: groups != 1 and padding modes other than "
                                      "'zeros' are not supported by kernelgraph")
        self.in_channels = positive_int(what, "in_channels", in_channels)
        self.out_channels = positive_int(what, "out_channels", out_channels)
        self.kernel_size = _tuple(kernel_size, n, "kernel_size", what, 1)
        self.stride = _tuple(stride, n, "stride", what, 1)
        self.dilation = _tuple(dilation, n, "dilation", what, 1)
        self._padding_text = padding if isinstance(padding, str) else None
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n, "padding",
                                                                       what, 0)
        self.output_padding = _tuple(output_padding, n, "output_padding", what, 0)
        self.groups, self.padding_mode = groups, padding_mode
        dtype = float_dtype(what, dtype)
        shape = ((in_channels, out_channels) if self.transposed
                 else (out_channels, in_channels)) + self.kernel_size
        self.register_parameter("weight", empty(dtype, *shape))
        self.register_parameter("bias", empty(dtype, self.out_channels) if bias else None)
        self.reset_parameters()
        if device is not None:
            self.to(device)

    def reset_parameters(self) -> None:
        """PyTorch's: ``kaiming_uniform_(a=sqrt(5))``, bias from U(-1/sqrt(fan_in),
        1/sqrt(fan_in)) with fan_in of the weight as laid out (for a transposed convolution
        that is out_channels * kernel size, as in PyTorch)."""
        weight = self._parameters["weight"]
        init.kaiming_uniform_(weight, a=math.sqrt(5))
        if self._parameters["bias"] is not None:
            bound = 1.0 / math.sqrt(init.fan_in_and_fan_out(weight)[0])
            init.uniform_(self._parameters["bias"], -bound, bound)

    def _bias(self):
        return self.bias if self._parameters["bias"] is not None else None

    def extra_repr(self) -> str:
        n = self.dims
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, " \
            f"stride={self.stride}"
        if self._padding_text is not None:
            s += f", padding={self._padding_text}"
        elif self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        return s + ("" if self._parameters["bias"] is not None else ", bias=False")


class Conv1d(_ConvNd):
    """1-D convolution plus bias (``torch.nn.Conv1d`` without groups): (N, C_in, L) ->
    (N, C_out, L_out); weight (out, in, k), PyTorch's initialisation.

    >>> import kernelgraph as kg
    >>> kg.nn.Conv1d(16, 33, 3, stride=2)
    Conv1d(16, 33, kernel_size=(3,), stride=(2,))
    """

    dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, 0, groups,
                         bias, dilation, padding_mode, device, dtype)

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return FC.conv1d(as_input("Conv1d", x), self.weight, self._bias(), self.stride,
                         self.padding, self.dilation)


class Conv3d(_ConvNd):
    """3-D convolution plus bias (``torch.nn.Conv3d`` without groups): (N, C_in, D, H, W) ->
    (N, C_out, OD, OH, OW); weight (out, in, kd, kh, kw), PyTorch's initialisation. It runs as
    conv2d over the input's depth planes (:func:`kernelgraph.nn.functional_conv.conv3d`).

    >>> import kernelgraph as kg
    >>> kg.nn.Conv3d(2, 4, 3, padding=1)(kg.ones(1, 2, 5, 6, 6)).shape
    torch.Size([1, 4, 5, 6, 6])
    """

    dims = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, 0, groups,
                         bias, dilation, padding_mode, device, dtype)

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return FC.conv3d(as_input("Conv3d", x), self.weight, self._bias(), self.stride,
                         self.padding, self.dilation)


class ConvTranspose2d(_ConvNd):
    """Transposed 2-D convolution plus bias (``torch.nn.ConvTranspose2d`` without groups):
    (N, C_in, H, W) -> (N, C_out, (H - 1) * stride - 2 * padding + dilation * (k - 1) +
    output_padding + 1, ...); weight (in, out, kh, kw), PyTorch's initialisation.

    >>> import kernelgraph as kg
    >>> kg.nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1)
    ConvTranspose2d(16, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))
    """

    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None):
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of "
                             f"ints, got {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding,
                         output_padding, groups, bias, dilation, padding_mode, device, dtype)

    def forward(self, x: Tensor | Node, output_size=None) -> Tensor | Node:
        if output_size is not None:
            raise NotImplementedError(f"{type(self).__name__}: output_size is not supported "
                                      "by kernelgraph (give output_padding)")
        f = FC.conv_transpose2d if self.dims == 2 else FC.conv_transpose1d
        return f(as_input(type(self).__name__, x), self.weight,
                 self._bias(), self.stride, self.padding,
                 self.output_padding, 1, self.dilation)


class ConvTranspose1d(ConvTranspose2d):
    """Transposed 1-D convolution plus bias (``torch.nn.ConvTranspose1d`` without groups);
    weight (in, out, k).

    >>> import kernelgraph as kg
    >>> kg.nn.ConvTranspose1d(4, 2, 3, stride=2)(kg.ones(1, 4, 5)).shape
    torch.Size([1, 2, 11])
    """

    dims = 1


# -- pooling ------------------------------------------------------------------------------
class MaxPool1d(Module):
    """Maximum over windows of (N, C, L) (``torch.nn.MaxPool1d``); stride defaults to
    kernel_size.

    >>> import kernelgraph as kg
    >>> kg.nn.MaxPool1d(2)(kg.tensor([[[1.0, 3.0, 2.0, 0.0]]])).tolist()
    [[[3.0, 2.0]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        if dilation != 1 or return_indices or ceil_mode:
            raise NotImplementedError("MaxPool1d: dilation, return_indices and ceil_mode are "
                                      "not supported by kernelgraph")
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return FC.max_pool1d(as_input("MaxPool1d", x), self.kernel_size, self.stride,
                             self.padding)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool1d(Module):
    """Mean over windows of (N, C, L) (``torch.nn.AvgPool1d``, padding counted).

    >>> import kernelgraph as kg
    >>> kg.nn.AvgPool1d(2)
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True):
        super().__init__()
        if ceil_mode or not count_include_pad:
            raise NotImplementedError("AvgPool1d: ceil_mode and count_include_pad=False are "
                                      "not supported by kernelgraph")
        self.kernel_size = _tuple(kernel_size, 1, "kernel_size", "AvgPool1d", 1)
        self.stride = self.kernel_size if stride is None else _tuple(stride, 1, "stride",
                                                                     "AvgPool1d", 1)
        self.padding = _tuple(padding, 1, "padding", "AvgPool1d", 0)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return FC.avg_pool1d(as_input("AvgPool1d", x), self.kernel_size, self.stride,
                             self.padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _Adaptive(Module):
    function = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return type(self).function(as_input(type(self).__name__, x), self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(_Adaptive):
    """Mean over adaptive windows to ``output_size`` (``torch.nn.AdaptiveAvgPool2d``).

    >>> import kernelgraph as kg
    >>> kg.nn.AdaptiveAvgPool2d((1, 1))(kg.ones(2, 3, 5, 7)).shape
    torch.Size([2, 3, 1, 1])
    """

    function = staticmethod(FC.adaptive_avg_pool2d)


class AdaptiveAvgPool1d(_Adaptive):
    """Mean over adaptive windows of (N, C, L) (``torch.nn.AdaptiveAvgPool1d``)."""

    function = staticmethod(FC.adaptive_avg_pool1d)


class AdaptiveMaxPool2d(_Adaptive):
    """Maximum over adaptive windows (``torch.nn.AdaptiveMaxPool2d``).

    >>> import kernelgraph as kg
    >>> kg.nn.AdaptiveMaxPool2d(1)(kg.arange(4.0).reshape(1, 1, 2, 2)).tolist()
    [[[[3.0]]]]
    """

    function = staticmethod(FC.adaptive_max_pool2d)

    def __init__(self, output_size, return_indices: bool = False):
        if return_indices:
            raise NotImplementedError("AdaptiveMaxPool2d: return_indices=True is not "
                                      "supported by kernelgraph")
        super().__init__(output_size)
