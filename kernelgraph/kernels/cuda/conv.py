"""CUDA conv2d (and its two backward ops), max/avg pooling (and backward), global average
pooling, over NCHW device arrays: the same algorithms as the CPU kernels in
:mod:`kernelgraph.kernels.conv`, with the same signatures. The ops (:mod:`kernelgraph.ops.conv`)
check shapes and attributes and cast the inputs first, and pass the normalized (stride,
padding, dilation) or (window, stride, padding) pairs.

conv2d is im2col on the device + the tiled GEMM of :mod:`.linalg` (a GEMM is where a GPU
is fast, and it keeps one well-tuned kernel instead of a direct convolution per case):
- forward: ``cols (N, C*KH*KW, OH*OW)``, then ``W (O, C*KH*KW) @ cols`` batched over N
  (W broadcast, never copied);
- input gradient: ``W^T @ g`` (a transposed read, no copy), then col2im;
- filter gradient: one GEMM ``g (O, N*OH*OW) @ cols^T (N*OH*OW, C*KH*KW)``, whose long K
  axis sums over the batch inside the GEMM.

Scatter-adds (col2im, pooling gradients) are written as *gathers*: one thread per input
element sums the contributions that reach it, so nothing races (no atomics) and, adding in
the order the CPU loops do, the sums round exactly as the CPU's. Max pooling's gradient
first records each window's argmax (the CPU's own window search, compiled for the device),
so it reaches the very element, with the same tie-break and NaN rule, as on the CPU.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda

from .. import conv as K
from . import core, launcher
from .linalg import gemm
from .nn import BLOCK, group_sum, row_launch
from .shape import permute

# The CPU's window search: (value, row, column) of a pooling window's last NaN, else its
# first maximum.
_window_max = cuda.jit(device=True)(K._window_max.py_func)


def _shape(a) -> tuple:
    # Plain tuples: the simulator's shapes refuse negative indices, unlike real ones.
    return tuple(int(s) for s in np.shape(a))


# -- im2col / col2im ------------------------------------------------------------------------
@cuda.jit
def _im2col(x, cols, kh_, kw_, sh, sw, ph, pw, dh, dw, oh_, ow_, s_n, s_r, s_p):
    """Element (n, r, p) of the receptive-field matrix, r = (c, ki, kj) and p = (i, j),
    written to ``cols[n * s_n + r * s_r + p * s_p]``: the strides pick the layout (the
    forward's (N, R, P), the filter gradient's (N*P, R))."""
    n_, c_, h_, w_ = x.shape
    rows = c_ * kh_ * kw_
    plane = oh_ * ow_
    start, step = cuda.grid(1), cuda.gridsize(1)
    for q in range(start, n_ * rows * plane, step):
        p = q % plane
        r = (q // plane) % rows
        n = q // (plane * rows)
        c, kk = r // (kh_ * kw_), r % (kh_ * kw_)
        y = (p // ow_) * sh - ph + (kk // kw_) * dh
        xx = (p % ow_) * sw - pw + (kk % kw_) * dw
        v = 0
        if 0 <= y < h_ and 0 <= xx < w_:
            v = x[n, c, y, xx]
        cols[n * s_n + r * s_r + p * s_p] = v


def _im2col_into(x, cols, kernel, stride, padding, dilation, out_hw, strides):
    """Run :func:`_im2col` from ``x`` into the flat ``cols`` with layout ``strides``."""
    n, c = x.shape[0], x.shape[1]
    size = n * c * kernel[0] * kernel[1] * out_hw[0] * out_hw[1]
    if size:
        blocks, threads = core.launch(size)
        launcher.launch(_im2col, blocks, threads, x, core.flat(cols), *kernel, *stride, *padding,
                        *dilation, *out_hw, *strides)
    return cols


@functools.cache
def _gather_kernels(dtype: np.dtype):
    """(col2im, max-pool gradient, avg-pool gradient) for ``dtype``: the three scatter-adds
    of the CPU kernels, as gathers. ``cast`` rounds the running sum to ``dtype`` after every
    addition, as the CPU's ``dx[...] += v`` stores do.

    ``float(v)`` spells out numba's float64 arithmetic where the CPU kernel mixes float32
    with float64 or ints: the simulator follows NumPy's rules instead (float32 / int and
    float32 + float stay float32 there), so without it the two would round differently."""
    cast = dtype.type

    @cuda.jit
    def col2im(cols, dx, kh_, kw_, sh, sw, ph, pw, dh, dw, oh_, ow_):
        # dx (N, C, H, W) from cols (N, C*KH*KW, OH*OW): each input position sums the
        # columns that read it, in the CPU scatter's (ki, kj) order.
        n_, c_, h_, w_ = dx.shape
        start, step = cuda.grid(1), cuda.gridsize(1)
        for q in range(start, n_ * c_ * h_ * w_, step):
            xx, y = q % w_, (q // w_) % h_
            c, n = (q // (w_ * h_)) % c_, q // (w_ * h_ * c_)
            acc = cast(0)
            for ki in range(kh_):
                ti = y + ph - ki * dh  # i * sh for the output row i reading (y, x) here
                if ti < 0 or ti % sh != 0 or ti // sh >= oh_:
                    continue
                for kj in range(kw_):
                    tj = xx + pw - kj * dw
                    if tj < 0 or tj % sw != 0 or tj // sw >= ow_:
                        continue
                    acc = cast(acc + cols[n, (c * kh_ + ki) * kw_ + kj,
                                          (ti // sh) * ow_ + tj // sw])
            dx[n, c, y, xx] = acc

    @cuda.jit
    def max_pool_grad(arg, g, dx, kh_, kw_, sh, sw, ph, pw):
        # Each input position sums g over the windows whose recorded argmax it is, in the
        # CPU loop's (i, j) order.
        n_, c_, h_, w_ = dx.shape
        start, step = cuda.grid(1), cuda.gridsize(1)
        for q in range(start, n_ * c_ * h_ * w_, step):
            xx, y = q % w_, (q // w_) % h_
            c, n = (q // (w_ * h_)) % c_, q // (w_ * h_ * c_)
            i0, i1, j0, j1 = _windows(y, xx, kh_, kw_, sh, sw, ph, pw, g.shape[2], g.shape[3])
            acc = cast(0)
            for i in range(i0, i1):
                for j in range(j0, j1):
                    if arg[n, c, i, j] == y * w_ + xx:
                        acc = cast(acc + g[n, c, i, j])
            dx[n, c, y, xx] = acc

    @cuda.jit
    def avg_pool_grad(g, dx, kh_, kw_, sh, sw, ph, pw):
        n_, c_, h_, w_ = dx.shape
        count = kh_ * kw_  # padding counts (count_include_pad=True)
        start, step = cuda.grid(1), cuda.gridsize(1)
        for q in range(start, n_ * c_ * h_ * w_, step):
            xx, y = q % w_, (q // w_) % h_
            c, n = (q // (w_ * h_)) % c_, q // (w_ * h_ * c_)
            i0, i1, j0, j1 = _windows(y, xx, kh_, kw_, sh, sw, ph, pw, g.shape[2], g.shape[3])
            acc = cast(0)
            for i in range(i0, i1):
                for j in range(j0, j1):
                    acc = cast(float(acc) + float(g[n, c, i, j]) / count)
            dx[n, c, y, xx] = acc

    return col2im, max_pool_grad, avg_pool_grad


@cuda.jit(device=True)
def _windows(y, xx, kh_, kw_, sh, sw, ph, pw, oh_, ow_):
    """The pooling windows holding input (y, x): rows [i0, i1) and columns [j0, j1) of the
    output (window i covers i*sh - ph ... i*sh - ph + kh - 1). No max()/min(): numba 0.68's
    CUDA target fails to compile those builtins (their overloads take *args)."""
    i0 = -((kh_ - 1 - y - ph) // sh)  # ceil((y + ph - kh + 1) / sh), floor division
    j0 = -((kw_ - 1 - xx - pw) // sw)
    i1 = (y + ph) // sh + 1
    j1 = (xx + pw) // sw + 1
    return (i0 if i0 > 0 else 0, i1 if i1 < oh_ else oh_,
            j0 if j0 > 0 else 0, j1 if j1 < ow_ else ow_)


# -- conv2d and its gradients ---------------------------------------------------------------
def _conv2d_nchw(x, w, stride, padding, dilation):
    """NCHW cross-correlation of ``x`` with ``w`` (one dtype)."""
    n, o, oh, ow = K.conv2d_shape(_shape(x), _shape(w), stride, padding, dilation)
    c, kh, kw = _shape(w)[1:]
    r, p = c * kh * kw, oh * ow
    cols = core.empty((n, r, p), x.dtype)
    _im2col_into(x, cols, (kh, kw), stride, padding, dilation, (oh, ow), (r * p, p, 1))
    return gemm(w.reshape(o, r), cols).reshape(n, o, oh, ow)


def _conv2d_backward_input_nchw(g, w, x_shape, stride, padding, dilation):
    """The gradient of conv2d with respect to its input, of shape ``x_shape`` (``w`` of
    ``g``'s dtype)."""
    x_shape = tuple(int(s) for s in x_shape)
    n, o, oh, ow = K.conv2d_shape(x_shape, _shape(w), stride, padding, dilation)
    K._check_grad(g, (n, o, oh, ow), "conv2d_backward_input")
    c, kh, kw = _shape(w)[1:]
    dx = core.empty(x_shape, g.dtype) if g.size else core.full(x_shape, 0, g.dtype)
    if dx.size and g.size:
        cols = gemm(w.reshape(o, c * kh * kw), g.reshape(n, o, oh * ow), trans_a=True)
        blocks, threads = core.launch(dx.size)
        launcher.launch(_gather_kernels(np.dtype(g.dtype))[0], blocks, threads,
                        cols, dx, kh, kw, *stride, *padding, *dilation, oh, ow)
    return dx


def _conv2d_backward_filter_nchw(x, g, w_shape, stride, padding, dilation):
    """The gradient of conv2d with respect to its weights, of shape ``w_shape`` (``x`` of
    ``g``'s dtype)."""
    w_shape = tuple(int(s) for s in w_shape)
    n, o, oh, ow = K.conv2d_shape(_shape(x), w_shape, stride, padding, dilation)
    K._check_grad(g, (n, o, oh, ow), "conv2d_backward_filter")
    c, kh, kw = w_shape[1:]
    r, p = c * kh * kw, oh * ow
    if not (g.size and r):
        return core.full(w_shape, 0, g.dtype)
    # g (N, O, P) -> (O, N*P), and the columns laid out as (N*P, R): the GEMM's K axis
    # runs over every (image, output position) pair, summing the batch as it goes.
    g_on = core.strided_copy(core.flat(g), (o, n, p), (p, o * p, 1))
    cols = core.empty((n * p, r), g.dtype)
    _im2col_into(x, cols, (kh, kw), stride, padding, dilation, (oh, ow), (p * r, 1, r))
    return gemm(g_on.reshape(o, n * p), cols).reshape(w_shape)


# An NHWC (TensorFlow-layout) convolution on the device: the NCHW kernels between two
# permutes, each the size of an input or an output.
_TO_NCHW, _TO_NHWC = (0, 3, 1, 2), (0, 2, 3, 1)


def conv2d(x, w, stride, padding, dilation, channels_last=False):
    if not channels_last:
        return _conv2d_nchw(x, w, stride, padding, dilation)
    return permute(_conv2d_nchw(permute(x, _TO_NCHW), w, stride, padding, dilation), _TO_NHWC)


def conv2d_backward_input(g, w, x_shape, stride, padding, dilation, channels_last=False):
    if not channels_last:
        return _conv2d_backward_input_nchw(g, w, x_shape, stride, padding, dilation)
    dx = _conv2d_backward_input_nchw(permute(g, _TO_NCHW), w, K.nchw_shape(x_shape, True),
                                     stride, padding, dilation)
    return permute(dx, _TO_NHWC)


def conv2d_backward_filter(x, g, w_shape, stride, padding, dilation, channels_last=False):
    if not channels_last:
        return _conv2d_backward_filter_nchw(x, g, w_shape, stride, padding, dilation)
    return _conv2d_backward_filter_nchw(permute(x, _TO_NCHW), permute(g, _TO_NCHW), w_shape,
                                        stride, padding, dilation)


# -- pooling --------------------------------------------------------------------------------
@cuda.jit
def _max_pool(x, out, kh_, kw_, sh, sw, ph, pw):
    n_, c_, oh_, ow_ = out.shape
    start, step = cuda.grid(1), cuda.gridsize(1)
    for q in range(start, n_ * c_ * oh_ * ow_, step):
        j, i = q % ow_, (q // ow_) % oh_
        c, n = (q // (ow_ * oh_)) % c_, q // (ow_ * oh_ * c_)
        out[n, c, i, j] = _window_max(x, n, c, i, j, kh_, kw_, sh, sw, ph, pw)[0]


@cuda.jit
def _max_pool_argmax(x, arg, kh_, kw_, sh, sw, ph, pw):
    # The flat (y * W + x) position of each window's pick (_window_max); -1 for no input.
    n_, c_, oh_, ow_ = arg.shape
    w_ = x.shape[3]
    start, step = cuda.grid(1), cuda.gridsize(1)
    for q in range(start, n_ * c_ * oh_ * ow_, step):
        j, i = q % ow_, (q // ow_) % oh_
        c, n = (q // (ow_ * oh_)) % c_, q // (ow_ * oh_ * c_)
        _, by, bx = _window_max(x, n, c, i, j, kh_, kw_, sh, sw, ph, pw)
        arg[n, c, i, j] = by * w_ + bx if by >= 0 else -1


@cuda.jit
def _select_at(arg, g, out):
    # out = g read at each window's argmax (0 for a window without input).
    n_, c_, oh_, ow_ = arg.shape
    w_ = g.shape[3]
    start, step = cuda.grid(1), cuda.gridsize(1)
    for q in range(start, n_ * c_ * oh_ * ow_, step):
        j, i = q % ow_, (q // ow_) % oh_
        c, n = (q // (ow_ * oh_)) % c_, q // (ow_ * oh_ * c_)
        a = arg[n, c, i, j]
        out[n, c, i, j] = g[n, c, a // w_, a % w_] if a >= 0 else 0


@cuda.jit
def _avg_pool(x, out, kh_, kw_, sh, sw, ph, pw):
    h_, w_ = x.shape[2], x.shape[3]
    n_, c_, oh_, ow_ = out.shape
    count = kh_ * kw_
    start, step = cuda.grid(1), cuda.gridsize(1)
    for q in range(start, n_ * c_ * oh_ * ow_, step):
        j, i = q % ow_, (q // ow_) % oh_
        c, n = (q // (ow_ * oh_)) % c_, q // (ow_ * oh_ * c_)
        s = 0.0  # float64, as the CPU kernel sums
        for ki in range(kh_):
            y = i * sh - ph + ki
            if 0 <= y < h_:
                for kj in range(kw_):
                    xx = j * sw - pw + kj
                    if 0 <= xx < w_:
                        s += float(x[n, c, y, xx])
        out[n, c, i, j] = s / count


def _pool(kernel, x, window, stride, padding):
    """``kernel`` run over every window of ``x`` (a float dtype)."""
    out = core.empty(K.pool2d_shape(_shape(x), window, stride, padding), x.dtype)
    if out.size:
        blocks, threads = core.launch(out.size)
        launcher.launch(kernel, blocks, threads, x, out, *window, *stride, *padding)
    return out


def max_pool2d(x, window, stride, padding):
    """The maximum of each window (NaN wins)."""
    return _pool(_max_pool, x, window, stride, padding)


def avg_pool2d(x, window, stride, padding):
    """Window means, zero padding counted."""
    return _pool(_avg_pool, x, window, stride, padding)


def _argmax_positions(x, window, stride, padding):
    arg = core.empty(K.pool2d_shape(_shape(x), window, stride, padding), np.int64)
    if arg.size:
        blocks, threads = core.launch(arg.size)
        launcher.launch(_max_pool_argmax, blocks, threads, x, arg, *window, *stride, *padding)
    return arg


def max_pool2d_select(g, x, window, stride, padding):
    """``g`` read at each window's last NaN of ``x`` (of ``g``'s dtype), else its first
    maximum (the transpose of max_pool2d_backward)."""
    K._check_grad(g, _shape(x), "max_pool2d_select")
    arg = _argmax_positions(x, window, stride, padding)
    out = core.empty(arg.shape, g.dtype)
    if out.size:
        blocks, threads = core.launch(out.size)
        launcher.launch(_select_at, blocks, threads, arg, g, out)
    return out


def max_pool2d_backward(g, x, window, stride, padding):
    """``g`` routed to each window's last NaN of ``x`` (of ``g``'s dtype), else its first
    maximum (the element the CPU kernel picks)."""
    out_shape = K.pool2d_shape(_shape(x), window, stride, padding)
    K._check_grad(g, out_shape, "max_pool2d_backward")
    if not x.size:
        return core.empty(_shape(x), g.dtype)
    arg = _argmax_positions(x, window, stride, padding)
    dx = core.empty(_shape(x), g.dtype)
    blocks, threads = core.launch(dx.size)
    launcher.launch(_gather_kernels(np.dtype(g.dtype))[1], blocks, threads, arg, g, dx, *window,
                    *stride, *padding)
    return dx


def avg_pool2d_backward(g, x_shape, window, stride, padding):
    """Each ``g`` spread evenly over its window, into an array of shape ``x_shape``."""
    x_shape = tuple(int(s) for s in x_shape)
    K._check_grad(g, K.pool2d_shape(x_shape, window, stride, padding),
                  "avg_pool2d_backward")
    dx = core.empty(x_shape, g.dtype)
    if dx.size:
        blocks, threads = core.launch(dx.size)
        launcher.launch(_gather_kernels(np.dtype(g.dtype))[2], blocks, threads, g, dx, *window,
                        *stride, *padding)
    return dx


# -- global average pooling -----------------------------------------------------------------
@cuda.jit
def _row_means(x, out, nrows, length, group):
    """out[r] = mean of row r of x (nrows, length): summed in float64 by a thread group,
    rounded to out's dtype, then divided, as the CPU's reduce_mean does."""
    sums = cuda.shared.array(BLOCK, np.float64)
    t = cuda.threadIdx.x
    lane = t % group
    per_block = cuda.blockDim.x // group
    for first in range(cuda.blockIdx.x * per_block, nrows, cuda.gridDim.x * per_block):
        row = first + t // group
        n = length if row < nrows else 0
        s = 0.0
        for k in range(lane, n, group):
            s += float(x[row * length + k])
        s = group_sum(sums, t, lane, group, s)
        if lane == 0 and row < nrows:
            out[row] = s
            out[row] = out[row] / length


def global_avg_pool2d(x):
    """The mean over H and W of ``x`` (N, C, H, W; a float dtype) -> (N, C)."""
    n, c, h, w = _shape(x)
    if not h * w:
        return core.full((n, c), np.nan, x.dtype)  # the CPU's mean of nothing
    out = core.empty((n, c), x.dtype)
    if out.size:
        blocks, threads, group = row_launch(n * c, h * w)
        launcher.launch(_row_means, blocks, threads, core.flat(x), core.flat(out), n * c, h * w,
                        group)
    return out

