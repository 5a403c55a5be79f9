"""Compiled kernels of ``rnn_tanh_scan`` (kernelgraph/ops/rnn_scan.py), the recurrence of RNN
cells that ``kg.autobatch`` runs as one node. Kept apart from kernels/cpu.py, whose hash
names the static compiler's fused kernels."""

from __future__ import annotations

import numpy as np
from numba import njit

from .cpu import _tanh_grad_scalar


@njit(cache=True)
def rnn_scan_preactivation(x, out, h0, prev, w_ih, w_hh, b_ih, b_hh, a, b, first):
    """Rows ``a:b`` of a scan's output before their tanh, as :func:`_rnn_preactivation`
    computes them (the same products and adds, so the same bits): from x's rows and the
    states they continue -- ``h0`` for the first step (``a == 0``), else the rows of
    ``out`` that ``prev[a - first:b - first]`` names, gathered here rather than by NumPy."""
    if a == 0:
        h = h0
    else:
        h = np.empty((b - a, out.shape[1]), out.dtype)
        for i in range(b - a):
            h[i] = out[prev[a - first + i]]
    rows = out[a:b]
    np.dot(x[a:b], w_ih.T, rows)
    hw = np.dot(h, w_hh.T)
    for i in range(b - a):
        for j in range(rows.shape[1]):
            rows[i, j] = rows[i, j] + b_ih[j] + hw[i, j] + b_hh[j]


@njit(cache=True)
def rnn_scan_backward(reached, out, w_ih, w_hh, prev, offsets, need_x, need_h0, da, dx, dh0):
    """A scan's gradient, every step in one call, last step first: each step's gradient at
    the pre-activation ``da`` (:func:`_rnn_cell_input_grads`' formula), ``dx`` when
    ``need_x``, and ``da @ w_hh`` added to the rows the step continues (``reached``, the
    output's gradient, is updated in place), or written to ``dh0`` for the first step."""
    first = offsets[1]
    hidden = out.shape[1]
    for k in range(len(offsets) - 2, -1, -1):
        a, b = offsets[k], offsets[k + 1]
        for i in range(a, b):
            for j in range(hidden):
                da[i, j] = _tanh_grad_scalar(out[i, j], reached[i, j])
        if need_x:
            np.dot(da[a:b], w_ih, dx[a:b])
        if k:
            dh = np.dot(da[a:b], w_hh)
            for i in range(b - a):
                row = prev[a - first + i]
                for j in range(hidden):
                    reached[row, j] += dh[i, j]
        elif need_h0:
            np.dot(da[a:b], w_hh, dh0)
