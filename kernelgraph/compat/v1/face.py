"""TF1's ``Tensor``, ``Operation``, ``Variable`` and ``Graph``: types that wrap kernelgraph's
graph nodes and graphs, so that what a tensor means follows from its type.

A kernelgraph node means what kernelgraph says (``node.name`` 'mul', ``node.shape`` a
tuple, ``node.op`` the op card). TF1 gives the same attributes other meanings, and a TF1
program gets them because every ``tf.*`` function returns a wrapper of the node it made:
``t.name`` is 'mul:0', ``t.shape`` a :class:`TensorShape`, ``t.dtype`` a :class:`DType`,
``t.op`` the :class:`Operation` whose ``type`` is 'Mul'. One wrapper per node (cached),
so ``t.op is t.op`` and a wrapper is a stable ``feed_dict`` key; the graph keeps the
wrappers of its nodes, which go with it.

The boundary (:func:`boundary`) converts once, on the way into and out of the face: the
arguments of a ``tf.*`` function are unwrapped to nodes, its result wrapped. The face's own
code therefore only ever sees nodes (a call from inside the face passes through as it is),
and a function the user hands in (a ``tf.cond`` branch, a ``while_loop`` body) sees
wrappers again. The other way round, a wrapper handed to a kernelgraph op reads as its node
(registered in ``ops.registry.FRONTENDS`` for these types only; the core reads any object
whose type has ``kg_node``), so ``kg.reduce_sum(tf_tensor)`` is a kernelgraph node.

>>> import kernelgraph.compat.v1 as tf
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
...     y = x * 2.0
>>> x.name, x.shape.as_list(), y.op.type, y.op.inputs[0] is x, y
('x:0', [None, 3], 'Mul', True, <tf.Tensor 'mul:0' shape=(?, 3) dtype=float32>)
"""

from __future__ import annotations

import functools
import os
import threading
import types

import numpy as np

from ...eager import EagerNode
from ...graph import Graph as _KgGraph
from ...graph import Node
from ...ops import registry
from ...static import session as _session
from ...static.control_flow.host_ops import iterator_init_op as _iterator_init
from ...static.variables import Variable as _KgVariable
from .dtype import DType
from .tensor_shape import TensorShape
from .tensors import Variable as _VariableNode

#: TF1's op type names (``t.op.type``) where they are not the card's name in CamelCase.
TF_TYPES = {"const": "Const", "placeholder": "Placeholder", "variable": "VariableV2",
            "assign": "Assign", "assign_add": "AssignAdd", "assign_sub": "AssignSub",
            "no_op": "NoOp", "matmul": "MatMul", "add": "AddV2", "div": "RealDiv",
            "neg": "Neg", "argmax": "ArgMax", "argmin": "ArgMin", "random_normal":
            "RandomStandardNormal", "random_uniform": "RandomUniform", "stack": "Pack",
            "concat": "ConcatV2", "getitem": "StridedSlice", "sum": "Sum", "mean": "Mean",
            "pow": "Pow", "max": "Max", "min": "Min", "prod": "Prod",
            "iterator_init": "MakeIterator"}



# -- the wrapper types ---------------------------------------------------------------------------
class _Wrapper:
    """What TF1's Tensor, Variable and Operation share: the node they stand for."""

    __slots__ = ("_node", "__weakref__")
    kg_operation = False  # fetched as its value (an Operation answers None)

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"tf.{cls.__name__} objects are made by tf functions, not directly")

    @property
    def kg_node(self) -> Node:
        """The kernelgraph node this stands for (what the core reads: ``graph.node_of``)."""
        return self._node

    @property
    def graph(self):
        return graph_of(self._node.graph)

    @property
    def device(self):
        return self._node.device  # a Device, equal to its name ('cpu', 'worker:0/cpu')

    def eval(self, feed_dict=None, session=None):
        """TF1's ``eval``: the value, in ``session`` or the default session."""
        return self._node.eval(unwrap(feed_dict), session)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return wrap(_outward(getattr(self._node, attr)))

    __hash__ = object.__hash__


class _Value(_Wrapper):
    """A value a program computes with: TF1's Tensor and Variable (the operators)."""

    __slots__ = ()
    __array_ufunc__ = None  # np.float32(2) * t: NumPy defers to the tensor's operators

    @property
    def name(self) -> str:
        return self._node.name + ":0"

    @property
    def op(self) -> Operation:
        return operation_of(self._node)

    @property
    def shape(self) -> TensorShape:
        return shape_of(self._node.shape)

    def get_shape(self) -> TensorShape:
        return shape_of(self._node.shape)

    @property
    def dtype(self) -> DType:
        return DType(self._node.dtype)

    @property
    def value_index(self) -> int:
        return 0

    def consumers(self) -> list:
        """The Operations that read this tensor."""
        node = self._node
        return [operation_of(n) for n in node.graph.nodes if any(i is node for i in n.inputs)]

    def set_shape(self, shape) -> None:
        """Refine the static shape with what the caller knows (sizes it leaves None stay
        as they are); a shape that contradicts it is refused."""
        node = self._node
        mine, other = TensorShape(node.shape), TensorShape(shape)
        if mine.ndims is not None and other.ndims is not None:
            if mine.ndims != other.ndims:
                raise ValueError(f"Shapes must be equal rank, but are {mine.ndims} and "
                                 f"{other.ndims}")
            for i, (a, b) in enumerate(zip(mine.as_list(), other.as_list())):
                if a is not None and b is not None and a != b:
                    raise ValueError(f"Dimension {i} in both shapes must be equal, but are "
                                     f"{a} and {b}. Shapes are {mine.as_list()} and "
                                     f"{other.as_list()}.")
        node.shape = mine.merge_with(other).as_tuple()
        node.graph.version += 1

    def __bool__(self):
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is "
                        "not None:` instead of `if t:` to test if a tensor is defined, and "
                        "use TensorFlow ops such as tf.cond to execute subgraphs conditioned "
                        "on the value of a tensor.")

    def __iter__(self):
        raise TypeError("Tensor objects are only iterable when eager execution is enabled. "
                        "To iterate over this tensor use tf.map_fn.")

    def __repr__(self):
        return (f"<tf.Tensor '{self.name}' shape={self.shape} "
                f"dtype={self.dtype.name}>")

    def __str__(self):  # TF1 leaves the shape out where even the rank is unknown
        shape = "" if self.shape.ndims is None else f", shape={self.shape}"
        return f'Tensor("{self.name}"{shape}, dtype={self.dtype.name})'


def _operator(name):
    def method(self, *args):
        return wrap(getattr(self._node, name)(*unwrap(args)))
    method.__name__ = name
    return method


_OPERATORS = ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv",
              "rfloordiv", "mod", "rmod", "pow", "rpow", "matmul", "rmatmul", "neg", "pos",
              "abs", "invert", "and", "rand", "or", "ror", "xor", "rxor", "lt", "le", "gt",
              "ge", "getitem")
for _name in _OPERATORS:
    if hasattr(Node, f"__{_name}__"):
        setattr(_Value, f"__{_name}__", _operator(f"__{_name}__"))


class Tensor(_Value):
    """TF1's ``tf.Tensor``: the output of an Operation, a handle to a graph node.

    ``name`` is '<op name>:0', ``op`` its :class:`Operation`, ``shape`` (and
    ``get_shape()``) a :class:`TensorShape`, ``dtype`` a :class:`DType`; ``eval()`` runs it
    in the default session."""

    __slots__ = ()


class Variable(_Value):
    """TF1's ``tf.Variable`` (a reference variable): ``name`` 'v:0', ``op`` its
    'VariableV2' Operation, ``initializer`` the Operation that sets it, ``assign`` /
    ``assign_add`` / ``assign_sub`` tensors that change it when run, ``value()``."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        return _call_inside(_VariableNode, args, kwargs)

    def __init__(self, *args, **kwargs):
        pass  # __new__ did everything, and returned the one wrapper of the new node

    @property
    def initializer(self) -> Operation:
        return operation_of(self._node.initializer)

    @property
    def initial_value(self) -> Tensor:
        return wrap(self._node.initial_value)

    def initialized_value(self) -> Tensor:
        return wrap(self._node.initial_value)

    def value(self) -> Tensor:
        return _wrap_node(self._node)

    read_value = value

    def assign(self, value, use_locking=None, name=None, read_value=True):
        return _call_inside(self._node.assign, (value,),
                            {"name": name or "Assign"})

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        return _call_inside(self._node.assign_add, (delta,),
                            {"name": name or "AssignAdd"})

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return _call_inside(self._node.assign_sub, (delta,),
                            {"name": name or "AssignSub"})

    def load(self, value, session=None) -> None:
        """Set the variable to ``value`` in ``session`` (or the default session)."""
        sess = session or _session.get_default_session()
        sess.run(self._node.initializer, {self._node.initial_value: value})

    def __repr__(self):
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}_ref>"

    __str__ = __repr__


class Operation(_Wrapper):
    """TF1's ``Operation``: what ``t.op`` is, a view of the node ``t``.

    Fetching it (``sess.run(t.op)``) runs the node and returns None; ``op.run()`` does the
    same in the default session. ``name`` is the node's name, ``type`` TF1's op type
    (``'Mul'``, ``'MatMul'``), ``inputs``/``outputs`` the tensors it reads and makes. Any
    other attribute is the op card's (``traits``, ``forward``).
    """

    __slots__ = ()
    kg_operation = True

    @property
    def name(self) -> str:
        return self._node.name

    @property
    def type(self) -> str:
        card = self._node.op.name
        return TF_TYPES.get(card) or "".join(p.capitalize() for p in card.split("_"))

    @property
    def inputs(self) -> list:
        return [wrap(i) for i in self._node.inputs]

    @property
    def outputs(self) -> list:
        return [] if self._node.is_operation else [wrap(self._node)]

    def values(self) -> tuple:
        return tuple(self.outputs)

    @property
    def control_inputs(self) -> list:
        return [operation_of(c) for c in self._node.control_inputs]

    def run(self, feed_dict=None, session=None) -> None:
        """Run the node for its effects in ``session`` or the default session (None)."""
        self._node.run(unwrap(feed_dict), session)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(self._node.op, attr)

    def __repr__(self):
        return f"<tf.Operation '{self.name}' type={self.type}>"

    def __str__(self):
        lines = [f'name: "{self.name}"', f'op: "{self.type}"']
        lines += [f'input: "{i.name}"' for i in self._node.inputs]
        lines += [f'input: "^{c.name}"' for c in self._node.control_inputs]
        return "\n".join(lines) + "\n"


_shapes: dict = {}  # a node's shape tuple -> its TensorShape (immutable, so shared)


def shape_of(dims) -> TensorShape:
    """The TensorShape of a node's shape (a tuple of ints and Nones, or None)."""
    shape = _shapes.get(dims)
    if shape is None:
        if len(_shapes) > 4096:
            _shapes.clear()
        shape = _shapes[dims] = TensorShape(dims)
    return shape


def _made(cls, node):
    w = object.__new__(cls)
    w._node = node
    return w


class _Cache:
    """The wrappers of one graph's nodes, kept by the graph itself (``graph._tf_wrappers``)
    so that they live as long as it does: a wrapper holds its node, which holds the graph."""

    __slots__ = ("values", "operations")

    def __init__(self):
        self.values: dict = {}  # node -> what wrap(node) gives (its Tensor, Variable or Op)
        self.operations: dict = {}  # node -> its Operation (t.op)


def _cache_of(graph) -> _Cache:
    try:
        return graph._tf_wrappers
    except AttributeError:
        graph._tf_wrappers = cache = _Cache()
        return cache


def _wrap_node(node):
    """The one wrapper of ``node``, made the first time: its Operation for a node run for
    its effects alone, else its Tensor (a Variable's own type for a Variable)."""
    if isinstance(node, EagerNode):
        return node
    cache = _cache_of(node.graph)
    w = cache.values.get(node)
    if w is None:
        if node.is_operation or node.op is _iterator_init:
            w = operation_of(node)
        else:
            w = _made(Variable if isinstance(node, _KgVariable) else Tensor, node)
        cache.values[node] = w
    return w


def operation_of(node: Node) -> Operation:
    """The one :class:`Operation` of ``node`` (so ``t.op is t.op``, as in TF1)."""
    ops = _cache_of(node.graph).operations
    op = ops.get(node)
    if op is None:
        op = ops[node] = _made(Operation, node)
    return op


# -- the graph -----------------------------------------------------------------------------------
class Graph(_KgGraph):
    """TF1's ``tf.Graph``: a kernelgraph graph whose lookups answer TF1's types
    (``get_tensor_by_name('mul:0')`` a Tensor, ``get_operations()`` Operations)."""

    _tf_inherits = False  # the core builds nodes through the graph's own methods

    def control_dependencies(self, control_inputs):
        return super().control_dependencies(
            None if control_inputs is None else [_node_or_refuse(c) for c in control_inputs])

    def get_tensor_by_name(self, name: str) -> Tensor:
        return wrap(super().get_tensor_by_name(name))

    def get_operation_by_name(self, name: str) -> Operation:
        if isinstance(name, str) and ":" in name:
            raise ValueError(f"Name '{name}' appears to refer to a Tensor, not a Operation.")
        try:
            return operation_of(self.get_node(name))
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the "
                           "graph.") from None

    def get_operations(self) -> list:
        return [operation_of(n) for n in self.nodes]

    def as_graph_element(self, obj):
        if isinstance(obj, str):
            return self.get_tensor_by_name(obj) if ":" in obj else \
                self.get_operation_by_name(obj)
        return obj

    def as_graph_def(self, from_version=None, add_shapes: bool = False):
        """The graph as TF's ``GraphDef`` protobuf (:mod:`.graph_io`)."""
        from .graph_io import as_graph_def  # late: graph_io reads this module's TF_TYPES
        return as_graph_def(self, add_shapes=add_shapes)

    finalized = False  # TF1's Graph.finalize() is not kept: a graph always grows

    def __repr__(self):
        return f"<tf.Graph with {len(self.nodes)} nodes>"


def graph_of(graph):
    """``graph`` as a tf.Graph: a graph a TF1 program reaches (the default one, a tensor's)
    gains TF1's lookups; the graph object stays the same, so ``t.graph is g`` holds."""
    if graph is not None and type(graph) is _KgGraph:
        graph.__class__ = Graph  # adds TF1's lookups; changes none of kernelgraph's
    return graph


def _node_or_refuse(c):
    c = unwrap(c)
    if not isinstance(c, Node):
        raise TypeError(f"Can not convert a {type(c).__name__} into a Tensor or Operation.")
    return c


# -- wrapping and unwrapping ---------------------------------------------------------------------
def wrap(x):
    """``x`` with every graph node in it as TF1's type of it, every graph as a tf.Graph."""
    if isinstance(x, Node):
        try:
            return x.graph._tf_wrappers.values[x]  # the one wrapper, made before
        except (AttributeError, KeyError):
            return _wrap_node(x)
    t = type(x)
    if t is list:
        out = [wrap(v) for v in x]
        # the same list where nothing in it changed (tf.get_collection_ref's, appended to)
        return x if all(a is b for a, b in zip(out, x)) else out
    if t is tuple:
        return tuple(wrap(v) for v in x)
    if isinstance(x, tuple) and hasattr(x, "_make"):  # a namedtuple (LSTMStateTuple ...)
        return t._make(wrap(v) for v in x)
    if t is dict:
        return {k: wrap(v) for k, v in x.items()}
    if isinstance(x, _KgGraph):
        return graph_of(x)
    if isinstance(x, np.dtype):  # tf.as_dtype('float32'), an iterator's output_types
        return DType(x)
    return x


_PLAIN = frozenset((int, float, bool, str, bytes, type(None)))


def unwrap(x):
    """``x`` with every wrapper in it as the node it wraps, a tf.DType as its NumPy dtype, and
    a function of the user's adapted to see wrappers (:func:`_inward`)."""
    t = type(x)
    if t in _PLAIN:
        return x
    if t is Tensor or t is Variable or t is Operation:
        return x._node
    if t is list:
        return [unwrap(v) for v in x]
    if t is tuple:
        return tuple([unwrap(v) for v in x])
    if t is dict:
        return {unwrap(k): unwrap(v) for k, v in x.items()}
    if t is DType:
        return x.dtype
    if isinstance(x, tuple) and hasattr(x, "_make"):
        return t._make(unwrap(v) for v in x)
    return _inward(x)


# A function the face calls back (a cond branch, a loop body, a map_fn function) runs as the
# user's code: it is handed wrappers and what it returns is unwrapped again.
_USER_FUNCTIONS = (types.FunctionType, types.MethodType, functools.partial)
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(__file__))) + os.sep


def _inward(fn):
    if not isinstance(fn, _USER_FUNCTIONS) or getattr(fn, "_tf_boundary", False):
        return fn
    code = getattr(getattr(fn, "__func__", getattr(fn, "func", fn)), "__code__", None)
    if code is not None and code.co_filename.startswith(_PACKAGE_DIR):
        return fn  # kernelgraph's own function (kg.nn.relu as an activation): takes nodes

    @functools.wraps(fn)
    def as_user_code(*args, **kwargs):
        depth = _state.depth
        _state.depth = 0
        try:
            return unwrap(fn(*wrap(args), **wrap(kwargs)))
        finally:
            _state.depth = depth
    return as_user_code


def _outward(attr):
    """A method read off a node through a wrapper: a boundary, so its result is wrapped."""
    return boundary(attr) if isinstance(attr, types.MethodType) else attr


class _State(threading.local):
    depth = 0  # how many face functions are running: only the outermost converts


_state = _State()


def _call_inside(fn, args, kwargs):
    state = _state
    state.depth += 1
    try:
        args = [unwrap(a) for a in args]
        out = fn(*args, **{k: unwrap(v) for k, v in kwargs.items()}) if kwargs else fn(*args)
    finally:
        state.depth -= 1
    return wrap(out)


def boundary(fn):
    """``fn`` as a ``tf.*`` function: called from a program, its arguments are unwrapped and
    its result wrapped; called from the face's own code, it runs as it is."""
    if getattr(fn, "_tf_boundary", False) or not callable(fn):
        return fn

    @functools.wraps(fn)
    def tf_function(*args, **kwargs):
        if _state.depth:
            return fn(*args, **kwargs)
        return _call_inside(fn, args, kwargs)
    tf_function._tf_boundary = True
    return tf_function


_PUBLIC_DUNDERS = ("__init__", "__call__", "__iter__", "__next__", "__enter__")


def _boundary_attr(attr):
    if isinstance(attr, property):
        return property(boundary(attr.fget), attr.fset and boundary(attr.fset), attr.fdel,
                        attr.__doc__)
    if isinstance(attr, staticmethod | classmethod):
        return type(attr)(boundary(attr.__func__))
    if isinstance(attr, types.FunctionType):
        return boundary(attr)
    return attr


def face_class(cls) -> type:
    """Put the boundary on the public methods and properties of ``cls`` (a face class:
    ``tf.layers.Dense``, ``tf.train.AdamOptimizer``, an iterator) and of its face bases,
    those they inherit from kernelgraph's classes included (set on the face class: a
    kernelgraph class is left as it is)."""
    for klass in reversed(cls.__mro__):
        if klass.__module__.startswith(__package__) and not klass.__dict__.get("_tf_face"):
            _face_one(klass)
    return cls


def _face_one(klass) -> None:
    inherits = klass.__dict__.get("_tf_inherits", True)
    for base in klass.__mro__:
        core = base.__module__.startswith("kernelgraph.") and not base.__module__.startswith(
            __package__)
        if base is not klass and not (core and inherits):
            continue  # a face base puts the boundary on itself; Python's own are left
        for name, attr in list(vars(base).items()):
            if name.startswith("_") and name not in _PUBLIC_DUNDERS:
                continue
            if base is klass or next(k for k in klass.__mro__ if name in vars(k)) is base:
                setattr(klass, name, _boundary_attr(attr))
    klass._tf_face = True


_FACE_TYPES = (Tensor, Variable, Operation, DType, TensorShape, _Wrapper)


def install(namespace, seen=None) -> None:
    """Put the boundary on every function and face class of ``namespace`` (the module
    ``kernelgraph.compat.v1``), and of the namespaces inside it (``tf.nn``, ``tf.train``)."""
    seen = set() if seen is None else seen
    seen.add(id(namespace))
    names = vars(namespace)
    for name, value in list(names.items()):
        if name.startswith("_") or any(value is t for t in _FACE_TYPES):
            continue
        if isinstance(value, type):
            if (value.__module__ or "").startswith(__package__):  # a protobuf class: None
                face_class(value)
        elif isinstance(value, types.SimpleNamespace):
            if id(value) not in seen:
                install(value, seen)
        elif callable(value) and not isinstance(value, types.ModuleType):
            names[name] = boundary(value)


def _redispatch(op, args, attrs):
    """A kernelgraph op given TF1 tensors: the op on their nodes (a kernelgraph node)."""
    return op(*unwrap(args), **attrs)


for _type in (Tensor, Variable, Operation):
    registry.FRONTENDS[_type] = _redispatch
