"""NumPy reference implementations: the test oracle for every kernel (never run by the engine).

Each takes the same arguments as the op's forward function and returns float64 results
where precision matters, so tests can compare any kernel against them with a tolerance.
An op's card names its reference (``op.reference``; ``kg.ops.REFERENCE`` maps op names to
them), where NumPy has no function of the op's own.
"""

from __future__ import annotations

import math

import numpy as np


def softmax(x, axis=-1):
    z = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return z / np.sum(z, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def relu(x):
    # PyTorch's: NaN stays NaN and -0.0 stays -0.0 (np.maximum(-0.0, 0) would be 0.0).
    return np.where(np.less(x, 0), np.zeros_like(x), x)


def sparse_softmax_cross_entropy(logits, labels):
    if len(labels) == 0:  # no rows: an empty loss, even over no classes (PyTorch's)
        return np.zeros(0, np.asarray(logits).dtype)
    return -log_softmax(logits, axis=-1)[np.arange(len(labels)), labels]


def sum_to_shape(g, shape):
    """Sum ``g`` over the axes that broadcasting added or stretched to reach ``shape``."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    stretched = tuple(i for i, d in enumerate(shape) if d == 1 and g.shape[i] != 1)
    return g.sum(axis=stretched, keepdims=True) if stretched else g


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv2d(x, w, stride=1, padding=0, dilation=1, data_format="NCHW"):
    """NCHW cross-correlation as a sum over kernel offsets of strided slices of padded x;
    NHWC x and output with ``data_format='NHWC'``."""
    if data_format == "NHWC":
        return conv2d(x.transpose(0, 3, 1, 2), w, stride, padding, dilation).transpose(0, 2, 3, 1)
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    kh, kw = w.shape[2:]
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow), np.result_type(x, w))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                       j * dw:j * dw + sw * (ow - 1) + 1:sw]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


def _pool_windows(x, kernel_size, stride, padding, fill):
    (kh, kw) = _pair(kernel_size)
    (sh, sw) = _pair(kernel_size if stride is None else stride)
    (ph, pw) = _pair(padding)
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=fill)
    oh = (xp.shape[2] - kh) // sh + 1
    ow = (xp.shape[3] - kw) // sw + 1
    return [xp[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw]
            for i in range(kh) for j in range(kw)]


def max_pool2d(x, kernel_size, stride=None, padding=0):
    return np.max(_pool_windows(x, kernel_size, stride, padding, -np.inf), axis=0)


def max_pool2d_select(g, x, kernel_size, stride=None, padding=0):
    """g read at each window's last NaN of x if it has one, else at its first maximum
    (PyTorch's scan, ``val > max || isnan(val)``); padding is never picked."""
    windows = np.asarray(_pool_windows(x, kernel_size, stride, padding, -np.inf))
    valid = np.asarray(_pool_windows(np.ones(np.shape(x), bool), kernel_size, stride,
                                     padding, False))
    nan = np.isnan(windows)
    with np.errstate(invalid="ignore"):
        top = np.max(np.where(valid & ~nan, windows, -np.inf), axis=0)
    first_max = np.argmax(valid & (windows == top), axis=0)
    last_nan = len(windows) - 1 - np.argmax(nan[::-1], axis=0)
    pick = np.where(nan.any(axis=0), last_nan, first_max)
    picked = np.asarray(_pool_windows(g, kernel_size, stride, padding, 0.0))
    return np.take_along_axis(picked, pick[None], axis=0)[0]


def avg_pool2d(x, kernel_size, stride=None, padding=0):
    return np.mean(_pool_windows(x, kernel_size, stride, padding, 0.0), axis=0)


def global_avg_pool2d(x):
    return np.mean(x, axis=(2, 3))


def reduce_sum(x, axis=None, keepdims=False):
    return np.sum(x, axis=axis, keepdims=keepdims)


def reduce_mean(x, axis=None, keepdims=False):
    return np.mean(x, axis=axis, keepdims=keepdims)


def reduce_max(x, axis=None, keepdims=False):
    return np.max(x, axis=axis, keepdims=keepdims)


def reshape(x, shape):
    return np.reshape(x, shape)


def transpose(x, perm=None):
    return np.transpose(x, perm)


def broadcast_to(x, shape):
    return np.broadcast_to(x, shape)


def cast(x, dtype):
    return x.astype(dtype)


# -- indexing ops (kernelgraph/ops/indexing.py) ----------------------------------------------
def gather(params, indices, axis=0):
    return np.take(params, indices, axis=axis)


def scatter_add(g, indices, shape, axis=0):
    """Zeros of ``shape`` with ``g``'s slices added at ``indices`` along ``axis``."""
    out = np.zeros(shape, g.dtype)
    moved = np.moveaxis(out, axis, 0)
    np.add.at(moved, np.asarray(indices).reshape(-1),
              np.moveaxis(g, list(range(axis, axis + np.ndim(indices))),
                          list(range(np.ndim(indices)))).reshape(
                              (-1,) + moved.shape[1:]))
    return out


def one_hot(indices, depth, dtype=np.float32):
    return (np.asarray(indices)[..., None] == np.arange(depth)).astype(dtype)


def pad(x, paddings, value=0):
    if np.ndim(x) == 0:
        return np.array(x)
    return np.pad(x, paddings, constant_values=value)


def concat(*xs, axis=0):
    return np.concatenate(xs, axis=axis)


def stack(*xs, axis=0):
    return np.stack(xs, axis=axis)


def clip(x, min=None, max=None):  # noqa: A002 - torch.clamp's names, as the op's
    return np.clip(x, min, max)


def argmax(x, axis=None, keepdims=False):
    return np.argmax(x, axis=axis, keepdims=keepdims)


def getitem(x, index):
    return x[index]


def rsqrt(x):
    return np.reciprocal(np.sqrt(x))


def erf(x):
    x = np.asarray(x)
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype)


def max_dim(x, dim, keepdim=False):
    """torch.max(x, dim).values: the value at the first maximum (or first NaN)."""
    idx = np.expand_dims(np.argmax(x, axis=dim), dim)
    out = np.take_along_axis(x, idx, axis=dim)
    return out if keepdim else np.squeeze(out, dim)


def reduce_min(x, axis=None, keepdims=False):
    return np.min(x, axis=axis, keepdims=keepdims)


def reduce_prod(x, axis=None, keepdims=False):
    out = np.prod(x, axis=axis, keepdims=keepdims)
    return np.asarray(out, x.dtype if x.dtype.kind == "f" else np.int64)


def reduce_all(x, axis=None, keepdims=False):
    return np.asarray(np.all(x, axis=axis, keepdims=keepdims))


def reduce_any(x, axis=None, keepdims=False):
    return np.asarray(np.any(x, axis=axis, keepdims=keepdims))


def argmin(x, axis=None, keepdims=False):
    # NumPy's argmin stops at the first NaN too, as torch.argmin does.
    return np.argmin(x, axis=axis, keepdims=keepdims)


def take_along_axis(x, indices, axis, keepdims=False):
    idx = indices if keepdims else np.expand_dims(indices, axis)
    out = np.take_along_axis(x, idx, axis=axis)
    return out if keepdims else np.squeeze(out, axis)


def cumsum(x, axis):
    x = np.asarray(x)
    return np.cumsum(x, axis=axis if x.ndim else None,
                     dtype=x.dtype if x.dtype.kind == "f" else np.int64).reshape(x.shape)
