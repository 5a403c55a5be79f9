"""``softmax``, ``log_softmax``, softmax cross-entropy from integer labels, and losses."""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError
from ..graph import shape_str
from ..kernels import cpu
from .elementwise import _floating, _to, exp, mul, square, sub
from .reduce import mean, sum
from .registry import define


def _float_forward(kernel):
    def forward(x, axis=-1):
        return kernel(_to(x, _floating(x.dtype)), axis)
    return forward


def _softmax_infer(shapes_, dtypes, attrs):
    s = shapes_[0]
    axis = attrs.get("axis", -1)
    if s is not None and (len(s) == 0 or not -len(s) <= axis < len(s)):
        raise ShapeError(f"softmax: axis {axis} is out of range for shape {shape_str(s)}")
    return s, _floating(dtypes[0])


def _softmax_grad(g, out, needs, attrs, x):
    axis = attrs.get("axis", -1)
    return (mul(out, sub(g, sum(mul(g, out), axis=axis, keepdims=True))),)


def _log_softmax_grad(g, out, needs, attrs, x):
    axis = attrs.get("axis", -1)
    return (sub(g, mul(exp(out), sum(g, axis=axis, keepdims=True))),)


softmax = define("softmax", _float_forward(cpu.softmax), _softmax_infer, _softmax_grad,
                 attr_names=("axis",),
                 doc="exp(x) / sum(exp(x)) along ``axis`` (default -1), computed stably.")
log_softmax = define("log_softmax", _float_forward(cpu.log_softmax), _softmax_infer,
                     _log_softmax_grad, attr_names=("axis",),
                     doc="log(softmax(x)) along ``axis``, computed stably.")


def _xent_infer(shapes_, dtypes, attrs):
    sl, sy = shapes_
    if dtypes[1] not in D.INTS:
        raise TypeError(f"softmax_cross_entropy: labels must be int32 or int64 class indices, "
                        f"got {dtypes[1].name}")
    if sl is not None and len(sl) != 2:
        raise ShapeError(f"softmax_cross_entropy: logits must have shape (batch, classes), got "
                         f"{shape_str(sl)}")
    if sy is not None and len(sy) != 1:
        raise ShapeError(f"softmax_cross_entropy: labels must have shape (batch,), got "
                         f"{shape_str(sy)}")
    if sl is not None and sy is not None and None not in (sl[0], sy[0]) and sl[0] != sy[0]:
        raise ShapeError(f"softmax_cross_entropy: {sl[0]} rows of logits but {sy[0]} labels")
    return (sl[0] if sl is not None else None,), _floating(dtypes[0])


def _xent_forward(logits, labels):
    return cpu.sparse_softmax_cross_entropy(_to(logits, _floating(logits.dtype)),
                                            np.asarray(labels))


def _xent_grad(g, out, needs, attrs, logits, labels):
    return softmax_cross_entropy_grad(logits, labels, g), None


def _xent_grad_forward(logits, labels, g):
    return cpu.sparse_softmax_cross_entropy_grad(_to(logits, _floating(logits.dtype)),
                                                 np.asarray(labels), g)


def _no_second_derivative(gg, out, needs, attrs, *inputs):
    raise NotImplementedError("the second derivative of softmax_cross_entropy is not "
                              "implemented; differentiate log_softmax instead")


softmax_cross_entropy = define(
    "softmax_cross_entropy", _xent_forward, _xent_infer, _xent_grad,
    doc="Per-example -log softmax(logits)[label] for logits (batch, classes) and integer "
        "labels (batch,): TF1's sparse_softmax_cross_entropy_with_logits.")
softmax_cross_entropy_grad = define(
    "softmax_cross_entropy_grad", _xent_grad_forward,
    lambda s, d, attrs: (s[0], _floating(d[0])), _no_second_derivative,
    doc="(softmax(logits) - one_hot(labels)) * g[:, None], in one kernel.")


def cross_entropy(logits, labels):
    """Mean softmax cross-entropy of ``logits`` (batch, classes) against integer ``labels``,
    as ``torch.nn.functional.cross_entropy``.

    >>> import kernelgraph as kg
    >>> loss = kg.cross_entropy(kg.tensor([[2.0, 0.0], [0.0, 2.0]]), kg.tensor([0, 1]))
    >>> round(loss.item(), 4)
    0.1269
    """
    return mean(softmax_cross_entropy(logits, labels))


def mse_loss(prediction, target):
    """Mean squared error, ``mean((prediction - target) ** 2)``."""
    return mean(square(sub(prediction, target)))
