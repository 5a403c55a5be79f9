"""Tracing: a branch or loop body becomes a small graph of its own, read by one node.

Each branch of a ``kg.cond``, and the ``cond``/``body`` of a ``kg.while_loop``, is called
once on placeholders inside a private :class:`FuncGraph`. An outer node read inside becomes
a *capture*: a placeholder of the inner graph and an extra input of the control-flow node
(``static/build.py`` asks the graph being traced to capture any outer node an op reads).
The helpers here are the plumbing ``cond`` and ``while_loop`` share: what a traced function
returned as nodes, the outer nodes all of them read, the ``output`` nodes of a tuple, and
:func:`where`, the one way an error message says where something was made.
"""

from __future__ import annotations

import inspect

from ... import devices
from ...eager import Tensor
from ...errors import where
from ...graph import Graph, Node, get_default_graph
from ...ops.control import describe, output_op, pack_as
from ..build import constant_node
from ..variables import placeholder_op

CPU = devices.CPU


def made_at(what: str, name: str, location) -> str:
    """'in the <what> '<name>', created at: <the user's line>' for an error raised inside."""
    return f"in the {what} '{name}'" + (f", created at:{where(location)}" if location else "")


def placeholder(graph: Graph, shape, dtype, name: str, location) -> Node:
    """A placeholder of ``graph`` on the host: an input of a traced function."""
    return graph.add_node(placeholder_op, (), {"shape": shape}, shape, dtype, name, location,
                          device=CPU)


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
                             f"{where(node.location)}")
        hit = self._captured.get(id(source))
        if hit is None:
            if self.sealed:
                raise ValueError(f"the {self.what} is already built; it cannot read "
                                 f"'{node.name}' any more")
            hit = placeholder(self, source.shape, source.dtype, source.name, source.location)
            self._captured[id(source)] = hit
            self.captures.append((source, hit))
        self._captured[id(node)] = hit
        return hit


def root_graph(graph: Graph) -> Graph:
    """The user's graph around ``graph`` (``graph`` itself unless it is a FuncGraph)."""
    return graph.root if isinstance(graph, FuncGraph) else graph


def param_names(fn, count: int) -> list[str]:
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


def call(fn, template, nodes):
    """``fn`` called on ``nodes`` arranged like ``template`` (``fn()`` when it is None)."""
    if template is None:
        return fn()
    args = pack_as(template, nodes)
    return fn(*args) if isinstance(template, list | tuple) else fn(args)


def trace_function(fn, outer: Graph, what: str, location, params, template):
    """Call ``fn`` inside a new FuncGraph, on one placeholder per ``(name, shape, dtype)`` in
    ``params`` arranged like ``template`` (``fn()`` when there are none)."""
    graph = FuncGraph(outer, what, location)
    with graph.as_default():
        inputs = [placeholder(graph, shape, dtype, name, location)
                  for name, shape, dtype in params]
        result = call(fn, template, inputs)
    for var in graph.variables:
        raise ValueError(f"kg.Variable '{var.name}' was created inside the {what}; create "
                         f"variables before the loop or cond that uses them"
                         f"{where(var.location)}")
    return graph, inputs, result


def inner(graph: FuncGraph, value, dtype, what: str, k: int) -> Node:
    """What a traced function returned, as a node of its graph (numbers become constants
    of ``dtype``; outer nodes are captured)."""
    if isinstance(value, Node) and value.symbolic:
        return value if value.graph is graph else graph.capture(value)
    at = where(graph.location)
    if value is None:
        raise TypeError(f"the {what} returned None as value {k}; it must return tensors{at}")
    if isinstance(value, Tensor):
        raise TypeError(f"the {what} returned an eager tensor as value {k}; inside a graph "
                        "use graph nodes (kg.constant(t.detach().numpy()) for a fixed value)"
                        f"{at}")
    try:
        with graph.as_default():  # (an empty graph is falsy: `graph or default` misses it)
            return constant_node(value, dtype=dtype, graph=graph, location=graph.location)
    except (TypeError, ValueError) as e:
        raise TypeError(f"the {what} returned {describe(value)} as value {k}: {e}{at}") \
            from None


def union(subgraph_captures: list) -> tuple[list, list]:
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


def graph_for(nodes) -> Graph:
    """The graph new control-flow nodes go into: the one being traced if any, else the
    graph of the first node (as for any op), else the default graph."""
    current = get_default_graph()
    if isinstance(current, FuncGraph):
        return current
    for n in nodes:
        if isinstance(n, Node):
            return n.graph
    return current


def read_in(graph: Graph, node: Node, location) -> Node:
    """``node`` as read in ``graph``: itself, or its capture when ``graph`` is traced."""
    if node.graph is graph:
        return node
    if isinstance(graph, FuncGraph):
        return graph.capture(node)
    raise ValueError(f"Tensor {node!r} must be from the same graph as the other inputs"
                     f"{where(location)}")


def tuple_outputs(node: Node, shapes, dtypes, location, indices=None) -> list[Node]:
    """One ``output`` node per item of ``node``'s tuple value (or per item in ``indices``)."""
    label = node.name.rpartition("/")[2]
    count = len(shapes)
    indices = range(count) if indices is None else indices
    return [node.graph.add_node(output_op, (node,), {"index": i, "count": count}, shapes[i],
                                dtypes[i], f"{label}/output", location, device=CPU)
            for i in indices]
