"""TensorFlow 1's names for kernelgraph's ops, dtypes and variables (``tf.multiply``,
``tf.reduce_sum``, ``tf.assign``, ``tf.concat``, ``tf.random_normal`` ...): each one a
kernelgraph op or a thin call of one, with TF's argument names."""

from __future__ import annotations

import numpy as np

from ... import errors, ops
from ...devices import device as kg_device
from ...dtypes import as_dtype, bool_, float32, int64
from ...graph import Node
from ...static.variables import constant, global_variables_initializer

bool = bool_  # noqa: A001 - tf.bool
Tensor = Operation = Node
DType = np.dtype

add, subtract, multiply, divide, truediv = ops.add, ops.sub, ops.mul, ops.div, ops.div
negative, pow, square, sqrt, exp, log = ops.neg, ops.pow, ops.square, ops.sqrt, ops.exp, ops.log
abs, sign, maximum, minimum, where = ops.abs, ops.sign, ops.maximum, ops.minimum, ops.where
tanh, sigmoid, matmul, identity = ops.tanh, ops.sigmoid, ops.matmul, ops.identity
equal, not_equal, less, less_equal = ops.equal, ops.not_equal, ops.less, ops.less_equal
greater, greater_equal = ops.greater, ops.greater_equal
zeros_like, ones_like = ops.zeros_like, ops.ones_like
initialize_all_variables = global_variables_initializer


def _reduce(op):
    def reduce(input_tensor, axis=None, keepdims=False, name=None, keep_dims=None):
        if keep_dims is not None:
            keepdims = keep_dims
        return op(input_tensor, axis=axis, keepdims=bool_py(keepdims), name=name)
    reduce.__name__ = f"reduce_{op.name}"
    reduce.__doc__ = f"tf.reduce_{op.name}(input_tensor, axis=None, keepdims=False)"
    return reduce


def bool_py(x):
    return True if x else False


reduce_sum, reduce_mean, reduce_max = _reduce(ops.sum), _reduce(ops.mean), _reduce(ops.max)


def reshape(tensor, shape, name=None):
    return ops.reshape(tensor, shape=tuple(shape), name=name)


def transpose(a, perm=None, name=None):
    # perm is checked by the op (a list, tuple or 1-D int array of distinct axes in range).
    return ops.transpose(a, perm=perm, name=name)


def broadcast_to(input, shape, name=None):  # noqa: A002 - TF's argument name
    return ops.broadcast_to(input, shape=tuple(shape), name=name)


def cast(x, dtype, name=None):
    return ops.cast(x, dtype=as_dtype(dtype), name=name)


def zeros(shape, dtype=float32, name=None):
    return constant(np.zeros(shape), dtype=dtype, name=name or "zeros")


def ones(shape, dtype=float32, name=None):
    return constant(np.ones(shape), dtype=dtype, name=name or "ones")


def assign(ref, value, name=None):
    return ref.assign(value, name=name)


def assign_add(ref, value, name=None):
    return ref.assign_add(value, name=name)


def assign_sub(ref, value, name=None):
    return ref.assign_sub(value, name=name)


def _sparse_xent(_sentinel=None, labels=None, logits=None, name=None):
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...)")
    return ops.softmax_cross_entropy(logits, labels, name=name)


def disable_v2_behavior() -> None:
    """Nothing to disable: kernelgraph's static mode is already TF1's graph mode."""


disable_eager_execution = disable_v2_behavior
device = kg_device  # tf.device('/gpu:0') places nodes, as kg.device('cuda') does


# -- indexing and random ops -------------------------------------------------------------------
def concat(values, axis, name=None):
    """tf.concat(values, axis)."""
    return ops.concat(values, axis=axis, name=name)


def stack(values, axis=0, name=None):
    """tf.stack(values, axis=0)."""
    return ops.stack(values, axis=axis, name=name)


def split(value, num_or_size_splits, axis=0, name=None):
    """tf.split(value, num_or_size_splits, axis=0): a list of pieces."""
    return ops.split(value, num_or_size_splits, axis=axis, name=name)


def gather(params, indices, axis=0, name=None):
    """tf.gather(params, indices, axis=0)."""
    return ops.gather(params, indices, axis=axis, name=name)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """tf.pad(tensor, paddings, constant_values=0) (CONSTANT mode only)."""
    if str(mode).upper() != "CONSTANT":
        raise NotImplementedError(f"tf.pad: only mode='CONSTANT' is implemented, got "
                                  f"{errors.shown(mode)}")
    return ops.pad(tensor, paddings=paddings, value=constant_values, name=name)


def one_hot(indices, depth, dtype=float32, name=None):
    """tf.one_hot(indices, depth) (on_value 1, off_value 0)."""
    if not isinstance(indices, Node):  # graph mode even for a Python list
        indices = constant(indices, dtype=int64)
    return ops.one_hot(indices, depth=depth, dtype=dtype, name=name)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """tf.clip_by_value(t, min, max) with Python-number bounds."""
    return ops.clip(t, min=clip_value_min, max=clip_value_max, name=name)


def argmax(input, axis=None, name=None, output_type=int64):  # noqa: A002 - TF's name
    """tf.argmax(input, axis) (int64; axis None means 0, as in TF1)."""
    return ops.argmax(input, axis=0 if axis is None else axis, name=name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    """tf.random_normal / tf.random.normal: a new draw each Session.run."""
    return ops.random.random_normal(shape, mean=mean, std=stddev, seed=seed, dtype=dtype,
                                    name=name)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=float32, seed=None, name=None):
    """tf.random_uniform / tf.random.uniform: a new draw each Session.run."""
    return ops.random.random_uniform(shape, low=minval, high=maxval, seed=seed, dtype=dtype,
                                     name=name)


def _nn_dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    if noise_shape is not None:
        raise NotImplementedError("tf.nn.dropout: noise_shape is not implemented")
    if (rate is None) == (keep_prob is None):
        raise ValueError("tf.nn.dropout: pass exactly one of rate= or keep_prob=")
    return ops.dropout(x, p=rate if rate is not None else 1.0 - keep_prob, seed=seed)


set_random_seed = ops.random.seed
