"""``tf.cond``, ``tf.while_loop``, ``tf.case`` and ``tf.switch_case`` over kernelgraph's
control flow (:mod:`kernelgraph.static.control_flow`), with TF1's conversions, unpacking
and errors."""

from __future__ import annotations

from ... import ops
from ...eager import Tensor
from ...graph import Node
from ...ops.control import flatten, pack_as
from ...static.control_flow import cond as kg_cond
from ...static.control_flow import while_loop as kg_while
from .tensors import constant  # TF1's: Python ints are int32


def _graph_values(values):
    """Graph mode: Python numbers and arrays become constants (TF1 converts them)."""
    return pack_as(values, [v if isinstance(v, Node) else constant(v)
                            for v in flatten(values)])


def _unpack_singleton(result):
    return result[0] if isinstance(result, list | tuple) and len(result) == 1 else result


def _graph_fn(fn):
    """``fn`` whose eager tensors in what it returns become constants: TF1 code computes
    with Python values (``tf.less(i, 3)``), which kernelgraph computes at once."""
    def traced(*args):
        out = fn(*args)
        leaves = flatten(out)
        if not any(isinstance(v, Tensor) for v in leaves):
            return out
        return pack_as(out, [constant(v.numpy()) if isinstance(v, Tensor) else v
                             for v in leaves])

    return traced


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """tf.cond(pred, true_fn, false_fn): only the branch ``pred`` picks runs. As in TF1,
    a branch's one-element list or tuple is unpacked unless ``strict=True``, and ``pred``
    must be a tensor, not a Python bool.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [])
    ...     y = tf.cond(x > 0, lambda: (x, x * 2), lambda: (x, -x))
    ...     with tf.Session() as sess:
    ...         print([float(v) for v in sess.run(y, {x: -3.0})])
    [-3.0, 3.0]
    """
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if isinstance(pred, bool):
        raise TypeError("'pred' must not be a Python bool.")
    if true_fn is None:
        raise TypeError("true_fn must not be None.")
    if false_fn is None:
        raise TypeError("false_fn must not be None.")
    if not callable(true_fn):
        raise TypeError("true_fn must be callable.")
    if not callable(false_fn):
        raise TypeError("false_fn must be callable.")
    if not isinstance(pred, Node | Tensor):
        pred = constant(pred)
    result = kg_cond(pred, _graph_fn(true_fn), _graph_fn(false_fn), name=name,
                     relaxed_shapes=True)
    return result if strict else _unpack_singleton(result)


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """tf.while_loop: one loop node in the graph (``parallel_iterations`` and
    ``swap_memory`` are accepted and have nothing to do here). As in TF1, one loop variable
    in a list comes back as a tensor unless ``return_same_structure=True``.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     i, acc = tf.while_loop(lambda i, acc: i < 5, lambda i, acc: (i + 1, acc + i),
    ...                            (tf.constant(0), tf.constant(0)))
    ...     with tf.Session() as sess:
    ...         print([int(v) for v in sess.run([i, acc])])
    [5, 10]
    """
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if parallel_iterations < 1:
        raise TypeError("'parallel_iterations' must be a positive integer.")
    if loop_vars is None or (isinstance(loop_vars, list | tuple | dict) and not loop_vars):
        raise ValueError("'loop_vars' must be provided.")
    seen = []  # what body returned when traced: TF1 answers in that structure

    def traced_body(*args):
        out = _graph_fn(body)(*args)
        seen.append(out)
        return out

    result = kg_while(_graph_fn(cond), traced_body, _graph_values(loop_vars),
                      _invariants(shape_invariants), maximum_iterations=maximum_iterations,
                      back_prop=back_prop, name=name)
    flat = flatten(result)
    if seen and len(flatten(seen[0])) == len(flat) and isinstance(seen[0], list | tuple):
        result = pack_as(seen[0], flat)
    if return_same_structure:
        return result
    return flat[0] if len(flat) == 1 else result  # TF1: one tensor, however nested


def _invariants(shape_invariants):
    """TF's shape invariants (TensorShapes, lists, tuples) as lists of dims and None."""
    if shape_invariants is None:
        return None

    def walk(s):
        if isinstance(s, dict):
            return {k: walk(v) for k, v in s.items()}
        if hasattr(s, "as_list"):  # a TensorShape
            return None if getattr(s, "dims", 0) is None else list(s.as_list())
        if isinstance(s, list | tuple) and s and all(isinstance(d, int | None.__class__)
                                                      for d in s):
            return list(s)
        if isinstance(s, list | tuple):
            return type(s)(walk(v) for v in s) if s else []
        return s

    return walk(shape_invariants)


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """tf.case: the function of the first pair whose predicate holds, else ``default``
    (None: the last pair's function). Built as nested ``tf.cond``s; ``exclusive`` is not
    checked.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.int32, [])
    ...     y = tf.case([(x < 0, lambda: tf.constant(-1)), (x > 0, lambda: tf.constant(1))],
    ...                 default=lambda: tf.constant(0))
    ...     with tf.Session() as sess:
    ...         print([int(sess.run(y, {x: v})) for v in (-5, 0, 5)])
    [-1, 0, 1]
    """
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else \
        list(pred_fn_pairs)
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError("Each entry in pred_fn_pairs must be a 2-tuple")
        if not callable(pair[1]):
            raise TypeError("fn for pred must be callable.")
    if default is None:
        if not pairs:
            raise ValueError("pred_fn_pairs must not be empty without a default")
        pairs, default = pairs[:-1], pairs[-1][1]
    if not pairs:
        return default()

    def build(k):
        if k == len(pairs):
            return default()
        pred, fn = pairs[k]
        return cond(pred, fn, lambda: build(k + 1), strict=strict, name=name)

    return build(0)


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """tf.switch_case: ``branch_fns[branch_index]()`` (a list, or a dict of int keys); an
    index out of range takes ``default`` (None: the last branch).

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     i = tf.placeholder(tf.int32, [])
    ...     y = tf.switch_case(i, [lambda: tf.constant(10), lambda: tf.constant(20)])
    ...     with tf.Session() as sess:
    ...         print([int(sess.run(y, {i: k})) for k in (0, 1, 7)])
    [10, 20, 20]
    """
    items = sorted(branch_fns.items()) if isinstance(branch_fns, dict) else \
        list(enumerate(branch_fns))
    if not items:
        raise ValueError("Must provide at least one item in branch_fns")
    if default is None:
        items, default = items[:-1], items[-1][1]
    if not isinstance(branch_index, Node):
        branch_index = constant(branch_index)
    pairs = [(ops.equal(branch_index, ops.cast(constant(k), dtype=branch_index.dtype)), fn)
             for k, fn in items]
    return case(pairs, default=default, name=name)


__all__ = ["case", "cond", "switch_case", "while_loop"]
