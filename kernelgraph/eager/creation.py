"""Making eager tensors from data: :func:`tensor`, :func:`zeros`, :func:`ones`,
:func:`arange`, with PyTorch's default dtypes and the exact conversions of
:func:`kernelgraph.dtypes.convert`."""

from __future__ import annotations

import numpy as np

from .. import devices
from .. import dtypes as D
from ..graph import Node
from ..ops.shape import size_arg
from .tensors import Tensor, _wrap

# kg.function's hook (see ``_tracer`` in .tensors): told when a tensor is made from data.
_tracer = None


def tensor(data, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (a number, nested list, or array).

    Python floats become float32 and ints int64 (PyTorch's defaults); arrays keep their dtype
    where kernelgraph keeps it (float32, float64, int32, int64, bool). Other dtypes are
    converted only exactly: float16 to float32, int8/int16/uint8/uint16/uint32 to int64,
    byte-swapped arrays to native order, uint64 to int64 when every value fits. What cannot
    be held exactly (an int beyond int64, complex numbers, text, objects, dates) raises
    :class:`kernelgraph.dtypes.ConversionError`; a list holding a float is read as floats,
    a big int among them too (``kg.tensor([2.5, 2**70])`` is float32, as in PyTorch). An
    explicit ``dtype`` converts as PyTorch does (floats truncated toward zero for an integer
    dtype, nonzero is True), except that an integer out of the dtype's range, or a NaN or
    infinity for an integer dtype, is refused for arrays too (PyTorch wraps an array's
    values in silence). See
    :func:`kernelgraph.dtypes.convert`. The tensor goes to ``device``, else to the
    ``with kg.device(...)`` device, else the CPU.

    >>> import kernelgraph as kg
    >>> kg.tensor([[1, 2], [3, 4]]).dtype.name, kg.tensor(2.5).dtype.name
    ('int64', 'float32')
    """
    source = None
    if isinstance(data, Tensor):
        if device is None and devices.current() is None:
            device = data.device  # a copy stays where the original lives
        source, data = data, devices.to_numpy(data.data)
    if isinstance(data, Node):
        raise TypeError(f"kg.tensor() got the graph node '{data.name}'; graph nodes have no "
                        "value until a Session runs them")
    arr = D.convert(data, dtype, what="kg.tensor")
    target = devices.device(device) if device is not None else devices.current()
    t = _wrap(arr if target is None or target.type == "cpu" else devices.transfer(arr, target))
    if requires_grad:
        t.requires_grad_(True)
    if _tracer is not None:  # made from data: a constant of a trace; from a tensor: a copy
        if source is None:
            _tracer("new", t, None)
        else:
            _tracer("copy", t, source)
    return t


def zeros(*shape, dtype=None, requires_grad=False, device=None) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype``): ``kg.zeros(2, 3)`` or
    ``kg.zeros((2, 3))``; sizes are ints, checked as PyTorch checks them."""
    shape = size_arg(shape, "zeros")
    return tensor(np.zeros(shape, D.as_dtype(dtype)), requires_grad=requires_grad,
                  device=device)


def ones(*shape, dtype=None, requires_grad=False, device=None) -> Tensor:
    """A tensor of ones (float32 unless ``dtype``): ``kg.ones(2, 3)`` or
    ``kg.ones((2, 3))``; sizes are ints, checked as PyTorch checks them."""
    shape = size_arg(shape, "ones")
    return tensor(np.ones(shape, D.as_dtype(dtype)), requires_grad=requires_grad,
                  device=device)


def arange(*args, dtype=None, device=None) -> Tensor:
    """Like ``torch.arange``: integers give int64, floats float32.

    >>> import kernelgraph as kg
    >>> kg.arange(3).dtype.name, kg.arange(0, 1, 0.5).dtype.name
    ('int64', 'float32')
    """
    arr = np.arange(*args)
    if dtype is None and arr.dtype.kind == "f":
        dtype = D.DEFAULT_FLOAT  # np.arange gives float64; PyTorch's default is float32
    return tensor(arr, dtype=dtype, device=device)
