"""``tf.nn``: TF1's neural-network functions, each a composition of kernelgraph ops with TF's
argument names and TF's formulas (so its numbers and its gradients are TF's):
``softmax_cross_entropy_with_logits`` (and ``_v2``), ``sigmoid_cross_entropy_with_logits``,
``bias_add``, ``dropout`` with a tensor ``keep_prob``, ``l2_loss``, ``moments``,
``embedding_lookup``, ``in_top_k``, ``static_rnn`` and the activations."""

from __future__ import annotations

import types

import numpy as np

from ... import errors, ops
from ...dtypes import as_dtype
from ...graph import Node, get_default_graph
from ...jit.record import stop_gradient as _stop_gradient_op
from ...nn.rnn import zero_state as _zero_state
from ...static.build import build
from ...static.control_flow import random_uniform_like
from .conv import avg_pool2d, conv2d, max_pool2d
from .rnn import BasicLSTMCell, BasicRNNCell, LSTMCell, LSTMStateTuple, _dynamic_rnn
from .tensors import (
    constant,  # TF1's: Python ints are int32
    tf_op,  # NumPy arguments make graph nodes, as in TF1
)


def _node(x, dtype=None) -> Node:
    """Graph mode even for Python numbers and arrays (TF1 converts them to constants)."""
    return x if isinstance(x, Node) else constant(x, dtype=dtype)


def _stop(x):
    return build(_stop_gradient_op, (x,), {"name": "StopGradient"})


def _axis(dim, axis):
    return dim if axis is None else axis


def softmax_cross_entropy_with_logits_v2(_sentinel=None, labels=None, logits=None, dim=-1,
                                         name=None, axis=None):
    """``-sum(labels * log_softmax(logits), axis)``: dense (one-hot or soft) labels; the
    gradient also flows into ``labels``.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     loss = tf.nn.softmax_cross_entropy_with_logits_v2(
    ...         labels=[[0.0, 1.0]], logits=[[1.0, 1.0]])
    ...     with tf.Session() as sess:
    ...         print(sess.run(loss).round(4))
    [0.6931]
    """
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    logits = _node(logits)
    labels = _node(labels, logits.dtype)
    axis = _axis(dim, axis)
    return ops.neg(ops.sum(labels * ops.log_softmax(logits, axis=axis), axis=axis),
                   name=name)


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None, axis=None):
    """TF1's ``softmax_cross_entropy_with_logits``: the ``_v2`` loss, with no gradient into
    ``labels`` (TF1 stops it: ``tf.gradients(loss, labels)`` is ``[None]``)."""
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    logits = _node(logits)
    labels = _stop(_node(labels, logits.dtype))
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, dim=dim,
                                                name=name, axis=axis)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    """Integer class labels, one loss per row."""
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...)")
    return ops.softmax_cross_entropy(_node(logits), _node(labels), name=name)


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """``max(x, 0) - x * z + log(1 + exp(-|x|))``, written ``softplus(x) - x * z`` (the
    same value; its gradient ``sigmoid(x) - z`` is TF's also at ``x = 0``).

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0], logits=[0.0, 2.0])
    ...     with tf.Session() as sess:
    ...         print(sess.run(loss).round(4))
    [0.6931 2.1269]
    """
    if _sentinel is not None:
        raise ValueError("Only call `sigmoid_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    logits = _node(logits)
    labels = _node(labels, logits.dtype)
    return ops.sub(ops.softplus(logits), logits * labels, name=name or "logistic_loss")


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None):
    """``(1 - z) * x + (1 + (q - 1) * z) * log(1 + exp(-x))`` (TF's formula)."""
    logits = _node(logits)
    labels = _node(labels, logits.dtype)
    weight = 1.0 + (pos_weight - 1.0) * labels
    return ops.add((1.0 - labels) * logits, weight * ops.softplus(ops.neg(logits)), name=name)


def bias_add(value, bias, data_format=None, name=None):
    """``value + bias`` along the channels: the last axis (``NHWC``) or axis 1 (``NCHW``)."""
    value, bias = _node(value), _node(bias)
    if data_format is not None and str(data_format).startswith("NC"):
        rank = len(value.shape) if value.shape is not None else None
        if rank is None:
            raise ValueError("bias_add: data_format='NCHW' needs the rank of value")
        bias = ops.reshape(bias, shape=(-1,) + (1,) * (rank - 2))
    elif data_format not in (None, "NHWC", "NWC", "NDHWC", "N...C"):
        raise ValueError(f"bias_add: unknown data_format {errors.shown(data_format)}")
    return ops.add(value, bias, name=name or "BiasAdd")


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """TF1's ``tf.nn.dropout(x, keep_prob)`` (or ``rate=``): each value kept with
    probability ``keep_prob`` and scaled by ``1 / keep_prob``. ``keep_prob`` may be a tensor
    (a placeholder fed 0.5 while training and 1.0 to evaluate: then it is the identity).

    >>> import numpy as np
    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     keep = tf.placeholder(tf.float32)
    ...     y = tf.nn.dropout(tf.ones([2, 3]), keep)
    ...     with tf.Session() as sess:
    ...         print(sess.run(y, {keep: 1.0}))
    [[1. 1. 1.]
     [1. 1. 1.]]
    """
    if noise_shape is not None:
        raise NotImplementedError("tf.nn.dropout: noise_shape is not implemented")
    if (rate is None) == (keep_prob is None):
        raise ValueError("tf.nn.dropout: pass exactly one of rate= or keep_prob=")
    x = _node(x)
    if not isinstance(keep_prob, Node) and not isinstance(rate, Node):
        keep = float(1.0 - rate if rate is not None else keep_prob)
        if not 0.0 < keep <= 1.0:
            raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), "
                             f"got {1.0 - keep:g}")
        if keep == 1.0:
            return x  # as TF1: keep_prob 1 returns x itself
        return ops.dropout(x, p=1.0 - keep, seed=seed)
    keep = ops.sub(1.0, rate) if rate is not None else keep_prob
    keep = ops.cast(keep, dtype=x.dtype) if keep.dtype != x.dtype else keep
    if keep.shape != ():  # a scalar, as TF requires (and the result keeps x's shape)
        keep = ops.reshape(keep, shape=())
    # TF1's formula: floor(keep + uniform[0, 1)) is 1 exactly when uniform >= 1 - keep.
    mask = ops.cast(ops.greater_equal(random_uniform_like(x, seed=seed), ops.sub(1.0, keep)),
                    dtype=x.dtype)
    return ops.mul(ops.div(x, keep), mask, name=name or "dropout")


def l2_loss(t, name=None):
    """``sum(t ** 2) / 2``."""
    t = _node(t)
    return ops.div(ops.sum(t * t), 2.0, name=name or "L2Loss")


def relu6(features, name=None):
    """``min(max(x, 0), 6)``; its gradient is 1 exactly where ``0 < x < 6`` (TF's)."""
    x = _node(features)
    return ops.where(x < 6.0, ops.relu(x), ops.zeros_like(x) + 6.0, name=name)


def leaky_relu(features, alpha=0.2, name=None):
    """``x`` where ``x > 0``, else ``alpha * x`` (at 0 the gradient is ``alpha``, as TF's)."""
    x = _node(features)
    return ops.where(x > 0.0, x, x * alpha, name=name)


def elu(features, name=None):
    """``x`` where ``x > 0``, else ``exp(x) - 1`` (gradient 1 at 0, as TF's)."""
    x = _node(features)
    negative = ops.where(x > 0.0, ops.zeros_like(x), x)  # exp never sees a large x
    return ops.where(x > 0.0, x, ops.exp(negative) - 1.0, name=name)


def softsign(features, name=None):
    """``x / (1 + |x|)``."""
    x = _node(features)
    return ops.div(x, 1.0 + ops.abs(x), name=name)


def softmax(logits, axis=None, name=None, dim=None):
    """``tf.nn.softmax(logits, axis=-1)`` (``dim=`` is TF1's older name)."""
    axis = -1 if axis is None and dim is None else axis if axis is not None else dim
    return ops.softmax(_node(logits), axis=axis, name=name)


def log_softmax(logits, axis=None, name=None, dim=None):
    """``tf.nn.log_softmax(logits, axis=-1)``."""
    axis = -1 if axis is None and dim is None else axis if axis is not None else dim
    return ops.log_softmax(_node(logits), axis=axis, name=name)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """``x / sqrt(max(sum(x ** 2, axis), epsilon))``."""
    x = _node(x)
    axis = axis if axis is not None else dim
    square_sum = ops.sum(x * x, axis=axis, keepdims=True)
    return ops.div(x, ops.sqrt(ops.maximum(square_sum, epsilon)), name=name)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """``(mean, variance)`` over ``axes`` (the biased variance, as TF)."""
    x = _node(x)
    keep = bool(keepdims if keepdims is not None else keep_dims)
    axes = tuple(axes) if isinstance(axes, list | tuple) else (axes,)
    mean = ops.mean(x, axis=axes, keepdims=True)
    diff = x - _stop(mean)
    variance = ops.mean(diff * diff, axis=axes, keepdims=keep)
    if not keep:
        mean = ops.mean(x, axis=axes)
    return mean, variance


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """The rows ``ids`` of ``params`` (``ids`` of any shape)."""
    if isinstance(params, list | tuple):
        if len(params) != 1:
            raise NotImplementedError("tf.nn.embedding_lookup: sharded params (a list of "
                                      "several tensors) are not implemented")
        params = params[0]
    if max_norm is not None:
        raise NotImplementedError("tf.nn.embedding_lookup: max_norm is not implemented")
    ids = ids if isinstance(ids, Node) else constant(np.asarray(ids, np.int64))
    return ops.gather(_node(params), ids, axis=0, name=name)


def in_top_k(predictions, targets, k, name=None):
    """Whether each row's target class is among its ``k`` largest predictions (ties at the
    boundary count as in, as in TF)."""
    predictions = _node(predictions)
    depth = predictions.shape[-1] if predictions.shape is not None else None
    if depth is None:
        raise ValueError("tf.nn.in_top_k: the number of classes must be known")
    targets = targets if isinstance(targets, Node) else constant(np.asarray(targets, np.int64))
    hot = ops.one_hot(targets, depth=depth, dtype=predictions.dtype)
    score = ops.sum(predictions * hot, axis=1, keepdims=True)
    above = ops.sum(ops.cast(ops.greater(predictions, score), dtype=predictions.dtype), axis=1)
    return ops.less(above, float(k), name=name)


def _zero_like_state(size, like, dtype):
    if isinstance(size, LSTMStateTuple):
        return LSTMStateTuple(_zero_like_state(size.c, like, dtype),
                              _zero_like_state(size.h, like, dtype))
    if isinstance(size, list | tuple):
        return type(size)(_zero_like_state(s, like, dtype) for s in size)
    return _zero_state(like, int(size), as_dtype(dtype or like.dtype))


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None,
               scope=None):
    """TF1's ``tf.nn.static_rnn``: the cell unrolled over ``inputs``, a list of
    ``(batch, input)`` tensors; returns ``(outputs, state)``, ``outputs`` one per step.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     xs = [tf.placeholder(tf.float32, [None, 3]) for _ in range(4)]
    ...     outs, state = tf.nn.static_rnn(tf.nn.rnn_cell.BasicRNNCell(5), xs, dtype=tf.float32)
    ...     len(outs), outs[-1].shape.as_list()
    (4, [None, 5])
    """
    if sequence_length is not None:
        raise NotImplementedError("tf.nn.static_rnn: sequence_length is not implemented; "
                                  "use tf.nn.dynamic_rnn")
    if not isinstance(inputs, list | tuple) or not inputs:
        raise TypeError("inputs must be a non-empty list of tensors, one per time step")
    inputs = [_node(x) for x in inputs]
    state = initial_state
    if state is None:
        if dtype is None:
            raise ValueError("If no initial_state is provided, dtype must be specified")
        state = _zero_like_state(cell.state_size, inputs[0], dtype)
    outputs = []
    with get_default_graph().name_scope("rnn" if scope is None else scope):
        for x in inputs:
            out, state = cell(x, state)
            outputs.append(out)
    return outputs, state


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """TF1's ``tf.nn.static_bidirectional_rnn``: ``cell_fw`` over ``inputs``, ``cell_bw``
    over them reversed; returns ``(outputs, state_fw, state_bw)``, each output the forward
    and backward outputs of its step joined on the last axis."""
    if sequence_length is not None:
        raise NotImplementedError("tf.nn.static_bidirectional_rnn: sequence_length is not "
                                  "implemented")
    graph = get_default_graph()
    with graph.name_scope(scope or "bidirectional_rnn"):
        with graph.name_scope("fw"):
            fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, scope="")
        with graph.name_scope("bw"):
            bw, state_bw = static_rnn(cell_bw, list(inputs)[::-1], initial_state_bw, dtype,
                                      scope="")
    outputs = [ops.concat([f, b], axis=-1) for f, b in zip(fw, bw[::-1])]
    return outputs, state_fw, state_bw


class MultiRNNCell:
    """``tf.nn.rnn_cell.MultiRNNCell(cells)``: the cells stacked, each one's output the
    next one's input; the state is a tuple of the cells' states."""

    def __init__(self, cells, state_is_tuple=True):
        if not state_is_tuple:
            raise NotImplementedError("MultiRNNCell: only state_is_tuple=True is implemented")
        self.cells = list(cells)

    @property
    def state_size(self):
        return tuple(c.state_size for c in self.cells)

    @property
    def output_size(self):
        return self.cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        return tuple(c.zero_state(batch_size, dtype) for c in self.cells)

    def __call__(self, inputs, state):
        new = []
        graph = get_default_graph()
        for k, (cell, s) in enumerate(zip(self.cells, state)):
            with graph.name_scope(f"multi_rnn_cell/cell_{k}"):  # TF's variable names
                inputs, s = cell(inputs, s)
            new.append(s)
        return inputs, tuple(new)


rnn_cell = types.SimpleNamespace(
    BasicRNNCell=BasicRNNCell, RNNCell=BasicRNNCell, BasicLSTMCell=BasicLSTMCell,
    LSTMCell=LSTMCell, LSTMStateTuple=LSTMStateTuple, MultiRNNCell=MultiRNNCell)

nn = types.SimpleNamespace(
    relu=tf_op(ops.relu, "Relu"), sigmoid=tf_op(ops.sigmoid, "Sigmoid"),
    tanh=tf_op(ops.tanh, "Tanh"), softplus=tf_op(ops.softplus, "Softplus"),
    softmax=softmax, log_softmax=log_softmax, softsign=softsign,
    relu6=relu6, leaky_relu=leaky_relu, elu=elu,
    softmax_cross_entropy_with_logits=softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2=softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits=sparse_softmax_cross_entropy_with_logits,
    sigmoid_cross_entropy_with_logits=sigmoid_cross_entropy_with_logits,
    weighted_cross_entropy_with_logits=weighted_cross_entropy_with_logits,
    bias_add=bias_add, dropout=dropout, l2_loss=l2_loss, l2_normalize=l2_normalize,
    moments=moments, embedding_lookup=embedding_lookup, in_top_k=in_top_k,
    conv2d=conv2d, max_pool2d=max_pool2d, max_pool=max_pool2d,
    avg_pool2d=avg_pool2d, avg_pool=avg_pool2d,
    dynamic_rnn=_dynamic_rnn, static_rnn=static_rnn, rnn_cell=rnn_cell,
    static_bidirectional_rnn=static_bidirectional_rnn,
)
"""The ``tf.nn`` namespace."""

__all__ = ["nn"]
