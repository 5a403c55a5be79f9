"""``GraphWidget``: the graph drawing as an ipywidget, optionally growing live as ops run.

The browser side (``extension/``) registers model ``GraphModel`` and view ``GraphView`` in
the module ``kernelgraph-extension``; they draw the ``graph`` trait (the document of
``SCHEMA.md``) and scrub the animation through ``step``.

>>> import kernelgraph as kg
>>> a = kg.tensor(15.0, requires_grad=True); b = kg.tensor(20.0, requires_grad=True)
>>> c = a * b; c.backward()
>>> w = GraphWidget(c, names={"a": a, "b": b})
>>> [(n["name"], n["grad"]) for n in w.graph["nodes"]]  # doctest: +ELLIPSIS
[('a', '20'), ('b', '15'), ('mul_...', '1')]

Live: the widget grows as eager ops run (in later cells too) until ``stop()``::

    >>> w = GraphWidget.live()
    >>> y = (kg.tensor([1.0, 2.0]) * 3.0).sum()
    >>> w.stop()
    >>> [n["op"] for n in w.graph["nodes"]]
    ['leaf', 'mul', 'sum']
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping

import ipywidgets
import traitlets

from .. import trace
from ..eager import EagerNode, Tensor
from ..graph import Node, shape_str
from .display import bundle_of, caller_names, text_summary
from .document import (
    SCHEMA_VERSION,
    DocumentBuilder,
    document_of,
    node_id,
    static_entry,
)
from .summary import format_location, norm, summarize

MODULE_NAME = "kernelgraph-extension"
MODULE_VERSION = "0.1.0"


class RedisplayMixin:
    """Displays itself with a display id, so :meth:`refresh_displays` can later replace the
    saved fallbacks (document, SVG, text) of every output showing it -- e.g. when a live
    graph stops growing, or a timing sweep ends, the notebook keeps the final state."""

    def _ipython_display_(self) -> None:
        from IPython.display import display

        handle = display(self._repr_mimebundle_(), raw=True, display_id=True)
        if handle is not None:
            self.__dict__.setdefault("_kg_handles", []).append(handle)

    def refresh_displays(self) -> None:
        for handle in self.__dict__.get("_kg_handles", ()):
            handle.update(self._repr_mimebundle_(), raw=True)


def _empty(title: str, mode: str = "eager") -> dict:
    return {"version": SCHEMA_VERSION, "title": title, "mode": mode, "nodes": [], "edges": [],
            "steps": []}


class GraphWidget(RedisplayMixin, ipywidgets.DOMWidget):
    """An interactive drawing of a graph; takes what :func:`kg.show <.display.show>` takes.

    Traits (synced with the browser):

    - ``graph``: the graph document (``SCHEMA.md``);
    - ``step``: how many of ``graph["steps"]`` the drawing has applied (0 to their number);
      a negative value (the default, -1) means all of them: everything drawn with its final
      values. The view writes it back while the learner plays or scrubs.

    ``live=True`` (or :meth:`live`) starts from an empty graph and adds every node the
    engine creates or runs (eager ops, static nodes, traced Session runs, gradients),
    sending at most one update per ``interval`` seconds and drawing at most ``max_nodes``
    nodes, so long computations keep the kernel responsive. :meth:`stop` detaches it.
    """

    _model_name = traitlets.Unicode("GraphModel").tag(sync=True)
    _view_name = traitlets.Unicode("GraphView").tag(sync=True)
    _model_module = traitlets.Unicode(MODULE_NAME).tag(sync=True)
    _view_module = traitlets.Unicode(MODULE_NAME).tag(sync=True)
    _model_module_version = traitlets.Unicode(MODULE_VERSION).tag(sync=True)
    _view_module_version = traitlets.Unicode(MODULE_VERSION).tag(sync=True)

    graph = traitlets.Dict().tag(sync=True)
    step = traitlets.Int(-1).tag(sync=True)

    def __init__(self, x=None, *, title: str | None = None, names: Mapping | None = None,
                 live: bool = False, max_nodes: int = 500, interval: float = 0.1,
                 _depth: int = 2, **kwargs):
        super().__init__(**kwargs)
        self.max_nodes = int(max_nodes)
        self.interval = float(interval)
        self._live: _LiveState | None = None
        if live and x is not None:
            raise ValueError("a live GraphWidget starts empty and grows as ops run; "
                             "pass either x or live=True")
        if x is not None:
            if names is None:
                names = caller_names(_depth)
            self.graph = document_of(x, title=title, names=names)
        else:
            self.graph = _empty(title or ("live graph" if live else "empty graph"))
        if live:
            self.start(title=title)

    # -- display ---------------------------------------------------------------------------------
    def _repr_mimebundle_(self, **kwargs) -> dict:
        """The widget view, plus the document, SVG and text for front-ends without the
        widget state (a saved notebook, GitHub, nbviewer, VS Code)."""
        data = bundle_of(self.graph)
        data.update(super()._repr_mimebundle_(**kwargs) or {})
        data["text/plain"] = text_summary(self.graph)
        return data

    def __repr__(self):
        return f"GraphWidget({text_summary(self.graph).splitlines()[0]})"

    # -- live mode -------------------------------------------------------------------------------
    @classmethod
    def live(cls, title: str | None = None, max_nodes: int = 500,
             interval: float = 0.1, **kwargs) -> GraphWidget:
        """A widget that grows as the engine runs, until :meth:`stop`."""
        return cls(title=title, live=True, max_nodes=max_nodes, interval=interval, **kwargs)

    @property
    def is_live(self) -> bool:
        return self._live is not None

    def start(self, title: str | None = None) -> None:
        """Attach the trace listener (a no-op when already live)."""
        if self._live is not None:
            return
        self._live = _LiveState(self, title or self.graph.get("title") or "live graph")
        trace.add_listener(self._live)
        shell = _shell()
        if shell is not None:
            shell.events.register("post_run_cell", self._live.at_cell_end)
            self._live.shell = shell

    def stop(self) -> None:
        """Detach from the engine, after sending what has not been sent yet (and updating
        the outputs showing this widget, so a saved notebook keeps the final graph)."""
        state = self._live
        if state is None:
            return
        self._live = None
        if state in trace._listeners:
            trace.remove_listener(state)
        if state.shell is not None:
            try:
                state.shell.events.unregister("post_run_cell", state.at_cell_end)
            except ValueError:
                pass
        state.name_leaves(caller_names(2))
        state.flush(force=True)
        self.refresh_displays()

    def flush(self) -> None:
        """Send the live graph now (updates are otherwise throttled)."""
        if self._live is not None:
            self._live.flush(force=True)


def _shell():
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


class _LiveState:
    """The trace listener of a live widget: O(1) work per event; the document is written
    and sent at most once per ``interval`` (and at the end of each cell)."""

    def __init__(self, widget: GraphWidget, title: str):
        self.widget = widget
        self.title = title
        self.builder = DocumentBuilder(title, "eager")
        self.ids: dict[int, str] = {}
        self.keep: list = []  # holds the objects whose id() we use, so ids are not reused
        self.pending: list[tuple] = []  # (step or None, node id, field, value): summarized late
        self.dropped = 0
        self.modes: set = set()
        self.max_steps = 4 * widget.max_nodes
        self.last_sent = 0.0
        self.dirty = False
        self.shell = None

    # events
    def __call__(self, kind: str, node=None, **info) -> None:
        if kind == "node_added":
            self._add(node, info.get("mode"))
        elif kind == "node_executed":
            nid = self.ids.get(id(node))
            if nid is None:
                return
            value = info["value"] if "value" in info else getattr(node, "value", None)
            step = {"phase": "forward", "node": nid, "value": None}
            if info.get("seconds") is not None:
                step["seconds"] = float(info["seconds"])
            self._step(step, nid, "value", value)
        elif kind == "gradient":
            grad = info.get("grad")
            nid = self.ids.get(id(node))
            if nid is None or isinstance(grad, Node):
                return  # symbolic static gradients have no value yet
            step = {"phase": "backward", "node": nid, "grad": None, "grad_norm": None}
            self._step(step, nid, "grad", grad)
        else:
            return
        self.dirty = True
        if time.perf_counter() - self.last_sent >= self.widget.interval:
            self.flush()

    def _step(self, step, nid, field, value):
        if len(self.builder.steps) < self.max_steps:
            self.builder.steps.append(step)
        else:
            step = None
        self.pending.append((step, nid, field, value))

    def _room(self) -> bool:
        if len(self.builder.nodes) < self.widget.max_nodes:
            return True
        self.dropped += 1
        return False

    def _add(self, node, mode) -> None:
        if node is None or id(node) in self.ids or not self._room():
            return
        self.modes.add(mode)
        b = self.builder
        if isinstance(node, EagerNode):
            for x in node.inputs:
                if type(x) is Tensor:
                    self._add_input(x)
            nid = node_id(node)
            b.add_node({"id": nid, "name": node.name, "label": node.op.name,
                        "op": node.op.name, "kind": "op",
                        "shape": shape_str(tuple(node.value.shape)),
                        "dtype": node.value.dtype.name, "device": str(node.device),
                        "location": format_location(node.location)})
            self._remember(node, nid)
            for x in node.inputs:
                if type(x) is Tensor and id(x._node if x._node is not None else x) in self.ids:
                    src = self.ids[id(x._node if x._node is not None else x)]
                    b.add_edge(src, nid, shape_str(tuple(x._array.shape)))
        else:
            nid = b.add_node(static_entry(node))
            self._remember(node, nid)
            for x in node.inputs:
                if id(x) in self.ids:
                    b.add_edge(self.ids[id(x)], nid, shape_str(x.shape))
            for x in node.control_inputs:
                if id(x) in self.ids:
                    b.add_edge(self.ids[id(x)], nid, "control")
        self._build_step(nid)

    def _add_input(self, t: Tensor) -> None:
        """An input tensor not seen yet: a leaf, or a node made before the widget started."""
        key = t._node if t._node is not None else t
        if id(key) in self.ids or not self._room():
            return
        lid = f"leaf{len(self.keep)}" if t._node is None else node_id(t._node)
        name = lid if t._node is None else t._node.name
        self.builder.add_node({"id": lid, "name": name, "label": "leaf" if t._node is None
                               else t._node.op.name, "op": "leaf" if t._node is None
                               else t._node.op.name, "kind": "leaf" if t._node is None else "op",
                               "shape": shape_str(tuple(t._array.shape)),
                               "dtype": t._array.dtype.name})
        self._remember(key, lid)
        self._build_step(lid)
        self._step({"phase": "forward", "node": lid, "value": None}, lid, "value", t._array)

    def _remember(self, obj, nid) -> None:
        self.ids[id(obj)] = nid
        self.keep.append(obj)

    def _build_step(self, nid) -> None:
        if len(self.builder.steps) < self.max_steps:
            self.builder.build(nid)

    def name_leaves(self, names: Mapping) -> None:
        """Label leaf tensors with the user's variable names (``x`` rather than ``leaf0``)."""
        for name, t in names.items():
            lid = self.ids.get(id(t)) if isinstance(t, Tensor) and t._node is None else None
            entry = self.builder.nodes.get(lid) if lid is not None else None
            if entry is not None and entry["kind"] == "leaf" and entry["name"] != name:
                entry["name"] = entry["label"] = name
                self.dirty = True

    # sending
    def at_cell_end(self, *args) -> None:
        namespace = getattr(self.shell, "user_ns", None)
        if namespace:
            self.name_leaves({k: v for k, v in namespace.items()
                              if not k.startswith("_") and isinstance(v, Tensor)})
        self.flush(force=True)

    def flush(self, force: bool = False) -> None:
        if not self.dirty and not force:
            return
        b = self.builder
        for step, nid, field, value in self.pending:
            text = summarize(value)
            if step is not None:
                step[field] = text
                if field == "grad":
                    step["grad_norm"] = norm(value)
            if text is not None and nid in b.nodes:
                b.nodes[nid][field] = text
        self.pending.clear()
        title = self.title
        if self.dropped:
            title += f" (first {len(b.nodes)} nodes drawn; {self.dropped} more not drawn)"
        b.title = title
        b.mode = "static" if self.modes == {"static"} else "eager"
        self.widget.graph = b.to_dict()
        self.last_sent = time.perf_counter()
        self.dirty = False
