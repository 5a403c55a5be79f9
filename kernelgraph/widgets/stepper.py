"""Views of a step-through run (:class:`~kernelgraph.static.stepper.Stepper`).

:func:`stepper_document` is the graph document of the run so far: one ``forward`` step per
node that has run (its value and seconds), the node the next step runs named in the
``stepper`` section. ``kg.show(stepper)`` draws it (a snapshot, also in a saved notebook);
:class:`StepWidget` is the live view: its Step / Run to end / Reset buttons (and a click on
a node: run up to it) drive the stepper in the kernel.

>>> import kernelgraph as kg
>>> g = kg.Graph()
>>> with g.as_default():
...     a = kg.placeholder(kg.float32, name="a")
...     c = kg.multiply(a, 3.0, name="c")
...     d = kg.add(c, 1.0, name="d")
>>> from kernelgraph.static.stepper import Stepper
>>> st = Stepper(kg.Session(g), d, {a: 2.0})
>>> _ = st.step()
>>> doc = stepper_document(st)
>>> [(s["phase"], s["value"]) for s in doc["steps"]]
[('forward', '6')]
>>> stepper_line(doc)
'stepper: 1/2 nodes run, next: d'
"""

from __future__ import annotations

from ..graph import shape_str
from ..static import stepper as _stepper
from . import views
from .display import bundle_of, text_summary
from .document import DocumentBuilder, node_id, static_entry
from .summary import summarize


def stepper_document(stepper, title: str | None = None) -> dict:
    """The document of ``stepper``'s run so far (see module docstring)."""
    plan = stepper.plan
    nodes = list(plan.order)
    fetch_names = [n.name for n in plan.fetch_nodes]
    if title is None:
        shown = ", ".join(fetch_names[:3]) + (", ..." if len(fetch_names) > 3 else "")
        how = "compiled" if stepper.optimize else "as written"
        title = f"step through Session.run({shown}), {how}"
    b = DocumentBuilder(title, "static")
    for n in nodes:
        b.add_node(static_entry(n))
    ids = set(b.nodes)
    for n in nodes:
        for x in n.inputs:
            if node_id(x) in ids:
                b.add_edge(node_id(x), node_id(n), shape_str(x.shape))
        for x in n.control_inputs:
            if node_id(x) in ids:
                b.add_edge(node_id(x), node_id(n), "control")
    executed = {id(n) for n in stepper.executed}
    for n in nodes:  # fed values and constants are there before the first step
        if id(n) not in executed and n.name in stepper.values:
            b.nodes[node_id(n)]["value"] = summarize(stepper.values[n.name])
    for n in stepper.executed:
        b.forward(node_id(n), stepper.values.get(n.name), stepper.seconds.get(n.name))
    current = stepper.current
    error = stepper.error
    doc = b.to_dict()
    doc["stepper"] = {
        "order": [node_id(n) for n in stepper.order],
        "position": int(stepper.position),
        "total": len(stepper.order),
        "next": node_id(current) if current is not None and error is None else None,
        "done": bool(stepper.done),
        "error": None if error is None else str(error),
        "error_node": node_id(current) if error is not None and current is not None else None,
        "optimized": bool(stepper.optimize),
        "fetches": [node_id(n) for n in plan.fetch_nodes if node_id(n) in ids],
    }
    return doc


def stepper_line(doc: dict) -> str:
    """One line saying where a stepper document's run stands."""
    s = doc.get("stepper") or {}
    names = {n["id"]: n["name"] for n in doc.get("nodes", [])}
    head = f"stepper: {s.get('position', 0)}/{s.get('total', 0)} nodes run"
    if s.get("error"):
        first = str(s["error"]).splitlines()[0] if str(s["error"]) else ""
        return f"{head}, stopped by an error: {first}"
    if s.get("done"):
        return f"{head}, done"
    nxt = names.get(s.get("next"))
    return f"{head}, next: {nxt}" if nxt else head


def stepper_bundle(stepper) -> dict:
    """The MIME bundle of a stepper's run so far (``kg.show(stepper)``)."""
    return bundle_of(stepper_document(stepper))


# kg.show / document_of find this view through the registry of view kinds (the graph's own
# SVG, the summary plus where the run stands); the stepper, floors below the widgets, draws
# itself through its display hook.
views.register(views.ViewKind(
    "stepper", _stepper.Stepper, stepper_document,
    text=lambda doc: text_summary(doc) + "\n" + stepper_line(doc)))
_stepper.DISPLAY["stepper"] = stepper_bundle
