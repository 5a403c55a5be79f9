"""Nested structures (lists, tuples and dicts of leaves): their leaves in order, and back.

``Session.run`` takes fetches in any such nesting and answers in the same one; control flow
takes and returns loop variables and branch outputs the same way. Both walk a structure
with these functions, so the order of the leaves is the same everywhere: items in order,
dicts by insertion order.

>>> flat = flatten({"loss": 1, "grads": [2, (3, 4)]})
>>> flat
[1, 2, 3, 4]
>>> pack_as({"loss": 0, "grads": [0, (0, 0)]}, [x * 10 for x in flat])
{'loss': 10, 'grads': [20, (30, 40)]}
"""

from __future__ import annotations


def is_nested(structure) -> bool:
    """Whether ``structure`` is a list, tuple or dict (else it is a leaf).

    >>> is_nested((1,)), is_nested("ab")
    (True, False)
    """
    return isinstance(structure, list | tuple | dict)


def flatten(structure) -> list:
    """The leaves of a (nested) list / tuple / dict, in order (dicts by insertion order).

    >>> flatten([1, (2, 3), {"a": 4}])
    [1, 2, 3, 4]
    """
    if isinstance(structure, list | tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    if isinstance(structure, dict):
        return [leaf for item in structure.values() for leaf in flatten(item)]
    return [structure]


def pack_as(template, flat: list):
    """``flat`` (leaves) arranged in the structure of ``template``: lists as lists, tuples
    as tuples (a namedtuple as its own type), dicts as dicts with the template's keys.

    >>> pack_as([0, (0, 0)], ["a", "b", "c"])
    ['a', ('b', 'c')]
    """
    items = iter(flat)

    def build(t):
        if isinstance(t, list):
            return [build(x) for x in t]
        if isinstance(t, tuple):
            parts = [build(x) for x in t]
            return type(t)(*parts) if hasattr(t, "_fields") else tuple(parts)
        if isinstance(t, dict):
            return {k: build(v) for k, v in t.items()}
        return next(items)

    return build(template)


def structure_of(structure):
    """A comparable description of a structure's nesting (lists and tuples count as the
    same kind of sequence; dict keys count).

    >>> structure_of([1, (2, 3)]) == structure_of((4, [5, 6]))
    True
    """
    if isinstance(structure, list | tuple):
        return ("seq", tuple(structure_of(x) for x in structure))
    if isinstance(structure, dict):
        return ("dict", tuple((k, structure_of(v)) for k, v in structure.items()))
    return "leaf"


def fill(template, values):
    """The ``values`` put in the structure of ``template``, whose leaves are indices into
    ``values`` (a template :func:`pack_as` made from ``range``): what ``Session.run`` does
    with a run's values on every call, so it indexes instead of walking an iterator.

    >>> fill([0, (1, 2), {"a": 3}], "wxyz")
    ['w', ('x', 'y'), {'a': 'z'}]
    """
    t = type(template)
    if t is int:
        return values[template]
    if t is list:
        return [fill(x, values) for x in template]
    if t is tuple:
        return tuple(fill(x, values) for x in template)
    if isinstance(template, tuple):  # a namedtuple
        return t(*(fill(x, values) for x in template))
    return {k: fill(v, values) for k, v in template.items()}
