"""CPU kernels of ``rnn_tanh_sequence`` (kernelgraph/ops/rnn_sequence.py): a whole Elman RNN
over a padded batch with sequence lengths in one call, and its backward pass in one call.

The forward step is ``rnn_tanh_cell``'s own: the compiled pre-activation on the whole batch,
then NumPy's tanh in place (its SIMD loop; a compiled scalar tanh is many times slower), then
the lengths' mask -- so the values have the bits of the step-by-step loop of
``dynamic_rnn``, which runs that cell and two ``where``. Kept apart from kernels/cpu.py,
whose hash names the static compiler's fused kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .rnn import _rnn_preactivation, _tanh_grad_scalar, rnn_tanh_cell

ndarray = np.ndarray


@njit(cache=True)
def _keep_alive(y, h, out_t, lengths, t):
    """``out_t = y`` and ``h = y`` on the rows whose sequence is still running at step
    ``t`` (all rows when ``lengths`` is empty); ``out_t = 0`` and ``h`` kept on the others."""
    every = lengths.shape[0] == 0
    for i in range(y.shape[0]):
        if every or t < lengths[i]:
            for j in range(y.shape[1]):
                out_t[i, j] = y[i, j]
                h[i, j] = y[i, j]
        else:
            for j in range(y.shape[1]):
                out_t[i, j] = 0.0


def rnn_tanh_sequence(x: ndarray, h0: ndarray, w_ih: ndarray, w_hh: ndarray, b_ih: ndarray,
                      b_hh: ndarray, lengths: ndarray) -> ndarray:
    """(time + 1, batch, hidden): rows ``t < time`` the outputs of step ``t`` (zero past a
    sequence's length), row ``time`` the final states (each sequence's state at its
    length), for x (time, batch, input), h0 (batch, hidden) and the cell's weights, all of
    one float dtype, and ``lengths`` (batch,) ints (empty: every sequence runs every step)."""
    steps, batch = x.shape[0], x.shape[1]
    hidden = w_ih.shape[0]
    out = np.empty((steps + 1, batch, hidden), x.dtype)
    h = out[steps]  # the running state lives where the final state is returned
    h[...] = h0
    lengths = np.ascontiguousarray(lengths, np.int64)
    if out.size == 0:
        return out
    fast = x.shape[2] > 0 and hidden > 0
    x = np.ascontiguousarray(x)
    w_ih, w_hh = np.ascontiguousarray(w_ih), np.ascontiguousarray(w_hh)
    y = np.empty((batch, hidden), x.dtype)
    for t in range(steps):
        if fast:
            _rnn_preactivation(x[t], h, w_ih, w_hh, b_ih, b_hh, y)
            np.tanh(y, out=y)
        else:  # an empty product: the cell's own general path
            y = rnn_tanh_cell(x[t], h.copy(), w_ih, w_hh, b_ih, b_hh)
        _keep_alive(y, h, out[t], lengths, t)
    return out


@njit(cache=True)
def _sequence_backward(g, out, w_hh, lengths, da):
    steps, batch, hidden = out.shape[0] - 1, out.shape[1], out.shape[2]
    every = lengths.shape[0] == 0
    dh = g[steps].copy()
    back = np.empty((batch, hidden), out.dtype)
    for t in range(steps - 1, -1, -1):
        rows = da[t]
        for i in range(batch):
            if every or t < lengths[i]:
                for j in range(hidden):
                    rows[i, j] = _tanh_grad_scalar(out[t, i, j], dh[i, j] + g[t, i, j])
            else:
                for j in range(hidden):
                    rows[i, j] = 0.0
        if batch and hidden:
            np.dot(rows, w_hh, back)
        for i in range(batch):
            if every or t < lengths[i]:
                for j in range(hidden):
                    dh[i, j] = back[i, j]
    da[steps] = dh


def rnn_tanh_sequence_grad(g: ndarray, out: ndarray, w_hh: ndarray,
                           lengths: ndarray) -> ndarray:
    """(time + 1, batch, hidden): rows ``t < time`` the gradient at step ``t``'s
    pre-activation (zero where the sequence had ended), row ``time`` the gradient of the
    initial state, from ``out`` (:func:`rnn_tanh_sequence`'s value) and ``g``, its
    gradient, walking the steps backwards in one compiled call."""
    dt = out.dtype
    da = np.empty(out.shape, dt)
    _sequence_backward(np.ascontiguousarray(g, dt), np.ascontiguousarray(out),
                       np.ascontiguousarray(w_hh, dt), np.ascontiguousarray(lengths, np.int64),
                       da)
    return da
