"""The compiler view: the graph before and after each pass of ``Session.explain``.

:func:`compiler_document` turns a :class:`~kernelgraph.static.passes.Explanation` into a graph
document (``SCHEMA.md``) with a ``compiler`` section: one *stage* per pass (plus the graph
"as written"), each holding the program after that pass, what the pass changed (folded
constants, merged and simplified nodes, removed nodes drawn as ghosts), the fused groups
with their generated kernels, the memory plan and the compile and run times. The JupyterLab
extension draws it with a pass selector; the SVG fallback shows the graph as written next to
the compiled one; the text fallback is the pass table.

>>> import kernelgraph as kg
>>> g = kg.Graph()
>>> with g.as_default():
...     x = kg.placeholder(kg.float32, shape=[None, 3], name="x")
...     y = kg.relu(x * (kg.constant(2.0) * 3.0)) * 1.0
>>> with kg.Session(g) as sess:
...     doc = compiler_document(sess.explain(y, {x: None}))
>>> stages = {s["name"]: s for s in doc["compiler"]["stages"]}
>>> list(stages)[:3], stages["as written"]["after"], stages["dce"]["after"]
(['as written', 'prune', 'specialize'], 8, 3)
>>> list(stages["fold_constants"]["marks"].values())
['folded']
>>> [k["members"] for k in doc["compiler"]["kernels"]]
[['mul_1', 'relu']]
"""

from __future__ import annotations

from ..graph import shape_str
from ..static import explanation as _explanation
from ..static import passes as _passes
from . import views
from .display import bundle_of
from .document import SCHEMA_VERSION, full_entry, node_id
from .summary import format_number
from .svg import esc, render_svg

AS_WRITTEN = "as written"
GHOST_LIMIT = 60  # removed nodes drawn per stage; more are counted, not drawn
WHOLE_GRAPH_LIMIT = 300  # "as written" is the whole graph up to this size, else the fetched part


def _fetch_names(e) -> list[str]:
    fetches = e.passes[0].fetches if e.passes and getattr(e.passes[0], "fetches", None) else []
    return [f.name for f in fetches]


def _program_nodes(result) -> list | None:
    nodes = getattr(result, "nodes", None)
    return list(nodes) if nodes else None


def _split_change(text: str, before: dict, after: dict) -> tuple[str, str] | None:
    """``"a -> b"`` as (a, b), where a was in the previous stage and b is in this one
    (names may themselves contain ' -> ', so every split is tried)."""
    start = 0
    while True:
        i = text.find(" -> ", start)
        if i < 0:
            return None
        a, b = text[:i], text[i + 4:]
        if a in before and b in after:
            return a, b
        start = i + 1


class _Stages:
    """Builds the stages one after another, each compared with the one before."""

    def __init__(self, e):
        self.e = e
        self.stages: list[dict] = []
        self.prev: list | None = None
        self.fuse_input: dict = {}  # name -> node, the program the fuse pass was given
        self.kernels: dict[str, dict] = {}

    def add(self, name: str, nodes: list, result=None, fetches=()) -> dict:
        prev = self.prev if self.prev is not None else nodes
        before = {n.name: n for n in prev}
        after = {n.name: n for n in nodes}
        marks, notes = {}, {}
        changes = list(getattr(result, "changes", []) or [])
        if name == "fold_constants":
            for n in nodes:
                old = before.get(n.name)
                if n.op.name == "const" and old is not None and old.op.name != "const":
                    marks[node_id(n)] = "folded"
                    notes[node_id(n)] = f"folded: {old.op.name} computed at compile time"
        elif name in ("simplify", "cse"):
            for text in changes:
                pair = _split_change(text, before, after)
                if pair is None:
                    continue
                gone, kept = pair
                marks[node_id(after[kept])] = "merged" if name == "cse" else "simplified"
                notes.setdefault(node_id(after[kept]), f"stands for {gone}" if name == "simplify"
                                 else f"computes {gone} too")
                if gone in before:
                    notes[node_id(before[gone])] = (f"replaced by {kept}" if name == "simplify"
                                                    else f"merged into {kept}")
        if name == "fuse":
            self.fuse_input = before
        inside = {m for n in nodes for m in (getattr(n.op.forward, "members", None) or ())}
        removed = [n for n in prev if n.name not in after and n.name not in inside]
        ghosts = removed[:GHOST_LIMIT]
        for n in ghosts:
            marks[node_id(n)] = "removed"
            notes.setdefault(node_id(n), f"removed by {name}")
        stage = self._draw(name, nodes, ghosts, marks, notes, fetches)
        stage["changes"] = changes
        stage["ghosts_omitted"] = len(removed) - len(ghosts)
        if result is not None:
            stage.update(before=int(result.before), after=int(result.after),
                         seconds=float(result.seconds))
        else:
            stage.update(before=len(nodes), after=len(nodes), seconds=0.0)
        self.stages.append(stage)
        self.prev = nodes
        return stage

    def _draw(self, name, nodes, ghosts, marks, notes, fetches) -> dict:
        """Node entries and edges of one stage, with every fused node drawn as its member
        ops inside a group (members looked up in the program the fuse pass was given)."""
        entries, edges, groups, seen = [], [], [], set()
        drawn: list = []  # (node whose inputs become edges)
        for n in nodes:
            members = self._members(n)
            if members is None:
                entries.append(full_entry(n))
                drawn.append(n)
                continue
            gid = node_id(n)
            kernel = self._kernel(n, members)
            groups.append({"id": gid, "name": n.name, "kernel": kernel["kernel"],
                           "members": [node_id(m) for m in members]})
            for m in members:
                entries.append(full_entry(m))
                drawn.append(m)
                marks.setdefault(node_id(m), "fused")
                notes.setdefault(node_id(m), f"inside the fused kernel {kernel['kernel']}")
        for n in ghosts:
            entries.append(full_entry(n))
            drawn.append(n)
        unique = []
        for entry in entries:  # a node id is drawn once (a guard: passes keep names unique)
            if entry["id"] not in seen:
                seen.add(entry["id"])
                unique.append(entry)
        keys = set()
        for n in drawn:
            target = node_id(n)
            for x in n.inputs:
                key = (node_id(x), target)
                if key[0] in seen and key not in keys:
                    keys.add(key)
                    edges.append({"source": key[0], "target": target,
                                  "label": shape_str(x.shape)})
            for x in n.control_inputs:
                key = (node_id(x), target)
                if key[0] in seen and key not in keys:
                    keys.add(key)
                    edges.append({"source": key[0], "target": target, "label": "control"})
        return {"name": name, "skipped": False, "nodes": unique, "edges": edges,
                "marks": {k: v for k, v in marks.items() if k in seen},
                "notes": {k: v for k, v in notes.items() if k in seen},
                "groups": groups, "fetches": [node_id(f) for f in fetches]}

    def _members(self, n) -> list | None:
        names = getattr(n.op.forward, "members", None)
        if not names:
            return None
        found = [self.fuse_input.get(name) for name in names]
        return None if any(m is None for m in found) else found

    def _kernel(self, n, members) -> dict:
        kernel = self.kernels.get(n.name)
        if kernel is None:
            kernel = self.kernels[n.name] = {
                "id": node_id(n), "name": n.name, "kernel": n.op.name,
                "members": [m.name for m in members],
                "source": str(getattr(n.op.forward, "source", ""))}
        return kernel


def _memory(e, name_to_id: dict) -> dict | None:
    """The plan's memory plan (``Explanation.memory``), when the session made one.

    ``peak_bytes``/``naive_bytes`` are None when some shape is unknown at compile time;
    ``slots`` maps node ids to the local (buffer) each value lives in, ``in_place`` lists
    the nodes that wrote their result into an input's (or their variable's) array."""
    plan = getattr(e, "memory", None)
    if plan is None:
        return None

    def count(x):
        return None if x is None else int(x)

    by_object = {id(n): n.name for n in e.after}
    buffers = dict(getattr(plan, "buffers", None) or {})
    in_place = getattr(plan, "in_place", None) or ()
    # The planner keys in-place nodes by the node object's id(); names are accepted too.
    names = [by_object.get(k, k) if not isinstance(k, str) else k for k in in_place]
    # A set of ids: listed in plan order, so the document is the same on every run.
    updated = getattr(plan, "variable_in_place", None) or ()
    names += [n.name for n in e.after if id(n) in updated]
    try:
        peak, naive = count(getattr(plan, "peak_bytes", None)), count(
            getattr(plan, "naive_bytes", None))
    except (TypeError, ValueError):
        peak = naive = None
    summary = plan.summary() if callable(getattr(plan, "summary", None)) else ""
    return {"peak_bytes": peak, "naive_bytes": naive,
            "buffers": len(set(buffers.values())),
            "slots": {name_to_id[k]: int(v) for k, v in buffers.items() if k in name_to_id},
            "in_place": [name_to_id[k] for k in names if isinstance(k, str) and k in name_to_id],
            "summary": str(summary)}


def compiler_document(e, title: str | None = None) -> dict:
    """The graph document of an Explanation (``sess.explain(...)``), see module docstring.

    The top-level ``nodes``/``edges`` are the compiled graph (what any reader of the plain
    document format draws); ``compiler.stages`` holds every stage.
    """
    if not isinstance(e, _passes.Explanation):
        raise TypeError(f"expected the Explanation that Session.explain returns, got "
                        f"{type(e).__name__}")
    stages = _Stages(e)
    written = list(e.before)
    graph = written[0].graph if written else None
    if graph is not None and len(graph.nodes) <= WHOLE_GRAPH_LIMIT:
        written = list(graph.nodes)  # so that prune has something to show
    names = _fetch_names(e)
    fetch_nodes = e.passes[0].fetches if e.passes else []
    stages.add(AS_WRITTEN, written, fetches=fetch_nodes)
    ran = {r.name: r for r in e.passes}
    for name in _passes.ORDER:
        r = ran.get(name)
        nodes = _program_nodes(r) if r is not None else None
        if r is None or nodes is None:
            stages.stages.append({"name": name, "skipped": r is None, "changes":
                                  list(getattr(r, "changes", []) or []),
                                  "before": getattr(r, "before", None),
                                  "after": getattr(r, "after", None),
                                  "seconds": getattr(r, "seconds", None)})
            continue
        stages.add(name, nodes, r, getattr(r, "fetches", None) or ())
    if not e.passes:  # optimize=False: the plan runs the fetched subgraph as written
        stages.prev = None
        stages.add("plan", list(e.after))
    drawn = [s for s in stages.stages if not s.get("skipped") and "nodes" in s]
    final = drawn[-1]
    name_to_id = {}
    for s in drawn:
        for n in s["nodes"]:
            name_to_id[n["name"]] = n["id"]
    # The passes that did not run (skip_passes, or fuse under check_numerics).
    skipped = [s["name"] for s in stages.stages if s.get("skipped")]
    run_seconds = getattr(e, "run_seconds", None)
    compiler = {
        "stages": stages.stages,
        "selected": stages.stages.index(final),
        "optimized": bool(e.passes),
        "skipped": skipped,
        "compile_seconds": float(e.compile_seconds),
        "passes_seconds": float(sum(r.seconds for r in e.passes)),
        "run_seconds": None if run_seconds is None else float(run_seconds),
        "memory": _memory(e, name_to_id),
        "kernels": list(stages.kernels.values()),
        "plan_source": str(e.source),
    }
    plain = [full_entry(n) for n in e.after]
    ids = {n["id"] for n in plain}
    edges = []
    for n in e.after:
        for x in n.inputs:
            if node_id(x) in ids:
                edges.append({"source": node_id(x), "target": node_id(n),
                              "label": shape_str(x.shape)})
    if title is None:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        title = f"compiler: Session.run({shown})"
    return {"version": SCHEMA_VERSION, "title": title, "mode": "static", "nodes": plain,
            "edges": edges, "steps": [], "compiler": compiler}


# -- fallbacks ----------------------------------------------------------------------------------
def format_bytes(n: int | float) -> str:
    """``1536`` -> ``'1.5 KiB'``.

    >>> format_bytes(512), format_bytes(1536), format_bytes(3 * 2**20)
    ('512 B', '1.5 KiB', '3 MiB')
    """
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{format_number(n if unit == 'B' else round(n, 1))} {unit}"
        n /= 1024
    return f"{n} GiB"  # pragma: no cover - the loop returns


def format_seconds(s: float | None) -> str:
    """``2.5e-05`` -> ``'25 µs'``; None -> ``'n/a'``."""
    if s is None:
        return "n/a"
    if s < 1e-3:
        return f"{s * 1e6:.3g} \u00b5s"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def compiler_lines(doc: dict) -> list[str]:
    """The pass table and the plan's numbers as text lines (``text/plain``)."""
    c = doc.get("compiler") or {}
    lines = []
    for s in c.get("stages", []):
        if s.get("skipped"):
            lines.append(f"{s['name']:<16} skipped")
            continue
        changes = s.get("changes") or []
        shown = ", ".join(changes[:4]) + (f", ... ({len(changes)})" if len(changes) > 4 else "")
        counts = (f"{s['after']} nodes" if s["name"] == AS_WRITTEN
                  else f"{s['before']} -> {s['after']} nodes")
        lines.append(f"{s['name']:<16} {counts}  {shown}".rstrip())
    for k in c.get("kernels", []):
        lines.append(f"fused kernel {k['kernel']} computes {k['name']}: "
                     f"{' '.join(k['members'])}")
    memory = c.get("memory")
    if memory:
        if memory.get("peak_bytes") is not None and memory.get("naive_bytes"):
            share = memory["peak_bytes"] / memory["naive_bytes"]
            lines.append(f"memory: peak {format_bytes(memory['peak_bytes'])} in "
                         f"{_plural(memory['buffers'], 'buffer')}, "
                         f"{format_bytes(memory['naive_bytes'])} without reuse ({share:.0%}); "
                         f"{len(memory['in_place'])} in place")
        else:
            lines.append(f"memory: {_plural(memory['buffers'], 'buffer')}, "
                         f"{len(memory['in_place'])} in place (bytes unknown: some shapes are "
                         "only known at run time)")
    compile_s, run_s = c.get("compile_seconds"), c.get("run_seconds")
    costs = (f" (compiling costs {compile_s / run_s:,.0f} runs)"
             if compile_s is not None and run_s else "")
    lines.append(f"compile {format_seconds(compile_s)}, run {format_seconds(run_s)}{costs}")
    if not c.get("optimized", True):
        lines.append("passes off (Session(optimize=False))")
    elif c.get("skipped"):
        lines.append(f"skipped passes: {', '.join(c['skipped'])}")
    return lines


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def compiler_text(doc: dict) -> str:
    """The ``text/plain`` form of a compiler document."""
    return "\n".join([f"kernelgraph compiler view {doc.get('title', '')!r}",
                      *compiler_lines(doc)])


def _stage_doc(stage: dict, title: str, ghosts: bool = True) -> dict:
    nodes = []
    groups = {m: g for g in stage.get("groups", []) for m in g["members"]}
    marks = stage.get("marks", {})
    for n in stage.get("nodes", []):
        if not ghosts and marks.get(n["id"]) == "removed":
            continue
        g = groups.get(n["id"])
        if g is not None:  # the SVG has no clusters: the group scope names the kernel
            n = dict(n, scope=f"fused {g['name']}")
        nodes.append(n)
    return {"title": title, "nodes": nodes, "edges": stage.get("edges", [])}


def compiler_svg(doc: dict) -> str:
    """The SVG fallback: the pass table, then the graph as written beside the compiled one
    (fused members, folded constants and merged nodes outlined in their colours)."""
    c = doc.get("compiler") or {}
    drawn = [s for s in c.get("stages", []) if not s.get("skipped") and "nodes" in s]
    if not drawn:
        return render_svg(doc)
    first, last = drawn[0], drawn[-1]
    marks: dict[str, str] = {}
    for s in drawn[1:]:
        for k, v in s.get("marks", {}).items():
            if v != "removed":
                marks[k] = v
    left = render_svg(_stage_doc(first, f"{first['name']} ({first['after']} nodes)"))
    right = render_svg(_stage_doc(last, f"after {last['name']} ({last['after']} nodes)",
                                  ghosts=False),
                       marks={k: v for k, v in marks.items()
                              if any(n["id"] == k for n in last["nodes"])})
    sizes = [_svg_size(left), _svg_size(right)]
    lines = [str(doc.get("title", ""))] + compiler_lines(doc) + [
        "outlines on the right: teal folded, purple merged, blue simplified, orange fused"]
    head = 18 * len(lines) + 16
    width = sizes[0][0] + sizes[1][0] + 16
    height = head + max(sizes[0][1], sizes[1][1])
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
           f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
           'font-family="Helvetica, Arial, sans-serif" font-size="12">',
           f"<title>{esc(doc.get('title', 'kernelgraph compiler'))}</title>",
           f'<rect width="{width:.0f}" height="{height:.0f}" fill="#ffffff"/>']
    for i, text in enumerate(lines):
        weight = ' font-weight="700" font-size="14"' if i == 0 else ""
        out.append(f'<text x="16" y="{20 + 18 * i}" fill="#111827" '
                   f'font-family="Menlo, Consolas, monospace"{weight} xml:space="preserve">'
                   f"{esc(text[:160])}</text>")
    # Nested <svg> elements keep their own coordinates; a <g> moves each into place.
    out.append(f'<g transform="translate(0,{head})">{left}</g>')
    out.append(f'<g transform="translate({sizes[0][0] + 16:.0f},{head})">{right}</g>')
    out.append("</svg>")
    return "".join(out)


def _svg_size(svg: str) -> tuple[float, float]:
    import re

    m = re.match(r'<svg[^>]*width="([\d.]+)" height="([\d.]+)"', svg)
    return (float(m.group(1)), float(m.group(2))) if m else (400.0, 300.0)


def explanation_bundle(e) -> dict:
    """The MIME bundle of an Explanation (``kg.show(sess.explain(...))``)."""
    return bundle_of(compiler_document(e))


# kg.show / document_of find this view through the registry of view kinds; the compiler,
# floors below the widgets, draws an Explanation through its display hook.
views.register(views.ViewKind(
    "compiler", _explanation.Explanation, compiler_document,
    svg=lambda doc, collapse_above: compiler_svg(doc), text=compiler_text))
_explanation.DISPLAY["explanation"] = explanation_bundle
