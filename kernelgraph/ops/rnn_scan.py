"""``rnn_tanh_scan``: many steps of ``rnn_tanh_cell`` as ONE node -- how ``kg.autobatch``
runs a recurrence it found in per-sample code (a cell whose state is the previous step's
output, step after step), as cuDNN runs a whole RNN layer.

Not a public op (it is not in the registry, and neither static graphs nor GPUs see it):
autobatching builds it from cell calls that it has already checked. Its rows are the cells'
rows, step by step: step 0's ``steps[0]`` rows first, starting from the states ``h0``; each
row of a later step continues the row ``prev`` names (a row of the output), so a step can
have fewer rows than the one before (sequences that ended). Each step computes exactly what
``rnn_tanh_cell`` computes on that step's rows -- the same compiled calls
(kernels/rnn_scan.py calls the cell's own) and the same NumPy tanh -- so the values and the
input gradients have the same bits as the step-by-step batched run.

The gradient walks the steps backwards in one rule: each step's gradient at the
pre-activation, ``da``, from what reached the step's rows (the user's loss, and the next
step's ``da @ w_hh``); the weights' gradients are then one product over all the steps
(``concat(da).T @ x``), handed to eager mode's sinks like the cell's (ops/products.py).

>>> import numpy as np
>>> x = np.ones((3, 2))                                   # step 0: 2 rows, step 1: 1 row
>>> h0 = np.zeros((2, 3))
>>> w_ih, w_hh, b = np.full((3, 2), 0.5), np.eye(3), np.zeros(3)
>>> out = rnn_tanh_scan.forward(x, h0, w_ih, w_hh, b, b, np.array([1]), steps=(2, 1))
>>> out.round(4).tolist()                                 # row 2 continues row 1
[[0.7616, 0.7616, 0.7616], [0.7616, 0.7616, 0.7616], [0.9427, 0.9427, 0.9427]]
"""

from __future__ import annotations

import numpy as np
from numpy import ndarray

from ..kernels.linalg import _blas_layout
from ..kernels.rnn_scan import rnn_scan_backward, rnn_scan_preactivation
from .elementwise import add, tanh_grad
from .indexing import gather, gather_grad, getitem
from .join import concat
from .linalg import matmul
from .products import takes_sinks
from .registry import Op
from .rnn import weight_grads


def _offsets(steps) -> list:
    out = [0]
    for n in steps:
        out.append(out[-1] + n)
    return out


def _forward(x, h0, w_ih, w_hh, b_ih, b_hh, prev, *, steps):
    x, h0, w_ih, w_hh = (_blas_layout(v) for v in (x, h0, w_ih, w_hh))
    prev = np.asarray(prev, np.int64)
    out = np.empty((x.shape[0], w_ih.shape[0]), x.dtype)
    offsets = _offsets(steps)
    for a, b in zip(offsets, offsets[1:]):
        rnn_scan_preactivation(x, out, h0, prev, w_ih, w_hh, b_ih, b_hh, a, b, steps[0])
        rows = out[a:b]
        np.tanh(rows, out=rows)  # NumPy's SIMD tanh, as rnn_tanh_cell's
    return out


def _infer(shapes_, dtypes, attrs):
    sx, sh, swi = shapes_[0], shapes_[1], shapes_[2]
    steps = attrs["steps"]
    if sx[0] != sum(steps) or sh[0] != steps[0] or shapes_[6][0] != sum(steps[1:]):
        raise ValueError("rnn_tanh_scan: the rows do not add up to the steps")
    return (sx[0], swi[0]), dtypes[0]


@takes_sinks
def _grad(g, out, needs, attrs, x, h0, w_ih, w_hh, b_ih, b_hh, prev):
    steps = attrs["steps"]
    host = all(type(v) is ndarray for v in (g, out, x, h0, w_ih, w_hh)) and \
        g.dtype == out.dtype and len(steps) > 1
    if host:  # eager backward on host arrays: every step in one compiled call
        dt = out.dtype  # (fresh C-ordered arrays: h0 may be a broadcast view)
        da = np.empty(out.shape, dt)
        dx = np.empty(x.shape if needs[0] else (0, x.shape[1]), dt)
        dh0 = np.empty(h0.shape if needs[1] else (0, out.shape[1]), dt)
        rnn_scan_backward(np.array(g, dtype=dt, order="C"), out, _blas_layout(w_ih),
                          _blas_layout(w_hh), np.asarray(prev, np.int64),
                          np.array(_offsets(steps), np.int64), bool(needs[0]), bool(needs[1]),
                          da, dx, dh0)
        h_before = np.concatenate([h0, out[prev]]) if needs[3] else None
    else:  # a differentiable backward: the same formula in ops, step by step
        da, dx, dh0, h_before = _graph_grads(g, out, needs, steps, x, h0, w_ih, w_hh, prev)
    grads = [dx if needs[0] else None, dh0 if needs[1] else None,
             *weight_grads(da, x, h_before, needs[2:6], host)]
    return (*grads, None)  # (prev: row numbers, no gradient)


def _graph_grads(g, out, needs, steps, x, h0, w_ih, w_hh, prev):
    """(da, dx, dh0, the states each row started from) with ops, for a gradient that is
    itself differentiated: per step, the gradient that reached its rows (the caller's
    and the next step's ``da @ w_hh``, scattered onto the rows it continues)."""
    offsets, first = _offsets(steps), steps[0]
    prev = np.asarray(prev, np.int64)
    das, carry = [None] * len(steps), None
    dh0 = None
    for k in range(len(steps) - 1, -1, -1):
        a, b = offsets[k], offsets[k + 1]
        reached = getitem(g, index=((a, b, None),))
        if carry is not None:
            reached = add(reached, carry)
        das[k] = tanh_grad(getitem(out, index=((a, b, None),)), reached)
        if k:  # onto step k-1's rows (a row continues a row of the step before it)
            below = offsets[k - 1]
            carry = gather_grad(matmul(das[k], w_hh), prev[a - first:b - first] - below,
                                getitem(out, index=((below, a, None),)))
        elif needs[1]:
            dh0 = matmul(das[0], w_hh)
    da = concat(das, axis=0) if len(das) > 1 else das[0]
    dx = matmul(da, w_ih) if needs[0] else None
    h_before = concat([h0, gather(out, prev)], axis=0) if needs[3] else None
    return da, dx, dh0, h_before


rnn_tanh_scan = Op(
    "rnn_tanh_scan", _forward, _infer, _grad, attr_names=("steps",), inputs=7,
    doc="Steps of rnn_tanh_cell over rows continuing earlier rows (kg.autobatch's "
        "recurrences): x (rows, input), h0 (steps[0], hidden), the cell's weights, prev "
        "(rows - steps[0],) the output row each later row continues; steps: rows a step.",
    saves=("out", 0, 1, 2, 3, 6))
