"""``kg.fx.Graph``: an ordered list of :class:`~kernelgraph.fx.Node` and the Python it reads as.

``print(graph)`` and ``graph.python_code()`` write what torch.fx writes, with ``kernelgraph``
where torch.fx writes ``torch``. The generated source holds no user text as code: node
names are identifiers the graph made itself, attribute paths and method names are checked
to be identifiers (other path parts are read with ``getattr`` and an escaped literal), and
every function or value that is not a plain literal is bound in the function's globals
through :class:`kernelgraph.codegen.Namespace`.

>>> from kernelgraph import fx
>>> import operator
>>> g = fx.Graph()
>>> x = g.placeholder("x")
>>> y = g.call_function(operator.add, (x, 1))
>>> _ = g.output(y)
>>> print(g)
graph():
    %x : [num_users=1] = placeholder[target=x]
    %add : [num_users=1] = call_function[target=operator.add](args = (%x, 1), kwargs = {})
    return add
"""

from __future__ import annotations

import builtins
import contextlib
import json
import keyword
import math
import operator
import re
from typing import NamedTuple

import kernelgraph as _kg

from .. import codegen
from ..nn import functional as _F
from .node import Node, map_arg

_ILLEGAL = set(keyword.kwlist) | set(dir(builtins)) | {"kernelgraph", "operator", "self",
                                                        "inf", "nan", "forward"}
_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
           operator.matmul: "@", operator.and_: "&", operator.or_: "|", operator.xor: "^",
           operator.lshift: "<<", operator.rshift: ">>", operator.eq: "==",
           operator.ne: "!=", operator.lt: "<", operator.le: "<=", operator.gt: ">",
           operator.ge: ">="}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}


_PUBLIC: dict[int, str] = {}


def public_names() -> dict[int, str]:
    """id of each public function of ``kernelgraph`` and ``kernelgraph.nn.functional`` ->
    its dotted name (the function's own name where it has several), made once."""
    if not _PUBLIC:
        for prefix, space in (("kernelgraph", _kg), ("kernelgraph.nn.functional", _F)):
            for name, value in sorted(vars(space).items(), key=lambda kv: kv[0] != getattr(
                    kv[1], "__name__", getattr(kv[1], "name", None))):
                if not name.startswith("_") and callable(value) and not isinstance(value, type):
                    _PUBLIC.setdefault(id(value), f"{prefix}.{name}")
    return _PUBLIC


def public_name(fn) -> str | None:
    """``kernelgraph.relu`` or ``kernelgraph.nn.functional.relu`` when ``fn`` is that public
    name of kernelgraph, else None."""
    return public_names().get(id(fn))


def qualified_name(fn) -> str:
    """The dotted name torch.fx prints for a function target (``operator.add``)."""
    found = public_name(fn)
    if found:
        return found
    module = getattr(fn, "__module__", None) or "builtins"
    module = {"_operator": "operator"}.get(module, module)
    return f"{module}.{getattr(fn, '__qualname__', getattr(fn, '__name__', repr(fn)))}"


def short_name(fn) -> str:
    """A node's base name for a function target: its last name part."""
    found = public_name(fn)
    return (found or qualified_name(fn)).rpartition(".")[2]


def format_arg(arg, fx_style: bool = False) -> str:
    """An argument as ``print(graph)`` writes it: nodes as ``%name``."""
    def fmt(a):
        return format_arg(a, fx_style)
    if isinstance(arg, Node):
        return f"%{arg.name}" if fx_style else arg.name
    if isinstance(arg, tuple) and not hasattr(arg, "_fields"):
        inner = ", ".join(map(fmt, arg))
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, list):
        return "[" + ", ".join(map(fmt, arg)) + "]"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {fmt(v)}" for k, v in arg.items()) + "}"
    return str(arg)


def _snake(text: str) -> str:
    if text.startswith("__") and text.endswith("__") and len(text) > 4:
        text = text[2:-2]
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", text).lower()


class PythonCode(NamedTuple):
    """What :meth:`Graph.python_code` gives: the source and the globals it runs with."""

    src: str
    globals: dict


class _Names:
    """Unique identifiers for nodes, made as torch.fx makes them (``add``, ``add_1`` ...)."""

    def __init__(self):
        self.used: set[str] = set()
        self.count: dict[str, int] = {}

    def create(self, candidate: str) -> str:
        candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = "_" + candidate
        match = re.match(r"(.*)_(\d+)$", candidate)
        base, num = (match.group(1), int(match.group(2))) if match else (candidate, None)
        candidate = base if num is None else f"{base}_{num}"
        num = num or self.count.get(base, 0)
        while candidate in self.used or candidate in _ILLEGAL:
            num += 1
            candidate = f"{base}_{num}"
        self.used.add(candidate)
        self.count[base] = num
        return candidate


def attribute_path(base: str, target: str) -> str:
    """``self.layers`` then ``getattr(..., "0")``: a dotted path as source, each part either
    checked to be an identifier or read through an escaped string literal."""
    text = base
    for part in target.split("."):
        text = f"{text}.{part}" if codegen.is_identifier(part) else \
            f"getattr({text}, {json.dumps(part)})"
    return text


class Graph:
    """The nodes of a traced program in order, with the insertion point of new ones."""

    def __init__(self, owning_module=None):
        self._nodes: list[Node] = []
        self._names = _Names()
        self._insert = None  # (node, after it?), or None: at the end
        self.owning_module = owning_module

    @property
    def nodes(self) -> list[Node]:
        """The nodes in order (a copy: erasing while iterating is safe)."""
        return list(self._nodes)

    def find_nodes(self, *, op: str, target=None) -> list[Node]:
        return [n for n in self._nodes if n.op == op and (target is None or n.target == target)]

    # -- making nodes ---------------------------------------------------------------------------
    def create_node(self, op: str, target, args=None, kwargs=None, name: str | None = None,
                    type_expr=None) -> Node:
        """A new node at the insertion point, named after ``name`` or its target."""
        if name is None:
            name = short_name(target) if op == "call_function" else _snake(str(target))
        node = Node(self, self._names.create(name), op, target, tuple(args or ()),
                    dict(kwargs or {}))
        node.type = type_expr
        if self._insert is None:
            self._nodes.append(node)
        else:
            anchor, after = self._insert
            self._nodes.insert(self._nodes.index(anchor) + (1 if after else 0), node)
        return node

    def placeholder(self, name: str, type_expr=None, default_value=None) -> Node:
        args = () if default_value is None else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr=None) -> Node:
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args=None, kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs,
                                type_expr=type_expr)

    def output(self, result, type_expr=None) -> Node:
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform=lambda n: n) -> Node:
        """A copy of ``node`` (of any graph) here, its node arguments mapped by
        ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        copy = self.create_node(node.op, node.target, args, kwargs, name=node.name)
        copy.meta = dict(node.meta)
        return copy

    @contextlib.contextmanager
    def inserting_after(self, node: Node | None = None):
        """New nodes go just after ``node`` (so several come out last first, as in
        PyTorch), or at the end."""
        saved = self._insert
        self._insert = None if node is None else (node, True)
        try:
            yield
        finally:
            self._insert = saved

    @contextlib.contextmanager
    def inserting_before(self, node: Node | None = None):
        """New nodes go just before ``node`` (or at the end)."""
        saved = self._insert
        self._insert = None if node is None else (node, False)
        try:
            yield
        finally:
            self._insert = saved

    def _move(self, x: Node, index: int) -> None:
        i = self._nodes.index(x)
        self._nodes.pop(i)
        self._nodes.insert(index - (1 if i < index else 0), x)

    # -- removing ---------------------------------------------------------------------------------
    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that no other node reads."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self or to_erase not in self._nodes:
            raise RuntimeError(f"Attempting to remove {to_erase} from the wrong graph")
        to_erase._update_args_kwargs((), {})
        self._nodes.remove(to_erase)
        to_erase._erased = True

    def eliminate_dead_code(self) -> bool:
        """Erase nodes nobody reads (calls of modules and functions too: kernelgraph's
        modules and ops have no side effects a traced program relies on)."""
        changed = False
        for node in reversed(self._nodes):
            if node.op not in ("placeholder", "output") and not node.users:
                self.erase_node(node)
                changed = True
        return changed

    # -- checking and printing ------------------------------------------------------------------
    def lint(self) -> None:
        """Check that every node reads only nodes before it in this graph, names are unique
        and there is one output, last."""
        seen: set[Node] = set()
        names: set[str] = set()
        for node in self._nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node {node} does not belong to this Graph!")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            for arg in node.all_input_nodes:
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before "
                                       "it has been defined! Please check that Nodes in the "
                                       "graph are topologically ordered")
            seen.add(node)
        outputs = [n for n in self._nodes if n.op == "output"]
        if len(outputs) > 1 or (outputs and outputs[0] is not self._nodes[-1]):
            raise RuntimeError("the graph's output must be its one last node")

    def _format_node(self, node: Node) -> str:
        if node.op == "output":
            return f"return {format_arg(node.args[0], fx_style=False)}"
        head = f"%{node.name} : [num_users={len(node.users)}] = "
        target = qualified_name(node.target) if node.op == "call_function" else node.target
        text = f"{head}{node.op}[target={target}]"
        if node.op == "placeholder":
            if node.args:
                text += f"[default={format_arg(node.args[0], fx_style=True)}]"
            return text
        if node.op == "get_attr":
            return text
        return (f"{text}(args = {format_arg(node.args, fx_style=True)}, "
                f"kwargs = {format_arg(node.kwargs, fx_style=True)})")

    def __str__(self):
        return "\n".join(["graph():"] + ["    " + n.format_node()
                                                   for n in self._nodes])

    def print_tabular(self) -> None:
        """One row per node (opcode, name, target, args, kwargs) in the columns PyTorch's
        ``print_tabular`` prints with ``tabulate`` (no ``tabulate`` needed here)."""
        headers = ["opcode", "name", "target", "args", "kwargs"]
        rows = [[n.op, n.name, str(n.target), str(n.args), str(n.kwargs)] for n in self._nodes]
        widths = [max([len(h) + 2] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
        lines = [headers, ["-" * w for w in widths], *rows]
        print("\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                        for r in lines))

    # -- Python source ---------------------------------------------------------------------------
    def python_code(self, root_module: str = "self") -> PythonCode:
        """The source of ``def forward(self, ...)`` running this graph (``.src``), and the
        globals it runs with (``.globals``)."""
        ns = codegen.Namespace(reserved={n.name for n in self._nodes} | {root_module})
        ns.bind("kernelgraph", _kg)

        def value(a) -> str:
            if isinstance(a, Node):
                return a.name
            if isinstance(a, tuple) and not hasattr(a, "_fields"):
                inner = ", ".join(map(value, a))
                return f"({inner},)" if len(a) == 1 else f"({inner})"
            if isinstance(a, list):
                return "[" + ", ".join(map(value, a)) + "]"
            if isinstance(a, dict):
                return "{" + ", ".join(f"{value(k)}: {value(v)}" for k, v in a.items()) + "}"
            if isinstance(a, slice):
                return f"slice({value(a.start)}, {value(a.stop)}, {value(a.step)})"
            if a is None or type(a) in (bool, int, str):
                return repr(a)
            if type(a) is float:
                return repr(a) if math.isfinite(a) else f"float({str(a)!r})"
            return ns.bind("_" + type(a).__name__.lower(), a)

        def call_args(args, kwargs) -> str:
            parts = [value(a) for a in args] + [f"{k} = {value(v)}" for k, v in kwargs.items()]
            return ", ".join(parts)

        last_use: dict[Node, list[Node]] = {}
        seen: set[Node] = set()
        for node in reversed(self._nodes):
            for arg in node.all_input_nodes:
                if arg not in seen:
                    seen.add(arg)
                    last_use.setdefault(node, []).append(arg)
        params, body = [], []
        for node in self._nodes:
            if node.op == "placeholder":
                if not codegen.is_identifier(node.target):
                    raise ValueError(f"placeholder target {node.target!r} is no identifier")
                params.append(node.target)  # the argument's own name: callers may name it
                if node.name != node.target:  # ``input`` is a builtin: the node is input_1
                    body.append(f"{node.name} = {node.target}\n")
                continue
            if node.op == "output":
                body.append(f"return {value(node.args[0])}\n")
                continue
            line = f"{node.name} = {self._expression(node, value, call_args, root_module, ns)}"
            dead = last_use.get(node, []) + ([] if node.users else [node])
            body.append(line + (";  " + " = ".join([n.name for n in dead] + ["None"])
                                if dead else "") + "\n")
        head = f"def forward({', '.join([root_module, *params])}):\n"
        return PythonCode("\n\n\n" + head + "".join("    " + b for b in body) + "    ", ns.env)

    def _expression(self, node: Node, value, call_args, root: str, ns) -> str:
        if node.op == "get_attr":
            return attribute_path(root, node.target)
        if node.op == "call_module":
            return f"{attribute_path(root, node.target)}({call_args(node.args, node.kwargs)})"
        if node.op == "call_method":
            if not codegen.is_identifier(node.target):
                raise ValueError(f"method name {node.target!r} is no identifier")
            obj, *rest = node.args
            return f"{value(obj)}.{node.target}({call_args(rest, node.kwargs)})"
        fn, args = node.target, node.args
        if not node.kwargs:
            if fn in _BINARY and len(args) == 2:
                return f"{value(args[0])} {_BINARY[fn]} {value(args[1])}"
            if fn in _UNARY and len(args) == 1:
                return f"{_UNARY[fn]}{value(args[0])}"
            if fn is operator.getitem and len(args) == 2:
                return f"{value(args[0])}[{value(args[1])}]"
            if fn is builtins.getattr and len(args) == 2 and codegen.is_identifier(args[1]):
                return f"{value(args[0])}.{args[1]}"
        found = public_name(fn)
        name = found if found else ns.bind(short_name(fn), fn)
        return f"{name}({call_args(args, node.kwargs)})"

