"""The one IR: nodes and graphs, name scopes, and where in the user's code a node was made.

A :class:`Node` records its op, inputs, attributes, shape (dims may be ``None``), dtype,
device, unique name and the user's source location. In static mode a node *is* the symbolic
tensor a user holds (every op has one output), so ``c = a * b`` returns a Node of the
default graph. Eager tensors point at an :class:`~kernelgraph.eager.EagerNode`, a Node
subclass that also keeps the value it computed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable

from . import devices, trace
from .errors import _cell_name, describe_location  # noqa: F401 - re-exported for their users

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_sequence = itertools.count()  # creation order; sorting by it is a topological order

#: What floors above the IR install here, since the IR imports none of them:
#: ``"default_session"``, ``() -> the innermost default Session or None``, which
#: :mod:`kernelgraph.static.session` installs when imported (for :meth:`Node.eval`).
SLOTS: dict = {"default_session": lambda: None}


def user_location(depth: int = 1):
    """(filename, line) of the nearest frame outside kernelgraph: the line that made a node."""
    frame = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return None
    return (frame.f_code.co_filename, frame.f_lineno)


class Node:
    """A node of a graph, and in static mode the symbolic tensor it outputs.

    >>> import kernelgraph as kg
    >>> g = kg.Graph()
    >>> with g.as_default():
    ...     a = kg.placeholder(kg.float32, shape=[None, 3], name="a")
    ...     b = kg.reduce_sum(a * 2.0, axis=1)
    >>> b.shape, b.dtype.name, b.name
    ((None,), 'float32', 'sum')
    """

    __slots__ = ("op", "inputs", "attrs", "shape", "dtype", "device", "name", "location",
                 "graph", "seq", "control_inputs", "__weakref__")

    #: True for a node of a static graph (a symbolic tensor, run by a Session); False for a
    #: node eager mode recorded (:class:`kernelgraph.eager.EagerNode`, a value computed).
    #: Code on any floor asks this instead of importing the eager front-end.
    symbolic = True

    # A node means what kernelgraph says: ``op`` the op card, ``name`` 'layer/mul', ``shape``
    # a tuple of ints and Nones, ``dtype`` a NumPy dtype. TF1's meanings ('mul:0', a
    # TensorShape, an Operation with a ``type``) belong to the TF1 face's own types, which
    # wrap a node (:mod:`kernelgraph.compat.v1.face`).

    @property
    def is_operation(self) -> bool:
        """Whether running this node is done for its effects alone, its value None: a
        ``no_op`` (a group, an initializer, a train op) or a Variable's own ``initializer``."""
        name = self.op.name
        return name == "no_op" or (name == "assign" and getattr(
            self.inputs[0], "initializer", None) is self)

    @property
    def ndim(self):
        return None if self.shape is None else len(self.shape)

    def __repr__(self):
        shape = "<unknown>" if self.shape is None else _shape_str(self.shape)
        return f"<kg.Node '{self.name}' op={self.op.name} shape={shape} dtype={self.dtype.name}>"

    # Static nodes are hashable by identity and never compare elementwise (as in TF1):
    # that is what lets them be feed_dict keys. Use kg.equal for elementwise equality.
    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError(
            f"the truth value of graph node '{self.name}' is not known while the graph is being "
            "built; use kg.cond for a data-dependent branch, or run it in a Session first"
        )

    def __iter__(self):
        raise TypeError(f"graph node '{self.name}' is not iterable while the graph is built")

    def eval(self, feed_dict=None, session=None):
        """Run this node in ``session`` (or the default session), as TF1's ``Tensor.eval``:
        its value, computed with ``feed_dict`` (which may feed any node, as in run)."""
        return _session_for(self, session, "evaluate tensor using `eval()`").run(
            self, feed_dict)

    def run(self, feed_dict=None, session=None) -> None:
        """Run this node for its effects, as TF1's ``Operation.run`` (a train op, an
        initializer, an assign): in ``session`` or the default session; returns None."""
        _session_for(self, session, "execute operation using `run()`").run(
            self, feed_dict)


def node_of(x):
    """The node ``x`` stands for: ``x`` itself if it is a node, the node a face's object
    wraps if its type says so with a ``kg_node`` attribute (TF1's Tensor, Operation and
    Variable: :mod:`kernelgraph.compat.v1.face`), else None. A type that also sets
    ``kg_operation = True`` is run for its effects alone: fetching it answers None."""
    if isinstance(x, Node):
        return x
    return x.kg_node if hasattr(type(x), "kg_node") else None


def _session_for(node: Node, session, what: str):
    sess = session if session is not None else SLOTS["default_session"]()
    if sess is None:
        raise ValueError(f"Cannot {what}: No default session is registered. Use `with "
                         "sess.as_default()` or pass an explicit session to "
                         f"{what.rpartition(' ')[2][1:-1]}(session=sess)")
    if getattr(sess, "graph", node.graph) is not node.graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's "
                         "graph is different from the session's graph.")
    return sess


def _shape_str(shape) -> str:
    if shape is None:
        return "<unknown>"
    inner = ", ".join("?" if d is None else str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


shape_str = _shape_str


def ancestors(roots: Iterable[Node], stop: Iterable[Node] = (), reads: Callable | None = None,
              controls: bool = True) -> list[Node]:
    """``roots`` and every node they depend on, in creation (so topological) order: what a
    run of ``roots`` computes, what a view of them draws, what gradients flow through.

    Nodes in ``stop`` (fed nodes) are kept but not looked through. ``reads(node)`` gives the
    inputs followed (all of ``node.inputs`` by default; the compiler leaves out the variable
    an assign writes); ``controls`` follows control inputs too.

    >>> import kernelgraph as kg
    >>> g = kg.Graph()
    >>> with g.as_default():
    ...     a = kg.placeholder(kg.float32, name="a")
    ...     b = kg.exp(a, name="b")
    ...     c = kg.add(b, 1.0, name="c")
    >>> [n.name for n in ancestors([c])], [n.name for n in ancestors([c], stop=[b])]
    (['a', 'b', 'Const', 'c'], ['b', 'Const', 'c'])
    """
    stop_ids = {id(n) for n in stop}
    seen: dict[int, Node] = {}
    stack = list(roots)
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = n
        if id(n) in stop_ids:
            continue
        stack.extend(n.inputs if reads is None else reads(n))
        if controls:
            stack.extend(n.control_inputs)
    return sorted(seen.values(), key=lambda n: n.seq)


class Graph:
    """A static computation graph: nodes in creation order, unique names, name scopes.

    >>> import kernelgraph as kg
    >>> g = kg.Graph()
    >>> with g.as_default():
    ...     with kg.name_scope("layer"):
    ...         w = kg.constant(1.0, name="w")
    ...         w2 = kg.constant(2.0, name="w")
    >>> [n.name for n in g.nodes]
    ['layer/w', 'layer/w_1']
    """

    def __init__(self):
        self.nodes: list[Node] = []
        self._names: dict[str, int] = {}
        self._scope: list[str] = []
        self.variables: list = []  # kg.Variable objects, for global_variables_initializer
        self.version = 0  # bumped on every change; sessions use it to invalidate plans
        self.transfers: dict = {}  # (id(node), device name) -> its to_device node, reused
        self._controls: tuple = ()  # what `with control_dependencies(...)` adds to new nodes

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """TF1's ``control_dependencies``: nodes made inside the block run only after
        ``control_inputs`` (nodes) have run; ``None`` clears them."""
        saved = self._controls
        if control_inputs is None:
            self._controls = ()
        else:
            nodes = tuple(control_inputs)
            for c in nodes:
                if not isinstance(c, Node):
                    raise TypeError(f"Can not convert a {type(c).__name__} into a Tensor or "
                                    "Operation.")
            self._controls = saved + tuple(c for c in nodes if c not in saved)
        try:
            yield
        finally:
            self._controls = saved

    def as_default(self):
        """Make this the graph that new nodes go into, inside a ``with`` block."""
        return _default.push(self)

    def unique_name(self, base: str, scoped: bool = True) -> str:
        base = base.decode() if isinstance(base, bytes) else base  # TF1 takes bytes names
        name = "/".join([*self._scope, base]) if scoped and self._scope else base
        n = self._names.get(name)
        if n is None:
            self._names[name] = 1
            return name
        while f"{name}_{n}" in self._names:
            n += 1
        self._names[name] = n + 1
        self._names[f"{name}_{n}"] = 1
        return f"{name}_{n}"

    @contextlib.contextmanager
    def name_scope(self, name: str):
        if not re.fullmatch(r"[A-Za-z0-9_.\-/]*", name or ""):
            raise ValueError(f"'{name}' is not a valid scope name (letters, digits, _ . - /)")
        name = name.rstrip("/")
        if not name:
            yield ""
            return
        full = self.unique_name(name)  # scopes are uniquified like TF1: 'layer', 'layer_1'
        saved = self._scope
        self._scope = full.split("/")
        try:
            yield full + "/"
        finally:
            self._scope = saved

    def add_node(self, op, inputs, attrs, shape, dtype, name=None, location=None,
                 control_inputs=(), cls=None, device=None):
        """Append a node; ``device`` defaults to the ``with kg.device(...)`` scope, else CPU."""
        node = Node.__new__(cls or Node)  # not cls.__new__: Variable builds itself through here
        node.op = op
        node.inputs = inputs
        node.attrs = attrs
        node.shape = shape
        node.dtype = dtype
        if device is None:
            device = devices.current() or devices.CPU
        # a TF1 device function (tf.train.replica_device_setter, in scope as a
        # Device with a choose method) picks each op's device: variables on the ps
        if type(device) is not devices.Device and hasattr(device, "choose"):
            device = device.choose(op)
        node.device = device
        node.name = self.unique_name(name or op.name)
        node.location = location
        node.graph = self
        node.seq = next(_sequence)
        controls = self._controls
        node.control_inputs = tuple(control_inputs) + controls if controls \
            else tuple(control_inputs)
        self.nodes.append(node)
        self.version += 1
        if trace.active:
            trace.emit("node_added", node=node, mode="static", location=location)
        return node

    def get_node(self, name: str) -> Node:
        """The node called ``name`` (a trailing ':0', as TF1 writes tensor names, is accepted)."""
        if not isinstance(name, str):
            raise TypeError(f"expected a node name (a str), got {type(name).__name__}")
        base = name[:-2] if name.endswith(":0") else name
        for n in self.nodes:
            if n.name == base:
                return n
        raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. The "
                       f"operation, '{base}', does not exist in the graph.")

    def get_tensor_by_name(self, name: str) -> Node:
        """TF1's lookup of a tensor by its name ('mul:0'); KeyError or ValueError as TF1's."""
        if isinstance(name, str) and ":" in name:
            base, _, index = name.rpartition(":")
            if index != "0":
                if not index.isdigit():
                    raise ValueError(f"The name '{name}' looks a like a Tensor name, but is "
                                     "not a valid one. Tensor names must be of the form "
                                     '"<op_name>:<output_index>".')
                raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. "
                               f"The operation, '{base}', exists but only has 1 outputs.")
        elif isinstance(name, str):
            raise ValueError(f"The name '{name}' refers to an Operation, not a Tensor. Tensor "
                             "names must be of the form \"<op_name>:<output_index>\".")
        return self.get_node(name)

    def __len__(self):
        return len(self.nodes)

    def __repr__(self):
        return f"<kg.Graph with {len(self.nodes)} nodes>"


class _DefaultStack(threading.local):
    def __init__(self):
        self.stack: list[Graph] = []
        self.root = Graph()

    def get(self) -> Graph:
        return self.stack[-1] if self.stack else self.root

    @contextlib.contextmanager
    def push(self, graph: Graph):
        self.stack.append(graph)
        try:
            yield graph
        finally:
            self.stack.pop()


_default = _DefaultStack()


def get_default_graph() -> Graph:
    """The graph new nodes are added to (TF1's ``tf.get_default_graph``)."""
    return _default.get()


def reset_default_graph() -> None:
    """Replace the global default graph by an empty one (TF1's ``tf.reset_default_graph``)."""
    if _default.stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. "
                             "Exit the `with graph.as_default()` block first.")
    _default.root = Graph()


def name_scope(name: str):
    """Prefix the names of nodes created inside the block: ``with kg.name_scope('layer1'):``."""
    return get_default_graph().name_scope(name)
