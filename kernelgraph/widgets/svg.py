"""A static SVG drawing of a graph document: the fallback for GitHub, nbviewer, VS Code.

The layout is a plain layered (Sugiyama-style) one, written out because it is short:

1. **layers** by longest path from the sources, so every edge points down (an input is
   then moved down to just above its first consumer);
2. **order** inside each layer by a few barycenter sweeps (a node moves towards the mean
   position of its neighbours in the layer above, then below), which removes most
   crossings;
3. **x positions**: each node as close as it can get to the mean x of its inputs, left to
   right without overlap.

Colours, spacing and font sizes come from ``style.json`` beside this module, the one file
the JupyterLab extension's renderer reads them from too (where the two drawings still differ,
its ``staticSvg`` section says so).

Every piece of text goes through :func:`esc` (``html.escape`` with quotes, and characters
XML forbids replaced), and each node and edge carries a ``<title>`` tooltip. Documents with
more than ``collapse_above`` nodes are drawn with each top-level name scope folded into one
box.

>>> doc = {"title": "x", "nodes": [
...     {"id": "a", "name": "<a>", "label": "<a>", "kind": "input", "op": "placeholder"},
...     {"id": "b", "name": "b", "label": "b", "kind": "op", "op": "neg"}],
...     "edges": [{"source": "a", "target": "b", "label": "()"}]}
>>> svg = render_svg(doc)
>>> "&lt;a&gt;" in svg and "<a>" not in svg
True
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from importlib import resources

_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
#: The look shared with the extension (``style.json``, shipped in the package).
STYLE: dict = json.loads(resources.files(__package__).joinpath("style.json")
                         .read_text(encoding="utf-8"))


def _static(section: str) -> dict:
    """``STYLE[section]`` with the static drawing's own values (``staticSvg``) over it,
    entry by entry (an override of a kind's ``fill`` keeps the shared ``stroke``)."""
    own = STYLE["staticSvg"].get(section, {})
    return {key: {**value, **own.get(key, {})} if isinstance(value, dict) else own.get(key, value)
            for key, value in STYLE[section].items()}


_KINDS, _SPACING = _static("kinds"), _static("spacing")
FILL = {kind: c["fill"] for kind, c in _KINDS.items()}
STROKE = {kind: c["stroke"] for kind, c in _KINDS.items()}
DEVICE_STROKE, TRANSFER_FILL = STYLE["device"]["stroke"], STYLE["device"]["transferFill"]
# What a compiler pass did to a node (the compiler view), as the extension colours it.
MARK_STROKE = {mark: c["stroke"] for mark, c in _static("marks").items()}
CHAR_W = float(STYLE["charWidth"])
GAP_X, GAP_Y, MARGIN = _SPACING["node"], _SPACING["rank"], _SPACING["margin"]
LINE_H, PAD, TITLE_H = 14, 8, 28
_FONT_SIZE = STYLE["fontSize"]


def esc(text) -> str:
    """Text made safe inside SVG/XML elements and attributes (``<`` ``>`` ``&`` ``"`` ``'``)."""
    return html.escape(_FORBIDDEN.sub("\ufffd", str(text)), quote=True)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1] + "\u2026"


# -- layout -------------------------------------------------------------------------------------
def layout(ids: Sequence[str], edges: Sequence[tuple[str, str]],
           sizes: dict[str, tuple[float, float]], sweeps: int = 4):
    """Positions ``{id: (x, y)}`` (top-left corners) and the total ``(width, height)``.

    >>> pos, size = layout(["a", "b", "c"], [("a", "c"), ("b", "c")],
    ...                    {k: (40, 20) for k in "abc"})
    >>> pos["a"][1] == pos["b"][1] < pos["c"][1], pos["a"][0] < pos["b"][0]
    (True, True)
    """
    index = {v: i for i, v in enumerate(ids)}
    preds: dict[str, list[str]] = {v: [] for v in ids}
    succs: dict[str, list[str]] = {v: [] for v in ids}
    for s, t in edges:
        if s in index and t in index and s != t:
            preds[t].append(s)
            succs[s].append(t)
    layer = _layers(ids, preds, succs)
    layers: list[list[str]] = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    for v in ids:  # initial order: the order given (creation order)
        layers[layer[v]].append(v)
    pos = {v: i / max(len(lay), 1) for lay in layers for i, v in enumerate(lay)}
    for sweep in range(sweeps):
        down = sweep % 2 == 0
        for lay in layers if down else reversed(layers):
            nbrs = preds if down else succs
            keyed = []
            for i, v in enumerate(lay):
                ns = nbrs[v]
                keyed.append((sum(pos[n] for n in ns) / len(ns) if ns else pos[v], i, v))
            keyed.sort()
            lay[:] = [v for _, _, v in keyed]
            for i, v in enumerate(lay):
                pos[v] = i / len(lay)
    # coordinates
    xy: dict[str, tuple[float, float]] = {}
    y = 0.0
    for lay in layers:
        row_h = max(sizes[v][1] for v in lay)
        x_right = -GAP_X
        for v in lay:
            w = sizes[v][0]
            ps = [p for p in preds[v] if p in xy]
            want = (sum(xy[p][0] + sizes[p][0] / 2 for p in ps) / len(ps) - w / 2) if ps else 0
            x = max(want, x_right + GAP_X)
            xy[v] = (x, y)
            x_right = x + w
        y += row_h + GAP_Y
    if not xy:
        return {}, (0.0, 0.0)
    min_x = min(x for x, _ in xy.values())
    xy = {v: (x - min_x, yy) for v, (x, yy) in xy.items()}
    width = max(x + sizes[v][0] for v, (x, _) in xy.items())
    return xy, (width, max(y - GAP_Y, 0.0))


def _layers(ids, preds, succs) -> dict[str, int]:
    """Longest-path layers over a topological order (Kahn); a cycle is broken arbitrarily."""
    indeg = {v: len(preds[v]) for v in ids}
    ready = [v for v in reversed(ids) if indeg[v] == 0]
    layer: dict[str, int] = {}
    remaining = list(reversed(ids))
    while len(layer) < len(ids):
        if not ready:  # a cycle: take the earliest node not yet placed
            while remaining[-1] in layer:
                remaining.pop()
            ready.append(remaining[-1])
        v = ready.pop()
        if v in layer:
            continue
        layer[v] = max((layer[p] + 1 for p in preds[v] if p in layer), default=0)
        for t in succs[v]:
            indeg[t] -= 1
            if indeg[t] == 0:
                ready.append(t)
    for v in ids:  # an input sits just above its first consumer, not at the very top
        if not preds[v] and succs[v]:
            layer[v] = max(min(layer[t] for t in succs[v]) - 1, 0)
    return layer


# -- scopes -------------------------------------------------------------------------------------
def collapse(doc: dict, collapse_above: int = 200) -> tuple[list[dict], list[dict]]:
    """The nodes and edges to draw: the document's own, or with every top-level scope
    folded into one ``scope`` box when there are more than ``collapse_above`` nodes."""
    nodes, edges = doc.get("nodes", []), doc.get("edges", [])
    if len(nodes) <= collapse_above:
        return list(nodes), list(edges)
    group: dict[str, str] = {}
    shown: dict[str, dict] = {}
    members: dict[str, int] = {}
    for n in nodes:
        top = (n.get("scope") or "").split("/")[0]
        if not top:
            group[n["id"]] = n["id"]
            shown[n["id"]] = n
            continue
        gid = f"scope:{top}"
        group[n["id"]] = gid
        members[gid] = members.get(gid, 0) + 1
        if gid not in shown:
            shown[gid] = {"id": gid, "name": top, "label": top, "op": "scope", "kind": "scope",
                          "scope": "", "shape": "", "dtype": "", "location": "",
                          "value": None, "grad": None}
    for gid, count in members.items():
        shown[gid]["label"] = f"{shown[gid]['name']}/ ({count} nodes)"
    seen, out = set(), []
    for e in edges:
        s, t = group.get(e["source"]), group.get(e["target"])
        if s is None or t is None or s == t or (s, t) in seen:
            continue
        seen.add((s, t))
        out.append({"source": s, "target": t, "label": e.get("label", "")})
    return list(shown.values()), out


# -- drawing ------------------------------------------------------------------------------------
def _lines(n: dict) -> list[tuple[str, str]]:
    """The (css class, text) lines drawn in a node's box."""
    lines = [("label", _clip(str(n.get("label") or n.get("name") or n["id"]), 32))]
    # a transfer between workers shows its route and bytes
    if n.get("transfer"):
        lines.append(("shape", _clip(str(n["transfer"]), 32)))
    if n.get("value") is not None:
        lines.append(("value", "= " + _clip(str(n["value"]), 30)))
    elif n.get("shape") and n.get("kind") != "scope":
        lines.append(("shape", _clip(str(n["shape"]), 30)))
    if n.get("grad") is not None:
        lines.append(("grad", "\u2207 " + _clip(str(n["grad"]), 30)))
    return lines


def _tooltip(n: dict) -> str:
    rows = [str(n.get("name", ""))]
    # "transfer" (route and bytes between workers) among the keys shown
    keys = ("op", "kind", "shape", "dtype", "device", "transfer", "location", "value", "grad")
    for key in keys:
        v = n.get(key)
        if v not in (None, ""):
            rows.append(f"{key}: {v}")
    return "\n".join(rows)


_TEXT_STYLE = {"label": 'font-weight="600" fill="#111827"', "value": 'fill="#1f2937"',
               "shape": 'fill="#6b7280"', "grad": f'fill="{STYLE["gradText"]}"'}


def render_svg(doc: dict, collapse_above: int = 200, edge_labels_below: int = 60,
               marks: dict | None = None) -> str:
    """The SVG text for a graph document (see module docstring). ``marks`` ({node id:
    "folded" | "merged" | "simplified" | "fused" | "removed"}) outlines what a compiler pass
    did to a node in that pass's colour."""
    marks = marks or {}
    nodes, edges = collapse(doc, collapse_above)
    sizes, lines = {}, {}
    for n in nodes:
        ls = _lines(n)
        lines[n["id"]] = ls
        w = max(len(t) for _, t in ls) * CHAR_W + 2 * PAD
        sizes[n["id"]] = (max(64.0, min(w, 260.0)), len(ls) * LINE_H + 2 * PAD)
    ids = [n["id"] for n in nodes]
    xy, (width, height) = layout(ids, [(e["source"], e["target"]) for e in edges], sizes)
    total_w = max(width, 200.0) + 2 * MARGIN
    total_h = height + 2 * MARGIN + TITLE_H
    ox, oy = MARGIN, MARGIN + TITLE_H
    by_id = {n["id"]: n for n in nodes}
    title = str(doc.get("title") or "kernelgraph graph")
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" height="{total_h:.0f}" '
        f'viewBox="0 0 {total_w:.0f} {total_h:.0f}" font-family="Helvetica, Arial, sans-serif" '
        f'font-size="{_FONT_SIZE["label"]}">',
        f"<title>{esc(title)}</title>",
        '<defs><marker id="kg-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#6b7280"/></marker><marker id="kg-arrow-grad" viewBox="0 0 10 10" refX="10" '
        'refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path '
        'd="M0,0 L10,5 L0,10 z" fill="#dc2626"/></marker></defs>',
        f'<rect width="{total_w:.0f}" height="{total_h:.0f}" fill="#ffffff"/>',
        f'<text x="{MARGIN}" y="{MARGIN + 12}" font-size="14" font-weight="700" '
        f'fill="#111827">{esc(_clip(title, 120))}</text>',
        '<g class="kg-edges">',
    ]
    show_labels = len(nodes) <= edge_labels_below
    for e in edges:
        s, t = e["source"], e["target"]
        if s not in xy or t not in xy:
            continue
        (sx, sy), (tx, ty) = xy[s], xy[t]
        x1, y1 = ox + sx + sizes[s][0] / 2, oy + sy + sizes[s][1]
        x2, y2 = ox + tx + sizes[t][0] / 2, oy + ty
        mid = (y1 + y2) / 2
        flowed = by_id[s].get("grad") is not None and by_id[t].get("grad") is not None
        color, marker = ("#dc2626", "kg-arrow-grad") if flowed else ("#9ca3af", "kg-arrow")
        tip = f"{by_id[s].get('name', s)} \u2192 {by_id[t].get('name', t)}"
        if e.get("label"):
            tip += f"  {e['label']}"
        out.append(f'<path d="M{x1:.1f},{y1:.1f} C{x1:.1f},{mid:.1f} {x2:.1f},{mid:.1f} '
                   f'{x2:.1f},{y2:.1f}" fill="none" stroke="{color}" stroke-width="1.3" '
                   f'marker-end="url(#{marker})"><title>{esc(tip)}</title></path>')
        if show_labels and e.get("label") not in (None, "", "()"):
            out.append(f'<text x="{(x1 + x2) / 2 + 4:.1f}" y="{mid + 4:.1f}" '
                       f'font-size="{_FONT_SIZE["edgeLabel"]}" '
                       f'fill="#6b7280">{esc(_clip(str(e["label"]), 24))}</text>')
    out.append("</g>")
    out.append('<g class="kg-nodes">')
    for n in nodes:
        nid = n["id"]
        if nid not in xy:
            continue
        x, y = ox + xy[nid][0], oy + xy[nid][1]
        w, h = sizes[nid]
        kind = str(n.get("kind", "op"))
        fill, stroke = FILL.get(kind, FILL["op"]), STROKE.get(kind, STROKE["op"])
        dash = ' stroke-dasharray="4 2"' if kind == "scope" or n.get("op") == "to_device" else ""
        width = "1.2"
        device = str(n.get("device") or "cpu")
        # a worker's CPU ('worker:1/cpu') is not a GPU
        if "cuda" in device:  # placed on a GPU: the extension's violet outline
            stroke, width = DEVICE_STROKE, "2.5"
        if n.get("op") == "to_device":
            fill = TRANSFER_FILL
        mark = marks.get(nid)
        if mark in MARK_STROKE:
            stroke, width = MARK_STROKE[mark], "2.5"
            if mark == "removed":
                dash = ' stroke-dasharray="3 3" opacity="0.5"'
        rx = 14 if kind in ("input", "leaf") else 4
        mark_attr = f' data-mark="{esc(mark)}"' if mark else ""
        out.append(f'<g class="kg-node" data-id="{esc(nid)}" data-kind="{esc(kind)}" '
                   f'data-device="{esc(device)}"{mark_attr}>'
                   f"<title>{esc(_tooltip(n))}</title>"
                   f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
                   f'rx="{rx}" fill="{fill}" stroke="{stroke}" stroke-width="{width}"{dash}/>')
        for i, (cls, text) in enumerate(lines[nid]):
            ty = y + PAD + LINE_H * (i + 1) - 3
            size = "" if cls == "label" else ' font-size="11"'
            out.append(f'<text x="{x + w / 2:.1f}" y="{ty:.1f}" text-anchor="middle"'
                       f'{size} {_TEXT_STYLE[cls]}>{esc(text)}</text>')
        out.append("</g>")
    out.append("</g></svg>")
    return "".join(out)
