"""nbval settings for the tutorial notebooks.

Strict nbval compares every stored output. A kernelgraph graph document
(``application/vnd.kernelgraph.graph+json``) is compared too -- nodes, edges, values,
gradients, the order of the animation steps -- except the ``seconds`` each step took, which
is a measurement and differs on every run, and the execution count in cell locations
("Cell In[3], line 2", in text and anywhere in a graph document: node locations, a
stepper's error), which depends on how the notebook was run.
"""

from __future__ import annotations

import copy
import re

from nbval.plugin import IPyNbCell

GRAPH_MIME = "application/vnd.kernelgraph.graph+json"
CELL = re.compile(r"Cell In\[\d+\]")


def _cells(value):
    """``value`` with every "Cell In[n]" in its strings (at any depth) made "Cell In[#]"."""
    if isinstance(value, str):
        return CELL.sub("Cell In[#]", value)
    if isinstance(value, list):
        return [_cells(v) for v in value]
    if isinstance(value, dict):
        return {k: _cells(v) for k, v in value.items()}
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
            for step in doc.get("steps", []):
                step.pop("seconds", None)
    return outputs


_compare = IPyNbCell.compare_outputs


def _compare_without_timings(self, test, ref, skip_compare=None):
    return _compare(self, _without_timings(test), _without_timings(ref), skip_compare)


IPyNbCell.compare_outputs = _compare_without_timings
