"""nbval settings for the tutorial notebooks.

Strict nbval compares every stored output. A kernelgraph graph document
(``application/vnd.kernelgraph.graph+json``) is compared too -- nodes, edges, values,
gradients, the order of the animation steps -- except the ``seconds`` each step took, which
is a measurement and differs on every run (so are the compiler view's pass and compile
times), and the execution count in cell locations ("Cell In[3], line 2", in text and
anywhere in a graph document: node locations, a stepper's error), which depends on how the
notebook was run. Text outputs go through ``sanitize.cfg`` (measured durations).
"""

from __future__ import annotations

import copy
import re

from nbval.plugin import IPyNbCell

GRAPH_MIME = "application/vnd.kernelgraph.graph+json"
CELL = re.compile(r"Cell In\[\d+\]")


def _cells(value):
    if isinstance(value, str):
        return CELL.sub("Cell In[#]", value)
    if isinstance(value, list):
        return [_cells(v) for v in value]
    return value


def _without_timings(outputs):
    outputs = copy.deepcopy(outputs)
    for out in outputs:
        data = out.get("data", {})
        for key in data:
            data[key] = _cells(data[key])
        if "text" in out:
            out["text"] = _cells(out["text"])
        doc = data.get(GRAPH_MIME)
        if isinstance(doc, dict):
            data[GRAPH_MIME] = _unmeasured(doc)
    return outputs


def _unmeasured(value):
    """A graph document without what was measured: every ``seconds`` / ``*_seconds`` entry
    (animation steps, compiler passes, compile and run times) and every timing text such as
    the compiler view's ``"compile 1.38 s, run 1.12 µs"``; cell locations normalised, and
    gradient norms rounded to 6 significant digits."""
    if isinstance(value, dict):
        # a gradient's norm is compared to 6 digits (its text, "grad", to 4): the last bits of
        # a sum of many products depend on how a parallel loop split it on this run
        return {k: float(f"{v:.6g}") if k == "grad_norm" and isinstance(v, float)
                else _unmeasured(v) for k, v in value.items()
                if not (k == "seconds" or k.endswith("_seconds") or k == "timing")}
    if isinstance(value, list):
        return [_unmeasured(v) for v in value]
    if isinstance(value, str):
        return CELL.sub("Cell In[#]", value)
    return value


_compare = IPyNbCell.compare_outputs


def _compare_without_timings(self, test, ref, skip_compare=None):
    return _compare(self, _without_timings(test), _without_timings(ref), skip_compare)


IPyNbCell.compare_outputs = _compare_without_timings
