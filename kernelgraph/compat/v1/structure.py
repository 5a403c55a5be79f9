"""The structure of a ``tf.data`` element: tuples (namedtuples too) and dicts nest, and
everything else is one tensor, a Python list included (as in TF's ``tf.data``, where
``from_tensor_slices([1, 2, 3])`` is one tensor of three rows). Dict items are ordered by
key, as TF's ``nest`` orders them."""

from __future__ import annotations


class Spec:
    """One component of an element: its ``dtype`` and ``shape`` (None: unknown rank)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, dims(shape)

    def __iter__(self):
        return iter((self.dtype, self.shape))

    def __repr__(self):
        return f"Spec({self.dtype}, {self.shape})"


def dims(shape):
    """A shape (a TensorShape, a list or tuple of ints, Nones or -1s, or None) as a tuple of
    ints and Nones, or None for an unknown rank.

    >>> dims([None, -1, 3]), dims(None)
    ((None, None, 3), None)
    """
    if shape is None:
        return None
    if hasattr(shape, "as_list"):  # a TensorShape
        if getattr(shape, "dims", 0) is None:
            return None
        shape = shape.as_list()
    return tuple(None if d is None or int(d) == -1 else int(d) for d in shape)


def is_structure(value) -> bool:
    """Whether ``value`` nests (a tuple or a dict).

    >>> is_structure((1, 2)), is_structure([1, 2])
    (True, False)
    """
    return isinstance(value, tuple | dict)


def flat(value) -> list:
    """The components of ``value`` in order (dicts by sorted key).

    >>> flat(({"b": 1, "a": [2, 3]}, 4))
    [[2, 3], 1, 4]
    """
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in flat(item)]
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in flat(value[key])]
    return [value]


def flat_up_to(template, value) -> list:
    """``value``'s parts at the components of ``template`` (a shape, itself a tuple or a
    list, is one part).

    >>> flat_up_to((0, {"a": 0}), ((2, 3), {"a": [4]}))
    [(2, 3), [4]]
    """
    if isinstance(template, tuple):
        if not isinstance(value, tuple | list) or len(value) != len(template):
            raise ValueError(f"The two structures don't have the same sequence length: "
                             f"{template} and {value}")
        return [leaf for t, v in zip(template, value) for leaf in flat_up_to(t, v)]
    if isinstance(template, dict):
        return [leaf for key in sorted(template) for leaf in flat_up_to(template[key],
                                                                        value[key])]
    return [value]


def pack(template, leaves: list):
    """``leaves`` arranged in the structure of ``template``.

    >>> pack(({"b": 0, "a": 0}, 0), [1, 2, 3])
    ({'b': 2, 'a': 1}, 3)
    """
    items = iter(leaves)

    def build(t):
        if isinstance(t, tuple):
            parts = [build(x) for x in t]
            return type(t)(*parts) if hasattr(t, "_fields") else tuple(parts)
        if isinstance(t, dict):
            made = {key: build(t[key]) for key in sorted(t)}
            return {key: made[key] for key in t}
        return next(items)

    return build(template)


__all__ = ["Spec", "dims", "flat", "flat_up_to", "is_structure", "pack"]
