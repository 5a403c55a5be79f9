"""PyTorch's older ways to make a tensor: ``kg.Tensor(data)`` / ``kg.Tensor(2, 3)`` and the
typed constructors ``kg.FloatTensor``, ``kg.DoubleTensor``, ``kg.LongTensor`` ... which are
also what ``isinstance(t, kg.FloatTensor)`` asks about (a float32 tensor on the CPU).

>>> import kernelgraph as kg
>>> kg.Tensor([1, 2]).tolist(), kg.Tensor(2, 3).shape, kg.LongTensor([1, 2]).dtype.name
([1.0, 2.0], torch.Size([2, 3]), 'int64')
>>> isinstance(kg.ones(2), kg.FloatTensor), isinstance(kg.ones(2), kg.LongTensor)
(True, False)
"""

from __future__ import annotations

import numpy as np

from .. import devices
from .. import dtypes as D
from ..errors import shown
from .creation import tensor
from .tensors import Tensor

__all__ = ["BoolTensor", "ByteTensor", "DoubleTensor", "FloatTensor", "IntTensor",
           "LongTensor"]


def _is_size(args) -> bool:
    return bool(args) and all(isinstance(a, int | np.integer) and not isinstance(a, bool)
                              for a in args)


def _make(args, dtype, what: str, device=None):
    """The array ``what(*args)`` holds: data (a list, tuple, array or tensor) converted to
    ``dtype``, or zeros of the sizes ``args`` (PyTorch leaves them uninitialised)."""
    if not args:
        data = np.zeros((0,), dtype)
    elif _is_size(args):
        if any(a < 0 for a in args):
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{min(args)}: {list(args)}")
        data = np.zeros(tuple(int(a) for a in args), dtype)
    elif len(args) == 1 and isinstance(args[0], list | tuple | np.ndarray | Tensor):
        (value,) = args
        if isinstance(value, Tensor):
            value = devices.to_numpy(value._array)
        data = np.asarray(value).astype(dtype) if not isinstance(value, list | tuple) else \
            tensor(value, dtype=D.float64 if dtype.kind == "f" else None)._array.astype(dtype)
    elif len(args) == 1:
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
    else:
        raise TypeError(f"{what}(): expected sizes (ints) or one sequence of data, got "
                        f"{shown(args)}")
    return data if device is None else devices.transfer(data, devices.device(device))


def tensor_init(self, *args, device=None):
    """``kg.Tensor(data)``: a float32 copy of ``data``; ``kg.Tensor(2, 3)``: zeros of that
    shape; ``kg.Tensor(t)`` of a tensor: the same values and dtype (PyTorch's alias).
    (``Tensor.__init__``, installed by :func:`.methods.install`.)"""
    if len(args) == 1 and isinstance(args[0], Tensor):
        data = args[0]._array
    else:
        data = _make(args, np.dtype(np.float32), "Tensor", device)
    self._array = data
    self.requires_grad = False
    self._node = None



class _TypedMeta(type):
    """``isinstance(t, kg.FloatTensor)``: t is a Tensor of that dtype on the CPU."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and not obj.is_cuda

    def __call__(cls, *args, device=None):
        return tensor(_make(args, cls.dtype, cls.__name__, None), device=device)


def _typed(name: str, dtype) -> type:
    return _TypedMeta(name, (), {"dtype": np.dtype(dtype), "__module__": "kernelgraph",
                                 "__doc__": f"A {np.dtype(dtype).name} tensor: "
                                            f"``kg.{name}([1, 2])`` or ``kg.{name}(2, 3)``."})


FloatTensor = _typed("FloatTensor", np.float32)
DoubleTensor = _typed("DoubleTensor", np.float64)
LongTensor = _typed("LongTensor", np.int64)
IntTensor = _typed("IntTensor", np.int32)
BoolTensor = _typed("BoolTensor", np.bool_)
ByteTensor = _typed("ByteTensor", np.uint8)
