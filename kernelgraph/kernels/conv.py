"""numba CPU kernels for 2-D convolution and pooling over NCHW arrays.

Every kernel is a loop over the output (or, for the backward kernels, over the gradient
being written), threaded with ``prange`` over an axis whose iterations write
disjoint memory, so results do not depend on the number of threads. Padding is never
materialised: out-of-range input positions are skipped (zero for conv/avg, ignored for max).

The Python wrappers validate every shape first (:func:`conv2d_shape`, :func:`pool2d_shape`),
so a kernel never reads outside its arrays, whatever a user passes.

The convolutions are im2col + one BLAS product over the whole batch
(:mod:`kernelgraph.kernels.conv_gemm`); a direct loop nest was several times slower.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from . import conv_gemm as G
from . import pool_index as PI
from . import records
from .conv_gemm import THREADED_MIN_WORK
from .loops import by_work
from .reduce import reduce_mean

ndarray = np.ndarray


# -- shape rules (concrete shapes; the ops' rules in ops/conv.py also handle None) ----------
def out_size(size: int, k: int, stride: int, pad: int, dilation: int) -> int:
    """Output length along one spatial axis (floor mode, as PyTorch and TF 'VALID')."""
    return (size + 2 * pad - dilation * (k - 1) - 1) // stride + 1


def conv2d_shape(xs: tuple, ws: tuple, stride, padding, dilation) -> tuple:
    if len(xs) != 4 or len(ws) != 4:
        raise ValueError(f"conv2d expects input (N, C, H, W) and weights (O, C, KH, KW), got "
                         f"shapes {xs} and {ws}")
    if xs[1] != ws[1]:
        raise ValueError(f"conv2d: input {xs} has {xs[1]} channels but weights {ws} expect "
                         f"{ws[1]}")
    oh = out_size(xs[2], ws[2], stride[0], padding[0], dilation[0])
    ow = out_size(xs[3], ws[3], stride[1], padding[1], dilation[1])
    if oh < 1 or ow < 1:
        raise ValueError(f"conv2d: kernel {ws[2:]} (dilation {dilation}) is larger than the "
                         f"padded input {xs[2:]} + padding {padding}")
    return (xs[0], ws[0], oh, ow)


def pool2d_shape(xs: tuple, kernel, stride, padding) -> tuple:
    if len(xs) != 4:
        raise ValueError(f"pooling expects input (N, C, H, W), got shape {xs}")
    oh = out_size(xs[2], kernel[0], stride[0], padding[0], 1)
    ow = out_size(xs[3], kernel[1], stride[1], padding[1], 1)
    if oh < 1 or ow < 1:
        raise ValueError(f"pooling: window {kernel} is larger than the padded input {xs[2:]} "
                         f"+ padding {padding}")
    return (xs[0], xs[1], oh, ow)


def _check_grad(g: ndarray, expected: tuple, what: str):
    if g.shape != expected:
        raise ValueError(f"{what}: the gradient has shape {g.shape}, expected {expected}")


# -- conv2d: im2col + one GEMM over the batch (kernels/conv_gemm.py) ------------------------
# ``channels_last``: x, g and the output are NHWC (TensorFlow's layout), w is still OIHW.
def nchw_shape(shape: tuple, channels_last: bool) -> tuple:
    return (shape[0], shape[3], shape[1], shape[2]) if channels_last else tuple(shape)


def nhwc_shape(shape: tuple, channels_last: bool) -> tuple:
    """An NCHW shape in the layout ``channels_last`` names."""
    return (shape[0], shape[2], shape[3], shape[1]) if channels_last else tuple(shape)


def conv2d(x: ndarray, w: ndarray, stride, padding, dilation, channels_last=False) -> ndarray:
    """Convolution (cross-correlation, as every framework) of NCHW ``x`` by ``w``."""
    shape = conv2d_shape(nchw_shape(x.shape, channels_last), w.shape, stride, padding,
                         dilation)
    if 0 in shape or 0 in w.shape[1:]:
        return np.zeros(nhwc_shape(shape, channels_last), x.dtype)
    return G.conv2d(x, w, shape, stride, padding, dilation, channels_last)


def conv2d_backward_input(g, w, x_shape, stride, padding, dilation,
                          channels_last=False) -> ndarray:
    """The gradient of :func:`conv2d` with respect to ``x``."""
    shape = conv2d_shape(nchw_shape(x_shape, channels_last), w.shape, stride, padding,
                         dilation)
    _check_grad(g, nhwc_shape(shape, channels_last), "conv2d_backward_input")
    if 0 in x_shape or g.size == 0:
        return np.zeros(x_shape, g.dtype)
    return G.conv2d_backward_input(g, np.asarray(w, g.dtype), x_shape, stride, padding,
                                   dilation, channels_last)


def conv2d_backward_filter(x, g, w_shape, stride, padding, dilation,
                           channels_last=False) -> ndarray:
    """The gradient of :func:`conv2d` with respect to ``w``."""
    shape = conv2d_shape(nchw_shape(x.shape, channels_last), w_shape, stride, padding,
                         dilation)
    _check_grad(g, nhwc_shape(shape, channels_last), "conv2d_backward_filter")
    if 0 in w_shape or g.size == 0:
        return np.zeros(w_shape, g.dtype)
    return G.conv2d_backward_filter(np.asarray(x, g.dtype), g, w_shape, stride, padding,
                                    dilation, channels_last)


# -- pooling --------------------------------------------------------------------------------
@njit(cache=True, inline="always")  # inlined: a call per window would halve the speed
def _window_max(x, n, c, i, j, kh_, kw_, sh, sw, ph, pw):
    """PyTorch's pick in pooling window (i, j) of plane (n, c): the last NaN if there is
    one, else the first maximum (its scan keeps ``v > max or isnan(v)``). (value, row,
    column), with row -1 when the window holds no input (only padding)."""
    h_, w_ = x.shape[2], x.shape[3]
    m = -math.inf
    by = -1
    bx = -1
    for ki in range(kh_):
        y = i * sh - ph + ki
        if y < 0 or y >= h_:
            continue
        for kj in range(kw_):
            xx = j * sw - pw + kj
            if 0 <= xx < w_:
                v = x[n, c, y, xx]
                if by < 0 or v > m or v != v:
                    m = v
                    by = y
                    bx = xx
    return m, by, bx


@by_work(THREADED_MIN_WORK)
def _avg_pool(x, out, kh_, kw_, sh, sw, ph, pw):
    n_, c_, h_, w_ = x.shape
    oh_, ow_ = out.shape[2], out.shape[3]
    count = kh_ * kw_  # padding counts (PyTorch's count_include_pad=True)
    for p in prange(n_ * c_):
        n = p // c_
        c = p % c_
        for i in range(oh_):
            for j in range(ow_):
                s = 0.0
                for ki in range(kh_):
                    y = i * sh - ph + ki
                    if y < 0 or y >= h_:
                        continue
                    for kj in range(kw_):
                        xx = j * sw - pw + kj
                        if 0 <= xx < w_:
                            s += x[n, c, y, xx]
                out[n, c, i, j] = s / count


@by_work(THREADED_MIN_WORK)
def _avg_pool_backward(g, dx, kh_, kw_, sh, sw, ph, pw):
    n_, c_, h_, w_ = dx.shape
    oh_, ow_ = g.shape[2], g.shape[3]
    count = kh_ * kw_
    for p in prange(n_ * c_):
        n = p // c_
        c = p % c_
        dx[n, c] = 0
        for i in range(oh_):
            for j in range(ow_):
                gv = g[n, c, i, j] / count
                for ki in range(kh_):
                    y = i * sh - ph + ki
                    if y < 0 or y >= h_:
                        continue
                    for kj in range(kw_):
                        xx = j * sw - pw + kj
                        if 0 <= xx < w_:
                            dx[n, c, y, xx] += gv


def max_pool2d(x, kernel, stride, padding) -> ndarray:
    """The maxima; their positions are recorded against ``x`` (kernels/pool_index.py)."""
    out, idx = PI.max_pool2d_indexed(x, pool2d_shape(x.shape, kernel, stride, padding),
                                     kernel, stride, padding)
    records.record(x, ("max_pool2d", kernel, stride, padding), idx)
    return out


def max_pool2d_backward(g, x, kernel, stride, padding) -> ndarray:
    shape = pool2d_shape(x.shape, kernel, stride, padding)
    _check_grad(g, shape, "max_pool2d_backward")
    idx = records.recorded_in_this_run(x, ("max_pool2d", kernel, stride, padding))
    if idx is None or idx.shape != shape:
        idx = PI.max_pool2d_indexed(x, shape, kernel, stride, padding)[1]
    return PI.scatter(g, idx, x.shape)


def max_pool2d_select(g, x, kernel, stride, padding) -> ndarray:
    """``g`` (x's shape) read at each pooling window's last NaN of ``x``, else its first
    maximum."""
    _check_grad(g, x.shape, "max_pool2d_select")
    shape = pool2d_shape(x.shape, kernel, stride, padding)
    return PI.gather(g, PI.max_pool2d_indexed(x, shape, kernel, stride, padding)[1])


def avg_pool2d(x, kernel, stride, padding) -> ndarray:
    out = np.empty(pool2d_shape(x.shape, kernel, stride, padding), x.dtype)
    if out.size:
        _avg_pool(out.size * math.prod(kernel), np.ascontiguousarray(x), out, *kernel,
                  *stride, *padding)
    return out


def avg_pool2d_backward(g, x_shape, kernel, stride, padding) -> ndarray:
    _check_grad(g, pool2d_shape(x_shape, kernel, stride, padding), "avg_pool2d_backward")
    dx = np.zeros(x_shape, g.dtype)
    if dx.size:
        _avg_pool_backward(g.size * math.prod(kernel), np.ascontiguousarray(g), dx, *kernel,
                           *stride, *padding)
    return dx


def global_avg_pool2d(x) -> ndarray:
    """The mean over H and W: (N, C, H, W) -> (N, C), as ``reduce_mean`` computes it."""
    return reduce_mean(x, (2, 3))
