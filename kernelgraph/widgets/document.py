"""Build the graph document of ``SCHEMA.md`` from static graphs, Session runs and eager tensors.

The document is plain JSON-able data: the ``graph`` trait of :class:`GraphWidget` and the
payload of the ``application/vnd.kernelgraph.graph+json`` MIME type. Everything in it is
measured from the real engine: forward values and seconds come from trace events of a real
``Session.run`` or eager op, gradients from ``.grad`` or from the session's gradient nodes.

Static graph, then one traced run::

    >>> import kernelgraph as kg
    >>> g = kg.Graph()
    >>> with g.as_default():
    ...     a = kg.placeholder(kg.float32, name="a")
    ...     b = kg.placeholder(kg.float32, name="b")
    ...     c = kg.multiply(a, b, name="c")
    ...     grads = kg.gradients(c, [a, b])
    >>> doc = graph_document(fetches=[c])
    >>> name = {n["id"]: n["name"] for n in doc["nodes"]}
    >>> [n["name"] for n in doc["nodes"]], [(name[e["source"]], name[e["target"]], e["label"])
    ...                                     for e in doc["edges"]]
    (['a', 'b', 'c'], [('a', 'c', '<unknown>'), ('b', 'c', '<unknown>')])
    >>> with kg.Session(graph=g) as sess:
    ...     doc = run_document(sess, [c, grads], {a: 15.0, b: 20.0})
    >>> {n["name"]: (n["value"], n["grad"]) for n in doc["nodes"] if n["kind"] != "gradient"}
    {'a': ('15', '20'), 'b': ('20', '15'), 'c': ('300', '1')}

Eager::

    >>> a = kg.tensor(15.0, requires_grad=True); b = kg.tensor(20.0, requires_grad=True)
    >>> c = a * b; c.backward()
    >>> doc = eager_document(c, names={"a": a, "b": b, "c": c})
    >>> [(n["name"], n["value"], n["grad"]) for n in doc["nodes"]]
    [('a', '15', '20'), ('b', '20', '15'), ('c', '300', '1')]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from .. import nest, trace
from ..eager import EagerNode, Tensor
from ..errors import shown
from ..graph import Graph, Node, ancestors, get_default_graph, node_of, shape_str
from ..static.session import Session
from . import views
from .gradmap import gradient_scope, replay, static_gradient_map
from .summary import format_location, norm, summarize

SCHEMA_VERSION = 1
MIME_TYPE = "application/vnd.kernelgraph.graph+json"
_KINDS = {"placeholder": "input", "variable": "variable"}


class DocumentBuilder:
    """Collects nodes, edges and steps, and writes the document dict (see ``SCHEMA.md``).

    >>> b = DocumentBuilder("demo", "eager")
    >>> b.add_node({"id": "x", "name": "x", "label": "x", "op": "leaf", "kind": "leaf"})
    'x'
    >>> b.forward("x", 2.0, seconds=1e-6)
    >>> b.to_dict()["steps"]
    [{'phase': 'forward', 'node': 'x', 'value': '2', 'seconds': 1e-06}]
    """

    def __init__(self, title: str, mode: str):
        self.title = title
        self.mode = mode
        self.nodes: dict[str, dict] = {}
        self.edges: list[dict] = []
        self._edge_keys: set = set()
        self.steps: list[dict] = []

    def add_node(self, entry: dict) -> str:
        base = {"id": "", "name": "", "label": "", "op": "", "kind": "op", "scope": "",
                "shape": "<unknown>", "dtype": "", "device": "cpu", "location": "",
                "value": None, "grad": None}
        base.update(entry)
        self.nodes[base["id"]] = base
        return base["id"]

    def add_edge(self, source: str, target: str, label: str = "") -> None:
        key = (source, target)
        if key in self._edge_keys or source not in self.nodes or target not in self.nodes:
            return
        self._edge_keys.add(key)
        self.edges.append({"source": source, "target": target, "label": label})

    def build(self, node_id: str) -> None:
        self.steps.append({"phase": "build", "node": node_id})

    def forward(self, node_id: str, value, seconds: float | None = None) -> None:
        """A forward step; also sets the node's ``value`` (the last one wins)."""
        text = value if isinstance(value, str) else summarize(value)
        step = {"phase": "forward", "node": node_id, "value": text}
        if seconds is not None:
            step["seconds"] = float(seconds)
        self.steps.append(step)
        if node_id in self.nodes and text is not None:
            self.nodes[node_id]["value"] = text

    def backward(self, node_id: str, grad) -> None:
        """A backward step; also sets the node's ``grad``."""
        text = summarize(grad)
        self.steps.append({"phase": "backward", "node": node_id, "grad": text,
                           "grad_norm": norm(grad)})
        if node_id in self.nodes:
            self.nodes[node_id]["grad"] = text

    def to_dict(self) -> dict:
        return {"version": SCHEMA_VERSION, "title": self.title, "mode": self.mode,
                "nodes": list(self.nodes.values()), "edges": list(self.edges),
                "steps": list(self.steps)}


# -- static graphs ------------------------------------------------------------------------------
def node_id(node) -> str:
    """The document id of a graph node or eager node (``'n<creation number>'``)."""
    return f"n{node.seq}"


def static_kind(node: Node) -> str:
    op = node.op.name
    if op in _KINDS:
        return _KINDS[op]
    if gradient_scope(node.name) is not None:
        return "gradient"
    return "const" if op == "const" else "op"


def static_entry(node: Node) -> dict:
    """The document entry of a static graph node (no value yet, except for constants)."""
    name = node.name
    scope, _, label = name.rpartition("/")
    entry = {"id": node_id(node), "name": name, "label": label, "op": node.op.name,
             "kind": static_kind(node), "scope": scope, "shape": shape_str(node.shape),
             "dtype": getattr(node.dtype, "name", str(node.dtype)),
             "device": str(node.device), "location": format_location(node.location)}
    if node.op.name == "const":
        entry["value"] = summarize(node.attrs.get("value"))
    # a to_device node between workers says which and the bytes it moves
    if node.op.name == "to_device" and node.device.worker != node.inputs[0].device.worker:
        # late: the distributed package loads its training helpers (nn) when imported
        from ..distributed.transfer import transfer_label

        label = transfer_label(node)
        if label:
            entry["transfer"] = label
    return entry


def full_entry(node: Node) -> dict:
    """:func:`static_entry` with every key of a document node (``value``/``grad`` None)."""
    entry = {"value": None, "grad": None}
    entry.update(static_entry(node))
    return entry


def flatten_fetches(fetches, graph: Graph | None = None) -> list[Node]:
    """The graph nodes in a fetches structure (node, name, or nested list/tuple/dict)."""
    out: list[Node] = []
    for f in nest.flatten(fetches):
        if isinstance(f, str):
            if graph is None:
                raise TypeError(f"the fetch name {shown(f)} needs a graph to be looked up in")
            out.append(graph.get_node(f))
        elif node_of(f) is not None and not isinstance(f, EagerNode):
            out.append(node_of(f))  # a node, or a face's wrapper of one (TF1's tf.Tensor)
        elif f is not None:
            raise TypeError(f"expected graph nodes to fetch, got {type(f).__name__}")
    return out


def _static_builder(nodes: list[Node], title: str, build_steps: bool) -> DocumentBuilder:
    b = DocumentBuilder(title, "static")
    for n in nodes:
        b.add_node(static_entry(n))
    for n in nodes:
        target = node_id(n)
        for x in n.inputs:
            if isinstance(x, Node):
                b.add_edge(node_id(x), target, shape_str(x.shape))
        for x in n.control_inputs:
            b.add_edge(node_id(x), target, "control")
    if build_steps:
        for n in nodes:
            b.build(node_id(n))
    return b


def _names(nodes: list, limit: int = 3) -> str:
    text = ", ".join(n.name for n in nodes[:limit])
    return text + (", ..." if len(nodes) > limit else "")


def graph_document(graph: Graph | None = None, fetches=None, title: str | None = None,
                   build_steps: bool = True) -> dict:
    """The document of a static graph: all of ``graph``, or the subgraph ``fetches`` need.

    ``build_steps`` adds one ``build`` step per node in creation order (the order the user's
    code built the graph), so the renderer can replay the construction.
    """
    if fetches is not None:
        fetch_nodes = flatten_fetches(fetches, graph)
        if not fetch_nodes:
            raise ValueError("no graph nodes in fetches")
        nodes = ancestors(fetch_nodes)
        title = title or f"static graph of {_names(fetch_nodes)}"
    else:
        if graph is None:
            graph = get_default_graph()
        nodes = list(graph.nodes)
        title = title or f"static graph ({len(nodes)} nodes)"
    return _static_builder(nodes, title, build_steps).to_dict()


def run_document(session, fetches, feed_dict: Mapping | None = None, title: str | None = None,
                 build_steps: bool = True) -> dict:
    """Run ``session.run(fetches, feed_dict)`` once with a trace listener and return the
    document of what happened: forward values and seconds per node, and gradients reaching
    the forward nodes where the run computed gradient nodes (``kg.gradients``).

    The run is real: it changes variables if ``fetches`` include assign or train ops. Use
    :func:`traced_run` to get the values the run returned as well.
    """
    return traced_run(session, fetches, feed_dict, title, build_steps)[0]


def traced_run(session, fetches, feed_dict: Mapping | None = None, title: str | None = None,
               build_steps: bool = True) -> tuple[dict, object]:
    """Like :func:`run_document`, returning ``(document, the values session.run returned)``."""
    graph = session.graph
    fetch_nodes = flatten_fetches(fetches, graph)
    feed_dict = dict(feed_dict or {})
    feed_nodes = []
    for k in feed_dict:
        feed_nodes.append(graph.get_node(k) if isinstance(k, str) else k)
    events: list[tuple] = []

    def listener(kind, node=None, mode=None, **info):
        if kind == "node_executed" and mode == "static":
            events.append((node, info.get("seconds"), info.get("value")))

    with trace.listening(listener):
        result = session.run(fetches, feed_dict or None)
    nodes = ancestors(fetch_nodes, stop=feed_nodes)
    title = title or f"Session.run({_names(fetch_nodes)})"
    b = _static_builder(nodes, title, build_steps)
    values: dict[int, object] = {}
    for n in nodes:
        if n.op.name == "const":
            values[id(n)] = n.attrs["value"]
    for node, value in zip(feed_nodes, feed_dict.values()):
        arr = np.asarray(value, dtype=node.dtype)
        values[id(node)] = arr
        b.forward(node_id(node), arr)
    for node, seconds, value in events:
        if node_id(node) in b.nodes:
            values[id(node)] = value
            b.forward(node_id(node), value, seconds)
    for f, _g, value in static_gradient_map(nodes, values):
        b.backward(node_id(f), value)
    # The run knows the shapes the declaration left open: label edges with what flowed.
    flowed = {node_id(n): values[id(n)] for n in nodes if id(n) in values}
    for edge in b.edges:
        if edge["source"] in flowed and edge["label"] != "control":
            edge["label"] = shape_str(tuple(np.shape(flowed[edge["source"]])))
    return b.to_dict(), result


# -- eager tensors ------------------------------------------------------------------------------
def _roots(tensors) -> list:
    out = []
    for t in tensors:
        if isinstance(t, list | tuple):
            out.extend(_roots(t))
        elif isinstance(t, Tensor | EagerNode):
            out.append(t)
        else:
            raise TypeError(f"expected kg.Tensor objects, got {type(t).__name__}")
    return out


def _shape_of(t) -> str:
    return shape_str(tuple(np.shape(t._array if isinstance(t, Tensor) else t.value)))


def eager_document(*tensors, names: Mapping | None = None, title: str | None = None,
                   events: Iterable | None = None) -> dict:
    """The document of the computation recorded behind eager ``tensors`` (what
    :func:`kernelgraph.graph_of` walks), with leaves (their ``.grad`` as grad), and steps:

    - ``build`` + ``forward`` per node in creation order (a leaf just before its first use),
      with seconds when ``events`` (trace events ``(kind, info)``, e.g. from
      :class:`Recorder` or a live widget) hold them;
    - ``backward``: the ``gradient`` events in ``events`` if any; else, when ``backward()``
      has filled some leaf's ``.grad``, the gradients that reached each node (replayed with
      the engine's rules from the single scalar root; leaves show their ``.grad``).

    ``names`` maps display names to tensors (``{"a": a}``) -- eager tensors have none.
    """
    roots = _roots(tensors)
    if not roots:
        raise ValueError("eager_document needs at least one tensor")
    label_of: dict[int, str] = {}
    for name, t in (names or {}).items():
        if isinstance(t, Tensor):
            label_of[id(t)] = name
            if t._node is not None:
                label_of.setdefault(id(t._node), name)
    nodes: dict[int, EagerNode] = {}
    leaves: dict[int, Tensor] = {}
    stack = [r._node if isinstance(r, Tensor) else r for r in roots]
    root_leaves = [r for r in roots if isinstance(r, Tensor) and r._node is None]
    while stack:
        n = stack.pop()
        if n is None or id(n) in nodes:
            continue
        nodes[id(n)] = n
        for x in n.inputs:
            if type(x) is Tensor:
                if x._node is not None:
                    stack.append(x._node)
                else:
                    leaves.setdefault(id(x), x)
    for r in root_leaves:
        leaves.setdefault(id(r), r)
    ordered = sorted(nodes.values(), key=lambda n: n.seq)
    leaf_ids = {id(t): f"leaf{i}" for i, t in enumerate(leaves.values())}

    def ref(x) -> str:
        return leaf_ids[id(x)] if x._node is None else node_id(x._node)

    seconds: dict[int, float] = {}
    grad_events = []
    for kind, info in events or ():
        if kind == "node_executed" and "seconds" in info:
            seconds[id(info["node"])] = info["seconds"]
        elif kind == "gradient":
            grad_events.append(info)

    if title is None:
        shown = [label_of.get(id(r), r.name if isinstance(r, EagerNode) else
                              (r._node.name if r._node is not None else "leaf"))
                 for r in roots]
        title = f"eager graph of {', '.join(shown[:3])}" + (", ..." if len(shown) > 3 else "")
    b = DocumentBuilder(title, "eager")
    emitted: set = set()

    def add_leaf(t: Tensor):
        lid = leaf_ids[id(t)]
        if lid in emitted:
            return
        emitted.add(lid)
        name = label_of.get(id(t), lid)
        b.add_node({"id": lid, "name": name, "label": name, "op": "leaf", "kind": "leaf",
                    "shape": _shape_of(t), "dtype": t.dtype.name})
        b.build(lid)
        b.forward(lid, t._array)
        if t.grad is not None:
            b.nodes[lid]["grad"] = summarize(t.grad)

    for n in ordered:
        for x in n.inputs:
            if type(x) is Tensor and x._node is None:
                add_leaf(x)
        nid = node_id(n)
        user = label_of.get(id(n))
        b.add_node({"id": nid, "name": user or n.name,
                    "label": f"{user}: {n.op.name}" if user else n.op.name, "op": n.op.name,
                    "kind": "op", "shape": _shape_of(n), "dtype": n.dtype.name,
                    "device": str(n.device), "location": format_location(n.location)})
        for x in n.inputs:
            if type(x) is Tensor:
                b.add_edge(ref(x), nid, _shape_of(x))
        b.build(nid)
        b.forward(nid, n.value, seconds.get(id(n)))
        owner = n.retained() if n.retained is not None else None
        if owner is not None and owner.grad is not None:
            b.nodes[nid]["grad"] = summarize(owner.grad)
    for t in root_leaves:
        add_leaf(t)

    if grad_events:
        for info in grad_events:
            target = info.get("node")
            grad = info.get("grad")
            if isinstance(grad, Node):
                continue  # a symbolic gradient (static mode) has no value to show
            if isinstance(target, Tensor) and id(target) in leaf_ids:
                b.backward(leaf_ids[id(target)], grad)
            elif isinstance(target, EagerNode) and id(target) in nodes:
                b.backward(node_id(target), grad)
    else:
        _eager_backward(b, roots, ordered, leaves, leaf_ids)
    return b.to_dict()


def _eager_backward(b: DocumentBuilder, roots, ordered, leaves, leaf_ids) -> None:
    with_grad = [t for t in leaves.values() if t.grad is not None]
    if not with_grad:
        return
    root = roots[0]
    root_node = root._node if isinstance(root, Tensor) else root
    replayed = {}
    if len(roots) == 1 and root_node is not None and root_node.value.size == 1:
        values = {id(n): n.value for n in ordered}

        def inputs_of(node):
            out = []
            for x in node.inputs:
                if type(x) is Tensor:
                    key = x._node if x._node is not None else x
                    need = x.requires_grad and x.dtype.kind == "f"
                    out.append((key if need else None, x._array))
                else:
                    out.append((None, x))
            return out

        order = [n for n in reversed(ordered) if n.op.grad is not None]
        replayed = replay([(root_node, np.ones_like(root_node.value))], values, inputs_of,
                          order)
    for n in reversed(ordered):
        if id(n) in replayed:
            b.backward(node_id(n), replayed[id(n)][1])
    for t in reversed(list(leaves.values())):
        if t.grad is not None:
            b.backward(leaf_ids[id(t)], t.grad)


# -- dispatch -----------------------------------------------------------------------------------
def is_document(obj) -> bool:
    return isinstance(obj, dict) and obj.get("version") == SCHEMA_VERSION and "nodes" in obj


def document_of(obj, title: str | None = None, names: Mapping | None = None,
                **kwargs) -> dict:
    """The document for whatever a learner holds:

    - a ``kg.Graph`` (the whole graph);
    - a static node, or a list/tuple/dict of them (the subgraph those fetches need);
    - ``(session, fetches)`` or ``(session, fetches, feed_dict)``: one traced run;
    - a ``kg.Tensor`` / eager node or a list of them (the recorded eager graph);
    - an Explanation (``sess.explain(...)``): the compiler view, one stage per pass;
    - a Stepper (``sess.step(...)``): the run so far, the next node marked;
    - a document (returned as it is).

    >>> import kernelgraph as kg
    >>> x = kg.tensor([1.0, 2.0], requires_grad=True)
    >>> document_of(x * 2.0)["mode"]
    'eager'
    """
    if is_document(obj):
        return obj
    view = views.for_object(obj)  # an Explanation, a Stepper: drawn by their view modules
    if view is not None:
        return view.document(obj, title=title)
    if isinstance(obj, Graph):
        return graph_document(obj, title=title, **kwargs)
    if isinstance(obj, Tensor | EagerNode):
        return eager_document(obj, names=names, title=title, **kwargs)
    if isinstance(obj, tuple) and obj and isinstance(obj[0], Session):
        if len(obj) not in (2, 3):
            raise TypeError("expected (session, fetches) or (session, fetches, feed_dict)")
        return run_document(*obj, title=title, **kwargs)
    if node_of(obj) is not None:  # a node, or a face's wrapper of one (TF1's tf.Tensor)
        return graph_document(fetches=[node_of(obj)], title=title, **kwargs)
    if isinstance(obj, list | tuple | dict):
        flat = list(obj.values()) if isinstance(obj, dict) else _flat(obj)
        if flat and all(isinstance(x, Tensor | EagerNode) for x in flat):
            return eager_document(*flat, names=names, title=title, **kwargs)
        if flat and all(node_of(x) is not None for x in flat):
            return graph_document(fetches=[node_of(x) for x in flat], title=title, **kwargs)
    raise TypeError(f"cannot draw a {type(obj).__name__}: expected a kg.Graph, graph nodes, "
                    "(session, fetches, feed_dict), kg.Tensor objects, sess.explain(...) "
                    "or sess.step(...)")


def _flat(items) -> list:
    out = []
    for x in items:
        if isinstance(x, list | tuple):
            out.extend(_flat(x))
        elif x is not None:
            out.append(x)
    return out
