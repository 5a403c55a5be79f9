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

ndarray = np.ndarray

# type -> apply(op, args, attrs); filled in by the front-end modules when they are imported.
FRONTENDS: dict[type, Callable] = {}
DEFAULT_FRONTEND: list[Callable] = []  # for args with no tensor at all: eager




class Op:
    """One operation: shape rule, forward kernel, gradient rule (see module docstring)."""

    __slots__ = ("name", "forward", "infer", "grad", "view", "elementwise", "doc", "attr_names",
                 "arity")

    def __init__(self, name: str, forward: Callable, infer: Callable, grad: Callable | None,
                 *, view: bool = False, elementwise: bool = False, doc: str = "",
                 attr_names: tuple = (), inputs: int = 1):
        self.name = name
        self.forward = forward
        self.infer = infer
        self.grad = grad  # None: not differentiable (comparisons, argmax ...)
        self.view = view  # output may share memory with input 0 (reshape, transpose ...)
        self.elementwise = elementwise
        self.doc = doc
        # Attributes that may also be passed by position after the ``inputs`` tensors, as in
        # ``kg.sum(x, 1)`` or ``kg.reshape(x, (2, 3))``; ops without any take any arity.
        self.attr_names = tuple(attr_names)
        self.arity = inputs if attr_names else 1 << 30

    def __call__(self, *args, **attrs):
        if len(args) > self.arity:
            args, attrs = self._bind(args, attrs)
        # A tensor or graph node anywhere decides the mode; plain arrays only when there is
        # neither (kg.mul(np_array, tensor) is eager, not an array computation).
        raw = False
        for a in args:
            t = type(a)
            if t is ndarray:
                raw = True
                continue
            apply = FRONTENDS.get(t)
            if apply is not None:
                return apply(self, args, attrs)
        if raw:
            if attrs and "name" in attrs:
                attrs = {k: v for k, v in attrs.items() if k != "name"}
            return self.forward(*args, **attrs)
        return DEFAULT_FRONTEND[0](self, args, attrs)

    def _bind(self, args, attrs):
        """Move positional attributes (after the tensor inputs) into ``attrs``. Without this
        a positional axis or shape would become a tensor input of the node."""
        extra = args[self.arity:]
        if len(extra) > len(self.attr_names):
            raise TypeError(f"{self.name}() takes {self.arity} tensor input(s) and then at most "
                            f"({', '.join(self.attr_names)}), got {len(args)} positional "
                            "arguments")
        attrs = dict(attrs)
        for key, value in zip(self.attr_names, extra):
            if key in attrs:
                raise TypeError(f"{self.name}() got multiple values for argument '{key}'")
            attrs[key] = value
        return args[:self.arity], attrs

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
