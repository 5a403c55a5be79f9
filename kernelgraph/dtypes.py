"""The dtypes kernelgraph supports and how they combine.

Dtypes are plain NumPy dtype objects, so ``kg.float32 is np.dtype('float32')``. Promotion
follows PyTorch rather than NumPy: an integer tensor meeting a float tensor takes the float
dtype (NumPy would widen int32 + float32 to float64), and a Python scalar never widens a
tensor (``float32_tensor * 2.0`` stays float32).
"""

from __future__ import annotations

import numpy as np

float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
bool_ = np.dtype(np.bool_)

SUPPORTED = (float32, float64, int32, int64, bool_)
FLOATS = frozenset((float32, float64))
INTS = frozenset((int32, int64))
DEFAULT_FLOAT = float32
DEFAULT_INT = int64

_ALIASES = {
    float: float32, int: int64, bool: bool_,
    "float": float32, "int": int64, "bool": bool_, "float32": float32, "float64": float64,
    "int32": int32, "int64": int64, "double": float64,
}


def as_dtype(value) -> np.dtype:
    """Return the kernelgraph dtype named by ``value`` (a dtype, a name, or a Python type).

    >>> as_dtype("float32") is float32
    True
    """
    if id(value) in _CANONICAL:
        return value
    if value is None:
        return DEFAULT_FLOAT
    hit = _ALIASES.get(value) if isinstance(value, str | type) else None
    if hit is not None:
        return hit
    try:
        dt = np.dtype(value)
    except TypeError:
        raise TypeError(f"expected a dtype such as kg.float32, got {value!r}") from None
    if dt not in SUPPORTED:
        names = ", ".join(d.name for d in SUPPORTED)
        raise TypeError(f"dtype {dt.name} is not supported; expected one of {names}")
    return np.dtype(dt.name)  # the canonical instance, so `is` comparisons work


_CANONICAL = {id(d) for d in SUPPORTED}


def is_floating(dt) -> bool:
    return dt in FLOATS


def _kind_rank(dt):
    return (0 if dt is bool_ else 1 if dt in INTS else 2), dt.itemsize


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """The dtype of a binary op between tensors of dtypes ``a`` and ``b`` (PyTorch rules)."""
    if a is b:
        return a
    return max(a, b, key=_kind_rank)


def scalar_dtype(value) -> np.dtype | None:
    """Dtype a bare Python scalar would take on its own, or None if it is not a scalar."""
    t = type(value)
    if t is bool or t is np.bool_:
        return bool_
    if t is int or isinstance(value, np.integer):
        return DEFAULT_INT
    if t is float or isinstance(value, np.floating):
        return DEFAULT_FLOAT
    return None


def promote_with_scalar(tensor_dtype: np.dtype, value) -> np.dtype:
    """A Python scalar is 'weak': it keeps the tensor's dtype unless it changes its kind."""
    sd = scalar_dtype(value)
    if sd is None:
        raise TypeError(f"expected a tensor or a Python number, got {type(value).__name__}")
    if _kind_rank(sd)[0] <= _kind_rank(tensor_dtype)[0]:
        return tensor_dtype
    return DEFAULT_FLOAT if sd is DEFAULT_FLOAT else DEFAULT_INT
