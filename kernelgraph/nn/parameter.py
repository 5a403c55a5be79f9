"""``kg.nn.Parameter``: a leaf tensor that requires grad by default and that a Module
registers when it is assigned as an attribute, as ``torch.nn.Parameter``.

A parameter *is* an eager :class:`~kernelgraph.Tensor` (``type(p) is kg.Tensor``), marked as a
parameter, so that every op and autograd take it as fast as any tensor;
``isinstance(p, kg.nn.Parameter)`` asks for the mark, and the eager printing reads it to
print PyTorch's first line. Results of ops on it are plain tensors.

>>> import kernelgraph as kg
>>> p = Parameter(kg.ones(2))
>>> p
Parameter containing:
tensor([1., 1.], requires_grad=True)
>>> isinstance(p, Parameter), isinstance(p * 2, Parameter), p.is_leaf
(True, False, True)
"""

from __future__ import annotations

import numpy as np

from ..eager import Tensor, tensor
from ..eager.tensors import _wrap

__all__ = ["Parameter", "is_parameter"]


def is_parameter(t) -> bool:
    """Whether ``t`` is a tensor marked as an ``nn.Parameter``."""
    return isinstance(t, Tensor) and getattr(t, "_param", False)


class _ParameterType(type):
    def __instancecheck__(cls, obj) -> bool:
        return is_parameter(obj)


class Parameter(metaclass=_ParameterType):
    """``Parameter(data, requires_grad=True)``: a leaf tensor sharing ``data``'s values
    (a tensor; an array or list is converted), requiring grad unless told otherwise;
    ``Parameter()`` is an empty one."""

    def __new__(cls, data=None, requires_grad: bool = True):
        if data is None:
            data = np.zeros((0,), np.float32)
        data = data._array if isinstance(data, Tensor) else tensor(data)._array
        p = _wrap(data)
        p.requires_grad_(bool(requires_grad))
        p._param = True
        return p

