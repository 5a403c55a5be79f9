"""Transposed 2-D convolution over NCHW tensors (``torch.nn.functional.conv_transpose2d``
without groups).

A transposed convolution *is* the input gradient of a convolution: ``conv_transpose2d(x,
w)`` sends each input pixel back through the kernel, exactly as ``conv2d_backward_input(x,
w, like=y)`` sends an output gradient back to ``conv2d``'s input. So its forward runs the
existing ``conv2d_backward_input`` kernels (CPU and CUDA) with the output shape PyTorch
gives, ``(H - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``, and its
gradients are the other two convolution ops: ``conv2d(gy, w)`` for ``x`` and
``conv2d_backward_filter(gy, x, like=w)`` for ``w``. The weights are laid out as PyTorch's
``(in_channels, out_channels, KH, KW)``, which is ``conv2d``'s (O, C, KH, KW) for the
convolution going the other way. The bias (C_out,) is an input of the op, as in PyTorch's
``convolution``, so the result's ``grad_fn`` is PyTorch's ``ConvolutionBackward0`` with or
without one (the face passes zeros where there is none).

>>> import kernelgraph as kg
>>> y = conv_transpose2d(kg.ones(1, 1, 2, 2), kg.ones(1, 1, 2, 2), kg.zeros(1), stride=2)
>>> y.shape, float(y.sum())
(torch.Size([1, 1, 4, 4]), 16.0)
"""

from __future__ import annotations

from ..errors import ShapeError
from ..graph import shape_str
from ..kernels import reference_grads as RG
from .conv import _HOST, _conv_dtype, _cuda, _Kernels, _pair, _rank4, conv2d, conv2d_backward_filter
from .elementwise import add
from .reduce import sum as _sum
from .registry import define
from .shape import reshape

__all__ = ["conv_transpose2d"]

_OP = "conv_transpose2d"


def _attrs(attrs):
    stride = _pair(attrs.get("stride", 1), "stride", 1, _OP)
    padding = _pair(attrs.get("padding", 0), "padding", 0, _OP)
    out_pad = _pair(attrs.get("output_padding", 0), "output_padding", 0, _OP)
    dilation = _pair(attrs.get("dilation", 1), "dilation", 1, _OP)
    for a in (0, 1):
        if out_pad[a] >= max(stride[a], dilation[a]):
            raise ValueError(f"{_OP}: output padding must be smaller than either stride or "
                             f"dilation, but got output_padding {out_pad}, stride {stride}, "
                             f"dilation {dilation}")
        if out_pad[a] >= stride[a]:
            raise NotImplementedError(f"{_OP}: output_padding {out_pad} not smaller than the "
                                      f"stride {stride} is not supported by kernelgraph")
    return stride, padding, out_pad, dilation


def _check_bias(sb, out_channels):
    if sb is not None and (len(sb) != 1 or None not in (sb[0], out_channels)
                           and sb[0] != out_channels):
        raise ShapeError(f"{_OP}: the bias must have shape ({out_channels},) (one per output "
                         f"channel), got {shape_str(sb)}")


def _shape(sx, sw, attrs):
    stride, padding, out_pad, dilation = _attrs(attrs)
    both = f" (input {shape_str(sx)}, weights {shape_str(sw)})"
    x = _rank4(_OP, sx, "the input", "(N, C_in, H, W)", both)
    w = _rank4(_OP, sw, "the weights", "(C_in, C_out, KH, KW)", both)
    if None not in (x[1], w[0]) and x[1] != w[0]:
        raise ShapeError(f"{_OP}: the input {shape_str(sx)} has {x[1]} channels but the "
                         f"weights {shape_str(sw)} expect {w[0]} (weights are (C_in, C_out, "
                         f"KH, KW))")
    spatial = []
    for a in (0, 1):
        size, k = x[2 + a], w[2 + a]
        if size is None or k is None:
            spatial.append(None)
            continue
        out = ((size - 1) * stride[a] - 2 * padding[a] + dilation[a] * (k - 1)
               + out_pad[a] + 1)
        if out < 1 or size < 1 or k < 1:
            raise ShapeError(f"{_OP}: the output would be empty: input {shape_str(sx)}, "
                             f"weights {shape_str(sw)}, padding {padding}")
        spatial.append(out)
    return (x[0], w[1], *spatial)


def _conv_attrs(attrs) -> dict:
    stride, padding, _, dilation = _attrs(attrs)
    return {"stride": stride, "padding": padding, "dilation": dilation}


def _forward(k: _Kernels):
    def forward(x, w, b, **attrs):
        shape = _shape(k.dims(x), k.dims(w), attrs)
        _check_bias(k.dims(b), shape[1])
        dt = _conv_dtype(x.dtype, w.dtype)
        c = _conv_attrs(attrs)
        y = k.conv.conv2d_backward_input(k.to(x, dt), k.to(w, dt), shape, c["stride"],
                                         c["padding"], c["dilation"])
        # The bias added by the add op on this device's arrays (a host or a device array).
        return add(y, reshape(k.to(b, dt), shape=(-1, 1, 1)))
    return forward


def _infer(shapes_, dtypes, attrs):
    shape = _shape(shapes_[0], shapes_[1], attrs)
    _check_bias(shapes_[2], shape[1])
    return shape, _conv_dtype(*dtypes[:2], static=True)


def _grad(g, out, needs, attrs, x, w, b):
    c = _conv_attrs(attrs)
    return ((conv2d(g, w, **c) if needs[0] else None),
            (conv2d_backward_filter(g, x, w, **c) if needs[1] else None),
            (_sum(g, axis=(0, 2, 3)) if needs[2] else None))


def _reference(x, w, b, **attrs):
    c = _conv_attrs(attrs)
    shape = _shape(x.shape, w.shape, attrs)
    y = RG.conv2d_backward_input(x, w, _Like(shape), **c) + b.reshape(-1, 1, 1)
    return y.astype(_conv_dtype(x.dtype, w.dtype))


class _Like:
    """A shape source for the reference (it reads ``np.shape(like)`` only)."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def __len__(self):
        return len(self.shape)


conv_transpose2d = define(
    _OP, _forward(_HOST), _infer, _grad, traits=("fresh",), reference=_reference,
    cuda=_cuda(_forward), inputs=3,
    attr_names=("stride", "padding", "output_padding", "dilation"),
    doc="Transposed 2-D convolution of x (N, C_in, H, W) with weights (C_in, C_out, KH, KW), "
        "plus a bias (C_out,) -> (N, C_out, (H - 1) * stride - 2 * padding + dilation * (KH - 1) + "
        "output_padding + 1, ...), as torch.nn.functional.conv_transpose2d without groups "
        "(output_padding smaller than the stride).", saves=(0, 1),
    grad_fn="ConvolutionBackward0")
