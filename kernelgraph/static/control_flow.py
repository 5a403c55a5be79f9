"""Static control flow: how ``kg.cond`` and ``kg.while_loop`` become graph nodes.

The design is TF2's *functional* control flow, small enough to read:

- **Tracing.** Each branch of a cond, and the ``cond``/``body`` of a loop, is called once on
  placeholders inside a private :class:`FuncGraph`. An outer node read inside becomes a
  *capture*: a placeholder of the inner graph and an extra input of the control-flow node
  (``build.py`` asks the graph being traced to capture any outer node an op reads). A
  loop's ``cond`` is called once more, inside the body's graph on the values the body
  returns, so that one run of the body also says whether to go on: an iteration is one
  plan call, not two.
- **One node, a tuple value.** The IR has one output per node, so a ``cond`` or
  ``while_loop`` node's value is a :class:`~kernelgraph.ops.control.Results` tuple, and one
  ``output`` node per item picks it: those are what the user holds.
- **Running.** The node's kernel runs the inner graph through a :class:`Session` of its own
  (:class:`Subgraph`): the same compiler passes and generated plan as any run, and an error
  inside names the inner node and the user's line, plus the loop iteration.
- **Gradients.** ``kg.gradients`` inside the inner graph (with placeholders for the incoming
  gradients) gives each branch's or body's gradient graph. The gradient of a ``cond`` is a
  ``cond`` over the branches' gradient graphs (so it is differentiable again), run after the
  forward ``cond``: it computes the branch again, with the branch's random ops repeating
  the draw the forward made (``Subgraph.replays``); the gradient
  of a ``while_loop`` is a ``while_grad`` node that runs the body's gradient graph backwards
  over the loop variables the forward run recorded, summing the gradients of the captured
  tensors (weights) over the iterations. The activations that gradient graph reads (an
  RNN cell's output, a dropout mask) are kept by the forward loop each iteration, as TF's
  stacks keep them, and fed to it: the body's forward is not computed twice, and a random
  draw in the body is the same draw in its gradient.
"""

from __future__ import annotations

import inspect

import numpy as np

from .. import devices, trace
from .. import dtypes as D
from ..errors import OpError, ShapeError, shown
from ..graph import Graph, Node, describe_location, get_default_graph, shape_str
from ..ops import matmul, matrix_transpose, sum_to_like, zeros_like
from ..ops import sum as reduce_sum
from ..ops.control import (
    OBJECT,
    Results,
    cond_op,
    describe,
    flatten,
    output_op,
    pack_as,
    structure_of,
    while_grad_op,
    while_op,
)
from . import passes
from .build import constant_node, placed
from .variables import placeholder_op

CPU = devices.CPU


# -- tracing -------------------------------------------------------------------------------------
class FuncGraph(Graph):
    """The graph a branch or loop body is traced into; ``outer`` is the graph around it.

    ``captures`` lists ``(outer node, placeholder)`` for every outer node read inside, in
    the order they were first read.

    >>> import kernelgraph as kg
    >>> g = kg.Graph()
    >>> with g.as_default():
    ...     w = kg.constant(2.0, name="w")
    ...     inner = FuncGraph(g, "example")
    ...     with inner.as_default():
    ...         y = w * 3.0
    >>> y.graph is inner, [(o.name, p.name) for o, p in inner.captures]
    (True, [('w', 'w')])
    """

    def __init__(self, outer: Graph, what: str, location=None):
        super().__init__()
        self.outer = outer
        self.what = what  # "body of kg.while_loop": how error messages name this graph
        self.location = location
        self.captures: list[tuple[Node, Node]] = []
        self._captured: dict[int, Node] = {}
        self.sealed = False  # set once the control-flow node exists: its inputs are fixed

    def encloses(self, graph: Graph) -> bool:
        """Whether ``graph`` is this graph or one around it."""
        g = self
        while g is not None:
            if g is graph:
                return True
            g = getattr(g, "outer", None)
        return False

    @property
    def root(self) -> Graph:
        """The outermost graph (the user's): where variables live."""
        g = self
        while isinstance(g, FuncGraph):
            g = g.outer
        return g

    def capture(self, node: Node) -> Node:
        """The node of this graph that stands for ``node`` (a placeholder for an outer one)."""
        if node.graph is self:
            return node
        hit = self._captured.get(id(node))
        if hit is not None:
            return hit
        if node.graph is self.outer:
            source = node
        elif isinstance(self.outer, FuncGraph) and self.outer.encloses(node.graph):
            source = self.outer.capture(node)  # through each graph in between
        else:
            raise ValueError(f"Tensor {node!r} is not from the graph being built or one "
                             f"around it, so the {self.what} cannot read it"
                             f"{_where(node.location)}")
        hit = self._captured.get(id(source))
        if hit is None:
            if self.sealed:
                raise ValueError(f"the {self.what} is already built; it cannot read "
                                 f"'{node.name}' any more")
            hit = self.add_node(placeholder_op, (), {"shape": source.shape}, source.shape,
                                source.dtype, source.name, source.location, device=CPU)
            self._captured[id(source)] = hit
            self.captures.append((source, hit))
        self._captured[id(node)] = hit
        return hit


def _where(location) -> str:
    return f"\n{describe_location(location)}" if location else ""


def root_graph(graph: Graph) -> Graph:
    """The user's graph around ``graph`` (``graph`` itself unless it is a FuncGraph)."""
    return graph.root if isinstance(graph, FuncGraph) else graph


def _param_names(fn, count: int) -> list[str]:
    """Placeholder names for a loop's variables: the body's parameter names if it has one
    per variable, so that errors say 'h' rather than 'loop_var_1'."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) == count and all(n.isidentifier() for n in names):
        return names
    return [f"loop_var_{k}" for k in range(count)]


def _call(fn, template, nodes):
    """``fn`` called on ``nodes`` arranged like ``template`` (``fn()`` when it is None)."""
    if template is None:
        return fn()
    args = pack_as(template, nodes)
    return fn(*args) if isinstance(template, list | tuple) else fn(args)


def _trace(fn, outer: Graph, what: str, location, params, template):
    """Call ``fn`` inside a new FuncGraph, on one placeholder per ``(name, shape, dtype)`` in
    ``params`` arranged like ``template`` (``fn()`` when there are none)."""
    graph = FuncGraph(outer, what, location)
    with graph.as_default():
        inputs = [graph.add_node(placeholder_op, (), {"shape": shape}, shape, dtype, name,
                                 location, device=CPU) for name, shape, dtype in params]
        result = _call(fn, template, inputs)
    for var in graph.variables:
        raise ValueError(f"kg.Variable '{var.name}' was created inside the {what}; create "
                         f"variables before the loop or cond that uses them"
                         f"{_where(var.location)}")
    return graph, inputs, result


def _inner(graph: FuncGraph, value, dtype, what: str, k: int) -> Node:
    """What a traced function returned, as a node of its graph (numbers become constants
    of ``dtype``; outer nodes are captured)."""
    if isinstance(value, Node) and type(value).__name__ != "EagerNode":
        return value if value.graph is graph else graph.capture(value)
    where = _where(graph.location)
    if value is None:
        raise TypeError(f"the {what} returned None as value {k}; it must return tensors{where}")
    if type(value).__name__ == "Tensor":
        raise TypeError(f"the {what} returned an eager tensor as value {k}; inside a graph "
                        "use graph nodes (kg.constant(t.detach().numpy()) for a fixed value)"
                        f"{where}")
    try:
        return constant_node(value, dtype=dtype, graph=graph, location=graph.location)
    except (TypeError, ValueError) as e:
        raise TypeError(f"the {what} returned {describe(value)} as value {k}: {e}{where}") \
            from None


def _union(subgraph_captures: list) -> tuple[list, list]:
    """The outer nodes all the traced functions read (each once), and for each function the
    position of each of its captures in that list."""
    nodes, position, indices = [], {}, []
    for captures in subgraph_captures:
        index = []
        for outer, _ in captures:
            if id(outer) not in position:
                position[id(outer)] = len(nodes)
                nodes.append(outer)
            index.append(position[id(outer)])
        indices.append(index)
    return nodes, indices


# -- running -------------------------------------------------------------------------------------
class Subgraph:
    """A traced function: ``inputs`` (placeholders of ``graph``) -> ``outputs`` (nodes of
    ``graph``). ``index[i]`` says which input of the control-flow node feeds ``inputs[i]``.
    Runs through a Session of its own, compiled once like any run."""

    def __init__(self, graph: FuncGraph, inputs: list, outputs: list, index: list, what: str):
        self.graph = graph
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.index = list(index)
        self.what = what
        self.gradients: dict = {}  # cache of gradient Subgraphs, by what they differentiate
        # Random streams whose last draw a run repeats: a cond's gradient computes its
        # branch's forward again, and must see the forward's dropout masks, not new ones.
        self.replays: tuple = ()
        self._session = None
        self._family = None  # the compiled plans of an untraced run, per fed shapes

    def run(self, values, context, fed=None) -> list:
        """The outputs' values for the inputs' ``values``; an error inside is re-raised with
        ``context()`` (where the control-flow node was made, which iteration) added.
        ``fed`` (a :class:`FedValues`, one per loop run) lets the iterations of a loop check
        and convert a value they all get (a capture: a weight, the input batch) once."""
        if self._session is None:
            from .session import Session

            self._session = Session(self.graph)
        for stream in self.replays:
            stream.replaying = True
        try:
            if trace.active:  # a watched run reports every node: the Session's own path
                return self._session.run(self.outputs, dict(zip(self.inputs, values)))
            return self._run_plan(values, fed)
        except OpError as e:  # already names the inner node and the user's line
            raise type(e)(f"{e.message}\n  {context()}", node=e.node) from None
        finally:
            for stream in self.replays:
                stream.replaying = False

    def _run_plan(self, values, fed=None) -> list:
        # What Session.run does, less what a loop body run once per iteration need not
        # repeat: looking up the fetches and feeds, and rebuilding the fetch structure.
        if self._family is None:
            self._family = self._session._family(self.outputs, tuple(self.inputs))[0]
        family = self._family
        plan = None
        if fed is None or fed.values is None:
            args = [convert(v) for convert, v in zip(family.converters, values)]
        else:  # the very object the last iteration was fed: checked and converted then
            plan, args = fed.plan, []
            for convert, v, last, a in zip(family.converters, values, fed.values, fed.args):
                if v is not last:
                    v = convert(v)
                    if v.shape != a.shape:  # (else the last iteration's plan fits)
                        plan = None
                    a = v
                args.append(a)
        if plan is None:
            plan = family.for_values(args)
        if fed is not None:
            fed.values, fed.args, fed.plan = values, args, plan
        try:
            return list(plan.fn(*args))
        except OpError:
            raise
        except Exception as e:  # noqa: BLE001 - re-raised naming the node and user line
            raise plan.explain(e) from None

    def __repr__(self):
        return (f"<Subgraph {self.what}: {len(self.inputs)} inputs, "
                f"{len(self.outputs)} outputs, {len(self.graph.nodes)} nodes>")


class FedValues:
    """What one loop run last fed a Subgraph, what that became (see Subgraph.run) and the
    plan it ran, which the next iteration reuses when what changed kept its shape. Holding
    the values keeps them alive, so an ``is`` test cannot meet a recycled id; the loop drops
    this when it ends."""

    __slots__ = ("values", "args", "plan")

    def __init__(self):
        self.values = self.args = self.plan = None


def _run_bool(value, what: str) -> bool:
    arr = np.asarray(value)
    if arr.dtype != np.bool_ or arr.ndim != 0:
        raise ValueError(f"{what} must be a bool scalar, got {arr.dtype.name} of shape "
                         f"{shape_str(arr.shape)}")
    return bool(arr)


def _run_count(value) -> int:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu" or arr.ndim != 0 or arr < 0:
        raise ValueError("kg.while_loop: maximum_iterations must be a non-negative int "
                         f"scalar, got {arr.dtype.name} {shape_str(arr.shape)}")
    return int(arr)


def _made_at(what: str, name: str, location) -> str:
    return f"in the {what} '{name}', created at:\n{describe_location(location)}" \
        if location else f"in the {what} '{name}'"


class CondSpec:
    """The kernel of a ``cond`` node: run the branch the predicate picks."""

    def __init__(self, true: Subgraph, false: Subgraph, name: str = "", location=None):
        self.true, self.false = true, false
        self.name, self.location = name, location

    def run(self, pred, inputs) -> Results:
        taken = self.true if _run_bool(pred, f"kg.cond '{self.name}': pred") else self.false

        def context():
            return _made_at(f"{taken.what.split(' of ')[0]} of kg.cond", self.name,
                            self.location)

        return Results(taken.run([inputs[i] for i in taken.index], context))


class WhileSpec:
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

    def run(self, inputs) -> Results:
        n = self.n_vars
        rest = list(inputs[n:])
        likes = rest[len(rest) - self.n_like:] if self.n_like else [None] * len(
            self.stacked_shapes)
        limit = _run_count(rest[len(rest) - self.n_like - 1]) if self.max_input else \
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
                                 lambda: self._where("cond", 0))[0]
        while (limit is None or iteration < limit) and _run_bool(
                keep, f"kg.while_loop '{self.name}': the value cond returns"):
            full = values + rest
            out = self.body.run([full[i] for i in self.body.index],
                                lambda it=iteration: self._where("body", it), fed)
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

    def _where(self, part: str, iteration: int) -> str:
        return f"in the {part} of iteration {iteration}, " + _made_at(
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


class WhileGradSpec:
    """The kernel of a ``while_grad`` node: the body's gradient graph, run from the last
    iteration to the first on the loop variables the forward run recorded."""

    def __init__(self, sub: Subgraph, saved_at: list, n_vars: int, floats: list,
                 stacked: list, present: list, caps: list, n_rest: int, name: str, location,
                 summed=None):
        self.sub = sub  # inputs: the body inputs it reads, the saved activations, gradients
        # Per capture, how its gradient over the iterations comes from sub's outputs after
        # the loop gradients: (None, [k]) adds output k up iteration by iteration; (node,
        # [value, ...]) runs node once on values joined over the iterations, each value
        # ("out", k), sub's output k, or ("in", k), what sub is fed at position k (see
        # _summed_once). None: every capture's is output len(floats) + c, added up.
        self.summed = summed or [(None, [len(floats) + c]) for c in range(len(caps))]
        self._rows = sorted({v for node, at in self.summed if node is not None for v in at})
        self.saved_at = saved_at  # where each saved activation it reads is in Results.saved
        self.n_vars = n_vars
        self.floats = floats    # loop variables that carry gradients
        self.stacked = stacked  # float per-iteration outputs (their index among those)
        self.present = present  # outputs of the forward node whose gradient is an input here
        self.caps = caps        # forward-node inputs (captures) whose gradient is summed
        self.n_rest = n_rest
        self.name, self.location = name, location

    def run(self, results: Results, inputs) -> Results:
        n = self.n_vars
        rest, given = list(inputs[:self.n_rest]), dict(zip(self.present, inputs[self.n_rest:]))
        final, history = results.values, results.history
        grads = [given[k] if k in given else np.zeros_like(final[k]) for k in self.floats]
        per_step = [given.get(n + s) for s in self.stacked]
        sums = [None] * len(self.caps)
        saved = results.saved
        # One zero gradient per per-iteration output that received none, fed to every
        # iteration (a plan never writes into what it is fed).
        zeros = [np.zeros_like(final[n + s][0]) if g is None and len(history) > 1 else None
                 for g, s in zip(per_step, self.stacked)]
        fed = FedValues()
        rows = {v: [] for v in self._rows}  # a value of _rows -> its value at each iteration
        for i in reversed(range(len(history) - 1)):
            full, kept = list(history[i]) + rest, saved[i]
            step_grads = [g[i] if g is not None else z for g, z in zip(per_step, zeros)]
            ins = ([full[j] for j in self.sub.index] + [kept[j] for j in self.saved_at] +
                   grads + step_grads)
            out = self.sub.run(ins, lambda i=i: f"in the body's gradient at iteration {i}, " +
                               _made_at("gradient of kg.while_loop", self.name,
                                        self.location), fed)
            grads = out[:len(self.floats)]
            for v, seen in rows.items():
                seen.append((out if v[0] == "out" else ins)[v[1]])
            for c, (node, at) in enumerate(self.summed):
                if node is not None:
                    continue
                if sums[c] is None:
                    sums[c] = np.array(out[at[0]], copy=True)  # owned: summed into in place
                else:
                    np.add(sums[c], out[at[0]], out=sums[c])
        if rows and len(history) > 1:  # one call over all the iterations' rows (oldest first)
            joined = {v: np.concatenate(seen[::-1]) for v, seen in rows.items()}
            done: dict = {}  # a node's sum, computed once (a cell's two biases share one)
            for c, (node, at) in enumerate(self.summed):
                if node is None:
                    continue
                if id(node) in done:
                    sums[c] = done[id(node)].copy()  # (each capture owns its gradient)
                else:
                    sums[c] = done[id(node)] = _run_on_rows(node, [joined[v] for v in at])
        if len(history) == 1:  # no iteration: the incoming gradients pass through, copied
            grads = [np.array(g, copy=True) for g in grads]  # (they may be constants)
        sums = [s if s is not None else np.zeros(np.shape(rest[c]), np.asarray(rest[c]).dtype)
                for s, c in zip(sums, self.caps)]
        return Results(list(grads) + sums)


# -- building nodes ------------------------------------------------------------------------------
def _outputs(node: Node, shapes, dtypes, location, indices=None) -> list[Node]:
    """One ``output`` node per item of ``node``'s tuple value (or per item in ``indices``)."""
    label = node.name.rpartition("/")[2]
    count = len(shapes)
    indices = range(count) if indices is None else indices
    return [node.graph.add_node(output_op, (node,), {"index": i, "count": count}, shapes[i],
                                dtypes[i], f"{label}/output", location, device=CPU)
            for i in indices]


def _graph_for(nodes) -> Graph:
    """The graph new control-flow nodes go into: the one being traced if any, else the
    graph of the first node (as for any op), else the default graph."""
    current = get_default_graph()
    if isinstance(current, FuncGraph):
        return current
    for n in nodes:
        if isinstance(n, Node):
            return n.graph
    return current


def _in(graph: Graph, node: Node, location) -> Node:
    if node.graph is graph:
        return node
    if isinstance(graph, FuncGraph):
        return graph.capture(node)
    raise ValueError(f"Tensor {node!r} must be from the same graph as the other inputs"
                     f"{_where(location)}")


def _merge_shape(a, b, k):
    if a is None or b is None:
        return None
    if len(a) != len(b) or any(x is not None and y is not None and x != y
                               for x, y in zip(a, b)):
        raise ShapeError(f"kg.cond: value {k} has shape {shape_str(a)} in true_fn but "
                         f"{shape_str(b)} in false_fn; shapes may differ only in unknown dims")
    return tuple(x if x == y else None for x, y in zip(a, b))


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
    return _outputs(node, shapes, dtypes, location)


def build_cond(pred: Node, true_fn, false_fn, name, location):
    """The static ``kg.cond`` (see :func:`kernelgraph.ops.control.cond`)."""
    graph = _graph_for([pred])
    pred = _in(graph, pred, location)
    if pred.dtype != D.bool_:
        raise TypeError(f"kg.cond: pred must be a bool scalar, got {describe(pred)}; compare "
                        f"with a value (x > 0){_where(location)}")
    if pred.shape is not None and pred.shape != ():
        raise ValueError(f"kg.cond: pred must be a scalar (shape ()), got {describe(pred)}; "
                         f"reduce it first (kg.reduce_max ...){_where(location)}")
    t_graph, _, t_out = _trace(true_fn, graph, "true_fn of kg.cond", location, [], None)
    f_graph, _, f_out = _trace(false_fn, graph, "false_fn of kg.cond", location, [], None)
    t_flat, f_flat = flatten(t_out), flatten(f_out)
    if structure_of(t_out) != structure_of(f_out):
        raise ValueError(f"kg.cond: true_fn and false_fn must return the same structure; "
                         f"true_fn returned {len(t_flat)} value(s), false_fn {len(f_flat)}"
                         f"{_where(location)}")
    t_nodes, f_nodes, shapes, dtypes = [], [], [], []
    for k, (a, b) in enumerate(zip(t_flat, f_flat)):
        hint = a.dtype if isinstance(a, Node) else b.dtype if isinstance(b, Node) else None
        a = _inner(t_graph, a, hint, "true_fn of kg.cond", k)
        b = _inner(f_graph, b, hint, "false_fn of kg.cond", k)
        if a.dtype != b.dtype:
            raise TypeError(f"kg.cond: value {k} is {a.dtype.name} in true_fn but "
                            f"{b.dtype.name} in false_fn; both branches must give one dtype "
                            f"(use kg.cast){_where(location)}")
        try:
            shapes.append(_merge_shape(a.shape, b.shape, k))
        except ShapeError as e:
            raise ShapeError(f"{e}{_where(location)}") from None
        t_nodes.append(a)
        f_nodes.append(b)
        dtypes.append(a.dtype)
    inputs, (t_index, f_index) = _union([t_graph.captures, f_graph.captures])
    true = Subgraph(t_graph, [p for _, p in t_graph.captures], t_nodes, t_index,
                    "true_fn of kg.cond")
    false = Subgraph(f_graph, [p for _, p in f_graph.captures], f_nodes, f_index,
                     "false_fn of kg.cond")
    outs = make_cond(graph, pred, true, false, inputs, shapes, dtypes, name, location)
    return pack_as(t_out, outs)


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
                                 f"of loop_vars, got {shown(inv)}{_where(location)}")
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
                                f"and None, got {shown(inv)}{_where(location)}") from None
            if node.shape is not None and (len(inv) != len(node.shape) or any(
                    a is not None and b is not None and a != b
                    for a, b in zip(inv, node.shape))):
                raise ValueError(f"kg.while_loop: loop variable {k} enters the loop with shape "
                                 f"{shape_str(node.shape)}, which does not fit its shape "
                                 f"invariant {shape_str(inv)}{_where(location)}")
        out.append(inv)
    return out


def build_while(cond, body, loop_vars, shape_invariants, maximum_iterations, back_prop,
                name, location, stacked: int = 0, stacked_like=None):
    """The static ``kg.while_loop`` (see :func:`kernelgraph.ops.control.while_loop`).

    With ``stacked=k`` (used by ``kg.nn.dynamic_rnn``), ``body`` returns ``(new_loop_vars,
    [k per-iteration values])`` and the result is ``(final_loop_vars, [k stacked values])``,
    each stacked value of shape ``[iterations, ...]`` (TF's TensorArray, without one).
    ``stacked_like`` (k nodes) gives the shape of one iteration's values for a loop that
    runs no iteration at all.
    """
    flat = flatten(loop_vars)
    graph = _graph_for(flat + [maximum_iterations])
    init = []
    for k, v in enumerate(flat):
        if isinstance(v, Node) and type(v).__name__ != "EagerNode":
            init.append(_in(graph, v, location))
        elif type(v).__name__ == "Tensor":
            raise TypeError(f"kg.while_loop: loop variable {k} is an eager tensor, but the "
                            f"loop is in a graph; use graph nodes{_where(location)}")
        else:
            try:
                init.append(constant_node(v, graph=graph, location=location))
            except TypeError as e:
                raise TypeError(f"kg.while_loop: loop variable {k}: {e}{_where(location)}") \
                    from None
    n = len(init)
    invariants = _invariants(shape_invariants, loop_vars, init, location)
    names = _param_names(body, n) if isinstance(loop_vars, list | tuple) and \
        len(loop_vars) == n else [f"loop_var_{k}" for k in range(n)]
    params = [(names[k], invariants[k], init[k].dtype) for k in range(n)]

    c_graph, c_inputs, c_out = _trace(cond, graph, "cond of kg.while_loop", location, params,
                                      loop_vars)
    c_flat = flatten(c_out)
    if len(c_flat) != 1:
        raise ValueError(f"kg.while_loop: cond must return one bool scalar, got "
                         f"{len(c_flat)} values{_where(location)}")
    keep = _inner(c_graph, c_flat[0], D.bool_, "cond of kg.while_loop", 0)
    if keep.dtype != D.bool_ or (keep.shape is not None and keep.shape != ()):
        raise TypeError(f"kg.while_loop: cond must return a bool scalar, got {describe(keep)}"
                        f"{_where(keep.location or location)}")

    b_graph, b_inputs, b_out = _trace(body, graph, "body of kg.while_loop", location, params,
                                      loop_vars)
    per_step = []
    if stacked:
        b_out, per_step = b_out
    if isinstance(loop_vars, list | tuple) and len(loop_vars) == 1 and \
            not isinstance(b_out, list | tuple):
        b_out = [b_out]  # a body of one loop variable may return it bare
    b_flat = flatten(b_out)
    if structure_of(b_out) != structure_of(loop_vars):
        raise ValueError(f"kg.while_loop: body must return the structure of loop_vars ({n} "
                         f"value(s)), got {len(b_flat)}{_where(location)}")
    new = []
    for k, (value, node) in enumerate(zip(b_flat, init)):
        out = _inner(b_graph, value, node.dtype, "body of kg.while_loop", k)
        if out.dtype != node.dtype:
            raise TypeError(f"kg.while_loop: loop variable {k} ('{names[k]}') enters the loop "
                            f"as {node.dtype.name} but the body returns {out.dtype.name}; a "
                            f"loop variable keeps its dtype (use kg.cast)"
                            f"{_where(out.location or location)}")
        inv = invariants[k]
        if inv is not None and out.shape is not None and (len(out.shape) != len(inv) or any(
                a is not None and b is not None and a != b for a, b in zip(inv, out.shape))):
            raise ValueError(f"kg.while_loop: loop variable {k} ('{names[k]}') enters the "
                             f"loop with shape {shape_str(inv)} but the body returns shape "
                             f"{shape_str(out.shape)}; declare the dims that change with "
                             f"shape_invariants= (None for a dim that may change)"
                             f"{_where(out.location or location)}")
        new.append(out)
    steps = [_inner(b_graph, v, None, "body of kg.while_loop", n + j)
             for j, v in enumerate(per_step)]
    # The body also computes cond on the values it returns (cond traced once more, into the
    # body's graph): one plan call per iteration instead of two. The cond graph runs only
    # before the first iteration.
    with b_graph.as_default():
        again = _inner(b_graph, flatten(_call(cond, loop_vars, new))[0], D.bool_,
                       "cond of kg.while_loop", 0)

    rest, (c_index, b_index) = _union([c_graph.captures, b_graph.captures])
    max_input = isinstance(maximum_iterations, Node)
    if max_input:
        limit = _in(graph, maximum_iterations, location)
        if limit.dtype not in D.INTS or (limit.shape is not None and limit.shape != ()):
            raise TypeError(f"kg.while_loop: maximum_iterations must be an int scalar, got "
                            f"{describe(limit)}{_where(location)}")
        rest.append(limit)
    likes = [_in(graph, x, location) for x in stacked_like or ()]
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
    outs = _outputs(node, shapes, [x.dtype for x in init] + [s.dtype for s in steps], location)
    finals = pack_as(loop_vars, outs[:n])
    return (finals, outs[n:]) if stacked else finals


# -- gradients -----------------------------------------------------------------------------------
def _placeholder(graph, shape, dtype, name, location):
    return graph.add_node(placeholder_op, (), {"shape": shape}, shape, dtype, name, location,
                          device=CPU)


def _gradient_graph(sub: Subgraph, ys: list, xs: list, what: str, extra=()) -> Subgraph:
    """``sub``'s graph extended with d(ys)/d(xs) for incoming gradients fed to new
    placeholders: inputs ``sub.inputs + extra + those placeholders``, outputs one gradient
    per x (zeros where an x does not reach any y)."""
    from .gradients import gradients

    graph = sub.graph
    with graph.as_default(), devices.unplaced():
        grad_ys = [_placeholder(graph, y.shape, y.dtype, "grad_ys", graph.location)
                   for y in ys]
        found = gradients(ys, xs, grad_ys=grad_ys) if xs else []
        outs = [g if g is not None else zeros_like(x) for g, x in zip(found, xs)]
    return Subgraph(graph, sub.inputs + list(extra) + grad_ys, outs, [], what)


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
                    ph = _placeholder(sub.graph, inputs[j].shape, inputs[j].dtype,
                                      "unused_input", sub.graph.location)
                    position[j] = ph
                    extra.append(ph)
                    extra_index.append(j)
            hit = _gradient_graph(sub, [sub.outputs[i] for i in present],
                                  [position[j] for j in wanted], f"gradient of the {sub.what}",
                                  extra)
            hit.index = sub.index + extra_index + [len(inputs) + k for k in range(len(present))]
            # The branch's random ops that the gradient computes again repeat their draw.
            hit.replays = tuple(m.attrs["stream"] for m in passes.prune(hit.outputs,
                                                                        hit.inputs).nodes
                                if m.op.name in passes.RANDOM)
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


def _fed_kept_activations(spec: WhileSpec, grad: Subgraph, n_grads: int):
    """``grad`` (the body's gradient graph, inputs ``body.inputs + n_grads gradients``) fed
    each iteration the forward activations it reads, which the forward loop then keeps,
    instead of computing the body's forward again; and fed only the body inputs it still
    reads. Returns (that Subgraph, with ``index`` for those body inputs; the positions of
    its activations in ``Results.saved``)."""
    body = spec.body
    forward = {id(m) for m in passes.prune(body.outputs[:spec.n_outputs], body.inputs).nodes}
    grad_ys = grad.inputs[len(grad.inputs) - n_grads:]
    kept, seen = [], set()

    def keep(m):
        # A value the forward made on the host: not a constant, nor a cond or loop's tuple,
        # nor a GPU value (a run hands those back on the host: the gradient recomputes them).
        if id(m) in forward and m.inputs and m.dtype != OBJECT and m.device is CPU and \
                id(m) not in seen:
            seen.add(id(m))
            kept.append(m)

    for m in passes.prune(grad.outputs, body.inputs + grad_ys).nodes:
        if id(m) not in forward:
            for x in m.inputs:
                keep(x)
    for m in grad.outputs:
        keep(m)
    reads = {id(m) for m in passes.prune(grad.outputs, body.inputs + kept + grad_ys).nodes}
    used = [k for k, p in enumerate(body.inputs) if id(p) in reads]
    sub = Subgraph(grad.graph, [body.inputs[k] for k in used] + kept + grad_ys, grad.outputs,
                   [body.index[k] for k in used], grad.what)
    return sub, spec.keep_for_gradient(kept)


def _row_sum(m: Node):
    """When the capture gradient ``m`` is a sum over the rows of per-iteration values, those
    values; else None. A weight's ``matmul(matrix_transpose(a), b)`` ([a, b]: a^T b adds up
    one outer product per row) and a bias's ``sum(a, axis=0)`` or ``sum_to_like(a, bias)``
    to a vector or number of known shape ([a]), for 2-D ``a`` and ``b`` whose number of
    columns is known (the same at every iteration, so their rows join)."""
    def rank2(x):
        return x.shape is not None and len(x.shape) == 2 and x.shape[1] is not None

    if m.device is not CPU:
        return None
    if m.op is matmul and len(m.inputs) == 2:
        t, b = m.inputs
        if t.op is matrix_transpose and rank2(t.inputs[0]) and rank2(b):
            return [t.inputs[0], b]
    elif m.op is reduce_sum:
        attrs = m.attrs or {}
        if rank2(m.inputs[0]) and attrs.get("axis") in (0, (0,)) and not attrs.get("keepdims"):
            return [m.inputs[0]]
    elif m.op is sum_to_like:
        a, like = m.inputs
        if rank2(a) and like.shape is not None and len(like.shape) <= 1 and \
                None not in like.shape:
            return [a]
    return None


def _run_on_rows(m: Node, joined: list):
    """``m`` (see :func:`_row_sum`) on its values' rows joined over the iterations: the sum
    of its per-iteration values, in one call."""
    if m.op is matmul:
        a, b = joined
        return matmul.forward(matrix_transpose.forward(a), b)
    if m.op is sum_to_like:  # (its forward reads only the shape of what it sums to)
        return sum_to_like.forward(joined[0], np.broadcast_to(np.zeros((), m.dtype),
                                                              m.inputs[1].shape))
    return reduce_sum.forward(joined[0], **m.attrs)


def _summed_once(sub: Subgraph, n_grads: int):
    """``sub`` (the body's gradient: ``n_grads`` loop-variable gradients, then a gradient
    per capture) with each capture gradient that is a sum over rows (:func:`_row_sum`)
    replaced by the values it sums, and how :class:`WhileGradSpec` adds each up. A weight
    read at every iteration then gets its gradient as ONE product over all the iterations'
    rows after the loop, not a product and an addition per iteration (TF1's way, and ours
    before: two small matrix products and four additions an iteration of an RNN). A value
    that sub is fed (an RNN's input and state) is taken from what it is fed, not returned
    by its plan (which would copy it)."""
    outputs, at = list(sub.outputs[:n_grads]), {}
    fed = {id(m): k for k, m in enumerate(sub.inputs)}

    def output(m):
        if id(m) not in at:
            at[id(m)] = len(outputs)
            outputs.append(m)
        return at[id(m)]

    def value(m):
        return ("in", fed[id(m)]) if id(m) in fed else ("out", output(m))

    summed = []
    for m in sub.outputs[n_grads:]:
        values = _row_sum(m)
        summed.append((None, [output(m)]) if values is None else
                      (m, [value(v) for v in values]))
    if all(node is None for node, _ in summed):
        return sub, None
    once = Subgraph(sub.graph, sub.inputs, outputs, sub.index, sub.what)
    once.replays = sub.replays
    return once, summed


def while_gradient(node, g, needs, spec: WhileSpec, inputs):
    """The gradient rule of a ``while_loop`` node: a ``while_grad`` node (see
    :class:`WhileGradSpec`) and one ``output`` per gradient asked for."""
    n = spec.n_vars
    none = (None,) * len(inputs)
    if not spec.back_prop:
        return none
    outs = spec.body.outputs[:n + len(spec.stacked_shapes)]
    floats = [k for k in range(n) if outs[k].dtype in D.FLOATS]
    stacked = [s for s in range(len(outs) - n) if outs[n + s].dtype in D.FLOATS]
    present = [k for k in floats + [n + s for s in stacked] if g.items[k] is not None]
    body_caps = [i for i in spec.body.index if i >= n]
    caps = [i for i in body_caps if needs[i] and inputs[i].dtype in D.FLOATS]
    wanted = [k for k in floats if needs[k] and inputs[k].dtype in D.FLOATS]
    if not present or not (caps or wanted):
        return none
    key = tuple(caps)
    hit = spec.body.gradients.get(key)
    if hit is None:
        position = dict(zip(spec.body.index, spec.body.inputs))
        full = _gradient_graph(spec.body, [outs[k] for k in floats] +
                               [outs[n + s] for s in stacked],
                               [position[k] for k in floats] + [position[i] for i in caps],
                               "gradient of the body of kg.while_loop")
        sub, saved_at = _fed_kept_activations(spec, full, len(floats) + len(stacked))
        hit = spec.body.gradients[key] = (*_summed_once(sub, len(floats)), saved_at)
    sub, summed, saved_at = hit
    grads = [placed(g.items[k], CPU, node.location) for k in present]
    grad_spec = WhileGradSpec(sub, saved_at, n, floats, stacked, present,
                              [i - n for i in caps], len(inputs) - n, spec.name, spec.location,
                              summed)
    made = node.graph.add_node(while_grad_op, (node, *inputs[n:], *grads), {"spec": grad_spec},
                               None, OBJECT, "while_grad", node.location, device=CPU)
    shapes = [spec.invariants[k] for k in floats] + [inputs[i].shape for i in caps]
    dtypes = [inputs[k].dtype for k in floats] + [inputs[i].dtype for i in caps]
    picks = [floats.index(k) for k in wanted] + [len(floats) + c for c in range(len(caps))]
    selected = _outputs(made, shapes, dtypes, node.location, picks)
    result = list(none)
    for target, out in zip(wanted + caps, selected):
        result[target] = out
    return tuple(result)
