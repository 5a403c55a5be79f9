"""PyTorch's ``out=``: the one helper that writes an eager op's result into a tensor the
caller owns, and the casting rule it follows (:func:`can_cast`, PyTorch's ``torch.can_cast``).

Both eager ops (``kg.add(x, y, out=r)``, :mod:`kernelgraph.eager.dispatch`) and composite
functions (``kg.matmul``, :mod:`kernelgraph.ops.linalg`) call :func:`write_out`, so ``out=``
means one thing everywhere: autograd refuses it where it would have to record (PyTorch
records no ``out=`` write), a result dtype that cannot be cast safely into ``out``'s dtype
is refused in PyTorch's words (a float result is never truncated into an integer ``out``),
and ``out`` is returned. It lives on the ops floor, below the eager front-end, so it reads
tensors only through their own attributes (``requires_grad``, ``dtype``, ``copy_``).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from .elementwise import identity

# PyTorch's kinds in the order a value may move up: bool -> integers -> floats (a cast down
# the order would lose what the value means; within a kind, any width is allowed).
_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2}

#: PyTorch's ScalarType names of the dtypes, as its messages print them.
SCALAR_TYPE_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                     "int32": "Int", "int64": "Long", "float16": "Half", "float32": "Float",
                     "float64": "Double"}


def can_cast(from_, to) -> bool:
    """Whether PyTorch's casting rule allows a value of dtype ``from_`` to be written into a
    tensor of dtype ``to`` (``torch.can_cast``): never down the order bool < integer <
    float, any width within one kind (float64 -> float32 and int64 -> int32 are allowed).

    >>> import kernelgraph as kg
    >>> kg.can_cast(kg.float32, kg.int64), kg.can_cast(kg.int64, kg.float32)
    (False, True)
    >>> kg.can_cast(kg.float64, kg.float32), kg.can_cast(kg.int64, kg.bool_)
    (True, False)
    """
    a, b = D.as_dtype(from_), D.as_dtype(to)
    ka, kb = _KIND_ORDER.get(a.kind), _KIND_ORDER.get(b.kind)
    if ka is None or kb is None:
        raise TypeError(f"can_cast() takes two numeric dtypes, got {a.name} and {b.name}")
    return ka <= kb


def scalar_type_name(dt) -> str:
    """PyTorch's name of a dtype in its messages: ``'Float'`` for float32, ``'Long'`` for
    int64."""
    name = np.dtype(dt).name
    return SCALAR_TYPE_NAMES.get(name, name.capitalize())


def write_out(what: str, result, out, inputs, *, grad_enabled: bool | None,
              differentiable: bool = True, exact_dtype: str | None = None):
    """Copy the eager tensor ``result`` of ``what`` (``"add"``) on ``inputs`` into ``out``
    and return ``out``, as PyTorch's ``out=`` does:

    - a differentiable op with grad mode on (``grad_enabled``) and ``out`` or any input
      requiring grad is refused, in PyTorch's words (an ``out=`` write is never recorded);
      ``grad_enabled=None`` where the caller cannot read the mode itself: ``result`` then
      says whether an input was recorded, and the front-end is asked about ``out``;
    - a result dtype :func:`can_cast` refuses for ``out``'s dtype is a RuntimeError
      (``result type Float can't be cast to the desired output type Long``), or, where
      ``exact_dtype`` is given (PyTorch's matmul takes no cast at all), any other dtype is
      refused with that message prefix;
    - a shape other than the result's is refused (PyTorch resizes ``out`` with a warning;
      kernelgraph asks for the right shape).
    """
    if not hasattr(out, "copy_") or not hasattr(out, "requires_grad"):
        raise TypeError(f"{what}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if differentiable and _records(result, out, inputs, grad_enabled):
        raise RuntimeError(f"{what}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    if exact_dtype is not None:
        if out.dtype != result.dtype:
            raise RuntimeError(exact_dtype)
    elif not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {scalar_type_name(result.dtype)} can't be cast to the "
                           f"desired output type {scalar_type_name(out.dtype)}")
    if tuple(out.shape) != tuple(result.shape):
        raise RuntimeError(f"{what}(): out= has shape {list(out.shape)} but the result has "
                           f"{list(result.shape)}; kernelgraph does not resize out= (PyTorch "
                           "does, with a warning): pass a tensor of the result's shape")
    out.copy_(result)  # not recorded: nothing here requires grad, or grad mode is off
    return out


def _records(result, out, inputs, grad_enabled: bool | None) -> bool:
    """Whether autograd would have to record this ``out=`` write (grad mode on, and ``out``
    or an input requiring grad)."""
    if grad_enabled is None:
        if getattr(result, "requires_grad", False):  # recorded: grad mode on, an input needs
            return True
        if not out.requires_grad:
            return False
        # The eager front-end records an op on ``out`` exactly when grad mode is on.
        return bool(identity(out).requires_grad)
    return grad_enabled and (out.requires_grad or any(getattr(t, "requires_grad", False)
                                                       for t in inputs))


__all__ = ["can_cast"]
