"""TF1's ``tf.DType``: what a TF1 tensor's ``dtype`` is (:mod:`.face`)."""

from __future__ import annotations

import numpy as np

from ...dtypes import (
    as_dtype,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
)


class DType:
    """TF1's ``tf.DType``, as a TF1 program reads ``t.dtype``: kernelgraph's dtype (a NumPy
    dtype, its ``.dtype``) with TF1's attributes and printing (``<dtype: 'float32'>``).
    It equals the NumPy dtype, its name and other DTypes of it, and ``as_dtype`` and NumPy
    read it as that dtype, so it can be handed back to any op.

    >>> d = DType(float32)
    >>> str(d), repr(d), d == float32, d.is_floating, d.as_numpy_dtype, d.base_dtype is d
    ("<dtype: 'float32'>", 'tf.float32', True, True, <class 'numpy.float32'>, True)
    >>> DType("float32") is d
    True
    """

    __slots__ = ("dtype",)
    _made: dict = {}  # one DType per dtype, as in TF1 (``t.dtype is tf.float32``)

    def __new__(cls, dtype):
        dtype = as_dtype(dtype)
        made = cls._made.get(dtype)
        if made is None:
            made = cls._made[dtype] = object.__new__(cls)
            made.dtype = dtype
        return made

    def __init__(self, dtype):
        pass  # __new__ gave the one DType of this dtype

    @property
    def name(self) -> str:
        return "string" if self.dtype is string else self.dtype.name

    @property
    def base_dtype(self) -> DType:
        return self

    real_dtype = base_dtype

    @property
    def as_numpy_dtype(self):
        return self.dtype.type

    @property
    def as_datatype_enum(self) -> int:
        return {float32: 1, float64: 2, int32: 3, uint8: 4, int16: 5, int8: 6, string: 7,
                int64: 9, bool_: 10, float16: 19}[self.dtype]

    @property
    def is_floating(self) -> bool:
        return self.dtype.kind == "f"

    @property
    def is_integer(self) -> bool:
        return self.dtype.kind in "iu"

    @property
    def is_bool(self) -> bool:
        return self.dtype is bool_

    @property
    def is_unsigned(self) -> bool:
        return self.dtype.kind == "u"

    @property
    def is_complex(self) -> bool:
        return False

    @property
    def is_numpy_compatible(self) -> bool:
        return True

    @property
    def size(self) -> int:
        return self.dtype.itemsize

    @property
    def min(self):
        if self.dtype.kind == "f":
            return float(np.finfo(self.dtype).min)
        return False if self.dtype is bool_ else int(np.iinfo(self.dtype).min)

    @property
    def max(self):
        if self.dtype.kind == "f":
            return float(np.finfo(self.dtype).max)
        return True if self.dtype is bool_ else int(np.iinfo(self.dtype).max)

    def is_compatible_with(self, other) -> bool:
        return self == other

    def __eq__(self, other):
        if isinstance(other, DType):
            return other.dtype is self.dtype
        try:
            return as_dtype(other) is self.dtype
        except (TypeError, ValueError):
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return f"tf.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"


#: TF1's dtype constants (``tf.float32`` ...), each the one DType of its dtype.
CONSTANTS = {name: DType(dt) for name, dt in (
    ("float16", float16), ("half", float16), ("float32", float32), ("float64", float64),
    ("double", float64), ("int8", int8), ("int16", int16), ("int32", int32),
    ("int64", int64), ("uint8", uint8), ("bool", bool_), ("string", string))}

