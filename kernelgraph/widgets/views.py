"""The view kinds: which module draws which kind of object, in one small registry.

The document (:mod:`.document`) draws what every view shares: graphs, tensors, runs. A
*view kind* draws one more kind of object with a view of its own: the compiler view draws
an Explanation (``kg.show(sess.explain(...))``, :mod:`.compiler`), the stepper view a
Stepper (``kg.show(sess.step(...))``, :mod:`.stepper`). Each view module builds on the
document and registers its kind here when it is imported; the package ``__init__`` imports
every view module once. So :func:`~.document.document_of` finds the builder for an object,
and :func:`~.display.bundle_of` the SVG and text for a document, by asking the registry,
and neither imports a view module (the views import them).

A document names its view kind with a key of its own (``doc["compiler"]``,
``doc["stepper"]``); a document without one is a plain graph document.

>>> import kernelgraph as kg
>>> sorted(VIEWS)
['compiler', 'stepper']
>>> VIEWS["compiler"].draws.__name__, VIEWS["stepper"].draws.__name__
('Explanation', 'Stepper')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ViewKind:
    """One kind of view: ``name`` (the key its documents carry), ``draws`` (the type of
    object it draws), ``document(obj, title)`` (that object's document), and the bundle's
    fallbacks for its documents: ``svg(doc, collapse_above)`` and ``text(doc)``, None for
    the plain graph drawing and summary."""

    name: str
    draws: type
    document: Callable[..., dict]
    svg: Callable[[dict, int], str] | None = None
    text: Callable[[dict], str] | None = None


VIEWS: dict[str, ViewKind] = {}


def register(kind: ViewKind) -> ViewKind:
    """Add a view kind (a view module does this once, when imported; a module reloaded in
    a notebook replaces its kind)."""
    VIEWS[kind.name] = kind
    return kind


def for_object(obj) -> ViewKind | None:
    """The view kind that draws ``obj``, if one does."""
    for kind in VIEWS.values():
        if isinstance(obj, kind.draws):
            return kind
    return None


def for_document(doc: dict) -> ViewKind | None:
    """The view kind of a document (the one whose key it carries), if any."""
    for kind in VIEWS.values():
        if doc.get(kind.name):
            return kind
    return None
