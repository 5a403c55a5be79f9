"""``kg.fx.Node``: one instruction of an fx graph, as ``torch.fx.node`` defines it.

A node has an ``op`` (``placeholder``, ``get_attr``, ``call_function``, ``call_module``,
``call_method``, ``output``), a ``target`` (what it calls or reads), ``args`` and
``kwargs`` that may hold other nodes, and ``users``: the nodes that read it. Setting
``args`` or ``kwargs`` keeps the ``users`` of the nodes involved up to date, so graph edits
(``replace_all_uses_with``, ``Graph.erase_node``) never leave a dangling use.

>>> from kernelgraph import fx
>>> g = fx.Graph()
>>> x = g.placeholder("x")
>>> y = g.call_function(abs, (x,))
>>> _ = g.output(y)
>>> list(x.users), y.args, fx.node.map_arg((x, [y, 2]), lambda n: n.name)
([abs_1], (x,), ('x', ['abs_1', 2]))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Union

#: What a node calls or reads: a callable (``call_function``) or a name (the other ops).
Target = Union[Callable[..., Any], str]  # noqa: UP007 (torch.fx spells it so)
#: A node's argument: a node, a plain value, or tuples, lists, dicts and slices of them.
Argument = Any

OPS = ("placeholder", "get_attr", "call_function", "call_module", "call_method", "output")


def map_aggregate(a, fn):
    """``a`` with every leaf replaced by ``fn(leaf)``, looking into tuples, lists, dicts and
    slices (torch.fx's ``map_aggregate``)."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(e, fn) for e in a)
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return [map_aggregate(e, fn) for e in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """``a`` with every :class:`Node` in it replaced by ``fn(node)``; other values kept."""
    if not callable(fn):
        raise TypeError("map_arg(a, fn) expects a callable fn")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


class Node:
    """One instruction of a :class:`~kernelgraph.fx.Graph` (build nodes through the graph)."""

    def __init__(self, graph, name: str, op: str, target, args: tuple, kwargs: dict):
        if op not in OPS:
            raise ValueError(f"Node op must be one of {OPS}, got {op!r}")
        if op in ("call_module", "call_method", "get_attr", "placeholder", "output") and \
                not isinstance(target, str):
            raise ValueError(f"a {op} node's target must be a string, got {target!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"a call_function node's target must be callable, got {target!r}")
        self.graph, self.name, self.op, self.target = graph, name, op, target
        self.users: dict[Node, None] = {}
        self.meta: dict = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._input_nodes: dict[Node, None] = {}
        self._erased = False
        self._update_args_kwargs(tuple(args), dict(kwargs))

    # -- arguments and users ------------------------------------------------------------------
    def _update_args_kwargs(self, args: tuple, kwargs: dict) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        self._input_nodes = {}
        map_arg((args, kwargs), self._input_nodes.setdefault)
        for new in self._input_nodes:
            if new.graph is not self.graph:
                raise ValueError(f"node {new.name} of another graph used as an argument of "
                                 f"{self.name}")
            new.users.setdefault(self)

    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, value) -> None:
        self._update_args_kwargs(tuple(value), self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value) -> None:
        self._update_args_kwargs(self._args, dict(value))

    @property
    def all_input_nodes(self) -> list[Node]:
        """The nodes this node reads, in the order its arguments name them."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg) -> None:
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg) -> None:
        self.kwargs = {**self._kwargs, key: arg}

    def replace_input_with(self, old: Node, new: Node) -> None:
        """Read ``new`` wherever this node reads ``old``."""
        self._update_args_kwargs(*map_arg((self._args, self._kwargs),
                                          lambda n: new if n is old else n))

    def replace_all_uses_with(self, replace_with: Node, delete_user_cb=lambda user: True,
                              *, propagate_meta: bool = False) -> list[Node]:
        """Make every user of this node read ``replace_with`` instead; the users changed."""
        if propagate_meta:
            replace_with.meta.update(self.meta)
        changed = [u for u in list(self.users) if delete_user_cb(u)]
        for user in changed:
            user.replace_input_with(self, replace_with)
        return changed

    # -- position in the graph ------------------------------------------------------------------
    @property
    def next(self) -> Node | None:
        nodes = self.graph._nodes
        i = nodes.index(self)
        return nodes[i + 1] if i + 1 < len(nodes) else None

    @property
    def prev(self) -> Node | None:
        """The node before this one; None for the first (PyTorch gives its graph's root
        sentinel there, a node of op ``root``)."""
        nodes = self.graph._nodes
        i = nodes.index(self)
        return nodes[i - 1] if i > 0 else None

    def append(self, x: Node) -> None:
        """Move ``x`` to just after this node."""
        self.graph._move(x, self.graph._nodes.index(self) + 1)

    def prepend(self, x: Node) -> None:
        """Move ``x`` to just before this node."""
        self.graph._move(x, self.graph._nodes.index(self))

    # -- printing ----------------------------------------------------------------------------------
    def format_node(self) -> str:
        """The node's line of ``print(graph)``, as torch.fx writes it."""
        return self.graph._format_node(self)

    def __repr__(self):
        return self.name
