"""The static ``kg.cond``: two traced branches, one ``cond`` node, and its gradient.

The node reads the predicate and the outer nodes either branch captured, and runs only the
branch the predicate picks. Its gradient is a ``cond`` over the branches' gradient graphs
(so it is differentiable again), run after the forward ``cond``: it computes the branch
again, with the branch's random ops repeating the draw the forward made
(``Subgraph.replays``).
"""

from __future__ import annotations

from ... import dtypes as D
from ...errors import ShapeError
from ...graph import Node, shape_str
from ...ops.control import OBJECT, Results, cond_op, describe, flatten, pack_as, structure_of
from ..build import placed
from .subgraph import Subgraph, TupleSpec, gradient_graph, run_bool
from .tracing import (
    CPU,
    graph_for,
    inner,
    made_at,
    placeholder,
    read_in,
    trace_function,
    tuple_outputs,
    union,
    where,
)


class CondSpec(TupleSpec):
    """The kernel of a ``cond`` node: run the branch the predicate picks."""

    def __init__(self, true: Subgraph, false: Subgraph, name: str = "", location=None):
        self.true, self.false = true, false
        self.name, self.location = name, location

    def run(self, pred, inputs) -> Results:
        taken = self.true if run_bool(pred, f"kg.cond '{self.name}': pred") else self.false

        def context():
            return made_at(f"{taken.what.split(' of ')[0]} of kg.cond", self.name,
                           self.location)

        return Results(taken.run([inputs[i] for i in taken.index], context))

    def gradient(self, node, g, needs, pred, inputs) -> tuple:
        """The gradient rule of the ``cond`` node ``node``: see :func:`cond_gradient`."""
        return cond_gradient(node, g, needs, self, pred, inputs)


def make_cond(graph, pred, true: Subgraph, false: Subgraph, inputs, shapes, dtypes, name,
              location, after=()) -> list[Node]:
    """A ``cond`` node reading ``pred`` and ``inputs`` (which feed the branches' inputs, by
    their ``index``), run after the nodes ``after``, and its ``output`` nodes."""
    spec = CondSpec(true, false)
    ins = (placed(pred, CPU, location), *(placed(x, CPU, location) for x in inputs))
    node = graph.add_node(cond_op, ins, {"spec": spec}, None, OBJECT, name or "cond", location,
                          control_inputs=after, device=CPU)
    spec.name, spec.location = node.name, location
    true.graph.sealed = false.graph.sealed = True
    return tuple_outputs(node, shapes, dtypes, location)


def _merge_shape(a, b, k, relaxed=False):
    """The static shape of a value the branches give with shapes ``a`` and ``b``: the dims
    they agree on. Unless ``relaxed``, known dims must agree (kg.cond); ``relaxed`` is TF1's
    rule (tf.cond): differing dims become unknown, differing ranks an unknown rank, and the
    run's value has the shape of the branch taken."""
    if a is None or b is None:
        return None
    if len(a) != len(b) or any(x is not None and y is not None and x != y
                               for x, y in zip(a, b)):
        if relaxed:
            return None if len(a) != len(b) else tuple(x if x == y else None
                                                       for x, y in zip(a, b))
        raise ShapeError(f"kg.cond: value {k} has shape {shape_str(a)} in true_fn but "
                         f"{shape_str(b)} in false_fn; shapes may differ only in unknown dims")
    return tuple(x if x == y else None for x, y in zip(a, b))


def build_cond(pred: Node, true_fn, false_fn, name, location, relaxed_shapes=False):
    """The static ``kg.cond`` (see :func:`kernelgraph.static.control_flow.api.cond`)."""
    graph = graph_for([pred])
    pred = read_in(graph, pred, location)
    if pred.dtype != D.bool_:
        raise TypeError(f"kg.cond: pred must be a bool scalar, got {describe(pred)}; compare "
                        f"with a value (x > 0){where(location)}")
    if pred.shape is not None and pred.shape != ():
        raise ValueError(f"kg.cond: pred must be a scalar (shape ()), got {describe(pred)}; "
                         f"reduce it first (kg.reduce_max ...){where(location)}")
    t_graph, _, t_out = trace_function(true_fn, graph, "true_fn of kg.cond", location, [],
                                       None)
    f_graph, _, f_out = trace_function(false_fn, graph, "false_fn of kg.cond", location, [],
                                       None)
    t_flat, f_flat = flatten(t_out), flatten(f_out)
    if structure_of(t_out) != structure_of(f_out):
        raise ValueError(f"kg.cond: true_fn and false_fn must return the same structure; "
                         f"true_fn returned {len(t_flat)} value(s), false_fn {len(f_flat)}"
                         f"{where(location)}")
    t_nodes, f_nodes, shapes, dtypes = [], [], [], []
    for k, (a, b) in enumerate(zip(t_flat, f_flat)):
        hint = a.dtype if isinstance(a, Node) else b.dtype if isinstance(b, Node) else None
        a = inner(t_graph, a, hint, "true_fn of kg.cond", k)
        b = inner(f_graph, b, hint, "false_fn of kg.cond", k)
        if a.dtype != b.dtype:
            raise TypeError(f"kg.cond: value {k} is {a.dtype.name} in true_fn but "
                            f"{b.dtype.name} in false_fn; both branches must give one dtype "
                            f"(use kg.cast){where(location)}")
        try:
            shapes.append(_merge_shape(a.shape, b.shape, k, relaxed_shapes))
        except ShapeError as e:
            raise ShapeError(f"{e}{where(location)}") from None
        t_nodes.append(a)
        f_nodes.append(b)
        dtypes.append(a.dtype)
    inputs, (t_index, f_index) = union([t_graph.captures, f_graph.captures])
    true = Subgraph(t_graph, [p for _, p in t_graph.captures], t_nodes, t_index,
                    "true_fn of kg.cond")
    false = Subgraph(f_graph, [p for _, p in f_graph.captures], f_nodes, f_index,
                     "false_fn of kg.cond")
    outs = make_cond(graph, pred, true, false, inputs, shapes, dtypes, name, location)
    return pack_as(t_out, outs)


def cond_gradient(node, g, needs, spec: CondSpec, pred, inputs):
    """The gradient rule of a ``cond`` node: a ``cond`` over the branches' gradients."""
    none = (None,) * (1 + len(inputs))
    outs = spec.true.outputs
    present = [i for i, gi in enumerate(g.items) if gi is not None and outs[i].dtype in D.FLOATS]
    wanted = [j for j in range(len(inputs)) if needs[1 + j] and inputs[j].dtype in D.FLOATS]
    if not present or not wanted:
        return none
    branches = []
    for sub in (spec.true, spec.false):
        key = (tuple(present), tuple(wanted))
        hit = sub.gradients.get(key)
        if hit is None:
            position = dict(zip(sub.index, sub.inputs))
            extra, extra_index = [], []
            for j in wanted:  # an input the branch does not read: its gradient is zeros
                if j not in position:
                    ph = placeholder(sub.graph, inputs[j].shape, inputs[j].dtype,
                                     "unused_input", sub.graph.location)
                    position[j] = ph
                    extra.append(ph)
                    extra_index.append(j)
            hit = gradient_graph(sub, [sub.outputs[i] for i in present],
                                 [position[j] for j in wanted], f"gradient of the {sub.what}",
                                 extra)
            hit.index = sub.index + extra_index + [len(inputs) + k for k in range(len(present))]
            # The branch's random ops that the gradient computes again repeat their draw.
            hit.replays = hit.random_streams()
            sub.gradients[key] = hit
        branches.append(hit)
    grads = [placed(g.items[i], CPU, node.location) for i in present]
    # After the forward cond (a control input), so that the draws it repeats are this run's.
    made = make_cond(node.graph, pred, branches[0], branches[1], list(inputs) + grads,
                     [inputs[j].shape for j in wanted], [inputs[j].dtype for j in wanted],
                     "cond_grad", node.location, after=(node,))
    result = list(none)
    for j, out in zip(wanted, made):
        result[1 + j] = out
    return tuple(result)
