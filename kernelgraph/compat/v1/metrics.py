"""``tf.metrics``: streaming metrics, each ``(value, update_op)`` over LOCAL variables, as
TF1 makes them (``tensorflow/python/ops/metrics_impl.py``)::

    acc, acc_op = tf.metrics.accuracy(labels, predictions)
    sess.run(tf.local_variables_initializer())     # the counts start at zero
    for batch in batches:
        sess.run(acc_op, feed_dict=batch)          # adds the batch to the counts
    print(sess.run(acc))                           # over every batch so far

The counts are variables in ``tf.GraphKeys.LOCAL_VARIABLES`` (``tf.local_variables()``),
not in ``tf.global_variables()``: ``tf.global_variables_initializer()`` leaves them alone,
and a ``tf.train.Saver`` does not save them. They are named as TF1 names them
(``'accuracy/total:0'``, ``'precision/true_positives/count:0'``), the value
``'accuracy/value:0'`` and the update ``'accuracy/update_op:0'``.
"""

from __future__ import annotations

import numpy as np

from ... import ops
from ...dtypes import bool_, float32
from ...graph import get_default_graph
from ...static.variables import Variable, constant
from .graph_collections import GraphKeys, add_to_collections, in_collections
from .spellings import reduce_sum


def local_variable(initial_value, name: str) -> Variable:
    """A metric's count: a variable in ``tf.GraphKeys.LOCAL_VARIABLES`` only."""
    var = Variable(initial_value, trainable=False, name=name)
    return in_collections(var, [GraphKeys.LOCAL_VARIABLES, "metric_variables"])


def _float(x):
    x = x if hasattr(x, "op") else constant(x)
    return x if x.dtype == float32 else ops.cast(x, dtype=float32)


def _safe_div(num, den, name: str):
    """``num / den``, 0 where ``den`` is 0 (TF1's ``div_no_nan``)."""
    positive = ops.greater(den, 0.0)
    return ops.where(positive, num / ops.where(positive, den, ops.ones_like(den)),
                     ops.zeros_like(num), name=name)


def _collect(value, update, metrics_collections, updates_collections):
    if metrics_collections:
        add_to_collections(metrics_collections, value)
    if updates_collections:
        add_to_collections(updates_collections, update)
    return value, update


def _weighted(values, weights):
    """(weighted values, their count): the sum of the weights broadcast to the values."""
    if weights is None:
        return values, reduce_sum(ops.ones_like(values))
    weights = _float(weights) * ops.ones_like(values)
    return values * weights, reduce_sum(weights)


def mean(values, weights=None, metrics_collections=None, updates_collections=None,
         name=None):
    """The mean of every value seen: ``total / count`` over local ``total`` and ``count``.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None])
    ...     m, update = tf.metrics.mean(x)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         _ = sess.run(update, {x: [1.0, 2.0]}); _ = sess.run(update, {x: [6.0]})
    ...         float(sess.run(m)), [v.name for v in tf.local_variables()]
    (3.0, ['mean/total:0', 'mean/count:0'])
    """
    graph = get_default_graph()
    with graph.name_scope(name or "mean"):
        values, count = _weighted(_float(values), weights)
        total = local_variable(np.float32(0), "total")
        counted = local_variable(np.float32(0), "count")
        update_total = total.assign_add(reduce_sum(values))
        update_count = counted.assign_add(count)
        value = _safe_div(total, counted, "value")
        update = _safe_div(update_total, update_count, "update_op")
    return _collect(value, update, metrics_collections, updates_collections)


def accuracy(labels, predictions, weights=None, metrics_collections=None,
             updates_collections=None, name=None):
    """The fraction of ``predictions`` equal to ``labels`` (a :func:`mean` of the matches,
    named ``'accuracy'``)."""
    labels = labels if hasattr(labels, "op") else constant(labels)
    predictions = predictions if hasattr(predictions, "op") else constant(predictions)
    if predictions.dtype != labels.dtype:
        predictions = ops.cast(predictions, dtype=labels.dtype)
    correct = ops.cast(ops.equal(predictions, labels), dtype=float32)
    return mean(correct, weights, metrics_collections, updates_collections,
                name or "accuracy")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None,
                       updates_collections=None, name=None):
    """The mean of ``(labels - predictions) ** 2`` over every batch seen."""
    diff = _float(predictions) - _float(labels)
    return mean(diff * diff, weights, metrics_collections, updates_collections,
                name or "mean_squared_error")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """The mean of ``|labels - predictions|`` over every batch seen."""
    return mean(ops.abs(_float(predictions) - _float(labels)), weights, metrics_collections,
                updates_collections, name or "mean_absolute_error")


def _bool(x):
    x = x if hasattr(x, "op") else constant(x)
    return x if x.dtype == bool_ else ops.cast(x, dtype=bool_)


def _count(condition, weights, scope: str, shape=()):
    """A local ``<scope>/count`` summing ``condition`` (weighted), and its update."""
    graph = get_default_graph()
    with graph.name_scope(scope):
        values, _ = _weighted(ops.cast(condition, dtype=float32), weights)
        var = local_variable(np.zeros(shape, np.float32), "count")
        return var, var.assign_add(reduce_sum(values))


def _ratio(name, positive, negative, weights, names, labels, predictions,
           metrics_collections, updates_collections):
    graph = get_default_graph()
    with graph.name_scope(name):
        labels, predictions = _bool(labels), _bool(predictions)
        hit, hit_update = _count(ops.logical_and(labels, predictions), weights, names[0])
        miss, miss_update = _count(ops.logical_and(positive(labels), negative(predictions)),
                                   weights, names[1])
        value = _safe_div(hit, hit + miss, "value")
        update = _safe_div(hit_update, hit_update + miss_update, "update_op")
    return _collect(value, update, metrics_collections, updates_collections)


def precision(labels, predictions, weights=None, metrics_collections=None,
              updates_collections=None, name=None):
    """``true_positives / (true_positives + false_positives)`` of boolean predictions.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     p, update = tf.metrics.precision([True, False, True], [True, True, True])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         round(float(sess.run(update)), 4), [v.name for v in tf.local_variables()]
    (0.6667, ['precision/true_positives/count:0', 'precision/false_positives/count:0'])
    """
    return _ratio(name or "precision", ops.logical_not, lambda p: p, weights,
                  ("true_positives", "false_positives"), labels, predictions,
                  metrics_collections, updates_collections)


def recall(labels, predictions, weights=None, metrics_collections=None,
           updates_collections=None, name=None):
    """``true_positives / (true_positives + false_negatives)`` of boolean predictions."""
    return _ratio(name or "recall", lambda lab: lab, ops.logical_not, weights,
                  ("true_positives", "false_negatives"), labels, predictions,
                  metrics_collections, updates_collections)


def _auc_of(tp, fn, tn, fp, curve: str, summation_method: str, name: str):
    """TF1's ``compute_auc``: a Riemann sum over the thresholds of the ROC or PR curve."""
    eps = 1.0e-6
    rec = (tp + eps) / (tp + fn + eps)
    if curve == "ROC":
        x, y = fp / (fp + tn + eps), rec
    else:
        x, y = rec, (tp + eps) / (tp + fp + eps)
    width = x[:-1] - x[1:]
    if summation_method == "minoring":
        height = ops.minimum(y[:-1], y[1:])
    elif summation_method == "majoring":
        height = ops.maximum(y[:-1], y[1:])
    else:
        height = (y[:-1] + y[1:]) / 2.0
    return reduce_sum(width * height, name=name)


def auc(labels, predictions, weights=None, num_thresholds: int = 200,
        metrics_collections=None, updates_collections=None, curve: str = "ROC", name=None,
        summation_method: str = "trapezoidal", thresholds=None):
    """The area under the ROC (or ``curve='PR'``) curve of ``predictions`` in [0, 1],
    approximated as TF1 does: counts of true/false positives/negatives at
    ``num_thresholds`` thresholds (local variables of that length), summed by the
    trapezoidal rule (``summation_method='minoring'``/``'majoring'``: the lower/upper sum;
    ``'careful_interpolation'`` is computed as ``'trapezoidal'``)."""
    if curve not in ("ROC", "PR"):
        raise ValueError(f"curve must be either ROC or PR, {curve} unknown")
    if thresholds is None:
        if num_thresholds <= 1:
            raise ValueError("`num_thresholds` must be > 1.")
        kepsilon = 1e-7  # as TF1: the end thresholds take in predictions of exactly 0 and 1
        thresholds = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        thresholds = [0.0 - kepsilon] + thresholds + [1.0 + kepsilon]
    else:
        thresholds = [0.0 - 1e-7] + list(thresholds) + [1.0 + 1e-7]
    n = len(thresholds)
    graph = get_default_graph()
    with graph.name_scope(name or "auc"):
        labels = ops.reshape(_bool(labels), (-1, 1))
        scores = ops.reshape(_float(predictions), (-1, 1))
        above = ops.greater(scores, constant(np.array(thresholds, np.float32)[None, :]))
        if weights is not None:
            weights = ops.reshape(_float(weights) * ops.ones_like(_float(predictions)),
                                  (-1, 1))
        counts, updates = {}, {}
        for key, lab, pred in (("true_positives", labels, above),
                               ("false_negatives", labels, ops.logical_not(above)),
                               ("true_negatives", ops.logical_not(labels),
                                ops.logical_not(above)),
                               ("false_positives", ops.logical_not(labels), above)):
            hits = ops.cast(ops.logical_and(lab, pred), dtype=float32)
            if weights is not None:
                hits = hits * weights
            var = local_variable(np.zeros(n, np.float32), key)
            counts[key], updates[key] = var, var.assign_add(reduce_sum(hits, axis=0))
        order = ("true_positives", "false_negatives", "true_negatives", "false_positives")
        value = _auc_of(*(counts[k] for k in order), curve, summation_method, "value")
        update = _auc_of(*(updates[k] for k in order), curve, summation_method, "update_op")
    return _collect(value, update, metrics_collections, updates_collections)


__all__ = ["accuracy", "auc", "mean", "mean_absolute_error", "mean_squared_error",
           "precision", "recall"]
