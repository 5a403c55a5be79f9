"""Notebook views of kernelgraph: graph documents, an SVG fallback, widgets and timing plots.

- :func:`show` (also ``kg.show``): display a tensor, graph, fetches or a Session run as a
  MIME bundle (interactive in JupyterLab with the extension; SVG everywhere else).
- :class:`GraphWidget`: the same drawing as an ipywidget; ``GraphWidget.live()`` grows as
  eager ops run.
- :func:`compare` / :class:`TimingWidget`: time the same model in eager and static mode
  (and autobatched eager); :func:`mlp_model` and :func:`rnn_model` are models to time.
- :func:`compiler_document` (``kg.show(sess.explain(...))``): the graph before and after
  each compiler pass.
- :func:`stepper_document` (``kg.show(sess.step(...))``), :class:`StepWidget`: a static run
  executed node by node.
- :func:`document_of` / :func:`render_svg`: the JSON document (``SCHEMA.md``) and its SVG.
- :mod:`.views`: the registry of view kinds: the compiler and stepper views register there,
  and ``document_of`` and the MIME bundle find them there.

Only :mod:`.widget` and :mod:`.timing` import ipywidgets / plotly, and only when
``GraphWidget``, ``TimingWidget`` or ``compare`` are first used.

>>> import kernelgraph as kg
>>> doc = kg.widgets.document_of(kg.tensor([1.0]) * 2.0)
>>> kg.widgets.render_svg(doc).startswith("<svg")
True
"""

from __future__ import annotations

import importlib

# The view modules, imported once here: each registers its view kind (.views) as it loads,
# so document_of and bundle_of find it whichever widgets module is used first.
from . import compiler, stepper  # noqa: F401 - registered view kinds
from .compiler import compiler_document
from .display import GraphDisplay, mimebundle, show
from .document import (
    MIME_TYPE,
    DocumentBuilder,
    document_of,
    eager_document,
    graph_document,
    run_document,
    traced_run,
)
from .recorder import Recorder, record
from .stepper import stepper_document
from .svg import layout, render_svg

_LAZY = {
    "GraphWidget": ".widget",
    "StepWidget": "._stepwidget",
    "TimingWidget": ".timing",
    "compare": ".timing",
    "measure": ".timing",
    "mlp_model": ".timing",
    "rnn_model": ".rnn_timing",
    "Model": ".timing",
}

__all__ = [
    "MIME_TYPE", "DocumentBuilder", "GraphDisplay", "GraphWidget", "Model",
    "Recorder", "StepWidget", "TimingWidget", "compare", "compiler_document", "document_of",
    "eager_document", "graph_document", "layout", "measure", "mimebundle", "mlp_model",
    "rnn_model",
    "record", "render_svg", "run_document", "show", "stepper_document", "traced_run",
]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
