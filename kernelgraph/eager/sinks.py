"""Eager backward through an RNN: its weights' gradients over all the steps summed as one
product when the walk ends (:mod:`kernelgraph.ops.products`), registered with
:mod:`.backprop` so that only a walk through a node whose rule takes sinks pays for it.

>>> import kernelgraph as kg
>>> cell = kg.nn.RNNCell(2, 3)
>>> h = kg.zeros(1, 3)
>>> for step in range(4):
...     h = cell(kg.ones(1, 2), h)
>>> h.sum().backward()
>>> cell.weight_hh.grad.shape
torch.Size([3, 3])
"""

from __future__ import annotations

from .. import ops as O
from ..ops.products import RULES, Sink, Stacker
from . import backprop
from .tensors import Tensor


class SinkMode(backprop._EagerMode):
    """The eager walk that hands each leaf input of a node whose rule takes sinks the leaf's
    :class:`~kernelgraph.ops.products.Sink` (one per leaf), and adds what the sinks hold to
    the gradients when the walk is over."""

    def __init__(self, create_graph: bool, check: bool = False):
        super().__init__(create_graph, check)
        self.sinks = {}  # id(leaf) -> (leaf, its Sink)

    def inputs(self, node):
        needs, values, keys = super().inputs(node)
        if node.op.grad in RULES:
            for i, key in enumerate(keys):
                if type(key) is Tensor:  # a leaf that wants its gradient
                    entry = self.sinks.get(id(key))
                    if entry is None:
                        entry = self.sinks[id(key)] = (key, Sink())
                    needs[i] = entry[1]
        return needs, values, keys

    def finish(self, grads: dict) -> None:
        stacked = Stacker()  # (an RNN's da goes to all four weights: concatenated once)
        for leaf_id, (leaf, sink) in self.sinks.items():
            g = sink.value(stacked)  # a weight's per-step gradients, as one product now
            if g is not None:
                prev = grads.get(leaf_id)
                grads[leaf_id] = (leaf, g if prev is None else O.add(prev[1], g))


class InPlaceSinkMode(SinkMode, backprop._InPlaceMode):
    """:class:`SinkMode` once in-place ops ran (see :class:`.backprop._InPlaceMode`)."""


backprop.register_mode(RULES, SinkMode, InPlaceSinkMode)
