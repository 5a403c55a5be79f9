"""Image resizing: ``resize`` (nearest or bilinear sampling, in NHWC or NCHW) and its
gradient ``resize_backward``, one card each.

One op serves every framework's spelling; only the sampling rule differs, and it is four
attributes (see :func:`kernelgraph.kernels.resize.source_tables`):

- ``size``: the output's (H, W);
- ``mode``: ``"nearest"`` or ``"bilinear"``;
- ``align_corners``: the corner pixels' centres line up (TF1's ``align_corners=True``,
  PyTorch's ``align_corners=True``);
- ``half_pixel``: pixel centres line up (TF2's ``tf.image.resize``, TF1's
  ``half_pixel_centers=True``, PyTorch's ``bilinear`` and ``nearest-exact``); without it and
  without ``align_corners``, TF1's legacy rule (``resize_bilinear``, ``resize_images``,
  PyTorch's ``nearest``);
- ``scales``: PyTorch's ``scale_factor`` per axis (the input-per-output ratio is its
  inverse), or None: the ratio of the sizes;
- ``layout``: ``"NHWC"`` (TF) or ``"NCHW"`` (PyTorch); a 3-D input is one image (HWC or
  CHW), as TF's resizes take one.

Bilinear resizing returns floats (integer images become float32, as TF1's
``resize_bilinear`` does); nearest keeps the dtype. The gradient adds each output's
gradient back to the inputs it read, with the same weights; it is linear in the gradient,
so its own gradient is ``resize`` again (second derivatives work).

>>> import numpy as np
>>> x = np.arange(4.0).reshape(1, 2, 2, 1)
>>> resize(x, size=(2, 4))[0, :, :, 0].tolist()                 # TF1's legacy bilinear
[[0.0, 0.5, 1.0, 1.0], [2.0, 2.5, 3.0, 3.0]]
>>> resize(x, size=(2, 4), mode="nearest")[0, :, :, 0].tolist()
[[0.0, 0.0, 1.0, 1.0], [2.0, 2.0, 3.0, 3.0]]
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError, shown
from ..graph import shape_str
from ..kernels import resize as K
from .elementwise import _to
from .registry import define

_ATTRS = ("size", "mode", "align_corners", "half_pixel", "scales", "layout")


def _attrs(attrs) -> tuple:
    """(size, mode, align_corners, half_pixel, scales, nchw), checked."""
    size = attrs.get("size")
    if not (isinstance(size, tuple | list) and len(size) == 2 and all(
            isinstance(s, int | np.integer) and not isinstance(s, bool) and s > 0
            for s in size)):
        raise ValueError(f"resize: size must be 2 positive integers (height, width), got "
                         f"{shown(size)}")
    mode = attrs.get("mode", "bilinear")
    if mode not in K.MODES:
        raise ValueError(f"resize: mode must be one of {K.MODES}, got {shown(mode)}")
    align, half = bool(attrs.get("align_corners", False)), bool(attrs.get("half_pixel", False))
    if align and half:
        raise ValueError("resize: align_corners and half_pixel cannot both be set")
    scales = attrs.get("scales")
    if scales is not None:
        scales = tuple(float(s) for s in scales)
        if len(scales) != 2:
            raise ValueError(f"resize: scales must be 2 numbers, got {shown(scales)}")
    layout = attrs.get("layout", "NHWC")
    if layout not in ("NHWC", "NCHW"):
        raise ValueError(f"resize: layout must be 'NHWC' or 'NCHW', got {shown(layout)}")
    return (int(size[0]), int(size[1])), mode, align, half, scales, layout == "NCHW"


def _shape(sx, attrs) -> tuple | None:
    size, _, _, _, _, nchw = _attrs(attrs)
    if sx is None:
        return None
    if len(sx) == 3:  # one image: as a batch of one
        return _shape((1, *sx), attrs)[1:]
    if len(sx) != 4:
        raise ShapeError(f"resize: the images must be 4-D ({'NCHW' if nchw else 'NHWC'}) or "
                         f"one image, 3-D ({'CHW' if nchw else 'HWC'}), got shape "
                         f"{shape_str(sx)}")
    h, w = K.hw(sx, nchw)
    if h == 0 or w == 0:
        raise ShapeError(f"resize: the images must have a non-zero height and width, got "
                         f"shape {shape_str(sx)}")
    return K.out_shape(tuple(sx), size, nchw)


def _one(k, a):
    """A 3-D image as a batch of one (a view), and whether it was one."""
    dims = tuple(k.dims(a))
    return (a.reshape((1, *dims)), True) if len(dims) == 3 else (a, False)


def _dtype(dt, mode):
    # a storage dtype (uint8) computes in its kept dtype, as every op does
    return D.wide(D.as_dtype(dt)) if mode == "nearest" else D.floating(D.as_dtype(dt))


class _Kernels(NamedTuple):
    """A device's resize kernels, its cast to a dtype and its ``shape`` of a value."""

    resize: object
    to: object
    dims: object


def _device_dims(a) -> tuple:
    return tuple(int(s) for s in np.shape(a))


def _cuda(build):
    def cuda(k):
        return build(_Kernels(k.resize, lambda x, dt: k.core.astype(x, D.as_dtype(dt)),
                              _device_dims))
    return cuda


_HOST = _Kernels(K, _to, np.shape)


def _forward(k: _Kernels):
    def forward(x, **attrs):
        _shape(k.dims(x), attrs)
        size, mode, align, half, scales, nchw = _attrs(attrs)
        dt = _dtype(x.dtype, mode)
        if mode == "bilinear":
            x = k.to(x, dt)
        x, one = _one(k, x)
        out = k.resize.resize(x, size, mode, align, half, scales, nchw, dt)
        return out[0] if one else out
    return forward


def _backward(k: _Kernels):
    def forward(g, like, **attrs):
        _, mode, align, half, scales, nchw = _attrs(attrs)
        want = _shape(k.dims(like), attrs)
        if tuple(k.dims(g)) != tuple(want):
            raise ShapeError(f"resize_backward: the gradient has shape "
                             f"{shape_str(k.dims(g))}, expected {shape_str(want)}")
        (g, one), like_dims = _one(k, g), tuple(k.dims(like))
        dx = k.resize.resize_backward(g, (1, *like_dims) if one else like_dims, mode, align,
                                      half, scales, nchw)
        return dx[0] if one else dx
    return forward


def _grad_fn(node) -> str:
    """PyTorch's name of the backward (F.interpolate's nearest or bilinear)."""
    attrs = node.attrs or {}
    if attrs.get("mode", "bilinear") == "bilinear":
        return "UpsampleBilinear2DBackward0"
    return "UpsampleNearestExact2DBackward0" if attrs.get("half_pixel") else \
        "UpsampleNearest2DBackward0"


resize = define(
    "resize", _forward(_HOST),
    lambda s, d, attrs: (_shape(s[0], attrs), _dtype(d[0], attrs.get("mode", "bilinear"))),
    lambda g, out, needs, attrs, x: (resize_backward(g, x, **attrs),),
    traits=("fresh",), reference=K.reference_resize, cuda=_cuda(_forward),
    attr_names=_ATTRS, inputs=1, saves=(0,), grad_fn=_grad_fn,
    doc="Images resized to size=(H, W) by nearest or bilinear sampling, in NHWC or NCHW, "
        "with TF1's legacy, TF2's half-pixel or align-corners sampling (see the module).")
resize_backward = define(
    "resize_backward", _backward(_HOST),
    lambda s, d, attrs: (s[1], d[0]),
    # Linear in g: its own gradient samples again; like is read for its shape alone.
    lambda gg, out, needs, attrs, g, like: (resize(gg, **attrs), None),
    traits=("fresh",), reference=K.reference_resize_backward, cuda=_cuda(_backward),
    shape_inputs=(1,), attr_names=_ATTRS, inputs=2, saves=(),
    doc="The gradient of resize: each output's gradient added back to the inputs it read, "
        "with the same weights (like: the images, read for their shape).")

__all__ = ["resize", "resize_backward"]
