"""``kg.fx.Proxy``: a stand-in value that records what is done to it as graph nodes.

Arithmetic and indexing record ``call_function`` nodes of :mod:`operator`; reading an
attribute and calling it records a ``call_method`` node; a kernelgraph function given a
proxy (while a :class:`~kernelgraph.fx.Tracer` traces) records a ``call_function`` node.
A proxy has no value, so Python control flow on it (``if x.sum() > 0``) cannot be traced
and raises :class:`TraceError`, as in torch.fx.

>>> from kernelgraph import fx
>>> g = fx.Graph()
>>> x = fx.Proxy(g.placeholder("x"), fx.proxy.GraphAppendingTracer(g))
>>> y = (x * 2).relu()
>>> _ = g.output(y.node)
>>> [n.op for n in g.nodes]
['placeholder', 'call_function', 'call_method', 'output']
"""

from __future__ import annotations

import builtins
import operator

from .graph import Graph
from .node import Node, map_aggregate


class TraceError(ValueError):
    """Something a symbolic trace cannot record (control flow on a traced value ...)."""


class TracerBase:
    """What a :class:`Proxy` records into: ``graph`` and how arguments become node args."""

    graph: Graph

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None) -> Node:
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> Proxy:
        return Proxy(node, self)

    def create_arg(self, a):
        """``a`` as a node argument: proxies become their nodes."""
        def leaf(x):
            if isinstance(x, Proxy):
                if x.tracer is not self:
                    raise TraceError("a Proxy of another trace used as an argument")
                return x.node
            return x
        return map_aggregate(a, leaf)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None) -> Proxy:
        node = self.create_node(kind, target, self.create_arg(tuple(args)),
                                self.create_arg(dict(kwargs)), name, type_expr)
        return self.proxy(node)


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends the nodes its proxies record to ``graph`` (for rewriting
    a graph with proxies, as torch.fx's tutorials do)."""

    def __init__(self, graph: Graph):
        self.graph = graph


def _record(target):
    def method(self, *args):
        return self.tracer.create_proxy("call_function", target, (self, *args), {})
    return method


def _record_reflected(target):
    def method(self, other):
        return self.tracer.create_proxy("call_function", target, (other, self), {})
    return method


class Proxy:
    """A value being traced: ``node`` is the graph node that computes it."""

    def __init__(self, node: Node, tracer: TracerBase | None = None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.node, self.tracer = node, tracer

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Attribute(self, name)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __iter__(self):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function argument")

    def __bool__(self):
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you "
                           "want this call to be recorded, please call kg.fx.wrap('len') at "
                           "module scope")

    def keys(self):
        return self.tracer.create_proxy("call_method", "keys", (self,), {})

    __getitem__ = _record(operator.getitem)


class Attribute(Proxy):
    """``proxy.name``: a ``call_method`` node when called, else a ``getattr`` node."""

    def __init__(self, root: Proxy, attr: str):
        self.root, self.attr, self.tracer = root, attr, root.tracer
        self._node = None

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", builtins.getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


for _name, _op in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("floordiv", operator.floordiv),
                   ("mod", operator.mod), ("pow", operator.pow), ("matmul", operator.matmul),
                   ("and", operator.and_), ("or", operator.or_), ("xor", operator.xor),
                   ("lshift", operator.lshift), ("rshift", operator.rshift)):
    setattr(Proxy, f"__{_name}__", _record(_op))
    setattr(Proxy, f"__r{_name}__", _record_reflected(_op))
for _name, _op in (("eq", operator.eq), ("ne", operator.ne), ("lt", operator.lt),
                   ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge),
                   ("neg", operator.neg), ("pos", operator.pos), ("invert", operator.invert),
                   ("abs", operator.abs)):
    setattr(Proxy, f"__{_name}__", _record(_op))
Proxy.__hash__ = object.__hash__
