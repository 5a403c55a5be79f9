"""TF1's functional ops over a tensor's rows: ``tf.map_fn``, ``tf.scan``, ``tf.foldl``,
``tf.foldr``, each one ``while_loop`` node over however many rows the fed value has (the
per-row results stacked by the loop itself, as ``dynamic_rnn``'s outputs are), with
gradients through it."""

from __future__ import annotations

import numpy as np

from ... import devices, ops
from ...graph import Node, user_location
from ...ops.control import dim_size, flatten, pack_as
from ...static.control_flow import build_while
from .tensors import constant


def _elems(elems) -> tuple[list, object]:
    flat = [e if isinstance(e, Node) else constant(e) for e in flatten(elems)]
    if not flat:
        raise ValueError("elems must be a tensor or a (nested) sequence of tensors")
    return flat, elems


def _rows(flat):
    with devices.device("cpu"):  # a host op, like the loop that reads it
        return dim_size(flat[0], axis=0)


def _at(flat, template, i):
    return pack_as(template, [ops.gather(e, i, axis=0) for e in flat])


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True,
           swap_memory=False, infer_shape=True, name=None, fn_output_signature=None):
    """``fn`` applied to each row of ``elems`` (a tensor, or a tuple/list of tensors of one
    length, passed to ``fn`` as that structure), the results stacked.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 2])
    ...     y = tf.map_fn(lambda row: tf.reduce_sum(row * row), x)
    ...     with tf.Session() as sess:
    ...         print(sess.run(y, {x: [[1.0, 2.0], [3.0, 4.0], [0.5, 0.5]]}))
    [ 5.  25.   0.5]
    """
    flat, template = _elems(elems)
    n = _rows(flat)
    outputs = []  # the structure fn returns, seen when the body is traced

    def body(i):
        out = fn(_at(flat, template, i))
        outputs.append(out)
        leaves = [v if isinstance(v, Node) else constant(v) for v in flatten(out)]
        return (i + 1,), leaves

    (_,), stacked = build_while(lambda i: i < n, body, (np.array(0, np.int64),), None, None,
                                back_prop, name or "map", user_location(), stacked=1)
    return pack_as(outputs[0], stacked)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """The accumulated ``a = fn(a, row)`` after each row of ``elems`` (from ``initializer``,
    or from the first row, which is then the first result), stacked.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     y = tf.scan(lambda a, x: a + x, tf.constant([1.0, 2.0, 3.0, 4.0]))
    ...     with tf.Session() as sess:
    ...         print(sess.run(y))
    [ 1.  3.  6. 10.]
    """
    if reverse:
        raise NotImplementedError("tf.scan(reverse=True) is not implemented")
    flat, template = _elems(elems)
    n = _rows(flat)
    if initializer is None:
        first = _at(flat, template, constant(np.array(0, np.int64)))
        start, a0 = 1, first
    else:
        start, a0 = 0, initializer
    a_flat = [v if isinstance(v, Node) else constant(v) for v in flatten(a0)]

    def body(i, *acc):
        new = fn(pack_as(a0, list(acc)), _at(flat, template, i))
        leaves = [v if isinstance(v, Node) else constant(v) for v in flatten(new)]
        return (i + 1, *leaves), leaves

    _, stacked = build_while(lambda i, *acc: i < n, body,
                             (np.array(start, np.int64), *a_flat), None, None, back_prop,
                             name or "scan", user_location(), stacked=1)
    if initializer is None:
        stacked = [ops.concat([ops.reshape(f, shape=(1, *_shape(f))), s], axis=0)
                   for f, s in zip(a_flat, stacked)]
    return pack_as(a0, stacked)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """``a = fn(a, row)`` over the rows of ``elems`` from the first (``initializer``, or the
    first row); returns the last ``a``.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     y = tf.foldl(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]))
    ...     with tf.Session() as sess:
    ...         print(sess.run(y))
    123
    """
    return _fold(fn, elems, initializer, back_prop, name or "foldl", False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """``foldl`` from the last row to the first."""
    return _fold(fn, elems, initializer, back_prop, name or "foldr", True)


def _fold(fn, elems, initializer, back_prop, name, reverse):
    flat, template = _elems(elems)
    n = _rows(flat)

    def row(i):  # foldr: the rows from the last
        return ops.sub(ops.sub(n, 1), i) if reverse else i

    if initializer is None:
        a0 = _at(flat, template, row(constant(np.array(0, np.int64))))
        start = 1
    else:
        a0, start = initializer, 0
    a_flat = [v if isinstance(v, Node) else constant(v) for v in flatten(a0)]

    def body(i, *acc):
        new = fn(pack_as(a0, list(acc)), _at(flat, template, row(i)))
        return (i + 1, *[v if isinstance(v, Node) else constant(v) for v in flatten(new)])

    result = build_while(lambda i, *acc: i < n, body, (np.array(start, np.int64), *a_flat),
                         None, None, back_prop, name, user_location())
    return pack_as(a0, list(result[1:]))


def _shape(node):
    if node.shape is None or None in node.shape:
        raise NotImplementedError("tf.scan without an initializer needs the rows' shape")
    return tuple(node.shape)


__all__ = ["foldl", "foldr", "map_fn", "scan"]
