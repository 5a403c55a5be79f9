"""``rnn_tanh_cell`` and ``lstm_cell``: one step of an Elman RNN or of an LSTM as ONE op
(PyTorch's ``_VF.rnn_tanh_cell`` and ``_VF.lstm_cell``).

``h' = tanh(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)`` written with the public ops is eight
nodes a step (two transposes, two products, three adds, a tanh): eight Python dispatches
forward and eight gradient rules backward, for a few thousand flops; an LSTM step is about
twenty. An eager RNN run per sample pays that per step, so ``kg.nn.RNNCell`` and
``kg.nn.LSTMCell`` call these ops instead: one node forward, one gradient rule backward, in
both modes (the static ``dynamic_rnn`` loop body and the autobatched per-sample code use
them too, so every mode computes the same bits). ``lstm_cell`` returns
``[h' | c' | the four gates' activations]``: the gradient reads the gates from the output,
as PyTorch's fused cell keeps them, instead of computing them again.

>>> import numpy as np
>>> import kernelgraph as kg
>>> x, h = np.ones((1, 2), np.float32), np.zeros((1, 3), np.float32)
>>> w_ih, w_hh = np.full((3, 2), 0.5, np.float32), np.eye(3, dtype=np.float32)
>>> b = np.zeros(3, np.float32)
>>> kg.ops.rnn_tanh_cell(x, h, w_ih, w_hh, b, b).round(4)
array([[0.7616, 0.7616, 0.7616]], dtype=float32)
"""

from __future__ import annotations

from numpy import ndarray

from .. import dtypes as D
from ..errors import ShapeError
from ..graph import shape_str
from ..kernels import lstm
from ..kernels import reference_grads as RG
from ..kernels import rnn as K
from ..kernels.linalg import BLAS_DTYPES
from .elementwise import _floating, _to, add, mul, sigmoid_grad, tanh, tanh_grad
from .join import concat, split
from .linalg import matmul
from .products import Sink, takes_sinks
from .reduce import sum as reduce_sum
from .registry import define
from .shape import matrix_transpose

_INPUTS = ("x", "h", "w_ih", "w_hh", "b_ih", "b_hh")


def _dtype(dtypes):
    dt = dtypes[0]
    for d in dtypes[1:]:
        dt = D.promote(dt, d)
    return _floating(D.as_dtype(dt))


def _cell_forward(x, h, w_ih, w_hh, b_ih, b_hh):
    dt = x.dtype
    if dt.kind != "f" or not (h.dtype == w_ih.dtype == w_hh.dtype == b_ih.dtype == b_hh.dtype
                              == dt):  # mixed dtypes: promote (the common case skips this)
        values = (x, h, w_ih, w_hh, b_ih, b_hh)
        dt = _dtype([v.dtype for v in values])
        x, h, w_ih, w_hh, b_ih, b_hh = (_to(v, dt) for v in values)
    return K.rnn_tanh_cell(x, h, w_ih, w_hh, b_ih, b_hh)


def _cell_infer(shapes_, dtypes, attrs):
    if len(shapes_) != 6:
        raise TypeError(f"rnn_tanh_cell takes 6 inputs ({', '.join(_INPUTS)}), got "
                        f"{len(shapes_)}")
    for name, s, rank in zip(_INPUTS, shapes_, (2, 2, 2, 2, 1, 1)):
        if s is not None and len(s) != rank:
            raise ShapeError(f"rnn_tanh_cell: {name} must have rank {rank}, got shape "
                             f"{shape_str(s)}")
    sx, sh, swi, swh, sbi, sbh = shapes_

    def dim(s, i):
        return None if s is None else s[i]

    batch = _same("batch", (("x", dim(sx, 0)), ("h", dim(sh, 0))))
    hidden = _same("hidden size", (("h", dim(sh, 1)), ("w_ih", dim(swi, 0)),
                                   ("w_hh", dim(swh, 0)), ("w_hh", dim(swh, 1)),
                                   ("b_ih", dim(sbi, 0)), ("b_hh", dim(sbh, 0))))
    _same("input size", (("x", dim(sx, 1)), ("w_ih", dim(swi, 1))))
    return (batch, hidden), _dtype(dtypes)


def _same(what, named_dims, op="rnn_tanh_cell"):
    """The one known value among ``named_dims`` ((name, dim or None) pairs), or None; a
    ShapeError naming every input when two known values differ."""
    known = [(n, d) for n, d in named_dims if d is not None]
    if len({d for _, d in known}) > 1:
        raise ShapeError(f"{op}: the {what} differs between inputs: "
                         + ", ".join(f"{n} {d}" for n, d in known))
    return known[0][1] if known else None


@takes_sinks
def _cell_grad(g, out, needs, attrs, x, h, w_ih, w_hh, b_ih, b_hh):
    if _one_call(g, out, x, h, w_ih, w_hh):  # eager backward: the same bits in one call
        w_ih_sink, w_hh_sink, b_ih_sink, b_hh_sink = needs[2:]
        for n in needs[2:]:
            if n and type(n) is not Sink:
                return K.rnn_tanh_cell_grad(g, out, x, h, w_ih, w_hh, needs)
        # Leaf weights: their gradients over all the steps are summed as one product when
        # backward() ends (see ops/products.py), not computed and added step by step.
        da, dx, dh = K.rnn_tanh_cell_input_grads(g, out, w_ih, w_hh, bool(needs[0]),
                                                   bool(needs[1]))
        if w_ih_sink:
            w_ih_sink.add_product(da, x)
        if w_hh_sink:
            w_hh_sink.add_product(da, h)
        if b_ih_sink:
            b_ih_sink.add_column_sums(da)
        if b_hh_sink:
            b_hh_sink.add_column_sums(da)
        return dx, dh, None, None, None, None
    da = tanh_grad(out, g)  # the gradient at the pre-activation, shared by every input
    dat = matrix_transpose(da) if needs[2] or needs[3] else None
    db = reduce_sum(da, axis=0) if needs[4] or needs[5] else None
    return (matmul(da, w_ih) if needs[0] else None,
            matmul(da, w_hh) if needs[1] else None,
            matmul(dat, x) if needs[2] else None,
            matmul(dat, h) if needs[3] else None,
            db if needs[4] else None,
            db if needs[5] else None)


def _one_call(*values) -> bool:
    """Whether a cell's gradient can run as one compiled call
    (:func:`kernels.rnn.rnn_tanh_cell_grad`, :func:`lstm.lstm_cell_pre_grads`): host arrays
    (not graph nodes, nor eager tensors of a differentiable backward, nor GPU arrays) of one
    BLAS dtype (float32, float64) with no empty dim (BLAS wants every dim >= 1)."""
    dt = values[0].dtype if type(values[0]) is ndarray else None
    if dt not in BLAS_DTYPES:
        return False
    for v in values:  # a loop, not all(<generator>): this runs once per step
        if type(v) is not ndarray or v.dtype != dt or v.ndim != 2 or not v.size:
            return False
    return True


def _cell_cuda(k):
    cell = k.rnn.rnn_tanh_cell

    def rnn_tanh_cell(x, h, w_ih, w_hh, b_ih, b_hh):  # dtypes promoted as on the CPU
        values = (x, h, w_ih, w_hh, b_ih, b_hh)
        return cell(*values, _dtype([v.dtype for v in values]))
    return rnn_tanh_cell


rnn_tanh_cell = define(
    "rnn_tanh_cell", _cell_forward, _cell_infer, _cell_grad, reference=RG.rnn_tanh_cell,
    cuda=_cell_cuda,
    doc="tanh(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh) for x (batch, input), h (batch, "
        "hidden), w_ih (hidden, input), w_hh (hidden, hidden), b_ih and b_hh (hidden,): one "
        "step of an Elman RNN (kg.nn.RNNCell) in one op.", saves=("out", 0, 1, 2, 3), batch="cell")


# -- lstm_cell -------------------------------------------------------------------------------
_LSTM_INPUTS = ("x", "h", "c", "w_ih", "w_hh", "b_ih", "b_hh")


def _lstm_forward(x, h, c, w_ih, w_hh, b_ih, b_hh):
    values = (x, h, c, w_ih, w_hh, b_ih, b_hh)
    dt = x.dtype
    if dt.kind != "f" or any(v.dtype != dt for v in values[1:]):  # mixed dtypes: promote
        dt = _dtype([v.dtype for v in values])
        values = [_to(v, dt) for v in values]
    return lstm.lstm_cell(*values)


def _lstm_infer(shapes_, dtypes, attrs):
    if len(shapes_) != 7:
        raise TypeError(f"lstm_cell takes 7 inputs ({', '.join(_LSTM_INPUTS)}), got "
                        f"{len(shapes_)}")
    for name, s, rank in zip(_LSTM_INPUTS, shapes_, (2, 2, 2, 2, 2, 1, 1)):
        if s is not None and len(s) != rank:
            raise ShapeError(f"lstm_cell: {name} must have rank {rank}, got shape "
                             f"{shape_str(s)}")
    sx, sh, sc, swi, swh, sbi, sbh = shapes_

    def dim(s, i):
        return None if s is None else s[i]

    def gates(name, s):  # the weights and biases hold the four gates' rows: hidden of each
        rows = dim(s, 0)
        if rows is not None and rows % 4:
            raise ShapeError(f"lstm_cell: {name} must have 4*hidden rows (gates i, f, g, "
                             f"o), got shape {shape_str(s)}")
        return None if rows is None else rows // 4

    batch = _same("batch", (("x", dim(sx, 0)), ("h", dim(sh, 0)), ("c", dim(sc, 0))),
                  "lstm_cell")
    hidden = _same("hidden size", (("h", dim(sh, 1)), ("c", dim(sc, 1)),
                                   ("w_ih/4", gates("w_ih", swi)), ("w_hh/4", gates("w_hh", swh)),
                                   ("w_hh", dim(swh, 1)), ("b_ih/4", gates("b_ih", sbi)),
                                   ("b_hh/4", gates("b_hh", sbh))), "lstm_cell")
    _same("input size", (("x", dim(sx, 1)), ("w_ih", dim(swi, 1))), "lstm_cell")
    return (batch, None if hidden is None else 6 * hidden), _dtype(dtypes)


@takes_sinks
def _lstm_grad(g, out, needs, attrs, x, h, c, w_ih, w_hh, b_ih, b_hh):
    host = _one_call(g, out, x, h, c, w_ih, w_hh)
    if host:  # eager backward on host arrays: one compiled call
        da, dc = lstm.lstm_cell_pre_grads(g, out, c)
    else:  # graph nodes, GPU arrays, a differentiable backward: the same formula in ops
        _, c_new, i, f, gt, o = split(out, 6, axis=1)
        gh, gc, g_i, g_f, g_g, g_o = split(g, 6, axis=1)
        tc = tanh(c_new)
        dc = add(gc, tanh_grad(tc, mul(gh, o)))
        da = concat([sigmoid_grad(i, add(mul(dc, gt), g_i)),
                     sigmoid_grad(f, add(mul(dc, c), g_f)),
                     tanh_grad(gt, add(mul(dc, i), g_g)),
                     sigmoid_grad(o, add(mul(gh, tc), g_o))], axis=1)
        dc = mul(dc, f)
    return (matmul(da, w_ih) if needs[0] else None, matmul(da, w_hh) if needs[1] else None,
            dc if needs[2] else None, *weight_grads(da, x, h, needs[3:], host))


def weight_grads(da, x, h, needs, host) -> list:
    """The gradients of a cell's (w_ih, w_hh, b_ih, b_hh), None where ``needs`` says no,
    from ``da``, the gradient at its pre-activation, and its inputs ``x`` and ``h`` (all
    steps' rows). Leaf weights in eager backward on the host (``host``) take sinks: their
    gradients over all the steps are summed as one product when backward() ends (see
    ops/products.py)."""
    grads, dat = [], None
    for need, right in ((needs[0], x), (needs[1], h)):
        if host and type(need) is Sink:
            need.add_product(da, right)
            grads.append(None)
        elif need:
            dat = matrix_transpose(da) if dat is None else dat
            grads.append(matmul(dat, right))
        else:
            grads.append(None)
    db = None
    for need in needs[2:4]:
        if host and type(need) is Sink:
            need.add_column_sums(da)
            grads.append(None)
        elif need:
            db = reduce_sum(da, axis=0) if db is None else db
            grads.append(db)
        else:
            grads.append(None)
    return grads


def _lstm_cuda(k):
    cell = k.rnn.lstm_cell

    def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):  # dtypes promoted as on the CPU
        values = (x, h, c, w_ih, w_hh, b_ih, b_hh)
        return cell(*values, _dtype([v.dtype for v in values]))
    return lstm_cell


lstm_cell = define(
    "lstm_cell", _lstm_forward, _lstm_infer, _lstm_grad, reference=RG.lstm_cell,
    cuda=_lstm_cuda,
    doc="One LSTM step in one op (PyTorch's formula and layout, gates i, f, g, o): "
        "[h' | c' | sigmoid(i) sigmoid(f) tanh(g) sigmoid(o)] (batch, 6*hidden) with "
        "c' = sigmoid(f)*c + sigmoid(i)*tanh(g) and h' = sigmoid(o)*tanh(c'), the gates "
        "x @ w_ih.T + b_ih + h @ w_hh.T + b_hh, for x (batch, input), h and c (batch, "
        "hidden), w_ih (4*hidden, input), w_hh (4*hidden, hidden), b_ih and b_hh "
        "(4*hidden,). The activations are in the output for the gradient to read; "
        "kg.nn.LSTMCell takes h' and c' from it.", saves=("out", 0, 1, 2, 3, 4), batch="cell")
