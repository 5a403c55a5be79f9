"""Resampling, padding, channel dropout and instance normalisation layers, as PyTorch's:
``Upsample``, ``UpsamplingNearest2d``, ``UpsamplingBilinear2d``, ``ReflectionPad1d/2d``,
``ReplicationPad1d/2d``, ``ZeroPad2d``, ``ConstantPad2d``, ``PixelShuffle``,
``PixelUnshuffle``, ``Dropout1d``, ``Dropout2d``, ``InstanceNorm1d``, ``InstanceNorm2d``.

>>> import kernelgraph as kg
>>> kg.nn.Upsample(scale_factor=2)(kg.ones(1, 1, 2, 3)).shape
torch.Size([1, 1, 4, 6])
>>> kg.nn.ReflectionPad2d(1)(kg.arange(4.0).reshape(1, 1, 2, 2)).tolist()[0][0][0]
[3.0, 2.0, 3.0, 2.0]
"""

from __future__ import annotations

import numpy as np

from ..eager import Tensor, tensor
from ..graph import Node
from . import functional as F
from . import functional_conv as FC
from .layers import as_input, positive_int
from .module import Module

__all__ = ["ConstantPad2d", "Dropout1d", "Dropout2d", "InstanceNorm1d", "InstanceNorm2d",
           "PixelShuffle", "PixelUnshuffle", "ReflectionPad1d", "ReflectionPad2d",
           "ReplicationPad1d", "ReplicationPad2d", "Upsample", "UpsamplingBilinear2d",
           "UpsamplingNearest2d", "ZeroPad2d"]


class Upsample(Module):
    """Resize by ``size`` or ``scale_factor`` (``torch.nn.Upsample``; :func:`F.interpolate`).

    >>> import kernelgraph as kg
    >>> kg.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
    Upsample(scale_factor=2.0, mode='bilinear')
    """

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None):
        super().__init__()
        self.size = size
        if isinstance(scale_factor, tuple | list):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return FC.interpolate(as_input(type(self).__name__, x), self.size, self.scale_factor,
                              self.mode, self.align_corners, self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(mode='nearest')`` of (N, C, H, W)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(mode='bilinear', align_corners=True)`` of (N, C, H, W)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class _Pad(Module):
    mode = "constant"
    sides = 4

    def __init__(self, padding, value: float = 0.0):
        super().__init__()
        n = self.sides
        if isinstance(padding, int) and not isinstance(padding, bool):
            padding = (padding,) * n
        if (not isinstance(padding, tuple | list) or len(padding) != n
                or not all(isinstance(p, int) for p in padding)):
            raise ValueError(f"{type(self).__name__}: padding must be an int or {n} ints, got "
                             f"{padding!r}")
        self.padding = tuple(padding)
        self.value = value

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        x = as_input(type(self).__name__, x)
        if self.mode == "constant":
            return F.pad(x, self.padding, value=self.value)
        return FC.pad_edges(x, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad2d(_Pad):
    """Pad (N, C, H, W) by (left, right, top, bottom) with its reflection.

    >>> import kernelgraph as kg
    >>> kg.nn.ReflectionPad2d(2)
    ReflectionPad2d((2, 2, 2, 2))
    """

    mode = "reflect"


class ReflectionPad1d(_Pad):
    """Pad (N, C, W) by (left, right) with its reflection."""

    mode, sides = "reflect", 2


class ReplicationPad2d(_Pad):
    """Pad (N, C, H, W) by (left, right, top, bottom), repeating its edges."""

    mode = "replicate"


class ReplicationPad1d(_Pad):
    """Pad (N, C, W) by (left, right), repeating its edges."""

    mode, sides = "replicate", 2


class ConstantPad2d(_Pad):
    """Pad (N, C, H, W) by (left, right, top, bottom) with ``value``."""

    def __init__(self, padding, value: float):
        super().__init__(padding, value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ZeroPad2d(_Pad):
    """Pad (N, C, H, W) by (left, right, top, bottom) with zeros.

    >>> import kernelgraph as kg
    >>> kg.nn.ZeroPad2d((1, 0, 0, 0))(kg.ones(1, 1, 1, 2)).tolist()
    [[[[0.0, 1.0, 1.0]]]]
    """


class PixelShuffle(Module):
    """(N, C*r*r, H, W) -> (N, C, H*r, W*r) (``torch.nn.PixelShuffle``)."""

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = positive_int("PixelShuffle", "upscale_factor", upscale_factor)

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return FC.pixel_shuffle(as_input("PixelShuffle", x), self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(N, C, H*r, W*r) -> (N, C*r*r, H, W) (``torch.nn.PixelUnshuffle``)."""

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = positive_int("PixelUnshuffle", "downscale_factor",
                                             downscale_factor)

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return FC.pixel_unshuffle(as_input("PixelUnshuffle", x), self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class Dropout2d(Module):
    """Zero whole channels with probability ``p`` in training mode, scaling the rest by
    1 / (1 - p); the identity after ``eval()`` (``torch.nn.Dropout2d``). Eager calls draw
    PyTorch's mask from PyTorch's generator; graph nodes draw from ``kg.random`` at each
    run.

    >>> import kernelgraph as kg
    >>> kg.nn.Dropout2d(0.25)
    Dropout2d(p=0.25, inplace=False)
    """

    function = staticmethod(FC.dropout2d)

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = float(p), bool(inplace)

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return type(self).function(as_input(type(self).__name__, x), self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout2d):
    """Zero whole channels of (N, C, L) (``torch.nn.Dropout1d``)."""

    function = staticmethod(FC.dropout1d)


class InstanceNorm2d(Module):
    """Normalise each (sample, channel) over H and W (``torch.nn.InstanceNorm2d``: biased
    variance, ``affine=False`` by default); running statistics are not supported.

    >>> import kernelgraph as kg
    >>> kg.nn.InstanceNorm2d(3)
    InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """

    ranks = (3, 4)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, bias: bool = True):
        super().__init__()
        what = type(self).__name__
        if track_running_stats:
            raise NotImplementedError(f"{what}: track_running_stats=True is not supported by "
                                      "kernelgraph")
        self.num_features = positive_int(what, "num_features", num_features)
        self.eps, self.momentum = eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        c = self.num_features
        self.register_parameter("weight", tensor(np.ones(c, np.float32)) if affine else None)
        self.use_bias = bool(affine and bias)
        self.register_parameter("bias", tensor(np.zeros(c, np.float32)) if self.use_bias
                                else None)

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        what = type(self).__name__
        x = as_input(what, x)
        shape = None if x.shape is None else tuple(x.shape)
        if shape is None or len(shape) not in self.ranks:
            raise ValueError(f"{what}: expected {self.ranks[0]}D (unbatched) or "
                             f"{self.ranks[1]}D (batched) input (got {len(shape or ())}D "
                             "input)")
        unbatched = len(shape) == self.ranks[0]
        if unbatched:
            x = FC.SF.unsqueeze(x, 0)
        weight = self.weight if self.affine else None
        bias = self.bias if self.use_bias else None
        y = FC.instance_norm(x, weight=weight, bias=bias, eps=self.eps)
        return FC.SF.squeeze(y, 0) if unbatched else y

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.use_bias}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(InstanceNorm2d):
    """Normalise each (sample, channel) of (N, C, L) over L (``torch.nn.InstanceNorm1d``)."""

    ranks = (2, 3)
