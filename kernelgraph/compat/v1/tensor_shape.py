"""TF1's static shapes: :class:`TensorShape` and :class:`Dimension`.

A graph node keeps its shape as a plain tuple of ints and ``None`` (unknown sizes); TF1 code
reads it as a ``TensorShape`` (``x.get_shape().as_list()``, ``x.shape[1].value``,
``x.shape.ndims``). A TensorShape *is* that tuple (a subclass), so it compares, hashes and
unpacks as the tuple does, while indexing gives TF1's :class:`Dimension` objects, which
print ``?`` when unknown and do arithmetic with ints as TF1's do.
"""

from __future__ import annotations

import operator


class Dimension:
    """One size of a :class:`TensorShape`: an int, or unknown (``value`` None).

    >>> d = Dimension(3)
    >>> d.value, d * 2, str(Dimension(None)), d == 3, int(d)
    (3, Dimension(6), '?', True, 3)
    """

    __slots__ = ("value",)

    def __init__(self, value=None):
        if isinstance(value, Dimension):
            value = value.value
        elif value is not None:
            if not hasattr(value, "__index__") or isinstance(value, bool):
                raise TypeError(f"Dimension value must be integer or None or have an "
                                f"__index__ method, got value '{value!r}' with type "
                                f"'{type(value)}'")
            value = operator.index(value)
            if value < 0:
                raise ValueError(f"Dimension {value} must be >= 0")
        self.value = value

    def __repr__(self):
        return f"Dimension({self.value})"

    def __str__(self):
        return "?" if self.value is None else str(self.value)

    def __int__(self):
        return self.value  # TypeError for an unknown size, as in TF1

    def __index__(self):
        return self.value

    def __hash__(self):
        return hash(self.value)

    def __eq__(self, other):
        other = _value(other)
        if self.value is None or other is None:
            return None  # TF1: an unknown size is neither equal nor unequal
        return self.value == other

    def __ne__(self, other):
        other = _value(other)
        if self.value is None or other is None:
            return None
        return self.value != other

    def _arith(self, other, fn):
        other = _value(other)
        if self.value is None or other is None:
            return Dimension(None)
        return Dimension(fn(self.value, other))

    def __add__(self, other):
        return self._arith(other, operator.add)

    __radd__ = __add__

    def __sub__(self, other):
        return self._arith(other, operator.sub)

    def __rsub__(self, other):
        return Dimension(other)._arith(self, operator.sub)

    def __mul__(self, other):
        return self._arith(other, operator.mul)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return self._arith(other, operator.floordiv)

    def __mod__(self, other):
        return self._arith(other, operator.mod)

    def __lt__(self, other):
        other = _value(other)
        return None if self.value is None or other is None else self.value < other

    def __le__(self, other):
        other = _value(other)
        return None if self.value is None or other is None else self.value <= other

    def __gt__(self, other):
        other = _value(other)
        return None if self.value is None or other is None else self.value > other

    def __ge__(self, other):
        other = _value(other)
        return None if self.value is None or other is None else self.value >= other

    def is_compatible_with(self, other) -> bool:
        other = _value(other)
        return self.value is None or other is None or self.value == other

    def merge_with(self, other) -> Dimension:
        other = _value(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {Dimension(other)} are not compatible")
        return Dimension(self.value if self.value is not None else other)


def _value(d):
    return d.value if isinstance(d, Dimension) else d


def _dims(dims) -> tuple:
    if isinstance(dims, TensorShape):
        return tuple(tuple.__iter__(dims))
    if dims is None:
        return ()
    if hasattr(dims, "__index__") and not isinstance(dims, bool):
        dims = (dims,)
    out = []
    for d in dims:
        d = _value(d)
        out.append(None if d is None or (hasattr(d, "__index__") and int(d) == -1)
                   else Dimension(d).value)
    return tuple(out)


class TensorShape(tuple):
    """TF1's ``tf.TensorShape``: a shape whose sizes may be unknown, or whose rank may be.

    >>> s = TensorShape([None, 3])
    >>> s.as_list(), s.ndims, s[1], s[1].value, str(s), s == [None, 3]
    ([None, 3], 2, Dimension(3), 3, '(?, 3)', True)
    >>> TensorShape(None).ndims is None
    True
    """

    def __new__(cls, dims=()):
        self = super().__new__(cls, _dims(dims))
        self._unknown = dims is None or (isinstance(dims, TensorShape) and dims._unknown)
        return self

    # -- reading -----------------------------------------------------------------------------
    @property
    def ndims(self):
        return None if self._unknown else tuple.__len__(self)

    rank = ndims

    @property
    def dims(self):
        return None if self._unknown else [Dimension(d) for d in tuple.__iter__(self)]

    def as_list(self) -> list:
        if self._unknown:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(tuple.__iter__(self))

    def __len__(self):
        if self._unknown:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return tuple.__len__(self)

    def __iter__(self):
        if self._unknown:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter([Dimension(d) for d in tuple.__iter__(self)])

    def __getitem__(self, key):
        if self._unknown:
            return TensorShape(None) if isinstance(key, slice) else Dimension(None)
        item = tuple.__getitem__(self, key)
        return TensorShape(item) if isinstance(key, slice) else Dimension(item)

    def __repr__(self):
        if self._unknown:
            return "TensorShape(None)"
        return f"TensorShape({[Dimension(d) for d in tuple.__iter__(self)]})"

    def __str__(self):
        if self._unknown:
            return "<unknown>"
        dims = ["?" if d is None else str(d) for d in tuple.__iter__(self)]
        return f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"

    def __eq__(self, other):
        try:
            other = TensorShape(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._unknown or other._unknown:
            return self._unknown and other._unknown
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = tuple.__hash__

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in tuple.__iter__(self):
            n *= d
        return n

    def is_fully_defined(self) -> bool:
        return not self._unknown and None not in tuple.__iter__(self)

    def is_compatible_with(self, other) -> bool:
        other = as_shape(other)
        if self._unknown or other._unknown:
            return True
        return tuple.__len__(self) == tuple.__len__(other) and all(
            a is None or b is None or a == b
            for a, b in zip(tuple.__iter__(self), tuple.__iter__(other)))

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other) -> TensorShape:
        other = as_shape(other)
        if self._unknown:
            return other
        if other._unknown:
            return self
        self.assert_is_compatible_with(other)
        return TensorShape([a if a is not None else b
                            for a, b in zip(tuple.__iter__(self), tuple.__iter__(other))])

    def concatenate(self, other) -> TensorShape:
        other = as_shape(other)
        if self._unknown or other._unknown:
            return TensorShape(None)
        return TensorShape(tuple.__add__(self, other))

    def with_rank(self, rank: int) -> TensorShape:
        if self._unknown:
            return TensorShape([None] * rank)
        if tuple.__len__(self) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def assert_has_rank(self, rank: int) -> None:
        self.with_rank(rank)

    def as_tuple(self):
        """The plain tuple (kernelgraph's own form of a shape); None for an unknown rank."""
        return None if self._unknown else tuple(tuple.__iter__(self))


def as_shape(shape) -> TensorShape:
    """``shape`` (a TensorShape, a list or tuple of sizes, or None) as a TensorShape."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None) -> TensorShape:
    """A shape of unknown sizes (of ``rank`` dims), or of unknown rank."""
    return TensorShape(None) if rank is None else TensorShape([None] * rank)


__all__ = ["Dimension", "TensorShape", "as_shape", "unknown_shape"]
