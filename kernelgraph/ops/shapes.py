"""Shape rules that work with unknown dims (``None``) and unknown rank (shape ``None``)."""

from __future__ import annotations

from ..errors import ShapeError
from ..graph import shape_str


def broadcast(a, b, what: str = "op"):
    """NumPy broadcasting of two static shapes; ``None`` dims stay unknown where they matter."""
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(pa, pb):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)  # None must be 1 or y at run time; either way the result is y
        elif y is None or x == y:
            out.append(x)
        else:
            raise ShapeError(f"{what}: shapes {shape_str(a)} and {shape_str(b)} cannot be "
                             f"broadcast together ({x} vs {y})")
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
