"""Host-side ops of TF1's input pipelines, and the draw a tensor ``keep_prob`` needs.

- ``iterator_get_next``: the next element of an input pipeline (``tf.data``'s
  ``iterator.get_next()``). Its value is a :class:`~kernelgraph.ops.control.Results` tuple,
  one item per component of the element, picked by ``output`` nodes as a ``cond``'s are.
  It is ``stateful`` (every run advances the pipeline: never folded, merged or deferred)
  and ``host_only``. Its ``spec`` attribute is the iterator (built by
  :mod:`kernelgraph.compat.v1.data`, a floor above), whose ``next(inputs)`` it calls.
- ``iterator_init``: (re)starts an iterator on its inputs' values (``iterator.initializer``,
  fed placeholders included); its value is None, as a TF1 op's.
- ``random_uniform_like``: uniform samples in [0, 1) in the shape and dtype of its input,
  known only at run time (``tf.nn.dropout(x, keep_prob)`` with a tensor ``keep_prob`` on a
  batch of unknown size).
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as D
from ...graph import Node
from ...ops.control import OBJECT, Results
from ...ops.random import _generator, _seed_attrs
from ...ops.registry import FRONTENDS, define


def _tuple_infer(shapes_, dtypes, attrs):
    return None, OBJECT


def _get_next_forward(*inputs, spec):
    return Results(spec.next(inputs))


def _init_forward(*inputs, spec):
    spec.start(inputs)


iterator_get_next_op = define(
    "iterator_get_next", _get_next_forward, _tuple_infer, None,
    traits=("stateful", "host_only"),
    doc="The next element of a tf.data iterator (a tuple value); OutOfRangeError at the end.")
iterator_init_op = define(
    "iterator_init", _init_forward, lambda s, d, a: ((), D.bool_), None,
    traits=("stateful", "host_only"),
    doc="(Re)starts a tf.data iterator on its inputs' values; its value is None.")


def _uniform_like_infer(shapes_, dtypes, attrs):
    if D.as_dtype(dtypes[0]) not in D.FLOATS:
        raise TypeError(f"random_uniform_like needs a floating-point tensor, got "
                        f"{D.as_dtype(dtypes[0]).name}")
    return shapes_[0], dtypes[0]


def _uniform_like_forward(x, global_seed, seed, stream):
    x = np.asarray(x)
    return _generator(global_seed, seed, stream).random(x.shape).astype(x.dtype)


random_uniform_like_op = define(
    "random_uniform_like", _uniform_like_forward, _uniform_like_infer, None,
    traits=("random",),
    cuda=lambda k: k.random.drawn_on_host(_uniform_like_forward),
    doc="Uniform samples in [0, 1) in x's shape and dtype (one draw per run).")


def random_uniform_like(x: Node, seed: int | None = None, name: str | None = None) -> Node:
    """A graph node of uniform samples in [0, 1) shaped like ``x`` at run time.

    >>> import kernelgraph as kg
    >>> with kg.Graph().as_default():
    ...     x = kg.placeholder(kg.float32, shape=[None, 3])
    ...     u = random_uniform_like(x)
    ...     with kg.Session() as sess:
    ...         v = sess.run(u, {x: [[1.0, 2.0, 3.0]]})
    >>> v.shape, bool(((0 <= v) & (v < 1)).all())
    ((1, 3), True)
    """
    attrs = dict(_seed_attrs(seed, True))
    if name is not None:
        attrs["name"] = name
    return FRONTENDS[Node](random_uniform_like_op, (x,), attrs)


__all__ = ["iterator_get_next_op", "iterator_init_op", "random_uniform_like",
           "random_uniform_like_op"]
