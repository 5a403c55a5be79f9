"""Weight gradients summed over the steps of a sequence in one product, as cuDNN's RNN does.

A recurrent cell applied at every step gives its weights one gradient per step,
``da_t.T @ x_t``. Adding those up step by step costs eager ``backward()`` two small
products, four sums and the bookkeeping of four gradients a step: half of an RNN's backward
pass. Keeping each step's factors and making one product over all of them at the end
(``concat(da).T @ concat(x)``) costs an append a step instead.

The protocol between eager mode and a gradient rule:

- A rule that may take sinks says so (:func:`takes_sinks`). Eager ``backward()`` (without
  ``create_graph``) over a graph that holds such a rule's op walks with the mode
  :mod:`kernelgraph.eager.sinks` registers, which puts a :class:`Sink` in the ``needs``
  entry of each of those nodes' inputs that is a leaf tensor, one sink per leaf. A sink is
  true, so a rule may still read it as "wanted". Any other backward never sees a sink.
- A rule may hand a leaf's gradient to its sink as factors (:meth:`Sink.add_product`,
  :meth:`Sink.add_column_sums`) and return None for that input. When the walk is over,
  eager mode adds each sink's :meth:`Sink.value` to the leaf's other gradients.
- Static ``gradients()``, ``create_graph=True`` and the widgets never pass a sink, so their
  rules return arrays or nodes as usual.

One step's gradient is the same product as the step-by-step rule's, so it has the same bits.
Over many steps the sum is added in another order, so the last bits may differ.
"""

from __future__ import annotations

import numpy as np

from ..kernels import cpu
from .elementwise import add

#: The gradient rules that may take sinks (marked with :func:`takes_sinks`).
RULES: set = set()


def takes_sinks(rule):
    """Mark the gradient rule ``rule`` (a decorator) as one that may hand a leaf's gradient
    to a :class:`Sink` found in its ``needs``."""
    RULES.add(rule)
    return rule


class Sink:
    """The gradient of one leaf, kept as factors: ``concat(lefts).T @ concat(rights)`` plus
    the column sums of ``concat(rows)``.

    >>> import numpy as np
    >>> weight, bias = Sink(), Sink()
    >>> for step in (1.0, 2.0):
    ...     da = np.full((1, 2), step)
    ...     weight.add_product(da, np.arange(3.0).reshape(1, 3))
    ...     bias.add_column_sums(da)
    >>> weight.value().tolist(), bias.value().tolist()
    ([[0.0, 3.0, 6.0], [0.0, 3.0, 6.0]], [3.0, 3.0])
    """

    __slots__ = ("lefts", "rights", "rows")

    def __init__(self):
        self.lefts: list = []  # (rows, m) arrays, one per step ...
        self.rights: list = []  # ... and (rows, n) arrays: row i of each pairs with row i
        self.rows: list = []  # (rows, m) arrays whose column sums are added

    def __bool__(self):
        return True  # as a ``needs`` entry: this input wants its gradient

    def __repr__(self):
        return f"<gradient sink: {len(self.lefts)} products, {len(self.rows)} column sums>"

    def add_product(self, left: np.ndarray, right: np.ndarray) -> None:
        """Add ``left.T @ right`` (computed later, with the others, in one product)."""
        self.lefts.append(left)
        self.rights.append(right)

    def add_column_sums(self, rows: np.ndarray) -> None:
        """Add ``rows`` summed over its rows (later, with the others, in one sum)."""
        self.rows.append(rows)

    def value(self, stacked=None) -> np.ndarray | None:
        """The gradient handed in, computed: one BLAS product and one column sum over all
        the steps; None when nothing was handed in. ``stacked`` (a :class:`Stacker`) lets
        sinks that were handed the same arrays (an RNN's ``da`` goes to all four weights)
        share one concatenation."""
        stacked = stacked or Stacker()
        out = None
        if self.lefts:
            out = cpu.matmul(stacked(self.lefts).T, stacked(self.rights))
        if self.rows:
            sums = cpu.sum_rows_2d(stacked(self.rows))
            out = sums if out is None else add(out, sums)
        return out


class Stacker:
    """``concatenate(arrays)`` along the rows, computed once per sequence of arrays."""

    def __init__(self):
        self._done: dict = {}

    def __call__(self, arrays: list) -> np.ndarray:
        if len(arrays) == 1:
            return arrays[0]
        key = tuple(map(id, arrays))  # the arrays are alive: their ids are theirs
        out = self._done.get(key)
        if out is None:
            out = self._done[key] = np.concatenate(arrays)
        return out
