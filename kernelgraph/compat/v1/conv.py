"""Convolution and pooling in TensorFlow's layout (NHWC data, HWIO filters, 'SAME' or
'VALID' padding by TF's rules): ``tf.nn.conv2d`` (kernelgraph's conv2d in either layout),
``tf.nn.max_pool2d``, ``tf.nn.avg_pool2d`` (its NCHW ops between transposes)."""

from __future__ import annotations

import numpy as np

from ... import errors, ops


def _spatial(value, what: str, data_format: str) -> tuple[int, int]:
    """TF's strides/ksize/dilations: an int, [h, w], or a 4-list in the data layout."""
    v = [value] if isinstance(value, int) else list(value)
    if len(v) == 1:
        return v[0], v[0]
    if len(v) == 2:
        return v[0], v[1]
    if len(v) == 4:
        h, w = (1, 2) if data_format == "NHWC" else (2, 3)
        if v[0] != 1 or v[3 if data_format == "NHWC" else 1] != 1:
            raise ValueError(f"{what}: the batch and channel entries must be 1, got {value}")
        return v[h], v[w]
    raise ValueError(f"{what} must be an int or a list of 1, 2 or 4 ints, got "
                     f"{errors.shown(value)}")


def _same_pads(x, kernel, stride, dilation, what, first=2):
    """TF's 'SAME' padding ((top, bottom), (left, right)) for x whose height is axis
    ``first`` (2: NCHW, 1: NHWC): the output is ceil(size / stride), and an odd total puts
    the extra row/column at the bottom/right."""
    pads = []
    for a in range(2):
        size = x.shape[first + a] if x.shape is not None else None
        if size is None:
            raise ValueError(f"{what}: padding='SAME' needs the spatial size, but the input "
                             f"shape is {x.shape}")
        span = (kernel[a] - 1) * dilation[a] + 1
        total = max((-(-size // stride[a]) - 1) * stride[a] + span - size, 0)
        pads.append((total // 2, total - total // 2))
    return pads


def _padded(x, padding, kernel, stride, dilation, what, fill=0.0, channels_last=False):
    """(x, symmetric padding) for the ops (x NCHW, or NHWC with ``channels_last``):
    asymmetric 'SAME' padding goes into a pad."""
    if padding == "VALID":
        return x, 0
    if padding != "SAME":
        raise ValueError(f"{what}: padding must be 'SAME' or 'VALID', got {errors.shown(padding)}")
    (t, b), (l_, r) = _same_pads(x, kernel, stride, dilation, what, 1 if channels_last else 2)
    if t == b and l_ == r and t <= kernel[0] // 2 and l_ <= kernel[1] // 2:
        return x, (t, l_)
    spatial = ((t, b), (l_, r))
    pads = ((0, 0), *spatial, (0, 0)) if channels_last else ((0, 0), (0, 0), *spatial)
    return ops.pad(x, pads, value=fill), 0


def _check_format(data_format):
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {errors.shown(data_format)}")


def _nchw(x, data_format):
    _check_format(data_format)
    return x if data_format == "NCHW" else ops.transpose(x, perm=(0, 3, 1, 2))


def _back(y, data_format):
    return y if data_format == "NCHW" else ops.transpose(y, perm=(0, 2, 3, 1))


def conv2d(input, filters=None, strides=1, padding="VALID", data_format="NHWC",  # noqa: A002
           dilations=1, name=None, filter=None):  # noqa: A002 - TF1's argument names
    """tf.nn.conv2d: NHWC input, HWIO filters, padding 'SAME' or 'VALID' (TF's rules, the
    odd extra row at the bottom), computed by kernelgraph's conv2d in the same layout."""
    w = filters if filters is not None else filter
    stride = _spatial(strides, "strides", data_format)
    dilation = _spatial(dilations, "dilations", data_format)
    _check_format(data_format)
    x = input
    w = ops.transpose(w, perm=(3, 2, 0, 1))  # HWIO -> OIHW
    kernel = tuple(w.shape[2:]) if w.shape is not None else None
    if kernel is None or None in kernel:
        if padding == "SAME":
            raise ValueError("conv2d: padding='SAME' needs the filter's spatial size")
        kernel = (1, 1)  # not used by 'VALID'
    x, pad = _padded(x, padding, kernel, stride, dilation, "conv2d",
                     channels_last=data_format == "NHWC")
    return ops.conv2d(x, w, stride=stride, padding=pad, dilation=dilation,
                      data_format=data_format, name=name)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """tf.nn.max_pool2d (also tf.nn.max_pool): padding never wins, as in TF."""
    kernel = _spatial(ksize, "ksize", data_format)
    stride = _spatial(strides, "strides", data_format)
    x, pad = _padded(_nchw(input, data_format), padding, kernel, stride, (1, 1),
                     "max_pool2d", fill=-np.inf)
    return _back(ops.max_pool2d(x, kernel_size=kernel, stride=stride, padding=pad, name=name),
                 data_format)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """tf.nn.avg_pool2d with padding='VALID' (TF's 'SAME' leaves padding out of each mean,
    which kernelgraph's avg_pool2d does not do)."""
    if padding != "VALID":
        raise NotImplementedError("tf.nn.avg_pool2d: only padding='VALID' is implemented")
    kernel = _spatial(ksize, "ksize", data_format)
    stride = _spatial(strides, "strides", data_format)
    return _back(ops.avg_pool2d(_nchw(input, data_format), kernel_size=kernel, stride=stride,
                                name=name), data_format)
