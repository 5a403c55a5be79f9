"""The control-flow ops: ``cond``, ``while_loop``, ``while_grad``, ``output``, ``dim_size``.

A static ``kg.cond`` or ``kg.while_loop`` is one node of the user's graph whose kernel runs
small traced graphs of its own -- only the branch taken, as many iterations as the data asks
for. Its *spec* attribute (built by :mod:`kernelgraph.static.control_flow`, which also holds
the public ``kg.cond`` / ``kg.while_loop``) knows how to run them and how to differentiate
them; the ops here only hand over to it, so that this floor imports nothing above itself.

The IR has one output per node, so a control-flow node's value is a :class:`Results`
*tuple*, and a small ``output`` node picks each item -- those are what ``kg.cond`` and
``kg.while_loop`` return. ``dim_size`` reads a dim at run time (a loop over the time steps
of a batch whose length is only known then).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..graph import Node, shape_str
from ..kernels import reference_grads as RG
from ..nest import flatten, pack_as, structure_of  # noqa: F401 - control flow's callers read them here
from .registry import OPS, define

OBJECT = np.dtype(object)  # the dtype of a tuple-valued control-flow node


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
    # Built by kg.cond / kg.while_loop (kernelgraph.static.control_flow), never through an
    # op call; the compiler re-infers shapes per feed signature, and a tuple has no shape.
    return None, OBJECT


# The spec attribute of a control-flow node comes from the static front-end, a floor above:
# it runs the node and builds its gradient, so these rules need no import from up there.
def _cond_forward(pred, *inputs, spec):
    return spec.run(pred, inputs)


def _cond_grad(g, out, needs, attrs, pred, *inputs):
    return attrs["spec"].gradient(out, g, needs, pred, inputs)


def _while_forward(*inputs, spec):
    return spec.run(inputs)


def _while_grad(g, out, needs, attrs, *inputs):
    return attrs["spec"].gradient(out, g, needs, inputs)


def _while_grad_forward(results, *inputs, spec):
    return spec.run(results, inputs)


def _output_forward(results, index, count):
    return results.values[index]


def _output_infer(shapes_, dtypes, attrs):
    return None, None  # the item's shape is only known at run time: keep the declared one


def _output_grad(g, out, needs, attrs, results):
    # The gradient of one item of a tuple (autodiff's Parts, made by the tuple node's spec:
    # autodiff is a floor above the ops); ``results`` is the cond / while_loop node itself.
    return (results.attrs["spec"].part(attrs["count"], attrs["index"], g),)


cond_op = define("cond", _cond_forward, _tuple_infer, _cond_grad, traits=("control", "host_only"),
                 doc="Runs the branch ``pred`` picks (kg.cond); its value is a tuple.", saves="all")
while_op = define("while_loop", _while_forward, _tuple_infer, _while_grad,
                  traits=("control", "host_only"),
                  doc="Runs ``body`` while ``cond`` holds (kg.while_loop); a tuple value.",
                  saves="all")
while_grad_op = define("while_grad", _while_grad_forward, _tuple_infer, None,
                       traits=("control", "host_only"),
                       doc="The gradient of a while_loop: its body's gradient, run backwards "
                           "over the recorded iterations.")
output_op = define("output", _output_forward, _output_infer, _output_grad,
                   traits=("host_only", "view"), reference=RG.output,
                   doc="Item ``index`` of a cond / while_loop node's tuple value.", saves=(0,))


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


# Not shape_only: constant folding would fold it, and its point is the size at run time.
dim_size = define("dim_size", _dim_size_forward, _dim_size_infer, None, attr_names=("axis",),
                  traits=("host_only",), reference=RG.dim_size,
                  doc="The size of ``x`` along ``axis`` at run time (an int64 scalar).")


# The ops above always run on the host (kernelgraph.static.control_flow places their nodes
# there; the ops inside a branch or body follow the device scope): they have no CUDA kernels.
HOST_OPS = frozenset(name for name, op in OPS.items() if "host_only" in op.traits)

__all__ = ["HOST_OPS", "OBJECT", "Results", "cond_op", "dim_size", "flatten", "output_op",
           "pack_as", "structure_of", "while_grad_op", "while_op"]
