"""``tf.variable_scope`` and ``tf.get_variable``: TF1's named, shareable variables.

A variable scope prefixes the names of the variables ``tf.get_variable`` makes (and opens a
name scope of the same name for the ops inside). Asking again for a name that exists is an
error unless the scope reuses (``reuse=True``, ``tf.AUTO_REUSE``, or
``scope.reuse_variables()``), in which case the same variable comes back: TF1's way to share
weights. Each graph keeps its own scopes and variables.
"""

from __future__ import annotations

import contextlib
import weakref

import numpy as np

from ...dtypes import FLOATS, as_dtype, bool_, float32, string
from ...errors import where
from ...graph import Graph, Node, get_default_graph, user_location
from ...static.session import session_value
from ...static.variables import Variable, placeholder
from .graph_collections import in_collections
from .initializers import glorot_uniform_initializer, initial_value, zeros_initializer


class _ReuseMode:
    def __repr__(self):
        return "tf.AUTO_REUSE"


AUTO_REUSE = _ReuseMode()


class VariableScope:
    """A variable scope: its ``name``, whether it ``reuse``s, and the default
    ``initializer`` and ``dtype`` of the variables made in it."""

    def __init__(self, reuse, name="", initializer=None, dtype=float32,
                 name_scope=""):
        self.reuse, self._name = reuse, name
        self.initializer, self.dtype = initializer, dtype
        self.original_name_scope = name_scope

    @property
    def name(self) -> str:
        return self._name

    def reuse_variables(self) -> None:
        """From now on, ``tf.get_variable`` in this scope returns the existing variables."""
        self.reuse = True

    def set_initializer(self, initializer) -> None:
        self.initializer = initializer

    def __repr__(self):
        return f"<tf.VariableScope '{self._name}' reuse={self.reuse}>"


class _State:
    def __init__(self):
        self.stack = [VariableScope(False)]
        self.variables: dict[str, Variable] = {}
        self.counts: dict[str, int] = {}  # default names used: 'dense' -> 2


_STATES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _state(graph: Graph | None = None) -> _State:
    graph = graph or get_default_graph()
    root = getattr(graph, "root", graph)  # variables of a traced branch live in the user's
    state = _STATES.get(root)
    if state is None:
        state = _STATES[root] = _State()
    return state


def get_variable_scope() -> VariableScope:
    """The current variable scope (the root one has name ``''``)."""
    return _state().stack[-1]


def unique_scope_name(base: str) -> str:
    """``base`` made unique among the default names used in the current variable scope, as
    TF's layers name themselves: 'dense', then 'dense_1', 'dense_2' ..."""
    state = _state()
    prefix = state.stack[-1].name
    key = f"{prefix}/{base}" if prefix else base
    n = state.counts.get(key, 0)
    state.counts[key] = n + 1
    return base if n == 0 else f"{base}_{n}"


@contextlib.contextmanager
def _name_scope_at(graph: Graph, full: str):
    """A name scope ``full`` (made unique by the graph: 'a', then 'a_1'), from the root."""
    saved = graph._scope
    graph._scope = []
    try:
        with graph.name_scope(full) as scope:
            yield scope
    finally:
        graph._scope = saved


@contextlib.contextmanager
def variable_scope(name_or_scope=None, default_name=None, values=None, initializer=None,
                   regularizer=None, caching_device=None, partitioner=None,
                   custom_getter=None, reuse=None, dtype=None, use_resource=None,
                   constraint=None, auxiliary_name_scope=True):
    """Open a variable scope (and the name scope of the same name).

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     with tf.variable_scope("layer"):
    ...         w = tf.get_variable("w", [2], initializer=tf.zeros_initializer())
    ...     with tf.variable_scope("layer", reuse=True):
    ...         again = tf.get_variable("w", [2])
    ...     w.name, again is w
    ('layer/w:0', True)
    """
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    graph = get_default_graph()
    state = _state(graph)
    parent = state.stack[-1]
    if isinstance(name_or_scope, VariableScope):
        full, scope_of_names = name_or_scope.name, name_or_scope.original_name_scope
        inherited = name_or_scope.reuse
        init = name_or_scope.initializer if initializer is None else initializer
        dt = name_or_scope.dtype if dtype is None else dtype
    else:
        if name_or_scope is None:
            name = unique_scope_name(default_name)
        else:
            name = str(name_or_scope)
        full = f"{parent.name}/{name}" if parent.name else name
        scope_of_names = None
        inherited = parent.reuse
        init = parent.initializer if initializer is None else initializer
        dt = parent.dtype if dtype is None else dtype
    # Entering a scope restarts the default names inside it, as TF's scope store does: a
    # function that builds 'generator/dense' builds it again when called a second time
    # (and shares its variables under reuse=True).
    for key in state.counts:
        if key.startswith(full + "/"):
            state.counts[key] = 0
    if reuse is False:
        reuse = None  # TF1: False means "inherit", as None
    mode = True if parent.reuse is True else reuse if reuse is not None else inherited
    with contextlib.ExitStack() as stack:
        if scope_of_names is not None and auxiliary_name_scope:
            saved = graph._scope
            graph._scope = [p for p in scope_of_names.rstrip("/").split("/") if p]
            stack.callback(setattr, graph, "_scope", saved)
            names = scope_of_names
        elif auxiliary_name_scope:
            names = stack.enter_context(_name_scope_at(graph, full))
        else:
            names = ""
        scope = VariableScope(mode, full, init, as_dtype(dt), names)
        state.stack.append(scope)
        try:
            yield scope
        finally:
            state.stack.pop()


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=None, aggregation=None) -> Variable:
    """The variable ``<scope>/name``: made (with ``initializer``, default Glorot-uniform for
    floats and zeros otherwise, as TF1) or, where the scope reuses, the existing one.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.get_variable("v", [2, 2], initializer=tf.constant_initializer(1.5))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(v))
    [[1.5 1.5]
     [1.5 1.5]]
    """
    graph = get_default_graph()
    graph = getattr(graph, "root", graph)
    state = _state(graph)
    scope = state.stack[-1]
    full = f"{scope.name}/{name}" if scope.name else str(name)
    location = user_location(2)
    if isinstance(shape, int):
        shape = (shape,)
    existing = state.variables.get(full)
    if existing is not None:
        if scope.reuse is None or scope.reuse is False:
            raise ValueError(f"Variable {full} already exists, disallowed. Did you mean to set "
                             f"reuse=True or reuse=tf.AUTO_REUSE in VarScope? Originally "
                             f"defined at:{where(existing.location)}")
        if shape is not None and existing.shape is not None and \
                tuple(shape) != tuple(existing.shape):
            raise ValueError(f"Trying to share variable {full}, but specified shape "
                             f"{tuple(shape)} and found shape {tuple(existing.shape)}.")
        if dtype is not None and as_dtype(dtype) != existing.dtype:
            raise ValueError(f"Trying to share variable {full}, but specified dtype "
                             f"{as_dtype(dtype).name} and found dtype {existing.dtype.name}.")
        return existing
    if scope.reuse is True:
        raise ValueError(f"Variable {full} does not exist, or was not created with "
                         f"tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                         f"VarScope?")
    dt = as_dtype(dtype if dtype is not None else scope.dtype or float32)
    init = initializer if initializer is not None else scope.initializer
    if isinstance(init, type):  # TF instantiates an initializer class (tf.zeros_initializer)
        init = init()
    if isinstance(init, Node | np.ndarray | list | int | float) and not callable(init):
        if shape is not None and isinstance(init, Node | np.ndarray | list):
            raise ValueError("If initializer is a constant, do not specify shape.")
        value = init if isinstance(init, Node) else np.asarray(init, np.dtype(dt))
    else:
        if shape is None:
            raise ValueError(f"The shape of variable {full} must be fully defined (got None)")
        shape = tuple(int(d) for d in shape)
        if init is None:
            init = glorot_uniform_initializer() if dt in FLOATS else zeros_initializer()
        value = initial_value(init, shape, dt)
    saved = graph._scope
    graph._scope = []  # the variable's name is the variable scope's, not the name scope's
    try:
        with graph.as_default():
            var = Variable(value, name=full, trainable=True if trainable is None else trainable,
                           dtype=dt)
    finally:
        graph._scope = saved
    var.location = location
    state.variables[full] = var
    return in_collections(var, collections)


def _set(store) -> set:
    return {id(k) for k in store}


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A string tensor of the names of the variables in ``var_list`` (default: all) that the
    running session has not initialised yet, as ``bytes`` (TF1's).

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
    ...     with tf.Session() as sess:
    ...         _ = sess.run(a.initializer)
    ...         print(sess.run(tf.report_uninitialized_variables()))
    [b'b']
    """
    graph = get_default_graph()
    chosen = None if var_list is None else list(var_list)
    node = placeholder(string, shape=[None], name=name)

    def names(store):
        done = _set(store)
        variables = graph.variables if chosen is None else chosen
        return np.array([v.name.split(":")[0].encode() for v in variables
                         if id(v) not in done], dtype=object).reshape(-1)
    return session_value(node, names)


def is_variable_initialized(variable, name="IsVariableInitialized"):
    """A bool tensor: whether the running session has initialised ``variable`` (TF1's).

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     a = tf.Variable(1.0)
    ...     with tf.Session() as sess:
    ...         print(sess.run(tf.is_variable_initialized(a)))
    False
    """
    node = placeholder(bool_, shape=[], name=name)
    return session_value(node, lambda store: np.bool_(id(variable) in _set(store)))


__all__ = ["AUTO_REUSE", "VariableScope", "get_variable", "get_variable_scope",
           "is_variable_initialized", "report_uninitialized_variables",
           "unique_scope_name", "variable_scope"]
