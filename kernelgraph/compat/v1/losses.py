"""``tf.losses``: TF1's losses with TF1's weights and reductions (the default,
``SUM_BY_NONZERO_WEIGHTS``, is the mean over the elements whose weight is not zero)."""

from __future__ import annotations

import types

from ... import ops
from ...graph import Node
from ...static.variables import constant
from .nn import _node, _stop, sigmoid_cross_entropy_with_logits
from .nn import softmax_cross_entropy_with_logits_v2 as _softmax_xent


class Reduction:
    """``tf.losses.Reduction``: how a loss's weighted elements become the result."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=None,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``losses * weights`` reduced by ``reduction`` (TF1's rules; a mean over no element
    with a non-zero weight is 0).

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     loss = tf.losses.compute_weighted_loss([1.0, 2.0, 3.0], weights=[1.0, 0.0, 1.0])
    ...     with tf.Session() as sess:
    ...         print(sess.run(loss))
    2.0
    """
    if reduction not in Reduction.all():
        raise ValueError(f"Invalid Reduction Key {reduction}.")
    losses = _node(losses)
    w = weights if isinstance(weights, Node) else constant(weights, dtype=losses.dtype)
    if w.dtype != losses.dtype:
        w = ops.cast(w, dtype=losses.dtype)
    weighted = losses * w
    if reduction == Reduction.NONE:
        return weighted
    total = ops.sum(weighted)
    if reduction == Reduction.SUM:
        return total
    if reduction == Reduction.MEAN:
        return _div_no_nan(total, ops.sum(w * ops.ones_like(losses)))
    if reduction == Reduction.SUM_OVER_BATCH_SIZE:
        return _div_no_nan(total, ops.sum(ops.ones_like(losses)))
    present = ops.cast(ops.not_equal(w * ops.ones_like(losses), 0.0), dtype=losses.dtype)
    return _div_no_nan(total, ops.sum(present))


def _div_no_nan(a, b):
    safe = ops.where(ops.equal(b, 0.0), ops.ones_like(b), b)
    return ops.where(ops.equal(b, 0.0), ops.zeros_like(a), a / safe)


def mean_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=None,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``(predictions - labels) ** 2``, weighted and reduced."""
    predictions = _node(predictions)
    labels = _node(labels, predictions.dtype)
    d = predictions - labels
    return compute_weighted_loss(d * d, weights, reduction=reduction)


def absolute_difference(labels, predictions, weights=1.0, scope=None, loss_collection=None,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``|predictions - labels|``, weighted and reduced."""
    predictions = _node(predictions)
    labels = _node(labels, predictions.dtype)
    return compute_weighted_loss(ops.abs(predictions - labels), weights, reduction=reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None, loss_collection=None,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``0.5 * d**2`` where ``|d| <= delta``, else ``delta * (|d| - 0.5 * delta)``."""
    predictions = _node(predictions)
    labels = _node(labels, predictions.dtype)
    error = ops.abs(predictions - labels)
    quadratic = ops.minimum(error, delta)
    linear = error - quadratic
    return compute_weighted_loss(0.5 * quadratic * quadratic + delta * linear, weights,
                                 reduction=reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None, loss_collection=None,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``-labels * log(p + eps) - (1 - labels) * log(1 - p + eps)``."""
    predictions = _node(predictions)
    labels = _node(labels, predictions.dtype)
    losses = ops.neg(labels * ops.log(predictions + epsilon)) - \
        (1.0 - labels) * ops.log(1.0 - predictions + epsilon)
    return compute_weighted_loss(losses, weights, reduction=reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=None,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """``max(0, 1 - (2 * labels - 1) * logits)`` (labels 0 or 1)."""
    logits = _node(logits)
    labels = _node(labels, logits.dtype)
    return compute_weighted_loss(ops.relu(1.0 - (2.0 * labels - 1.0) * logits), weights,
                                 reduction=reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=None,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """The softmax cross entropy of each row (one-hot labels, optionally smoothed:
    ``labels * (1 - s) + s / classes``), weighted and reduced; no gradient into the
    labels, as in TF1."""
    logits = _node(logits)
    labels = _node(onehot_labels, logits.dtype)
    if label_smoothing:
        classes = logits.shape[-1] if logits.shape is not None else None
        if classes is None:
            raise ValueError("softmax_cross_entropy: label_smoothing needs the number of "
                             "classes")
        labels = labels * (1.0 - label_smoothing) + label_smoothing / classes
    losses = _softmax_xent(labels=_stop(labels), logits=logits)
    return compute_weighted_loss(losses, weights, reduction=reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None,
                                 loss_collection=None,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """The softmax cross entropy of each row for integer labels, weighted and reduced."""
    losses = ops.softmax_cross_entropy(_node(logits), _node(labels))
    return compute_weighted_loss(losses, weights, reduction=reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0,
                          scope=None, loss_collection=None,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """The sigmoid cross entropy of each element (labels smoothed to
    ``labels * (1 - s) + 0.5 * s``), weighted and reduced."""
    logits = _node(logits)
    labels = _node(multi_class_labels, logits.dtype)
    if label_smoothing:
        labels = labels * (1.0 - label_smoothing) + 0.5 * label_smoothing
    losses = sigmoid_cross_entropy_with_logits(labels=_stop(labels), logits=logits)
    return compute_weighted_loss(losses, weights, reduction=reduction)


losses = types.SimpleNamespace(
    Reduction=Reduction, compute_weighted_loss=compute_weighted_loss,
    mean_squared_error=mean_squared_error, absolute_difference=absolute_difference,
    huber_loss=huber_loss, log_loss=log_loss, hinge_loss=hinge_loss,
    softmax_cross_entropy=softmax_cross_entropy,
    sparse_softmax_cross_entropy=sparse_softmax_cross_entropy,
    sigmoid_cross_entropy=sigmoid_cross_entropy,
)
"""The ``tf.losses`` namespace."""

__all__ = ["losses"]
