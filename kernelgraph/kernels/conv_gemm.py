"""2-D convolution on the CPU as one large GEMM per call, over the whole batch.

im2col copies every receptive field of the batch into one matrix ``cols`` of shape
(C*KH*KW, N*OH*OW): row ``(c, ki, kj)``, column ``(n, i, j)``. Each of the three products
of a convolution is then a single BLAS call on it, however many images the batch holds:

- forward: ``w (O, C*KH*KW) @ cols`` -> (O, N*OH*OW);
- filter gradient: ``g (O, N*OH*OW) @ cols^T`` (BLAS reads the transpose in place);
- input gradient: ``w^T @ g`` -> the gradient of every column of ``cols``, scattered back
  onto the input by col2im.

Only the output-sized arrays change layout (NCHW is (N, O, OH*OW); the products use
(O, N, OH*OW)): a copy the size of the output, where ``cols`` is C*KH*KW/O times larger and
is never copied. One product per image instead makes N small BLAS calls, each too small to
keep BLAS's threads busy.

``cols`` is written into a scratch buffer kept between calls (:func:`scratch`): a fresh
allocation of that size pays its page faults on every step. The forward's ``cols`` is kept
for eager backward's filter gradient instead (:func:`recorded_filter_grad`), in buffers
reused once no record holds them.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
from numba import prange

from . import records
from .linalg import _blas_layout, _matmul_2d_blas
from .loops import by_work

ndarray = np.ndarray

# Elements of work from which a conv/pool loop (a loops.ByWork) runs threaded. These loops
# move memory and do almost no arithmetic, so the bar is far above loops.PARALLEL_MIN_WORK
# (multiply-adds). With every loop threaded, the CNN step of bench row 8 (batch 32, 16x16,
# an im2col of 0.6M elements) ran several times slower on 2 cores than with BLAS alone
# threaded: numba's spinning threads fought BLAS's for the cores.
THREADED_MIN_WORK = 1 << 22

# Scratch buffers at most this many bytes are kept for the next call (per thread, per dtype).
SCRATCH_MAX_BYTES = 1 << 28
# A forward's im2col matrix at most this large is kept for the filter gradient of eager
# backward (one im2col less per step, for memory C*KH*KW times the input's while it lives).
RECORD_MAX_BYTES = 1 << 26
_local = threading.local()


def _heap_for_large_arrays():
    """Free one 32 MiB block, once. glibc's malloc serves a block above its mmap threshold
    (128 KiB at start) with a fresh mapping, whose pages fault in again on every use, and
    freeing such a block raises the threshold to its size (up to 32 MiB): a CNN step's
    activation-sized arrays then reuse heap memory. Each step's freed im2col matrix used
    to do this by accident; the matrices are reused now, and without this every output of
    the step's elementwise ops paid its page faults again. Elsewhere a harmless allocation."""
    np.empty((1 << 25) - (1 << 16), np.uint8)  # allocated and freed at once


_heap_for_large_arrays()


def scratch(size: int, dtype) -> ndarray:
    """An uninitialised 1-D array of ``size`` elements, reused by the next call of this
    thread for the same dtype (so a caller must be done with it before calling again)."""
    dtype = np.dtype(dtype)
    if size * dtype.itemsize > SCRATCH_MAX_BYTES:
        return np.empty(size, dtype)
    kept = getattr(_local, "buffers", None)
    if kept is None:
        kept = _local.buffers = {}
    buf = kept.get(dtype)
    if buf is None or buf.size < size:
        buf = kept[dtype] = np.empty(size, dtype)
    return buf[:size]


_KEPT: dict = {}  # (dtype, size) -> up to two arrays that im2col's records hold or held
_lock = threading.Lock()


def _free_kept(size: int, dtype) -> ndarray:
    """A 1-D array for a recorded im2col matrix: one of ``_KEPT`` that no record holds any
    more (its input is gone, or replaced), else a new one (a fresh allocation of this size
    costs page faults on every step)."""
    kept = _KEPT.setdefault((np.dtype(dtype), size), [])
    for buf in kept:
        if sys.getrefcount(buf) <= 3:  # the list, this loop's name, getrefcount's argument
            return buf
    buf = np.empty(size, dtype)
    if len(kept) < 2:
        kept.append(buf)
    return buf


@by_work(THREADED_MIN_WORK)
def _im2col(x, cols, kh_, kw_, sh, sw, ph, pw, dh, dw, oh_, ow_):
    """cols[(c, ki, kj), (n, i, j)] = x[n, c, i*sh - ph + ki*dh, j*sw - pw + kj*dw], zero
    where that position is padding. Explicit index loops over flat views: numba's slice
    expressions cost more than the copy at these row lengths."""
    n_, c_, h_, w_ = x.shape
    xf = x.reshape(-1)
    per = oh_ * ow_
    for p in prange(c_ * kh_ * kw_ * n_):
        row = p // n_
        n = p % n_
        c = row // (kh_ * kw_)
        ki = (row // kw_) % kh_
        kj = row % kw_
        dst = cols[row]
        off = kj * dw - pw  # input column of output column j is j * sw + off
        j0 = min(ow_, max(0, (sw - 1 - off) // sw))  # the first j with j * sw + off >= 0
        j1 = max(j0, min(ow_, (w_ - 1 - off) // sw + 1))  # past the last one < w_
        plane = (n * c_ + c) * h_ * w_
        if sh == 1 and sw == 1 and ow_ == w_:  # rows follow rows: one run per plane
            i0 = min(oh_, max(0, ph - ki * dh))  # the first row inside the input
            i1 = max(i0, min(oh_, h_ + ph - ki * dh))
            db = n * per + i0 * ow_
            sb = plane + (i0 - ph + ki * dh) * w_ + off
            # Copied across row ends too (clipped to the plane); what lands in the border
            # columns j < j0 or j >= j1 is overwritten with zeros below.
            qa = max(0, plane - sb)
            qb = max(qa, min((i1 - i0) * ow_, plane + h_ * w_ - sb))
            dst[db + qa:db + qb] = xf[sb + qa:sb + qb]
            for i in range(oh_):
                b = n * per + i * ow_
                if i < i0 or i >= i1:
                    for j in range(ow_):
                        dst[b + j] = 0
                else:
                    for j in range(j0):
                        dst[b + j] = 0
                    for j in range(j1, ow_):
                        dst[b + j] = 0
            continue
        for i in range(oh_):
            y = i * sh - ph + ki * dh
            b = n * per + i * ow_
            if y < 0 or y >= h_:
                for j in range(ow_):
                    dst[b + j] = 0
                continue
            src = plane + y * w_ + off
            for j in range(j0):
                dst[b + j] = 0
            if sw == 1:  # a contiguous run, which the compiler vectorises
                for j in range(j0, j1):
                    dst[b + j] = xf[src + j]
            else:
                for j in range(j0, j1):
                    dst[b + j] = xf[src + j * sw]
            for j in range(j1, ow_):
                dst[b + j] = 0


@by_work(THREADED_MIN_WORK)
def _col2im(cols, dx, kh_, kw_, sh, sw, ph, pw, dh, dw, oh_, ow_):
    """The adjoint of :func:`_im2col`: add each entry of ``cols`` back onto the input
    position it was read from; padding positions are dropped (and may be zeroed in
    ``cols``)."""
    n_, c_, h_, w_ = dx.shape
    df = dx.reshape(-1)
    per = oh_ * ow_
    for p in prange(n_ * c_):  # each (n, c) plane of dx is written by one thread
        n = p // c_
        c = p % c_
        plane = p * h_ * w_
        for q in range(h_ * w_):
            df[plane + q] = 0
        for ki in range(kh_):
            for kj in range(kw_):
                src = cols[(c * kh_ + ki) * kw_ + kj]
                off = kj * dw - pw
                j0 = min(ow_, max(0, (sw - 1 - off) // sw))
                j1 = max(j0, min(ow_, (w_ - 1 - off) // sw + 1))
                if sh == 1 and sw == 1 and ow_ == w_:  # one run per plane, as in _im2col
                    i0 = min(oh_, max(0, ph - ki * dh))
                    i1 = max(i0, min(oh_, h_ + ph - ki * dh))
                    for i in range(i0, i1):  # padding columns: dropped (cols is scratch)
                        b = n * per + i * ow_
                        for j in range(j0):
                            src[b + j] = 0
                        for j in range(j1, ow_):
                            src[b + j] = 0
                    sb = n * per + i0 * ow_
                    db = plane + (i0 - ph + ki * dh) * w_ + off
                    qa = max(0, plane - db)
                    qb = max(qa, min((i1 - i0) * ow_, plane + h_ * w_ - db))
                    to = df[db + qa:db + qb]
                    fro = src[sb + qa:sb + qb]
                    for q in range(qb - qa):
                        to[q] += fro[q]
                    continue
                for i in range(oh_):
                    y = i * sh - ph + ki * dh
                    if y < 0 or y >= h_:
                        continue
                    b = n * per + i * ow_
                    dst = plane + y * w_ + off
                    if sw == 1:
                        for j in range(j0, j1):
                            df[dst + j] += src[b + j]
                    else:
                        for j in range(j0, j1):
                            df[dst + j * sw] += src[b + j]


def _gemm(a: ndarray, b: ndarray, out: ndarray | None = None) -> ndarray:
    if out is None:
        out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    _matmul_2d_blas(_blas_layout(a), _blas_layout(b), out)
    return out


def im2col(x: ndarray, kernel, stride, padding, dilation, out_hw, keep=False,
           channels_last=False) -> ndarray:
    """The (C*KH*KW, N*OH*OW) matrix of ``x``'s receptive fields, in scratch memory; with
    ``keep``, in its own array recorded against ``x`` (see :func:`recorded_filter_grad`)
    when it is at most RECORD_MAX_BYTES. An NHWC ``x`` (``channels_last``) is read through
    an NCHW copy, the size of the input (the matrix is C*KH*KW/C times larger)."""
    planes = np.ascontiguousarray(x.transpose(0, 3, 1, 2) if channels_last else x)
    n, c = planes.shape[:2]
    rows, ncols = c * kernel[0] * kernel[1], n * out_hw[0] * out_hw[1]
    keep = keep and rows * ncols * x.dtype.itemsize <= RECORD_MAX_BYTES
    if keep:
        what = ("im2col", kernel, stride, padding, dilation, channels_last)
        with _lock:
            records.record(x, what, None)  # the matrix x's last forward kept is free now
            cols = _free_kept(rows * ncols, x.dtype).reshape(rows, ncols)
            records.record(x, what, cols)
    else:
        cols = scratch(rows * ncols, x.dtype).reshape(rows, ncols)
    _im2col(cols.size, planes, cols, *kernel, *stride, *padding, *dilation, *out_hw)
    return cols


def _by_channel(a: ndarray, channels_last: bool) -> ndarray:
    """(N, O, OH, OW) -> the (O, N*OH*OW) matrix the products read (an output-sized copy);
    NHWC (N, OH, OW, O) -> its transpose, a view BLAS reads as it is."""
    if channels_last:
        return np.ascontiguousarray(a).reshape(-1, a.shape[3]).T
    n, o = a.shape[:2]
    return np.ascontiguousarray(a.reshape(n, o, -1).transpose(1, 0, 2)).reshape(o, -1)


def _out_hw(g: ndarray, channels_last: bool) -> tuple:
    return g.shape[1:3] if channels_last else g.shape[2:]


def conv2d(x, w, shape, stride, padding, dilation, channels_last=False) -> ndarray:
    """``shape``: the output's (N, O, OH, OW), checked by the caller; x, w non-empty. An NHWC
    output is the product (N*OH*OW, O) = cols^T w^T itself, no copy."""
    n, o, oh, ow = shape
    cols = im2col(x, w.shape[2:], stride, padding, dilation, (oh, ow), keep=True,
                  channels_last=channels_last)
    wm = np.ascontiguousarray(w).reshape(o, -1)
    if channels_last:
        return _gemm(cols.T, wm.T).reshape(n, oh, ow, o)
    out = _gemm(wm, cols)  # (O, N*OH*OW)
    return np.ascontiguousarray(out.reshape(o, n, oh * ow).transpose(1, 0, 2)).reshape(shape)


def conv2d_backward_input(g, w, x_shape, stride, padding, dilation,
                          channels_last=False) -> ndarray:
    o, c, kh, kw = w.shape
    oh, ow = _out_hw(g, channels_last)
    rows = c * kh * kw
    dcols = scratch(rows * g.shape[0] * oh * ow, g.dtype).reshape(rows, -1)
    _gemm(np.ascontiguousarray(w).reshape(o, rows).T, _by_channel(g, channels_last), dcols)
    n, h, wd = (x_shape[0], x_shape[1], x_shape[2]) if channels_last else \
        (x_shape[0], x_shape[2], x_shape[3])
    dx = np.empty((n, c, h, wd), g.dtype)
    _col2im(dcols.size, dcols, dx, kh, kw, *stride, *padding, *dilation, oh, ow)
    return np.ascontiguousarray(dx.transpose(0, 2, 3, 1)) if channels_last else dx


def conv2d_backward_filter(x, g, w_shape, stride, padding, dilation,
                           channels_last=False) -> ndarray:
    cols = _recorded_cols(x, g, w_shape, stride, padding, dilation, channels_last,
                          records.recorded_in_this_run)
    if cols is None:
        cols = im2col(x, w_shape[2:], stride, padding, dilation, _out_hw(g, channels_last),
                      channels_last=channels_last)
    return _gemm(_by_channel(g, channels_last), cols.T).reshape(w_shape)


def _recorded_cols(x, g, w_shape, stride, padding, dilation, channels_last, lookup):
    cols = lookup(x, ("im2col", w_shape[2:], stride, padding, dilation, channels_last))
    if cols is None or cols.dtype != g.dtype or cols.shape[1] != g.size // w_shape[0]:
        return None
    return cols


def recorded_filter_grad(x, g, w_shape, stride, padding, dilation,
                         channels_last=False) -> ndarray | None:
    """:func:`conv2d_backward_filter` from the im2col matrix the forward recorded for this
    very ``x``, or None where there is none (eager backward: kernels/records.py)."""
    cols = _recorded_cols(x, g, w_shape, stride, padding, dilation, channels_last,
                          records.recorded)
    if cols is None:
        return None
    return _gemm(_by_channel(g, channels_last), cols.T).reshape(w_shape)
