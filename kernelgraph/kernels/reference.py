"""NumPy reference implementations: the test oracle for every kernel (never run by the engine).

Each takes the same arguments as the op's forward function and returns float64 results
where precision matters, so tests can compare any kernel against them with a tolerance.
"""

from __future__ import annotations

import numpy as np


def softmax(x, axis=-1):
    z = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return z / np.sum(z, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def relu(x):
    return np.maximum(x, 0)


def sparse_softmax_cross_entropy(logits, labels):
    return -log_softmax(logits, axis=-1)[np.arange(len(labels)), labels]


def sum_to_shape(g, shape):
    """Sum ``g`` over the axes that broadcasting added or stretched to reach ``shape``."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    stretched = tuple(i for i, d in enumerate(shape) if d == 1 and g.shape[i] != 1)
    return g.sum(axis=stretched, keepdims=True) if stretched else g


REFERENCE = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "pow": np.power, "neg": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "tanh": np.tanh, "sigmoid": sigmoid, "relu": relu, "abs": np.abs, "sign": np.sign,
    "maximum": np.maximum, "minimum": np.minimum, "equal": np.equal,
    "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal, "where": np.where,
    "sum": lambda x, axis=None, keepdims=False: np.sum(x, axis=axis, keepdims=keepdims),
    "mean": lambda x, axis=None, keepdims=False: np.mean(x, axis=axis, keepdims=keepdims),
    "max": lambda x, axis=None, keepdims=False: np.max(x, axis=axis, keepdims=keepdims),
    "matmul": np.matmul, "reshape": lambda x, shape: np.reshape(x, shape),
    "transpose": lambda x, perm=None: np.transpose(x, perm),
    "broadcast_to": lambda x, shape: np.broadcast_to(x, shape),
    "softmax": softmax, "log_softmax": log_softmax,
    "softmax_cross_entropy": sparse_softmax_cross_entropy,
    "cast": lambda x, dtype: x.astype(dtype),
}
