"""PyTorch's bitwise ops on integers and bools, broadcasting: ``bitwise_and``,
``bitwise_or``, ``bitwise_xor`` (also tensor methods). Floats are refused in PyTorch's words;
on bools they are the logical and/or/xor. No gradient (integer results).

>>> import kernelgraph as kg
>>> kg.bitwise_and(kg.tensor([12, 10]), kg.tensor([10, 6])).tolist()
[8, 2]
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..kernels import bitwise as K
from .casting import scalar_type_name
from .elementwise import binary
from .elementwise_math import NotImplementedForDtype

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor"]


def _integers(name: str):
    def rule(dt):
        if D.as_dtype(dt) in D.FLOATS:
            raise NotImplementedForDtype(f'"{name}_cpu" not implemented for '
                                         f"'{scalar_type_name(dt)}'")
        return dt
    return rule


def _card(name, loops, reference, what):
    return binary(name, loops, _integers(name), None,
                  f"The bitwise {what} of two integer or bool tensors, broadcasting "
                  f"(torch.{name}); no gradient.", ("method",), reference)


bitwise_and = _card("bitwise_and", K.bitwise_and, np.bitwise_and, "and")
bitwise_or = _card("bitwise_or", K.bitwise_or, np.bitwise_or, "or")
bitwise_xor = _card("bitwise_xor", K.bitwise_xor, np.bitwise_xor, "xor")
