"""TF1's ``tf.Session`` and ``tf.InteractiveSession``: kernelgraph's Session, made with
TF1's arguments (``Session(target='', graph=None, config=None)``). Fetches and feed keys
may be TF1's tensors and operations: the Session reads the node a wrapper stands for."""

from __future__ import annotations

from ...graph import Graph as _KgGraph
from ...static import session as _session


def _arguments(target, graph):
    # Session(g): kernelgraph's order puts the graph first; TF1's puts the target first.
    if isinstance(target, _KgGraph):
        return "", target
    return target, graph


class Session(_session.Session):
    """TF1's ``tf.Session``: ``with tf.Session() as sess: sess.run(y, {x: [1.0]})``."""

    _tf_inherits = False  # run reads TF1's tensors itself: an Operation fed is refused

    def __init__(self, target="", graph=None, config=None, **options):
        target, graph = _arguments(target, graph)
        super().__init__(graph, target=target, config=config, **options)


class InteractiveSession(_session.InteractiveSession):
    """TF1's ``tf.InteractiveSession``: a Session that is the default at once."""

    _tf_inherits = False

    def __init__(self, target="", graph=None, config=None):
        super().__init__(_arguments(target, graph)[1])
