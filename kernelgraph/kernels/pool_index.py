"""Max pooling on the CPU with the argmax of every window kept, as PyTorch keeps its indices.

The forward writes, beside each window's maximum, the position it came from (``y * W + x``
in its plane, -1 for a window of padding alone), so the gradient is a scatter by index and
the second derivative a gather, with no window scanned again. The pick is PyTorch's: the
last NaN of a window if it holds one, else its first maximum.

The indices of the last pooling of an array are recorded against that array
(:mod:`kernelgraph.kernels.records`) for eager backward; the backward *op* finds its
indices itself, by one scan.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .conv_gemm import THREADED_MIN_WORK
from .loops import by_work

ndarray = np.ndarray


@by_work(THREADED_MIN_WORK)
def _max_pool_indexed(x, out, idx, kh_, kw_, sh, sw, ph, pw):
    n_, c_, h_, w_ = x.shape
    oh_, ow_ = out.shape[2], out.shape[3]
    xf = x.reshape(-1)
    outf = out.reshape(-1)
    idxf = idx.reshape(-1)
    for p in prange(n_ * c_):
        n = p // c_
        c = p % c_
        plane = x[n, c]
        if ph == 0 and pw == 0:  # every window inside the plane (floor mode): no checks
            _pool_plane_unpadded(xf, outf, idxf, p, h_, w_, oh_, ow_, kh_, kw_, sh, sw, True)
            continue
        for i in range(oh_):
            for j in range(ow_):
                m = plane[0, 0]
                best = -1
                for ki in range(kh_):
                    y = i * sh - ph + ki
                    if y < 0 or y >= h_:
                        continue
                    row = plane[y]
                    for kj in range(kw_):
                        xx = j * sw - pw + kj
                        if 0 <= xx < w_:
                            v = row[xx]
                            if best < 0 or v > m or v != v:
                                m = v
                                best = y * w_ + xx
                out[n, c, i, j] = m if best >= 0 else -np.inf
                idx[n, c, i, j] = best


@njit(inline="always")
def _pool_plane_unpadded(xf, outf, idxf, p, h_, w_, oh_, ow_, kh_, kw_, sh, sw, nan_aware):
    """Plane ``p`` of a pooling without padding, by flat offsets into contiguous planes (a
    view per window row costs more than the window's few comparisons). Without NaNs a pick
    is a plain ``v > m``: LLVM turns the NaN test's extra compare into branches, which the
    picks make unpredictable (three times slower)."""
    src = xf[p * h_ * w_:(p + 1) * h_ * w_]
    o = p * oh_ * ow_
    if kh_ == 2 and kw_ == 2 and not nan_aware:  # the common 2x2 window, unrolled
        w1 = np.int32(w_)
        for i in range(oh_):
            for j in range(ow_):
                top = np.int32(i * sh * w_ + j * sw)
                m, best = src[top], top
                for at in (top + 1, top + w1, top + w1 + 1):
                    v = src[at]
                    take = v > m
                    m = v if take else m
                    best = at if take else best
                outf[o + i * ow_ + j] = m
                idxf[o + i * ow_ + j] = best
        return
    for i in range(oh_):
        for j in range(ow_):
            top = np.int32(i * sh * w_ + j * sw)
            m = src[top]
            best = top
            for ki in range(kh_):
                at = top + np.int32(ki * w_)
                for kj in range(kw_):
                    v = src[at + kj]
                    take = ((v > m) | (v != v)) if nan_aware else (v > m)
                    m = v if take else m
                    best = np.int32(at + kj) if take else best
            outf[o + i * ow_ + j] = m
            idxf[o + i * ow_ + j] = best


@by_work(THREADED_MIN_WORK)
def _max_pool_unpadded_nan_free(x, out, idx, kh_, kw_, sh, sw):
    """:func:`_max_pool_indexed` without padding, for an ``x`` that holds no NaN."""
    n_, c_, h_, w_ = x.shape
    oh_, ow_ = out.shape[2], out.shape[3]
    xf, outf, idxf = x.reshape(-1), out.reshape(-1), idx.reshape(-1)
    for p in prange(n_ * c_):
        _pool_plane_unpadded(xf, outf, idxf, p, h_, w_, oh_, ow_, kh_, kw_, sh, sw, False)


@by_work(THREADED_MIN_WORK)
def _scatter(g, idx, dx):
    # Windows overlap when the stride is below the window: a plane is one thread's, so the
    # additions onto a shared pick never race.
    n_, c_, h_, w_ = dx.shape
    oh_, ow_ = g.shape[2], g.shape[3]
    for p in prange(n_ * c_):
        n = p // c_
        c = p % c_
        plane = dx[n, c].reshape(-1)
        plane[:] = 0
        for i in range(oh_):
            for j in range(ow_):
                k = idx[n, c, i, j]
                if k >= 0:
                    plane[k] += g[n, c, i, j]


@by_work(THREADED_MIN_WORK)
def _gather(g, idx, out):
    n_, c_, w_ = g.shape[0], g.shape[1], g.shape[3]
    for p in prange(n_ * c_):
        n = p // c_
        c = p % c_
        for i in range(out.shape[2]):
            for j in range(out.shape[3]):
                k = idx[n, c, i, j]
                out[n, c, i, j] = g[n, c, k // w_, k % w_] if k >= 0 else 0


def max_pool2d_indexed(x, out_shape, kernel, stride, padding) -> tuple[ndarray, ndarray]:
    """(the maxima, their int32 positions in their planes); shapes checked by the caller."""
    out = np.empty(out_shape, x.dtype)
    idx = np.empty(out_shape, np.int32)
    if out.size:
        x = np.ascontiguousarray(x)
        work = out.size * kernel[0] * kernel[1]
        if padding == (0, 0) and not np.isnan(x.max()):  # max() is NaN where any one is
            _max_pool_unpadded_nan_free(work, x, out, idx, *kernel, *stride)
        else:
            _max_pool_indexed(work, x, out, idx, *kernel, *stride, *padding)
    return out, idx


def scatter(g, idx, x_shape) -> ndarray:
    """The gradient of the pooling that gave ``idx``: ``g`` added at each window's pick."""
    dx = np.empty(x_shape, g.dtype)
    if dx.size:
        _scatter(g.size * 4, np.ascontiguousarray(g), idx, dx)
    return dx


def gather(g, idx) -> ndarray:
    """``g`` (the input's shape) read at each window's pick: the transpose of scatter."""
    out = np.empty(idx.shape, g.dtype)
    if out.size:
        _gather(out.size * 4, np.ascontiguousarray(g), idx, out)
    return out
