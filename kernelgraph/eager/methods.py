"""The Tensor methods built on ops and autograd: the Python operators (the plain binary ones
on the hot path of :func:`.dispatch._binary`), the methods of the one table both kinds of
tensor share (:mod:`kernelgraph.ops.methods`: ``exp``, ``sum``, ``reshape``, ``float`` ...),
PyTorch's printing (:mod:`.printing`) and ``backward``."""

from __future__ import annotations

from .. import operators
from ..ops import methods as table
from . import backprop, creation, printing
from .dispatch import _binary, apply
from .tensors import EagerNode, Tensor


def backward(self, gradient=None, retain_graph: bool | None = None, create_graph: bool = False,
             inputs=None):
    """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires grad
    (PyTorch's signature: ``y.backward(gradient=v)`` for a non-scalar ``y``)."""
    if inputs is not None:
        raise NotImplementedError("backward(inputs=...) is not supported by kernelgraph: use "
                                  "kg.autograd.grad(outputs, inputs) for chosen inputs")
    backprop.backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph)


Tensor.backward = backward


def _index(self) -> int:
    """``operator.index(t)``: a one-element integer (or bool) tensor is an index, as in
    PyTorch (``classes[pred.argmax()]``); anything else is a TypeError."""
    if self._array.size != 1 or self._array.dtype.kind not in "iub":
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(self._read_item("__index__"))


def _like_self(self, dtype, device) -> dict:
    return {"dtype": self.dtype if dtype is None else dtype,
            "device": self.device if device is None else device}


def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``x.new_ones(2, 3)``: ones with ``x``'s dtype and device unless given, as PyTorch.

    >>> import kernelgraph as kg
    >>> kg.tensor([1, 2]).new_ones(2)
    tensor([1, 1])
    """
    return creation.ones(*size, requires_grad=requires_grad, **_like_self(self, dtype, device))


def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``x.new_zeros(2, 3)``: zeros with ``x``'s dtype and device unless given."""
    return creation.zeros(*size, requires_grad=requires_grad, **_like_self(self, dtype, device))


def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``x.new_empty(2, 3)``: as :func:`kg.empty` with ``x``'s dtype and device."""
    return creation.empty(*size, requires_grad=requires_grad, **_like_self(self, dtype, device))


def new_full(self, size, fill_value, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``x.new_full((2,), 3.5)``: filled, with ``x``'s dtype (an int ``x`` makes it 3)."""
    return creation.full(size, fill_value, requires_grad=requires_grad,
                         **_like_self(self, dtype, device))


def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``x.new_tensor(data)``: a new leaf from ``data`` with ``x``'s dtype and device.

    >>> import kernelgraph as kg
    >>> kg.tensor([1.0]).new_tensor([2, 3])
    tensor([2., 3.])
    """
    return creation.tensor(data, requires_grad=requires_grad, **_like_self(self, dtype, device))


def _install_methods():
    operators.install(Tensor, apply, binary=_binary, equality=True)
    # PyTorch prints tensors its own way; printing.py says how.
    Tensor.__repr__ = printing.tensor_repr
    Tensor.__str__ = printing.tensor_repr
    Tensor.__format__ = printing.tensor_format
    EagerNode.__repr__ = printing.grad_fn_repr  # <AddBackward0 object at 0x...>
    Tensor.__index__ = _index
    for fn in (new_ones, new_zeros, new_empty, new_full, new_tensor):
        setattr(Tensor, fn.__name__, fn)
    table.install(Tensor)


_install_methods()
