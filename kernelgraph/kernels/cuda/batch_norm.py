"""CUDA batch normalisation (:mod:`kernelgraph.kernels.batch_norm`): one thread per channel
for the two reductions (the statistics, the backward's sums), summing in float64 in the CPU
loops' order, so they give the CPU's bits; one thread per value for the normalisation and
x's gradient. A CNN's few channels leave most of a GPU idle in the reductions: they are
correct, not yet tuned.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from . import core, launcher


@cuda.jit
def _stats(x, eps, out):
    n_, c_, l_ = x.shape
    m = n_ * l_
    for c in range(cuda.grid(1), c_, cuda.gridsize(1)):
        s = 0.0
        for n in range(n_):
            for i in range(l_):
                s += np.float64(x[n, c, i])
        mean = s / m
        v = 0.0
        for n in range(n_):
            for i in range(l_):
                d = np.float64(x[n, c, i]) - mean
                v += d * d
        var = v / m
        out[0, c] = mean
        out[1, c] = var
        out[2, c] = 1.0 / math.sqrt(var + eps)


@cuda.jit
def _apply(x, stats, weight, bias, out):
    n_, c_, l_ = x.shape
    for p in range(cuda.grid(1), n_ * c_ * l_, cuda.gridsize(1)):
        c = (p // l_) % c_
        n, i = p // (l_ * c_), p % l_
        a = stats[2, c] * weight[c]
        out[n, c, i] = x[n, c, i] * a + (bias[c] - stats[0, c] * a)


@cuda.jit
def _grad_sums(g, x, stats, out):
    n_, c_, l_ = x.shape
    for c in range(cuda.grid(1), c_, cuda.gridsize(1)):
        mean = np.float64(stats[0, c])
        s = 0.0
        dot = 0.0
        for n in range(n_):
            for i in range(l_):
                gv = np.float64(g[n, c, i])
                s += gv
                dot += gv * (np.float64(x[n, c, i]) - mean)
        out[0, c] = s
        out[1, c] = dot * np.float64(stats[2, c])


@cuda.jit
def _grad_input(g, x, stats, weight, sums, training, out):
    n_, c_, l_ = x.shape
    m = n_ * l_
    for p in range(cuda.grid(1), n_ * c_ * l_, cuda.gridsize(1)):
        c = (p // l_) % c_
        n, i = p // (l_ * c_), p % l_
        invstd = np.float64(stats[2, c])
        scale = invstd * np.float64(weight[c])
        if training:
            k = np.float64(sums[1, c]) * invstd / m
            gmean = np.float64(sums[0, c]) / m
            mean = np.float64(stats[0, c])
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
    out = core.full((3, x3.shape[1]), np.nan, np.float64)
    if x3.shape[0] * x3.shape[2]:
        _launch(_stats, x3.shape[1], x3, float(eps), out)
    return _cast(out, np.dtype(x.dtype))


def apply(x, stats_, weight, bias):
    x3 = _ncl(x)
    out = core.empty(x3.shape, np.dtype(x.dtype))
    _launch(_apply, x3.size, x3, stats_, weight, bias, out)
    return out.reshape(*x.shape)


def grad_sums(g, x, stats_):
    x3 = _ncl(x)
    out = core.full((2, x3.shape[1]), 0, np.float64)
    _launch(_grad_sums, x3.shape[1], _ncl(g), x3, stats_, out)
    return _cast(out, np.dtype(x.dtype))


def grad_input(g, x, stats_, weight, sums, training):
    x3 = _ncl(x)
    out = core.empty(x3.shape, np.dtype(x.dtype))
    _launch(_grad_input, x3.size, _ncl(g), x3, stats_, weight, sums, bool(training), out)
    return out.reshape(*x.shape)

