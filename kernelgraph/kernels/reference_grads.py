"""NumPy references of the ops that are not in NumPy's vocabulary: the gradient helpers
(``tanh_grad``, the conv and pool backward ops, ``gather_grad`` ...), the fused RNN cells,
and the small ops around them (``identity``, ``zeros_like``, ``to_device``, ``const`` ...).

Each is written from the maths, not from the kernels it checks: a convolution's adjoints
as sums over kernel offsets, a pool's backward as an explicit walk over its windows, the
cells from their formulas. Each takes the forward's arguments (``op.reference(*arrays,
**attrs)``, as in :mod:`kernelgraph.kernels.reference`) and is the oracle of the op-card
test (tests/test_op_cards.py); the engine never runs them.
"""

from __future__ import annotations

import numpy as np

from . import reference as R


def _pair(v) -> tuple:
    return (int(v), int(v)) if np.ndim(v) == 0 else tuple(int(x) for x in v)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# -- elementwise gradient helpers ------------------------------------------------------------
def tanh_grad(y, g):
    """d tanh / dx from the output y: g * (1 - y**2)."""
    return g * (1 - y * y)


def sigmoid_grad(y, g):
    """d sigmoid / dx from the output y: g * y * (1 - y)."""
    return g * y * (1 - y)


def relu_grad(x, g):
    """g where x > 0 or x is NaN (PyTorch's), else 0."""
    g = np.asarray(g)
    return np.where(np.less_equal(x, 0), np.zeros_like(g), g)


# -- values that only copy, fill or read a shape ---------------------------------------------
def identity(x):
    return np.array(x)


def zeros_like(x):
    return np.zeros_like(x)


def ones_like(x):
    return np.ones_like(x)


def const(value):
    return np.array(value)


def to_device(x, device):
    """The same values, wherever they are stored."""
    return np.array(x)


def dim_size(x, axis):
    return np.array(np.shape(x)[axis], np.int64)


def output(results, index, count):
    """Item ``index`` of a cond / while_loop node's tuple value."""
    return results.values[index]


# -- shapes and reductions -------------------------------------------------------------------
def reshape_like(x, like):
    return np.reshape(x, np.shape(like))


def matrix_transpose(x):
    return np.swapaxes(x, -1, -2)


def broadcast_like(x, like):
    return np.broadcast_to(x, np.shape(like))


def sum_to_like(g, like):
    return R.sum_to_shape(np.asarray(g), np.shape(like))


def broadcast_reduced(g, like, axis=None, keepdims=False, mean=False):
    """``g``, the result of reducing ``like`` over ``axis``, spread back over like's shape
    (divided by the number of values each reduced, for a mean)."""
    shape = np.shape(like)
    axes = tuple(range(len(shape))) if axis is None else tuple(
        a % len(shape) for a in ((axis,) if np.ndim(axis) == 0 else axis))
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    out = np.broadcast_to(np.reshape(g, kept), shape)
    if mean:
        out = out / max(1, int(np.prod([shape[a] for a in axes])))
    return out


# -- indexing and joining --------------------------------------------------------------------
def _python_index(index) -> tuple:
    """An op's normalized index (ints, None, "..." and (start, stop, step) triples) as a
    Python index; a Python index (slices, Ellipsis) passes through."""
    items = index if isinstance(index, tuple) else (index,)
    return tuple(Ellipsis if isinstance(it, str) and it == "..." else
                 slice(*it) if isinstance(it, tuple) else it for it in items)


def getitem(x, index):
    return np.asarray(x)[_python_index(index)]


def getitem_grad(g, x, index):
    out = np.zeros(np.shape(x), np.asarray(g).dtype)
    out[_python_index(index)] = g
    return out


def gather_grad(g, indices, like, axis=0):
    """Zeros of like's shape, with g's slices added at ``indices`` (repeats add up)."""
    return R.scatter_add(np.asarray(g), indices, np.shape(like), axis % np.ndim(like))


def concat_slice(g, *tensors, index, axis):
    """The part of ``g`` (a concat's gradient) that lies over input ``index``."""
    axis %= np.ndim(g)
    start = sum(np.shape(t)[axis] for t in tensors[:index])
    stop = start + np.shape(tensors[index])[axis]
    return np.take(g, np.arange(start, stop), axis=axis)


def _piece(size, sizes, index) -> slice:
    if np.ndim(sizes) == 0:
        step = size // int(sizes)
        return slice(index * step, (index + 1) * step)
    sizes = [int(s) for s in sizes]
    if -1 in sizes:
        sizes[sizes.index(-1)] = size - (sum(sizes) + 1)
    start = sum(sizes[:index])
    return slice(start, start + sizes[index])


def split_piece(x, sizes, index, axis):
    axis %= np.ndim(x)
    where = [slice(None)] * np.ndim(x)
    where[axis] = _piece(np.shape(x)[axis], sizes, index)
    return np.asarray(x)[tuple(where)]


def split_grad(g, x, sizes, index, axis):
    axis %= np.ndim(x)
    out = np.zeros(np.shape(x), np.asarray(g).dtype)
    where = [slice(None)] * np.ndim(x)
    where[axis] = _piece(np.shape(x)[axis], sizes, index)
    out[tuple(where)] = g
    return out


# -- convolution and pooling: explicit sums over kernel offsets and windows -------------------
def _conv_geometry(x_shape, w_shape, stride, padding, dilation):
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    kh, kw = w_shape[2:]
    hp, wp = x_shape[2] + 2 * ph, x_shape[3] + 2 * pw
    oh = (hp - dh * (kh - 1) - 1) // sh + 1
    ow = (wp - dw * (kw - 1) - 1) // sw + 1
    return (sh, sw), (ph, pw), (dh, dw), (kh, kw), (hp, wp), (oh, ow)


def conv2d_backward_input(g, w, like, stride=1, padding=0, dilation=1, data_format="NCHW"):
    """d conv2d / dx: each output gradient g[n, o, y, x] sent back through every kernel
    offset (i, j) to the input pixel it read, w[o, c, i, j] times; padding cut off."""
    if data_format == "NHWC":
        n, h, w_, c = np.shape(like)
        return conv2d_backward_input(g.transpose(0, 3, 1, 2), w, np.empty((n, c, h, w_)), stride,
                                     padding, dilation).transpose(0, 2, 3, 1)
    shape = np.shape(like)
    (sh, sw), (ph, pw), (dh, dw), (kh, kw), (hp, wp), (oh, ow) = _conv_geometry(
        shape, np.shape(w), stride, padding, dilation)
    dxp = np.zeros((shape[0], shape[1], hp, wp), np.result_type(g, w))
    for i in range(kh):
        for j in range(kw):
            dxp[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                j * dw:j * dw + sw * (ow - 1) + 1:sw] += np.einsum("nohw,oc->nchw", g,
                                                                    w[:, :, i, j])
    return dxp[:, :, ph:ph + shape[2], pw:pw + shape[3]]


def conv2d_backward_filter(x, g, like, stride=1, padding=0, dilation=1, data_format="NCHW"):
    """d conv2d / dw: for each kernel offset (i, j), the products of g with the input pixels
    that offset read, summed over the batch and the output positions."""
    if data_format == "NHWC":
        return conv2d_backward_filter(x.transpose(0, 3, 1, 2), g.transpose(0, 3, 1, 2), like,
                                      stride, padding, dilation)
    (sh, sw), (ph, pw), (dh, dw), (kh, kw), _, (oh, ow) = _conv_geometry(
        np.shape(x), np.shape(like), stride, padding, dilation)
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    dw_ = np.zeros(np.shape(like), np.result_type(x, g))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                       j * dw:j * dw + sw * (ow - 1) + 1:sw]
            dw_[:, :, i, j] = np.einsum("nchw,nohw->oc", patch, g)
    return dw_


def _windows(shape, kernel_size, stride, padding):
    """(output row, output column, [(row, column) of each input pixel in the window, in
    scan order]) of every pool window over an input of ``shape``, padding left out."""
    (kh, kw) = _pair(kernel_size)
    (sh, sw) = _pair(kernel_size if stride is None else stride)
    (ph, pw) = _pair(padding)
    h, w = shape[2], shape[3]
    oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    for y in range(oh):
        for x in range(ow):
            pixels = [(y * sh - ph + i, x * sw - pw + j) for i in range(kh) for j in range(kw)]
            yield y, x, [(r, c) for r, c in pixels if 0 <= r < h and 0 <= c < w]


def _winner(values) -> int:
    """Index of a window's last NaN if it has one, else of its first maximum (PyTorch)."""
    nans = [k for k, v in enumerate(values) if np.isnan(v)]
    return nans[-1] if nans else int(np.argmax(values))


def max_pool2d_backward(g, x, kernel_size, stride=None, padding=0):
    """Each window's gradient added to the input pixel that won the window."""
    x = np.asarray(x)
    out = np.zeros(x.shape, np.asarray(g).dtype)
    for y, col, pixels in _windows(x.shape, kernel_size, stride, padding):
        for n in range(x.shape[0]):
            for c in range(x.shape[1]):
                r, s = pixels[_winner([x[n, c, p, q] for p, q in pixels])]
                out[n, c, r, s] += g[n, c, y, col]
    return out


def avg_pool2d_backward(g, like, kernel_size, stride=None, padding=0):
    """Each window's gradient shared evenly by the whole window, padding included (the
    mean counts padding: PyTorch's count_include_pad=True), so padding's share is lost."""
    shape = np.shape(like)
    share = 1.0 / np.prod(_pair(kernel_size))
    out = np.zeros(shape, np.asarray(g).dtype)
    for y, col, pixels in _windows(shape, kernel_size, stride, padding):
        for r, s in pixels:
            out[:, :, r, s] += g[:, :, y, col] * share
    return out


# -- nn and the recurrent cells --------------------------------------------------------------
def softmax_cross_entropy_grad(logits, labels, g):
    """(softmax(logits) - one_hot(labels)) * g per row."""
    p = R.softmax(np.asarray(logits), axis=-1)
    p[np.arange(len(labels)), labels] -= 1
    return p * np.reshape(g, (-1, 1))


def rnn_tanh_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    """tanh(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)."""
    return np.tanh(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)


def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    """[h' | c' | i f g o] of one LSTM step, PyTorch's gates i, f, g, o."""
    i, f, g, o = np.split(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, axis=1)
    i, f, g, o = _sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)
    c_new = f * c + i * g
    return np.concatenate([o * np.tanh(c_new), c_new, i, f, g, o], axis=1)


def put_along_axis(g, indices, like, axis, keepdims=False):
    out = np.zeros(np.shape(like), np.asarray(g).dtype)
    idx = indices if indices.ndim == out.ndim else np.expand_dims(indices, axis)
    gg = np.asarray(g) if np.ndim(g) == out.ndim else np.expand_dims(g, axis)
    np.put_along_axis(out, idx, gg, axis=axis)
    return out
