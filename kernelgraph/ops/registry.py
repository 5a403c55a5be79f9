"""The op registry: each op is defined once, and every mode calls that one definition.

An :class:`Op` bundles
- ``infer(shapes, dtypes, attrs) -> (shape, dtype)``: the shape/dtype rule; shapes may hold
  ``None`` dims (or be ``None`` for unknown rank) and a mismatch raises ``ShapeError``;
- ``forward(*arrays, **attrs) -> array``: the CPU computation, calling numba kernels;
- ``grad(g, out, needs, attrs, *inputs) -> tuple``: the gradient rule, written with the
  public ops, so it computes on arrays/eager tensors and adds nodes on graph nodes.

Calling an op dispatches on the types of its arguments to a *front-end*: eager tensors run at
once (:mod:`kernelgraph.eager`), graph nodes add a node (:mod:`kernelgraph.static.build`),
and plain NumPy arrays compute directly and return arrays (this is how eager ``backward()``
runs gradient rules without recording them).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# type -> apply(op, args, attrs); filled in by the front-end modules when they are imported.
FRONTENDS: dict[type, Callable] = {}
DEFAULT_FRONTEND: list[Callable] = []  # for args with no tensor at all: eager


def _raw(op, args, attrs):
    if attrs and "name" in attrs:
        attrs = {k: v for k, v in attrs.items() if k != "name"}
    return op.forward(*args, **attrs)


FRONTENDS[np.ndarray] = _raw


class Op:
    """One operation: shape rule, forward kernel, gradient rule (see module docstring)."""

    __slots__ = ("name", "forward", "infer", "grad", "view", "elementwise", "doc")

    def __init__(self, name: str, forward: Callable, infer: Callable, grad: Callable | None,
                 *, view: bool = False, elementwise: bool = False, doc: str = ""):
        self.name = name
        self.forward = forward
        self.infer = infer
        self.grad = grad  # None: not differentiable (comparisons, argmax ...)
        self.view = view  # output may share memory with input 0 (reshape, transpose ...)
        self.elementwise = elementwise
        self.doc = doc

    def __call__(self, *args, **attrs):
        for a in args:
            apply = FRONTENDS.get(type(a))
            if apply is not None:
                return apply(self, args, attrs)
        return DEFAULT_FRONTEND[0](self, args, attrs)

    def __repr__(self):
        return f"<kg op {self.name}>"


OPS: dict[str, Op] = {}


def define(name: str, forward, infer, grad=None, **kw) -> Op:
    """Create and register an op (names are unique)."""
    if name in OPS:
        raise ValueError(f"op {name!r} is already defined")
    op = Op(name, forward, infer, grad, **kw)
    OPS[name] = op
    return op
