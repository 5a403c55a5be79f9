"""Shape rules shared by the ops and the kernels: broadcasting of static shapes (``None``
dims unknown, shape ``None`` for an unknown rank), axis arguments checked as PyTorch checks
them, and the axes of a reduction.

A floor-0 module: the ops' shape rules (``kernelgraph.ops``) and the kernels'
(``kernelgraph.kernels``) both read it, and it reads neither.
"""

from __future__ import annotations

import numpy as np

from .errors import BroadcastError, ShapeError
from .graph import shape_str


def broadcast(a, b, what: str = "op"):
    """NumPy broadcasting of two static shapes; ``None`` dims stay unknown where they matter."""
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    out = []
    for dim, (x, y) in enumerate(zip(pa, pb)):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)  # None must be 1 or y at run time; either way the result is y
        elif y is None or x == y:
            out.append(x)
        else:
            raise BroadcastError(
                f"{what}: shapes {shape_str(a)} and {shape_str(b)} cannot be broadcast "
                f"together ({x} vs {y}): the size of tensor a ({x}) must match the size of "
                f"tensor b ({y}) at non-singleton dimension {dim}")
    return tuple(out)


def broadcast_all(shapes, what: str = "op"):
    out = shapes[0]
    for s in shapes[1:]:
        out = broadcast(out, s, what)
    return out


def compatible(declared, actual) -> bool:
    """Whether a concrete shape fits a declared one (``None`` dims and rank match anything)."""
    if declared is None:
        return True
    if len(declared) != len(actual):
        return False
    return all(d is None or d == x for d, x in zip(declared, actual))


def known(shape) -> bool:
    return shape is not None and None not in shape


# -- axis arguments, checked by type before any rank is known (PyTorch's words) -------------
def is_int(a) -> bool:
    """Whether ``a`` is an integer as PyTorch reads one: a Python or NumPy int, not a bool."""
    t = type(a)  # bool is an int to Python, not to PyTorch; np.bool_ is no np.integer
    return t is int or (t is not bool and isinstance(a, np.integer))


def axis_arg(axis, what: str) -> int:
    """``axis`` of an op that takes one axis (softmax, concat, argmax ...) as an int, or a
    TypeError naming the op and the argument.

    >>> axis_arg(1.5, "concat")
    Traceback (most recent call last):
      ...
    TypeError: concat(): argument 'axis' must be int, not float
    """
    if is_int(axis):
        return int(axis)
    raise TypeError(f"{what}(): argument 'axis' must be int, not {type(axis).__name__}")


def checked_axis(axis, ndim: int, what: str, extra: int = 0) -> int:
    """``axis`` (an int, checked by :func:`axis_arg`) normalized into ``[0, ndim + extra)``
    (``extra`` 1: a new axis, as ``stack`` inserts), or a ShapeError.

    >>> checked_axis(-1, 3, "concat"), checked_axis(3, 3, "stack", extra=1)
    (2, 3)
    """
    n = ndim + extra
    axis = axis_arg(axis, what)
    if not -n <= axis < n:
        raise ShapeError(f"{what}: axis {axis} is out of range for rank {ndim}")
    return int(axis) % n


def axes_arg(axis, what: str, rank: int | None = None):
    """``axis`` of a reduction: None (every axis), an int, or a list/tuple of ints, as a
    tuple of ints (None stays None); a TypeError names the op and the argument (PyTorch's
    words for ``amax``, which takes an int too). Given the ``rank``, an axis named twice
    (``[0, -2]`` of a matrix) is a ShapeError."""
    if axis is None:
        return None
    if is_int(axis):
        return (int(axis),)
    if not isinstance(axis, list | tuple):
        raise TypeError(f"{what}(): argument 'axis' must be tuple of ints, not "
                        f"{type(axis).__name__}")
    for i, a in enumerate(axis):
        if not is_int(a):
            raise TypeError(f"{what}(): argument 'axis' must be tuple of ints, but got "
                            f"{type(a).__name__} at pos {i + 1}")
    axes = tuple(int(a) for a in axis)
    if rank is not None:
        seen = set()
        for a in axes:
            k = a % rank if -rank <= a < rank else a
            if k in seen:
                raise ShapeError(f"{what}: axis {k} appears multiple times in the list of axes")
            seen.add(k)
    return axes


def nonempty_reduction(shape, axis, what: str, normalize: bool = False) -> None:
    """Refuse a reduction with no identity (max, argmax) that would reduce an empty
    dimension, in PyTorch's words; an empty tensor reduced over non-empty dimensions has a
    value, an empty one (``max`` of a (0, 3) tensor over axis 1 has shape (0,)). Axes are
    checked in the order given (``normalize``: named as non-negative, as PyTorch's argmax
    names them); unknown dims (``None``) are checked when they are known.

    >>> nonempty_reduction((0, 3), 1, "max")
    >>> nonempty_reduction((0, 3), (1, -2), "max")
    Traceback (most recent call last):
      ...
    kernelgraph.errors.ShapeError: max(): Expected reduction axis -2 to have non-zero size \
(the max of no elements is undefined; input shape (0, 3))
    """
    if shape is None:
        return
    context = f" (the {what} of no elements is undefined; input shape {shape_str(shape)})"
    if axis is None:
        if 0 in shape:
            raise ShapeError(f"{what}(): Expected reduction axis to be specified for "
                             f"input.numel() == 0{context}")
        return
    rank = max(len(shape), 1)
    for a in (axis,) if is_int(axis) else axis:
        if len(shape) and shape[a % rank] == 0:
            raise ShapeError(f"{what}(): Expected reduction axis {a % rank if normalize else a}"
                             f" to have non-zero size{context}")


# -- the axes of a reduction --------------------------------------------------------------
_COMMON_AXES: dict = {}  # (axis, ndim) -> normalize_axes' answer, for None or an int axis


def normalize_axes(axis, ndim: int) -> tuple:
    """Sorted positive axes to reduce; ``None`` means all. Raises for axes out of range."""
    if axis is None or type(axis) is int:  # not bool (True == 1), not a tuple holding bools
        known = _COMMON_AXES.get((axis, ndim))
        if known is None:
            known = _COMMON_AXES[(axis, ndim)] = _normalize_axes(axis, ndim)
        return known
    return _normalize_axes(axis, ndim)


def _normalize_axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    out = []
    for a in axes:
        if not isinstance(a, int | np.integer) or isinstance(a, bool):
            raise TypeError(f"axis must be an int or a tuple of ints, got {axis!r}")
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"axis {a} is out of range for a tensor of rank {ndim}")
        out.append(int(a) % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"axis {axis!r} names the same dimension twice")
    return tuple(sorted(out))


def reduced_shape(shape, axes, keepdims) -> tuple:
    """``shape`` reduced over the (normalized) ``axes``: each kept as 1 with ``keepdims``,
    else dropped."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)
