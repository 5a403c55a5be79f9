"""The Tensor methods built on ops and autograd: the Python operators (the plain binary ones
on the hot path of :func:`.dispatch._binary`), the methods of the one table both kinds of
tensor share (:mod:`kernelgraph.ops.methods`: ``exp``, ``sum``, ``reshape``, ``float`` ...),
PyTorch's printing (:mod:`.printing`) and ``backward``."""

from __future__ import annotations

from .. import operators
from ..ops import methods as table
from . import backprop, printing
from .dispatch import _binary, apply
from .tensors import EagerNode, Tensor


def backward(self, grad=None, retain_graph: bool | None = None, create_graph: bool = False):
    """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires grad."""
    backprop.backward(self, grad, retain_graph=retain_graph, create_graph=create_graph)


Tensor.backward = backward


def _install_methods():
    operators.install(Tensor, apply, binary=_binary, equality=True)
    # PyTorch prints tensors its own way; printing.py says how.
    Tensor.__repr__ = printing.tensor_repr
    Tensor.__str__ = printing.tensor_repr
    Tensor.__format__ = printing.tensor_format
    EagerNode.__repr__ = printing.grad_fn_repr  # <AddBackward0 object at 0x...>
    table.install(Tensor)


_install_methods()
