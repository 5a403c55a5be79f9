"""2-D convolution and pooling over NCHW tensors (PyTorch's layout and semantics).

``conv2d`` is cross-correlation, as in every framework. Its gradients are ops of their own,
as in TensorFlow (``Conv2DBackpropInput`` / ``Conv2DBackpropFilter``); each is linear in
its tensor inputs, so their own gradients are again convolutions (second derivatives work).
The backward ops take the forward input as a *shape source* (``like``), because with a
stride the input size cannot be recovered from the output size.

Each forward checks shapes and attributes, and casts, before its kernel runs, the same way
on every device: it is written once over a :class:`_Kernels` (the CPU's kernels,
:mod:`kernelgraph.kernels.conv`, or the CUDA ones, with the same signatures).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError, shown
from ..graph import shape_str
from ..kernels import conv as K
from ..kernels import conv_gemm as G
from ..kernels import pool_index as PI
from ..kernels import records
from ..kernels import reference as R
from ..kernels import reference_grads as RG
from .elementwise import _floating, _to
from .linalg import mixed_dtypes
from .reduce import broadcast_reduced
from .registry import define


# -- attributes -----------------------------------------------------------------------------
def _pair(value, what: str, minimum: int, op: str) -> tuple[int, int]:
    def is_int(v):
        return isinstance(v, int | np.integer) and not isinstance(v, bool)

    if is_int(value):
        pair = (int(value), int(value))
    elif isinstance(value, tuple | list) and len(value) == 2 and all(map(is_int, value)):
        pair = (int(value[0]), int(value[1]))
    else:
        raise TypeError(f"{op}: {what} must be an int or a pair of ints, got {shown(value)}")
    if min(pair) < minimum:
        need = "positive" if minimum == 1 else "non-negative"
        raise ShapeError(f"{op}: {what} must be {need}, got {shown(value)}")
    return pair


def _channels_last(attrs) -> bool:
    layout = attrs.get("data_format", "NCHW")
    if layout not in ("NCHW", "NHWC"):
        raise ValueError(f"conv2d: data_format must be 'NCHW' or 'NHWC', got {shown(layout)}")
    return layout == "NHWC"


def _conv_attrs(attrs):
    """(stride, padding, dilation, channels_last): the kernels' arguments after the arrays."""
    return (_pair(attrs.get("stride", 1), "stride", 1, "conv2d"),
            _pair(attrs.get("padding", 0), "padding", 0, "conv2d"),
            _pair(attrs.get("dilation", 1), "dilation", 1, "conv2d"), _channels_last(attrs))


def _pool_attrs(op, attrs):
    if attrs.get("kernel_size") is None:
        raise TypeError(f"{op}() missing required argument 'kernel_size'")
    kernel = _pair(attrs["kernel_size"], "kernel_size", 1, op)
    stride = attrs.get("stride")
    stride = kernel if stride is None else _pair(stride, "stride", 1, op)
    padding = _pair(attrs.get("padding", 0), "padding", 0, op)
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise ShapeError(f"{op}: padding {padding} must be at most half the kernel size "
                         f"{kernel}")
    return kernel, stride, padding


# -- shape rules (None dims allowed) --------------------------------------------------------
def _rank4(op, shape, what, layout, context):
    if shape is not None and len(shape) != 4:
        raise ShapeError(f"{op}: {what} must have rank 4 {layout}, got shape "
                         f"{shape_str(shape)}{context}")
    return shape if shape is not None else (None,) * 4


def _conv_shape(sx, sw, attrs):
    stride, padding, dilation, channels_last = _conv_attrs(attrs)
    both = f" (input {shape_str(sx)}, weights {shape_str(sw)})"
    x = _rank4("conv2d", sx, "the input", "(N, H, W, C)" if channels_last else "(N, C, H, W)",
               both)
    x = K.nchw_shape(x, channels_last)
    w = _rank4("conv2d", sw, "the weights", "(O, C, KH, KW)", both)
    if None not in (x[1], w[1]) and x[1] != w[1]:
        raise ShapeError(f"conv2d: the input {shape_str(sx)} has {x[1]} channels but the "
                         f"weights {shape_str(sw)} expect {w[1]} (weights are (O, C, KH, KW))")
    spatial = []
    for a in (0, 1):
        size, k = x[2 + a], w[2 + a]
        if k is not None and k < 1:
            raise ShapeError(f"conv2d: the weights {shape_str(sw)} have an empty kernel")
        if size is None or k is None:
            spatial.append(None)
            continue
        out = K.out_size(size, k, stride[a], padding[a], dilation[a])
        if out < 1:
            raise ShapeError(
                f"conv2d: the kernel {w[2]}x{w[3]} (dilation {dilation}) is larger than the "
                f"padded input: input {shape_str(sx)} with padding {padding}, weights "
                f"{shape_str(sw)}")
        spatial.append(out)
    return K.nhwc_shape((x[0], w[0], *spatial), channels_last)


def _pool_shape(op, sx, attrs):
    kernel, stride, padding = _pool_attrs(op, attrs)
    x = _rank4(op, sx, "the input", "(N, C, H, W)", "")
    if 0 in x[1:]:
        # No rows or columns would leave windows of padding alone: a max of nothing.
        raise ShapeError(f"{op}: the input must have non-zero channels, height and width "
                         f"(an optional 0 dim batch size, as in PyTorch), got shape "
                         f"{shape_str(sx)}")
    spatial = []
    for a in (0, 1):
        if x[2 + a] is None:
            spatial.append(None)
            continue
        out = K.out_size(x[2 + a], kernel[a], stride[a], padding[a], 1)
        if out < 1:
            raise ShapeError(f"{op}: the window {kernel[0]}x{kernel[1]} is larger than the "
                             f"padded input: input {shape_str(sx)} with padding {padding}")
        spatial.append(out)
    return (x[0], x[1], *spatial)


def _conv_dtype(dx, dw, static: bool = False):
    """The dtype conv2d computes in: the input's and the filter's one dtype (two are
    refused, in PyTorch's words, or TF1's where a graph node is built), integers and bools
    as float32."""
    if dx != dw:
        raise mixed_dtypes("conv2d", dx, dw, batched=True, static=static,
                           names=("input", "filter"), tf_op="Conv2D")
    return _floating(D.as_dtype(dx))


# -- the kernels a forward runs ------------------------------------------------------------
class _Kernels(NamedTuple):
    """A device's conv kernels, its cast to a dtype and its ``shape`` of a value."""

    conv: object
    to: object
    dims: object


def _device_dims(a) -> tuple:
    # Plain tuples: the simulator's shapes refuse negative indices, unlike real ones.
    return tuple(int(s) for s in np.shape(a))


def _cuda(build):
    """A card's ``cuda``: the forward ``build`` makes over the CUDA kernels."""
    def cuda(k):
        return build(_Kernels(k.conv, lambda x, dt: k.core.astype(x, D.as_dtype(dt)),
                              _device_dims))
    return cuda


_HOST = _Kernels(K, _to, np.shape)


# -- conv2d and its two backward ops --------------------------------------------------------
def _conv2d(k: _Kernels):
    def forward(x, w, **attrs):
        _conv_shape(k.dims(x), k.dims(w), attrs)  # the user-facing message, before the kernel's
        dt = _conv_dtype(x.dtype, w.dtype)
        return k.conv.conv2d(k.to(x, dt), k.to(w, dt), *_conv_attrs(attrs))
    return forward


def _conv2d_infer(shapes_, dtypes, attrs):
    return _conv_shape(shapes_[0], shapes_[1], attrs), _conv_dtype(*dtypes, static=True)


def _conv2d_grad(g, out, needs, attrs, x, w):
    # Eager backward on the host: the filter gradient from the forward's im2col matrix.
    dw = (G.recorded_filter_grad(x, g, w.shape, *_conv_attrs(attrs))
          if needs[1] and type(g) is np.ndarray else None)
    return ((conv2d_backward_input(g, w, x, **attrs) if needs[0] else None),
            (conv2d_backward_filter(x, g, w, **attrs) if dw is None and needs[1] else dw))


def _backward_input(k: _Kernels):
    def forward(g, w, like, **attrs):
        return k.conv.conv2d_backward_input(g, k.to(w, g.dtype), k.dims(like),
                                            *_conv_attrs(attrs))
    return forward


def _backward_input_infer(shapes_, dtypes, attrs):
    _conv_shape(shapes_[2], shapes_[1], attrs)
    return shapes_[2], dtypes[0]


def _backward_input_grad(gg, out, needs, attrs, g, w, like):
    # conv2d_backward_input(g, w) is the adjoint of x -> conv2d(x, w): linear in g and in w.
    return ((conv2d(gg, w, **attrs) if needs[0] else None),
            (conv2d_backward_filter(gg, g, w, **attrs) if needs[1] else None), None)


def _backward_filter(k: _Kernels):
    def forward(x, g, like, **attrs):
        return k.conv.conv2d_backward_filter(k.to(x, g.dtype), g, k.dims(like),
                                             *_conv_attrs(attrs))
    return forward


def _backward_filter_infer(shapes_, dtypes, attrs):
    _conv_shape(shapes_[0], shapes_[2], attrs)
    return shapes_[2], dtypes[1]


def _backward_filter_grad(gg, out, needs, attrs, x, g, like):
    return ((conv2d_backward_input(g, gg, x, **attrs) if needs[0] else None),
            (conv2d(x, gg, **attrs) if needs[1] else None), None)


_CONV_ATTRS = ("stride", "padding", "dilation", "data_format")
conv2d = define(
    "conv2d", _conv2d(_HOST), _conv2d_infer, _conv2d_grad, traits=("fresh",),
    reference=R.conv2d, cuda=_cuda(_conv2d), inputs=2, attr_names=_CONV_ATTRS,
    doc="2-D convolution of x (N, C, H, W) with weights (O, C, KH, KW) -> (N, O, OH, OW); "
        "stride, padding, dilation: int or (h, w) pair, as torch.nn.functional.conv2d "
        "(without bias); data_format='NHWC' takes x and gives the output as (N, H, W, C), "
        "TensorFlow's layout (the weights stay (O, C, KH, KW)). x and the weights have one "
        "dtype (PyTorch and TF1 refuse two); integers and bools compute in float32.",
    saves=(0, 1), grad_fn="ConvolutionBackward0", batch="images")
conv2d_backward_input = define(
    "conv2d_backward_input", _backward_input(_HOST), _backward_input_infer,
    _backward_input_grad, reference=RG.conv2d_backward_input, cuda=_cuda(_backward_input),
    inputs=3, attr_names=_CONV_ATTRS,
    doc="The gradient of conv2d with respect to its input: (g, w, like=x) -> x's shape.",
    saves=(0, 1))
conv2d_backward_filter = define(
    "conv2d_backward_filter", _backward_filter(_HOST), _backward_filter_infer,
    _backward_filter_grad, reference=RG.conv2d_backward_filter, cuda=_cuda(_backward_filter),
    inputs=3, attr_names=_CONV_ATTRS, traits=("run_records",),
    doc="The gradient of conv2d with respect to its weights: (x, g, like=w) -> w's shape.",
    saves=(0, 1))


# -- pooling --------------------------------------------------------------------------------
def _pool(op):
    def build(k: _Kernels):
        kernel = getattr(k.conv, op)

        def forward(x, **attrs):
            _pool_shape(op, k.dims(x), attrs)
            return kernel(k.to(x, _floating(D.as_dtype(x.dtype))), *_pool_attrs(op, attrs))
        return forward
    return build


def _pool_infer(op):
    def infer(shapes_, dtypes, attrs):
        return _pool_shape(op, shapes_[0], attrs), _floating(dtypes[0])
    return infer


def _pool_backward_infer(op):
    def infer(shapes_, dtypes, attrs):
        _pool_shape(op, shapes_[1], attrs)
        return shapes_[1], dtypes[0]
    return infer


def _max_pool_backward(k: _Kernels):
    def forward(g, x, **attrs):
        return k.conv.max_pool2d_backward(g, k.to(x, g.dtype), *_pool_attrs("max_pool2d", attrs))
    return forward


def _avg_pool_backward(k: _Kernels):
    def forward(g, like, **attrs):
        return k.conv.avg_pool2d_backward(g, k.dims(like), *_pool_attrs("avg_pool2d", attrs))
    return forward


def _max_pool_select(k: _Kernels):
    def forward(g, x, **attrs):
        return k.conv.max_pool2d_select(g, k.to(x, g.dtype), *_pool_attrs("max_pool2d", attrs))
    return forward


def _select_infer(shapes_, dtypes, attrs):
    return _pool_shape("max_pool2d", shapes_[1], attrs), dtypes[0]


def _max_pool_grad(g, out, needs, attrs, x):
    # Eager backward on host arrays: x is the array the forward pooled, which recorded its
    # picks (kernels/pool_index.py), so the gradient is a scatter with no window scanned.
    idx = (records.recorded(x, ("max_pool2d", *_pool_attrs("max_pool2d", attrs)))
           if type(g) is np.ndarray else None)
    if idx is not None and g.dtype == x.dtype and g.shape == idx.shape:
        return (PI.scatter(g, idx, x.shape),)
    return (max_pool2d_backward(g, x, **attrs),)


_POOL_ATTRS = ("kernel_size", "stride", "padding")
max_pool2d = define(
    "max_pool2d", _pool("max_pool2d")(_HOST), _pool_infer("max_pool2d"),
    _max_pool_grad, traits=("fresh",),
    reference=R.max_pool2d, cuda=_cuda(_pool("max_pool2d")), attr_names=_POOL_ATTRS,
    doc="Maximum over kernel_size windows of x (N, C, H, W); stride defaults to kernel_size, "
        "padding (at most half the window) never wins; a NaN in a window wins. The gradient "
        "goes to each window's last NaN, else its first maximum, as in PyTorch. The batch may "
        "be empty; channels, height and width may not (PyTorch's rule).", saves=(0,),
        grad_fn="MaxPool2DWithIndicesBackward0", batch="images")
max_pool2d_backward = define(
    "max_pool2d_backward", _max_pool_backward(_HOST), _pool_backward_infer("max_pool2d"),
    # Linear in g, so its own gradient is the transposed routing; x only picks the routes.
    lambda gg, out, needs, attrs, g, x: (max_pool2d_select(gg, x, **attrs), None),
    reference=RG.max_pool2d_backward, cuda=_cuda(_max_pool_backward), inputs=2,
    attr_names=_POOL_ATTRS, traits=("run_records",),
    doc="The gradient of max_pool2d: g routed to each window's last NaN of x, else its "
        "first maximum.", saves=(1,))
max_pool2d_select = define(
    "max_pool2d_select", _max_pool_select(_HOST), _select_infer,
    lambda g, out, needs, attrs, gx, x: (max_pool2d_backward(g, x, **attrs), None),
    reference=R.max_pool2d_select, cuda=_cuda(_max_pool_select), inputs=2,
    attr_names=_POOL_ATTRS,
    doc="g (shaped like x) read at each window's last NaN of x, else its first maximum: the "
        "gradient of max_pool2d_backward, for second derivatives of max_pool2d.", saves=(1,))
avg_pool2d = define(
    "avg_pool2d", _pool("avg_pool2d")(_HOST), _pool_infer("avg_pool2d"),
    lambda g, out, needs, attrs, x: (avg_pool2d_backward(g, x, **attrs),), traits=("fresh",),
    reference=R.avg_pool2d, cuda=_cuda(_pool("avg_pool2d")), attr_names=_POOL_ATTRS,
    doc="Mean over kernel_size windows of x (N, C, H, W), zero padding counted in the mean "
        "(PyTorch's count_include_pad=True); stride defaults to kernel_size; only the batch "
        "may be empty.", saves=(0,), grad_fn="AvgPool2DBackward0", batch="images")
avg_pool2d_backward = define(
    "avg_pool2d_backward", _avg_pool_backward(_HOST), _pool_backward_infer("avg_pool2d"),
    lambda gg, out, needs, attrs, g, like: (avg_pool2d(gg, **attrs), None),
    reference=RG.avg_pool2d_backward, cuda=_cuda(_avg_pool_backward), inputs=2,
    attr_names=_POOL_ATTRS,
    doc="The gradient of avg_pool2d: each g spread evenly over its window (like=x's shape).",
    saves=())


def _global_shape(s):
    x = _rank4("global_avg_pool2d", s, "the input", "(N, C, H, W)", "")
    return (x[0], x[1])


def _global(k: _Kernels):
    def forward(x):
        _global_shape(k.dims(x))
        return k.conv.global_avg_pool2d(k.to(x, _floating(D.as_dtype(x.dtype))))
    return forward


global_avg_pool2d = define(
    "global_avg_pool2d", _global(_HOST),
    lambda s, d, attrs: (_global_shape(s[0]), _floating(d[0])),
    lambda g, out, needs, attrs, x: (broadcast_reduced(g, x, axis=(2, 3), mean=True),),
    reference=R.global_avg_pool2d, cuda=_cuda(_global),
    doc="Mean over H and W: (N, C, H, W) -> (N, C).", saves=(0,), grad_fn="MeanBackward1",
    batch="images")
