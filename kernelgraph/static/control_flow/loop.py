"""The static ``kg.while_loop``: traced ``cond`` and ``body``, one ``while_loop`` node.

``cond`` and ``body`` are traced once on one placeholder per loop variable, shaped by its
*shape invariant*; ``cond`` is traced once more inside the body's graph, on the values the
body returns, so that one run of the body also says whether to go on: an iteration is one
plan call, not two. The node's kernel (:class:`WhileSpec`) runs the body until ``cond``
fails, checking each iteration's shapes against the invariants, and keeps what the loop's
gradient (:mod:`.loop_gradient`) reads: the loop variables before each iteration and the
body's activations it asks for.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as D
from ...eager import Tensor
from ...errors import shown
from ...graph import Node, shape_str
from ...ops.control import OBJECT, Results, describe, flatten, pack_as, structure_of, while_op
from ..build import constant_node, placed
from .loop_gradient import while_gradient
from .subgraph import FedValues, Subgraph, TupleSpec, run_bool
from .tracing import (
    CPU,
    call,
    graph_for,
    inner,
    made_at,
    param_names,
    read_in,
    trace_function,
    tuple_outputs,
    union,
    where,
)


def run_count(value) -> int:
    """A loop's maximum_iterations at run time, which must be a non-negative int."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu" or arr.ndim != 0 or arr < 0:
        raise ValueError("kg.while_loop: maximum_iterations must be a non-negative int "
                         f"scalar, got {arr.dtype.name} {shape_str(arr.shape)}")
    return int(arr)


class WhileSpec(TupleSpec):
    """The kernel of a ``while_loop`` node (see :func:`build_while`). The body's outputs are
    the new loop variables, the per-iteration values (stacked at the end), cond on the new
    loop variables, then the activations kept for the gradient (:attr:`saved`)."""

    def __init__(self, cond: Subgraph, body: Subgraph, names, invariants, stacked_shapes,
                 maximum_iterations, max_input: bool, back_prop: bool, n_like: int = 0):
        self.cond, self.body = cond, body
        self.names, self.invariants = list(names), list(invariants)
        self.n_vars = len(self.invariants)
        self.stacked_shapes = list(stacked_shapes)  # per-iteration outputs stacked at the end
        self.maximum_iterations = maximum_iterations
        # The node's inputs: loop variables, captures, then maximum_iterations if it is a
        # tensor, then (n_like) values shaped like one iteration of each stacked output.
        self.max_input = max_input
        self.n_like = n_like
        self.back_prop = back_prop
        self.name, self.location = "", None
        self._known_dims = None  # see _check_shapes
        # Body nodes whose values each iteration keeps for the loop's gradient (TF's stacks),
        # output by the body after the others.
        self.saved: list[Node] = []
        self.n_outputs = len(body.outputs)

    def keep_for_gradient(self, nodes) -> list[int]:
        """Make the body also output ``nodes`` (its own) each iteration, kept in the node's
        ``Results.saved``; returns their positions there."""
        at = {id(node): k for k, node in enumerate(self.saved)}  # by id: == makes a node
        for node in nodes:
            if id(node) not in at:
                at[id(node)] = len(self.saved)
                self.saved.append(node)
                self.body.outputs = self.body.outputs[:self.n_outputs] + self.saved
                self.body._family = None  # recompiled with the new outputs
        return [at[id(node)] for node in nodes]

    def gradient(self, node, g, needs, inputs) -> tuple:
        """The gradient rule of the ``while_loop`` node ``node``: see
        :func:`~.loop_gradient.while_gradient`."""
        return while_gradient(node, g, needs, self, inputs)

    def run(self, inputs) -> Results:
        n = self.n_vars
        rest = list(inputs[n:])
        likes = rest[len(rest) - self.n_like:] if self.n_like else [None] * len(
            self.stacked_shapes)
        limit = run_count(rest[len(rest) - self.n_like - 1]) if self.max_input else \
            self.maximum_iterations
        values = list(inputs[:n])
        history = [tuple(values)] if self.back_prop else None
        n_steps = len(self.stacked_shapes)
        steps = [[] for _ in range(n_steps)]
        saved = [] if self.back_prop else None
        iteration = 0
        fed = FedValues()
        if limit is None or limit > 0:
            full = values + rest
            keep = self.cond.run([full[i] for i in self.cond.index],
                                 lambda: self._context("cond", 0))[0]
        while (limit is None or iteration < limit) and run_bool(
                keep, f"kg.while_loop '{self.name}': the value cond returns"):
            full = values + rest
            out = self.body.run([full[i] for i in self.body.index],
                                lambda it=iteration: self._context("body", it), fed)
            keep = out[n + n_steps]  # cond on the new values, computed by the body
            self._check_shapes(out[:n], iteration)
            for step, value in zip(steps, out[n:n + n_steps]):
                step.append(value)
            values = list(out[:n])
            iteration += 1
            if history is not None:
                history.append(tuple(values))
                saved.append(tuple(out[n + n_steps + 1:]))
        if iteration == 0:  # the inputs' own arrays (a variable's, a constant's) stay theirs
            values = [np.array(v, copy=True) for v in values]
        stacked = []
        for step, shape, node, like in zip(steps, self.stacked_shapes, self.body.outputs[n:],
                                           likes):
            if step:
                stacked.append(np.stack(step))
            else:  # no iteration: (0, one iteration's shape), from `like` when it is given
                shape = np.shape(like) if like is not None else [d or 0 for d in shape or ()]
                stacked.append(np.zeros((0, *shape), node.dtype))
        return Results(values + stacked, history, saved)

    def _context(self, part: str, iteration: int) -> str:
        return f"in the {part} of iteration {iteration}, " + made_at(
            "kg.while_loop", self.name, self.location)

    def _check_shapes(self, values, iteration):
        # Run once per iteration: the invariants' known dims, listed once.
        if self._known_dims is None:
            self._known_dims = [(k, len(inv), [(i, d) for i, d in enumerate(inv)
                                               if d is not None])
                                for k, inv in enumerate(self.invariants) if inv is not None]
        for k, rank, dims in self._known_dims:
            shape = np.shape(values[k])
            if len(shape) == rank:
                for i, d in dims:  # (a loop, not any(<generator>): once per iteration)
                    if shape[i] != d:
                        break
                else:
                    continue
            raise ValueError(
                    f"kg.while_loop: loop variable {k} ('{self.names[k]}') has shape "
                    f"{shape_str(shape)} after iteration {iteration}, but its shape invariant "
                    f"is {shape_str(self.invariants[k])}; declare the dims that change with "
                    "shape_invariants= (None for a dim that may change)")


def _invariants(shape_invariants, loop_vars, init, location) -> list:
    if shape_invariants is None:
        return [n.shape for n in init]
    # A shape is itself a list ([None, 4]): walk loop_vars' structure to find them.
    flat = []

    def walk(template, inv):
        if isinstance(template, list | tuple | dict):
            kind = dict if isinstance(template, dict) else (list, tuple)
            if not isinstance(inv, kind) or len(inv) != len(template) or (
                    kind is dict and set(inv) != set(template)):
                raise ValueError("kg.while_loop: shape_invariants must have the structure "
                                 f"of loop_vars, got {shown(inv)}{where(location)}")
            for key, t in (template.items() if kind is dict else enumerate(template)):
                walk(t, inv[key])
        else:
            flat.append(inv)

    walk(loop_vars, shape_invariants)
    out = []
    for k, (inv, node) in enumerate(zip(flat, init)):
        if inv is not None:
            try:
                inv = tuple(None if d is None or d == -1 else int(d) for d in inv)
            except TypeError:
                raise TypeError(f"kg.while_loop: shape invariant {k} must be a list of ints "
                                f"and None, got {shown(inv)}{where(location)}") from None
            if node.shape is not None and (len(inv) != len(node.shape) or any(
                    a is not None and b is not None and a != b
                    for a, b in zip(inv, node.shape))):
                raise ValueError(f"kg.while_loop: loop variable {k} enters the loop with shape "
                                 f"{shape_str(node.shape)}, which does not fit its shape "
                                 f"invariant {shape_str(inv)}{where(location)}")
        out.append(inv)
    return out


def build_while(cond, body, loop_vars, shape_invariants, maximum_iterations, back_prop,
                name, location, stacked: int = 0, stacked_like=None):
    """The static ``kg.while_loop`` (see :func:`.api.while_loop`).

    With ``stacked=k`` (used by ``kg.nn.dynamic_rnn``), ``body`` returns ``(new_loop_vars,
    [k per-iteration values])`` and the result is ``(final_loop_vars, [k stacked values])``,
    each stacked value of shape ``[iterations, ...]`` (TF's TensorArray, without one).
    ``stacked_like`` (k nodes) gives the shape of one iteration's values for a loop that
    runs no iteration at all.
    """
    flat = flatten(loop_vars)
    graph = graph_for(flat + [maximum_iterations])
    init = []
    for k, v in enumerate(flat):
        if isinstance(v, Node) and v.symbolic:
            init.append(read_in(graph, v, location))
        elif isinstance(v, Tensor):
            raise TypeError(f"kg.while_loop: loop variable {k} is an eager tensor, but the "
                            f"loop is in a graph; use graph nodes{where(location)}")
        else:
            try:
                init.append(constant_node(v, graph=graph, location=location))
            except TypeError as e:
                raise TypeError(f"kg.while_loop: loop variable {k}: {e}{where(location)}") \
                    from None
    n = len(init)
    invariants = _invariants(shape_invariants, loop_vars, init, location)
    names = param_names(body, n) if isinstance(loop_vars, list | tuple) and \
        len(loop_vars) == n else [f"loop_var_{k}" for k in range(n)]
    params = [(names[k], invariants[k], init[k].dtype) for k in range(n)]

    c_graph, c_inputs, c_out = trace_function(cond, graph, "cond of kg.while_loop", location,
                                              params, loop_vars)
    c_flat = flatten(c_out)
    if len(c_flat) != 1:
        raise ValueError(f"kg.while_loop: cond must return one bool scalar, got "
                         f"{len(c_flat)} values{where(location)}")
    keep = inner(c_graph, c_flat[0], D.bool_, "cond of kg.while_loop", 0)
    if keep.dtype != D.bool_ or (keep.shape is not None and keep.shape != ()):
        raise TypeError(f"kg.while_loop: cond must return a bool scalar, got {describe(keep)}"
                        f"{where(keep.location or location)}")

    b_graph, b_inputs, b_out = trace_function(body, graph, "body of kg.while_loop", location,
                                              params, loop_vars)
    per_step = []
    if stacked:
        b_out, per_step = b_out
    if isinstance(loop_vars, list | tuple) and len(loop_vars) == 1 and \
            not isinstance(b_out, list | tuple):
        b_out = [b_out]  # a body of one loop variable may return it bare
    b_flat = flatten(b_out)
    if structure_of(b_out) != structure_of(loop_vars):
        raise ValueError(f"kg.while_loop: body must return the structure of loop_vars ({n} "
                         f"value(s)), got {len(b_flat)}{where(location)}")
    new = []
    for k, (value, node) in enumerate(zip(b_flat, init)):
        out = inner(b_graph, value, node.dtype, "body of kg.while_loop", k)
        if out.dtype != node.dtype:
            raise TypeError(f"kg.while_loop: loop variable {k} ('{names[k]}') enters the loop "
                            f"as {node.dtype.name} but the body returns {out.dtype.name}; a "
                            f"loop variable keeps its dtype (use kg.cast)"
                            f"{where(out.location or location)}")
        inv = invariants[k]
        if inv is not None and out.shape is not None and (len(out.shape) != len(inv) or any(
                a is not None and b is not None and a != b for a, b in zip(inv, out.shape))):
            raise ValueError(f"kg.while_loop: loop variable {k} ('{names[k]}') enters the "
                             f"loop with shape {shape_str(inv)} but the body returns shape "
                             f"{shape_str(out.shape)}; declare the dims that change with "
                             f"shape_invariants= (None for a dim that may change)"
                             f"{where(out.location or location)}")
        new.append(out)
    steps = [inner(b_graph, v, None, "body of kg.while_loop", n + j)
             for j, v in enumerate(per_step)]
    # The body also computes cond on the values it returns (cond traced once more, into the
    # body's graph): one plan call per iteration instead of two. The cond graph runs only
    # before the first iteration.
    with b_graph.as_default():
        again = inner(b_graph, flatten(call(cond, loop_vars, new))[0], D.bool_,
                      "cond of kg.while_loop", 0)

    rest, (c_index, b_index) = union([c_graph.captures, b_graph.captures])
    max_input = isinstance(maximum_iterations, Node)
    if max_input:
        limit = read_in(graph, maximum_iterations, location)
        if limit.dtype not in D.INTS or (limit.shape is not None and limit.shape != ()):
            raise TypeError(f"kg.while_loop: maximum_iterations must be an int scalar, got "
                            f"{describe(limit)}{where(location)}")
        rest.append(limit)
    likes = [read_in(graph, x, location) for x in stacked_like or ()]
    rest.extend(likes)
    c_sub = Subgraph(c_graph, c_inputs + [p for _, p in c_graph.captures], [keep],
                     list(range(n)) + [n + i for i in c_index], "cond of kg.while_loop")
    b_sub = Subgraph(b_graph, b_inputs + [p for _, p in b_graph.captures],
                     new + steps + [again], list(range(n)) + [n + i for i in b_index],
                     "body of kg.while_loop")
    spec = WhileSpec(c_sub, b_sub, names, invariants, [s.shape for s in steps],
                     None if max_input else maximum_iterations, max_input, back_prop,
                     len(likes))
    ins = tuple(placed(x, CPU, location) for x in init + rest)
    node = graph.add_node(while_op, ins, {"spec": spec}, None, OBJECT, name or "while",
                          location, device=CPU)
    spec.name, spec.location = node.name, location
    c_graph.sealed = b_graph.sealed = True
    shapes = invariants + [(None, *s.shape) if s.shape is not None else None for s in steps]
    outs = tuple_outputs(node, shapes, [x.dtype for x in init] + [s.dtype for s in steps],
                         location)
    finals = pack_as(loop_vars, outs[:n])
    return (finals, outs[n:]) if stacked else finals
