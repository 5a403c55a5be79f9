"""TF1's ``tf.Session`` and ``tf.InteractiveSession``: kernelgraph's Session, made with
TF1's arguments (``Session(target='', graph=None, config=None)``). Fetches and feed keys
may be TF1's tensors and operations: the Session reads the node a wrapper stands for."""

from __future__ import annotations

from ...graph import Graph as _KgGraph
from ...nest import flatten
from ...static import session as _session
from .face import graph_of

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


class _FeedsTuples:
    # Like the Sessions below, run reads TF1's tensors itself (the core refuses a fed
    # Operation): marked as already faced, so no boundary converts its arguments first.
    _tf_face = True

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if feed_dict and any(isinstance(k, tuple) for k in feed_dict):
            feed_dict = flatten_dict_items(feed_dict)
        return super().run(fetches, feed_dict, options, run_metadata)

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
