"""The Tensor methods built on ops and autograd: the Python operators (the plain binary ones
on the hot path of :func:`.dispatch._binary`), the elementwise and reduction methods,
PyTorch's shape methods, and ``backward``."""

from __future__ import annotations

import functools

import numpy as np

from .. import operators
from .. import ops as O
from ..ops.shape import swapped_axes
from . import backprop
from .dispatch import _binary, apply
from .tensors import Tensor


def backward(self, grad=None, retain_graph: bool | None = None, create_graph: bool = False):
    """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires grad."""
    backprop.backward(self, grad, retain_graph=retain_graph, create_graph=create_graph)


Tensor.backward = backward


def _install_methods():
    operators.install(Tensor, apply, binary=_binary, equality=True)
    # PyTorch's x.exp(), x.matmul(y) ...: the ops whose cards say "method", and square
    # (a function of mul, not an op of its own).
    named = [op.name for op in O.OPS.values() if "method" in op.traits] + ["square"]
    for name in named:
        fn = getattr(O, name)
        setattr(Tensor, name, lambda self, *args, _fn=fn, **kw: _fn(self, *args, **kw))

    def reduction(op):
        @functools.wraps(op.forward)
        def method(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
            axis = dim if dim is not None else axis
            keepdims = keepdim if keepdim is not None else keepdims
            return apply(op, (self,), {"axis": axis, "keepdims": keepdims})
        return method

    Tensor.sum = reduction(O.sum)
    Tensor.mean = reduction(O.mean)
    Tensor.max = reduction(O.max)
    Tensor.softmax = lambda self, axis=-1, dim=None: O.softmax(
        self, axis=axis if dim is None else dim)
    Tensor.log_softmax = lambda self, axis=-1, dim=None: O.log_softmax(
        self, axis=axis if dim is None else dim)
    def reshape_method(self, *shape):
        """``x.reshape(2, 3)`` or ``x.reshape((2, 3))``: PyTorch's rules (see kg.reshape)."""
        if not shape:
            raise TypeError('reshape() missing 1 required positional arguments: "shape"')
        one = len(shape) == 1 and isinstance(shape[0], tuple | list)
        return O.reshape(self, shape=shape[0] if one else shape)

    Tensor.reshape = reshape_method
    Tensor.view = Tensor.reshape

    def transpose_method(self, dim0=None, dim1=None):
        """Swap two dims (PyTorch); with no arguments, reverse all dims."""
        if dim0 is None and dim1 is None:
            return O.transpose(self)
        return O.transpose(self, perm=swapped_axes(self.ndim, dim0, dim1))

    def permute_method(self, *dims):
        """``x.permute(1, 0)`` or ``x.permute((1, 0))``: dims reordered (PyTorch)."""
        one = len(dims) == 1 and isinstance(dims[0], tuple | list | np.ndarray | range)
        return O.transpose(self, perm=dims[0] if one else dims)

    Tensor.transpose = transpose_method
    Tensor.t = lambda self: O.transpose(self)
    Tensor.permute = permute_method
    Tensor.broadcast_to = lambda self, shape: O.broadcast_to(self, shape=tuple(shape))
    Tensor.expand = lambda self, *shape: O.broadcast_to(
        self, shape=tuple(shape[0]) if len(shape) == 1 else shape)


_install_methods()
