"""Which Python operators map to which ops; each front-end installs them on its tensor type.

Graph nodes get no ``==``/``!=`` (TF1 keeps them as identity so nodes can be dict keys);
eager tensors compare elementwise, as in PyTorch.
"""

from __future__ import annotations

import numpy as np

from . import ops
from .ops.advanced_index import advanced_getitem
from .ops.elementwise_math import (
    floor_divide,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    remainder,
)
from .ops.linalg import matmul_torch

BINARY = {"__add__": ops.add, "__sub__": ops.sub, "__mul__": ops.mul, "__truediv__": ops.div,
          "__pow__": ops.pow, "__matmul__": ops.matmul, "__lt__": ops.less,
          "__le__": ops.less_equal, "__gt__": ops.greater, "__ge__": ops.greater_equal}
ELEMENTWISE_EQUALITY = {"__eq__": ops.equal, "__ne__": ops.not_equal}
REFLECTED = {"__radd__": ops.add, "__rsub__": ops.sub, "__rmul__": ops.mul,
             "__rtruediv__": ops.div, "__rpow__": ops.pow, "__rmatmul__": ops.matmul}
UNARY = {"__neg__": ops.neg, "__abs__": ops.abs}


def install(cls, apply, binary=None, equality=False):
    """Give ``cls`` the Python operators, each calling ``apply(op, args, attrs)``; ``binary``
    may supply a faster method factory for the plain binary operators."""
    table = dict(BINARY, **(ELEMENTWISE_EQUALITY if equality else {}))
    for name, op in table.items():
        # pow stays off the fast path: its forward checks integer powers first.
        fast = binary(op) if binary is not None and name in ("__add__", "__sub__", "__mul__",
                                                             "__truediv__") else None
        setattr(cls, name, fast or (lambda x, y, _op=op: apply(_op, (x, y), {})))
    for name, op in REFLECTED.items():
        setattr(cls, name, lambda x, y, _op=op: apply(_op, (y, x), {}))
    if binary is not None:  # 0.1 * g as fast as g * 0.1: add and mul commute, to the bit
        cls.__radd__, cls.__rmul__ = binary(ops.add), binary(ops.mul)
    for name, op in UNARY.items():
        setattr(cls, name, lambda x, _op=op: apply(_op, (x,), {}))
    # // and % as floor_divide and remainder (Python's and both frameworks' floor rules).
    cls.__floordiv__ = lambda x, y: floor_divide(x, y)
    cls.__rfloordiv__ = lambda x, y: floor_divide(y, x)
    cls.__mod__ = lambda x, y: remainder(x, y)
    cls.__rmod__ = lambda x, y: remainder(y, x)
    # & | ^ ~ on bool tensors are the logical ops; on other dtypes they are bitwise in both
    # frameworks, which kernelgraph does not have: refused, never computed as logical.
    cls.__and__ = cls.__rand__ = lambda x, y: _logical(logical_and, "&", x, y)
    cls.__or__ = cls.__ror__ = lambda x, y: _logical(logical_or, "|", x, y)
    cls.__xor__ = cls.__rxor__ = lambda x, y: _logical(logical_xor, "^", x, y)
    cls.__invert__ = lambda x: _logical(logical_not, "~", x)
    # x @ y as torch.matmul: vectors too (a 1-D operand is a row or a column, two give a dot).
    cls.__matmul__ = lambda x, y: matmul_torch(x, y)
    cls.__rmatmul__ = lambda x, y: matmul_torch(y, x)
    # Basic indexing x[1:3, ..., None, -1]: a getitem op with the index as a hashable attr.
    # Tensors, lists and masks in the index: NumPy's advanced indexing, with gather.
    def getitem(x, index):
        try:
            normalized = ops.normalize_index(index)
        except TypeError:
            return advanced_getitem(x, index)
        return apply(ops.getitem, (x,), {"index": normalized})
    cls.__getitem__ = getitem


def _logical(fn, symbol, *args):
    for a in args:
        dtype = getattr(a, "dtype", None) if not isinstance(a, bool) else None
        if dtype is not None and np.dtype(dtype) != np.bool_:
            raise TypeError(f"'{symbol}' on a tensor of dtype {dtype} is a bitwise operation, "
                            "which kernelgraph does not have; it works on bool tensors (use "
                            "a comparison such as x > 0 first)")
        if dtype is None and not isinstance(a, bool):
            raise TypeError(f"unsupported operand for '{symbol}': {type(a).__name__}")
    return fn(*args)
