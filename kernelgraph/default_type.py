"""``torch.set_default_tensor_type``: the type new float tensors get.

kernelgraph's default floating dtype is float32 and stays so; what this function can change
is the default *device*: ``set_default_tensor_type(torch.cuda.FloatTensor)`` (or the string
``'torch.cuda.FloatTensor'``) makes new tensors CUDA tensors, as in PyTorch, and raises
``TypeError`` where there is no CUDA device (PyTorch's message on such a machine);
``set_default_tensor_type(torch.FloatTensor)`` makes them CPU float32 tensors again. A
float64 type (``torch.DoubleTensor``) is refused with a clear error, since kernelgraph has no
default-dtype switch, and a non-float type raises ``TypeError`` as in PyTorch.

>>> import kernelgraph as kg
>>> kg.set_default_tensor_type(kg.FloatTensor)
>>> kg.zeros(1).dtype, kg.zeros(1).device
(dtype('float32'), device('cpu'))
"""

from __future__ import annotations

import numpy as np

from . import cuda, devices
from .eager import legacy

__all__ = ["set_default_tensor_type"]

_CPU = {f"torch.{n}": getattr(legacy, n) for n in legacy.__all__}
_CUDA = {f"torch.cuda.{n}": getattr(cuda, n) for n in legacy.__all__}


def set_default_tensor_type(t) -> None:
    """Make ``t`` (``torch.FloatTensor``, ``torch.cuda.FloatTensor`` or their names) the type
    of new float tensors (see the module's docstring)."""
    if isinstance(t, str):
        known = _CPU.get(t) or _CUDA.get(t)
        if known is None:
            raise TypeError(f"set_default_tensor_type: unknown tensor type {t!r}; expected "
                            f"'torch.FloatTensor' or 'torch.cuda.FloatTensor'")
        t = known
    on_cuda = t in _CUDA.values()
    if not on_cuda and t not in _CPU.values():
        raise TypeError(f"set_default_tensor_type expects a tensor type such as "
                        f"torch.FloatTensor, got {t!r}")
    if t.dtype.kind != "f":
        raise TypeError("only floating-point types are supported as the default type")
    if on_cuda and not cuda.is_available():
        raise TypeError(f"type torch.cuda.{t.__name__} not available. {cuda._NO_CUDA}.")
    if t.dtype != np.float32:
        raise TypeError(f"kernelgraph's default floating dtype is float32 and cannot be "
                        f"changed; got {t.__name__} (create float64 tensors with "
                        f"dtype=torch.float64)")
    devices.set_default_device(f"cuda:{cuda.current_device()}" if on_cuda else "cpu")
