"""CUDA ``rnn_tanh_cell`` and ``lstm_cell``: the two products by the package's GEMM (reading
the weights transposed in place), then one kernel for the adds and the activations, in the
CPU kernels' order (``x w_ih^T + b_ih + h w_hh^T + b_hh``)."""

from __future__ import annotations

import math

from numba import cuda

from ..lstm import check_lstm_shapes
from ..rnn import check_cell_shapes
from . import core, launcher
from .linalg import gemm


@cuda.jit
def _add_biases_tanh(xw, hw, b_ih, b_hh, hidden):
    start = cuda.grid(1)
    for i in range(start, xw.size, cuda.gridsize(1)):
        j = i % hidden
        xw[i] = math.tanh(xw[i] + b_ih[j] + hw[i] + b_hh[j])


def rnn_tanh_cell(x, h, w_ih, w_hh, b_ih, b_hh, dt):
    """``tanh(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)`` in ``dt``, the float dtype the op
    promoted the inputs' dtypes to."""
    values = (x, h, w_ih, w_hh, b_ih, b_hh)
    check_cell_shapes(*values)
    x, h, w_ih, w_hh, b_ih, b_hh = (core.astype(v, dt) for v in values)
    out = gemm(x, w_ih, trans_b=True)  # a new C-contiguous (batch, hidden) array
    if out.size:
        hw = gemm(h, w_hh, trans_b=True)
        blocks, threads = core.launch(out.size)
        launcher.launch(_add_biases_tanh, blocks, threads, core.flat(out), core.flat(hw), b_ih,
                        b_hh, out.shape[1])
    return out


@cuda.jit
def _lstm_step(xw, hw, b_ih, b_hh, c, out, hidden):
    # xw, hw: (batch, 4*hidden) products; one thread per (row, unit): its four gates
    start = cuda.grid(1)
    for k in range(start, c.size, cuda.gridsize(1)):
        r, j = k // hidden, k % hidden
        i = _sigmoid(_gate(xw, hw, b_ih, b_hh, r, j))
        f = _sigmoid(_gate(xw, hw, b_ih, b_hh, r, hidden + j))
        g = math.tanh(_gate(xw, hw, b_ih, b_hh, r, 2 * hidden + j))
        o = _sigmoid(_gate(xw, hw, b_ih, b_hh, r, 3 * hidden + j))
        c_new = f * c[r, j] + i * g
        out[r, hidden + j] = c_new
        out[r, j] = o * math.tanh(c_new)
        out[r, 2 * hidden + j] = i  # the activations, for the gradient
        out[r, 3 * hidden + j] = f
        out[r, 4 * hidden + j] = g
        out[r, 5 * hidden + j] = o


@cuda.jit(device=True)
def _gate(xw, hw, b_ih, b_hh, r, col):
    return xw[r, col] + b_ih[col] + hw[r, col] + b_hh[col]


@cuda.jit(device=True)
def _sigmoid(v):  # the CPU kernel's sigmoid: 0.5 * tanh(0.5 * v) + 0.5, which never overflows
    return 0.5 * math.tanh(0.5 * v) + 0.5


def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh, dt):
    """``[h' | c' | i f g o]`` of one LSTM step in ``dt``, the float dtype the op promoted
    the inputs' dtypes to."""
    values = (x, h, c, w_ih, w_hh, b_ih, b_hh)
    check_lstm_shapes(*values)
    x, h, c, w_ih, w_hh, b_ih, b_hh = (core.astype(v, dt) for v in values)
    hidden = h.shape[1]
    out = cuda.device_array((x.shape[0], 6 * hidden), dt)
    if c.size:
        xw, hw = gemm(x, w_ih, trans_b=True), gemm(h, w_hh, trans_b=True)
        blocks, threads = core.launch(c.size)
        launcher.launch(_lstm_step, blocks, threads, xw, hw, b_ih, b_hh, c, out, hidden)
    return out

