"""TF1's gradient checker (``tf.test.compute_gradient``, ``tf.test.compute_gradient_error``):
the Jacobian ``tf.gradients`` gives against central finite differences, both run in the
default session, as TF1's kernel tests check a gradient.

>>> import kernelgraph.compat.v1 as tf
>>> with tf.Graph().as_default(), tf.Session():
...     x = tf.placeholder(tf.float64, [3])
...     y = x * x
...     bool(tf.test.compute_gradient_error(x, [3], y, [3]) < 1e-6)
True
"""

from __future__ import annotations

import numpy as np

from ...graph import Node
from ...static.session import Session, get_default_session
from ...static.variables import placeholder
from .tensors import gradients

__all__ = ["compute_gradient", "compute_gradient_error"]


def _session(x: Node):
    sess = get_default_session()
    return sess if sess is not None else Session(x.graph)


def _jacobians(x, x_shape, x_data, y, y_shape, delta, extra_feed, sess):
    x_size, y_size = int(np.prod(x_shape)), int(np.prod(y_shape))
    dy = placeholder(y.dtype, list(y_shape))
    dx = gradients(y, x, grad_ys=dy)[0]
    feed = dict(extra_feed or {})
    theoretical = np.zeros((x_size, y_size), np.float64)
    if dx is not None:
        for col in range(y_size):
            dy_data = np.zeros(y_shape, y.dtype)
            dy_data.flat[col] = 1
            theoretical[:, col] = np.asarray(sess.run(dx, {**feed, x: x_data, dy: dy_data}),
                                             np.float64).ravel()
    numeric = np.zeros((x_size, y_size), np.float64)
    for row in range(x_size):
        pos, neg = x_data.copy(), x_data.copy()
        pos.flat[row] += delta
        neg.flat[row] -= delta
        y_pos = np.asarray(sess.run(y, {**feed, x: pos}))
        y_neg = np.asarray(sess.run(y, {**feed, x: neg}))
        numeric[row, :] = ((y_pos - y_neg) / (2 * delta)).astype(np.float64).ravel()
    return theoretical, numeric


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta: float = 1e-3,
                     init_targets=None, extra_feed_dict=None):
    """``(theoretical, numerical)`` Jacobians of ``y`` with respect to ``x``, each of shape
    ``(x size, y size)`` (a list of pairs when ``x`` is a list), as TF1's
    ``tf.test.compute_gradient``. ``x`` is fed ``x_init_value`` (default uniform [0, 1)).

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session():
    ...     x = tf.placeholder(tf.float64, [2])
    ...     t, n = tf.test.compute_gradient(x, [2], 3.0 * x, [2], x_init_value=np.ones(2))
    >>> t
    array([[3., 0.],
           [0., 3.]])
    """
    sess = _session(x[0] if isinstance(x, list | tuple) else x)
    if init_targets is not None:
        for target in init_targets:
            sess.run(target)
    if isinstance(x, list | tuple):
        inits = x_init_value or [None] * len(x)
        return [compute_gradient(xi, si, y, y_shape, vi, delta, None, extra_feed_dict)
                for xi, si, vi in zip(x, x_shape, inits, strict=True)]
    dtype = np.dtype(x.dtype)
    if x_init_value is not None:
        x_data = np.asarray(x_init_value, dtype).reshape(x_shape).copy()
    else:
        x_data = np.random.random_sample(x_shape).astype(dtype)
    return _jacobians(x, tuple(x_shape), x_data, y, tuple(y_shape), delta, extra_feed_dict,
                      sess)


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta: float = 1e-3,
                           init_targets=None, extra_feed_dict=None) -> float:
    """The largest difference between the theoretical and the numerical Jacobian (see
    :func:`compute_gradient`), as TF1's ``tf.test.compute_gradient_error``.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session():
    ...     x = tf.constant([1.0, 2.0], tf.float64)
    ...     float(tf.test.compute_gradient_error(x, [2], tf.exp(x), [2])) < 1e-5
    True
    """
    grads = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets,
                             extra_feed_dict)
    if isinstance(grads, tuple):
        grads = [grads]
    return max((float(np.max(np.abs(t - n))) if t.size else 0.0) for t, n in grads)
