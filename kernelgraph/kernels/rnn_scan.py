"""Compiled kernels of ``rnn_tanh_scan`` (kernelgraph/ops/rnn_scan.py), the recurrence of RNN
cells that ``kg.autobatch`` runs as one node. Kept apart from kernels/cpu.py, whose hash
names the static compiler's fused kernels."""

from __future__ import annotations

import numpy as np
from numba import njit

from .rnn import _rnn_cell_input_grads, _rnn_preactivation


@njit(cache=True)
def rnn_scan_preactivation(x, out, h0, prev, w_ih, w_hh, b_ih, b_hh, a, b, first):
    """Rows ``a:b`` of a scan's output before their tanh: rnn_tanh_cell's own compiled
    pre-activation (so the same bits) on x's rows and the states they continue -- ``h0``
    for the first step (``a == 0``), else the rows of ``out`` that
    ``prev[a - first:b - first]`` names, gathered here rather than by NumPy."""
    if a == 0:
        h = h0
    else:
        h = np.empty((b - a, out.shape[1]), out.dtype)
        for i in range(b - a):
            h[i] = out[prev[a - first + i]]
    _rnn_preactivation(x[a:b], h, w_ih, w_hh, b_ih, b_hh, out[a:b])


@njit(cache=True)
def rnn_scan_backward(reached, out, w_ih, w_hh, prev, offsets, need_x, need_h0, da, dx, dh0):
    """A scan's gradient, every step in one call, last step first: rnn_tanh_cell's own
    compiled input gradients per step -- ``da`` at the pre-activation, ``dx`` when
    ``need_x`` -- and ``da @ w_hh`` added to the rows the step continues (``reached``, the
    output's gradient, is updated in place), or written to ``dh0`` for the first step."""
    first = offsets[1]
    dh = np.empty((first, out.shape[1]), out.dtype)  # (no step has more rows than the first)
    for k in range(len(offsets) - 2, -1, -1):
        a, b = offsets[k], offsets[k + 1]
        rows = da[a:b]
        if k:
            _rnn_cell_input_grads(reached[a:b], out[a:b], w_ih, w_hh, need_x, True, rows,
                                  dx[a:b] if need_x else rows, dh[:b - a])
            for i in range(b - a):
                reached[prev[a - first + i]] += dh[i]
        else:
            _rnn_cell_input_grads(reached[a:b], out[a:b], w_ih, w_hh, need_x, need_h0, rows,
                                  dx[a:b] if need_x else rows, dh0 if need_h0 else rows)
