"""``rnn_tanh_sequence``: a whole Elman RNN over a padded batch as ONE node -- what static
``kg.nn.dynamic_rnn`` builds for a ``kg.nn.RNNCell`` on the host, as TF's and cuDNN's fused
RNN kernels run a whole layer.

The general static ``dynamic_rnn`` is a ``while_loop`` whose body (gather the step, the cell,
the lengths' two ``where``) runs as a plan once per step, and whose gradient runs the body's
gradient plan once per step: a few Python dispatches per step each way, which cost more than
the step's arithmetic at a learner's sizes. Here the forward is one kernel call that loops
over the steps (kernels/rnn_sequence.py, the cell's own compiled step, so the same bits), and
the gradient is one kernel call for the recurrence (``rnn_tanh_sequence_grad``) and the
weights' products, written with the public ops.

The value is (time + 1, batch, hidden): rows ``t < time`` the outputs of step ``t``, zero
past a sequence's length (TF1's ``dynamic_rnn`` outputs), row ``time`` the final states (each
sequence's state at its length). ``lengths`` empty means every sequence runs every step.

>>> import numpy as np
>>> x = np.ones((3, 2, 1))                                # 3 steps, batch 2, 1 feature
>>> h0 = np.zeros((2, 1))
>>> w, b = np.ones((1, 1)), np.zeros(1)
>>> out = rnn_tanh_sequence(x, h0, w, w, b, b, np.array([3, 1]))
>>> out[:, :, 0].round(4).tolist()                        # sequence 1 stops after a step
[[0.7616, 0.7616], [0.9427, 0.0], [0.9597, 0.0], [0.9597, 0.7616]]
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError
from ..graph import shape_str
from ..kernels import rnn_sequence as K
from .elementwise import _to
from .indexing import getitem
from .join import concat
from .linalg import matmul
from .reduce import sum as reduce_sum
from .registry import define
from .rnn import _dtype, _same
from .shape import matrix_transpose

_INPUTS = ("x", "h0", "w_ih", "w_hh", "b_ih", "b_hh", "lengths")


def _promoted(values):
    dt = _dtype([v.dtype for v in values])
    return [v if v.dtype == dt else _to(v, dt) for v in values]


def _forward(x, h0, w_ih, w_hh, b_ih, b_hh, lengths):
    x, h0, w_ih, w_hh, b_ih, b_hh = _promoted((x, h0, w_ih, w_hh, b_ih, b_hh))
    return K.rnn_tanh_sequence(x, h0, w_ih, w_hh, b_ih, b_hh, _lengths(lengths, x.shape[1]))


def _lengths(lengths, batch) -> np.ndarray:
    lengths = np.asarray(lengths)
    if lengths.dtype.kind not in "iu":
        raise TypeError(f"rnn_tanh_sequence: lengths must be int32 or int64, got "
                        f"{lengths.dtype.name}")
    if lengths.ndim != 1 or lengths.shape[0] not in (0, batch):
        raise ValueError(f"rnn_tanh_sequence: lengths must be (batch,) = ({batch},) or "
                         f"empty, got shape {shape_str(lengths.shape)}")
    return lengths


def _dim(s, i):
    return None if s is None else s[i]


def _infer(shapes_, dtypes, attrs):
    if len(shapes_) != 7:
        raise TypeError(f"rnn_tanh_sequence takes 7 inputs ({', '.join(_INPUTS)}), got "
                        f"{len(shapes_)}")
    for name, s, rank in zip(_INPUTS, shapes_, (3, 2, 2, 2, 1, 1, 1)):
        if s is not None and len(s) != rank:
            raise ShapeError(f"rnn_tanh_sequence: {name} must have rank {rank}, got shape "
                             f"{shape_str(s)}")
    if D.as_dtype(dtypes[6]) not in D.INTS:
        raise TypeError(f"rnn_tanh_sequence: lengths must be int32 or int64, got "
                        f"{D.as_dtype(dtypes[6]).name}")
    sx, sh, swi, swh, sbi, sbh, _ = shapes_
    op = "rnn_tanh_sequence"
    batch = _same("batch", (("x", _dim(sx, 1)), ("h0", _dim(sh, 0))), op)
    hidden = _same("hidden size", (("h0", _dim(sh, 1)), ("w_ih", _dim(swi, 0)),
                                   ("w_hh", _dim(swh, 0)), ("w_hh", _dim(swh, 1)),
                                   ("b_ih", _dim(sbi, 0)), ("b_hh", _dim(sbh, 0))), op)
    _same("input size", (("x", _dim(sx, 2)), ("w_ih", _dim(swi, 1))), op)
    steps = _dim(sx, 0)
    return (None if steps is None else steps + 1, batch, hidden), _dtype(dtypes[:6])


def _grad(g, out, needs, attrs, x, h0, w_ih, w_hh, b_ih, b_hh, lengths):
    da_all = rnn_tanh_sequence_grad(g, out, w_hh, lengths)
    da = getitem(da_all, index=((None, -1, None),))  # (time, batch, hidden)
    grads = [matmul(da, w_ih) if needs[0] else None,
             getitem(da_all, index=(-1,)) if needs[1] else None]
    if any(needs[2:6]):
        # the state each step started from: h0, then the outputs (a sequence that ended
        # has a zero da, whatever its row holds)
        before = getitem(concat([getitem(h0, index=(None,)), out], axis=0),
                         index=((None, -2, None),)) if needs[3] else None
        # One product per step, then summed: each stays under the size at which OpenBLAS
        # splits a product across threads. One product over every step's rows is split,
        # and on a busy machine a split product waits for a descheduled thread, for longer
        # than the whole RNN takes.
        dat = matrix_transpose(da)
        db = reduce_sum(da, axis=(0, 1)) if needs[4] or needs[5] else None
        dw_ih = reduce_sum(matmul(dat, x), axis=0) if needs[2] else None
        dw_hh = reduce_sum(matmul(dat, before), axis=0) if needs[3] else None
        grads += [dw_ih, dw_hh, db if needs[4] else None, db if needs[5] else None]
    else:
        grads += [None] * 4
    return (*grads, None)  # (lengths: ints, no gradient)


def _reference(x, h0, w_ih, w_hh, b_ih, b_hh, lengths):
    steps, batch = x.shape[0], x.shape[1]
    lengths = np.full(batch, steps) if len(lengths) == 0 else np.asarray(lengths)
    h, outs = h0, []
    for t in range(steps):
        y = np.tanh(x[t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh)
        alive = (t < lengths)[:, None]
        outs.append(np.where(alive, y, 0.0))
        h = np.where(alive, y, h)
    return np.stack([*outs, h]).astype(np.result_type(x, h0, w_ih, w_hh, b_ih, b_hh))


rnn_tanh_sequence = define(
    "rnn_tanh_sequence", _forward, _infer, _grad, reference=_reference,
    traits=("host_only",), saves=("out", 3, 6, (0, 2), (1, 3), (2, 0)),
    doc="A tanh RNN over a padded batch, every step in one op (static dynamic_rnn with a "
        "kg.nn.RNNCell on the host): x (time, batch, input), h0 (batch, hidden), w_ih "
        "(hidden, input), w_hh (hidden, hidden), b_ih and b_hh (hidden,), lengths (batch,) "
        "ints or empty (every step) -> (time + 1, batch, hidden): each step's output, zero "
        "past a sequence's length, then the final states.")


# -- its gradient's recurrence ---------------------------------------------------------------
def _grad_forward(g, out, w_hh, lengths):
    dt = _dtype([g.dtype, out.dtype, w_hh.dtype])
    g, out, w_hh = (v if v.dtype == dt else _to(v, dt) for v in (g, out, w_hh))
    return K.rnn_tanh_sequence_grad(g, out, w_hh, _lengths(lengths, out.shape[1]))


def _grad_infer(shapes_, dtypes, attrs):
    if len(shapes_) != 4:
        raise TypeError(f"rnn_tanh_sequence_grad takes 4 inputs (g, out, w_hh, lengths), got "
                        f"{len(shapes_)}")
    sg, so = shapes_[0], shapes_[1]
    if sg is not None and so is not None and tuple(sg) != tuple(so):
        raise ShapeError(f"rnn_tanh_sequence_grad: g {shape_str(sg)} and out "
                         f"{shape_str(so)} differ")
    return (so if so is not None else sg), _dtype(dtypes[:3])


def _grad_reference(g, out, w_hh, lengths):
    steps, batch = out.shape[0] - 1, out.shape[1]
    lengths = np.full(batch, steps) if len(lengths) == 0 else np.asarray(lengths)
    da, dh = np.zeros(out.shape, np.result_type(g, out, w_hh)), g[steps]
    for t in range(steps - 1, -1, -1):
        alive = (t < lengths)[:, None]
        da[t] = np.where(alive, (dh + g[t]) * (1 - out[t] ** 2), 0.0)
        dh = np.where(alive, da[t] @ w_hh, dh)
    da[steps] = dh
    return da


rnn_tanh_sequence_grad = define(
    "rnn_tanh_sequence_grad", _grad_forward, _grad_infer, None, reference=_grad_reference,
    traits=("host_only",),
    doc="The recurrence of rnn_tanh_sequence's gradient: for its value out and gradient g "
        "(time + 1, batch, hidden), w_hh and lengths -> (time + 1, batch, hidden): each "
        "step's gradient at its pre-activation (zero past a sequence's length), then the "
        "initial state's gradient.")
