"""Resampling NCHW images, in PyTorch's layout and index formulas: ``upsample_nearest2d``
and ``upsample_bilinear2d`` (``F.interpolate``), ``reflection_pad2d`` and
``replication_pad2d`` (``F.pad`` modes 'reflect' and 'replicate'), ``adaptive_avg_pool2d``.

Each is a separable linear map of the input (:mod:`kernelgraph.kernels.interpolate`): the
card's forward builds the two per-axis tables from the input's height and width and its
attributes, and one kernel applies them. Each has a backward op (``<name>_backward(g,
like)``), the transposed map, run by the same kernel; being linear in ``g``, the backward's
own gradient is the forward again, so second derivatives work.

>>> import kernelgraph as kg
>>> x = kg.arange(4.0).reshape(1, 1, 2, 2)
>>> upsample_nearest2d(x, size=(2, 4)).tolist()
[[[[0.0, 0.0, 1.0, 1.0], [2.0, 2.0, 3.0, 3.0]]]]
>>> reflection_pad2d(x, padding=(1, 0, 0, 0)).tolist()
[[[[1.0, 0.0, 1.0], [3.0, 2.0, 3.0]]]]
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError, shown
from ..graph import shape_str
from ..kernels import interpolate as K
from .registry import define

__all__ = ["adaptive_avg_pool2d", "reflection_pad2d", "replication_pad2d",
           "upsample_bilinear2d", "upsample_nearest2d"]


def _ints(value, n: int, what: str, op: str, minimum: int) -> tuple:
    if (isinstance(value, tuple | list) and len(value) == n
            and all(isinstance(v, int | np.integer) and not isinstance(v, bool)
                    for v in value)):
        if min(value) >= minimum:
            return tuple(int(v) for v in value)
    need = "positive" if minimum == 1 else "non-negative"
    raise ValueError(f"{op}: {what} must be {n} {need} ints, got {shown(value)}")


def _rank4(op: str, shape):
    if shape is not None and len(shape) != 4:
        raise ShapeError(f"{op}: expected an input of shape (N, C, H, W), got "
                         f"{shape_str(shape)}")
    return tuple(shape) if shape is not None else (None,) * 4


def _float(op: str, dtype):
    dtype = D.as_dtype(dtype)
    if not D.is_floating(dtype):
        raise TypeError(f"{op}: expected a floating-point input, got {dtype.name}")
    return dtype


# -- the five maps: (output size, tables) from an input's height and width ----------------
def _upsample_size(op, h, w, attrs):
    return _ints(attrs.get("size"), 2, "size", op, 1)


def _scales(attrs):
    scales = attrs.get("scales")
    return (None, None) if scales is None else tuple(scales)


def _nearest(h, w, attrs):
    size, scales = _upsample_size("upsample_nearest2d", h, w, attrs), _scales(attrs)
    return K.nearest_table(h, size[0], scales[0]), K.nearest_table(w, size[1], scales[1])


def _bilinear(h, w, attrs):
    size, scales = _upsample_size("upsample_bilinear2d", h, w, attrs), _scales(attrs)
    corners = bool(attrs.get("align_corners", False))
    return (K.bilinear_table(h, size[0], corners, scales[0]),
            K.bilinear_table(w, size[1], corners, scales[1]))


def _padding(op, h, w, attrs):
    left, right, top, bottom = _ints(attrs.get("padding"), 4, "padding", op, 0)
    if op == "reflection_pad2d" and None not in (h, w) and (
            max(left, right) >= w or max(top, bottom) >= h):
        # RuntimeError, as PyTorch raises it
        raise RuntimeError(f"{op}: Padding size should be less than the corresponding input "
                           f"dimension, but got: padding ({left}, {right}, {top}, {bottom}) "
                           f"for an input of height {h} and width {w}")
    return left, right, top, bottom


def _pad_size(op):
    def size(h, w, attrs):
        left, right, top, bottom = _padding(op, h, w, attrs)
        return (None if h is None else h + top + bottom,
                None if w is None else w + left + right)
    return size


def _pad_tables(op, table):
    def tables(h, w, attrs):
        left, right, top, bottom = _padding(op, h, w, attrs)
        return table(h, top, bottom), table(w, left, right)
    return tables


def _adaptive(h, w, attrs):
    oh, ow = _ints(attrs.get("output_size"), 2, "output_size", "adaptive_avg_pool2d", 1)
    return K.adaptive_avg_table(h, oh), K.adaptive_avg_table(w, ow)


# -- cards ---------------------------------------------------------------------------------
def _dims(a) -> tuple:
    return tuple(int(s) for s in np.shape(a))


def _cuda_resample(x, rows, cols):
    from ..kernels.cuda import interpolate as CK  # numba.cuda loads on first CUDA use
    return CK.resample2d(x, rows, cols)


def _define(name: str, size, tables, grad_fn: str, attr_names: tuple, doc: str):
    def infer(shapes_, dtypes, attrs):
        n, c, h, w = _rank4(name, shapes_[0])
        return (n, c, *size(h, w, attrs)), _float(name, dtypes[0])

    def forward_on(resample):
        def forward(x, **attrs):
            _, _, h, w = _rank4(name, _dims(x))
            _float(name, x.dtype)
            if 0 in (h, w):
                raise ShapeError(f"{name}: the input must have a non-zero height and width, "
                                 f"got shape {shape_str(_dims(x))}")
            return resample(x, *tables(h, w, attrs))
        return forward

    def backward_on(resample):
        def backward(g, like, **attrs):
            h, w = _dims(like)[2:]
            rows, cols = tables(h, w, attrs)
            return resample(g, K.transpose_table(rows, h), K.transpose_table(cols, w))
        return backward

    def reference(x, **attrs):
        return K.resample2d_reference(x, *tables(*x.shape[2:], attrs))

    def backward_reference(g, like, **attrs):
        h, w = like.shape[2:]
        rows, cols = tables(h, w, attrs)
        return K.resample2d_reference(g, K.transpose_table(rows, h),
                                      K.transpose_table(cols, w))

    def backward_infer(shapes_, dtypes, attrs):
        return _rank4(name, shapes_[1]), dtypes[0]

    op = define(
        name, forward_on(K.resample2d), infer,
        lambda g, out, needs, attrs, x: (backward_op(g, x, **attrs),), traits=("fresh",),
        reference=reference, cuda=lambda k: forward_on(_cuda_resample), attr_names=attr_names,
        doc=doc, saves=(0,), grad_fn=grad_fn)
    backward_op = define(
        name + "_backward", backward_on(K.resample2d), backward_infer,
        # The transposed map is linear in g; its own gradient is the forward map again.
        lambda gg, out, needs, attrs, g, like: (op(gg, **attrs), None),
        reference=backward_reference, cuda=lambda k: backward_on(_cuda_resample), inputs=2,
        attr_names=attr_names, saves=(),
        doc=f"The gradient of {name}: (g, like=x) -> x's shape (the transposed map).")
    return op, backward_op


upsample_nearest2d, upsample_nearest2d_backward = _define(
    "upsample_nearest2d", lambda h, w, attrs: _upsample_size("upsample_nearest2d", h, w, attrs),
    _nearest, "UpsampleNearest2DBackward0", ("size", "scales"),
    "PyTorch's nearest upsampling of x (N, C, H, W) to size=(OH, OW): source index "
    "min(floor(o * s), in - 1), s = 1 / scale where scales=(sh, sw) is given (F.interpolate "
    "with scale_factor), else in / out.")
upsample_bilinear2d, upsample_bilinear2d_backward = _define(
    "upsample_bilinear2d",
    lambda h, w, attrs: _upsample_size("upsample_bilinear2d", h, w, attrs),
    _bilinear, "UpsampleBilinear2DBackward0", ("size", "align_corners", "scales"),
    "PyTorch's bilinear upsampling of x (N, C, H, W) to size=(OH, OW), align_corners "
    "False (half-pixel centres, clamped at 0) or True (corner pixels aligned); scales as "
    "upsample_nearest2d.")
reflection_pad2d, reflection_pad2d_backward = _define(
    "reflection_pad2d", _pad_size("reflection_pad2d"),
    _pad_tables("reflection_pad2d", K.reflect_table), "ReflectionPad2DBackward0",
    ("padding",),
    "Pad x (N, C, H, W) by padding=(left, right, top, bottom) with its reflection at the "
    "edges (the edge itself not repeated); each padding less than its dimension.")
replication_pad2d, replication_pad2d_backward = _define(
    "replication_pad2d", _pad_size("replication_pad2d"),
    _pad_tables("replication_pad2d", K.replicate_table), "ReplicationPad2DBackward0",
    ("padding",),
    "Pad x (N, C, H, W) by padding=(left, right, top, bottom), repeating its edge values.")
adaptive_avg_pool2d, adaptive_avg_pool2d_backward = _define(
    "adaptive_avg_pool2d",
    lambda h, w, attrs: _ints(attrs.get("output_size"), 2, "output_size",
                              "adaptive_avg_pool2d", 1),
    _adaptive, "AdaptiveAvgPool2DBackward0", ("output_size",),
    "Mean of x (N, C, H, W) over output_size=(OH, OW) windows [floor(o * in / out), "
    "ceil((o + 1) * in / out)) along each axis, as torch.nn.AdaptiveAvgPool2d.")
