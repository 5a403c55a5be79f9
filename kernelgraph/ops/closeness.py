"""PyTorch's ``torch.isclose`` and ``torch.allclose`` (also the methods ``x.isclose(y)``,
``x.allclose(y)``): ``|a - b| <= atol + rtol * |b|`` elementwise, with PyTorch's defaults
``rtol=1e-05, atol=1e-08`` and its NaN rule (NaNs are close only with ``equal_nan=True``).

``isclose`` is written with the public ops, so it builds a graph on graph nodes as well as it
computes on eager tensors; ``allclose`` answers a Python bool, which needs values: on a graph
node it raises an error that says so.

>>> import kernelgraph as kg
>>> kg.isclose(kg.tensor([1.0, float("nan")]), kg.tensor([1.000001, float("nan")]))
tensor([ True, False])
>>> kg.allclose(kg.tensor([1.0, 2.0]), kg.tensor([1.0, 2.00001]))
True
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..graph import Node
from .elementwise import abs as _abs
from .elementwise import add, equal, isfinite, isnan, less_equal, logical_and, logical_or, mul, sub

__all__ = ["allclose", "isclose"]

#: PyTorch's short dtype names, as its "Float did not match Double" error spells them.
_TORCH_SCALAR_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
    "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
}


def _check_dtypes(a, b) -> None:
    da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if da is None or db is None or np.dtype(da) == np.dtype(db):
        return
    na, nb = (_TORCH_SCALAR_NAMES.get(np.dtype(d).name, str(d)) for d in (da, db))
    raise RuntimeError(f"{na} did not match {nb}")


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
            equal_nan: bool = False):
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (a bool tensor), as
    ``torch.isclose``; equal values (infinities too) are close, NaNs only with ``equal_nan``.
    Both tensors must have the same dtype (PyTorch's "Float did not match Double").

    >>> import kernelgraph as kg
    >>> kg.isclose(kg.tensor([1.0, 2.0]), kg.tensor([1.1, 2.0]), atol=0.2)
    tensor([True, True])
    """
    _check_dtypes(input, other)
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = equal(input, other)
    if equal_nan:
        close = logical_or(close, logical_and(isnan(input), isnan(other)))
    if np.dtype(getattr(input, "dtype", D.float32)).kind == "b":
        return close
    diff = _abs(sub(input, other))
    allowed = add(atol, _abs(mul(rtol, other)))
    return logical_or(close, logical_and(isfinite(diff), less_equal(diff, allowed)))


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
             equal_nan: bool = False) -> bool:
    """Whether every element of ``input`` is close to ``other``'s (see :func:`isclose`), as
    ``torch.allclose``: a Python bool, so eager tensors only.

    >>> import kernelgraph as kg
    >>> a, b = kg.tensor([1.0, 2.0]), kg.tensor([1.0, 2.1])
    >>> kg.allclose(a, b), kg.allclose(a, b, atol=0.2)
    (False, True)
    """
    if isinstance(input, Node) or isinstance(other, Node):
        raise TypeError("allclose() answers a Python bool, which needs values: a graph node "
                        "has none until Session.run (use isclose() and reduce_all in a graph)")
    close = isclose(input, other, rtol, atol, equal_nan)
    if hasattr(close, "cpu"):  # an eager tensor, maybe on a GPU: its values on the host
        close = close.cpu().numpy()
    return bool(np.all(close))
