"""CUDA shape ops: ``reshape transpose matrix_transpose broadcast_to reshape_like``.

On the CPU these are NumPy views; here reshape of a (C-contiguous) device array is a view
too, and the others are one :func:`core.strided_copy` each (the source read through
permuted or zero strides) into a new C-contiguous array.

Shapes are checked by NumPy itself, on a *shape stand-in*: a zero-strided broadcast of one
host element to the array's shape, which costs no memory, so every error (and every ``-1``
resolution) is exactly NumPy's. The ops check their own arguments first (PyTorch's rules,
:mod:`kernelgraph.ops.shape`): ``reshape`` gets a concrete target, ``permute`` a checked
permutation, ``broadcast_to_shape`` a tuple of ints.
"""

from __future__ import annotations

import numpy as np

from . import core
from . import elementwise as E

_ONE = np.empty((), np.bool_)


def _stand_in(shape) -> np.ndarray:
    """A host array of ``shape`` backed by one element (all strides 0)."""
    return np.broadcast_to(_ONE, tuple(shape))


def reshape(x, shape):
    """Same elements, new ``shape`` (a tuple of ints; one may be -1); a view of ``x``, as
    ``np.reshape`` is on the CPU (NumPy's rules and errors)."""
    E.check_device_array(x)
    target = _stand_in(x.shape).reshape(tuple(shape)).shape
    if x.size == 0:  # nothing to view; numba's reshape need not handle empty arrays
        return core.empty(target, x.dtype)
    return x.reshape(target)


def reshape_like(x, like):
    """x reshaped to like's shape."""
    return reshape(x, E.shape_of(like))


def _copy(x, shape, strides):
    """``core.strided_copy`` over the coalesced dims (fewer divisions per element), then
    viewed as ``shape``."""
    shape = tuple(shape)
    if 0 in shape:
        return core.empty(shape, x.dtype)
    dims, (st,) = E.coalesce(shape, [strides])
    return core.strided_copy(x, dims, st).reshape(shape)


def permute(x, perm):
    """Axes permuted by ``perm`` (a checked permutation), as a new contiguous array."""
    E.check_device_array(x)
    strides = core.contiguous_strides(x.shape)
    return _copy(x, tuple(x.shape[p] for p in perm), tuple(strides[p] for p in perm))


def matrix_transpose(x):
    """The last two axes swapped, as a new contiguous array."""
    np.swapaxes(_stand_in(x.shape), -1, -2)  # NumPy's error for rank < 2
    perm = list(range(x.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return permute(x, perm)


def broadcast_to_shape(x, shape):
    """``np.broadcast_to(x, shape)`` (same errors) as a new contiguous device array; a
    number becomes a filled array of NumPy's dtype for it, as on the CPU."""
    shape = np.broadcast_to(_stand_in(E.shape_of(x)), shape).shape
    if isinstance(x, E._NUMBERS):
        return core.full(shape, x, np.asarray(x).dtype)
    E.check_device_array(x)
    return _copy(x, shape, core.broadcast_strides(x.shape, shape))

