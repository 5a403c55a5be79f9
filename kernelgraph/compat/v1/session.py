"""TF1's ``tf.Session`` and ``tf.InteractiveSession``: kernelgraph's Session, made with
TF1's arguments (``Session(target='', graph=None, config=None)``). Fetches and feed keys
may be TF1's tensors and operations: the Session reads the node a wrapper stands for."""

from __future__ import annotations

import itertools

from ...errors import InvalidArgumentError, OpError
from ...graph import Graph as _KgGraph
from ...graph import Node, node_of
from ...nest import flatten, pack_as
from ...static import session as _session
from .face import graph_of, operation_of
from .sparse import SparseTensor, has_sparse, sparse_feeds, sparse_fetches

#: What a ``tf.train.Server``'s target starts with: the server is in-process, and a Session
#: given its target runs here (:mod:`.training`).
LOCAL_TARGET = "inprocess://kernelgraph/"


def _arguments(target, graph):
    # Session(g): kernelgraph's order puts the graph first; TF1's puts the target first.
    if isinstance(target, _KgGraph):
        return "", target
    if isinstance(target, str) and target.startswith(LOCAL_TARGET):
        return "", graph
    return target, graph


def flatten_dict_items(feed_dict: dict) -> dict:
    """TF1's ``nest.flatten_dict_items``, which ``Session.run`` applies to its feeds: a key
    that is a tuple of tensors (an ``LSTMStateTuple``, a ``MultiRNNCell``'s tuple of them)
    is fed leaf by leaf from a value of the same structure, so ``feed_dict={init_state:
    final_state}`` feeds back the state a run fetched."""
    flat = {}
    for key, value in feed_dict.items():
        keys, values = (flatten(key), flatten(value)) if isinstance(key, tuple) else \
            ([key], [value])
        if len(keys) != len(values):
            raise ValueError(f"Could not flatten dictionary. Key had {len(keys)} elements, "
                             f"but value had {len(values)} elements. Key: {keys}, value: "
                             f"{values}.")
        for k, v in zip(keys, values):
            if k in flat:
                raise ValueError(f"Could not flatten dictionary: key {k} is not unique.")
            flat[k] = v
    return flat


def _name(x) -> str:
    return x.decode() if isinstance(x, bytes) else x


def _is_graph_tensor(value) -> bool:
    return (isinstance(value, Node) and value.symbolic) or node_of(value) is not None


class _FeedsTuples:
    """What TF1's ``Session.run`` does around kernelgraph's: state tuples fed leaf by leaf,
    fetches and feed keys by name as TF1 reads names (an op name fetches the Operation,
    answering None; bytes names too), TF1's errors for an empty graph and a tensor fed as a
    value, errors whose ``e.op`` is TF1's Operation, SparseTensors fed and fetched as
    SparseTensorValues, and ``partial_run``."""

    # Like the Sessions below, run reads TF1's tensors itself (the core refuses a fed
    # Operation): marked as already faced, so no boundary converts its arguments first.
    _tf_face = True
    _partial_ids = itertools.count(1)

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if has_sparse(fetches):  # a SparseTensor is fetched as a SparseTensorValue
            fetches = sparse_fetches(fetches)
        if feed_dict and any(type(k) is SparseTensor for k in feed_dict):
            feed_dict = sparse_feeds(feed_dict)
        if feed_dict and any(isinstance(k, tuple) for k in feed_dict):
            feed_dict = flatten_dict_items(feed_dict)
        if not self.graph.nodes and not self._closed:
            raise RuntimeError("The Session graph is empty. Add operations to the graph "
                               "before calling run().")
        try:
            return super().run(fetches, feed_dict, options, run_metadata)
        except OpError as e:
            if isinstance(e.node, Node) and e.node.graph is self.graph:
                e.op = operation_of(e.node)
            raise
        except (TypeError, ValueError) as e:
            for key, value in (feed_dict or {}).items():
                if _is_graph_tensor(value):
                    raise TypeError(
                        "The value of a feed cannot be a tf.Tensor object. Acceptable feed "
                        "values include Python scalars, strings, lists, numpy ndarrays, or "
                        f"TensorHandles. For reference, the tensor object was {value} which "
                        f"was passed to the argument `feed_dict` with key {key}.") from None
            raise e from None

    def _compile(self, fetches, feed_keys):
        # names become the graph's elements first, so a fetched op name is an Operation
        leaves = flatten(fetches)
        if any(isinstance(f, str | bytes) for f in leaves):
            fetches = pack_as(fetches, [self._element(f) if isinstance(f, str | bytes) else f
                                        for f in leaves])
        return super()._compile(fetches, feed_keys)

    def _element(self, name):
        try:
            return graph_of(self.graph).as_graph_element(_name(name))
        except (KeyError, ValueError) as e:
            raise ValueError(f"Argument `fetch` = {_name(name)} cannot be interpreted as a "
                             f"Tensor. ({e})") from None

    def _as_graph_node(self, x, what):
        if what == "Feed" and isinstance(x, str | bytes):
            try:
                return graph_of(self.graph).get_tensor_by_name(_name(x)).kg_node
            except (KeyError, ValueError) as e:
                message = e.args[0] if e.args else str(e)
                raise TypeError(f"Cannot interpret feed_dict key as Tensor: {message}") from None
        return super()._as_graph_node(_name(x) if isinstance(x, bytes) else x, what)

    # -- partial runs: one step fed and fetched in parts ------------------------------------------
    def partial_run_setup(self, fetches, feeds=None):
        """TF1's ``partial_run_setup``: a handle for a run whose ``fetches`` and ``feeds``
        are given over several :meth:`partial_run` calls."""
        handle = f"partial_run_{next(self._partial_ids)}"
        nodes = [self._as_graph_node(self._element(f) if isinstance(f, str | bytes) else f,
                                     "Fetch") for f in flatten(fetches)]
        fed = [self._as_graph_node(k, "Feed") for k in flatten(feeds or [])]
        partial = self.__dict__.setdefault("_partial", {})
        partial[handle] = {"fetches": nodes, "feeds": fed, "values": {}}
        return handle

    def partial_run(self, handle, fetches, feed_dict=None):
        """One part of the run ``handle`` names: feeds given before, and values fetched
        before, are fed again, so what was computed is not computed twice."""
        state = self.__dict__.get("_partial", {}).get(handle)
        if state is None:
            raise InvalidArgumentError(f"The provided partial run handle {handle!r} is not "
                                       "valid (it was not made by this session's "
                                       "partial_run_setup).")
        feeds = {}
        for key, value in (feed_dict or {}).items():
            node = self._as_graph_node(key, "Feed")
            if not any(node is n for n in state["feeds"]):
                raise InvalidArgumentError(f"The feed {node.name}:0 was not specified in "
                                           "partial_run_setup.")
            if node in state["values"]:
                raise InvalidArgumentError(f"The feed {node.name}:0 has already been fed.")
            feeds[node] = value
        for f in flatten(fetches):
            node = self._as_graph_node(
                self._element(f) if isinstance(f, str | bytes) else f, "Fetch")
            if not any(node is n for n in state["fetches"]):
                raise InvalidArgumentError(f"The fetch {node.name}:0 was not specified in "
                                           "partial_run_setup.")
        values = self.run(fetches, {**state["values"], **feeds})
        state["values"].update(feeds)
        flat = flatten(values) if isinstance(fetches, list | tuple | dict) else [values]
        for f, value in zip(flatten(fetches), flat):
            node = self._as_graph_node(
                self._element(f) if isinstance(f, str | bytes) else f, "Fetch")
            if value is not None:
                state["values"][node] = value
        return values

    @property
    def graph_def(self):
        """The session's graph as TF's GraphDef (``tf.train.write_graph(sess.graph_def, ...)``)."""
        return graph_of(self.graph).as_graph_def()


class Session(_FeedsTuples, _session.Session):
    """TF1's ``tf.Session``: ``with tf.Session() as sess: sess.run(y, {x: [1.0]})``."""

    _tf_inherits = False  # run reads TF1's tensors itself: an Operation fed is refused

    def __init__(self, target="", graph=None, config=None, **options):
        target, graph = _arguments(target, graph)
        super().__init__(graph, target=target, config=config, **options)
        self.graph = graph_of(self.graph)  # sess.graph.as_graph_def(): TF1's lookups


class InteractiveSession(_FeedsTuples, _session.InteractiveSession):
    """TF1's ``tf.InteractiveSession``: a Session that is the default at once."""

    _tf_inherits = False

    def __init__(self, target="", graph=None, config=None):
        super().__init__(_arguments(target, graph)[1])
        self.graph = graph_of(self.graph)
