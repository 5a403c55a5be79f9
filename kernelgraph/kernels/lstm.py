"""CPU kernels of ``lstm_cell`` (see kernelgraph/ops/rnn.py): one LSTM step forward, and the
gradient at its gates' pre-activations from the activations the forward returned, for host
arrays.

The gates' products are :func:`.rnn._rnn_preactivation`'s (two BLAS calls and the bias adds
in one compiled call); the activations are NumPy's SIMD ``tanh`` on the whole gate block,
with each sigmoid written as ``0.5 * tanh(0.5 * a) + 0.5`` (the same function, and it never
overflows), because a compiled loop of scalar ``exp``/``tanh`` calls is ~20x slower once
the batch is more than a row (autobatching runs one step of every sequence as one call).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy import ndarray

from . import cpu
from .linalg import _blas_layout
from .rnn import _rnn_preactivation, _tanh_grad_scalar


def check_lstm_shapes(x, h, c, w_ih, w_hh, b_ih, b_hh) -> None:
    """A ValueError unless x (batch, input), h and c (batch, hidden), w_ih (4*hidden,
    input), w_hh (4*hidden, hidden), b_ih and b_hh (4*hidden,): the kernels index without
    bounds checks."""
    if x.ndim == 2 and h.ndim == 2:
        (batch, inputs), hidden = x.shape, h.shape[1]
        rows = 4 * hidden
        if (h.shape[0] == batch and tuple(c.shape) == (batch, hidden)
                and tuple(w_ih.shape) == (rows, inputs) and tuple(w_hh.shape) == (rows, hidden)
                and tuple(b_ih.shape) == tuple(b_hh.shape) == (rows,)):
            return
    raise ValueError("lstm_cell: the inputs' shapes do not fit together")


_SCALES: dict = {}  # (hidden, dtype) -> (scale, shift): 0.5/0.5 for sigmoid gates, 1/0 for g


def _scale_shift(hidden: int, dtype):
    key = (hidden, dtype)
    found = _SCALES.get(key)
    if found is None:
        scale = np.full(4 * hidden, 0.5, dtype)
        scale[2 * hidden:3 * hidden] = 1.0  # gate g is a tanh; i, f and o are sigmoids
        found = _SCALES[key] = (scale, (1.0 - scale).astype(dtype))
    return found


@njit(cache=True)
def _gates_and_cell_state(t, scale, shift, c, out):
    # t = tanh(a * scale) for the pre-activations a: the gates' activations t*scale + shift
    # (sigmoid(v) = 0.5*tanh(0.5*v) + 0.5) into out's gate block, and c' = f*c + i*g.
    batch, hidden = c.shape
    for r in range(batch):
        for k in range(4 * hidden):
            out[r, 2 * hidden + k] = t[r, k] * scale[k] + shift[k]
        for j in range(hidden):
            i, f = out[r, 2 * hidden + j], out[r, 3 * hidden + j]
            out[r, hidden + j] = f * c[r, j] + i * out[r, 4 * hidden + j]


@njit(cache=True)
def _hidden_state(out, hidden):
    # h' = o * tanh(c'), with tanh(c') already in h's columns
    for r in range(out.shape[0]):
        for j in range(hidden):
            out[r, j] *= out[r, 5 * hidden + j]


def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh) -> ndarray:
    """``[h' | c' | i f g o]`` (batch, 6*hidden): ``c' = f*c + i*g``, ``h' = o*tanh(c')``,
    and the gates' activations, which the gradient reads (as PyTorch's fused cell keeps
    them), for 2-D float arrays of one dtype. Six calls: the products and bias adds (one
    compiled call), a scaling and NumPy's ``tanh`` over the gates, a compiled loop for the
    activations and c', NumPy's ``tanh`` over c', and a compiled loop for h'."""
    check_lstm_shapes(x, h, c, w_ih, w_hh, b_ih, b_hh)
    batch, hidden = h.shape
    a = np.empty((batch, 4 * hidden), x.dtype)
    if x.shape[1] == 0 or hidden == 0 or not a.size:  # an empty product: BLAS wants k >= 1
        a[...] = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
    else:
        _rnn_preactivation(_blas_layout(x), _blas_layout(h), _blas_layout(w_ih),
                           _blas_layout(w_hh), b_ih, b_hh, a)
    scale, shift = _scale_shift(hidden, a.dtype)
    np.multiply(a, scale, out=a)
    np.tanh(a, out=a)
    out = np.empty((batch, 6 * hidden), x.dtype)
    _gates_and_cell_state(a, scale, shift, np.ascontiguousarray(c), out)
    np.tanh(out[:, hidden:2 * hidden], out=out[:, :hidden])
    _hidden_state(out, hidden)
    return out


# The ops' own scalar bodies, so that the compiled gradient computes what the gradient rule
# written with ops computes (graphs, GPU arrays), to the bit: each op's result is rounded to
# the arrays' dtype before the next op reads it (_rounded), as an op's output array is.
_tanh_s = njit(cache=True)(cpu._tanh)
_sigmoid_grad_s = njit(cache=True)(cpu._sigmoid_grad)
_tanh_grad_s = _tanh_grad_scalar


@njit(cache=True)
def _rounded(buf, v):
    buf[0] = v
    return buf[0]


@njit(cache=True)
def _pre_grads(g, out, c, da, dc_prev):
    # From the output's gradient [gh | gc | g_i g_f g_g g_o]: the gradient at the gates'
    # pre-activations da, and at the previous cell state; op by op as ops/rnn.py's rule.
    batch, hidden = c.shape
    b = np.empty(1, da.dtype)
    for r in range(batch):
        for j in range(hidden):
            i, f = out[r, 2 * hidden + j], out[r, 3 * hidden + j]
            gt, o = out[r, 4 * hidden + j], out[r, 5 * hidden + j]
            gh = g[r, j]
            t = _rounded(b, _tanh_s(out[r, hidden + j]))
            dc = _rounded(b, g[r, hidden + j] + _rounded(b, _tanh_grad_s(t, _rounded(b, gh * o))))
            da[r, j] = _sigmoid_grad_s(i, _rounded(b, _rounded(b, dc * gt) + g[r, 2 * hidden + j]))
            da[r, hidden + j] = _sigmoid_grad_s(
                f, _rounded(b, _rounded(b, dc * c[r, j]) + g[r, 3 * hidden + j]))
            da[r, 2 * hidden + j] = _tanh_grad_s(
                gt, _rounded(b, _rounded(b, dc * i) + g[r, 4 * hidden + j]))
            da[r, 3 * hidden + j] = _sigmoid_grad_s(
                o, _rounded(b, _rounded(b, gh * t) + g[r, 5 * hidden + j]))
            dc_prev[r, j] = dc * f


def lstm_cell_pre_grads(g: ndarray, out: ndarray, c: ndarray) -> tuple:
    """``(da, dc)``: the gradient at the four gates' pre-activations (batch, 4*hidden) and
    at the previous cell state ``c``, from the gradient ``g`` of ``out`` (both (batch,
    6*hidden), see :func:`lstm_cell`). The products with the weights are the caller's (they
    depend on which inputs want a gradient)."""
    hidden = c.shape[1]
    da = np.empty((c.shape[0], 4 * hidden), out.dtype)
    dc = np.empty(c.shape, out.dtype)
    _pre_grads(np.ascontiguousarray(g), out, np.ascontiguousarray(c), da, dc)
    return da, dc
