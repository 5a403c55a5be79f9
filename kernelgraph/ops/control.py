"""Control flow: ``kg.cond`` and ``kg.while_loop``, in both modes, with gradients.

Eager mode (PyTorch, TF2 eager): they simply run Python. ``kg.cond`` calls the branch the
predicate picks, ``kg.while_loop`` loops while ``cond`` holds; the ops inside are recorded
like any others, so ``backward()`` works through them, and every call may take a different
path (that is the dynamic-graph story):

>>> import kernelgraph as kg
>>> x = kg.tensor(3.0, requires_grad=True)
>>> y = kg.cond(x > 0, lambda: x * x, lambda: -x)
>>> y.backward(); x.grad.item()
6.0

Static mode (TF1): the branches and the loop's ``cond``/``body`` are traced once into small
graphs of their own (:mod:`kernelgraph.static.control_flow`), and one node of the user's
graph runs them -- only the branch taken, as many iterations as the data asks for:

>>> g = kg.Graph()
>>> with g.as_default():
...     n = kg.placeholder(kg.int64, shape=[])
...     i, total = kg.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), [0, 0])
>>> with kg.Session(g) as sess:
...     sess.run(total, {n: 5})
array(10)

A static control-flow node has a *tuple* of values (the IR has one output per node), and a
small ``output`` node picks each item -- those are what ``kg.cond``/``kg.while_loop`` return.
This module defines the ops; :mod:`kernelgraph.static.control_flow` builds and runs them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import dtypes as D
from ..graph import Node, shape_str, user_location
from .registry import define

OBJECT = np.dtype(object)  # the dtype of a tuple-valued control-flow node


# -- structures ------------------------------------------------------------------------------
def flatten(structure) -> list:
    """The leaves of a (nested) list / tuple / dict, in order (dicts by insertion order).

    >>> flatten([1, (2, 3), {"a": 4}])
    [1, 2, 3, 4]
    """
    if isinstance(structure, list | tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    if isinstance(structure, dict):
        return [leaf for item in structure.values() for leaf in flatten(item)]
    return [structure]


def pack_as(template, flat: list):
    """``flat`` (leaves) arranged in the structure of ``template`` (namedtuples kept).

    >>> pack_as([0, (0, 0)], ["a", "b", "c"])
    ['a', ('b', 'c')]
    """
    items = iter(flat)

    def build(t):
        if isinstance(t, list):
            return [build(x) for x in t]
        if isinstance(t, tuple):
            parts = [build(x) for x in t]
            return type(t)(*parts) if hasattr(t, "_fields") else tuple(parts)
        if isinstance(t, dict):
            return {k: build(v) for k, v in t.items()}
        return next(items)

    return build(template)


def structure_of(structure):
    """A comparable description of a structure's nesting (lists and tuples count as the
    same kind of sequence; dict keys count).

    >>> structure_of([1, (2, 3)]) == structure_of((4, [5, 6]))
    True
    """
    if isinstance(structure, list | tuple):
        return ("seq", tuple(structure_of(x) for x in structure))
    if isinstance(structure, dict):
        return ("dict", tuple((k, structure_of(v)) for k, v in structure.items()))
    return "leaf"


def describe(value) -> str:
    """How an error message names a value: a node with its shape and dtype, or its type."""
    if isinstance(value, Node):
        return f"'{value.name}' {shape_str(value.shape)} {value.dtype.name}"
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"a {type(value).__name__} {shape_str(tuple(shape))} {np.dtype(dtype).name}"
    return repr(value) if isinstance(value, int | float | bool) else type(value).__name__


# -- the tuple value of a control-flow node ---------------------------------------------------
class Results:
    """The value of a static ``cond`` / ``while_loop`` node: ``values`` (one array per
    output) and, for a loop, ``history`` (the loop variables before each iteration and after
    the last one, which the gradient replays backwards) and ``saved`` (per iteration, the
    body's activations its gradient reads, kept as TF's stacks keep them).

    Deliberately not a sequence: viewers that turn values into arrays see one object (and
    show its ``repr``) instead of trying to stack arrays of different shapes.
    """

    __slots__ = ("values", "history", "saved")

    def __init__(self, values, history=None, saved=None):
        self.values = tuple(values)
        self.history = history
        self.saved = saved

    def __repr__(self):
        items = ", ".join(f"{np.dtype(getattr(v, 'dtype', OBJECT)).name} "
                          f"{shape_str(tuple(np.shape(v)))}" for v in self.values)
        return f"<{len(self.values)} values: {items}>"


def _tuple_infer(shapes_, dtypes, attrs):
    # Built by kg.cond / kg.while_loop (static/control_flow.py), never through an op call;
    # the compiler re-infers shapes per feed signature, and a tuple has no array shape.
    return None, OBJECT


def _cond_forward(pred, *inputs, spec):
    return spec.run(pred, inputs)


def _cond_grad(g, out, needs, attrs, pred, *inputs):
    from ..static import control_flow

    return control_flow.cond_gradient(out, g, needs, attrs["spec"], pred, inputs)


def _while_forward(*inputs, spec):
    return spec.run(inputs)


def _while_grad(g, out, needs, attrs, *inputs):
    from ..static import control_flow

    return control_flow.while_gradient(out, g, needs, attrs["spec"], inputs)


def _while_grad_forward(results, *inputs, spec):
    return spec.run(results, inputs)


def _output_forward(results, index, count):
    return results.values[index]


def _output_infer(shapes_, dtypes, attrs):
    return None, None  # the item's shape is only known at run time: keep the declared one


def _output_grad(g, out, needs, attrs, results):
    from ..autodiff import Parts

    return (Parts.one(attrs["count"], attrs["index"], g),)


cond_op = define("cond", _cond_forward, _tuple_infer, _cond_grad,
                 doc="Runs the branch ``pred`` picks (kg.cond); its value is a tuple.")
while_op = define("while_loop", _while_forward, _tuple_infer, _while_grad,
                  doc="Runs ``body`` while ``cond`` holds (kg.while_loop); a tuple value.")
while_grad_op = define("while_grad", _while_grad_forward, _tuple_infer, None,
                       doc="The gradient of a while_loop: its body's gradient, run backwards "
                           "over the recorded iterations.")
output_op = define("output", _output_forward, _output_infer, _output_grad, view=True,
                   doc="Item ``index`` of a cond / while_loop node's tuple value.")


def _dim_size_infer(shapes_, dtypes, attrs):
    shape = shapes_[0]
    if shape is not None:
        axis = attrs["axis"]
        if not -len(shape) <= axis < len(shape):
            raise ValueError(f"dim_size: axis {axis} is out of range for shape "
                             f"{shape_str(shape)}")
    return (), D.int64


def _dim_size_forward(x, axis):
    return np.array(np.shape(x)[axis], dtype=np.int64)


# These ops always run on the host (static/control_flow.py places their nodes there; the ops
# inside a branch or body follow the device scope): they have no CUDA kernels.
HOST_OPS = frozenset(("cond", "while_loop", "while_grad", "output", "dim_size"))

dim_size = define("dim_size", _dim_size_forward, _dim_size_infer, None, attr_names=("axis",),
                  doc="The size of ``x`` along ``axis`` at run time (an int64 scalar).")


# -- the public functions --------------------------------------------------------------------
def _is_static(values) -> bool:
    from ..graph import get_default_graph

    if any(isinstance(v, Node) and type(v).__name__ != "EagerNode" for v in values):
        return True
    return getattr(get_default_graph(), "capture", None) is not None  # inside a traced body


def _eager_bool(value, what: str) -> bool:
    """The Python bool of an eager predicate: a bool scalar tensor, or a Python/NumPy bool."""
    from ..eager import Tensor

    if isinstance(value, Tensor):
        if value.dtype != D.bool_:
            raise TypeError(f"{what} must be a bool tensor, got {value.dtype.name} "
                            f"(compare with a value, e.g. x > 0)")
        if value.ndim != 0:
            raise ValueError(f"{what} must be a scalar (shape ()), got shape "
                             f"{shape_str(value.shape)}; reduce it first (kg.reduce_max ...)")
        return bool(value.item())
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, np.ndarray) and value.dtype == np.bool_ and value.ndim == 0:
        return bool(value)
    raise TypeError(f"{what} must be a bool scalar, got {describe(value)}")


def cond(pred, true_fn: Callable | None = None, false_fn: Callable | None = None,
         name: str | None = None):
    """``true_fn()`` if ``pred`` else ``false_fn()`` (TF's ``tf.cond``).

    ``pred`` is a bool scalar: a Python bool (the branch is simply called), an eager tensor
    (eager: Python picks the branch), or a graph node (static: one ``cond`` node that runs
    only the branch taken; gradients flow to everything either branch read, zeros for the
    branch not taken). Both branches take no arguments and return the same structure (a
    tensor, or a list/tuple/dict of them) with the same dtypes; static shapes may differ
    only where a dim is unknown.

    >>> import kernelgraph as kg
    >>> g = kg.Graph()
    >>> with g.as_default():
    ...     x = kg.placeholder(kg.float32, shape=[])
    ...     y = kg.cond(x > 0, lambda: x * 2.0, lambda: x * x)
    ...     dy = kg.gradients(y, x)[0]
    >>> with kg.Session(g) as sess:
    ...     sess.run([y, dy], {x: -3.0})
    [array(9., dtype=float32), array(-6., dtype=float32)]
    """
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("kg.cond needs two functions: kg.cond(pred, true_fn, false_fn), each "
                        "called with no arguments")
    if isinstance(pred, bool | np.bool_):
        return true_fn() if pred else false_fn()
    if _is_static([pred]):
        if not isinstance(pred, Node):
            from ..static.build import constant_node

            pred = constant_node(_eager_bool(pred, "kg.cond: pred"))
        from ..static import control_flow

        return control_flow.build_cond(pred, true_fn, false_fn, name, user_location())
    return true_fn() if _eager_bool(pred, "kg.cond: pred") else false_fn()


def while_loop(cond: Callable, body: Callable, loop_vars, shape_invariants=None, *,
               maximum_iterations=None, back_prop: bool = True, name: str | None = None):
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` (TF's
    ``tf.while_loop``); returns the final loop variables in the structure of ``loop_vars``.

    ``loop_vars`` is a tensor or a list/tuple/dict of them (a list/tuple is passed to
    ``cond`` and ``body`` as separate arguments). ``body`` returns the same structure with
    the same dtypes. At most ``maximum_iterations`` iterations run (the loop stops there, as
    in TF; no error).

    Eager tensors: a Python loop, recorded op by op (``backward()`` works). Graph nodes: one
    ``while_loop`` node; ``cond`` and ``body`` are traced once (``cond`` once more inside the
    body, which so also says whether to go on), with each loop variable as a
    placeholder whose shape is its *shape invariant*: its entry shape unless
    ``shape_invariants`` (same structure, shapes with ``None`` for dims that may change)
    says otherwise; a body that changes a declared dim is an error. ``kg.gradients`` reaches
    the initial loop variables and every outer tensor ``cond``/``body`` read (variables,
    weights), by running the body's gradient backwards over the recorded iterations and
    the activations each one kept (``back_prop=False``: no gradient, nothing recorded).

    >>> import kernelgraph as kg
    >>> g = kg.Graph()
    >>> with g.as_default():
    ...     x = kg.placeholder(kg.float32, shape=[])
    ...     _, y = kg.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), [0, 1.0])
    ...     dy = kg.gradients(y, x)[0]                       # y = x**3, dy = 3 x**2
    >>> with kg.Session(g) as sess:
    ...     sess.run([y, dy], {x: 2.0})
    [array(8., dtype=float32), array(12., dtype=float32)]
    """
    if not callable(cond) or not callable(body):
        raise TypeError("kg.while_loop needs two functions: kg.while_loop(cond, body, "
                        "loop_vars)")
    flat = flatten(loop_vars)
    if not flat:
        raise ValueError("kg.while_loop: loop_vars must hold at least one tensor")
    if maximum_iterations is not None and not isinstance(maximum_iterations, Node):
        maximum_iterations = _check_max(maximum_iterations)
    location = user_location()
    if _is_static(flat + [maximum_iterations]):
        from ..static import control_flow

        return control_flow.build_while(cond, body, loop_vars, shape_invariants,
                                        maximum_iterations, back_prop, name, location)
    return _eager_while(cond, body, loop_vars, maximum_iterations, shape_invariants,
                        back_prop, name, location)


def _check_max(value) -> int:
    from ..eager import Tensor

    if isinstance(value, Tensor) and value.dtype in D.INTS and value.ndim == 0:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError("kg.while_loop: maximum_iterations must be a non-negative int, got "
                        f"{describe(value)}")
    if value < 0:
        raise ValueError(f"kg.while_loop: maximum_iterations must be >= 0, got {value}")
    return int(value)


def _call(fn, template, values):
    return fn(*values) if isinstance(template, list | tuple) else fn(values)


def _eager_while(cond, body, loop_vars, maximum_iterations, shape_invariants, back_prop,
                 name, location):
    from ..eager import Tensor

    values = loop_vars
    wanted = structure_of(loop_vars)
    dtypes = [getattr(v, "dtype", None) if isinstance(v, Tensor) else None
              for v in flatten(loop_vars)]
    iteration = 0
    # Plain numbers as loop variables: whether the loop is static shows when cond or body
    # builds graph nodes on them (TF1 code such as ``tf.while_loop(lambda i: i < n, ...,
    # [0])``); then the loop is built as a graph node instead.
    first_try = not any(isinstance(v, Tensor) for v in flatten(loop_vars))
    while maximum_iterations is None or iteration < maximum_iterations:
        keep_going = _call(cond, loop_vars, values)
        if isinstance(keep_going, Node) and first_try:
            return _static_after_all(cond, body, loop_vars, shape_invariants,
                                     maximum_iterations, back_prop, name, location)
        if not _eager_bool(keep_going, "kg.while_loop: the value cond returns"):
            break
        new = _call(body, loop_vars, values)
        if first_try and any(isinstance(v, Node) for v in flatten(new)):
            return _static_after_all(cond, body, loop_vars, shape_invariants,
                                     maximum_iterations, back_prop, name, location)
        first_try = False
        if isinstance(loop_vars, list | tuple) and len(loop_vars) == 1 and \
                not isinstance(new, list | tuple):
            new = type(loop_vars)([new]) if not hasattr(loop_vars, "_fields") else new
        if structure_of(new) != wanted:
            raise ValueError(f"kg.while_loop: body must return the structure of loop_vars "
                             f"({len(flatten(loop_vars))} values), got "
                             f"{len(flatten(new))} value(s): {_short(new)}")
        for k, (v, dt) in enumerate(zip(flatten(new), dtypes)):
            if isinstance(v, Node):
                raise TypeError("kg.while_loop: the body returned the graph node "
                                f"'{v.name}' for eager loop variables")
            if dt is not None and isinstance(v, Tensor) and v.dtype != dt:
                raise TypeError(f"kg.while_loop: loop variable {k} entered the loop as "
                                f"{dt.name} but the body returned {v.dtype.name}; a loop "
                                "variable keeps its dtype (use kg.cast)")
        values = new
        iteration += 1
    return values


def _static_after_all(cond, body, loop_vars, shape_invariants, maximum_iterations, back_prop,
                      name, location):
    from ..static import control_flow

    return control_flow.build_while(cond, body, loop_vars, shape_invariants,
                                    maximum_iterations, back_prop, name, location)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


__all__ = ["HOST_OPS", "OBJECT", "Results", "cond", "cond_op", "dim_size", "flatten", "output_op",
           "pack_as", "structure_of", "while_grad_op", "while_loop", "while_op"]
