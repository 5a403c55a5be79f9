"""CUDA batch normalisation (:mod:`kernelgraph.kernels.batch_norm`): the sums are the CPU
loops' two levels, in their order: one thread per (channel, position along L) sums over the
batch in float64 into a (C, L) scratch array, then one thread per channel adds its row in
order. One thread per value for the normalisation and x's gradient.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from ..batch_norm import grad_input_coefficients
from . import core, launcher
from .simulator import device_function

_coefficients = device_function(grad_input_coefficients)


@cuda.jit(device=True)
def _total(parts, c):
    s = 0.0
    for i in range(parts.shape[1]):
        s += parts[c, i]
    return s


@cuda.jit
def _parts_sum(x, parts):
    n_, c_, l_ = x.shape
    for p in range(cuda.grid(1), c_ * l_, cuda.gridsize(1)):
        c, i = p // l_, p % l_
        s = 0.0
        for n in range(n_):
            s += np.float64(x[n, c, i])
        parts[c, i] = s


@cuda.jit
def _parts_squares(x, out, parts):
    n_, c_, l_ = x.shape
    for p in range(cuda.grid(1), c_ * l_, cuda.gridsize(1)):
        c, i = p // l_, p % l_
        mean = out[0, c]
        s = 0.0
        for n in range(n_):
            d = np.float64(x[n, c, i]) - mean
            s += d * d
        parts[c, i] = s


@cuda.jit
def _finish(parts, m, row, eps, out):
    """out[row, c] = the channel's total / m; for the variance (row 1) also invstd."""
    for c in range(cuda.grid(1), out.shape[1], cuda.gridsize(1)):
        v = _total(parts, c) / m
        out[row, c] = v
        if row == 1:
            out[2, c] = 1.0 / math.sqrt(v + eps)


@cuda.jit
def _parts_dot(g, x, stats, sums, dots):
    n_, c_, l_ = x.shape
    for p in range(cuda.grid(1), c_ * l_, cuda.gridsize(1)):
        c, i = p // l_, p % l_
        mean = np.float64(stats[0, c])
        s = 0.0
        t = 0.0
        for n in range(n_):
            gv = np.float64(g[n, c, i])
            s += gv
            t += gv * (np.float64(x[n, c, i]) - mean)
        sums[c, i] = s
        dots[c, i] = t


@cuda.jit
def _finish_sums(sums, dots, stats, out):
    for c in range(cuda.grid(1), out.shape[1], cuda.gridsize(1)):
        out[0, c] = _total(sums, c)
        out[1, c] = _total(dots, c) * np.float64(stats[2, c])


@cuda.jit
def _apply(x, stats, weight, bias, out):
    n_, c_, l_ = x.shape
    for p in range(cuda.grid(1), n_ * c_ * l_, cuda.gridsize(1)):
        c = (p // l_) % c_
        n, i = p // (l_ * c_), p % l_
        a = stats[2, c] * weight[c]
        out[n, c, i] = x[n, c, i] * a + (bias[c] - stats[0, c] * a)


@cuda.jit
def _grad_input(g, x, stats, weight, sums, training, out):
    n_, c_, l_ = x.shape
    m = n_ * l_
    for p in range(cuda.grid(1), n_ * c_ * l_, cuda.gridsize(1)):
        c = (p // l_) % c_
        n, i = p // (l_ * c_), p % l_
        scale, k, gmean, mean = _coefficients(stats, weight, sums, c, m)
        if training:
            out[n, c, i] = (g[n, c, i] - gmean - (x[n, c, i] - mean) * k) * scale
        else:
            out[n, c, i] = g[n, c, i] * scale


def _ncl(a):
    shape = tuple(int(s) for s in a.shape)
    return a.reshape(shape[0], shape[1], int(np.prod(shape[2:], dtype=np.int64)))


def _launch(kernel, items, *args):
    if items:
        blocks, threads = core.launch(items)
        launcher.launch(kernel, blocks, threads, *args)


@cuda.jit
def _copy(src, dst):
    cols = src.shape[1]
    for p in range(cuda.grid(1), src.shape[0] * cols, cuda.gridsize(1)):
        dst[p // cols, p % cols] = src[p // cols, p % cols]


def _cast(out64, dtype):
    """The float64 sums rounded to ``dtype``, as the CPU's ``astype``."""
    out = core.empty(out64.shape, dtype)
    _launch(_copy, out64.size, out64, out)
    return out


def stats(x, eps):
    x3 = _ncl(x)
    c_, l_ = x3.shape[1], x3.shape[2]
    out = core.full((3, c_), np.nan, np.float64)
    if x3.shape[0] * l_:
        parts = core.empty((c_, l_), np.float64)
        m = float(x3.shape[0] * l_)
        _launch(_parts_sum, c_ * l_, x3, parts)
        _launch(_finish, c_, parts, m, 0, float(eps), out)
        _launch(_parts_squares, c_ * l_, x3, out, parts)
        _launch(_finish, c_, parts, m, 1, float(eps), out)
    return _cast(out, np.dtype(x.dtype))


def apply(x, stats_, weight, bias):
    x3 = _ncl(x)
    out = core.empty(x3.shape, np.dtype(x.dtype))
    _launch(_apply, x3.size, x3, stats_, weight, bias, out)
    return out.reshape(*x.shape)


def grad_sums(g, x, stats_):
    x3 = _ncl(x)
    c_, l_ = x3.shape[1], x3.shape[2]
    out = core.full((2, c_), 0, np.float64)
    if x3.size:
        sums, dots = core.empty((c_, l_), np.float64), core.empty((c_, l_), np.float64)
        _launch(_parts_dot, c_ * l_, _ncl(g), x3, stats_, sums, dots)
        _launch(_finish_sums, c_, sums, dots, stats_, out)
    return _cast(out, np.dtype(x.dtype))


def grad_input(g, x, stats_, weight, sums, training):
    x3 = _ncl(x)
    out = core.empty(x3.shape, np.dtype(x.dtype))
    _launch(_grad_input, x3.size, _ncl(g), x3, stats_, weight, sums, bool(training), out)
    return out.reshape(*x.shape)

