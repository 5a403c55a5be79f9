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
runs gradient rules without recording them). A plain array of a dtype kernelgraph does not
keep (float16, int16, big-endian ...) is converted first, exactly as ``kg.tensor`` converts
it (:func:`kernelgraph.dtypes.operand`), and a computation the op's shape/dtype rule
refuses raises that rule's error (a ShapeError naming both shapes, not NumPy's words).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError
from ..graph import shape_str

ndarray = np.ndarray
_KEPT = D.KEPT  # a module global: one lookup on the hot path

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
        raw = foreign = False
        for a in args:
            t = type(a)
            if t is ndarray:
                raw = True
                if a.dtype not in _KEPT:
                    foreign = True
                continue
            apply = FRONTENDS.get(t)
            if apply is not None:
                return apply(self, args, attrs)
        if raw:
            if attrs and "name" in attrs:
                attrs = {k: v for k, v in attrs.items() if k != "name"}
            if foreign:
                args = tuple(D.operand(a, self.name, i) if type(a) is ndarray else a
                             for i, a in enumerate(args))
            try:
                return self.forward(*args, **attrs)
            except Exception as e:
                better = self.explain(args, attrs, e)
                if better is e:
                    raise
                raise better from None
        return DEFAULT_FRONTEND[0](self, args, attrs)

    def explain(self, values, attrs, error: Exception) -> Exception:
        """The error to raise for ``error``, which this op's forward raised on ``values``
        (arrays of kept dtypes, device arrays, Python numbers): a Python int the tensor's
        integer dtype cannot hold is a ConversionError naming both; inputs the op's
        shape/dtype rule refuses get that rule's error (naming the op, the shapes and
        dtypes); anything else names the op and its inputs around the kernel's message. An
        error the forward raised itself in the framework's words (``checked``) stays."""
        if getattr(error, "checked", False):
            return error
        shapes_ = [np.shape(v) for v in values]
        dts = [getattr(v, "dtype", None) for v in values]
        if isinstance(error, OverflowError):  # NumPy's, reading a Python int as the dtype
            ints = [d for d in dts if d is not None and np.dtype(d).kind in "iu"]
            big = D.int_beyond(values, ints[0]) if ints else None
            if big is not None:
                return D.scalar_overflow(big, ints[0], self.name)
        try:
            infer_dts = [D.as_dtype(d) if d is not None else D.scalar_dtype(v)
                         for d, v in zip(dts, values)]
            self.infer(shapes_, infer_dts, attrs)
        except (ShapeError, TypeError) as e:
            return type(e)(str(e) if str(e).startswith(self.name) else f"{self.name}: {e}")
        except Exception:  # noqa: BLE001 - fall through to the kernel's own message
            pass
        described = ", ".join(f"{shape_str(s)} {np.dtype(d).name if d is not None else 'scalar'}"
                              for s, d in zip(shapes_, dts))
        try:
            return type(error)(f"{self.name} failed on inputs {described}: {error}")
        except Exception:  # noqa: BLE001 - an error class that takes other arguments
            return error

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
