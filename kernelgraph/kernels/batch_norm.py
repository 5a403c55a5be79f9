"""numba CPU kernels of training-mode batch normalisation, as PyTorch's CPU kernels compute
it (``aten/src/ATen/native/cpu/batch_norm_kernel.cpp``), over x viewed as (N, C, L) (L the
product of the dims after the channels, 1 for (N, C)):

- :func:`stats`: per channel the mean, the biased variance and ``1 / sqrt(var + eps)``, summed
  in float64 in two sweeps over the channel's values (the mean, then the squared deviations
  from it, as PyTorch does); a channel's values are a few hundred KB at most in a CNN, so
  the second sweep reads them from cache (the sums are two-level: see ``_total``);
- :func:`apply`: ``y = x * a + b'`` with ``a = invstd * weight`` and ``b' = bias - mean * a``
  per channel: one multiply-add per value, in x's dtype, as PyTorch's;
- :func:`grad_sums`: the backward's two reductions in one sweep, ``sum(g)`` (the bias's
  gradient) and ``sum(g * (x - mean)) * invstd`` (the weight's);
- :func:`grad_input`: x's gradient in one sweep from those sums: in training mode
  ``(g - sum(g) / M - (x - mean) * invstd**2 * dotp / M) * invstd * weight`` (M values per
  channel, the statistics' own dependence on x included), with running statistics
  ``g * invstd * weight``.

Each loop over the channels runs threaded from ``THREADED_MIN_WORK`` values on; every
channel is written by one iteration in the same order either way, so both give the same
bits. The references are float64 NumPy (:func:`reference`, ...).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .conv import THREADED_MIN_WORK
from .loops import by_work

ndarray = np.ndarray


def as_ncl(x: ndarray) -> ndarray:
    """x (N, C, ...) as a C-contiguous (N, C, L) array (a view where x is contiguous)."""
    n, c = x.shape[0], x.shape[1]
    return np.ascontiguousarray(x).reshape(n, c, int(np.prod(x.shape[2:], dtype=np.int64)))


# The sums are two-level: a float64 partial sum per position along L, over the batch, then
# those L partial sums in order. The partial sums are independent of each other, so the
# inner loop vectorises (one running sum would wait on each add), and the order is fixed,
# so every machine gives the same bits.
@njit(cache=True)
def _total(parts):
    s = 0.0
    for i in range(parts.shape[0]):
        s += parts[i]
    return s


@by_work(THREADED_MIN_WORK)
def _stats(x, eps, out):
    n_, c_, l_ = x.shape
    m = n_ * l_
    for c in prange(c_):
        parts = np.zeros(l_)
        for n in range(n_):
            for i in range(l_):
                parts[i] += x[n, c, i]
        mean = _total(parts) / m
        parts[:] = 0.0
        for n in range(n_):
            for i in range(l_):
                d = np.float64(x[n, c, i]) - mean
                parts[i] += d * d
        var = _total(parts) / m
        out[0, c] = mean
        out[1, c] = var
        out[2, c] = 1.0 / math.sqrt(var + eps)


@by_work(THREADED_MIN_WORK)
def _apply(x, stats, weight, bias, out):
    n_, c_, l_ = x.shape
    for c in prange(c_):
        a = stats[2, c] * weight[c]
        b = bias[c] - stats[0, c] * a
        for n in range(n_):
            for i in range(l_):
                out[n, c, i] = x[n, c, i] * a + b


@by_work(THREADED_MIN_WORK)
def _grad_sums(g, x, stats, out):
    n_, c_, l_ = x.shape
    for c in prange(c_):
        mean = np.float64(stats[0, c])
        sums, dots = np.zeros(l_), np.zeros(l_)
        for n in range(n_):
            for i in range(l_):
                gv = np.float64(g[n, c, i])
                sums[i] += gv
                dots[i] += gv * (np.float64(x[n, c, i]) - mean)
        out[0, c] = _total(sums)
        out[1, c] = _total(dots) * np.float64(stats[2, c])


def grad_input_coefficients(stats, weight, sums, c, m):
    """Channel ``c``'s (scale, k, gmean, mean), ``m`` values a channel: x's gradient is
    ``(g - gmean - (x - mean) * k) * scale`` in training, ``g * scale`` otherwise. A scalar
    body, compiled for the CPU loops here and for the CUDA kernel."""
    invstd = np.float64(stats[2, c])
    # k = dotp * invstd**2 / M, with sums[1] = dotp * invstd
    return (invstd * np.float64(weight[c]), np.float64(sums[1, c]) * invstd / m,
            np.float64(sums[0, c]) / m, np.float64(stats[0, c]))


_coefficients = njit(inline="always")(grad_input_coefficients)


@by_work(THREADED_MIN_WORK)
def _grad_input(g, x, stats, weight, sums, training, out):
    n_, c_, l_ = x.shape
    m = n_ * l_
    for c in prange(c_):
        scale, k, gmean, mean = _coefficients(stats, weight, sums, c, m)
        if training:
            for n in range(n_):
                for i in range(l_):
                    out[n, c, i] = (g[n, c, i] - gmean - (x[n, c, i] - mean) * k) * scale
        else:
            for n in range(n_):
                for i in range(l_):
                    out[n, c, i] = g[n, c, i] * scale


# Rows of C values ((N, C) inputs, or NHWC ones seen as (N*H*W, C)): the loops above would
# walk each channel down a column; these walk the rows in memory order, keeping a partial
# sum per channel, the sums above with L = 1, in the same order (the same bits).
@njit(cache=True)
def _stats_rows(x, eps, out):
    n_, c_ = x.shape
    parts = np.zeros(c_)
    for n in range(n_):
        for c in range(c_):
            parts[c] += x[n, c]
    mean = parts / n_
    parts[:] = 0.0
    for n in range(n_):
        for c in range(c_):
            d = np.float64(x[n, c]) - mean[c]
            parts[c] += d * d
    for c in range(c_):
        var = parts[c] / n_
        out[0, c] = mean[c]
        out[1, c] = var
        out[2, c] = 1.0 / math.sqrt(var + eps)


@njit(cache=True)
def _apply_rows(x, stats, weight, bias, out):
    a = stats[2] * weight
    b = bias - stats[0] * a
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            out[n, c] = x[n, c] * a[c] + b[c]


@njit(cache=True)
def _grad_sums_rows(g, x, stats, out):
    n_, c_ = x.shape
    mean = stats[0].astype(np.float64)
    sums, dots = np.zeros(c_), np.zeros(c_)
    for n in range(n_):
        for c in range(c_):
            gv = np.float64(g[n, c])
            sums[c] += gv
            dots[c] += gv * (np.float64(x[n, c]) - mean[c])
    for c in range(c_):
        out[0, c] = sums[c]
        out[1, c] = dots[c] * np.float64(stats[2, c])


@njit(cache=True)
def _grad_input_rows(g, x, stats, weight, sums, training, out):
    n_, c_ = x.shape
    scale, k, gmean, mean = np.empty(c_), np.empty(c_), np.empty(c_), np.empty(c_)
    for c in range(c_):
        scale[c], k[c], gmean[c], mean[c] = _coefficients(stats, weight, sums, c, n_)
    for n in range(n_):
        for c in range(c_):
            if training:
                out[n, c] = (g[n, c] - gmean[c] - (x[n, c] - mean[c]) * k[c]) * scale[c]
            else:
                out[n, c] = g[n, c] * scale[c]


def stats(x: ndarray, eps: float) -> ndarray:
    """(3, C) in x's dtype: each channel's mean, biased variance and 1 / sqrt(var + eps)."""
    x3 = as_ncl(x)
    out = np.empty((3, x3.shape[1]), np.float64)
    if x3.shape[2] == 1 and x3.shape[0]:
        _stats_rows(x3[:, :, 0], float(eps), out)
    elif x3.shape[0] * x3.shape[2]:
        _stats(x3.size, x3, float(eps), out)
    else:  # no values: PyTorch's NaN mean and variance
        out[:2] = np.nan
        out[2] = np.nan
    return out.astype(x.dtype)


def apply(x: ndarray, stats_: ndarray, weight: ndarray, bias: ndarray) -> ndarray:
    """x normalised with ``stats_`` (:func:`stats`' rows), scaled by weight, shifted by bias."""
    x3 = as_ncl(x)
    out = np.empty(x3.shape, x.dtype)
    if x3.shape[2] == 1:
        _apply_rows(x3[:, :, 0], stats_, weight, bias, out[:, :, 0])
    else:
        _apply(x3.size, x3, stats_, weight, bias, out)
    return out.reshape(x.shape)


def grad_sums(g: ndarray, x: ndarray, stats_: ndarray) -> ndarray:
    """(2, C) in x's dtype: sum(g) and sum(g * (x - mean)) * invstd per channel."""
    x3, g3 = as_ncl(x), as_ncl(g)
    out = np.empty((2, x3.shape[1]), np.float64)
    if x3.shape[2] == 1:
        _grad_sums_rows(g3[:, :, 0], x3[:, :, 0], stats_, out)
    else:
        _grad_sums(x3.size, g3, x3, stats_, out)
    return out.astype(x.dtype)


def grad_input(g: ndarray, x: ndarray, stats_: ndarray, weight: ndarray, sums: ndarray,
               training: bool) -> ndarray:
    """x's gradient (see the module docstring) from :func:`grad_sums`' ``sums``."""
    x3, g3 = as_ncl(x), as_ncl(g)
    out = np.empty(x3.shape, x.dtype)
    if not x3.size:
        pass
    elif x3.shape[2] == 1:
        _grad_input_rows(g3[:, :, 0], x3[:, :, 0], stats_, weight, sums, bool(training),
                         out[:, :, 0])
    else:
        _grad_input(x3.size, g3, x3, stats_, weight, sums, bool(training), out)
    return out.reshape(x.shape)


# -- NumPy references (float64) ----------------------------------------------------------------
def _axes(x) -> tuple:
    return tuple(a for a in range(np.ndim(x)) if a != 1)


def _view(v, ndim: int):
    return np.reshape(v, (1, -1) + (1,) * (ndim - 2))


def reference_stats(x, eps):
    x64 = np.asarray(x, np.float64)
    mean = x64.mean(axis=_axes(x64))
    var = ((x64 - _view(mean, x64.ndim)) ** 2).mean(axis=_axes(x64))
    return np.stack([mean, var, 1.0 / np.sqrt(var + eps)]).astype(np.asarray(x).dtype)


def reference(x, stats_, weight, bias, eps=1e-5, training=True):
    """Training mode normalises with x's own statistics (``stats_`` must be them, as the
    batch_norm card requires; recomputed here, so that differences of this function are
    the total derivative); otherwise with the statistics given."""
    x64 = np.asarray(x, np.float64)
    if training:
        s = reference_stats(x64, eps)
    else:
        s = np.asarray(stats_, np.float64)
    nd = x64.ndim
    y = (x64 - _view(s[0], nd)) * _view(s[2], nd) * _view(weight, nd) + _view(bias, nd)
    return y.astype(np.asarray(x).dtype)


def reference_grad_sums(g, x, stats_):
    g64, x64, s = (np.asarray(a, np.float64) for a in (g, x, stats_))
    xhat = (x64 - _view(s[0], x64.ndim)) * _view(s[2], x64.ndim)
    return np.stack([g64.sum(axis=_axes(x64)),
                     (g64 * xhat).sum(axis=_axes(x64))]).astype(np.asarray(x).dtype)


def reference_grad_input(g, x, stats_, weight, sums, training=True):
    g64, x64, s, w, r = (np.asarray(a, np.float64) for a in (g, x, stats_, weight, sums))
    nd = x64.ndim
    scale = _view(s[2] * w, nd)
    if not training:
        return (g64 * scale).astype(np.asarray(x).dtype)
    m = x64.size // max(x64.shape[1], 1)
    xhat = (x64 - _view(s[0], nd)) * _view(s[2], nd)
    dx = (g64 - _view(r[0], nd) / m - xhat * _view(r[1], nd) / m) * scale
    return dx.astype(np.asarray(x).dtype)
