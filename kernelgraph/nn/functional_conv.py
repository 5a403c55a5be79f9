"""``F``'s 1-D, 3-D and transposed convolutions, 1-D and adaptive pooling, resampling
(``interpolate``, ``grid_sample``, ``affine_grid``), channel dropout, pixel shuffling and
instance normalisation, in both modes (re-exported by :mod:`kernelgraph.nn.functional`).

The 1-D forms run the 2-D ops on a unit height (``(N, C, L)`` as ``(N, C, 1, L)``), so
their tensors' ``grad_fn`` is the final reshape's (``ViewBackward0``) where PyTorch prints
its 1-D op's; values and gradients are PyTorch's.

>>> import kernelgraph as kg
>>> import kernelgraph.nn.functional as F
>>> F.interpolate(kg.tensor([[[1.0, 2.0]]]), scale_factor=2, mode="nearest").tolist()
[[[1.0, 1.0, 2.0, 2.0]]]
>>> F.adaptive_avg_pool2d(kg.arange(16.0).reshape(1, 1, 4, 4), 2).tolist()
[[[[2.5, 4.5], [10.5, 12.5]]]]
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import ops as O
from ..eager import Tensor, tensor
from ..graph import Node, shape_str
from ..ops import interpolate as I
from ..ops import shape_functions as SF
from ..ops import torch_random as R
from ..ops.conv_transpose import conv_transpose2d as _conv_transpose2d
from ..ops.grid_sample import grid_sample as _grid_sample

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "affine_grid",
           "avg_pool1d", "conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "dropout1d",
           "dropout2d", "grid_sample", "instance_norm", "interpolate", "max_pool1d",
           "pixel_shuffle", "pixel_unshuffle", "upsample", "upsample_bilinear", "upsample_nearest"]


def _t(x):
    return x if isinstance(x, Tensor | Node) else tensor(np.asarray(x))


def _shape(x) -> tuple | None:
    return None if x.shape is None else tuple(x.shape)


def _single(value, what: str, op: str) -> int:
    if isinstance(value, tuple | list):
        if len(value) != 1:
            raise ValueError(f"{op}: {what} must be an int or a 1-tuple, got {value!r}")
        value = value[0]
    return value


def _ranked(x, ranks: tuple, what: str, layout: str):
    shape = _shape(x)
    if shape is None or len(shape) not in ranks:
        raise ValueError(f"{what}: expected a {layout} input, got {shape_str(shape)}")
    return shape


def _batched(x, rank: int, what: str, layout: str):
    """(x with a batch dim, whether one was added): PyTorch also takes unbatched inputs."""
    shape = _ranked(x, (rank - 1, rank), what, layout)
    return (SF.unsqueeze(x, 0), True) if len(shape) == rank - 1 else (x, False)


def _unbatched(y, added: bool):
    return SF.squeeze(y, 0) if added else y


def _bias(y, bias, rank: int):
    return y if bias is None else y + O.reshape(_t(bias), shape=(-1,) + (1,) * (rank - 2))


def _no_groups(groups, what: str):
    if groups != 1:
        raise NotImplementedError(f"{what}: groups != 1 is not supported by kernelgraph")


# -- convolutions -------------------------------------------------------------------------
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1,  # noqa: A002
           groups: int = 1):
    """1-D cross-correlation of (N, C, L) (or (C, L)) with ``weight`` (out, C, k), plus bias:
    conv2d on a unit height."""
    _no_groups(groups, "F.conv1d")
    x, added = _batched(_t(input), 3, "conv1d", "2-D (C, L) or 3-D (N, C, L)")
    w = _t(weight)
    _ranked(w, (3,), "conv1d", "(out_channels, in_channels, kernel) weight")
    d = _single(dilation, "dilation", "conv1d")
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            total = d * (_shape(w)[2] - 1)
            if total % 2 or _single(stride, "stride", "conv1d") != 1:
                raise NotImplementedError("F.conv1d: padding='same' with an even kernel or a "
                                          "stride is not supported by kernelgraph")
            padding = total // 2
        else:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             "{'valid', 'same'}")
    y = O.conv2d(SF.unsqueeze(x, 2), SF.unsqueeze(w, 2), stride=(1, _single(stride, "stride",
                 "conv1d")), padding=(0, _single(padding, "padding", "conv1d")),
                 dilation=(1, d))
    return _unbatched(_bias(SF.squeeze(y, 2), bias, 3), added)


def _triple(value, what: str, minimum: int) -> tuple:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * 3
    if (not isinstance(value, tuple | list) or len(value) != 3
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            or min(value) < minimum):
        raise ValueError(f"conv3d: {what} must be an int or 3 ints of at least {minimum}, got "
                         f"{value!r}")
    return tuple(value)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1,  # noqa: A002
           groups: int = 1):
    """3-D cross-correlation of (N, C, D, H, W) (or (C, D, H, W)) with ``weight`` (out, C,
    kd, kh, kw), plus bias.

    Composed from conv2d: for each depth offset of the kernel, the input's depth planes it
    reads (a strided slice) are folded into the batch and convolved with that plane of the
    kernel, and the KD results are summed. Its gradients are those of the slices, conv2d and
    the sum."""
    _no_groups(groups, "F.conv3d")
    x, added = _batched(_t(input), 5, "conv3d", "4-D (C, D, H, W) or 5-D (N, C, D, H, W)")
    w = _t(weight)
    ws = _ranked(w, (5,), "conv3d", "(out_channels, in_channels, kd, kh, kw) weight")
    dilation = _triple(dilation, "dilation", 1)
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             "{'valid', 'same'}")
        totals = [d * (k - 1) for d, k in zip(dilation, ws[2:])]
        if padding == "same" and (any(t % 2 for t in totals) or stride not in (1, (1, 1, 1))):
            raise NotImplementedError("F.conv3d: padding='same' with an even kernel or a "
                                      "stride is not supported by kernelgraph")
        padding = tuple(t // 2 for t in totals) if padding == "same" else 0
    stride, padding = _triple(stride, "stride", 1), _triple(padding, "padding", 0)
    n, c, depth = _shape(x)[:3]
    if depth is None:
        raise ValueError("conv3d: the input's depth must be known while the graph is built")
    if padding[0]:
        x = O.pad(x, paddings=[[0, 0], [0, 0], [padding[0]] * 2, [0, 0], [0, 0]], value=0.0)
        depth += 2 * padding[0]
    kd, sd, dd = ws[2], stride[0], dilation[0]
    out_depth = (depth - dd * (kd - 1) - 1) // sd + 1
    if out_depth < 1:
        raise ValueError(f"conv3d: the kernel depth {kd} (dilation {dd}) is larger than the "
                         f"padded input depth {depth}")
    total = None
    for k in range(kd):
        start = k * dd
        planes = x[:, :, start:start + (out_depth - 1) * sd + 1:sd]  # (N, C, OD, H, W)
        folded = SF._reshaped(SF.permute(planes, 0, 2, 1, 3, 4),
                              (None if n is None else n * out_depth, c, *_shape(x)[3:]),
                              "conv3d")
        y = O.conv2d(folded, w[:, :, k], stride=stride[1:], padding=padding[1:],
                     dilation=dilation[1:])
        total = y if total is None else total + y
    oh, ow = _shape(total)[2:]
    y = SF.permute(SF._reshaped(total, (n, out_depth, ws[0], oh, ow), "conv3d"), 0, 2, 1, 3, 4)
    return _unbatched(_bias(y, bias, 5), added)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0,  # noqa: A002
                     output_padding=0, groups: int = 1, dilation=1):
    """Transposed 2-D convolution of (N, C_in, H, W) (or (C_in, H, W)) with ``weight``
    (C_in, C_out, kh, kw), plus bias (:func:`kernelgraph.ops.conv_transpose.conv_transpose2d`).
    """
    _no_groups(groups, "F.conv_transpose2d")
    x, added = _batched(_t(input), 4, "conv_transpose2d", "3-D (C, H, W) or 4-D (N, C, H, W)")
    w = _t(weight)
    y = _conv_transpose2d(x, w, _bias_or_zeros(bias, w, "conv_transpose2d"), stride=stride,
                          padding=padding, output_padding=output_padding, dilation=dilation)
    return _unbatched(y, added)


def _bias_or_zeros(bias, w, what: str):
    """The op's bias input: ``bias``, or zeros of the weight's dtype, one per output channel
    (the transposed weight's dim 1)."""
    if bias is not None:
        return _t(bias)
    shape = _shape(w)
    if shape is None or len(shape) < 2 or shape[1] is None:
        raise ValueError(f"{what}: the weight's shape (C_in, C_out, ...) must be known, got "
                         f"{shape_str(shape)}")
    return _constant(np.zeros(shape[1], np.dtype(w.dtype)), w)


def _constant(array: np.ndarray, like):
    """A constant input beside ``like``: an eager tensor on its device, or the array itself
    (a graph constant) beside a graph node."""
    return tensor(array, device=like.device) if isinstance(like, Tensor) else array


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0,  # noqa: A002
                     output_padding=0, groups: int = 1, dilation=1):
    """Transposed 1-D convolution of (N, C_in, L) with ``weight`` (C_in, C_out, k), plus
    bias: conv_transpose2d on a unit height."""
    _no_groups(groups, "F.conv_transpose1d")
    x, added = _batched(_t(input), 3, "conv_transpose1d", "2-D (C, L) or 3-D (N, C, L)")
    w = _t(weight)
    _ranked(w, (3,), "conv_transpose1d", "(in_channels, out_channels, kernel) weight")

    def one(v, what):
        return (1 if what in ("stride", "dilation") else 0, _single(v, what, "conv_transpose1d"))
    y = _conv_transpose2d(SF.unsqueeze(x, 2), SF.unsqueeze(w, 2),
                          _bias_or_zeros(bias, w, "conv_transpose1d"),
                          stride=one(stride, "stride"), padding=one(padding, "padding"),
                          output_padding=one(output_padding, "output_padding"),
                          dilation=one(dilation, "dilation"))
    return _unbatched(SF.squeeze(y, 2), added)


# -- pooling ------------------------------------------------------------------------------
def _pool1d(op, what, x, kernel_size, stride, padding):
    x, added = _batched(_t(x), 3, what, "2-D (C, L) or 3-D (N, C, L)")
    k = _single(kernel_size, "kernel_size", what)
    s = k if stride is None or stride == [] else _single(stride, "stride", what)
    y = op(SF.unsqueeze(x, 2), kernel_size=(1, k), stride=(1, s),
           padding=(0, _single(padding, "padding", what)))
    return _unbatched(SF.squeeze(y, 2), added)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """Maximum over windows of (N, C, L); ``stride`` defaults to ``kernel_size``."""
    if dilation not in (1, (1,)) or ceil_mode or return_indices:
        raise NotImplementedError("F.max_pool1d: dilation, ceil_mode and return_indices are "
                                  "not supported by kernelgraph")
    return _pool1d(O.max_pool2d, "max_pool1d", input, kernel_size, stride, padding)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True):
    """Mean over windows of (N, C, L) (padding counted); ``stride`` defaults to
    ``kernel_size``."""
    if ceil_mode or not count_include_pad:
        raise NotImplementedError("F.avg_pool1d: ceil_mode and count_include_pad=False are "
                                  "not supported by kernelgraph")
    return _pool1d(O.avg_pool2d, "avg_pool1d", input, kernel_size, stride, padding)


def _output_size(output_size, spatial: tuple, what: str) -> tuple:
    sizes = (output_size,) * len(spatial) if not isinstance(output_size, tuple | list) \
        else tuple(output_size)
    if len(sizes) != len(spatial):
        raise ValueError(f"{what}: output_size must be an int or {len(spatial)} ints, got "
                         f"{output_size!r}")
    sizes = tuple(s if s is not None else n for s, n in zip(sizes, spatial))
    if None in sizes:
        raise ValueError(f"{what}: the input's spatial size must be known while the graph is "
                         "built where output_size leaves a dim as None")
    return sizes


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """Mean over windows [floor(o * in / out), ceil((o + 1) * in / out)) along H and W
    (``torch.nn.functional.adaptive_avg_pool2d``); a None in ``output_size`` keeps that
    size."""
    x, added = _batched(_t(input), 4, "adaptive_avg_pool2d", "3-D (C, H, W) or 4-D (N, C, H, W)")
    size = _output_size(output_size, _shape(x)[2:], "adaptive_avg_pool2d")
    if size == (1, 1):  # a global mean, as PyTorch computes it (grad_fn MeanBackward1)
        return _unbatched(O.mean(x, axis=(2, 3), keepdims=True), added)
    return _unbatched(I.adaptive_avg_pool2d(x, output_size=size), added)


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """Adaptive average pooling of (N, C, L) (adaptive_avg_pool2d on a unit height)."""
    x, added = _batched(_t(input), 3, "adaptive_avg_pool1d", "2-D (C, L) or 3-D (N, C, L)")
    size = _output_size(_single(output_size, "output_size", "adaptive_avg_pool1d"),
                        _shape(x)[2:], "adaptive_avg_pool1d")
    y = I.adaptive_avg_pool2d(SF.unsqueeze(x, 2), output_size=(1, size[0]))
    return _unbatched(SF.squeeze(y, 2), added)


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):  # noqa: A002
    """Maximum over windows [floor(o * in / out), ceil((o + 1) * in / out)) along H and W
    (``torch.nn.functional.adaptive_max_pool2d``): max_pool2d where the output size divides
    the input size (the windows tile it), else row windows then column windows."""
    if return_indices:
        raise NotImplementedError("F.adaptive_max_pool2d: return_indices=True is not "
                                  "supported by kernelgraph")
    x, added = _batched(_t(input), 4, "adaptive_max_pool2d", "3-D (C, H, W) or 4-D (N, C, H, W)")
    spatial = _shape(x)[2:]
    size = _output_size(output_size, spatial, "adaptive_max_pool2d")
    if None in spatial:
        raise ValueError("adaptive_max_pool2d: the input's height and width must be known "
                         "while the graph is built")
    if not any(n % s for n, s in zip(spatial, size)):  # the windows tile the input
        window = tuple(n // s for n, s in zip(spatial, size))
        return _unbatched(O.max_pool2d(x, kernel_size=window, stride=window), added)
    # Overlapping windows: a maximum is separable, so take each output row's window of rows,
    # then each output column's window of columns (PyTorch's window bounds).
    for axis, (n, s) in zip((2, 3), zip(spatial, size)):
        pieces = []
        for o in range(s):
            start, end = (o * n) // s, -((-(o + 1) * n) // s)
            index = (slice(None),) * axis + (slice(start, end),)
            pieces.append(O.max(x[index], axis=axis, keepdims=True))
        x = O.concat(pieces, axis=axis)
    return _unbatched(x, added)


# -- resampling ---------------------------------------------------------------------------
_MODES = ("nearest", "linear", "bilinear", "area")


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest",  # noqa: A002
                align_corners=None, recompute_scale_factor=None, antialias: bool = False):
    """Resize (N, C, L) or (N, C, H, W) to ``size`` or by ``scale_factor`` with PyTorch's
    index formulas: mode 'nearest', 'linear' (3-D), 'bilinear' (4-D, ``align_corners``
    False or True) or 'area' (adaptive average pooling)."""
    x = _t(input)
    shape = _shape(x)
    if mode not in _MODES:
        raise NotImplementedError(f"F.interpolate: mode {mode!r} is not supported by "
                                  f"kernelgraph (only {', '.join(map(repr, _MODES))})")
    if antialias:
        raise NotImplementedError("F.interpolate: antialias=True is not supported by "
                                  "kernelgraph")
    if align_corners is not None and mode in ("nearest", "area"):
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if shape is None or len(shape) not in (3, 4):
        raise NotImplementedError(f"F.interpolate: kernelgraph takes 3-D (N, C, L) and 4-D "
                                  f"(N, C, H, W) inputs, got {shape_str(shape)}")
    if (mode, len(shape)) in (("linear", 4), ("bilinear", 3)):
        raise NotImplementedError(f"Got {len(shape)}D input, but {mode} mode needs "
                                  f"{5 - len(shape) if mode == 'linear' else 4}D input")
    spatial = shape[2:]
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        out = _output_size(size, spatial, "interpolate")
        scales = None
    else:
        factors = (tuple(scale_factor) if isinstance(scale_factor, tuple | list)
                   else (scale_factor,) * len(spatial))
        if len(factors) != len(spatial) or None in spatial:
            raise ValueError(f"interpolate: scale_factor {scale_factor!r} for an input of "
                             f"spatial size {spatial}")
        out = tuple(int(math.floor(float(n) * float(f))) for n, f in zip(spatial, factors))
        scales = None if recompute_scale_factor else tuple(float(f) for f in factors)
    if len(shape) == 3:  # a unit height
        x = SF.unsqueeze(x, 2)
        out, scales = (1, *out), (None if scales is None else (1.0, *scales))
    if mode == "nearest":
        y = I.upsample_nearest2d(x, size=out, scales=scales)
    elif mode == "area":
        y = I.adaptive_avg_pool2d(x, output_size=out)
    else:
        y = I.upsample_bilinear2d(x, size=out, align_corners=bool(align_corners),
                                  scales=scales)
    return SF.squeeze(y, 2) if len(shape) == 3 else y


def upsample(input, size=None, scale_factor=None, mode: str = "nearest",  # noqa: A002
             align_corners=None):
    """The deprecated name of :func:`interpolate` (with PyTorch's warning)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):  # noqa: A002
    """Deprecated: ``interpolate(..., mode='nearest')`` (with PyTorch's warning)."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):  # noqa: A002
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def grid_sample(input, grid, mode: str = "bilinear", padding_mode: str = "zeros",  # noqa: A002
                align_corners=None):
    """Sample (N, C, H, W) at the points of ``grid`` (N, HO, WO, 2), (x, y) in [-1, 1]
    (:func:`kernelgraph.ops.grid_sample.grid_sample`); zeros outside the image."""
    if padding_mode != "zeros":
        raise NotImplementedError(f"F.grid_sample: padding_mode {padding_mode!r} is not "
                                  "supported by kernelgraph (only 'zeros')")
    if mode not in ("bilinear", "nearest"):
        raise NotImplementedError(f"F.grid_sample: mode {mode!r} is not supported by "
                                  "kernelgraph (only 'bilinear' and 'nearest')")
    return _grid_sample(_t(input), _t(grid), mode=mode, align_corners=bool(align_corners))


def affine_grid(theta, size, align_corners=None):
    """The sampling grid (N, H, W, 2) of the affine maps ``theta`` (N, 2, 3) for an output
    of ``size`` (N, C, H, W): each output pixel's normalised (x, y, 1) times theta^T."""
    theta = _t(theta)
    if len(size) != 4:
        raise NotImplementedError(f"F.affine_grid: kernelgraph takes a 4-D size (N, C, H, W), "
                                  f"got {tuple(size)}")
    n, _, h, w = (int(s) for s in size)
    ts = _shape(theta)
    if ts is None or len(ts) != 3 or tuple(ts[1:]) != (2, 3) or ts[0] not in (None, n):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                         f"{tuple(size)}. Got {shape_str(ts)}.")

    def axis(k):
        if align_corners:
            return np.linspace(-1.0, 1.0, k) if k > 1 else np.zeros(1)
        return (np.arange(k) * 2.0 + 1.0) / k - 1.0

    xs, ys = np.meshgrid(axis(w), axis(h))
    base = np.stack([xs, ys, np.ones_like(xs)], axis=-1).reshape(1, h * w, 3)
    base = _constant(base.astype(np.dtype(theta.dtype)), theta)
    grid = O.matmul(base, SF.transpose(theta, 1, 2))  # (N, H*W, 2)
    return SF._reshaped(grid, (n, h, w, 2), "affine_grid")


def pad_edges(x, pad, mode: str):
    """``F.pad`` modes 'reflect' and 'replicate' of (N, C, W) by (left, right) or (N, C, H,
    W) by (left, right, top, bottom) (also unbatched)."""
    op = I.reflection_pad2d if mode == "reflect" else I.replication_pad2d
    shape = _shape(x)
    pad = tuple(int(p) for p in pad)
    rank = None if shape is None else len(shape)
    if (rank, len(pad)) in ((2, 2), (3, 2)):
        y = op(SF.unsqueeze(x if rank == 3 else SF.unsqueeze(x, 0), 2),
               padding=(*pad, 0, 0))
        y = SF.squeeze(y, 2)
        return y if rank == 3 else SF.squeeze(y, 0)
    if (rank, len(pad)) in ((3, 4), (4, 4)):
        y = op(x if rank == 4 else SF.unsqueeze(x, 0), padding=pad)
        return y if rank == 4 else SF.squeeze(y, 0)
    raise NotImplementedError(f"F.pad: mode {mode!r} takes a (left, right) padding of a 2-D or "
                              f"3-D input or a (left, right, top, bottom) padding of a 3-D or "
                              f"4-D input in kernelgraph; got {len(pad)} pads for shape "
                              f"{shape_str(shape)}")


def pixel_shuffle(input, upscale_factor: int):  # noqa: A002
    """(N, C*r*r, H, W) -> (N, C, H*r, W*r): each group of r*r channels spread over an
    r x r block (``torch.nn.functional.pixel_shuffle``)."""
    x = _t(input)
    n, c, h, w = _ranked(x, (4,), "pixel_shuffle", "4-D (N, C, H, W)")
    r = int(upscale_factor)
    if r < 1 or c is None or c % (r * r):
        raise ValueError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                         f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                         f"is not divisible by {r * r}")
    y = SF._reshaped(x, (n, c // (r * r), r, r, h, w), "pixel_shuffle")
    y = SF.permute(y, 0, 1, 4, 2, 5, 3)
    return SF._reshaped(y, (n, c // (r * r), None if h is None else h * r,
                            None if w is None else w * r), "pixel_shuffle")


def pixel_unshuffle(input, downscale_factor: int):  # noqa: A002
    """(N, C, H*r, W*r) -> (N, C*r*r, H, W), the inverse of :func:`pixel_shuffle`."""
    x = _t(input)
    n, c, h, w = _ranked(x, (4,), "pixel_unshuffle", "4-D (N, C, H, W)")
    r = int(downscale_factor)
    if r < 1 or h is None or w is None or h % r or w % r:
        raise ValueError(f"pixel_unshuffle expects height and width to be divisible by "
                         f"downscale_factor {r}, got shape {shape_str((n, c, h, w))}")
    y = SF._reshaped(x, (n, c, h // r, r, w // r, r), "pixel_unshuffle")
    y = SF.permute(y, 0, 1, 3, 5, 2, 4)
    return SF._reshaped(y, (n, c * r * r, h // r, w // r), "pixel_unshuffle")


# -- channel dropout and instance normalisation --------------------------------------------
def _feature_dropout(x, p: float, training: bool, what: str):
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return x
    shape = _shape(x)
    if isinstance(x, Tensor):
        if p == 1:
            return x * O.zeros_like(x)
        # PyTorch's feature dropout: one bernoulli_(1 - p) per (sample, channel), scaled.
        noise = R.bernoulli_array(shape[:2] + (1,) * (len(shape) - 2), 1.0 - p, dtype=x.dtype)
        return x * tensor(noise / (1.0 - p), device=x.device)
    ones = O.ones_like(O.mean(x, axis=tuple(range(2, len(shape))), keepdims=True))
    return x * O.dropout(ones, p=float(p), training=True)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):  # noqa: A002
    """Zero whole channels of (N, C, H, W) with probability ``p`` and scale the rest by
    1 / (1 - p) (PyTorch's mask from PyTorch's generator on eager tensors)."""
    x = _t(input)
    shape = _ranked(x, (3, 4), "dropout2d", "3-D or 4-D")
    if len(shape) == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                      "dropout behavior, please switch to using dropout1d instead.",
                      stacklevel=2)
    return _feature_dropout(x, p, training, "dropout2d")


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):  # noqa: A002
    """Zero whole channels of (N, C, L) (or (C, L)) with probability ``p``."""
    x, added = _batched(_t(input), 3, "dropout1d", "2-D (C, L) or 3-D (N, C, L)")
    return _unbatched(_feature_dropout(x, p, training, "dropout1d"), added)


def instance_norm(input, running_mean=None, running_var=None, weight=None,  # noqa: A002
                  bias=None, use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5):
    """Normalise each (sample, channel) over its spatial dims (biased variance), then scale
    by ``weight`` and shift by ``bias`` per channel."""
    if running_mean is not None or running_var is not None or not use_input_stats:
        raise NotImplementedError("F.instance_norm: running statistics are not supported by "
                                  "kernelgraph")
    x = _t(input)
    shape = _ranked(x, (3, 4, 5), "instance_norm", "3-D, 4-D or 5-D (N, C, ...)")
    # Statistics over the spatial dims flattened into one, the result viewed back to x's
    # shape (PyTorch views its result back too: grad_fn ViewBackward0).
    flat = SF._reshaped(x, (shape[0], shape[1], None if None in shape[2:] else
                            int(np.prod(shape[2:]))), "instance_norm")
    mean = O.mean(flat, axis=2, keepdims=True)
    var = O.mean(O.square(flat - mean), axis=2, keepdims=True)
    y = (flat - mean) / O.sqrt(var + eps)
    if weight is not None:
        y = y * O.reshape(_t(weight), shape=(-1, 1))
    if bias is not None:
        y = y + O.reshape(_t(bias), shape=(-1, 1))
    return SF._reshaped(y, shape, "instance_norm")
