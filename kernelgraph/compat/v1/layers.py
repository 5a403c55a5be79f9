"""``tf.layers``: TF1's functional layers (``dense``, ``conv2d``, ``max_pooling2d``,
``average_pooling2d``, ``dropout``, ``flatten``) and their object forms (``tf.layers.Dense``
...), over ``tf.get_variable``.

A layer opens a variable scope of its name (``dense``, ``dense_1`` ... unless ``name=`` is
given) and makes its variables there with TF's names and shapes: ``dense/kernel``
``(in, units)`` and ``dense/bias``, ``conv2d/kernel`` ``(kh, kw, in, filters)``. The
default initializers are TF's (Glorot-uniform kernels, zero biases); ``reuse=True`` with the
same ``name`` shares the variables.
"""

from __future__ import annotations

import types

import numpy as np

from ... import errors, ops
from ...graph import Node
from .control_flow import cond
from .conv import avg_pool2d, max_pool2d
from .conv import conv2d as _conv2d
from .fused_batch_norm import fused_training
from .initializers import ones_initializer, zeros_initializer
from .nn import _node, bias_add
from .nn import dropout as _nn_dropout
from .tensors import GraphKeys, add_to_collection  # TF1's collections (UPDATE_OPS)
from .variable_scope import get_variable, unique_scope_name, variable_scope


def _pair(value, what):
    v = [value] if isinstance(value, int) else list(value)
    if len(v) == 1:
        v = v * 2
    if len(v) != 2 or not all(isinstance(d, int | np.integer) for d in v):
        raise ValueError(f"The `{what}` argument must be a tuple of 2 integers. Received: "
                         f"{errors.shown(value)}")
    return int(v[0]), int(v[1])


def _padding(padding):
    p = str(padding).upper()
    if p not in ("SAME", "VALID"):
        raise ValueError(f"The `padding` argument must be one of \"valid\", \"same\". "
                         f"Received: {errors.shown(padding)}")
    return p


def _format(data_format):
    if data_format in ("channels_last", None):
        return "NHWC"
    if data_format == "channels_first":
        return "NCHW"
    raise ValueError(f"The `data_format` argument must be one of \"channels_first\", "
                     f"\"channels_last\". Received: {errors.shown(data_format)}")


def _activate(y, activation):
    return y if activation is None else activation(y)


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
          trainable=True, name=None, reuse=None):
    """``activation(inputs @ kernel + bias)`` over the last axis of ``inputs``.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 3])
    ...     y = tf.layers.dense(x, 2, kernel_initializer=tf.ones_initializer())
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(y, {x: [[1.0, 2.0, 3.0]]}))
    ...     [v.name for v in tf.trainable_variables()]
    [[6. 6.]]
    ['dense/kernel:0', 'dense/bias:0']
    """
    inputs = _node(inputs)
    shape = inputs.shape
    if shape is None or shape[-1] is None:
        raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                         "Found `None`.")
    with variable_scope(name, default_name="dense", reuse=reuse):
        kernel = get_variable("kernel", (shape[-1], int(units)), dtype=inputs.dtype,
                              initializer=kernel_initializer, trainable=trainable)
        x = inputs
        if len(shape) > 2:
            x = ops.reshape(inputs, shape=(-1, shape[-1]))
        y = ops.matmul(x, kernel, name="MatMul")
        if use_bias:
            bias = get_variable("bias", (int(units),), dtype=inputs.dtype,
                                initializer=bias_initializer or zeros_initializer(),
                                trainable=trainable)
            y = bias_add(y, bias)
        if len(shape) > 2:
            rest = tuple(shape[1:-1])
            if None in rest:
                raise NotImplementedError("tf.layers.dense: inputs of rank > 2 need every dim "
                                          f"but the first known, got {shape}")
            y = ops.reshape(y, shape=(-1, *rest, int(units)))
        return _activate(y, activation)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """A 2-d convolution layer: kernel ``(kh, kw, in_channels, filters)``, ``padding``
    'valid' or 'same' (TF's rules), then the bias and the activation."""
    inputs = _node(inputs)
    fmt = _format(data_format)
    shape = inputs.shape
    channels = None if shape is None else shape[-1] if fmt == "NHWC" else shape[1]
    if channels is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    kh, kw = _pair(kernel_size, "kernel_size")
    with variable_scope(name, default_name="conv2d", reuse=reuse):
        kernel = get_variable("kernel", (kh, kw, channels, int(filters)), dtype=inputs.dtype,
                              initializer=kernel_initializer, trainable=trainable)
        y = _conv2d(inputs, kernel, strides=list(_pair(strides, "strides")),
                    padding=_padding(padding), data_format=fmt,
                    dilations=list(_pair(dilation_rate, "dilation_rate")))
        if use_bias:
            bias = get_variable("bias", (int(filters),), dtype=inputs.dtype,
                                initializer=bias_initializer or zeros_initializer(),
                                trainable=trainable)
            y = bias_add(y, bias, data_format=fmt)
        return _activate(y, activation)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """Max pooling over ``pool_size`` windows moved by ``strides``."""
    fmt = _format(data_format)
    return max_pool2d(_node(inputs), ksize=list(_pair(pool_size, "pool_size")),
                      strides=list(_pair(strides, "strides")), padding=_padding(padding),
                      data_format=fmt, name=name)


def average_pooling2d(inputs, pool_size, strides, padding="valid",
                      data_format="channels_last", name=None):
    """Average pooling (padding 'valid' only, see ``tf.nn.avg_pool2d``)."""
    fmt = _format(data_format)
    return avg_pool2d(_node(inputs), ksize=list(_pair(pool_size, "pool_size")),
                      strides=list(_pair(strides, "strides")), padding=_padding(padding),
                      data_format=fmt, name=name)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Dropout at ``rate`` while ``training`` (a Python bool or a bool tensor, such as a
    placeholder fed True to train and False to evaluate); the identity otherwise."""
    inputs = _node(inputs)
    if isinstance(training, Node):
        return cond(training, lambda: _nn_dropout(inputs, rate=rate, seed=seed),
                    lambda: ops.identity(inputs))
    if not training:
        return inputs
    return _nn_dropout(inputs, rate=rate, noise_shape=noise_shape, seed=seed, name=name)


def flatten(inputs, name=None, data_format="channels_last"):
    """``(batch, everything else)``: the other dims must be known."""
    inputs = _node(inputs)
    shape = inputs.shape
    if shape is None or None in shape[1:]:
        raise ValueError(f"tf.layers.flatten needs every dim but the first known, got {shape}")
    if data_format == "channels_first" and len(shape) > 2:
        inputs = ops.transpose(inputs, perm=(0, *range(2, len(shape)), 1))
        shape = inputs.shape
    size = int(np.prod(shape[1:]))
    return ops.reshape(inputs, shape=(-1, size), name=name or "flatten")


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None,
                        moving_mean_initializer=None, moving_variance_initializer=None,
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    """TF1's batch normalization over ``axis`` (the channels): while ``training`` (a Python
    bool or a bool tensor) with the batch's mean and variance, else with the moving ones.
    Its variables are TF's (``gamma``, ``beta``, and the non-trainable ``moving_mean`` and
    ``moving_variance``); the moving averages' updates go to
    ``tf.GraphKeys.UPDATE_OPS``, to run with the train op as in TF1 (``momentum`` as TF's,
    and for 4-d inputs the variance they average is the unbiased one, as TF's fused
    kernel makes it).

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     y = tf.layers.batch_normalization(tf.constant([[1.0], [3.0]]), training=True)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(y).round(3).tolist())
    ...     len(tf.get_collection(tf.GraphKeys.UPDATE_OPS))
    [[-1.0], [1.0]]
    2
    """
    if renorm or virtual_batch_size is not None or adjustment is not None:
        raise NotImplementedError("batch_normalization: renorm, virtual_batch_size and "
                                  "adjustment are not implemented")
    x = _node(inputs)
    if x.shape is None:
        raise ValueError("batch_normalization: the rank of the inputs must be known")
    rank = len(x.shape)
    axis = axis % rank if isinstance(axis, int) else axis
    if not isinstance(axis, int) or x.shape[axis] is None:
        raise ValueError(f"batch_normalization: axis {axis} of the inputs must be known, "
                         f"got shape {x.shape}")
    channels = x.shape[axis]
    reduce = tuple(k for k in range(rank) if k != axis)
    keep = tuple(channels if k == axis else 1 for k in range(rank))
    unbiased = rank == 4 and axis in (1, 3) and fused is not False
    with variable_scope(name, default_name="batch_normalization", reuse=reuse):
        gamma = get_variable("gamma", (channels,), x.dtype, gamma_initializer or
                             ones_initializer(), trainable=trainable) if scale else None
        beta = get_variable("beta", (channels,), x.dtype, beta_initializer or
                            zeros_initializer(), trainable=trainable) if center else None
        moving_mean = get_variable("moving_mean", (channels,), x.dtype,
                                   moving_mean_initializer or zeros_initializer(),
                                   trainable=False)
        moving_var = get_variable("moving_variance", (channels,), x.dtype,
                                  moving_variance_initializer or ones_initializer(),
                                  trainable=False)

        def normalized(mean, var):
            y = (x - ops.reshape(mean, shape=keep)) * ops.reshape(
                ops.rsqrt(var + epsilon) if hasattr(ops, "rsqrt") else
                1.0 / ops.sqrt(var + epsilon), shape=keep)
            if gamma is not None:
                y = y * ops.reshape(gamma, shape=keep)
            if beta is not None:
                y = y + ops.reshape(beta, shape=keep)
            return y

        if training is False or training is None:
            return normalized(moving_mean, moving_var)
        if unbiased and training is True:  # TF1's fused kernel: one op each way
            y, mean, var = fused_training(x, axis, gamma, beta, epsilon)
        else:
            mean = ops.mean(x, axis=reduce)
            diff = x - ops.reshape(mean, shape=keep)
            var = ops.mean(diff * diff, axis=reduce)
        update_var = var
        if unbiased:
            count = ops.cast(ops.div(ops.sum(ops.ones_like(x)), float(channels)),
                             dtype=x.dtype)
            update_var = var * count / ops.maximum(count - 1.0, 1.0)
        if isinstance(training, Node):
            y = cond(training, lambda: normalized(mean, var),
                     lambda: normalized(moving_mean, moving_var))
            new_mean = cond(training, lambda: mean, lambda: moving_mean)
            new_var = cond(training, lambda: update_var, lambda: moving_var)
        elif training is True and unbiased:
            new_mean, new_var = mean, update_var
        else:
            y, new_mean, new_var = normalized(mean, var), mean, update_var
        decay = 1.0 - momentum
        add_to_collection(GraphKeys.UPDATE_OPS,
                          moving_mean.assign_sub((moving_mean - new_mean) * decay))
        add_to_collection(GraphKeys.UPDATE_OPS,
                          moving_var.assign_sub((moving_var - new_var) * decay))
        return y


class Layer:
    """A layer object: its variables are made at the first call (in a variable scope of its
    name) and shared by the later calls."""

    _default = "layer"

    def __init__(self, name=None, **kwargs):
        self.name = name
        self._scope = None
        self.built = False

    def __call__(self, inputs, *args, **kwargs):
        if self._scope is None:
            self.name = self.name or unique_scope_name(self._default)
            self._reuse = None
        else:
            self._reuse = True
        out = self.call(inputs, *args, **kwargs)
        self.built = True
        return out

    apply = __call__


class Dense(Layer):
    """``tf.layers.Dense(units, activation=None, ...)``: ``dense`` as an object."""

    _default = "dense"

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=None, trainable=True, name=None, **kwargs):
        super().__init__(name)
        self.units, self.activation, self.use_bias = units, activation, use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.trainable = trainable

    def call(self, inputs):
        out = dense(inputs, self.units, self.activation, self.use_bias,
                    self.kernel_initializer, self.bias_initializer, trainable=self.trainable,
                    name=self.name, reuse=self._reuse)
        self._scope = self.name
        return out


class Conv2D(Layer):
    """``tf.layers.Conv2D(filters, kernel_size, ...)``: ``conv2d`` as an object."""

    _default = "conv2d"

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=None, trainable=True,
                 name=None, **kwargs):
        super().__init__(name)
        self.args = dict(filters=filters, kernel_size=kernel_size, strides=strides,
                         padding=padding, data_format=data_format, dilation_rate=dilation_rate,
                         activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer, trainable=trainable)

    def call(self, inputs):
        out = conv2d(inputs, name=self.name, reuse=self._reuse, **self.args)
        self._scope = self.name
        return out


class MaxPooling2D(Layer):
    _default = "max_pooling2d"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name)
        self.args = dict(pool_size=pool_size, strides=strides, padding=padding,
                         data_format=data_format)

    def call(self, inputs):
        return max_pooling2d(inputs, **self.args)


class Flatten(Layer):
    _default = "flatten"

    def call(self, inputs):
        return flatten(inputs)


class Dropout(Layer):
    _default = "dropout"

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name)
        self.rate, self.seed = rate, seed

    def call(self, inputs, training=False):
        return dropout(inputs, self.rate, seed=self.seed, training=training)


layers = types.SimpleNamespace(
    dense=dense, conv2d=conv2d, max_pooling2d=max_pooling2d,
    batch_normalization=batch_normalization,
    average_pooling2d=average_pooling2d, dropout=dropout, flatten=flatten,
    Layer=Layer, Dense=Dense, Conv2D=Conv2D, MaxPooling2D=MaxPooling2D, Flatten=Flatten,
    Dropout=Dropout,
)
"""The ``tf.layers`` namespace."""

__all__ = ["layers"]
