"""``kg.nn`` (``import torch.nn as nn``): layers that work in both modes (eager tensors or
graph nodes).

- :class:`Module`: the base class (parameters, buffers, sub-modules, ``forward``, per-graph
  variables, ``to``/``cuda``/``double``, ``zero_grad``, ``train``/``eval``,
  ``state_dict``/``load_state_dict``), and :class:`Parameter`;
- containers: :class:`Sequential`, :class:`ModuleList`, :class:`ModuleDict`,
  :class:`ParameterList`, :class:`ParameterDict`;
- layers: :class:`Linear`, :class:`Conv2d`, :class:`MaxPool2d`, :class:`AvgPool2d`,
  :class:`GlobalAvgPool2d`, :class:`Flatten`, :class:`Dropout`, :class:`Embedding`,
  and the activations :class:`ReLU`, :class:`Tanh`, :class:`Sigmoid`, :class:`Softmax`,
  :class:`LogSoftmax`, :class:`Identity`, :class:`LeakyReLU`, :class:`GELU` ...;
- normalisation: :class:`BatchNorm1d`, :class:`BatchNorm2d`, :class:`LayerNorm`;
- more convolution, pooling and resampling (:mod:`.conv_more`, :mod:`.resampling`):
  :class:`Conv1d`, :class:`ConvTranspose2d`, :class:`AdaptiveAvgPool2d`, :class:`Upsample`,
  :class:`ReflectionPad2d`, :class:`PixelShuffle`, :class:`Dropout2d`,
  :class:`InstanceNorm2d` ...;
- attention: :class:`MultiheadAttention`, :class:`Transformer`, :class:`TransformerEncoder`,
  :class:`TransformerDecoder` and their layers; :class:`PReLU`, :class:`EmbeddingBag`,
  :class:`LazyLinear`;
- losses: :class:`CrossEntropyLoss`, :class:`NLLLoss`, :class:`MSELoss`, :class:`L1Loss`,
  :class:`SmoothL1Loss`, :class:`BCELoss`, :class:`BCEWithLogitsLoss`;
- recurrent: :class:`RNN`, :class:`LSTM`, :class:`GRU` (multi-layer, bidirectional, packed
  sequences), the cells :class:`RNNCell`, :class:`LSTMCell`, :class:`GRUCell`, and
  :func:`dynamic_rnn`;
- :mod:`kernelgraph.nn.utils` (``clip_grad_norm_``, ``clip_grad_value_``) and
  :mod:`kernelgraph.nn.utils.rnn` (``pack_padded_sequence`` and friends);
- :mod:`kernelgraph.nn.functional` (``F``) and :mod:`kernelgraph.nn.init`;
- :mod:`kernelgraph.nn.modules`: PyTorch's module paths (``torch.nn.modules.linear.Linear``).
"""

from . import functional, init, parallel, utils
from .activations import (
    ELU,
    GELU,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    ReLU6,
    SiLU,
    Softmin,
    Softplus,
    Softsign,
)
from .attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import AvgPool2d, Conv2d, GlobalAvgPool2d, MaxPool2d
from .conv_more import *  # noqa: F403 - Conv1d, ConvTranspose2d, AdaptiveAvgPool2d ...
from .extras import EmbeddingBag, LazyLinear, NLLLoss2d, PReLU
from .layers import (
    Dropout,
    Embedding,
    Flatten,
    Identity,
    Linear,
    LogSoftmax,
    ReLU,
    Sigmoid,
    Softmax,
    Tanh,
)
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .parallel import DataParallel
from .parameter import Parameter
from .recurrent import GRU, LSTM, RNN, GRUCell
from .resampling import *  # noqa: F403 - Upsample, ReflectionPad2d, Dropout2d ...
from .rnn import LSTMCell, RNNCell, dynamic_rnn
from .transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = ["AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Conv2d",
           "CrossEntropyLoss", "Dropout", "ELU", "Embedding", "Flatten", "GELU", "GRU", "GRUCell",
           "GlobalAvgPool2d", "Hardtanh", "Identity", "L1Loss", "LSTM", "LSTMCell", "LayerNorm",
           "LeakyReLU", "Linear", "LogSigmoid", "LogSoftmax", "MSELoss", "MaxPool2d", "Module",
           "ModuleDict", "ModuleList", "NLLLoss", "Parameter", "ParameterDict", "ParameterList",
           "RNN", "RNNCell", "ReLU", "ReLU6", "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss",
           "Softmax", "Softmin", "Softplus", "Softsign", "Tanh", "dynamic_rnn", "functional",
           "init", "utils"]
__all__ += conv_more.__all__ + resampling.__all__  # noqa: F405
__all__ += ["DataParallel", "parallel"]
__all__ += ["EmbeddingBag", "LazyLinear", "MultiheadAttention", "NLLLoss2d",
            "NonDynamicallyQuantizableLinear", "PReLU", "Transformer", "TransformerDecoder",
            "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer", "modules"]

from . import modules  # noqa: E402 - PyTorch's module paths re-export the classes above
