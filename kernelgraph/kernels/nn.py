"""CPU ``softmax``, ``log_softmax`` and sparse softmax cross-entropy (loss and gradient),
row by row in compiled loops, numerically stable (the row's maximum subtracted first)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..shapes import normalize_axes

ndarray = np.ndarray


@njit(cache=True)
def _softmax_rows(x, out, log):
    for i in range(x.shape[0]):
        m = x[i, 0]
        for k in range(1, x.shape[1]):
            if x[i, k] > m:
                m = x[i, k]
        s = 0.0
        for k in range(x.shape[1]):
            s += math.exp(x[i, k] - m)
        if log:
            ls = math.log(s)
            for k in range(x.shape[1]):
                out[i, k] = x[i, k] - m - ls
        else:
            for k in range(x.shape[1]):
                out[i, k] = math.exp(x[i, k] - m) / s


def _rows_last(x: ndarray, axis: int):
    axis = normalize_axes(axis, x.ndim)[0]
    moved = np.moveaxis(x, axis, -1)
    return np.ascontiguousarray(moved).reshape(-1, x.shape[axis]), moved.shape, axis


def _softmax_like(x: ndarray, axis: int, log: bool) -> ndarray:
    if x.ndim == 0:
        raise ValueError("softmax needs a tensor of rank >= 1")
    rows, moved_shape, ax = _rows_last(x, axis)
    out = np.empty_like(rows)
    if rows.size:
        _softmax_rows(rows, out, log)
    return np.moveaxis(out.reshape(moved_shape), -1, ax)


def softmax(x: ndarray, axis: int = -1) -> ndarray:
    return _softmax_like(x, axis, False)


def log_softmax(x: ndarray, axis: int = -1) -> ndarray:
    return _softmax_like(x, axis, True)


@njit(cache=True)
def _sparse_xent_rows(logits, labels, loss, grad, want_grad):
    """Per-row -log softmax(logits)[label]; grad = softmax - onehot. Returns a bad label or -1."""
    c = logits.shape[1]
    for i in range(logits.shape[0]):
        lab = labels[i]
        if lab < 0 or lab >= c:
            return i
        m = logits[i, 0]
        for k in range(1, c):
            if logits[i, k] > m:
                m = logits[i, k]
        s = 0.0
        for k in range(c):
            s += math.exp(logits[i, k] - m)
        ls = math.log(s)
        loss[i] = ls + m - logits[i, lab]
        if want_grad:
            for k in range(c):
                grad[i, k] = math.exp(logits[i, k] - m - ls)
            grad[i, lab] -= 1.0
    return -1


def no_rows(logits, labels) -> bool:
    """Whether ``logits`` is a batch of no rows with its (0,) integer labels: its loss is
    empty, and its gradient too, even over no classes (PyTorch's; only labels need a class
    to fall in)."""
    return (len(logits.shape) == 2 and logits.shape[0] == 0 and tuple(labels.shape) == (0,)
            and labels.dtype.kind in "iu")


def _check_xent(logits: ndarray, labels: ndarray):
    if logits.ndim != 2:
        raise ValueError(f"logits must have shape (batch, classes), got {logits.shape}")
    if labels.shape != logits.shape[:1]:
        raise ValueError(f"labels must have shape ({logits.shape[0]},) to match logits "
                         f"{logits.shape}, got {labels.shape}")
    if labels.dtype.kind not in "iu":
        raise TypeError(f"labels must be integers (class indices), got {labels.dtype}")
    if logits.shape[1] == 0:
        raise ValueError("logits must have at least one class")


@njit(cache=True)
def _sparse_xent_grad_rows(logits, labels, g, grad):
    """(softmax(logits) - one_hot(labels)) * g[:, None] row by row; -1, or the first row
    whose label is out of range. Each value is rounded to the logits' dtype before it is
    scaled, exactly as computing the gradient and then multiplying by g would."""
    c = logits.shape[1]
    for i in range(logits.shape[0]):
        lab = labels[i]
        if lab < 0 or lab >= c:
            return i
        m = logits[i, 0]
        for k in range(1, c):
            if logits[i, k] > m:
                m = logits[i, k]
        s = 0.0
        for k in range(c):
            s += math.exp(logits[i, k] - m)
        ls = math.log(s)
        for k in range(c):
            grad[i, k] = math.exp(logits[i, k] - m - ls)
        grad[i, lab] -= 1.0
        for k in range(c):
            grad[i, k] *= g[i]
    return -1


def sparse_softmax_cross_entropy_grad(logits: ndarray, labels: ndarray, g: ndarray) -> ndarray:
    """The gradient of the per-row loss scaled by the incoming gradient ``g`` (batch,)."""
    _check_xent(logits, labels)
    logits = np.ascontiguousarray(logits)
    if labels.dtype != np.int64:
        labels = labels.astype(np.int64)
    g = np.asarray(g)
    if g.shape != logits.shape[:1] or g.dtype != logits.dtype:
        # Any other g broadcasts as NumPy would against (batch, 1), possibly adding rows.
        _, grad = sparse_softmax_cross_entropy(logits, labels, want_grad=True)
        return np.multiply(grad, np.reshape(g, (-1, 1)), dtype=grad.dtype)
    grad = np.empty_like(logits)
    bad = _sparse_xent_grad_rows(logits, labels, g, grad)
    if bad >= 0:
        raise ValueError(f"Received a label value of {labels[bad]} which is outside the valid "
                         f"range of [0, {logits.shape[1]}) (row {bad})")
    return grad


def sparse_softmax_cross_entropy(logits, labels, want_grad=False):
    _check_xent(logits, labels)
    logits = np.ascontiguousarray(logits)
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    loss = np.empty(logits.shape[0], logits.dtype)
    grad = np.empty_like(logits) if want_grad else np.empty((0, 0), logits.dtype)
    bad = _sparse_xent_rows(logits, labels, loss, grad, want_grad)
    if bad >= 0:
        raise ValueError(f"Received a label value of {labels[bad]} which is outside the valid "
                         f"range of [0, {logits.shape[1]}) (row {bad})")
    return (loss, grad) if want_grad else loss
