"""``softmax``, ``log_softmax``, softmax cross-entropy from integer labels, and losses."""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError
from ..graph import shape_str
from ..kernels import nn as K
from ..kernels import reference as R
from ..kernels import reference_grads as RG
from ..kernels.nn import no_rows
from ..shapes import axis_arg, normalize_axes
from .elementwise import _floating, _to, exp, mul, square, sub
from .reduce import mean, sum
from .registry import define


def _softmax_axis(axis, what):
    """softmax's ``axis``: an int; None is the last axis, as in TF1's ``tf.nn.softmax``."""
    return -1 if axis is None else axis_arg(axis, what)


def _float_forward(kernel, what):
    def forward(x, axis=-1):
        if type(axis) is not int:
            axis = _softmax_axis(axis, what)
        if x.size == 0:  # nothing to normalise (an empty axis too): an empty result
            normalize_axes(axis, x.ndim)  # a bad axis is refused as the kernels refuse it
            return np.empty(x.shape, _floating(x.dtype))
        return kernel(_to(x, _floating(x.dtype)), axis)
    return forward


def _softmax_infer(shapes_, dtypes, attrs, what="softmax"):
    s = shapes_[0]
    axis = _softmax_axis(attrs.get("axis", -1), what)
    if s is not None and (len(s) == 0 or not -len(s) <= axis < len(s)):
        raise ShapeError(f"{what}: axis {axis} is out of range for shape {shape_str(s)}")
    return s, _floating(dtypes[0])


def _log_softmax_infer(shapes_, dtypes, attrs):
    return _softmax_infer(shapes_, dtypes, attrs, "log_softmax")


def _softmax_grad(g, out, needs, attrs, x):
    axis = _softmax_axis(attrs.get("axis", -1), "softmax")
    return (mul(out, sub(g, sum(mul(g, out), axis=axis, keepdims=True))),)


def _log_softmax_grad(g, out, needs, attrs, x):
    axis = _softmax_axis(attrs.get("axis", -1), "log_softmax")
    return (sub(g, mul(exp(out), sum(g, axis=axis, keepdims=True))),)


softmax = define("softmax", _float_forward(K.softmax, "softmax"), _softmax_infer,
                 _softmax_grad, traits=("fresh",), reference=R.softmax,
                 cuda=lambda k: k.nn.softmax, attr_names=("axis",),
                 doc="exp(x) / sum(exp(x)) along ``axis`` (default -1, also for None), "
                     "computed stably; an empty tensor gives an empty result.", saves=("out",),
                     grad_fn="SoftmaxBackward0", batch="softmax")
log_softmax = define("log_softmax", _float_forward(K.log_softmax, "log_softmax"),
                     _log_softmax_infer, _log_softmax_grad, traits=("fresh",),
                     reference=R.log_softmax, cuda=lambda k: k.nn.log_softmax,
                     attr_names=("axis",),
                     doc="log(softmax(x)) along ``axis``, computed stably.", saves=("out",),
                     grad_fn="LogSoftmaxBackward0", batch="softmax")


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
    logits, labels = _to(logits, _floating(logits.dtype)), np.asarray(labels)
    if no_rows(logits, labels):
        return np.empty(0, logits.dtype)
    return K.sparse_softmax_cross_entropy(logits, labels)


def _xent_grad(g, out, needs, attrs, logits, labels):
    return softmax_cross_entropy_grad(logits, labels, g), None


def _xent_grad_forward(logits, labels, g):
    logits, labels = _to(logits, _floating(logits.dtype)), np.asarray(labels)
    if no_rows(logits, labels):  # g broadcast against (0, 1), as the kernel's wrapper does
        return np.multiply(np.empty(logits.shape, logits.dtype), np.reshape(g, (-1, 1)),
                           dtype=logits.dtype)
    return K.sparse_softmax_cross_entropy_grad(logits, labels, g)


def _no_second_derivative(gg, out, needs, attrs, *inputs):
    raise NotImplementedError("the second derivative of softmax_cross_entropy is not "
                              "implemented; differentiate log_softmax instead")


softmax_cross_entropy = define(
    "softmax_cross_entropy", _xent_forward, _xent_infer, _xent_grad, traits=("fresh",),
    reference=R.sparse_softmax_cross_entropy, cuda=lambda k: k.nn.softmax_cross_entropy,
    doc="Per-example -log softmax(logits)[label] for logits (batch, classes) and integer "
        "labels (batch,): TF1's sparse_softmax_cross_entropy_with_logits. A batch of no rows "
        "gives an empty loss (PyTorch's reduction='none').", saves=(0, 1),
        grad_fn="NllLossBackward0", batch="row_by_row")
softmax_cross_entropy_grad = define(
    "softmax_cross_entropy_grad", _xent_grad_forward,
    lambda s, d, attrs: (s[0], _floating(d[0])), _no_second_derivative, traits=("fresh",),
    reference=RG.softmax_cross_entropy_grad, cuda=lambda k: k.nn.softmax_cross_entropy_grad,
    doc="(softmax(logits) - one_hot(labels)) * g[:, None], in one kernel.", saves="all")


def cross_entropy(logits, labels):
    """Mean softmax cross-entropy of ``logits`` (batch, classes) against integer ``labels``,
    as ``torch.nn.functional.cross_entropy`` (NaN for a batch of no rows, as there).

    >>> import kernelgraph as kg
    >>> loss = kg.cross_entropy(kg.tensor([[2.0, 0.0], [0.0, 2.0]]), kg.tensor([0, 1]))
    >>> round(loss.item(), 4)
    0.1269
    """
    return mean(softmax_cross_entropy(logits, labels))


def mse_loss(prediction, target):
    """Mean squared error, ``mean((prediction - target) ** 2)``."""
    return mean(square(sub(prediction, target)))
