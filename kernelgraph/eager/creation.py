"""Making eager tensors: PyTorch's factories with its
signatures, dtype rules and numbers: ``zeros ones full eye empty linspace arange``, the
random ones ``rand randn randint randperm normal`` (drawn from PyTorch's own CPU generator,
:mod:`kernelgraph.ops.torch_random`, so ``kg.manual_seed(0); kg.randn(3)`` gives
``torch.randn``'s numbers), the ``*_like`` forms, ``from_numpy`` and ``as_tensor``.
:func:`tensor` itself, which makes a tensor from data, sits beside :class:`Tensor` in
:mod:`.tensors`."""

from __future__ import annotations

import math

import numpy as np

from .. import devices
from .. import dtypes as D
from ..graph import Node
from ..ops import torch_random as R
from ..ops.elementwise import ones_like as _ones_like_op
from ..ops.elementwise import zeros_like as _zeros_like_op
from ..ops.shape import size_arg
from . import tensors
from .tensors import Tensor, _wrap, tensor

__all__ = ["arange", "as_tensor", "empty", "empty_like", "eye", "from_numpy", "full",
           "full_like", "linspace", "ones", "ones_like", "zeros", "zeros_like"]


# -- the factories' common arguments -----------------------------------------------------------
def _refuse(what: str, out=None, layout=None, pin_memory=False, memory_format=None) -> None:
    if out is not None:
        raise TypeError(f"{what}(): kernelgraph does not support out=; assign the result "
                        f"instead (x = kg.{what}(...))")
    if layout is not None and str(layout) not in ("torch.strided", "strided"):
        raise NotImplementedError(f"{what}(): only the strided layout exists in kernelgraph")
    if pin_memory:
        raise NotImplementedError(f"{what}(): pin_memory has no meaning in kernelgraph")


def _make(arr: np.ndarray, device, requires_grad: bool, drawn: bool = False) -> Tensor:
    """A new leaf tensor holding ``arr`` (not copied) on ``device`` (else the scope's).
    ``drawn``: its values are random draws, which a kg.function trace would freeze."""
    tracer = tensors._tracer  # (kg.function's: see .tensors)
    if drawn and tracer is not None:
        raise RuntimeError("PyTorch's random factories (kg.rand, kg.randn ...) cannot run inside "
                           "kg.function: the trace would keep this call's numbers as a constant "
                           "and give them again on every call. Draw outside the function and "
                           "pass the tensor in, or use kg.random.normal / kg.random.uniform "
                           "(random ops of the graph)")
    target = devices.device(device) if device is not None else devices.current()
    t = _wrap(arr if target is None or target.type == "cpu" else devices.transfer(arr, target))
    if requires_grad:
        t.requires_grad_(True)
    if tracer is not None:
        tracer("new", t, None)
    return t


def _size(size: tuple, what: str, keyword=None) -> tuple:
    """The size of a factory call: positional sizes, one tuple/list/shape/tensor, or the
    ``size=`` keyword (``torch.zeros(size=(2, 3))``)."""
    if keyword is not None:
        if size:
            raise TypeError(f"{what}() got the size both by position and as size=")
        size = (keyword,)
    if len(size) == 1 and isinstance(size[0], Tensor):
        size = (tuple(int(v) for v in size[0].tolist()),)
    return size_arg(size, what)


def _float_dtype(dtype, what: str) -> np.dtype:
    dt = D.as_dtype(D.DEFAULT_FLOAT if dtype is None else dtype)
    if dt.kind != "f":
        raise RuntimeError(f'"{what}" not implemented for \'{R._torch_name(dt.name)}\'')
    return dt


def _number(value, what: str):
    """A Python number from a number, a one-element tensor or a NumPy scalar."""
    if isinstance(value, Tensor):
        if value.numel() != 1 if callable(getattr(value, "numel", None)) else False:
            raise RuntimeError(f"{what}: a tensor argument must hold exactly one element")
        value = value.item()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{what}(): expected a number, got {type(value).__name__}")
    return value


# -- constant fills ----------------------------------------------------------------------------
def zeros(*sizes, size=None, out=None, dtype=None, layout=None, device=None,
          requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype``): ``kg.zeros(2, 3)`` or
    ``kg.zeros((2, 3))``; sizes are ints, checked as PyTorch checks them.

    >>> import kernelgraph as kg
    >>> tuple(kg.zeros(2, 3).shape), kg.zeros((2,), dtype=kg.int64).tolist()
    ((2, 3), [0, 0])
    """
    _refuse("zeros", out, layout, pin_memory)
    return _make(np.zeros(_size(sizes, "zeros", size), D.as_dtype(dtype)), device, requires_grad)


def ones(*sizes, size=None, out=None, dtype=None, layout=None, device=None,
         requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of ones (float32 unless ``dtype``): ``kg.ones(2, 3)`` or ``kg.ones((2, 3))``.

    >>> import kernelgraph as kg
    >>> kg.ones(2).tolist()
    [1.0, 1.0]
    """
    _refuse("ones", out, layout, pin_memory)
    return _make(np.ones(_size(sizes, "ones", size), D.as_dtype(dtype)), device, requires_grad)


def empty(*sizes, size=None, out=None, dtype=None, layout=None, device=None,
          requires_grad: bool = False, pin_memory: bool = False, memory_format=None) -> Tensor:
    """An "uninitialised" tensor (``torch.empty``); kernelgraph fills it with zeros.

    >>> import kernelgraph as kg
    >>> tuple(kg.empty(2, 2).shape)
    (2, 2)
    """
    _refuse("empty", out, layout, pin_memory)
    return _make(np.zeros(_size(sizes, "empty", size), D.as_dtype(dtype)), device, requires_grad)


def _fill_dtype(fill_value, dtype) -> np.dtype:
    if dtype is not None:
        return D.as_dtype(dtype)
    if isinstance(fill_value, bool | np.bool_):
        return D.bool_
    if isinstance(fill_value, int | np.integer):
        return D.int64
    return D.as_dtype(D.DEFAULT_FLOAT)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``; its dtype follows the value as in
    PyTorch (bool, int64 for an int, else float32) unless ``dtype``.

    >>> import kernelgraph as kg
    >>> kg.full((2,), 7).tolist(), kg.full((2,), 0.5).dtype.name
    ([7, 7], 'float32')
    """
    _refuse("full", out, layout, pin_memory)
    fill_value = _number(fill_value, "full") if isinstance(fill_value, Tensor) else fill_value
    dt = _fill_dtype(fill_value, dtype)
    shape = _size(size if isinstance(size, tuple) else (size,), "full")
    return _make(D.convert(np.full(shape, fill_value), dt, what="kg.full"), device,
                 requires_grad)


def eye(n: int, m: int | None = None, *, out=None, dtype=None, layout=None, device=None,
        requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """The ``n`` x ``m`` identity matrix (``m`` defaults to ``n``).

    >>> import kernelgraph as kg
    >>> kg.eye(2, 3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    _refuse("eye", out, layout, pin_memory)
    n = int(_number(n, "eye"))
    m = n if m is None else int(_number(m, "eye"))
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return _make(np.eye(n, m, dtype=D.as_dtype(dtype)), device, requires_grad)


# -- ranges ------------------------------------------------------------------------------------
_VEC_WIDTH = {"float32": 8, "float64": 4}  # the lanes of ATen's arange kernel (256-bit vectors)


def _f32_fma(a, b, c) -> np.ndarray:
    # a float32 FMA: the product of two float32 values is exact in float64
    return (np.asarray(a, np.float64) * np.float64(b) + np.float64(c)).astype(np.float32)


def linspace(start, end, steps: int, *, out=None, dtype=None, layout=None, device=None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """``steps`` values from ``start`` to ``end``, computed as PyTorch's CPU kernel does (the
    first half as ``start + step * i``, the second as ``end - step * (steps - 1 - i)``, in
    the result's dtype), so float32 values match PyTorch's bit for bit.

    >>> import kernelgraph as kg
    >>> kg.linspace(0, 1, 5).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    _refuse("linspace", out, layout, pin_memory)
    start, end = _number(start, "linspace"), _number(end, "linspace")
    if isinstance(steps, bool) or not isinstance(steps, int | np.integer):
        raise TypeError(f"linspace(): argument 'steps' must be int, not {type(steps).__name__}")
    steps = int(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = D.as_dtype(D.DEFAULT_FLOAT if dtype is None else dtype)
    idx = np.arange(steps, dtype=np.int64)
    if steps == 1:
        values = np.array([start], np.float64)
    elif dt.name == "float32":
        s, e = np.float32(start), np.float32(end)
        step = np.float32((e - s) / np.float32(steps - 1))
        lo = _f32_fma(idx.astype(np.float32), step, s)
        hi = _f32_fma(-(steps - 1 - idx).astype(np.float32), step, e)
        values = np.where(idx < steps // 2, lo, hi)
    else:
        s, e = (float(start), float(end)) if dt.kind == "f" else (int(start), int(end))
        step = (float(e) - float(s)) / (steps - 1)
        lo = R.fma(idx.astype(np.float64), step, float(s))
        hi = R.fma(-(steps - 1 - idx).astype(np.float64), step, float(e))
        values = np.where(idx < steps // 2, lo, hi)
    with np.errstate(invalid="ignore"):
        arr = values.astype(dt)
    return _make(arr, device, requires_grad)


def _arange_values(start, end, step, dt: np.dtype) -> np.ndarray:
    if dt.kind in "iub":
        return np.arange(int(start), int(end), int(step), dtype=np.int64).astype(dt) \
            if all(isinstance(v, int) for v in (start, end, step)) else \
            _arange_float(float(start), float(end), float(step), "float64").astype(dt)
    return _arange_float(float(start), float(end), float(step), dt.name)


def _arange_float(start: float, end: float, step: float, kind: str) -> np.ndarray:
    n = math.ceil((end - start) / step)
    idx = np.arange(n, dtype=np.int64)
    scalar = R.fma(idx.astype(np.float64), step, start)  # start + step * idx in double
    # ATen fills runs of two vectors of W lanes: each vector from its base (the value at
    # its first index, in the result's dtype) plus lane * step; the rest one by one.
    w = _VEC_WIDTH.get(kind)
    if w is None or n < 2 * w:
        return scalar.astype(kind)
    vec_end = (n // (2 * w)) * 2 * w
    base = scalar[:vec_end:w].astype(kind).astype(np.float64)
    lanes = np.arange(w, dtype=np.float64)
    vec = R.fma(np.tile(lanes, len(base)), step, np.repeat(base, w))
    out = scalar.copy()
    out[:vec_end] = vec
    return out.astype(kind)


def arange(*args, out=None, dtype=None, layout=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False, start=None, end=None, step=None) -> Tensor:
    """``arange(end)``, ``arange(start, end, step=1)``: ``ceil((end - start) / step)`` values
    ``start + i * step`` computed in double as PyTorch does; int64 when every argument is an
    int, else float32 (unless ``dtype``).

    >>> import kernelgraph as kg
    >>> kg.arange(3).dtype.name, kg.arange(0, 1, 0.25).tolist()
    ('int64', [0.0, 0.25, 0.5, 0.75])
    """
    _refuse("arange", out, layout, pin_memory)
    if len(args) > 3:
        raise TypeError(f"arange() takes at most 3 positional arguments ({len(args)} given)")
    if args and (start is not None or end is not None):
        raise TypeError("arange(): give start and end either by position or by name")
    if len(args) == 1:
        start, end = 0, args[0]
    elif len(args) >= 2:
        start, end = args[0], args[1]
        if len(args) == 3:
            step = args[2]
    else:
        start = 0 if start is None else start
        if end is None:
            raise TypeError("arange() missing required argument 'end'")
    step = 1 if step is None else step
    start, end, step = (_number(v, "arange") for v in (start, end, step))
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, end, step))
        dt = D.as_dtype(D.DEFAULT_FLOAT) if floats else D.int64
    else:
        dt = D.as_dtype(dtype)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    return _make(_arange_values(start, end, step, dt), device, requires_grad)


def _as_op(input, dtype, device, requires_grad) -> bool:
    """``zeros_like(x)``/``ones_like(x)`` with nothing else run the op of that name, which
    works in both modes (a graph node gives a node) and traces as an op under kg.function."""
    if isinstance(input, Node):
        if dtype is not None or device is not None or requires_grad:
            raise TypeError("zeros_like/ones_like of a graph node take no dtype, device or "
                            "requires_grad in kernelgraph")
        return True
    return isinstance(input, Tensor) and dtype is None and device is None and not requires_grad


# -- *_like --------------------------------------------------------------------------------------
def _like(input: Tensor, what: str, dtype, device) -> tuple:
    if not isinstance(input, Tensor):
        raise TypeError(f"{what}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    dt = input._array.dtype if dtype is None else D.as_dtype(dtype)
    return tuple(input.shape), dt, (input.device if device is None else device)


def zeros_like(input: Tensor, *, dtype=None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None) -> Tensor:
    """Zeros of ``input``'s shape, dtype and device.

    >>> import kernelgraph as kg
    >>> kg.zeros_like(kg.tensor([1, 2])).tolist()
    [0, 0]
    """
    _refuse("zeros_like", None, layout)
    if _as_op(input, dtype, device, requires_grad):
        return _zeros_like_op(input)
    shape, dt, dev = _like(input, "zeros_like", dtype, device)
    return _make(np.zeros(shape, dt), dev, requires_grad)


def ones_like(input: Tensor, *, dtype=None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None) -> Tensor:
    """Ones of ``input``'s shape, dtype and device.

    >>> import kernelgraph as kg
    >>> kg.ones_like(kg.zeros(2)).tolist()
    [1.0, 1.0]
    """
    _refuse("ones_like", None, layout)
    if _as_op(input, dtype, device, requires_grad):
        return _ones_like_op(input)
    shape, dt, dev = _like(input, "ones_like", dtype, device)
    return _make(np.ones(shape, dt), dev, requires_grad)


def empty_like(input: Tensor, *, dtype=None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None) -> Tensor:
    """An "uninitialised" tensor like ``input`` (kernelgraph fills it with zeros).

    >>> import kernelgraph as kg
    >>> tuple(kg.empty_like(kg.ones(2, 3)).shape)
    (2, 3)
    """
    _refuse("empty_like", None, layout)
    shape, dt, dev = _like(input, "empty_like", dtype, device)
    return _make(np.zeros(shape, dt), dev, requires_grad)


def full_like(input: Tensor, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None) -> Tensor:
    """``fill_value`` in ``input``'s shape, dtype and device.

    >>> import kernelgraph as kg
    >>> kg.full_like(kg.zeros(2), 3).tolist()
    [3.0, 3.0]
    """
    _refuse("full_like", None, layout)
    shape, dt, dev = _like(input, "full_like", dtype, device)
    fill_value = _number(fill_value, "full_like") if isinstance(fill_value, Tensor) \
        else fill_value
    return _make(D.convert(np.full(shape, fill_value), dt, what="kg.full_like"), dev,
                 requires_grad)


# -- from NumPy ----------------------------------------------------------------------------------
def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing ``ndarray``'s memory (``torch.from_numpy``): writing one changes the
    other. A dtype kernelgraph does not hold natively is converted (a copy).

    >>> import kernelgraph as kg, numpy as np
    >>> a = np.zeros(2, np.float32); t = kg.from_numpy(a); a[0] = 5; t.tolist()
    [5.0, 0.0]
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if ndarray.dtype in D.SUPPORTED and ndarray.dtype.isnative:
        return _make(ndarray, "cpu", False)
    return tensor(ndarray)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, without a copy where it can (``torch.as_tensor``): a tensor of
    the same dtype and device is returned as is, a NumPy array of a held dtype is shared.

    >>> import kernelgraph as kg
    >>> t = kg.tensor([1.0]); kg.as_tensor(t) is t, kg.as_tensor([1, 2]).dtype.name
    (True, 'int64')
    """
    dt = None if dtype is None else D.as_dtype(dtype)
    if isinstance(data, Tensor):
        same_dev = device is None or devices.device(device) == data.device
        if (dt is None or dt == data._array.dtype) and same_dev:
            return data
        arr = devices.to_numpy(data._array)
        return _make(arr.astype(dt) if dt is not None else arr.copy(),
                     data.device if device is None else device, False)
    if (isinstance(data, np.ndarray) and (dt is None or dt == data.dtype)
            and (device is None or devices.device(device).type == "cpu")
            and data.dtype in D.SUPPORTED and data.dtype.isnative):
        return _make(data, device, False)
    return tensor(data, dtype=dtype, device=device)
