"""Where :class:`~.tensors.Tensor` gets every method its class body does not define:
:func:`install`, called once by the package, is the one place that sets them. Also the few
methods defined here (``new_ones`` ... and ``__index__``)."""

from __future__ import annotations

from .. import operators
from ..ops import methods as table
from . import backprop, creation, inplace, legacy, printing, tensor_extras
from .dispatch import _binary, apply
from .tensors import EagerNode, Tensor


def install() -> None:
    """Give :class:`Tensor` its methods (called once, by ``kernelgraph.eager``):

    - the Python operators, the plain binary ones on the hot path of
      :func:`.dispatch._binary` (:func:`kernelgraph.operators.install`);
    - ``backward`` (:mod:`.backprop`); ``repr``/``str``/``format``, PyTorch's printing,
      also of a parameter (:mod:`.printing`); ``kg.Tensor(data)`` (:mod:`.legacy`);
    - the in-place methods and operators (``add_``, ``zero_``, ``+=``, ``x[i] = v`` ...:
      :data:`.inplace.METHODS`), ``new_ones`` ... and ``__index__`` (here);
    - last, the methods of the table both kinds of tensor share (``exp``, ``sum``,
      ``reshape`` ...: :func:`kernelgraph.ops.methods.install`), which never replaces a
      method set before, and adds the methods of op cards registered later (``refresh``).
    """
    operators.install(Tensor, apply, binary=_binary, equality=True)
    Tensor.backward = backprop.tensor_backward
    Tensor.__repr__ = Tensor.__str__ = printing.tensor_repr
    Tensor.__format__ = printing.tensor_format
    EagerNode.__repr__ = printing.grad_fn_repr  # <AddBackward0 object at 0x...>
    Tensor.__init__ = legacy.tensor_init
    for name, method in inplace.METHODS.items():
        setattr(Tensor, name, method)
    for name, method in tensor_extras.METHODS.items():  # stride, resize_, scatter_ ...
        setattr(Tensor, name, method)
    Tensor.__index__ = _index
    for fn in (new_ones, new_zeros, new_empty, new_full, new_tensor):
        setattr(Tensor, fn.__name__, fn)
    table.install(Tensor)


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

