"""``kg.nn``: layers that work in both modes (eager tensors or graph nodes).

- :class:`Module`: the base class (parameters, sub-modules, ``forward``, per-graph
  variables, ``zero_grad``, ``train``/``eval``, ``state_dict``/``load_state_dict``);
- layers: :class:`Linear`, :class:`Conv2d`, :class:`MaxPool2d`, :class:`AvgPool2d`,
  :class:`GlobalAvgPool2d`, :class:`Flatten`, :class:`Dropout`, :class:`Embedding`,
  :class:`Sequential`, and the activations :class:`ReLU`, :class:`Tanh`, :class:`Sigmoid`,
  :class:`Softmax`, :class:`LogSoftmax`, :class:`Identity`;
- losses: :class:`CrossEntropyLoss`, :class:`MSELoss`;
- recurrent: :class:`RNNCell`, :class:`LSTMCell` and :func:`dynamic_rnn`;
- :mod:`kernelgraph.nn.init`: initialisers drawing from ``kg.random``.
"""

from . import init
from .conv import AvgPool2d, Conv2d, GlobalAvgPool2d, MaxPool2d
from .layers import (
    Dropout,
    Embedding,
    Flatten,
    Identity,
    Linear,
    LogSoftmax,
    ReLU,
    Sequential,
    Sigmoid,
    Softmax,
    Tanh,
)
from .loss import CrossEntropyLoss, MSELoss
from .module import Module
from .rnn import LSTMCell, RNNCell, dynamic_rnn

__all__ = ["AvgPool2d", "Conv2d", "CrossEntropyLoss", "Dropout", "Embedding", "Flatten",
           "GlobalAvgPool2d", "Identity", "LSTMCell", "Linear", "LogSoftmax", "MSELoss",
           "MaxPool2d", "Module", "RNNCell", "ReLU", "Sequential", "Sigmoid", "Softmax", "Tanh",
           "dynamic_rnn", "init"]
