"""PyTorch's reductions, with PyTorch's signatures, over the reduction cards (:mod:`.reduce`).

``kg.max`` is ``torch.max``: ``max(x)`` is a 0-d tensor (a gradient split evenly between
ties), ``max(x, dim)`` the named tuple ``(values, indices)`` (a gradient to the chosen
index alone), ``max(x, other)`` the elementwise maximum. The TF-style keyword ``axis=``
(with ``keepdims=``) still gives the values alone, as ``kg.reduce_max`` does. ``sum`` and
``mean`` take a dim, a tuple of dims, ``keepdim`` and ``dtype``; ``std``/``var`` are
unbiased by default (``correction=1``), as PyTorch 2's. Every function works in both modes:
on eager tensors it computes, on graph nodes it adds nodes.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence

import numpy as np

from .. import devices
from .. import dtypes as D
from ..graph import Node
from .elementwise import (
    abs,
    add,
    cast,
    div,
    exp,
    less,
    log,
    maximum,
    minimum,
    mul,
    ones_like,
    pow,
    sqrt,
    sub,
)
from .elementwise import equal as _equal_op
from .elementwise import where as _where
from .indexing import argmax as _argmax
from .indexing import clip as _clip
from .reduce import all as _all
from .reduce import any as _any
from .reduce import argmin as _argmin
from .reduce import cumsum as _cumsum
from .reduce import max as _amax
from .reduce import max_dim, min_dim
from .reduce import mean as _mean
from .reduce import min as _amin
from .reduce import prod as _prod
from .reduce import sum as _sum

# The functions (also tensor methods, ops/methods.py); ``return_types`` is exported apart.
__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "clamp", "clip", "cumsum", "logsumexp",
           "max", "mean", "min", "norm", "prod", "std", "std_mean", "sum", "var", "var_mean",
           "equal"]


class _ReturnType(tuple):
    """A named pair like PyTorch's ``torch.return_types.max``: ``.values``, ``.indices``,
    unpacking and indexing, and PyTorch's repr."""

    __slots__ = ()
    _name = "return_type"

    def __new__(cls, values, indices):
        return super().__new__(cls, (values, indices))

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]

    def __repr__(self):
        return (f"torch.return_types.{self._name}(\nvalues={self[0]!r},\n"
                f"indices={self[1]!r})")


class return_types:  # noqa: N801 - PyTorch's namespace, torch.return_types
    """The named tuples of the reductions that return values and indices."""

    class max(_ReturnType):  # noqa: N801
        __slots__ = ()
        _name = "max"

    class min(_ReturnType):  # noqa: N801
        __slots__ = ()
        _name = "min"

    class topk(_ReturnType):  # noqa: N801
        __slots__ = ()
        _name = "topk"

    class median(_ReturnType):  # noqa: N801
        __slots__ = ()
        _name = "median"


def _is_dim(v) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool)


def _attrs(dim, keepdim, axis, keepdims, name, several=True):
    """The card's ``axis``/``keepdims`` from PyTorch's ``dim``/``keepdim`` or TF's names (a
    list of dims as a tuple where ``several`` may be reduced; else the card refuses it)."""
    if dim is not None and axis is not None:
        raise TypeError("give dim (PyTorch's name) or axis (TF's), not both")
    axis = dim if dim is not None else axis
    if several and isinstance(axis, list):
        axis = tuple(axis)
    attrs = {"axis": axis, "keepdims": builtins.bool(keepdim or keepdims)}
    if name is not None:
        attrs["name"] = name
    return attrs


def _cast_to(x, dtype):
    if dtype is None:
        return x
    dtype = D.as_dtype(dtype)
    return x if getattr(x, "dtype", None) == dtype else cast(x, dtype=dtype)


def _extreme(which, card, by_dim, arg, input, dim, keepdim, axis, keepdims, name, other):
    if other is not None:
        if dim is not None:
            raise TypeError(f"{which}() received an invalid combination of arguments: give a "
                            "dim or another tensor, not both")
        return (maximum if which == "max" else minimum)(input, other)
    if dim is not None and not _is_dim(dim):
        if not hasattr(dim, "dtype") or _is_dim(keepdim) or isinstance(dim, Sequence):
            raise TypeError(f"{which}(): argument 'dim' must be int (or 'other' a tensor), "
                            f"not {type(dim).__name__}; for several dims use kg.a{which}")
        return (maximum if which == "max" else minimum)(input, dim)  # max(x, other_tensor)
    if axis is not None or dim is None:  # every axis, or TF's axis=: the values alone
        return card(input, **_attrs(None, keepdim, axis, keepdims, name))
    keep = builtins.bool(keepdim)
    indices = arg(input, axis=int(dim), keepdims=keep)
    values = by_dim(input, indices, axis=int(dim), keepdims=keep)
    return getattr(return_types, which)(values, indices)


def max(input, dim=None, keepdim=False, *, other=None, axis=None, keepdims=None,  # noqa: A001, A002
        name=None):
    """``torch.max``: the largest element (0-d; the gradient split evenly between ties),
    or with ``dim`` the named tuple ``(values, indices)`` (the gradient to each chosen
    index), or with a tensor second argument the elementwise maximum. ``axis=`` (TF's
    keyword) gives the values alone over one or several axes.

    >>> import kernelgraph as kg
    >>> x = kg.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> kg.max(x).item(), kg.max(x, 1).indices.tolist(), kg.max(x, axis=0).tolist()
    (7.0, [1, 0], [7.0, 5.0])
    """
    return _extreme("max", _amax, max_dim, _argmax, input, dim, keepdim, axis, keepdims, name,
                    other)


def min(input, dim=None, keepdim=False, *, other=None, axis=None, keepdims=None,  # noqa: A001, A002
        name=None):
    """``torch.min``: as :func:`max`, for the smallest.

    >>> import kernelgraph as kg
    >>> values, indices = kg.min(kg.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=0)
    >>> values.tolist(), indices.tolist()
    ([1.0, 2.0], [0, 1])
    """
    return _extreme("min", _amin, min_dim, _argmin, input, dim, keepdim, axis, keepdims, name,
                    other)


def amax(input, dim=None, keepdim=False, *, axis=None, keepdims=None, name=None):  # noqa: A002
    """``torch.amax``: the maximum over ``dim`` (an int, a tuple, or () / None for all);
    the gradient split evenly between ties.

    >>> import kernelgraph as kg
    >>> kg.amax(kg.tensor([[1.0, 5.0], [7.0, 2.0]]), (0, 1)).item()
    7.0
    """
    return _amax(input, **_attrs(dim if dim != () else None, keepdim, axis, keepdims, name))


def amin(input, dim=None, keepdim=False, *, axis=None, keepdims=None, name=None):  # noqa: A002
    """``torch.amin``: the minimum over ``dim``, as :func:`amax`.

    >>> import kernelgraph as kg
    >>> kg.amin(kg.tensor([[1.0, 5.0], [7.0, 2.0]]), 1).tolist()
    [1.0, 2.0]
    """
    return _amin(input, **_attrs(dim if dim != () else None, keepdim, axis, keepdims, name))


def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None, name=None):  # noqa: A002
    """``torch.argmax``: int64 index of the first maximum along ``dim`` (None: of the
    flattened tensor; with ``keepdim`` then every dim kept as 1).

    >>> import kernelgraph as kg
    >>> kg.argmax(kg.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1).tolist()
    [1, 0]
    """
    return _argmax(input, **_attrs(dim, keepdim, axis, keepdims, name, several=False))


def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None, name=None):  # noqa: A002
    """``torch.argmin``: int64 index of the first minimum along ``dim``.

    >>> import kernelgraph as kg
    >>> kg.argmin(kg.tensor([[1.0, 5.0], [7.0, 2.0]]), 1).tolist()
    [0, 1]
    """
    return _argmin(input, **_attrs(dim, keepdim, axis, keepdims, name, several=False))


def sum(input, dim=None, keepdim=False, *more, dtype=None, axis=None, keepdims=None,  # noqa: A001, A002
        name=None):
    """``torch.sum``: over ``dim`` (an int, a tuple or list of ints, None for all), keeping
    the reduced dims as 1 with ``keepdim``; ``dtype`` casts first. Bools and integers sum to
    int64, as in PyTorch. TF's ``axis=``/``keepdims=`` are taken too.

    >>> import kernelgraph as kg
    >>> kg.sum(kg.ones((2, 3, 4)), (0, 2)).tolist(), kg.sum(kg.tensor([True, True])).item()
    ([8.0, 8.0, 8.0], 2)
    """
    if more:  # too many positional arguments: the card's own error names its attributes
        return _sum(input, dim, keepdim, *more)
    return _sum(_cast_to(input, dtype), **_attrs(dim, keepdim, axis, keepdims, name))


def mean(input, dim=None, keepdim=False, *more, dtype=None, axis=None, keepdims=None,  # noqa: A002
         name=None):
    """``torch.mean``: over ``dim`` (int, tuple or None), ``keepdim``, ``dtype`` (cast
    first); an integer tensor is refused without ``dtype``, as PyTorch refuses it.

    >>> import kernelgraph as kg
    >>> kg.mean(kg.tensor([[1.0, 2.0], [3.0, 5.0]]), dim=1, keepdim=True).tolist()
    [[1.5], [4.0]]
    """
    if more:
        return _mean(input, dim, keepdim, *more)
    return _mean(_cast_to(input, dtype), **_attrs(dim, keepdim, axis, keepdims, name))


def prod(input, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None,  # noqa: A002
         name=None):
    """``torch.prod``: the product over ``dim`` (bools and integers give int64).

    >>> import kernelgraph as kg
    >>> kg.prod(kg.tensor([[1.0, 2.0], [3.0, 4.0]]), 0).tolist()
    [3.0, 8.0]
    """
    return _prod(_cast_to(input, dtype), **_attrs(dim, keepdim, axis, keepdims, name))


def all(input, dim=None, keepdim=False, *, axis=None, keepdims=None, name=None):  # noqa: A001, A002
    """``torch.all``: whether every element (over ``dim``) is nonzero, as a bool tensor.

    >>> import kernelgraph as kg
    >>> kg.all(kg.tensor([1, 0, 2])).item(), kg.all(kg.tensor([[1, 2], [0, 3]]), 1).tolist()
    (False, [True, False])
    """
    return _all(input, **_attrs(dim, keepdim, axis, keepdims, name))


def any(input, dim=None, keepdim=False, *, axis=None, keepdims=None, name=None):  # noqa: A001, A002
    """``torch.any``: whether some element (over ``dim``) is nonzero, as a bool tensor.

    >>> import kernelgraph as kg
    >>> kg.any(kg.tensor([0.0, 0.0])).item()
    False
    """
    return _any(input, **_attrs(dim, keepdim, axis, keepdims, name))


def cumsum(input, dim=None, *, dtype=None, axis=None, name=None):  # noqa: A002
    """``torch.cumsum``: running sums along ``dim`` (required); bools and integers give
    int64; ``dtype=`` casts first.

    >>> import kernelgraph as kg
    >>> kg.cumsum(kg.tensor([[1, 2, 3], [4, 5, 6]]), dim=1).tolist()
    [[1, 3, 6], [4, 9, 15]]
    """
    attrs = _attrs(dim, False, axis, None, name, several=False)
    if attrs["axis"] is None:
        raise TypeError("cumsum() missing required argument 'dim'")
    del attrs["keepdims"]
    return _cumsum(_cast_to(input, dtype), **attrs)


def logsumexp(input, dim, keepdim=False):  # noqa: A002
    """``torch.logsumexp``: ``log(sum(exp(x)))`` over ``dim`` without overflow (the largest
    element taken out first; all -inf gives -inf).

    >>> import kernelgraph as kg
    >>> round(kg.logsumexp(kg.tensor([1000.0, 1000.0]), 0).item(), 4)
    1000.6932
    """
    axis = tuple(dim) if isinstance(dim, list) else dim
    top = _amax(input, axis=axis, keepdims=True)
    # An infinite maximum (all -inf, or a +inf) is taken out as 0, so no inf - inf.
    shift = _where(less(abs(top), float("inf")), top, 0.0)
    total = _sum(exp(sub(input, shift)), axis=axis, keepdims=True)
    out = add(log(total), shift)
    # Summing the kept size-1 axes drops them and leaves the values as they are.
    return out if keepdim else _sum(out, axis=axis)


def _count(x, axis, keepdims):
    """How many elements each output of a reduction over ``axis`` combines: a number when
    the shape is known, else a tensor computed from it."""
    shape = getattr(x, "shape", None)
    shape = None if shape is None else tuple(shape)
    if shape is not None and None not in shape:
        axes = range(len(shape)) if axis is None else (
            (axis,) if _is_dim(axis) else tuple(axis))
        n = 1
        for a in axes:
            n *= shape[a]
        return n
    return _sum(ones_like(x), axis=axis, keepdims=keepdims)


def _var(input, dim, unbiased, keepdim, correction, what):
    if isinstance(dim, builtins.bool):  # var(x, False): the legacy unbiased argument
        dim, unbiased = None, dim
    if correction is None:
        correction = 0 if unbiased is False else 1
    dt = getattr(input, "dtype", None)
    if dt is not None and D.as_dtype(dt) not in D.FLOATS:
        raise D.DtypeError(f"{what}(): std and var only support floating point and complex "
                           f"dtypes (got {D.as_dtype(dt).name}); cast first, e.g. "
                           "x.float()")
    axis = tuple(dim) if isinstance(dim, list) else dim
    centered = sub(input, _mean(input, axis=axis, keepdims=True))
    total = _sum(mul(centered, centered), axis=axis, keepdims=builtins.bool(keepdim))
    n = _count(input, axis, keepdim)
    if isinstance(n, int):
        return div(total, float(builtins.max(0, n - correction)))
    return div(total, maximum(sub(n, float(correction)), 0.0))


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """``torch.var``: the variance over ``dim``, divided by ``N - correction`` (1 by
    default: unbiased, as PyTorch's; ``unbiased=False`` or ``correction=0`` divide by N).

    >>> import kernelgraph as kg
    >>> x = kg.tensor([1.0, 2.0, 4.0])
    >>> round(kg.var(x).item(), 4), round(kg.var(x, unbiased=False).item(), 4)
    (2.3333, 1.5556)
    """
    return _var(input, dim, unbiased, keepdim, correction, "var")


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """``torch.std``: the square root of :func:`var` (unbiased by default).

    >>> import kernelgraph as kg
    >>> round(kg.std(kg.tensor([1.0, 2.0, 4.0])).item(), 4)
    1.5275
    """
    return sqrt(_var(input, dim, unbiased, keepdim, correction, "std"))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """``torch.var_mean``: ``(var, mean)`` over ``dim``.

    >>> import kernelgraph as kg
    >>> [round(t.item(), 4) for t in kg.var_mean(kg.tensor([1.0, 2.0, 4.0]))]
    [2.3333, 2.3333]
    """
    axis = tuple(dim) if isinstance(dim, list) else dim
    if isinstance(dim, builtins.bool):
        axis = None
    return (_var(input, dim, unbiased, keepdim, correction, "var_mean"),
            _mean(input, axis=axis, keepdims=builtins.bool(keepdim)))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """``torch.std_mean``: ``(std, mean)`` over ``dim``.

    >>> import kernelgraph as kg
    >>> [round(t.item(), 4) for t in kg.std_mean(kg.tensor([1.0, 2.0, 4.0]))]
    [1.5275, 2.3333]
    """
    v, m = var_mean(input, dim, unbiased, keepdim, correction=correction)
    return sqrt(v), m


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):  # noqa: A002
    """``torch.norm``: the 2-norm (``"fro"``, the default) over ``dim`` (None: all
    elements), or the ``p``-norm for a number ``p`` (1, inf, -inf ...). Unlike PyTorch's, the
    gradient of a 2-norm of zeros is NaN, not 0.

    >>> import kernelgraph as kg
    >>> kg.norm(kg.tensor([3.0, 4.0])).item(), kg.norm(kg.tensor([3.0, -4.0]), p=1).item()
    (5.0, 7.0)
    """
    x = _cast_to(input, dtype)
    axis = tuple(dim) if isinstance(dim, list) else dim
    keep = builtins.bool(keepdim)
    if p in ("fro", 2, 2.0):
        return sqrt(_sum(mul(x, x), axis=axis, keepdims=keep))
    if p == 1:
        return _sum(abs(x), axis=axis, keepdims=keep)
    if p == float("inf"):
        return _amax(abs(x), axis=axis, keepdims=keep)
    if p == float("-inf"):
        return _amin(abs(x), axis=axis, keepdims=keep)
    if isinstance(p, int | float) and not isinstance(p, builtins.bool) and p != 0:
        return pow(_sum(pow(abs(x), float(p)), axis=axis, keepdims=keep), 1.0 / p)
    raise ValueError(f"norm: p={p!r} is not supported; use 'fro', 2, 1, inf, -inf or another "
                     "nonzero number")


def clamp(input, min=None, max=None, *, name=None):  # noqa: A002
    """``torch.clamp`` (and ``torch.clip``): ``input`` limited to ``[min, max]``, either
    bound left out (None), each a number or a tensor (broadcasting); NaN stays NaN. With
    number bounds the gradient passes where ``min <= x <= max``.

    >>> import kernelgraph as kg
    >>> kg.clamp(kg.tensor([1, 5, 9]), max=6).tolist(), kg.clamp(kg.tensor([0.5, 3.0]), 1).tolist()
    ([1, 5, 6], [1.0, 3.0])
    """
    if builtins.all(b is None or D.scalar_dtype(b) is not None for b in (min, max)):
        extra = {} if name is None else {"name": name}
        return _clip(input, min=min, max=max, **extra)
    out = input
    if min is not None:
        out = maximum(out, min)
    if max is not None:
        out = minimum(out, max)
    return out


clip = clamp


def equal(input, other, name=None):  # noqa: A002 - PyTorch's names
    """``torch.equal`` on two eager tensors: a Python bool, True when they have the same
    shape and the same values (NaN is never equal). Given a graph node or a number it is the
    elementwise ``equal`` op (``kg.ops.equal``, TF's ``tf.equal``), since PyTorch has no
    meaning for those.

    >>> import kernelgraph as kg
    >>> kg.equal(kg.tensor([1, 2]), kg.tensor([1, 2])), kg.equal(kg.tensor([1]), kg.tensor([2]))
    (True, False)
    """
    if builtins.all(hasattr(t, "requires_grad") and not isinstance(t, Node)
                    for t in (input, other)):
        if tuple(input.shape) != tuple(other.shape):
            return False
        return bool(np.all(devices.to_numpy(input._array) == devices.to_numpy(other._array)))
    return _equal_op(input, other, name=name)
