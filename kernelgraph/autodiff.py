"""Reverse-mode differentiation over the IR, shared by eager ``backward()`` and static
``gradients()``.

The walk is the same in both modes: visit the nodes between the outputs and the inputs in
reverse creation order (creation order is a topological order), call each op's gradient
rule, bring each input gradient back to that input's shape when broadcasting stretched it
(``sum_to_like``), and add up gradients that reach one input along several paths. A *mode*
object says how to read a value, whether an input needs a gradient, and what a gradient is
keyed by; the gradient rules themselves use the public ops, so in eager mode they compute and
in static mode they add nodes.
"""

from __future__ import annotations

from . import trace
from .dtypes import FLOATS
from .ops import add, cast, sum_to_like
from .shapes import known


class Mode:
    """How one front-end exposes its graph to :func:`propagate` (see subclasses)."""

    def value(self, x):
        """The value a gradient rule receives for node x's output."""
        raise NotImplementedError

    def inputs(self, node) -> tuple[list, list, list]:
        """For each input of ``node``: does it want a gradient, the value the rule receives,
        and the key its gradient is gathered under (None when it wants none)."""
        raise NotImplementedError

    def same_shape(self, g, x) -> bool:
        raise NotImplementedError

    def on_gradient(self, node, g):
        """Hooks, retain_grad ...; may replace g."""
        return g

    def accumulate(self, key, total, g):
        """``total + g``: the gradients of ``key`` along two paths, added up."""
        return add(total, g)


def propagate(order, grads: dict, mode: Mode, keep=frozenset(), ends=frozenset()) -> dict:
    """Run gradient rules for ``order`` (nodes, latest first), starting from ``grads``
    (``{id(key): (key, gradient)}``); returns the same dict holding every gradient reached.

    A node's gradient leaves the dict once its rule has passed it on, except for the nodes
    in ``keep``: the ``xs`` of ``gradients(ys, xs)`` / ``autograd.grad``, whose total
    derivative is the answer (kept as it arrived, before the node's hooks). Nodes in ``ends``
    get their gradient (and their hooks run) but pass nothing on."""
    tracing = trace.active
    value, inputs_of, same_shape = mode.value, mode.inputs, mode.same_shape
    on_gradient, accumulate = mode.on_gradient, mode.accumulate
    for node in order:
        entry = grads.pop(id(node), None)
        if entry is None:
            continue
        if keep and id(node) in keep:
            grads[id(node)] = entry  # complete: every node after this one has been visited
        g = on_gradient(node, entry[1])
        if tracing:
            trace.emit("gradient", node=node, grad=g)
        rule = node.op.grad  # None: not differentiable (comparisons ...): no gradient flows
        if rule is None or (ends and id(node) in ends):
            continue
        needs, values, keys = inputs_of(node)
        for k, v, gx in zip(keys, values, rule(g, value(node), needs, node.attrs, *values)):
            if k is None or gx is None:
                continue
            if type(gx) is Parts:  # an item of a tuple-valued node (kg.cond, kg.while_loop)
                prev = grads.get(id(k))
                grads[id(k)] = (k, gx if prev is None else prev[1].merged(gx))
                continue
            if not same_shape(gx, v):
                gx = sum_to_like(gx, v)  # broadcasting stretched the input
            if gx.dtype != v.dtype and v.dtype in FLOATS:
                gx = cast(gx, dtype=v.dtype)  # a gradient keeps its input's dtype (PyTorch)
            prev = grads.get(id(k))
            grads[id(k)] = (k, gx if prev is None else accumulate(k, prev[1], gx))
    return grads


class Parts:
    """The gradient of a node whose value is a tuple (a static ``kg.cond`` or
    ``kg.while_loop`` node): one gradient or None per item. Each ``output`` node that picks
    an item sends a Parts with only its item set; :func:`propagate` merges them, so the
    control-flow node's own gradient rule receives them all at once.

    Deliberately not a sequence, so that viewers do not try to turn it into an array.
    """

    __slots__ = ("items",)

    def __init__(self, items):
        self.items = list(items)

    @classmethod
    def one(cls, count: int, index: int, g) -> Parts:
        items = [None] * count
        items[index] = g
        return cls(items)

    def merged(self, other: Parts) -> Parts:
        return Parts([b if a is None else a if b is None else add(a, b)
                      for a, b in zip(self.items, other.items)])

    def __repr__(self):
        return f"<gradient parts {self.items!r}>"


def static_same_shape(g, x) -> bool:
    return known(g.shape) and g.shape == x.shape
