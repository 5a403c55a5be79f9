"""Separable linear resampling of NCHW arrays: one numba CPU kernel for PyTorch's
``interpolate`` (nearest, bilinear), reflection and replication padding and adaptive
average pooling, forwards and gradients.

Each of these maps is *separable*: output row ``oy`` is a weighted sum of a few input rows,
output column ``ox`` of a few input columns, and ``out[n, c, oy, ox] = sum_a sum_b
wy[a] * wx[b] * x[n, c, iy[a], ix[b]]``. A map is therefore given by two small *tables*,
one per axis, in compressed-row form ``(ptr, idx, wt)``: the entries of output position
``o`` are ``idx[ptr[o]:ptr[o + 1]]`` with weights ``wt[...]``. The table functions below
write PyTorch's own index formulas (``UpSample.h``: ``nearest_neighbor_compute_source_index``,
``area_pixel_compute_source_index``, ``compute_source_index_and_lambda``; the padding and
adaptive-pooling index rules), so every op is one table pair and one kernel.

The gradient of a linear map is its transpose: :func:`transpose_table` turns a table
(output -> inputs) into (input -> outputs), and the same kernel runs it. Written that way
the gradient is a *gather* (each input element sums what it received), so nothing races
and the sums do not depend on threads.

>>> t = bilinear_table(2, 4, align_corners=False, scale=None)
>>> [round(float(w), 2) for w in t[2]]
[1.0, 0.0, 0.75, 0.25, 0.25, 0.75, 0.75, 0.25]
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .conv import THREADED_MIN_WORK
from .loops import by_work

ndarray = np.ndarray
Table = tuple  # (ptr int64 (out + 1,), idx int64 (nnz,), wt float64 (nnz,))


def _table(idx_per_out: list, wt_per_out: list) -> Table:
    ptr = np.zeros(len(idx_per_out) + 1, np.int64)
    ptr[1:] = np.cumsum([len(i) for i in idx_per_out])
    idx = np.array([i for row in idx_per_out for i in row], np.int64)
    wt = np.array([w for row in wt_per_out for w in row], np.float64)
    return ptr, idx, wt


def _scale(in_size: int, out_size: int, scale) -> float:
    # compute_scales_value: 1 / scale_factor where the caller gave one, else in / out
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def nearest_table(in_size: int, out_size: int, scale=None) -> Table:
    """PyTorch's 'nearest': ``min(floor(o * scale), in - 1)``, in float32 as ATen does."""
    s = np.float32(_scale(in_size, out_size, scale))
    src = [min(int(math.floor(np.float32(o) * s)), in_size - 1) for o in range(out_size)]
    return _table([[i] for i in src], [[1.0]] * out_size)


def bilinear_table(in_size: int, out_size: int, align_corners: bool, scale=None) -> Table:
    """PyTorch's linear interpolation along one axis (``compute_source_index_and_lambda``)."""
    if align_corners:
        s = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        s = _scale(in_size, out_size, scale)
    idx, wt = [], []
    for o in range(out_size):
        if out_size == in_size and not align_corners:
            real = float(o)
        elif align_corners:
            real = s * o
        else:
            real = max(s * (o + 0.5) - 0.5, 0.0)
        i0 = int(real)
        step = 1 if i0 < in_size - 1 else 0
        lam = min(max(real - i0, 0.0), 1.0)
        idx.append([i0, i0 + step])
        wt.append([1.0 - lam, lam])
    return _table(idx, wt)


def reflect_table(in_size: int, before: int, after: int) -> Table:
    """Reflection padding: ``-1 -> 1``, ``in -> in - 2`` (the edge is not repeated)."""
    src = []
    for o in range(in_size + before + after):
        i = abs(o - before)
        src.append(2 * (in_size - 1) - i if i >= in_size else i)
    return _table([[i] for i in src], [[1.0]] * len(src))


def replicate_table(in_size: int, before: int, after: int) -> Table:
    """Replication padding: the edge repeated."""
    src = [min(max(o - before, 0), in_size - 1) for o in range(in_size + before + after)]
    return _table([[i] for i in src], [[1.0]] * len(src))


def adaptive_avg_table(in_size: int, out_size: int) -> Table:
    """Adaptive average pooling: window ``[floor(o * in / out), ceil((o + 1) * in / out))``."""
    idx, wt = [], []
    for o in range(out_size):
        start = (o * in_size) // out_size
        end = -((-(o + 1) * in_size) // out_size)
        idx.append(list(range(start, end)))
        wt.append([1.0 / (end - start)] * (end - start))
    return _table(idx, wt)


def transpose_table(table: Table, in_size: int) -> Table:
    """The table of the transposed map: input position -> the outputs that read it."""
    ptr, idx, wt = table
    outs = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
    order = np.argsort(idx, kind="stable")
    new_ptr = np.zeros(in_size + 1, np.int64)
    new_ptr[1:] = np.cumsum(np.bincount(idx, minlength=in_size))
    return new_ptr, outs[order], wt[order]


def dense(table: Table, in_size: int) -> ndarray:
    """The (out, in) matrix of a table (for the NumPy reference)."""
    ptr, idx, wt = table
    m = np.zeros((len(ptr) - 1, in_size))
    for o in range(len(ptr) - 1):
        for k in range(ptr[o], ptr[o + 1]):
            m[o, idx[k]] += wt[k]
    return m


# -- the kernel -----------------------------------------------------------------------------
# Threaded only for large outputs: these loops move memory more than they compute (see
# kernels/conv.py on numba's threads against BLAS's).
@by_work(THREADED_MIN_WORK)
def _resample(x, out, rptr, ridx, rwt, cptr, cidx, cwt):
    n_, c_, oh_, ow_ = out.shape
    for p in prange(n_ * c_):
        n = p // c_
        c = p % c_
        for oy in range(oh_):
            for ox in range(ow_):
                acc = 0.0
                for a in range(rptr[oy], rptr[oy + 1]):
                    row = 0.0
                    for b in range(cptr[ox], cptr[ox + 1]):
                        row += cwt[b] * x[n, c, ridx[a], cidx[b]]
                    acc += rwt[a] * row
                out[n, c, oy, ox] = acc


def check_tables(x_shape: tuple, rows: Table, cols: Table) -> tuple:
    """The output shape of a table pair applied to ``x_shape``; refuses a table that would
    read outside the input (the op builds them, so this guards the kernel, not the user)."""
    if len(x_shape) != 4:
        raise ValueError(f"resample2d expects an input (N, C, H, W), got shape {x_shape}")
    for (ptr, idx, wt), size in ((rows, x_shape[2]), (cols, x_shape[3])):
        if len(idx) != len(wt) or ptr[-1] != len(idx) or (
                len(idx) and (idx.min() < 0 or idx.max() >= size)):
            raise ValueError(f"resample2d: a table reads outside an axis of length {size}")
    return (x_shape[0], x_shape[1], len(rows[0]) - 1, len(cols[0]) - 1)


def resample2d(x: ndarray, rows: Table, cols: Table) -> ndarray:
    """Apply the separable map (``rows``, ``cols``) to x (N, C, H, W) -> (N, C, OH, OW)."""
    out = np.empty(check_tables(x.shape, rows, cols), x.dtype)
    if out.size:
        _resample(out.size, np.ascontiguousarray(x), out, *rows, *cols)
    return out


def resample2d_reference(x: ndarray, rows: Table, cols: Table) -> ndarray:
    """NumPy oracle: the two dense per-axis matrices applied with einsum."""
    h, w = x.shape[2:]
    y = np.einsum("oh,nchw,pw->ncop", dense(rows, h), np.asarray(x, np.float64),
                  dense(cols, w))
    return y.astype(x.dtype)
