"""``kg.show(x)``: display a graph as a MIME bundle that every notebook front-end can draw.

The bundle holds three representations of one document:

- ``application/vnd.kernelgraph.graph+json``: the document itself, drawn interactively by
  the kernelgraph JupyterLab extension (and saved in the notebook, so it redraws without a
  kernel);
- ``image/svg+xml``: the static drawing of :mod:`.svg`, for GitHub, nbviewer, VS Code, Colab;
- ``text/plain``: a few lines of text.

>>> import kernelgraph as kg
>>> a = kg.tensor(15.0, requires_grad=True); b = kg.tensor(20.0, requires_grad=True)
>>> c = a * b; c.backward()
>>> bundle = mimebundle(c, names={"a": a, "b": b, "c": c})
>>> sorted(bundle)
['application/vnd.kernelgraph.graph+json', 'image/svg+xml', 'text/plain']
>>> print(bundle["text/plain"])
kernelgraph eager graph 'eager graph of c': 3 nodes, 2 edges, 9 steps
  a (leaf) = 15  grad 20
  b (leaf) = 20  grad 15
  c (mul) = 300  grad 1
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from ..eager import Tensor
from . import views
from .document import MIME_TYPE, document_of
from .svg import render_svg

TEXT_LINES = 12


def text_summary(doc: dict, max_lines: int = TEXT_LINES) -> str:
    """The ``text/plain`` form: a header line and the nodes that have a value or gradient."""
    nodes, edges, steps = doc.get("nodes", []), doc.get("edges", []), doc.get("steps", [])
    lines = [f"kernelgraph {doc.get('mode', '')} graph {doc.get('title', '')!r}: "
             f"{len(nodes)} nodes, {len(edges)} edges, {len(steps)} steps"]
    shown = [n for n in nodes if n.get("value") is not None or n.get("grad") is not None]
    for n in shown[:max_lines]:
        text = f"  {n.get('name')} ({n.get('op')})"
        if n.get("value") is not None:
            text += f" = {n['value']}"
        if n.get("grad") is not None:
            text += f"  grad {n['grad']}"
        lines.append(text)
    if len(shown) > max_lines:
        lines.append(f"  ... {len(shown) - max_lines} more")
    return "\n".join(lines)


def caller_names(depth: int = 2) -> dict:
    """Names of the caller's variables that hold kg.Tensors (to label eager leaves)."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return {}
    names = {}
    for scope in (frame.f_globals, frame.f_locals):
        for k, v in list(scope.items()):
            if isinstance(v, Tensor) and not k.startswith("_"):
                names[k] = v
    return names


def bundle_of(doc: dict, collapse_above: int = 200) -> dict:
    """The MIME bundle for a document (see module docstring); a view kind's document
    (:mod:`.views`: the compiler's, the stepper's) gets that view's SVG and text fallbacks
    where it has its own."""
    view = views.for_document(doc)
    svg = view.svg if view is not None and view.svg is not None else render_svg
    text = view.text if view is not None and view.text is not None else text_summary
    return {MIME_TYPE: doc, "image/svg+xml": svg(doc, collapse_above), "text/plain": text(doc)}


def mimebundle(x, title: str | None = None, names: Mapping | None = None, **kwargs) -> dict:
    """The MIME bundle for anything :func:`~.document.document_of` accepts."""
    return bundle_of(document_of(x, title=title, names=names, **kwargs))


class GraphDisplay:
    """A drawable graph document: notebooks display it through ``_repr_mimebundle_``.

    >>> import kernelgraph as kg
    >>> view = GraphDisplay(kg.tensor([1.0]) * 2.0)
    >>> sorted(view._repr_mimebundle_())[0]
    'application/vnd.kernelgraph.graph+json'
    """

    def __init__(self, x, title: str | None = None, names: Mapping | None = None, **kwargs):
        self.document = document_of(x, title=title, names=names, **kwargs)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return bundle_of(self.document)

    def __repr__(self):
        return text_summary(self.document)


def show(x, title: str | None = None, names: Mapping | None = None, **kwargs) -> None:
    """Display ``x``: a ``kg.Tensor``, a ``kg.Graph``, a node or list of fetches, a run
    ``(session, fetches, feed_dict)`` (which runs once, traced), what the compiler did
    (``sess.explain(...)``), or a step-through run (``sess.step(...)``).

    In IPython the bundle goes to ``IPython.display.display(..., raw=True)``; elsewhere the
    text summary is printed. Eager leaves are labelled with the caller's variable names
    unless ``names`` is given.

    >>> import kernelgraph as kg
    >>> x = kg.tensor([1.0, 2.0], requires_grad=True)
    >>> kg.show(x * 3.0)  # doctest: +ELLIPSIS
    kernelgraph eager graph 'eager graph of mul_...': 2 nodes, 1 edges, 4 steps
      x (leaf) = [1., 2.]
      mul_... (mul) = [3., 6.]
    """
    if names is None:
        names = caller_names()
    bundle = mimebundle(x, title=title, names=names, **kwargs)
    publish(bundle)


def publish(bundle: dict) -> None:
    """Send a bundle to the notebook front-end, or print its text outside IPython."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        print(bundle["text/plain"])
        return
    from IPython.display import display

    display(bundle, raw=True)
