"""More of ``tf.nn``, each a composition of kernelgraph's ops with TF1's formula (so its
numbers and gradients are TF1's): ``xw_plus_b``, ``batch_normalization``,
``batch_norm_with_global_normalization``, ``selu``, ``zero_fraction``, ``lrn``,
``conv2d_transpose`` (conv2d's input gradient), ``top_k``, the candidate sampler
``log_uniform_candidate_sampler`` and the sampled losses ``nce_loss`` and
``sampled_softmax_loss`` (TF1's ``_compute_sampled_logits``); and the random ops
``tf.truncated_normal`` and ``tf.multinomial``."""

from __future__ import annotations

import collections

import numpy as np

from ... import ops
from ...dtypes import as_dtype, float32, int32, int64
from ...graph import Node
from ...ops import sampling, selection
from .conv import _nchw, _same_pads, _spatial
from .fused_batch_norm import fused_batch_norm
from .nn import _node, _stop, bias_add, sigmoid_cross_entropy_with_logits
from .nn import softmax_cross_entropy_with_logits_v2 as _softmax_xent
from .spellings import _dims
from .tensors import constant

_FLT_MAX = float(np.finfo(np.float32).max)


def xw_plus_b(x, weights, biases, name=None):
    """``matmul(x, weights) + biases``."""
    return bias_add(ops.matmul(_node(x), _node(weights)), biases, name=name or "xw_plus_b")


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """``(x - mean) * scale / sqrt(variance + epsilon) + offset``, as TF computes it:
    ``x * inv + (offset - mean * inv)`` with ``inv = scale * rsqrt(variance + epsilon)``
    (``offset``, ``scale`` may be None)."""
    x = _node(x)
    inv = ops.rsqrt(_node(variance, x.dtype) + variance_epsilon)
    if scale is not None:
        inv = inv * _node(scale, x.dtype)
    shift = -(_node(mean, x.dtype) * inv) if offset is None else \
        _node(offset, x.dtype) - _node(mean, x.dtype) * inv
    return ops.add(x * inv, shift, name=name or "batchnorm")


def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None,
                                         variance_epsilon=None,
                                         scale_after_normalization=None, name=None,
                                         input=None, mean=None, variance=None):  # noqa: A002
    """TF1's older batch norm: ``batch_normalization`` with ``gamma`` used only if
    ``scale_after_normalization``."""
    t = input if input is not None else t
    m = mean if mean is not None else m
    v = variance if variance is not None else v
    return batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None,
                               variance_epsilon, name=name)


def selu(features, name=None):
    """``scale * (x if x > 0 else alpha * (exp(x) - 1))`` with SELU's constants."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    x = _node(features)
    negative = ops.where(x > 0.0, ops.zeros_like(x), x)  # expm1 never sees a large x
    return ops.mul(ops.where(x > 0.0, x, ops.expm1(negative) * alpha), scale,
                   name=name or "Selu")


def zero_fraction(value, name=None):
    """The fraction of ``value``'s elements that are zero, a float32 scalar."""
    x = _node(value)
    return ops.mean(ops.cast(ops.equal(x, 0), dtype=float32), name=name or "zero_fraction")


def lrn(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, name=None):  # noqa: A002
    """TF's local response normalisation over the last axis: ``x / (bias + alpha *
    sum(x[..., d - r : d + r + 1] ** 2)) ** beta``."""
    x = _node(input)
    if x.shape is None or len(x.shape) != 4 or x.shape[-1] is None:
        raise ValueError(f"tf.nn.lrn: input must be 4-D with a known depth, got {x.shape}")
    r, depth = int(depth_radius), x.shape[-1]
    padded = ops.pad(x * x, paddings=((0, 0),) * 3 + ((r, r),), value=0.0)
    window = padded[..., 0:depth]
    for k in range(1, 2 * r + 1):
        window = window + padded[..., k:k + depth]
    return ops.div(x, ops.pow(window * alpha + bias, beta), name=name or "LRN")


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None,  # noqa: A002
                     padding="SAME", data_format="NHWC", name=None, input=None,  # noqa: A002
                     filters=None, dilations=None):
    """TF1's ``tf.nn.conv2d_transpose``: the gradient of ``conv2d`` with respect to its
    input, for an input of ``output_shape``; ``filter`` is [height, width, output_channels,
    in_channels] (conv2d's HWIO read backwards)."""
    value = value if value is not None else input
    w = filter if filter is not None else filters
    if dilations not in (None, 1, [1, 1, 1, 1]):
        raise NotImplementedError("tf.nn.conv2d_transpose: dilations are not implemented")
    out = _dims(output_shape, "tf.nn.conv2d_transpose")
    if len(out) != 4 or None in out:
        raise ValueError(f"tf.nn.conv2d_transpose: output_shape must be 4 known sizes, got "
                         f"{output_shape}")
    stride = _spatial(strides, "strides", data_format)
    g = _nchw(_node(value), data_format)
    w = ops.transpose(_node(w, g.dtype), perm=(3, 2, 0, 1))  # HWOI -> IOHW: conv2d's OIHW
    n, c, h, wd = out if data_format == "NCHW" else (out[0], out[3], out[1], out[2])
    kernel = tuple(w.shape[2:]) if w.shape is not None else None
    if kernel is None or None in kernel:
        raise ValueError("tf.nn.conv2d_transpose: the filter's spatial size must be known")
    if padding == "SAME":
        like = constant(np.zeros((1, 1, h, wd), np.float32))
        (t, b), (l_, r) = _same_pads(like, kernel, stride, (1, 1), "conv2d_transpose")
    elif padding == "VALID":
        t = b = l_ = r = 0
    else:
        raise ValueError(f"tf.nn.conv2d_transpose: padding must be 'SAME' or 'VALID', got "
                         f"{padding!r}")
    like = constant(np.zeros((n, c, h + t + b, wd + l_ + r)), dtype=g.dtype)
    x = ops.conv2d_backward_input(g, w, like, stride=stride, padding=0, dilation=(1, 1))
    x = x[:, :, t:t + h, l_:l_ + wd]
    y = x if data_format == "NCHW" else ops.transpose(x, perm=(0, 2, 3, 1))
    return ops.identity(y, name=name or "conv2d_transpose")


TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])
TopKV2.__doc__ = "TF's named result of ``tf.nn.top_k``: ``.values`` and ``.indices``."


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002 - TF's names
    """``(values, indices)`` of the ``k`` largest entries of the last axis, largest first,
    an earlier entry first among equal ones (int32 indices, as TF's).

    >>> import kernelgraph.compat.v1 as tf
    >>> values, indices = tf.nn.top_k(tf.constant([[1.0, 5.0, 3.0, 5.0]]), k=2)
    >>> with tf.Session() as sess:
    ...     print(sess.run(indices))
    [[1 3]]
    """
    values, indices = selection.top_k(_node(input), k=k, sorted=sorted)
    return TopKV2(ops.identity(values, name=name or "TopKV2"),
                  ops.cast(indices, dtype=int32))


# -- candidate sampling and the sampled losses -----------------------------------------------
def _log_uniform_prob(classes: Node, range_max: int) -> Node:
    c = ops.cast(classes, dtype=np.float64)
    return ops.div(ops.log(c + 2.0) - ops.log(c + 1.0), float(np.log(range_max + 1.0)))


def _expected(prob: Node, tries: Node, num_sampled: int, unique: bool) -> Node:
    if not unique:
        return ops.cast(prob * float(num_sampled), dtype=float32)
    # the probability of being drawn at least once in `tries` draws
    return ops.cast(ops.neg(ops.expm1(ops.cast(tries, dtype=np.float64) *
                                      ops.log1p(ops.neg(prob)))), dtype=float32)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """TF1's log-uniform (Zipfian) sampler: ``(sampled_candidates, true_expected_count,
    sampled_expected_count)``; class ``c`` has probability ``log((c + 2) / (c + 1)) /
    log(range_max + 1)``, and with ``unique`` the expected counts are those of ``tries``
    draws (the number it took to find ``num_sampled`` distinct classes)."""
    true_classes = ops.cast(_node(true_classes), dtype=int64)
    drawn = sampling.log_uniform_candidates(num_sampled, range_max, unique, seed=seed,
                                            static=True)
    sampled, tries = drawn[:num_sampled], drawn[num_sampled]
    true_count = _expected(_log_uniform_prob(true_classes, range_max), tries, num_sampled,
                           unique)
    sampled_count = _expected(_log_uniform_prob(sampled, range_max), tries, num_sampled,
                              unique)
    return (_stop(sampled), _stop(true_count), _stop(sampled_count))


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                            num_true, sampled_values, subtract_log_q, remove_accidental_hits,
                            seed):
    """TF1's ``_compute_sampled_logits``: ``(logits, labels)`` of the true classes and the
    sampled ones, each row's true columns first."""
    if isinstance(weights, list | tuple):
        if len(weights) != 1:
            raise NotImplementedError("sampled losses: sharded weights (a list of several "
                                      "tensors) are not implemented")
        weights = weights[0]
    if isinstance(biases, list | tuple):
        biases = biases[0]
    inputs = _node(inputs)
    weights, biases = _node(weights, inputs.dtype), _node(biases, inputs.dtype)
    labels = ops.cast(_node(labels), dtype=int64)
    if labels.shape is not None and len(labels.shape) == 1:
        labels = ops.reshape(labels, shape=(-1, 1))
    labels_flat = ops.reshape(labels, shape=(-1,))
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True,
                                                       num_classes, seed=seed)
    sampled, true_expected, sampled_expected = (_stop(_node(v)) for v in sampled_values)
    sampled = ops.cast(sampled, dtype=int64)
    true_w = ops.gather(weights, labels_flat, axis=0)  # [batch * num_true, dim]
    sampled_w = ops.gather(weights, sampled, axis=0)  # [num_sampled, dim]
    sampled_logits = ops.matmul(inputs, ops.transpose(sampled_w, perm=(1, 0)))
    dim = weights.shape[1]
    true_w = ops.reshape(true_w, shape=(-1, num_true, dim))
    rows = ops.reshape(inputs, shape=(-1, 1, dim)) * true_w
    true_logits = ops.sum(rows, axis=-1) + ops.reshape(ops.gather(biases, labels_flat, axis=0),
                                                       shape=(-1, num_true))
    sampled_logits = sampled_logits + ops.gather(biases, sampled, axis=0)
    if remove_accidental_hits:  # a sampled class that is a row's true class: -FLT_MAX
        hit = ops.equal(ops.reshape(labels, shape=(-1, num_true, 1)),
                        ops.reshape(sampled, shape=(1, 1, -1)))
        hit = ops.max(ops.cast(hit, dtype=inputs.dtype), axis=1)
        sampled_logits = sampled_logits + hit * (-_FLT_MAX)
    if subtract_log_q:
        true_logits = true_logits - ops.log(ops.cast(true_expected, dtype=inputs.dtype))
        sampled_logits = sampled_logits - ops.log(ops.cast(sampled_expected,
                                                           dtype=inputs.dtype))
    logits = ops.concat([true_logits, sampled_logits], axis=1)
    targets = ops.concat([ops.ones_like(true_logits) / float(num_true),
                          ops.zeros_like(sampled_logits)], axis=1)
    return logits, targets


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss", seed=None):
    """TF1's noise-contrastive estimation loss, one value per row: the sigmoid cross
    entropies of the true classes (target ``1 / num_true``) and of ``num_sampled`` classes
    drawn by the log-uniform sampler (target 0), logits corrected by ``log`` of their
    expected counts. ``sampled_values`` (a sampler's triple) fixes the draw."""
    logits, targets = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
        True, remove_accidental_hits, seed)
    losses = sigmoid_cross_entropy_with_logits(labels=targets, logits=logits)
    return ops.sum(losses, axis=1, name=name)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes,
                         num_true=1, sampled_values=None, remove_accidental_hits=True,
                         partition_strategy="mod", name="sampled_softmax_loss", seed=None):
    """TF1's sampled softmax loss, one value per row: the softmax cross entropy over the
    true classes and ``num_sampled`` sampled ones (accidental hits removed by default)."""
    logits, targets = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
        True, remove_accidental_hits, seed)
    return _softmax_xent(labels=_stop(targets), logits=logits, name=name)


# -- random ----------------------------------------------------------------------------------
def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    """TF1's ``tf.truncated_normal``: normal draws, each one beyond two standard deviations
    drawn again (a new draw each run, seeded by ``tf.set_random_seed`` and ``seed``)."""
    dims = _dims(shape, "tf.truncated_normal")
    if None in dims:
        raise ValueError(f"tf.truncated_normal: the shape must be known, got {shape}")
    return sampling.truncated_normal(dims, mean=float(mean), std=float(stddev), seed=seed,
                                     dtype=as_dtype(dtype), static=True,
                                     name=name or "truncated_normal")


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """TF1's ``tf.multinomial``: ``num_samples`` class indices per row of ``logits``
    [batch, classes] (unnormalised log probabilities), int64 by default."""
    out = sampling.multinomial(_node(logits), int(num_samples), seed=seed,
                               dtype=as_dtype(output_dtype or int64))
    return ops.identity(out, name=name or "multinomial")


NN_NAMES = {
    "xw_plus_b": xw_plus_b, "batch_normalization": batch_normalization,
    "batch_norm_with_global_normalization": batch_norm_with_global_normalization,
    "fused_batch_norm": fused_batch_norm, "selu": selu, "zero_fraction": zero_fraction, "lrn": lrn,
    "local_response_normalization": lrn, "conv2d_transpose": conv2d_transpose,
    "top_k": top_k, "log_uniform_candidate_sampler": log_uniform_candidate_sampler,
    "nce_loss": nce_loss, "sampled_softmax_loss": sampled_softmax_loss,
}
"""The names this module adds to ``tf.nn``."""

__all__ = ["multinomial", "truncated_normal"]
