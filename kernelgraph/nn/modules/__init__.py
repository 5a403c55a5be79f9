"""``kg.nn.modules`` (``torch.nn.modules``): PyTorch's module paths, each a real module that
re-exports the classes PyTorch's file of that name holds (``torch.nn.modules.linear.Linear``
is :class:`kernelgraph.nn.Linear`), for code that imports or checks types by those paths.

>>> import kernelgraph as kg
>>> from kernelgraph.nn.modules.linear import Linear
>>> Linear is kg.nn.Linear
True
"""

from . import (
    activation,
    batchnorm,
    container,
    conv,
    dropout,
    flatten,
    linear,
    loss,
    module,
    normalization,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
)
from .module import Module

__all__ = ["Module", "activation", "batchnorm", "container", "conv", "dropout", "flatten",
           "linear", "loss", "module", "normalization", "pixelshuffle", "pooling", "rnn",
           "sparse", "transformer"]
