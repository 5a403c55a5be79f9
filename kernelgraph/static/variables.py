"""Placeholders, Variables and their assign ops, and the variables initializer.

A :class:`Variable` is a graph node whose value lives in each Session (so two sessions on one
graph hold separate weights, as in TF1); it must be initialised before it is read.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import shown, where
from ..graph import Node, get_default_graph, user_location
from ..ops import registry
from ..ops.registry import define
from .build import build, constant_node, placed


def _placeholder_forward(**attrs):
    raise AssertionError("placeholders are fed by Session.run, never computed")


# Run by the Session itself (feeds, its variable store, control inputs), never by a kernel:
# their cards say so with the trait "stateful", which the compiler's passes ask.
placeholder_op = define("placeholder", _placeholder_forward, lambda s, d, a: (a["shape"], None),
                        None, traits=("stateful",),
                        doc="A value fed at run time through feed_dict.")
variable_op = define("variable", _placeholder_forward, None, None, traits=("stateful",),
                     doc="Reads a Variable's value from the session.")


def _assign_infer(shapes_, dtypes, attrs):
    return shapes_[0], dtypes[0]


assign_op = define("assign", None, _assign_infer, None, traits=("stateful",), doc="var = value")
assign_add_op = define("assign_add", None, _assign_infer, None, traits=("stateful",),
                       doc="var += value")
assign_sub_op = define("assign_sub", None, _assign_infer, None, traits=("stateful",),
                       doc="var -= value")
no_op = define("no_op", None, lambda s, d, a: ((), D.bool_), None, traits=("stateful",),
               doc="Does nothing; runs its control inputs (e.g. the initializer).")
STATEFUL = (variable_op, assign_op, assign_add_op, assign_sub_op, no_op, placeholder_op)
ASSIGNS = (assign_op, assign_add_op, assign_sub_op)


def writes_variable(node: Node) -> bool:
    """Whether ``node`` stores a new value in the variable that is its first input (which
    it does not read as a value): an assign, or a fused kernel computing a variable's update
    (:mod:`kernelgraph.static.fusion`)."""
    return node.op in ASSIGNS or node.op.updates is not None


def read_inputs(node: Node) -> tuple:
    """The inputs whose values ``node`` reads: all of them, except the variable an assign
    writes (:func:`writes_variable`). With :func:`kernelgraph.graph.ancestors`, what a run
    computes: ``ancestors(fetches, stop=feeds, reads=read_inputs)``."""
    return node.inputs[1:] if writes_variable(node) else node.inputs


def placeholder(dtype=None, shape=None, name=None) -> Node:
    """A graph input fed at run time: ``x = kg.placeholder(kg.float32, shape=[None, 784])``.

    ``shape=None`` accepts any shape; ``None`` (or -1) inside a shape accepts any size for
    that dim; a single int is a 1-d shape (``shape=3`` is ``[3]``), as in TF1. Anything else
    (a float, a string, a bool, a negative size) is refused with TF1's words.
    """
    dt = D.as_dtype(dtype)
    location = user_location(2)
    if shape is not None:
        try:
            shape = _shape_of(shape)
        except (TypeError, ValueError) as e:
            raise type(e)(f"placeholder: Error converting shape to a TensorShape: {e}"
                          f"{where(location)}") from None
    graph = get_default_graph()
    return graph.add_node(placeholder_op, (), {"shape": shape}, shape, dt, name or "Placeholder",
                          location)


def _shape_of(shape) -> tuple:
    """A placeholder's ``shape`` as a tuple of ints and Nones, by TF1's TensorShape rules."""
    if hasattr(shape, "as_list") and hasattr(shape, "ndims"):  # a shape object (TF1's)
        if shape.ndims is None:
            raise ValueError("a placeholder's shape of unknown rank is shape=None")
        return tuple(shape.as_list())
    if isinstance(shape, list | tuple):  # a size object (x.shape[1] in TF1) has .value
        shape = [getattr(d, "value", d) if not isinstance(d, np.ndarray) else d
                 for d in shape]
    if _is_dim(shape) or not (isinstance(shape, str | bytes) or hasattr(shape, "__iter__")):
        shape = (shape,)  # one dimension (a float among them is refused below)
    elif isinstance(shape, str | bytes):
        text = shown(shape, 40)
        raise TypeError(f"Failed to convert '{text}' to a shape: '{text}' could not be "
                        "converted to a dimension. A shape should either be single dimension "
                        "(e.g. 10), or an iterable of dimensions (e.g. [1, 10, None]).")
    dims = []
    for d in shape:
        if d is None or (_is_dim(d) and int(d) == -1):  # -1: unknown, as None
            dims.append(None)
        elif _is_dim(d):
            if d < 0:
                raise ValueError(f"Dimension {int(d)} must be >= 0.")
            dims.append(int(d))
        else:
            raise TypeError(f"Dimension value must be integer or None or have an __index__ "
                            f"method, got value '{shown(d, 40)}' with type '{type(d)}'.")
    return tuple(dims)


def _is_dim(d) -> bool:
    return hasattr(d, "__index__") and not isinstance(d, bool | np.bool_ | np.ndarray)


def constant(value, dtype=None, shape=None, name=None) -> Node:
    """A value fixed in the graph: ``kg.constant([1.0, 2.0])`` (floats become float32)."""
    return constant_node(value, dtype=dtype, shape=shape, name=name, location=user_location(2))


class Variable(Node):
    """A trainable value stored in the Session: ``w = kg.Variable(np.zeros((3, 2)), name="w")``.

    Use it like any node in ops; ``w.assign(v)``, ``w.assign_add(v)``, ``w.assign_sub(v)``
    make nodes that change it when run. ``kg.global_variables_initializer()`` sets every
    variable to its initial value.
    """

    __slots__ = ("initial_value", "initializer", "trainable")

    def __new__(cls, initial_value, name=None, trainable: bool = True, dtype=None):
        graph = get_default_graph()
        location = user_location(2)
        base = name or "Variable"
        if isinstance(initial_value, Node):
            init = initial_value
            if dtype is not None and D.as_dtype(dtype) is not init.dtype:
                init = build(registry.OPS["cast"], (init,), {"dtype": D.as_dtype(dtype)})
        else:
            init = constant_node(initial_value, dtype=dtype, graph=graph, location=location,
                                 name=base + "/initial_value")
        var = graph.add_node(variable_op, (), {}, init.shape, init.dtype, base, location,
                             cls=cls)
        var.initial_value = init
        var.trainable = trainable
        graph.variables.append(var)
        var.initializer = var._assign_node(assign_op, init, var.name + "/Assign")
        return var

    def __init__(self, *args, **kwargs):
        pass  # everything happens in __new__, which builds the node through Graph.add_node

    def _assign_node(self, op, value, name=None):
        # An assign made while a branch or loop body is traced (a graph that encloses the
        # variable's) belongs to it: it runs when the branch or body does, and writes the
        # variable of the Session that runs the loop.
        graph = self.graph
        for inner in (get_default_graph(), getattr(value, "graph", None)):
            if inner is not graph and getattr(inner, "encloses", lambda g: False)(graph):
                graph = inner
        if not isinstance(value, Node):
            value = constant_node(value, dtype=self.dtype, graph=graph,
                                  location=user_location(3))
        if value.graph is not graph:
            if not getattr(graph, "encloses", lambda g: False)(value.graph):
                raise ValueError(f"Tensor {value!r} must be from the same graph as {self!r}.")
            value = graph.capture(value)  # an outer value read inside the branch or body
        value = placed(value, self.device, user_location(3))  # assigned where it is stored
        shape, dtype = _assign_infer([self.shape, value.shape], [self.dtype, value.dtype], {})
        if value.shape is not None and self.shape is not None and (
                len(value.shape) != len(self.shape) or any(
                    a is not None and b is not None and a != b
                    for a, b in zip(value.shape, self.shape))):
            raise ValueError(f"Cannot assign a value of shape {value.shape} to variable "
                             f"'{self.name}' of shape {self.shape}")
        return graph.add_node(op, (self, value), {}, shape, dtype, name or op.name,
                              user_location(3), device=self.device)

    def assign(self, value, name=None) -> Node:
        """A node that sets this variable to ``value`` when run (and outputs the new value)."""
        return self._assign_node(assign_op, value, name)

    def assign_add(self, delta, name=None) -> Node:
        return self._assign_node(assign_add_op, delta, name)

    def assign_sub(self, delta, name=None) -> Node:
        return self._assign_node(assign_sub_op, delta, name)

    def value(self) -> Node:
        return self

    read_value = value

    def initialized_value(self) -> Node:
        return self.initial_value

    def __repr__(self):
        return f"<kg.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    __str__ = __repr__


registry.FRONTENDS[Variable] = build


def group(*inputs, name=None) -> Node:
    """A node that, when run, runs all of ``inputs`` (TF1's ``tf.group``); its value is None."""
    nodes = [i for i in inputs if i is not None]
    graph = nodes[0].graph if nodes else get_default_graph()
    return graph.add_node(no_op, (), {}, (), D.bool_, name or "group", user_location(2),
                          control_inputs=nodes)


def global_variables_initializer() -> Node:
    """A node that initialises every variable of the default graph when run."""
    graph = get_default_graph()
    return graph.add_node(no_op, (), {}, (), D.bool_, "init", user_location(2),
                          control_inputs=[v.initializer for v in graph.variables])


def variables_initializer(var_list, name="init") -> Node:
    graph = get_default_graph()
    return graph.add_node(no_op, (), {}, (), D.bool_, name, user_location(2),
                          control_inputs=[v.initializer for v in var_list])


def global_variables() -> list:
    return list(get_default_graph().variables)


def trainable_variables() -> list:
    return [v for v in get_default_graph().variables if v.trainable]
