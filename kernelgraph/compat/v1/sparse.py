"""TF1's sparse tensors, as far as tutorials use them (a CTC speech model's labels and its
``tf.edit_distance`` metric): ``tf.SparseTensor`` (three graph tensors: ``indices`` [N, rank]
int64, ``values`` [N], ``dense_shape`` [rank] int64), ``tf.SparseTensorValue`` (the
namedtuple of arrays a Session returns for one and takes as its feed),
``tf.sparse_placeholder``, ``tf.sparse_to_dense``, ``tf.sparse_tensor_to_dense`` and
``tf.edit_distance``. kernelgraph has no sparse kernels: the values are kept and scattered
into a dense tensor by the dense ops (``sparse_to_dense`` is the accumulating scatter that is
gather's gradient).

>>> import kernelgraph.compat.v1 as tf
>>> sp = tf.sparse_placeholder(tf.float32, shape=[2, 3])
>>> dense = tf.sparse_tensor_to_dense(sp)
>>> with tf.Session() as sess:
...     print(sess.run(dense, {sp: tf.SparseTensorValue([[0, 1], [1, 0]], [5.0, 7.0], [2, 3])}))
[[0. 5. 0.]
 [7. 0. 0.]]
"""

from __future__ import annotations

import collections

import numpy as np

from ... import ops
from ...devices import device
from ...dtypes import int64
from ...graph import Node
from ...ops.edit_distance import edit_distance as _edit_distance_op
from ...static.variables import placeholder
from .tensor_shape import as_shape
from .tensors import constant

SparseTensorValue = collections.namedtuple("SparseTensorValue",
                                           ["indices", "values", "dense_shape"])
SparseTensorValue.__doc__ = ("TF1's value of a SparseTensor: what ``Session.run`` returns for "
                             "one, and what a ``sparse_placeholder`` is fed.")


def _node(x, dtype=None) -> Node:
    return x if isinstance(x, Node) else constant(x, dtype=dtype)


class SparseTensor:
    """TF1's ``tf.SparseTensor(indices, values, dense_shape)``: the ``values`` at
    ``indices`` of a tensor of ``dense_shape``, zero elsewhere."""

    def __init__(self, indices, values, dense_shape):
        self._indices = ops.cast(_node(indices, int64), dtype=int64) if not (
            isinstance(indices, Node) and indices.dtype == int64) else indices
        self._values = _node(values)
        self._dense_shape = ops.cast(_node(dense_shape, int64), dtype=int64) if not (
            isinstance(dense_shape, Node) and dense_shape.dtype == int64) else dense_shape

    indices = property(lambda self: self._indices, doc="int64 [N, rank]: where the values are")
    values = property(lambda self: self._values, doc="[N]: the values")
    dense_shape = property(lambda self: self._dense_shape, doc="int64 [rank]: the dense shape")

    @property
    def dtype(self):
        """The values' dtype."""
        return self._values.dtype

    @property
    def shape(self):
        """The dense shape as a TensorShape (known where ``dense_shape`` is a constant)."""
        d = self._dense_shape
        if d.op.name == "const":
            return as_shape([int(v) for v in d.attrs["value"]])
        rank = d.shape[0] if d.shape is not None else None
        return as_shape(None if rank is None else [None] * rank)

    @property
    def graph(self):
        return self._values.graph

    def parts(self) -> SparseTensorValue:
        """The three graph tensors, as the namedtuple a Session feeds and fetches."""
        return SparseTensorValue(self._indices, self._values, self._dense_shape)

    def __repr__(self):
        return (f"SparseTensor(indices={self._indices!r}, values={self._values!r}, "
                f"dense_shape={self._dense_shape!r})")


def sparse_placeholder(dtype, shape=None, name=None):
    """TF1's ``tf.sparse_placeholder``: a SparseTensor of three placeholders (its dense
    shape a constant where ``shape`` is fully known), fed with a ``SparseTensorValue``."""
    shape = as_shape(shape)
    rank = shape.ndims
    prefix = name or "Placeholder"
    values = placeholder(dtype, shape=(None,), name=f"{prefix}/values")
    indices = placeholder(int64, shape=(None, rank), name=f"{prefix}/indices")
    if shape.is_fully_defined():
        dense_shape = constant(np.array(shape.as_list(), np.int64), name=f"{prefix}/shape")
    else:
        dense_shape = placeholder(int64, shape=(rank,), name=f"{prefix}/shape")
    return SparseTensor(indices, values, dense_shape)


def _static_shape(output_shape, what) -> tuple:
    if isinstance(output_shape, Node):
        if output_shape.op.name != "const":
            raise NotImplementedError(f"{what}: kernelgraph needs the output shape as Python "
                                      "ints or a constant (the dense tensor's size is planned "
                                      "when the graph is built)")
        output_shape = output_shape.attrs["value"]
    return tuple(int(v) for v in np.atleast_1d(np.asarray(output_shape)))


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name=None):
    """TF1's ``tf.sparse_to_dense``: a dense tensor of ``output_shape`` holding
    ``sparse_values`` (one per index, or one scalar for all) at ``sparse_indices`` ([N, rank],
    [N] for a vector, or one index) and ``default_value`` elsewhere."""
    shape = _static_shape(output_shape, "tf.sparse_to_dense")
    values = _node(sparse_values)
    idx = ops.cast(_node(sparse_indices), dtype=int64)
    rank_ = len(idx.shape) if idx.shape is not None else None
    if rank_ == 0:
        idx = ops.reshape(idx, shape=(1, 1))
    elif rank_ == 1:
        idx = ops.reshape(idx, shape=(-1, 1))
    strides = np.array([int(np.prod(shape[d + 1:])) for d in range(len(shape))], np.int64)
    linear = ops.sum(idx * constant(strides, dtype=int64), axis=-1)
    total = int(np.prod(shape))
    if values.shape == ():
        values = ops.add(ops.cast(ops.zeros_like(linear), dtype=values.dtype), values)
    like = constant(np.zeros(total), dtype=values.dtype)
    scattered = ops.gather_grad(values, linear, like, axis=0)
    hit = ops.gather_grad(ops.cast(ops.ones_like(linear), dtype=values.dtype), linear, like,
                          axis=0)
    default = _node(default_value, values.dtype)
    dense = ops.where(ops.greater(hit, 0), scattered, ops.add(ops.zeros_like(scattered),
                                                              default))
    return ops.reshape(dense, shape=shape, name=name or "SparseToDense")


def sparse_tensor_to_dense(sp_input, default_value=0, validate_indices=True, name=None):
    """TF1's ``tf.sparse_tensor_to_dense`` of a SparseTensor whose dense shape is known when
    the graph is built (a constant, or a ``sparse_placeholder`` given its whole shape)."""
    return sparse_to_dense(sp_input.indices, sp_input.dense_shape, sp_input.values,
                           default_value, validate_indices, name=name)


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """TF1's ``tf.edit_distance`` of two SparseTensors: the Levenshtein distance of each
    pair of sequences (the last axis), divided by the truth's length if ``normalize``; a
    float32 tensor of the dense shape less its last axis. It runs on the host, as TF's."""
    for what, sp in (("hypothesis", hypothesis), ("truth", truth)):
        if not isinstance(sp, SparseTensor):
            raise TypeError(f"tf.edit_distance: {what} must be a SparseTensor, got "
                            f"{type(sp).__name__}")
    with device("cpu"):
        return _edit_distance_op(*hypothesis.parts(), *truth.parts(),
                                 normalize=bool(normalize), name=name)


def sparse_fetches(fetches):
    """``fetches`` with each SparseTensor as its three parts (fetched as a
    SparseTensorValue, as TF1 answers)."""
    t = type(fetches)
    if t is SparseTensor:
        return fetches.parts()
    if t is list:
        return [sparse_fetches(f) for f in fetches]
    if t is tuple:
        return tuple(sparse_fetches(f) for f in fetches)
    if t is dict:
        return {k: sparse_fetches(v) for k, v in fetches.items()}
    return fetches


def sparse_feeds(feed_dict: dict) -> dict:
    """``feed_dict`` with each SparseTensor key fed part by part from its value (a
    SparseTensorValue, or any triple)."""
    out = {}
    for key, value in feed_dict.items():
        if type(key) is not SparseTensor:
            out[key] = value
            continue
        if not isinstance(value, tuple | list) or len(value) != 3:
            raise TypeError(f"a SparseTensor is fed a SparseTensorValue (indices, values, "
                            f"dense_shape), got {type(value).__name__}")
        for part, v in zip(key.parts(), value):
            if part.op.name == "const":  # a known dense shape: TF1 checks the fed one
                if not np.array_equal(np.asarray(v), part.attrs["value"]):
                    raise ValueError(f"Cannot feed dense shape {list(np.asarray(v))} for a "
                                     f"SparseTensor of shape {list(part.attrs['value'])}")
                continue
            out[part] = v
    return out


def has_sparse(structure) -> bool:
    t = type(structure)
    if t is SparseTensor:
        return True
    if t in (list, tuple):
        return any(has_sparse(v) for v in structure)
    if t is dict:
        return any(has_sparse(v) for v in structure.values())
    return False


__all__ = ["SparseTensor", "SparseTensorValue", "edit_distance", "sparse_placeholder",
           "sparse_tensor_to_dense", "sparse_to_dense"]
