"""In-place operations on eager tensors, with PyTorch's semantics: ``+= -= *= /=``,
``add_ sub_ mul_ div_ zero_ fill_ copy_ clamp_ normal_ uniform_`` (and the unary ``exp_``,
``relu_`` ...) and ``x[index] = value``. Each writes into the tensor's own array, so views
and aliases see the change and ``with kg.no_grad(): w -= lr * w.grad`` trains ``w``.

>>> import kernelgraph as kg
>>> w = kg.tensor([1.0, 2.0], requires_grad=True)
>>> (w * w).sum().backward()
>>> with kg.no_grad():
...     w -= 0.5 * w.grad
>>> w.tolist(), w.is_leaf, w._version
([0.0, 0.0], True, 1)

With grad enabled, PyTorch's rules hold:

- a leaf that requires grad (or a view of one) refuses ("a leaf Variable that requires
  grad is being used in an in-place operation.");
- on any other tensor the op is recorded: the tensor's ``grad_fn`` becomes the in-place
  op's node (an op named ``add_``, ``setitem_`` ...: see :class:`~kernelgraph.ops.registry.
  DerivedOp`), and gradients flow through it; nodes recorded before still see the tensor
  they used (:func:`~.tensors.source`). Writing into an indexed view ``y[1:]`` of a tensor
  that requires grad also records the write on ``y`` (PyTorch's ``CopySlices``);
- every write bumps ``_version`` (:mod:`.versions`), and a node whose gradient reads a value
  written afterwards refuses to run in backward.
"""

from __future__ import annotations

import numpy as np

from .. import devices, trace
from .. import dtypes as D
from .. import ops as O
from ..graph import _sequence
from ..ops.casting import can_cast, scalar_type_name
from ..ops.indexing import _decode, _fitted, normalize_index
from ..ops.indexing import setitem as setitem_op
from ..ops.registry import DerivedOp
from ..ops.torch_random import normal_array, uniform_array
from . import dispatch, tensors, versions
from .creation import tensor
from .dispatch import _record, apply
from .grad_mode import _local
from .tensors import Tensor, _wrap, rebase

ndarray = np.ndarray

LEAF = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF = ("a view of a leaf Variable that requires grad is being used in an in-place "
                "operation.")

# The in-place variant of each card used here, made once: (base op, name) -> DerivedOp.
_VARIANTS: dict = {}


def variant(base, name: str, grad_fn_name: str) -> DerivedOp:
    """The card an in-place op records: ``base`` under ``name`` (``add_``, ``fill_`` ...)."""
    key = (base.name, name)
    op = _VARIANTS.get(key)
    if op is None:
        op = _VARIANTS[key] = DerivedOp.inplace_of(base, grad_fn_name, name)
    return op


# -- checks --------------------------------------------------------------------------------------
def _start(t: Tensor, *others, leaf: str = LEAF) -> bool:
    """Whether this in-place op on ``t`` is recorded; refuses what PyTorch refuses (``leaf``:
    the words for a leaf that requires grad)."""
    if dispatch._deferred is not None and _local.batching:
        raise RuntimeError("in-place ops (x.add_(...), x[i] = v, x += y) are not supported "
                           "inside kg.autobatch(): write x = x + y instead")
    if tensors._tracer is not None:
        raise RuntimeError("kg.function cannot trace in-place ops (x.add_(...), x[i] = v, "
                           "x += y): a graph never changes a tensor in place. Write x = x + y, "
                           "or call the function without kg.function")
    if not _local.grad_enabled:
        return False
    if t.requires_grad:
        if t._node is None:
            raise RuntimeError(leaf)
        if _view_base(t, leaf=True) is not None:
            raise RuntimeError(VIEW_OF_LEAF)
        return True
    return any(type(a) is Tensor and a.requires_grad for a in others)


def _view_base(t: Tensor, leaf: bool = False):
    """The tensor ``t`` is a view of through view ops (sharing its memory) that requires
    grad: the first such one, or (``leaf``) the leaf at the end of the chain; else None."""
    mem = versions.owner(t._array)
    node = t._node
    while node is not None and node.op.view and node.inputs and type(node.inputs[0]) is Tensor:
        base = node.inputs[0]
        if versions.owner(base._array) is not mem:
            return None
        if base.requires_grad and (base._node is None or not leaf):
            return base
        node = base._node
    return None


def _stamp(t: Tensor, seq: int) -> None:
    """Record an in-place write into ``t``'s memory for autograd's version checks; a write
    through ``w.data`` is not recorded (PyTorch gives ``w.data`` a version counter of its
    own, which is what lets the manual SGD step change weights between forward and backward)."""
    if not getattr(t, "_unversioned", False):
        versions.stamp(t._array, seq)


def mark_written(t: Tensor) -> None:
    """Record that ``t``'s values were changed in place outside an op (a checkpoint loaded
    into it, an initializer, an optimizer's step), as PyTorch's ``copy_`` under ``no_grad``
    bumps the version: a backward that needs the old values then refuses to run."""
    _stamp(t, next(_sequence))


def _write(t: Tensor, new) -> None:
    """Write ``new`` (an array of t's shape) into t's array, as PyTorch casts an in-place
    result: within a kind of number or down from a higher one, never up (int += float)."""
    d = t._array
    if tuple(new.shape) != tuple(d.shape):
        raise RuntimeError(f"output with shape {list(d.shape)} doesn't match the broadcast "
                           f"shape {list(new.shape)}")
    if not can_cast(new.dtype, d.dtype):
        raise RuntimeError(f"result type {scalar_type_name(new.dtype)} can't be cast to the "
                           f"desired output type {scalar_type_name(d.dtype)}")
    if type(d) is ndarray:
        if not d.flags.writeable:
            raise RuntimeError("unsupported operation: more than one element of the "
                               "written-to tensor refers to a single memory location. Please "
                               "clone() the tensor before performing the operation.")
        if new is not d:
            np.copyto(d, devices.to_numpy(new), casting="unsafe")
        return
    if new.dtype != d.dtype:
        new = O.cast(new, dtype=D.as_dtype(d.dtype))
    if not devices.is_cuda_array(new):
        new = devices.transfer(np.ascontiguousarray(new), t.device)
    d.copy_to_device(new)


def _reads(op, needs, position: int) -> bool:
    """Whether ``op``'s gradient rule reads its input ``position``, given ``needs``."""
    for item in op.reads(len(needs)):
        if type(item) is tuple:
            item, j = item
            if not needs[j]:
                continue
        if item == position:
            return True
    return False


def _copy(array):
    return array.copy() if type(array) is ndarray else O.cast(array, dtype=D.as_dtype(
        array.dtype))  # a copy on the device


# -- the one way every in-place op runs ------------------------------------------------------------
def run(t: Tensor, op, args: tuple, attrs: dict, name: str, grad_fn_name: str,
        position: int = 0) -> Tensor:
    """``t`` changed in place to ``op(*args, **attrs)``, where ``args[position]`` stands for
    ``t``: computed, written into ``t``'s array and, where gradients are recorded, recorded
    as the in-place variant ``name`` of ``op`` that ``t`` now comes from."""
    others = args[:position] + args[position + 1:]
    if not _start(t, *others):
        if position == 0 and len(args) == 2 and op in _FAST and _fast(t, op, args[1]):
            _stamp(t, next(_sequence))
            return t
        # (while someone watches, the node they see is named as the in-place op it is)
        out = apply(variant(op, name, grad_fn_name) if trace.active else op, args, attrs)
        _write(t, out._array)
        _stamp(t, next(_sequence))
        return t
    # Recorded: the node's input is t as it was (a stand-in tensor), since t is about to
    # come from this node. Where the rule reads that old value, the stand-in keeps a copy.
    base = _view_base(t)  # a tensor that requires grad and whose memory t is a view into
    if base is not None:
        _check_view(t._node, base)  # before anything is written
    old = _wrap(t._array)
    old._node, old.requires_grad = t._node, t.requires_grad
    needs = [type(a) is Tensor and a.requires_grad for a in args]
    needs[position] = t.requires_grad
    if _reads(op, needs, position):
        old._array = _copy(t._array)
    args = args[:position] + (old,) + args[position + 1:]
    out = apply(variant(op, name, grad_fn_name), args, attrs)
    _write(t, out._array)
    _adopt(t, out, base)
    return t


_FAST = frozenset((O.add, O.sub, O.mul, O.div))


def _fast(t: Tensor, op, other) -> bool:
    """``t op= other`` by the op's own CPU loop writing into t's array (``out=``), where
    nothing can differ from computing it and copying it back: a host float or int array (not
    bool), ``other`` a tensor of its dtype whose shape broadcasts into t's, or a Python
    number that keeps the dtype. The SGD step's hot path; False where it does not apply."""
    d = t._array
    if type(d) is not ndarray or trace.active:
        return False
    dt = d.dtype
    kind = dt.kind
    to = type(other)
    if to is Tensor:
        od = other._array
        if type(od) is not ndarray or od.dtype is not dt or (
                od.shape != d.shape and np.broadcast_shapes(od.shape, d.shape) != d.shape):
            return False
    elif (to is float and kind == "f") or (to is int and kind in "fi"):
        od = other
    else:
        return False
    u = op.loops.by_dtype.get(dt)
    if u is None or kind not in "fi" or not d.flags.writeable:
        return False
    try:
        u(d, od, out=d)
    except Exception:  # noqa: BLE001 - (a Python int beyond the dtype): the general path
        return False
    return True


def _adopt(t: Tensor, out: Tensor, base) -> None:
    """Make the node that computed ``out`` the one ``t`` comes from, holding t's array
    (and, where t is an indexed view of ``base``, record the write on ``base`` too)."""
    node = out._node
    if node is None:  # not differentiable (no gradient rule): t no longer requires grad
        rebase(t, None, False, next(_sequence))
        _stamp(t, next(_sequence))
        return
    node.value = t._array
    rebase(t, node, True, node.seq)
    _stamp(t, node.seq)
    if base is not None:
        _copy_slices(t, base)


def _check_view(made, base: Tensor) -> None:
    """Refuse an in-place change, under autograd, of a view that ``made`` (a view node) made
    of ``base`` unless it is ``base[index]`` itself: the write is then recorded on base."""
    if made.op is not O.getitem or made.inputs[0] is not base:
        what = "a view of a view" if made.op is O.getitem else f"a {made.op.name} view"
        raise RuntimeError(f"an in-place change of {what} of a tensor that requires grad is "
                           "not recorded by kernelgraph (only views made by indexing the "
                           "tensor itself, y[...], are); change the tensor itself, or clone() "
                           "the view first")
    outer = _view_base(base)
    if outer is not None:
        _check_view(base._node, outer)


def _copy_slices(view: Tensor, base: Tensor) -> None:
    """``view`` (an indexed view of ``base``) was changed in place under autograd: record
    that ``base`` now holds it at that index, PyTorch's ``CopySlices``."""
    made = view._past[-1][1]  # the view node that view came from
    old = _wrap(base._array)
    old._node, old.requires_grad = base._node, base.requires_grad
    op = variant(setitem_op, "setitem_", "CopySlices")
    result = _wrap(base._array)
    node = _record(op, (old, view), {"index": made.attrs["index"]}, result)
    outer = _view_base(base)  # (base as it was: an indexed view of another, maybe)
    rebase(base, node, True, node.seq)
    if outer is not None:
        _copy_slices(base, outer)


# -- the methods ---------------------------------------------------------------------------------
def _scaled(other, alpha):
    if alpha == 1:
        return other
    return other * alpha if type(other) is Tensor else O.mul(other, alpha) if isinstance(
        other, ndarray) else other * alpha


def add_(self, other, *, alpha=1) -> Tensor:
    """``self += alpha * other`` in place (PyTorch's ``add_``); returns ``self``.

    >>> import kernelgraph as kg
    >>> kg.tensor([1.0, 2.0]).add_(kg.tensor([1.0, 1.0]), alpha=2).tolist()
    [3.0, 4.0]
    """
    return run(self, O.add, (self, _scaled(other, alpha)), {}, "add_", O.add.grad_fn)


def sub_(self, other, *, alpha=1) -> Tensor:
    """``self -= alpha * other`` in place; returns ``self``."""
    return run(self, O.sub, (self, _scaled(other, alpha)), {}, "sub_", O.sub.grad_fn)


def mul_(self, other) -> Tensor:
    """``self *= other`` in place; returns ``self``."""
    return run(self, O.mul, (self, other), {}, "mul_", O.mul.grad_fn)


def div_(self, other, *, rounding_mode=None) -> Tensor:
    """``self /= other`` in place (true division: an integer tensor refuses, as in
    PyTorch); returns ``self``."""
    if rounding_mode is not None:
        raise NotImplementedError("div_(rounding_mode=...) is not supported by kernelgraph; "
                                  "compute (x / y).floor() and copy_ it")
    return run(self, O.div, (self, other), {}, "div_", O.div.grad_fn)


def pow_(self, exponent) -> Tensor:
    """``self **= exponent`` in place; returns ``self``."""
    return run(self, O.pow, (self, exponent), {}, "pow_", "PowBackward0")


def _iop(method):
    def inplace_operator(self, other):
        return method(self, other)
    return inplace_operator


def _fill(self, value, name: str, grad_fn_name: str) -> Tensor:
    """``self`` filled with ``value`` (a number, or a tensor broadcast to self's shape)."""
    if type(value) is Tensor and value.dtype != self.dtype:
        value = O.cast(value, dtype=self.dtype)
    if type(value) is Tensor and value.device != self.device:
        value = value.to(self.device)
    shape = self._array.shape
    try:
        wide = np.broadcast_shapes(np.shape(value), shape)
    except ValueError:
        wide = None
    if wide != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast "
                           f"shape {list(wide) if wide else list(np.shape(value))}")
    if not _start(self, value) and type(self._array) is ndarray:  # the plain write
        src = value._array if type(value) is Tensor else value
        _write(self, np.broadcast_to(np.asarray(devices.to_numpy(src), self.dtype), shape))
        _stamp(self, next(_sequence))
        return self
    keep = np.zeros(shape, bool)  # where(keep, self, value): all of value, self's gradient 0
    if type(self._array) is not ndarray:
        keep = devices.transfer(keep, self.device)
    return run(self, O.where, (keep, self, value), {}, name, grad_fn_name, position=1)


def zero_(self) -> Tensor:
    """Fill ``self`` with zeros; returns ``self``.

    >>> import kernelgraph as kg
    >>> kg.tensor([1.0, 2.0]).zero_().tolist()
    [0.0, 0.0]
    """
    return _fill(self, 0, "zero_", "ZeroBackward0")


def fill_(self, value) -> Tensor:
    """Fill ``self`` with ``value`` (a number or a 0-d tensor); returns ``self``."""
    if type(value) is Tensor and value._array.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value._array.ndim} dimensions.")
    return _fill(self, value.item() if type(value) is Tensor and not value.requires_grad
                 else value, "fill_",
                 "FillBackward3" if type(value) is Tensor else "FillBackward2")


def copy_(self, src, non_blocking: bool = False) -> Tensor:
    """Copy ``src``'s values into ``self`` (broadcast to self's shape, converted to its
    dtype and device); returns ``self``.

    >>> import kernelgraph as kg
    >>> kg.zeros(2, 2).copy_(kg.tensor([1.0, 2.0])).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    """
    if type(src) is not Tensor:
        src = tensor(src, dtype=self.dtype)
    return _fill(self, src, "copy_", "CopyBackwards")


def clamp_(self, min=None, max=None) -> Tensor:  # noqa: A002 - PyTorch's names
    """Limit ``self`` to [min, max] in place; returns ``self``."""
    clamp = getattr(O, "clamp", None)
    if clamp is None or type(min) is not Tensor and type(max) is not Tensor:
        return run(self, O.clip, (self,), {"min": min, "max": max}, "clamp_", "ClampBackward1")
    return run(self, clamp, (self, min, max), {}, "clamp_", "ClampBackward0")


def _draw(self, array, name: str, grad_fn_name: str) -> Tensor:
    if self.dtype not in D.FLOATS:
        raise RuntimeError(f'"{name[:-1]}_kernel_cpu" not implemented for '
                           f"'{scalar_type_name(self.dtype)}'")
    drawn = _wrap(devices.transfer(array, self.device))
    return _fill(self, drawn, name, grad_fn_name)


def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill ``self`` with draws from N(mean, std**2), PyTorch's numbers after the same
    ``kg.manual_seed``; returns ``self``."""
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _draw(self, normal_array(self._array.shape, self.dtype, mean, std, generator),
                 "normal_", "NormalBackward0")


def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
    """Fill ``self`` with draws from U(a, b), PyTorch's numbers after the same
    ``kg.manual_seed``; returns ``self``."""
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={a} > to={b}")
    return _draw(self, uniform_array(self._array.shape, self.dtype, a, b, generator),
                 "uniform_", "UniformBackward0")


def setitem(self, index, value) -> None:
    """``self[index] = value``: ``value`` (a number or a tensor, broadcast and converted to
    self's dtype) written into ``self`` in place. ``index`` is a basic index (ints, slices,
    ``...``, None) or holds a bool mask or integer indices (tensors, arrays or lists).

    >>> import kernelgraph as kg
    >>> x = kg.tensor([1.0, -2.0, 3.0])
    >>> x[x < 0] = 0
    >>> x[0] = 5
    >>> x.tolist()
    [5.0, 0.0, 3.0]
    """
    if type(value) is Tensor:
        if value.dtype != self.dtype:
            value = O.cast(value, dtype=self.dtype)
        if value.device != self.device:
            value = value.to(self.device)
    elif not isinstance(value, int | float | bool):
        value = tensor(value, dtype=self.dtype, device=self.device)
    items = index if isinstance(index, tuple) else (index,)
    if any(isinstance(it, Tensor | ndarray | list | bool | np.bool_) for it in items):
        return _setitem_advanced(self, index, value)
    norm = normalize_index(index)
    if _start(self, value, leaf=VIEW_OF_LEAF) or trace.active:  # (PyTorch writes through
        # a view of self; and someone watching sees the node)
        run(self, setitem_op, (self, value), {"index": norm}, "setitem_", "CopySlices")
        return
    data = self._array
    if type(data) is ndarray:
        setitem_op.infer([data.shape, np.shape(value)], [data.dtype, None], {"index": norm})
        if not data.flags.writeable:
            _write(self, data)  # refuses, with PyTorch's words
        piece = data[_decode(norm)]
        src = value._array if type(value) is Tensor else value
        if type(piece) is ndarray:
            piece[...] = np.broadcast_to(np.reshape(src, _fitted(np.shape(src), piece.shape)),
                                         piece.shape)
        else:  # one element
            data[_decode(norm)] = src
    else:
        src = value._array if type(value) is Tensor else value
        _write(self, setitem_op(data, src, index=norm))
    _stamp(self, next(_sequence))


def _index_part(item):
    if type(item) is Tensor:
        return devices.to_numpy(item._array)
    if isinstance(item, list):
        return np.asarray(item)
    return item


def _setitem_advanced(self, index, value) -> None:
    """``self[mask] = value`` and ``self[[0, 2]] = value``: NumPy's advanced indexing."""
    items = index if isinstance(index, tuple) else (index,)
    index = tuple(_index_part(it) for it in items)
    src = devices.to_numpy(value._array) if type(value) is Tensor else value
    host = devices.to_numpy(self._array)
    try:
        target = host[index]
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None
    if np.ndim(src) > target.ndim or np.broadcast_shapes(np.shape(src), target.shape) != \
            target.shape:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(np.shape(src))} "
                           f"cannot be broadcast to indexing result of shape "
                           f"{list(target.shape)}")
    if not _start(self, value, leaf=VIEW_OF_LEAF):
        if type(self._array) is ndarray:
            if not self._array.flags.writeable:
                _write(self, self._array)
            self._array[index] = src
        else:
            host = host.copy()
            host[index] = src
            _write(self, host)
        _stamp(self, next(_sequence))
        return
    if type(value) is Tensor and value.requires_grad:
        raise RuntimeError("kernelgraph records x[index] = value for a value that requires "
                           "grad only with a basic index (ints, slices, ..., None); for a mask "
                           "write x = kg.where(mask, value, x)")
    mask = np.zeros(host.shape, bool)
    mask[index] = True
    full = host.copy()
    full[index] = src
    if type(self._array) is not ndarray:
        mask, full = devices.transfer(mask, self.device), devices.transfer(full, self.device)
    run(self, O.where, (mask, full, self), {}, "setitem_", "IndexPutBackward0", position=2)


def _unary(op, torch_name: str):
    def method(self) -> Tensor:
        return run(self, op, (self,), {}, op.name + "_", torch_name)
    method.__name__ = method.__qualname__ = op.name + "_"
    method.__doc__ = f"``{op.name}`` of ``self``, in place; returns ``self``."
    return method


# The Tensor methods of this module, by name (installed by :func:`.methods.install`).
METHODS = {"add_": add_, "sub_": sub_, "mul_": mul_, "div_": div_, "pow_": pow_,
           "zero_": zero_, "fill_": fill_, "copy_": copy_, "clamp_": clamp_, "clip_": clamp_,
           "normal_": normal_, "uniform_": uniform_, "__setitem__": setitem,
           "__iadd__": _iop(add_), "__isub__": _iop(sub_), "__imul__": _iop(mul_),
           "__itruediv__": _iop(div_), "__ipow__": _iop(pow_)}
for _op in (O.exp, O.log, O.sqrt, O.tanh, O.sigmoid, O.relu, O.neg, O.abs):
    METHODS[_op.name + "_"] = _unary(_op, _op.grad_fn)  # PyTorch names x.exp_() as x.exp()
