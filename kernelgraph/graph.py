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
import weakref
from collections.abc import Callable, Iterable

from . import devices, trace
from .dtypes import DType
from .errors import _cell_name, describe_location  # noqa: F401 - re-exported for their users
from .tensor_shape import TensorShape

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_sequence = itertools.count()  # creation order; sorting by it is a topological order

#: What floors above the IR install here, since the IR imports none of them:
#: ``"default_session"``, ``() -> the innermost default Session or None``, which
#: :mod:`kernelgraph.static.session` installs when imported (for :meth:`Node.eval`).
#: ``"tf_module"``: the module :mod:`kernelgraph.compat.v1`, which sets it when imported
#: (a namespace holding it is a TF1 program: :func:`tf_caller`).
SLOTS: dict = {"default_session": lambda: None, "tf_module": None}


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

    __slots__ = ("_op", "inputs", "attrs", "_shape", "_dtype", "device", "_name", "location",
                 "graph", "seq", "control_inputs", "__weakref__")

    #: True for a node of a static graph (a symbolic tensor, run by a Session); False for a
    #: node eager mode recorded (:class:`kernelgraph.eager.EagerNode`, a value computed).
    #: Code on any floor asks this instead of importing the eager front-end.
    symbolic = True

    # -- TF1's face ----------------------------------------------------------------------------
    # kernelgraph reads ``node.op`` (the op card), ``node.name`` ('mul') and ``node.shape``
    # (a tuple). TF1 gives the same attributes other meanings: ``t.op`` is the Operation
    # that outputs ``t`` (fetching it returns None), ``t.name`` is 'mul:0' and ``t.shape`` a
    # TensorShape. A TF1 program (code outside kernelgraph whose namespace holds
    # ``kernelgraph.compat.v1``, as ``import kernelgraph.compat.v1 as tf`` puts it there)
    # reads TF1's meanings; everything else reads kernelgraph's (see :func:`tf_caller`).
    @property
    def op(self):
        """The op card; in a TF1 program, TF1's :class:`Operation` of this tensor."""
        if SLOTS["tf_module"] is not None and tf_caller():
            return operation_of(self)
        return self._op

    @op.setter
    def op(self, card):
        self._op = card

    @property
    def name(self) -> str:
        """The node's unique name ('layer/mul'); in a TF1 program, the tensor's ('...:0')."""
        if SLOTS["tf_module"] is not None and tf_caller() and not self.is_operation:
            return self._name + ":0"
        return self._name

    @name.setter
    def name(self, value):
        self._name = value

    @property
    def shape(self):
        """A tuple of ints and Nones (None: unknown rank); a TensorShape in a TF1 program."""
        if SLOTS["tf_module"] is not None and tf_caller():
            return TensorShape(self._shape)
        return self._shape

    @shape.setter
    def shape(self, value):
        self._shape = value

    @property
    def dtype(self):
        """The node's dtype (a NumPy dtype); in a TF1 program a ``tf.DType`` of it, which
        prints ``<dtype: 'float32'>`` and has ``.base_dtype``, ``.as_numpy_dtype`` ..."""
        if SLOTS["tf_module"] is not None and tf_caller():
            return DType(self._dtype)
        return self._dtype

    @dtype.setter
    def dtype(self, value):
        self._dtype = value

    @property
    def is_operation(self) -> bool:
        """Whether this node is what TF1 calls an Operation rather than a Tensor: a
        ``no_op`` (``tf.group``, an initializer, a train op) or a Variable's own
        ``initializer``, whose value is None."""
        name = self._op.name
        return name == "no_op" or (name == "assign" and getattr(
            self.inputs[0], "initializer", None) is self)

    # -- introspection -------------------------------------------------------------------------
    @property
    def ndim(self):
        return None if self._shape is None else len(self._shape)

    def get_shape(self) -> TensorShape:
        """TF1's ``get_shape()``: the static shape as a :class:`~kernelgraph.tensor_shape.
        TensorShape` (``.as_list()``, ``.ndims``, ``[i].value``)."""
        return TensorShape(self._shape)

    def set_shape(self, shape) -> None:
        """TF1's ``set_shape``: refine the static shape with what the caller knows (sizes
        it leaves None stay as they are); a shape that contradicts it is refused."""
        mine, other = TensorShape(self._shape), TensorShape(shape)
        if mine.ndims is not None and other.ndims is not None:
            if mine.ndims != other.ndims:
                raise ValueError(f"Shapes must be equal rank, but are {mine.ndims} and "
                                 f"{other.ndims}")
            for i, (a, b) in enumerate(zip(mine.as_list(), other.as_list())):
                if a is not None and b is not None and a != b:
                    raise ValueError(f"Dimension {i} in both shapes must be equal, but are "
                                     f"{a} and {b}. Shapes are {mine.as_list()} and "
                                     f"{other.as_list()}.")
        merged = mine.merge_with(other)
        self._shape = merged.as_tuple()
        self.graph.version += 1

    @property
    def value_index(self) -> int:
        return 0

    def consumers(self) -> list:
        """The Operations that read this tensor (TF1's ``Tensor.consumers()``)."""
        return [operation_of(n) for n in self.graph.nodes if any(i is self for i in n.inputs)]

    @property
    def type(self) -> str:
        """The op's name; in a TF1 program TF1's type of the Operation (``'NoOp'``)."""
        if SLOTS["tf_module"] is not None and tf_caller():
            return operation_of(self).type
        return self._op.name

    def __repr__(self):
        if SLOTS["tf_module"] is not None and tf_caller():
            if self.is_operation:
                return repr(operation_of(self))
            return (f"<tf.Tensor '{self._name}:0' shape={TensorShape(self._shape)} "
                    f"dtype={DType(self._dtype).name}>")
        shape = "<unknown>" if self._shape is None else _shape_str(self._shape)
        return f"<kg.Node '{self._name}' op={self._op.name} shape={shape} dtype={self.dtype.name}>"

    def __str__(self):
        if SLOTS["tf_module"] is not None and tf_caller():
            if self.is_operation:
                return str(operation_of(self))
            return (f'Tensor("{self._name}:0", shape={TensorShape(self._shape)}, '
                    f"dtype={DType(self._dtype).name})")
        return self.__repr__()

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
            operation_of(self), feed_dict)


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


def tf_caller(depth: int = 2) -> bool:
    """Whether the code ``depth`` frames up (the caller of the attribute that asks) is a TF1
    program: code outside kernelgraph whose global or local names hold the module
    ``kernelgraph.compat.v1`` (``import kernelgraph.compat.v1 as tf``: TF1 code with its
    import swapped) and whose globals do not hold the package ``kernelgraph`` itself. Such
    code reads TF1's meanings of ``node.op``, ``node.name``, ``node.shape`` and of printing
    a node; code that imports kernelgraph (its own tests, a notebook using both) reads
    kernelgraph's."""
    module = SLOTS["tf_module"]
    if module is None:
        return False
    frame = sys._getframe(depth)
    if frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        return False
    package = sys.modules.get(__package__)
    found = False
    for v in frame.f_globals.values():
        if v is package:
            return False  # code that holds kernelgraph itself reads kernelgraph's meanings
        if v is module:
            found = True
    # A function's own names (``def program(tf):``), and those of the function around a
    # comprehension or lambda, which runs in a frame of its own.
    while not found and frame is not None and frame.f_locals is not frame.f_globals:
        for v in frame.f_locals.values():
            if v is module:
                found = True
        if frame.f_code.co_name not in _INNER:
            break
        frame = frame.f_back
    return found


_INNER = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<lambda>"})


#: TF1's op type names (``t.op.type``) where they are not the card's name in CamelCase.
TF_TYPES = {"const": "Const", "placeholder": "Placeholder", "variable": "VariableV2",
            "assign": "Assign", "assign_add": "AssignAdd", "assign_sub": "AssignSub",
            "no_op": "NoOp", "matmul": "MatMul", "add": "AddV2", "div": "RealDiv",
            "neg": "Neg", "argmax": "ArgMax", "argmin": "ArgMin", "random_normal":
            "RandomStandardNormal", "random_uniform": "RandomUniform", "stack": "Pack",
            "concat": "ConcatV2", "getitem": "StridedSlice", "sum": "Sum", "mean": "Mean",
            "pow": "Pow", "max": "Max", "min": "Min", "prod": "Prod"}


class Operation:
    """TF1's ``Operation``: what ``t.op`` is in a TF1 program, a view of the node ``t``.

    Fetching it (``sess.run(t.op)``) runs the node and returns None; ``op.run()`` does the
    same in the default session. ``name`` is the node's name, ``type`` TF1's op type
    (``'Mul'``, ``'MatMul'``), ``inputs``/``outputs`` the tensors it reads and makes. Any
    other attribute is the op card's (``traits``, ``forward``).

    >>> import kernelgraph as kg
    >>> g = kg.Graph()
    >>> with g.as_default():
    ...     c = kg.constant(2.0) * 3.0
    >>> op = Operation(c)
    >>> op.name, op.type, op.outputs == [c]
    ('mul', 'Mul', True)
    """

    __slots__ = ("_node",)

    def __init__(self, node: Node):
        self._node = node.node if isinstance(node, Operation) else node

    @property
    def node(self) -> Node:
        return self._node

    @property
    def name(self) -> str:
        return self._node._name

    @property
    def type(self) -> str:
        card = self._node._op.name
        return TF_TYPES.get(card) or "".join(p.capitalize() for p in card.split("_"))

    @property
    def inputs(self) -> list:
        return list(self._node.inputs)

    @property
    def outputs(self) -> list:
        return [] if self._node.is_operation else [self._node]

    def values(self) -> tuple:
        return tuple(self.outputs)

    @property
    def control_inputs(self) -> list:
        return [operation_of(c) for c in self._node.control_inputs]

    @property
    def graph(self):
        return self._node.graph

    @property
    def device(self) -> str:
        return str(self._node.device)

    def run(self, feed_dict=None, session=None) -> None:
        """Run the node for its effects in ``session`` or the default session (None)."""
        self._node.run(feed_dict, session)

    def __getattr__(self, attr):
        return getattr(self._node._op, attr)

    def __eq__(self, other):
        return isinstance(other, Operation) and other._node is self._node

    def __hash__(self):
        return hash((Operation, id(self._node)))

    def __repr__(self):
        return f"<tf.Operation '{self.name}' type={self.type}>"

    def __str__(self):
        lines = [f'name: "{self.name}"', f'op: "{self.type}"']
        lines += [f'input: "{i._name}"' for i in self._node.inputs]
        lines += [f'input: "^{c._name}"' for c in self._node.control_inputs]
        return "\n".join(lines) + "\n"


_operations: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def operation_of(node: Node) -> Operation:
    """The one :class:`Operation` of ``node`` (so ``t.op is t.op``, as in TF1)."""
    op = _operations.get(node)
    if op is None:
        op = _operations[node] = Operation(node)
    return op


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
        ``control_inputs`` (nodes or Operations) have run; ``None`` clears them."""
        saved = self._controls
        if control_inputs is None:
            self._controls = ()
        else:
            nodes = tuple(c.node if isinstance(c, Operation) else c for c in control_inputs)
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
        node.device = device if device is not None else (devices.current() or devices.CPU)
        # a TF1 device function (tf.train.replica_device_setter, in scope as a
        # Device with a choose method) picks each op's device: variables on the ps
        if type(node.device) is not devices.Device and hasattr(node.device, "choose"):
            node.device = node.device.choose(op)
        node.name = self.unique_name(name or op.name)
        node.location = location
        node.graph = self
        node.seq = next(_sequence)
        node.control_inputs = tuple(control_inputs) + self._controls if self._controls \
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
            if n._name == base:
                return n
        raise KeyError(f"The name '{name}' refers to a Tensor which does not exist in the graph")

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

    def get_operation_by_name(self, name: str) -> Operation:
        """TF1's lookup of an Operation by its name ('mul')."""
        if isinstance(name, str) and ":" in name:
            raise ValueError(f"Name '{name}' appears to refer to a Tensor, not a Operation.")
        try:
            return operation_of(self.get_node(name))
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the "
                           "graph.") from None

    def get_operations(self) -> list:
        """Every node as TF1's Operation, in creation order."""
        return [operation_of(n) for n in self.nodes]

    def as_graph_element(self, obj):
        """A node for a name, a node or an Operation (TF1's ``as_graph_element``)."""
        if isinstance(obj, str):
            return self.get_node(obj) if ":" in obj else self.get_operation_by_name(obj)
        return obj

    @property
    def finalized(self) -> bool:
        return False

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
