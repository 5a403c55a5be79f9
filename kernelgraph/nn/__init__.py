"""``kg.nn``: layers that work in both modes (eager tensors or graph nodes).

- :class:`Module`: the base class (parameters, sub-modules, ``forward``, per-graph
  variables, ``zero_grad``);
- :class:`RNNCell` and :func:`dynamic_rnn`: a tanh RNN over variable-length sequences.
"""

from .module import Module
from .rnn import RNNCell, dynamic_rnn

__all__ = ["Module", "RNNCell", "dynamic_rnn"]
