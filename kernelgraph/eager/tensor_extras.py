"""PyTorch tensor methods that only an eager tensor has: its memory layout (``stride()``,
``storage_offset()``, ``data_ptr()``, ``get_device()``, ``storage()``), shape changes in place
(``squeeze_``, ``unsqueeze_``, ``transpose_``, ``resize_``, the deprecated ``resize``), the
legacy constructor ``x.new(...)``, in-place writes (``scatter_``, ``random_``, ``addcmul_``,
``addcdiv_``) and the functions whose result's shape depends on the values (``unique``,
``nonzero``), with ``kg.range`` and ``kg.set_num_threads``.

An eager tensor's values are a NumPy array (or a CUDA device array), and a view shares that
array's memory as in PyTorch, so ``stride()`` and ``data_ptr()`` are the array's own, in
elements and bytes, and ``storage_offset()`` is the element distance from the start of the
memory the views share.

>>> import kernelgraph as kg
>>> a = kg.arange(12.0).reshape(3, 4)
>>> a.stride(), a.t().stride(), a[1:, ::2].storage_offset(), a.get_device()
((4, 1), (1, 4), 4, -1)
"""

from __future__ import annotations

import builtins
import math
import warnings

import numba
import numpy as np

from .. import devices
from .. import dtypes as D
from ..ops import shape_functions as SF
from ..ops import torch_random as R
from ..ops import torch_tensor_ops as TT
from . import inplace, random_creation, versions
from .creation import empty, tensor
from .printing import Size
from .tensors import Tensor, _wrap, rebase

__all__ = ["bincount", "histc", "nonzero", "range", "set_num_threads", "get_num_threads",
           "unique"]


# -- memory layout ---------------------------------------------------------------------------
def _root(array):
    """The array that owns the memory ``array`` views (NumPy's ``base`` chain)."""
    base = array
    while getattr(base, "base", None) is not None and isinstance(base.base, np.ndarray):
        base = base.base
    return base


def _address(array) -> int:
    if isinstance(array, np.ndarray):
        return array.__array_interface__["data"][0]
    return int(array.__cuda_array_interface__["data"][0])  # a CUDA device array


def stride(self, dim=None):
    """The step, in elements, between neighbours along each dim (a tuple), or along ``dim``.

    >>> import kernelgraph as kg
    >>> kg.zeros(2, 3).stride(), kg.zeros(2, 3).stride(-2)
    ((3, 1), 3)
    """
    a = self._array
    steps = tuple(s // a.dtype.itemsize for s in a.strides)
    if dim is None:
        return steps
    return steps[SF.wrap_dim(dim, max(a.ndim, 1), "stride")] if a.ndim else 1


def data_ptr(self) -> int:
    """The address of the first element (views of one tensor give addresses in its memory)."""
    return _address(self._array)


def storage_offset(self) -> int:
    """Elements from the start of the memory this tensor shares with its views."""
    a = self._array
    if not isinstance(a, np.ndarray):
        return 0
    return (_address(a) - _address(_root(a))) // a.dtype.itemsize


def get_device(self) -> int:
    """The CUDA device's index, or -1 on the CPU (PyTorch's ``get_device``)."""
    return -1 if self.device.type == "cpu" else int(self.device.index or 0)


_STORAGE_WARNING = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
    "the only storage class. This should only matter to you if you are using storages "
    "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
    "tensor.storage()")


class TypedStorage:
    """What ``x.storage()`` returns: the one-dimensional memory that a tensor and its views
    share (``torch.storage.TypedStorage``): its length, elements, ``data_ptr()`` and
    ``element_size()``; it reads the memory, it holds no copy."""

    def __init__(self, array, dtype, device):
        root = _root(array)
        if not isinstance(root, np.ndarray) or root.dtype != array.dtype or \
                not root.flags.c_contiguous:
            root = np.ascontiguousarray(devices.to_numpy(array))  # (a device array: a copy)
        self._flat, self.dtype, self.device = root.reshape(-1), dtype, device

    def __len__(self) -> int:
        return int(self._flat.size)

    def size(self) -> int:
        return len(self)

    def __getitem__(self, i):
        return self._flat[i].item() if isinstance(i, int | np.integer) else self._flat[i].tolist()

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        return self._flat.tolist()

    def data_ptr(self) -> int:
        return _address(self._flat)

    def element_size(self) -> int:
        return int(self._flat.dtype.itemsize)

    def __repr__(self) -> str:
        values = "".join(f" {v!r}\n" for v in self.tolist())
        return (f"{values}[torch.storage.TypedStorage(dtype=torch.{self.dtype}, "
                f"device={self.device}) of size {len(self)}]")


def storage(self) -> TypedStorage:
    """``x.storage()`` (deprecated in PyTorch, with its warning): the memory ``x`` and its
    views share, as a :class:`TypedStorage`."""
    warnings.warn(_STORAGE_WARNING, UserWarning, stacklevel=2)
    return TypedStorage(self._array, self.dtype, self.device)


# -- shape changes in place --------------------------------------------------------------------
def _reshape_in_place(self, make) -> Tensor:
    """``self`` becomes ``make(self)`` (a view of it): its array, and under autograd its
    node."""
    if inplace._start(self):
        # Recorded: the view is made from a stand-in for self as it was, since self is
        # about to come from the view's node (as inplace.run does).
        old = _wrap(self._array)
        old._node, old.requires_grad = self._node, self.requires_grad
        made = make(old)
        self._array = made._array
        rebase(self, made._node, True, made._node.seq)
    else:
        self._array = make(self)._array
    versions.stamp(self._array, next(inplace._sequence))
    return self


def squeeze_(self, dim=None) -> Tensor:
    """``squeeze`` in place: ``self`` without its dims of size 1 (or ``dim``'s)."""
    return _reshape_in_place(self, lambda t: SF.squeeze(t, dim))


def unsqueeze_(self, dim: int) -> Tensor:
    """``unsqueeze`` in place: a dim of size 1 inserted at ``dim``."""
    return _reshape_in_place(self, lambda t: SF.unsqueeze(t, dim))


def transpose_(self, dim0: int, dim1: int) -> Tensor:
    """``transpose`` in place: dims ``dim0`` and ``dim1`` swapped (a view: strides swap)."""
    return _reshape_in_place(self, lambda t: SF.transpose(t, dim0, dim1))


def _sizes(sizes) -> tuple:
    if len(sizes) == 1 and isinstance(sizes[0], tuple | list):
        sizes = tuple(sizes[0])
    if not all(isinstance(s, int | np.integer) and s >= 0 for s in sizes):
        raise TypeError(f"resize_(): sizes must be non-negative ints, got {sizes}")
    return tuple(int(s) for s in sizes)


def resize_(self, *sizes) -> Tensor:
    """``self`` given the shape ``sizes`` in place, keeping its elements in row-major order:
    fewer elements keep the first ones (a view of the same memory), more keep them all
    followed by new ones (zeros here; PyTorch leaves them uninitialised).

    >>> import kernelgraph as kg
    >>> kg.arange(6.0).resize_(2, 2).tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """
    shape = _sizes(sizes)
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    a = self._array
    n = math.prod(shape)
    if not isinstance(a, np.ndarray):
        flat = devices.to_numpy(a).reshape(-1)
        new = np.zeros(n, flat.dtype)
        new[:min(n, flat.size)] = flat[:n]
        self._array = tensor(new.reshape(shape), device=self.device)._array
    elif n <= a.size and a.flags.c_contiguous:
        self._array = a.reshape(-1)[:n].reshape(shape)  # the same memory, as PyTorch
    else:
        new = np.zeros(n, a.dtype)
        new[:min(n, a.size)] = a.reshape(-1)[:n]
        self._array = new.reshape(shape)
    versions.stamp(self._array, next(inplace._sequence))
    return self


def resize(self, *sizes) -> Tensor:
    """The deprecated ``x.resize(...)``: a resized copy (:meth:`resize_` on a clone), with
    PyTorch's warning."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    out = tensor(devices.to_numpy(self._array).copy(), device=self.device)
    return resize_(out, *sizes)


def new(self, *args, device=None) -> Tensor:
    """The legacy constructor: ``x.new(2, 3)`` (or ``x.new(size)``) an uninitialised
    tensor of that shape, ``x.new(data)`` one holding ``data``, ``x.new()`` an empty one;
    all of ``x``'s dtype and device."""
    device = self.device if device is None else device
    if not args:
        return empty(0, dtype=self.dtype, device=device)
    if all(isinstance(a, int | np.integer) and not isinstance(a, bool) for a in args) or (
            len(args) == 1 and isinstance(args[0], Size)):
        return empty(*args, dtype=self.dtype, device=device)
    if len(args) != 1:
        raise TypeError("new(): expected sizes (ints) or one sequence of data")
    return tensor(args[0], dtype=self.dtype, device=device)


# -- in-place writes ------------------------------------------------------------------------------
def scatter_(self, dim: int, index, src=None, value=None, *, reduce=None) -> Tensor:
    """``scatter`` in place: ``src``'s elements (or the number ``value``) written at
    ``index`` along ``dim``, or combined with ``reduce='add'`` / ``'multiply'``.

    >>> import kernelgraph as kg
    >>> kg.zeros(2, 3).scatter_(1, kg.tensor([[2], [0]]), 1.0).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    if src is not None and value is not None:
        raise TypeError("scatter_(): give src or value, not both")
    if src is None or isinstance(src, int | float | bool | np.generic):
        v = value if src is None else src
        return inplace.run(self, TT.scatter_value, (self, index),
                           {"axis": dim, "value": v, "reduce": reduce}, "scatter_",
                           "ScatterBackward1")
    return inplace.run(self, TT.scatter_dim, (self, index, src),
                       {"axis": dim, "reduce": reduce}, "scatter_", "ScatterBackward0")


def addcmul_(self, tensor1, tensor2, *, value=1) -> Tensor:
    """``self += value * tensor1 * tensor2`` in place."""
    return inplace.add_(self, tensor1 * tensor2, alpha=value)


def addcdiv_(self, tensor1, tensor2, *, value=1) -> Tensor:
    """``self += value * tensor1 / tensor2`` in place."""
    return inplace.add_(self, tensor1 / tensor2, alpha=value)


def random_(self, *bounds, generator=None) -> Tensor:
    """Integers drawn uniformly from ``[from, to)`` (``random_(to)``: from 0), or with no
    bounds from ``[0, 2**mantissa]`` (floats) / ``[0, max]`` (integers); PyTorch's numbers
    after the same ``manual_seed``."""
    dt = np.dtype(self._array.dtype)
    if len(bounds) > 2:
        raise TypeError("random_() takes at most 2 bounds (from, to)")
    if bounds:
        low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
        values = R.randint_array(low, high, self.shape, dtype=dt.name, generator=generator)
    else:
        gen = R._gen(generator)
        n = math.prod(self.shape)
        if dt.kind == "f":
            span = (1 << np.finfo(dt).nmant + 1) + 1
            wide = dt == np.float64
        elif dt.kind in "iu":
            span = int(np.iinfo(dt).max) + 1
            wide = dt == np.int64
        else:
            span, wide = 2, False
        draws = gen._draw64(n) if wide else gen._draw32(n)
        values = np.array([int(v) % span for v in draws], dtype=np.float64 if dt.kind == "f"
                          else np.int64).astype(dt).reshape(self.shape)
    return inplace._fill(self, tensor(values, device=self.device), "random_", "RandomBackward0")


# -- results whose shape depends on the values --------------------------------------------------
def _values(x, what: str) -> np.ndarray:
    if not isinstance(x, Tensor):
        raise TypeError(f"{what}() needs an eager tensor: its result's shape depends on the "
                        "values, which a graph node does not have while the graph is built")
    return devices.to_numpy(x.detach()._array)


def unique(input, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim=None):
    """``torch.unique``: the distinct values, sorted (also for ``sorted=False``, which
    PyTorch's CPU also returns sorted), with the inverse indices and counts on request.
    Eager tensors only; not differentiable (as in PyTorch).

    >>> import kernelgraph as kg
    >>> kg.unique(kg.tensor([3, 1, 3]), return_counts=True)
    (tensor([1, 3]), tensor([1, 2]))
    """
    a = _values(input, "unique")
    if dim is None:
        vals, inv, cnt = np.unique(a, return_inverse=True, return_counts=True)
        inv = inv.reshape(a.shape)
    else:
        d = SF.wrap_dim(dim, a.ndim, "unique")
        vals, inv, cnt = np.unique(a, return_inverse=True, return_counts=True, axis=d)
        inv = inv.reshape(-1)
    out = [tensor(vals, device=input.device)]
    if return_inverse:
        out.append(tensor(inv.astype(np.int64), device=input.device))
    if return_counts:
        out.append(tensor(cnt.astype(np.int64), device=input.device))
    return out[0] if len(out) == 1 else tuple(out)


def nonzero(input, *, as_tuple: bool = False):  # noqa: A002
    """``torch.nonzero``: the indices of the nonzero elements, one row each (int64, shape
    (n, rank)), or with ``as_tuple`` one 1-D tensor per dim. Eager tensors only.

    >>> import kernelgraph as kg
    >>> kg.nonzero(kg.tensor([0, 3, 0, 4])).tolist()
    [[1], [3]]
    """
    a = _values(input, "nonzero")
    where = np.argwhere(a if a.ndim else a.reshape(1)).astype(np.int64)
    if as_tuple:
        return tuple(tensor(np.ascontiguousarray(where[:, d]), device=input.device)
                     for d in builtins.range(where.shape[1]))
    return tensor(where, device=input.device)


def bincount(input, weights=None, minlength: int = 0):  # noqa: A002
    """``torch.bincount``: how often each value 0, 1, ... occurs in a 1-D tensor of
    non-negative integers (int64), or the sums of ``weights`` per value (their dtype); at
    least ``minlength`` bins. Eager tensors only; no gradient.

    >>> import kernelgraph as kg
    >>> kg.bincount(kg.tensor([1, 1, 3])).tolist()
    [0, 2, 0, 1]
    """
    a = _values(input, "bincount")
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return tensor(np.bincount(a, minlength=minlength).astype(np.int64),
                      device=input.device)
    w = _values(weights, "bincount")
    out = np.bincount(a, weights=w, minlength=minlength).astype(w.dtype)
    return tensor(out, device=input.device)


def histc(input, bins: int = 100, min=0, max=0):  # noqa: A002
    """``torch.histc``: counts of the elements in ``bins`` equal bins between ``min`` and
    ``max`` (both 0: the data's own min and max), elements outside left out; the input's
    float dtype. Eager tensors only; no gradient.

    >>> import kernelgraph as kg
    >>> kg.histc(kg.tensor([1.0, 2.0, 1.0, 4.0]), bins=4).tolist()
    [2.0, 1.0, 0.0, 1.0]
    """
    a = _values(input, "histc")
    if a.dtype.kind != "f":
        raise RuntimeError(f"\"histogram_cpu\" not implemented for '{a.dtype.name}'")
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    counts, _ = np.histogram(a, bins=int(bins), range=(lo, hi))
    return tensor(counts.astype(a.dtype), device=input.device)


def _multinomial(self, num_samples: int, replacement: bool = False, *, generator=None):
    """``x.multinomial(n)``: :func:`kernelgraph.multinomial` of ``x``."""
    return random_creation.multinomial(self, num_samples, replacement, generator=generator)


def range(start=0, end=None, step=1, *, dtype=None, device=None,  # noqa: A001
          requires_grad: bool = False) -> Tensor:
    """``torch.range`` (deprecated in PyTorch, and it warns so): ``start`` to ``end``
    *inclusive* by ``step``, float32 unless ``dtype`` says otherwise (``kg.arange`` excludes
    the end).

    >>> import warnings, kernelgraph as kg
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     kg.range(1, 4).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    n = int(math.floor((end - start) / step)) + 1
    values = start + np.arange(max(n, 0), dtype=np.float64) * step
    return tensor(values, dtype=dtype or D.float32, device=device,
                  requires_grad=requires_grad)


def set_num_threads(n: int) -> None:
    """``torch.set_num_threads``: the number of threads kernelgraph's parallel CPU kernels
    use (numba's), at most the number numba started with (more is taken as that many)."""
    if not isinstance(n, int) or n < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))


def get_num_threads() -> int:
    """``torch.get_num_threads``: the threads kernelgraph's parallel CPU kernels use."""
    return numba.get_num_threads()


#: The eager-only methods of this module (installed by :func:`.methods.install`).
METHODS = {"stride": stride, "data_ptr": data_ptr, "storage_offset": storage_offset,
           "get_device": get_device, "squeeze_": squeeze_, "unsqueeze_": unsqueeze_,
           "transpose_": transpose_, "resize_": resize_, "resize": resize, "new": new,
           "scatter_": scatter_, "addcmul_": addcmul_, "addcdiv_": addcdiv_,
           "random_": random_, "unique": unique, "nonzero": nonzero,
           "multinomial": _multinomial, "storage": storage}
