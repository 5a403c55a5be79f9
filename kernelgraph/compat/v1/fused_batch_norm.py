"""TF1's fused batch normalisation over the fused batch_norm ops
(:mod:`kernelgraph.ops.batch_norm`): ``tf.nn.fused_batch_norm`` and the training path of
``tf.layers.batch_normalization`` on 4-D inputs, which TF1 runs on its fused kernel.

TF's numbers: the epsilon raised to at least 1.001e-5 (TF's wrapper does so, for cuDNN),
the batch variance returned for the moving average the unbiased one (``M / (M - 1)``
times the biased variance the output is normalised with), and no gradient through the
returned batch statistics. NHWC inputs are normalised as rows of C values (a reshape, no
copy), NCHW ones as they are.

>>> import numpy as np
>>> import kernelgraph.compat.v1 as tf
>>> with tf.Graph().as_default():
...     x = tf.constant(np.array([1.0, 3.0, 5.0, 7.0], np.float32).reshape(1, 2, 2, 1))
...     y, mean, var = tf.nn.fused_batch_norm(x, [1.0], [0.0], epsilon=0.0)
...     with tf.Session() as sess:
...         print([round(v, 3) for v in sess.run(y).ravel().tolist()], sess.run([mean, var]))
[-1.342, -0.447, 0.447, 1.342] [array([4.], dtype=float32), array([6.6666665], dtype=float32)]
"""

from __future__ import annotations

import numpy as np

from ... import ops
from ...ops import batch_norm as BN
from .nn import _node

MIN_EPSILON = 1.001e-5  # TF's fused_batch_norm raises a smaller epsilon to this


def _row(stats, k):
    return ops.getitem(stats, index=ops.normalize_index((k,)))


def fused_training(x, axis: int, scale, offset, epsilon: float):
    """(y, batch mean, biased batch variance) of the 4-D node ``x`` normalised over all
    axes but ``axis`` (1: NCHW, 3: NHWC) with its own statistics."""
    c = x.shape[axis]
    rows = x if axis == 1 else ops.reshape(x, shape=(-1, c))
    dtype = np.dtype(x.dtype)
    scale = _node(scale, x.dtype) if scale is not None else _node(np.ones(c, dtype))
    offset = _node(offset, x.dtype) if offset is not None else _node(np.zeros(c, dtype))
    eps = max(float(epsilon), MIN_EPSILON)
    stats = BN.batch_norm_stats(rows, eps=eps)
    y = BN.batch_norm(rows, stats, scale, offset, eps=eps, training=True)
    if axis != 1:
        y = ops.reshape_like(y, x)
    return y, _row(stats, 0), _row(stats, 1)


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None,
                     exponential_avg_factor=1.0):
    """TF1's ``tf.nn.fused_batch_norm`` on 4-D inputs: ``(y, batch_mean, batch_variance)``
    while training (the variance unbiased), else ``x`` normalised with the ``mean`` and
    ``variance`` given and those returned."""
    x = _node(x)
    if data_format not in ("NHWC", "NCHW") or x.shape is None or len(x.shape) != 4:
        raise ValueError(f"fused_batch_norm: expected a 4-D input in data_format 'NHWC' or "
                         f"'NCHW', got shape {x.shape} and {data_format!r}")
    axis = 3 if data_format == "NHWC" else 1
    if x.shape[axis] is None:
        raise ValueError(f"fused_batch_norm: the channels (axis {axis}) must be known, got "
                         f"shape {x.shape}")
    if exponential_avg_factor != 1.0:
        raise NotImplementedError("fused_batch_norm: exponential_avg_factor other than 1.0 "
                                  "is not implemented")
    if is_training:
        y, batch_mean, batch_var = fused_training(x, axis, scale, offset, epsilon)
        m = ops.cast(ops.div(ops.sum(ops.ones_like(x)), float(x.shape[axis])), dtype=x.dtype)
        batch_var = batch_var * m / ops.maximum(m - 1.0, 1.0)
        return ops.identity(y, name=name or "FusedBatchNorm"), batch_mean, batch_var
    if mean is None or variance is None:
        raise ValueError("fused_batch_norm: both mean and variance must be given when "
                         "is_training is False")
    mean, variance = _node(mean, x.dtype), _node(variance, x.dtype)
    c = x.shape[axis]
    rows = x if axis == 1 else ops.reshape(x, shape=(-1, c))
    eps = max(float(epsilon), MIN_EPSILON)
    stats = ops.stack([mean, variance, ops.rsqrt(variance + eps)])
    y = BN.batch_norm(rows, stats, _node(scale, x.dtype), _node(offset, x.dtype), eps=eps,
                      training=False)
    if axis != 1:
        y = ops.reshape_like(y, x)
    return ops.identity(y, name=name or "FusedBatchNorm"), mean, variance
