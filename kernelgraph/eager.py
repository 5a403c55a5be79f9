"""Eager mode: tensors that compute at once and record their graph, with PyTorch's names.

>>> import kernelgraph as kg
>>> a = kg.tensor(15.0, requires_grad=True)
>>> b = kg.tensor(20.0, requires_grad=True)
>>> c = a * b
>>> c.backward()
>>> c.item(), a.grad.item(), b.grad.item()
(300.0, 20.0, 15.0)

Every op on a tensor that requires grad records an :class:`EagerNode` (op, inputs, value),
reachable from the result as ``c.grad_fn``; :func:`graph_of` lists the recorded nodes and
edges. While a trace listener is attached every op is recorded, so widgets can draw the
whole computation.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import time
import weakref

import numpy as np

from . import autodiff, devices, operators, trace
from . import dtypes as D
from . import ops as O
from .errors import shown
from .graph import Node, _sequence, user_location
from .ops import registry
from .ops.products import Sink, Stacker
from .ops.shape import size_arg, swapped_axes

ndarray = np.ndarray


class _ThreadState(threading.local):
    """What one thread has switched on. Grad mode is per thread, as in PyTorch: a thread
    inside ``kg.no_grad()`` does not stop another thread's ops from recording, and a new
    thread starts with grad enabled. ``batching`` is set while this thread has a
    ``kg.autobatch()`` block open (see ``_deferred`` below)."""

    grad_enabled = True  # class attributes: the values a new thread starts with
    batching = False


_local = _ThreadState()

# -- kg.function's view of the Python code (see kernelgraph/jit) --------------------------------
# While kg.function traces a Python function it sets ``_tracer`` to a callable
# ``(kind, tensor, value)`` that is told when the code reads a tensor's value (bool(t),
# t.item(), t.numpy() ...: the Python code then depends on data a trace would freeze), reads
# a shape, makes a tensor from data (a constant of the trace) or detaches one. It is None
# otherwise, so an eager program pays one global check per read and nothing per op.
_tracer = None

# While a ``with kg.autobatch():`` block is open in some thread, ``_deferred`` is a callable
# ``(op, args, attrs)`` that records the op for batched execution instead of running it (see
# kernelgraph/autobatching.py); the ops of that thread alone are deferred (``_local.batching``),
# other threads' run at once. None otherwise: one global check per op.
_deferred = None


class EagerNode(Node):
    """A node recorded by an eager op: ``op``, ``inputs`` (tensors or Python numbers),
    ``attrs`` and the ``value`` it computed. Shape and dtype come from the value."""

    __slots__ = ("value", "freed", "hooks", "retained")

    @property
    def shape(self):
        return self.value.shape

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def name(self):
        return f"{self.op.name}_{self.seq}"

    @property
    def graph(self):
        return None

    @property
    def device(self):
        return devices.device_of(self.value)

    @property
    def control_inputs(self):
        return ()

    @property
    def next_functions(self):
        """The nodes that made this node's inputs (PyTorch's ``grad_fn.next_functions``)."""
        return tuple(x._node for x in self.inputs if type(x) is Tensor)

    def __repr__(self):
        return f"<{self.op.name} backward node #{self.seq}>"


class Tensor:
    """An eager tensor: a NumPy array plus autograd state (PyTorch semantics).

    Make one with :func:`tensor`. Results of ops on tensors that require grad record the
    node that made them (``grad_fn``), and ``backward()`` fills ``.grad`` of the leaves.
    """

    # ``_grad`` and ``_hooks`` are left unset on new tensors (read through ``grad`` and
    # ``_leaf_hooks``): two attribute stores fewer on every op, which is ~6% of an eager add.
    __slots__ = ("data", "requires_grad", "_grad", "_node", "_hooks", "__weakref__")

    @property
    def grad(self):
        """The accumulated gradient (a Tensor), or None before any backward reached it.

        Assign None or a Tensor of this tensor's shape, dtype and device (as in PyTorch;
        anything else is refused, naming what differs)."""
        try:
            return self._grad
        except AttributeError:
            return None

    @grad.setter
    def grad(self, value):
        if value is not None:
            _check_grad(self, value)  # as PyTorch: a Tensor of this one's dtype, device, size
        self._grad = value

    def _leaf_hooks(self):
        return getattr(self, "_hooks", None)
    __array_priority__ = 100  # so ndarray + Tensor calls Tensor.__radd__

    # -- properties ----------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        if _tracer is not None:
            _tracer("shape", self, None)
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def device(self) -> devices.Device:
        """Where the values live: ``device('cpu')`` or ``device('cuda:0')``."""
        return devices.CPU if type(self.data) is ndarray else devices.device_of(self.data)

    @property
    def is_cuda(self) -> bool:
        return type(self.data) is not ndarray

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def grad_fn(self):
        return self._node

    @property
    def T(self):  # noqa: N802 - PyTorch's name
        return O.transpose(self)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> int:
        if _tracer is not None:
            _tracer("shape", self, None)
        return self.data.size

    def dim(self) -> int:
        return self.data.ndim

    def __len__(self):
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        if _tracer is not None:
            _tracer("shape", self, None)
        return self.data.shape[0]

    # -- conversion ----------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (shares memory, as in PyTorch)."""
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if type(self.data) is not ndarray:
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        if _tracer is not None:
            _tracer("numpy()", self, self.data)
        return self.data

    def item(self):
        return self._read_item("item()")

    def _read_item(self, kind: str):
        if self.data.size != 1:
            raise RuntimeError(f"a Tensor with {self.data.size} elements cannot be converted "
                               "to Scalar")
        value = devices.to_numpy(self.data).item()  # from a GPU: one explicit small copy
        if _tracer is not None:
            _tracer(kind, self, value)
        return value

    def tolist(self):
        value = devices.to_numpy(self.data).tolist()
        if _tracer is not None:
            _tracer("tolist()", self, value)
        return value

    def __float__(self):
        return float(self._read_item("float()"))

    def __int__(self):
        return int(self._read_item("int()"))

    def __bool__(self):
        if self.data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.data.size} elements is "
                               "ambiguous")
        value = bool(self.data.item())
        if _tracer is not None:
            _tracer("bool()", self, value)
        return value

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy() if type(self.data) is not ndarray else self.data  # no silent copy
        if _tracer is not None and type(self.data) is ndarray:
            _tracer("np.asarray()", self, arr)
        return arr if dtype is None else arr.astype(dtype)

    def detach(self) -> Tensor:
        """The same values, cut off from the graph (shares memory)."""
        out = _wrap(self.data)
        if _tracer is not None:
            _tracer("detach", out, self)
        return out

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and self.data.dtype not in D.FLOATS:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        if not requires_grad and self._node is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        self.requires_grad = requires_grad
        return self

    def to(self, *args, device=None, dtype=None) -> Tensor:
        """A copy on another device and/or with another dtype, as in PyTorch:
        ``x.to('cuda')``, ``x.to(kg.float64)``, ``x.to('cuda', kg.float64)``. Returns
        ``self`` when nothing changes; records the copy for autograd."""
        for a in args:
            if isinstance(a, devices.Device) or (isinstance(a, str) and _is_device_name(a)):
                device = a
            elif isinstance(a, str):
                try:
                    dtype = D.as_dtype(a)
                except TypeError:
                    raise TypeError(f"Tensor.to() expects a device ('cpu', 'cuda', 'cuda:0') "
                                    f"or a dtype (kg.float32, 'float64' ...), got {shown(a)}") \
                        from None
            else:
                dtype = a
        out = self
        if dtype is not None and D.as_dtype(dtype) is not self.dtype:
            out = O.cast(out, dtype=D.as_dtype(dtype))
        if device is not None:
            target = devices.device(device)
            if target != self.device:
                devices.require(target)
                out = O.to_device(out, device=target.name)
        return out

    def cpu(self) -> Tensor:
        """This tensor on the host (``self`` when it is there already)."""
        return self.to(devices.CPU)

    def cuda(self, device=None) -> Tensor:
        """This tensor on the GPU (``cuda:0`` unless ``device``)."""
        return self.to(devices.device("cuda" if device is None else device
                                      if isinstance(device, str | devices.Device)
                                      else f"cuda:{device}"))

    def float(self) -> Tensor:
        return self.to(D.float32)

    def double(self) -> Tensor:
        return self.to(D.float64)

    def long(self) -> Tensor:
        return self.to(D.int64)

    def int(self) -> Tensor:
        return self.to(D.int32)

    def __repr__(self):
        body = np.array2string(devices.to_numpy(self.data), separator=", ", prefix="tensor(")
        extra = f", device='{self.device}'" if type(self.data) is not ndarray else ""
        if self.data.dtype not in (D.float32, D.int64, D.bool_):
            extra += f", dtype=kg.{self.data.dtype.name}"
        if self._node is not None and self.requires_grad:
            extra += f", grad_fn=<{self._node.op.name}>"
        elif self.requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    __hash__ = object.__hash__  # == is elementwise, as in PyTorch; identity hashing

    # -- autograd ------------------------------------------------------------------------------
    def backward(self, grad=None, retain_graph: bool | None = None, create_graph: bool = False):
        """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires grad."""
        backward(self, grad, retain_graph=retain_graph, create_graph=create_graph)

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward (leaves always keep it)."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._node is not None:
            self._node.retained = weakref.ref(self)

    def register_hook(self, fn):
        """Call ``fn(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient, and must have its shape, dtype and device (as in PyTorch).
        Returns a handle with ``.remove()``."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self._node is not None:
            if self._node.hooks is None:
                self._node.hooks = []
            hooks = self._node.hooks
        else:
            if self._leaf_hooks() is None:
                self._hooks = []
            hooks = self._hooks
        hooks.append(fn)
        return _HookHandle(hooks, fn)


class _HookHandle:
    def __init__(self, hooks, fn):
        self._hooks, self._fn = hooks, fn

    def remove(self):
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)


def _wrap(data, requires_grad=False) -> Tensor:
    t = Tensor.__new__(Tensor)
    t.data = data
    t.requires_grad = requires_grad
    t._node = None
    return t


def tensor(data, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (a number, nested list, or array).

    Python floats become float32 and ints int64 (PyTorch's defaults); arrays keep their dtype
    where kernelgraph keeps it (float32, float64, int32, int64, bool). Other dtypes are
    converted only exactly: float16 to float32, int8/int16/uint8/uint16/uint32 to int64,
    byte-swapped arrays to native order, uint64 to int64 when every value fits. What cannot
    be held exactly (an int beyond int64, complex numbers, text, objects, dates) raises
    :class:`kernelgraph.dtypes.ConversionError`; a list holding a float is read as floats,
    a big int among them too (``kg.tensor([2.5, 2**70])`` is float32, as in PyTorch). An
    explicit ``dtype`` converts as PyTorch does (floats truncated toward zero for an integer
    dtype, nonzero is True), except that an integer out of the dtype's range, or a NaN or
    infinity for an integer dtype, is refused for arrays too (PyTorch wraps an array's
    values in silence). See
    :func:`kernelgraph.dtypes.convert`. The tensor goes to ``device``, else to the
    ``with kg.device(...)`` device, else the CPU.

    >>> import kernelgraph as kg
    >>> kg.tensor([[1, 2], [3, 4]]).dtype.name, kg.tensor(2.5).dtype.name
    ('int64', 'float32')
    """
    source = None
    if isinstance(data, Tensor):
        if device is None and devices.current() is None:
            device = data.device  # a copy stays where the original lives
        source, data = data, devices.to_numpy(data.data)
    if isinstance(data, Node):
        raise TypeError(f"kg.tensor() got the graph node '{data.name}'; graph nodes have no "
                        "value until a Session runs them")
    arr = D.convert(data, dtype, what="kg.tensor")
    target = devices.device(device) if device is not None else devices.current()
    t = _wrap(arr if target is None or target.type == "cpu" else devices.transfer(arr, target))
    if requires_grad:
        t.requires_grad_(True)
    if _tracer is not None:  # made from data: a constant of a trace; from a tensor: a copy
        if source is None:
            _tracer("new", t, None)
        else:
            _tracer("copy", t, source)
    return t


# -- running ops ---------------------------------------------------------------------------------
def _is_device_name(text: str) -> bool:
    try:
        devices.device(text)
    except ValueError:
        return False
    return True


def _value(a, op=None, args=()):
    """The value an op computes on for operand ``a`` (one of ``args``, the op's operands): a
    tensor's array; a NumPy array, a list or a NumPy scalar converted exactly as kg.tensor
    converts it (an array of a kept dtype as it is); Python numbers as they are (weak)."""
    t = type(a)
    if t is Tensor:
        return a.data
    if t is ndarray:
        return a if a.dtype in _KEPT else D.operand(a, *_argument(op, args, a))
    if t is float or t is int or t is bool:
        return a
    if devices.is_cuda_array(a):
        return a
    if isinstance(a, Node):
        raise TypeError(f"cannot mix the graph node '{a.name}' with eager tensors; run the "
                        "graph in a Session first, or build everything in one mode")
    if isinstance(a, list | tuple | np.generic):
        op_name, position = _argument(op, args, a)
        return D.convert(a, what=f"{op_name}(): argument {position + 1}" if op_name
                         else "an operand")
    raise TypeError(f"expected a kg.Tensor or a number, got {type(a).__name__}")


def _argument(op, args, a) -> tuple:
    """(op name, position of ``a`` among ``args``) for a conversion's error message."""
    return (op.name if op is not None else "",
            next((i for i, x in enumerate(args) if x is a), 0))


_KEPT = D.KEPT  # a module global: one lookup on the hot path


def _explain(op, args, attrs, error):
    """Turn a kernel's error into one that names the op, the shapes and dtypes (see
    :meth:`kernelgraph.ops.registry.Op.explain`)."""
    return op.explain([_value(a, op, args) for a in args], attrs, error)


def apply(op, args, attrs) -> Tensor:
    """Run ``op`` now on eager tensors (the eager front-end of every op)."""
    if attrs and "name" in attrs:
        attrs = {k: v for k, v in attrs.items() if k != "name"}
    if _deferred is not None and _local.batching:
        return _deferred(op, args, attrs)
    values, need, any_tensor, on_gpu = [], False, False, False
    for a in args:
        if type(a) is Tensor:
            d = a.data
            values.append(d)
            any_tensor = True
            if type(d) is not ndarray:
                on_gpu = True
            if a.requires_grad:
                need = True
        else:
            values.append(_value(a, op, args))
    if not any_tensor:
        if values and not isinstance(values[0], ndarray):
            values[0] = tensor(values[0]).data  # kg.add(1.0, 2.0): the first number is a tensor
            on_gpu = type(values[0]) is not ndarray
        elif not values and devices.current() is not None:  # kg.random.normal(...) in a scope
            on_gpu = devices.current().type != "cpu"
    forward = op.forward
    if on_gpu:
        forward = (devices.forward_for_values(op, values) if values else
                   devices.forward_for(op, devices.current()))
    start = time.perf_counter() if trace.active else 0.0
    try:
        out = forward(*values, **attrs)
    except devices.DeviceError:
        raise
    except Exception as e:  # noqa: BLE001 - re-raised with the op's shapes named
        raise _explain(op, args, attrs, e) from None
    result = _wrap(out)
    if need and _local.grad_enabled and op.grad is not None:
        _record(op, args, attrs, result)
        result.requires_grad = True
    if trace.active:
        _trace(op, args, attrs, result, start)
    return result


def _record(op, args, attrs, result):
    node = EagerNode.__new__(EagerNode)
    node.op = op
    node.inputs = args
    node.attrs = attrs
    node.value = result.data
    node.seq = next(_sequence)
    node.freed = False
    node.hooks = None
    node.retained = None
    node.location = None
    result._node = node
    return node


def _trace(op, args, attrs, result, start):
    elapsed = time.perf_counter() - start
    # While someone watches, every op is recorded (not only those that need gradients), so
    # the whole computation can be drawn; requires_grad is left as it was.
    node = result._node if result._node is not None else _record(op, args, attrs, result)
    node.location = user_location(3)
    trace.emit("node_added", node=node, mode="eager", location=node.location)
    trace.emit("node_executed", node=node, mode="eager", seconds=elapsed)


def _binary(op):
    """Python operator ``x <op> y`` for a Tensor on the left: the eager hot path.

    The common case -- two tensors of one dtype whose ufunc loop exists, nobody tracing --
    calls the kernel's ufunc directly; everything else takes :func:`apply`.
    """
    loops = op.forward.kernel.by_dtype
    new = Tensor.__new__

    def method(x, y):
        if _deferred is not None and _local.batching:
            return _deferred(op, (x, y), {})
        ty = type(y)
        if ty is Tensor:
            yd = y.data
            need = x.requires_grad or y.requires_grad
        elif ty is float:
            yd = y
            need = x.requires_grad
        else:
            return apply(op, (x, y), {})
        xd = x.data
        if type(xd) is not ndarray:
            return apply(op, (x, y), {})  # a GPU tensor: the CUDA kernel
        dt = xd.dtype
        u = loops.get(dt)
        if u is None or trace.active or (yd.dtype is not dt if ty is Tensor else dt.kind != "f"):
            return apply(op, (x, y), {})
        try:
            out = u(xd, yd)
        except Exception as e:  # noqa: BLE001
            raise _explain(op, (x, y), {}, e) from None
        t = new(Tensor)
        t.data = out if type(out) is ndarray else np.asarray(out)
        if need and _local.grad_enabled:
            _record(op, (x, y), None, t)
            t.requires_grad = True
        else:
            t._node = None
            t.requires_grad = False
        return t

    return method


# The registry dispatches here for eager tensors and for calls with no tensor at all.
registry.FRONTENDS[Tensor] = apply
registry.DEFAULT_FRONTEND[:] = [apply]


# -- backward ------------------------------------------------------------------------------------
_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the "
          "graph are freed when you call .backward() or autograd.grad(). Specify "
          "retain_graph=True if you need to backward through the graph a second time or if "
          "you need to access saved tensors after calling backward.")


class _EagerMode(autodiff.Mode):
    """Eager tensors as autodiff sees them: values are arrays (or tensors when building a
    differentiable backward graph), and gradients gather under nodes and leaf tensors."""

    def __init__(self, create_graph):
        self.create_graph = create_graph
        self._sums = {}  # id(leaf) -> the array this backward sums the leaf's gradient in
        self.sinks = {}  # id(leaf) -> (leaf, its Sink): gradients handed in as factors

    def accumulate(self, key, total, g):
        # A weight used many times (a tree network's layer at every node) gets a gradient per
        # use: after the first sum, which makes a new array, they are added into that array
        # in place (the same IEEE additions as the add op's, one allocation and dispatch
        # fewer per use). Only an array made here is written: a rule's result may be shared
        # (one bias gradient handed to two inputs). An RNN cell's weights skip this: their
        # rule hands the factors to a Sink (ops/products.py).
        # (propagate hands over g in the leaf's shape and dtype.)
        if type(key) is Tensor and not self.create_graph:
            if self._sums.get(id(key)) is total and type(g) is ndarray:
                return np.add(total, g, out=total)
            total = O.add(total, g)
            if type(total) is ndarray:
                self._sums[id(key)] = total
            return total
        return O.add(total, g)

    def value(self, node):
        if not self.create_graph:
            return node.value
        # The output as a tensor of the graph being differentiated, so that a rule that
        # reads it (tanh's 1 - y**2) is differentiated through it too, as PyTorch's saved
        # result is: d2/dx2 tanh(x) is -2 y (1 - y**2), not 0.
        out = _wrap(node.value)
        out._node = node
        out.requires_grad = True
        return out

    def inputs(self, node):
        needs, values, keys = [], [], []
        as_tensor, sinks = self.create_graph, self.sinks
        for x in node.inputs:
            if type(x) is Tensor:
                values.append(x if as_tensor else x.data)
                if x.requires_grad:
                    if x._node is None:  # a leaf: a rule may hand its gradient to a sink
                        if as_tensor:
                            needs.append(True)
                        else:
                            entry = sinks.get(id(x))
                            if entry is None:
                                entry = sinks[id(x)] = (x, Sink())
                            needs.append(entry[1])
                        keys.append(x)
                    else:
                        needs.append(True)
                        keys.append(x._node)
                    continue
            else:
                values.append(x)
            needs.append(False)
            keys.append(None)
        return needs, values, keys

    def same_shape(self, g, x):
        return g.shape == x.shape

    def on_gradient(self, node, g):
        if node.hooks:
            g = _run_hooks(node.hooks, g, self.create_graph)
        if node.retained is not None:
            owner = node.retained()
            if owner is not None:
                owner._grad = _as_grad(g, owner.grad, self.create_graph)
        return g


def _run_hooks(hooks, g, create_graph):
    for hook in hooks:
        replaced = hook(g if create_graph else _wrap(g))
        if replaced is not None:
            _check_hook_result(hook, replaced, g.data if create_graph else g)
            g = replaced if create_graph else replaced.data
    return g


def _type_name(value) -> str:
    t = type(value)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _kind(data) -> str:
    """'float32' for a host array, 'cuda:0 float32' for a device one (a hook's message)."""
    where = devices.device_of(data)
    return data.dtype.name if where.type == "cpu" else f"{where} {data.dtype.name}"


def _check_hook_result(hook, replaced, g) -> None:
    """A hook may replace a gradient only by a tensor of its dtype, device and shape (as in
    PyTorch, whose words these are; 'Tensor' where PyTorch still says 'Variable')."""
    if not isinstance(replaced, Tensor):
        raise TypeError(f"expected Tensor, but hook returned '{_type_name(replaced)}'")
    new = replaced.data
    name = getattr(hook, "__name__", "<unknown>")
    if new.dtype != g.dtype or devices.device_of(new) != devices.device_of(g):
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {_kind(g)} got "
                           f"{_kind(new)})")
    if new.shape != g.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")


def _check_grad(t, value) -> None:
    """What ``t.grad = value`` accepts, with PyTorch's words: None, or a Tensor of ``t``'s
    dtype, device and size."""
    if not isinstance(value, Tensor):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                        f"{_type_name(value)}")
    new, own = value.data, t.data
    if new.dtype != own.dtype:
        raise RuntimeError(f"attempting to assign a gradient with dtype '{new.dtype.name}' to "
                           f"a tensor with dtype '{own.dtype.name}'. The gradient must match "
                           "the tensor's dtype")
    got, want = devices.device_of(new), devices.device_of(own)
    if got.type != want.type:
        raise RuntimeError(f"attempting to assign a gradient with device type '{got.type}' to "
                           f"a tensor with device type '{want.type}'. Please ensure that the "
                           "gradient and the tensor are on the same device")
    if got != want:
        raise RuntimeError(f"attempting to assign a gradient located on device with index "
                           f"'{got.index}' to a tensor located on device with index "
                           f"'{want.index}'. Please ensure that the gradient and the tensor "
                           "are on the same device")
    if new.shape != own.shape:
        raise RuntimeError(f"attempting to assign a gradient of size '{list(new.shape)}' to a "
                           f"tensor of size '{list(own.shape)}'. Please ensure that the "
                           "gradient and the tensor are the same size")


def _as_grad(g, previous, create_graph):
    if create_graph:
        return g if previous is None else previous + g
    if type(g) is ndarray and not g.flags.writeable:
        g = g.copy()  # a broadcast view; .grad must be an array the user may change
    if previous is None:
        return _wrap(g)
    return _wrap(O.add(previous.data, g))


def _reachable(roots):
    order, seen, stack = [], set(), [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.freed:
            raise RuntimeError(_FREED)
        order.append(node)
        for x in node.inputs:
            if type(x) is Tensor and x._node is not None:
                stack.append(x._node)
    order.sort(key=lambda n: n.seq, reverse=True)
    return order


def _towards(order, inputs):
    """``autograd.grad``'s walk, as PyTorch's engine runs it: the nodes of ``order`` (latest
    first) on a path to one of ``inputs`` (nothing beyond them runs: no rule, no hook), the
    ids of the input nodes, whose gradients are kept (an input may also lead to an earlier
    one: ``t = 2 * x``, inputs ``[x, t]``), and those of them that lead to no other input."""
    targets = {id(x._node if x._node is not None else x) for x in inputs}
    leads, ends = set(), set()
    for node in reversed(order):  # earliest first: a node's inputs are decided before it
        onward = any(type(x) is Tensor and x.requires_grad and
                     (id(x) in targets if x._node is None else id(x._node) in leads)
                     for x in node.inputs)
        if onward or id(node) in targets:
            leads.add(id(node))
            if not onward:
                ends.add(id(node))
    keep = frozenset(i for i in targets if i in leads)
    return [n for n in order if id(n) in leads], keep, frozenset(ends)


def _differentiate(tensors, grad_tensors, retain_graph, create_graph, inputs=None):
    """Propagate from ``tensors`` and return autodiff's gradient dict, writing no ``.grad``.
    With ``inputs`` (``autograd.grad``'s), only the nodes on a path to one of them are
    walked, and each input's total gradient stays in the dict (see :func:`_towards`)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif isinstance(grad_tensors, Tensor | ndarray | float | int):
        grad_tensors = [grad_tensors]
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} gradients for {len(tensors)} tensors")
    grads = {}
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        if g is None:
            if t.data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = O.ones_like(t.data)
        else:
            g = _value(g)
            if devices.is_cuda_array(g):
                g = O.cast(g, dtype=t.dtype)
            else:
                g = devices.transfer(np.asarray(g, dtype=t.dtype), t.device)
            if g.shape != t.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{g.shape} and output[{i}] has a shape of {t.shape}.")
        key = t._node if t._node is not None else t
        g = _wrap(g) if create_graph else g
        prev = grads.get(id(key))
        grads[id(key)] = (key, g if prev is None else prev[1] + g)
    if retain_graph is None:
        retain_graph = create_graph  # as in PyTorch
    order = _reachable([t._node for t in tensors])
    keep = ends = frozenset()
    if inputs is not None:
        order, keep, ends = _towards(order, inputs)
    mode = _EagerMode(create_graph)
    with set_grad_enabled(bool(create_graph)):
        autodiff.propagate(order, grads, mode, keep, ends)
        stacked = Stacker()
        for leaf_id, (leaf, sink) in mode.sinks.items():
            g = sink.value(stacked)  # a weight's per-step gradients, as one product now
            if g is not None:
                prev = grads.get(leaf_id)
                grads[leaf_id] = (leaf, g if prev is None else O.add(prev[1], g))
    if not retain_graph:
        for node in order:
            node.freed = True
    return grads


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False) -> None:
    """``kg.autograd.backward``: accumulate gradients of ``tensors`` into the leaves.

    ``retain_graph`` defaults to ``create_graph``; without it the graph is freed afterwards.
    """
    grads = _differentiate(tensors, grad_tensors, retain_graph, create_graph)
    with set_grad_enabled(bool(create_graph)):
        for leaf, g in grads.values():
            if type(leaf) is Tensor:
                hooks = leaf._leaf_hooks()
                if hooks:
                    g = _run_hooks(hooks, g, create_graph)
                if trace.active:
                    trace.emit("gradient", node=leaf, grad=g)
                leaf._grad = _as_grad(g, leaf.grad, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """``kg.autograd.grad``: gradients of ``outputs`` w.r.t. ``inputs`` (a tuple, one per
    input), computed without touching any ``.grad``. Each is the total derivative, also
    where one input is computed from another (``t = 2 * x; z = 3 * t``:
    ``grad(z, [x, t])`` is ``(6, 3)``, as in PyTorch); only the part of the graph that
    leads to an input is walked (hooks beyond the inputs do not run)."""
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if not all(x.requires_grad for x in inputs):  # checked before anything runs (PyTorch)
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _differentiate(outputs, grad_outputs, retain_graph, create_graph, inputs)
    result = []
    for k, x in enumerate(inputs):
        entry = grads.get(id(x._node if x._node is not None else x))
        if entry is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {k} appears to not "
                                   "have been used in the graph. Set allow_unused=True if "
                                   "this is the desired behavior.")
            result.append(None)
        else:
            g = entry[1]
            if not create_graph and type(g) is ndarray and not g.flags.writeable:
                g = g.copy()
            result.append(g if create_graph else _wrap(g))
    return tuple(result)


# -- grad mode -----------------------------------------------------------------------------------
# Grad mode lives in ``_local`` (per thread). As in PyTorch, a decorated function gets a fresh
# switch per call -- so a recursive call, or two threads in one function, each restore the
# mode they found -- and a decorated generator function runs under the mode at every resume,
# not only while the generator object is made.
class _GradMode(contextlib.ContextDecorator):
    mode = False

    def __enter__(self):
        self.prev = _local.grad_enabled
        _local.grad_enabled = self.mode
        return self

    def __exit__(self, *exc):
        _local.grad_enabled = self.prev
        return False

    def _recreate_cm(self):
        return type(self)()

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self._recreate_cm, func)
        return super().__call__(func)


def _wrap_generator(switch, func):
    @functools.wraps(func)
    def generator(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with switch():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with switch():
                        gen.close()
                    raise
                except BaseException as e:  # noqa: BLE001 - handed to the generator
                    with switch():
                        response = gen.throw(e)
                else:
                    with switch():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value

    return generator


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """``with kg.no_grad():`` computes without recording gradients, in this thread only.

    Also a decorator, with or without parentheses (``@kg.no_grad`` / ``@kg.no_grad()``).

    >>> import kernelgraph as kg
    >>> w = kg.tensor(2.0, requires_grad=True)
    >>> with kg.no_grad():
    ...     (w * 3.0).requires_grad
    False
    """

    mode = False

    def __new__(cls, func=None):
        self = super().__new__(cls)
        return self if func is None else self(func)  # @kg.no_grad, as PyTorch allows


class enable_grad(no_grad):  # noqa: N801 - PyTorch's name
    """Turn recording back on inside a ``no_grad`` block (this thread only; also a
    decorator, with or without parentheses)."""

    mode = True


class set_grad_enabled(_GradMode):  # noqa: N801 - PyTorch's name
    """Turn recording of the backward graph on or off for this thread.

    As in PyTorch it works as a call (``kg.set_grad_enabled(False)`` switches at once), as a
    ``with`` block (the previous mode comes back at its end) and as a decorator (the mode
    holds inside the function only). ``mode`` must be a bool.

    >>> import kernelgraph as kg
    >>> with kg.set_grad_enabled(False):
    ...     kg.is_grad_enabled()
    False
    >>> kg.is_grad_enabled()
    True
    """

    def __init__(self, mode: bool):
        if not isinstance(mode, bool | np.bool_):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be "
                            f"bool, not {type(mode).__name__}")
        self.prev = _local.grad_enabled
        self.mode = bool(mode)
        _local.grad_enabled = self.mode

    def __enter__(self):
        _local.grad_enabled = self.mode
        return self

    def _recreate_cm(self):
        return set_grad_enabled(self.mode)

    def __call__(self, func):
        _local.grad_enabled = self.prev  # decorating switches nothing outside the function
        return super().__call__(func)


def is_grad_enabled() -> bool:
    """Whether ops on tensors that require grad record the backward graph in this thread
    (``False`` inside ``kg.no_grad()``; a new thread starts with ``True``)."""
    return _local.grad_enabled


# -- inspection ----------------------------------------------------------------------------------
def graph_of(*tensors) -> dict:
    """The recorded graph behind ``tensors``: ``{'nodes': [...], 'edges': [(src, dst)]}``
    with every node's id, op, shape, dtype and value, in creation order."""
    nodes, edges, seen = [], [], {}
    leaves = {}

    def leaf_id(t):
        if id(t) not in leaves:
            leaves[id(t)] = (f"leaf_{len(leaves)}", t)
        return leaves[id(t)][0]

    stack = [t._node for t in tensors if t._node is not None]
    while stack:
        n = stack.pop()
        if n.seq in seen:
            continue
        seen[n.seq] = n
        for x in n.inputs:
            if type(x) is Tensor:
                if x._node is not None:
                    stack.append(x._node)
                    edges.append((x._node.name, n.name))
                else:
                    edges.append((leaf_id(x), n.name))
    for lid, t in leaves.values():
        nodes.append({"id": lid, "op": "leaf", "shape": t.shape, "dtype": t.dtype.name,
                      "value": t.data, "requires_grad": t.requires_grad})
    for n in sorted(seen.values(), key=lambda n: n.seq):
        nodes.append({"id": n.name, "op": n.op.name, "shape": n.shape, "dtype": n.dtype.name,
                      "value": n.value, "requires_grad": True})
    return {"nodes": nodes, "edges": edges}


# -- operators and methods -----------------------------------------------------------------------
def _install_methods():
    operators.install(Tensor, apply, binary=_binary, equality=True)
    for name in ["exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs", "neg", "sign",
                 "square", "matmul", "maximum", "minimum", "pow", "add", "sub", "mul", "div"]:
        fn = getattr(O, name)
        setattr(Tensor, name, lambda self, *args, _fn=fn, **kw: _fn(self, *args, **kw))

    def reduction(op):
        @functools.wraps(op.forward)
        def method(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
            axis = dim if dim is not None else axis
            keepdims = keepdim if keepdim is not None else keepdims
            return apply(op, (self,), {"axis": axis, "keepdims": keepdims})
        return method

    Tensor.sum = reduction(O.sum)
    Tensor.mean = reduction(O.mean)
    Tensor.max = reduction(O.max)
    Tensor.softmax = lambda self, axis=-1, dim=None: O.softmax(
        self, axis=axis if dim is None else dim)
    Tensor.log_softmax = lambda self, axis=-1, dim=None: O.log_softmax(
        self, axis=axis if dim is None else dim)
    def reshape_method(self, *shape):
        """``x.reshape(2, 3)`` or ``x.reshape((2, 3))``: PyTorch's rules (see kg.reshape)."""
        if not shape:
            raise TypeError('reshape() missing 1 required positional arguments: "shape"')
        one = len(shape) == 1 and isinstance(shape[0], tuple | list)
        return O.reshape(self, shape=shape[0] if one else shape)

    Tensor.reshape = reshape_method
    Tensor.view = Tensor.reshape

    def transpose_method(self, dim0=None, dim1=None):
        """Swap two dims (PyTorch); with no arguments, reverse all dims."""
        if dim0 is None and dim1 is None:
            return O.transpose(self)
        return O.transpose(self, perm=swapped_axes(self.ndim, dim0, dim1))

    def permute_method(self, *dims):
        """``x.permute(1, 0)`` or ``x.permute((1, 0))``: dims reordered (PyTorch)."""
        one = len(dims) == 1 and isinstance(dims[0], tuple | list | np.ndarray | range)
        return O.transpose(self, perm=dims[0] if one else dims)

    Tensor.transpose = transpose_method
    Tensor.t = lambda self: O.transpose(self)
    Tensor.permute = permute_method
    Tensor.broadcast_to = lambda self, shape: O.broadcast_to(self, shape=tuple(shape))
    Tensor.expand = lambda self, *shape: O.broadcast_to(
        self, shape=tuple(shape[0]) if len(shape) == 1 else shape)


_install_methods()


def zeros(*shape, dtype=None, requires_grad=False, device=None) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype``): ``kg.zeros(2, 3)`` or
    ``kg.zeros((2, 3))``; sizes are ints, checked as PyTorch checks them."""
    shape = size_arg(shape, "zeros")
    return tensor(np.zeros(shape, D.as_dtype(dtype)), requires_grad=requires_grad,
                  device=device)


def ones(*shape, dtype=None, requires_grad=False, device=None) -> Tensor:
    """A tensor of ones (float32 unless ``dtype``): ``kg.ones(2, 3)`` or
    ``kg.ones((2, 3))``; sizes are ints, checked as PyTorch checks them."""
    shape = size_arg(shape, "ones")
    return tensor(np.ones(shape, D.as_dtype(dtype)), requires_grad=requires_grad,
                  device=device)


def arange(*args, dtype=None, device=None) -> Tensor:
    """Like ``torch.arange``: integers give int64, floats float32.

    >>> import kernelgraph as kg
    >>> kg.arange(3).dtype.name, kg.arange(0, 1, 0.5).dtype.name
    ('int64', 'float32')
    """
    arr = np.arange(*args)
    if dtype is None and arr.dtype.kind == "f":
        dtype = D.DEFAULT_FLOAT  # np.arange gives float64; PyTorch's default is float32
    return tensor(arr, dtype=dtype, device=device)

