"""``kg.cond`` and ``kg.while_loop``: which mode they run in, and the eager way to run them.

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
graphs of their own (:mod:`.conditional`, :mod:`.loop`), and one node of the user's graph
runs them -- only the branch taken, as many iterations as the data asks for:

>>> g = kg.Graph()
>>> with g.as_default():
...     n = kg.placeholder(kg.int64, shape=[])
...     i, total = kg.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), [0, 0])
>>> with kg.Session(g) as sess:
...     int(sess.run(total, {n: 5}))
10
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ... import dtypes as D
from ...eager import Tensor
from ...graph import Node, get_default_graph, shape_str, user_location
from ...ops.control import describe, flatten, structure_of
from ..build import constant_node
from .conditional import build_cond
from .loop import build_while


def _is_static(values) -> bool:
    if any(isinstance(v, Node) and v.symbolic for v in values):
        return True
    return getattr(get_default_graph(), "capture", None) is not None  # inside a traced body


def _eager_bool(value, what: str) -> bool:
    """The Python bool of an eager predicate: a bool scalar tensor, or a Python/NumPy bool."""
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
         name: str | None = None, *, relaxed_shapes: bool = False):
    """``true_fn()`` if ``pred`` else ``false_fn()`` (TF's ``tf.cond``).

    ``pred`` is a bool scalar: a Python bool (the branch is simply called), an eager tensor
    (eager: Python picks the branch), or a graph node (static: one ``cond`` node that runs
    only the branch taken; gradients flow to everything either branch read, zeros for the
    branch not taken). Both branches take no arguments and return the same structure (a
    tensor, or a list/tuple/dict of them) with the same dtypes; static shapes may differ
    only where a dim is unknown (``relaxed_shapes=True``, TF1's rule as ``tf.cond`` uses it:
    they may differ, and the result's static shape keeps the dims they agree on).

    >>> import kernelgraph as kg
    >>> g = kg.Graph()
    >>> with g.as_default():
    ...     x = kg.placeholder(kg.float32, shape=[])
    ...     y = kg.cond(x > 0, lambda: x * 2.0, lambda: x * x)
    ...     dy = kg.gradients(y, x)[0]
    >>> with kg.Session(g) as sess:
    ...     [float(v) for v in sess.run([y, dy], {x: -3.0})]
    [9.0, -6.0]
    """
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("kg.cond needs two functions: kg.cond(pred, true_fn, false_fn), each "
                        "called with no arguments")
    if isinstance(pred, bool | np.bool_):
        return true_fn() if pred else false_fn()
    if _is_static([pred]):
        if not isinstance(pred, Node):
            pred = constant_node(_eager_bool(pred, "kg.cond: pred"))
        return build_cond(pred, true_fn, false_fn, name, user_location(), relaxed_shapes)
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
    ...     [float(v) for v in sess.run([y, dy], {x: 2.0})]
    [8.0, 12.0]
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
        return build_while(cond, body, loop_vars, shape_invariants, maximum_iterations,
                           back_prop, name, location)
    return _eager_while(cond, body, loop_vars, maximum_iterations, shape_invariants,
                        back_prop, name, location)


def _check_max(value) -> int:
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
            return build_while(cond, body, loop_vars, shape_invariants, maximum_iterations,
                               back_prop, name, location)
        if not _eager_bool(keep_going, "kg.while_loop: the value cond returns"):
            break
        new = _call(body, loop_vars, values)
        if first_try and any(isinstance(v, Node) for v in flatten(new)):
            return build_while(cond, body, loop_vars, shape_invariants, maximum_iterations,
                               back_prop, name, location)
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


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
