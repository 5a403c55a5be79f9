"""CPU ``rnn_tanh_cell``: one Elman RNN step as one compiled call (two BLAS products and the
bias adds), and its gradients in one call, with the arithmetic of the op's gradient rule."""

from __future__ import annotations

import numpy as np
from numba import njit

from .cpu import _tanh_grad
from .linalg import _blas_layout
from .reduce import _sum_cols

ndarray = np.ndarray


def check_cell_shapes(x, h, w_ih, w_hh, b_ih, b_hh) -> None:
    """Eager calls skip the op's shape rule, and the kernels index the biases by the hidden
    unit without bounds checks: a ValueError unless x (batch, input), h (batch, hidden),
    w_ih (hidden, input), w_hh (hidden, hidden), b_ih and b_hh (hidden,)."""
    if x.ndim == 2 and w_ih.ndim == 2:
        (batch, inputs), hidden = x.shape, w_ih.shape[0]
        if (tuple(h.shape) == (batch, hidden) and tuple(w_ih.shape) == (hidden, inputs)
                and tuple(w_hh.shape) == (hidden, hidden)
                and tuple(b_ih.shape) == tuple(b_hh.shape) == (hidden,)):
            return
    raise ValueError("rnn_tanh_cell: the inputs' shapes do not fit together")


@njit(cache=True)
def _rnn_preactivation(x, h, w_ih, w_hh, b_ih, b_hh, out):
    np.dot(x, w_ih.T, out)  # BLAS reads the transposed weights in place (its transpose flag)
    hw = np.dot(h, w_hh.T)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = out[i, j] + b_ih[j] + hw[i, j] + b_hh[j]


def rnn_tanh_cell(x: ndarray, h: ndarray, w_ih: ndarray, w_hh: ndarray, b_ih: ndarray,
                  b_hh: ndarray) -> ndarray:
    """``tanh(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)`` for 2-D float ``x`` (batch, input)
    and ``h`` (batch, hidden) of one dtype: one compiled call for the two BLAS products and
    the adds (the per-step cost of an eager RNN is the number of calls, not the
    arithmetic), then NumPy's tanh in place -- its SIMD loop is ~20x faster than a compiled
    loop of scalar ``math.tanh`` calls, which made the tanh most of a batch-32 step."""
    check_cell_shapes(x, h, w_ih, w_hh, b_ih, b_hh)
    out = np.empty((x.shape[0], w_ih.shape[0]), x.dtype)
    if out.size == 0:
        return out
    if x.shape[1] == 0 or h.shape[1] == 0:  # an empty product: BLAS wants k >= 1
        return np.tanh(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh).astype(x.dtype)
    _rnn_preactivation(_blas_layout(x), _blas_layout(h), _blas_layout(w_ih),
                       _blas_layout(w_hh), b_ih, b_hh, out)
    return np.tanh(out, out=out)


_tanh_grad_scalar = njit(cache=True)(_tanh_grad)  # the tanh_grad ufunc's body, same typing


@njit(cache=True)
def _rnn_cell_input_grads(g, y, w_ih, w_hh, need_x, need_h, da, dx, dh):
    # Writes into arrays the caller made: a compiled function that returns new arrays pays
    # for boxing each of them, a quarter of this call's time at an RNN step's sizes.
    batch, hidden = y.shape
    for i in range(batch):
        for j in range(hidden):
            da[i, j] = _tanh_grad_scalar(y[i, j], g[i, j])
    if need_x:
        np.dot(da, w_ih, dx)
    if need_h:
        np.dot(da, w_hh, dh)


@njit(cache=True)
def _rnn_cell_backward(g, y, x, h, w_ih, w_hh, need_x, need_h, need_w, need_b):
    batch, hidden = y.shape
    da = np.empty((batch, hidden), y.dtype)
    dx = np.empty((batch, w_ih.shape[1] if need_x else 0), y.dtype)
    dh = np.empty((batch, hidden if need_h else 0), y.dtype)
    _rnn_cell_input_grads(g, y, w_ih, w_hh, need_x, need_h, da, dx, dh)
    dw_ih = np.empty((hidden if need_w else 0, x.shape[1]), y.dtype)
    dw_hh = np.empty((hidden if need_w else 0, hidden), y.dtype)
    if need_w:
        np.dot(da.T, x, dw_ih)  # da.T is F-ordered: BLAS's transpose flag, as matmul's call
        np.dot(da.T, h, dw_hh)
    acc = np.zeros(hidden if need_b else 0, np.float64)
    if need_b:
        _sum_cols(da, acc)  # reduce_sum's column sum: float64, rows in order
    return dx, dh, dw_ih, dw_hh, acc.astype(y.dtype)


def rnn_tanh_cell_grad(g: ndarray, y: ndarray, x: ndarray, h: ndarray, w_ih: ndarray,
                       w_hh: ndarray, needs) -> tuple:
    """The gradients of :func:`rnn_tanh_cell` w.r.t. (x, h, w_ih, w_hh, b_ih, b_hh), None
    where ``needs`` says no, from the output ``y`` and its gradient ``g`` (2-D float arrays
    of one dtype, no empty dim): one compiled call doing what the op's gradient rule does
    with five ops (tanh_grad, three BLAS products, a column sum), with the same arithmetic
    in the same order, so the same bits. Eager ``backward()`` runs it once per RNN step when
    a weight is not a leaf (leaf weights go to sinks: :func:`rnn_tanh_cell_input_grads`)."""
    need_w, need_b = needs[2] or needs[3], needs[4] or needs[5]
    dx, dh, dw_ih, dw_hh, db = _rnn_cell_backward(
        _blas_layout(g), y, _blas_layout(x), _blas_layout(h), _blas_layout(w_ih),
        _blas_layout(w_hh), bool(needs[0]), bool(needs[1]), bool(need_w), bool(need_b))
    return (dx if needs[0] else None, dh if needs[1] else None,
            dw_ih if needs[2] else None, dw_hh if needs[3] else None,
            db if needs[4] else None, db if needs[5] else None)


def rnn_tanh_cell_input_grads(g: ndarray, y: ndarray, w_ih: ndarray, w_hh: ndarray,
                              need_x: bool, need_h: bool) -> tuple:
    """``(da, dx, dh)`` of :func:`rnn_tanh_cell_grad` (dx, dh None when not needed), where
    ``da = g * (1 - y**2)`` is the gradient at the pre-activation: for a caller that sums
    the weights' gradients itself, from ``da`` and the inputs (ops/products.py)."""
    batch, hidden = y.shape
    da = np.empty((batch, hidden), y.dtype)
    dx = np.empty((batch, w_ih.shape[1]), y.dtype) if need_x else None
    dh = np.empty((batch, hidden), y.dtype) if need_h else None
    _rnn_cell_input_grads(_blas_layout(g), y, _blas_layout(w_ih), _blas_layout(w_hh),
                          need_x, need_h, da, da if dx is None else dx,
                          da if dh is None else dh)  # (da: a stand-in never written)
    return da, dx, dh

