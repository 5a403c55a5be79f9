"""Eager tensors: :class:`Tensor`, a NumPy (or CUDA) array plus autograd state with
PyTorch's names, :func:`tensor`, which makes one from data, and :class:`EagerNode`, the node
an op records for its result.

The class body holds what a tensor is (its array, autograd state, shape, conversions); the
methods that run ops or autograd (the Python operators, ``exp``, ``sum``, ``reshape``,
``add_``, ``backward``, printing ...) live with what they use and are set on the class in
one place, :func:`.methods.install`. The factories (``zeros``, ``ones`` ...) are in
:mod:`.creation`.
"""

from __future__ import annotations

import weakref

import numpy as np

from .. import devices
from .. import dtypes as D
from .. import ops as O
from ..errors import shown
from ..graph import Node, _sequence
from . import versions
from .printing import Size

ndarray = np.ndarray

# -- kg.function's view of the Python code (see kernelgraph/jit) --------------------------------
# While kg.function traces a Python function it sets ``_tracer`` to a callable
# ``(kind, tensor, value)`` that is told when the code reads a tensor's value (bool(t),
# t.item(), t.numpy() ...: the Python code then depends on data a trace would freeze), reads
# a shape, makes a tensor from data (a constant of the trace) or detaches one. It is None
# otherwise, so an eager program pays one global check per read and nothing per op. Set it
# with ``kernelgraph.eager.set_tracer``.
_tracer = None


class EagerNode(Node):
    """A node recorded by an eager op: ``op``, ``inputs`` (tensors or Python numbers),
    ``attrs`` and the ``value`` it computed. Shape and dtype come from the value."""

    __slots__ = ("value", "freed", "hooks", "retained")

    symbolic = False  # a recorded value, not a node of a static graph (see Node.symbolic)

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
        """PyTorch's ``grad_fn.next_functions``: a ``(node, 0)`` pair per tensor input, the
        node that made it, an :class:`AccumulateGrad` for a leaf that requires grad, or None
        for a tensor gradients do not reach."""
        pairs = []
        for x in self.inputs:
            if type(x) is not Tensor:
                continue
            node = source(x, self.seq)[0]
            if node is None and x.requires_grad:
                node = AccumulateGrad(x)
            pairs.append((node, 0))
        return tuple(pairs)

    def __repr__(self):
        return f"<{self.op.name} backward node #{self.seq}>"


class AccumulateGrad:
    """What PyTorch's ``next_functions`` shows for a leaf that requires grad: the step of
    backward that adds into ``variable.grad``."""

    __slots__ = ("variable",)
    next_functions = ()

    def __init__(self, variable):
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"


# PyTorch's words. (The factories'; kg.tensor(..., requires_grad=True) calls requires_grad_,
# where PyTorch's requires_grad_() says "only Tensors of floating point dtype ...")
_ONLY_FLOATS = "Only Tensors of floating point and complex dtype can require gradients"
_NOT_LEAF = ("you can only change requires_grad flags of leaf variables. If you want to use a "
             "computed variable in a subgraph that doesn't require differentiation use "
             "var_no_grad = var.detach().")


class Tensor:
    """An eager tensor: a NumPy array plus autograd state (PyTorch semantics).

    Make one with :func:`tensor`. Results of ops on tensors that require grad record the
    node that made them (``grad_fn``), and ``backward()`` fills ``.grad`` of the leaves.
    """

    # ``_grad`` and ``_hooks`` are left unset on new tensors (read through ``grad`` and
    # ``_leaf_hooks``): two attribute stores fewer on every op, which is ~6% of an eager add.
    # So are ``_past`` (what an in-place op replaced: see :func:`source`), ``_param``
    # (set on an ``nn.Parameter``) and ``_unversioned`` (set on ``t.data``: its in-place
    # writes are not stamped, so autograd does not see them, as in PyTorch).
    __slots__ = ("_array", "requires_grad", "_grad", "_node", "_hooks", "_past", "_param",
                 "_unversioned", "__weakref__")

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
    def shape(self) -> Size:
        """The shape, a :class:`Size` (a tuple printing as ``torch.Size([2, 3])``)."""
        if _tracer is not None:
            _tracer("shape", self, None)
        return Size(self._array.shape)

    @property
    def dtype(self):
        return self._array.dtype

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def device(self) -> devices.Device:
        """Where the values live: ``device('cpu')`` or ``device('cuda:0')``."""
        return devices.CPU if type(self._array) is ndarray else devices.device_of(self._array)

    @property
    def is_cuda(self) -> bool:
        return type(self._array) is not ndarray

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def grad_fn(self):
        return self._node

    @property
    def _version(self) -> int:
        """How many in-place ops wrote into this tensor's memory (shared with its views),
        as PyTorch's ``t._version``."""
        return versions.version(self._array)

    @property
    def T(self):  # noqa: N802 - PyTorch's name
        return O.transpose(self)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> int:
        if _tracer is not None:
            _tracer("shape", self, None)
        return self._array.size

    def dim(self) -> int:
        return self._array.ndim

    def __len__(self):
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        if _tracer is not None:
            _tracer("shape", self, None)
        return self._array.shape[0]

    @property
    def data(self) -> Tensor:
        """A tensor sharing this one's storage, cut off from autograd (PyTorch's ``t.data``):
        writes through it change this tensor's values unseen by autograd (its version counter
        is its own), as the classic manual step ``w.data -= lr * w.grad.data`` needs.

        >>> import kernelgraph as kg
        >>> w = kg.tensor([1.0, 2.0], requires_grad=True)
        >>> w.data.mul_(10)
        tensor([10., 20.])
        >>> w.data.requires_grad, w
        (False, tensor([10., 20.], requires_grad=True))

        ``t.data = other`` makes ``t`` hold ``other``'s storage (its shape and dtype too)."""
        out = _wrap(self._array)
        out._unversioned = True
        if _tracer is not None:
            _tracer("detach", out, self)
        return out

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {_type_name(value)}")
        self._array = value._array

    # -- conversion ----------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (shares memory, as in PyTorch)."""
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if type(self._array) is not ndarray:
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        if _tracer is not None:
            _tracer("numpy()", self, self._array)
        return self._array

    def item(self):
        return self._read_item("item()")

    def _read_item(self, kind: str):
        if self._array.size != 1:
            raise RuntimeError(f"a Tensor with {self._array.size} elements cannot be converted "
                               "to Scalar")
        value = devices.to_numpy(self._array).item()  # from a GPU: one explicit small copy
        if _tracer is not None:
            _tracer(kind, self, value)
        return value

    def tolist(self):
        value = devices.to_numpy(self._array).tolist()
        if _tracer is not None:
            _tracer("tolist()", self, value)
        return value

    def __float__(self):
        return float(self._read_item("float()"))

    def __int__(self):
        return int(self._read_item("int()"))

    def __bool__(self):
        if self._array.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self._array.size} elements is "
                               "ambiguous")
        value = bool(self._array.item())
        if _tracer is not None:
            _tracer("bool()", self, value)
        return value

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy() if type(self._array) is not ndarray else self._array  # no silent copy
        if _tracer is not None and type(self._array) is ndarray:
            _tracer("np.asarray()", self, arr)
        return arr if dtype is None else arr.astype(dtype)

    def detach(self) -> Tensor:
        """The same values, cut off from the graph (shares memory)."""
        out = _wrap(self._array)
        if _tracer is not None:
            _tracer("detach", out, self)
        return out

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Start (or stop) recording operations on this leaf tensor; returns it (PyTorch's
        in-place ``requires_grad_``).

        >>> import kernelgraph as kg
        >>> kg.zeros(2).requires_grad_().requires_grad
        True
        """
        if requires_grad and self._array.dtype not in D.FLOATS:
            raise RuntimeError(_ONLY_FLOATS)
        if not requires_grad and self._node is not None:
            raise RuntimeError(_NOT_LEAF)
        self.requires_grad = bool(requires_grad)
        return self

    def detach_(self) -> Tensor:
        """Cut this tensor off the graph that made it, in place: it becomes a leaf that does
        not require grad (PyTorch's ``detach_``); returns it.

        >>> import kernelgraph as kg
        >>> y = kg.tensor([1.0], requires_grad=True) * 2
        >>> y.detach_().is_leaf, y.requires_grad
        (True, False)
        """
        if self._node is not None and self._node.op.view:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are "
                               "using DistributedDataParallel (DDP) for training, and "
                               "gradient_as_bucket_view is set as True, gradients are views of "
                               "DDP buckets, and hence detach_() cannot be called on these "
                               "gradients. To fix this error, please refer to the "
                               "Optimizer.zero_grad() function in torch/optim/optimizer.py as "
                               "the solution.")
        rebase(self, None, False, next(_sequence))
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

    # (repr and str: PyTorch's printing, from .printing: see .methods.install)

    __hash__ = object.__hash__  # == is elementwise, as in PyTorch; identity hashing

    # -- autograd ------------------------------------------------------------------------------
    # (``backward``: from .backprop, see .methods.install)

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


# -- in-place history ------------------------------------------------------------------------
# A node holds its input *tensors*, and reads their ``_node`` when gradients flow. An in-place
# op (``y.add_(1)``, ``y[0] = v``, ``y.detach_()``) gives ``y`` a new ``_node``, so it also
# keeps what ``y`` was before in ``y._past``: the nodes recorded before the change still see
# the ``y`` they used (PyTorch's edges, fixed when a node is made). ``rebased`` says whether
# any tensor has a past, so that backward looks only then.
rebased = False


def rebase(t: Tensor, node, requires_grad: bool, since: int) -> None:
    """Make ``node`` the one that made ``t`` (None: a leaf) from node number ``since`` on;
    nodes recorded before ``since`` keep seeing ``t``'s old node and requires_grad."""
    global rebased
    entry = (since, t._node, t.requires_grad)
    try:
        t._past.append(entry)
    except AttributeError:
        t._past = [entry]
    rebased = True
    t._node = node
    t.requires_grad = requires_grad


def source(x: Tensor, seq: int) -> tuple:
    """``(node, requires_grad)`` of tensor ``x`` as the node numbered ``seq`` saw it."""
    if rebased:
        try:
            past = x._past
        except AttributeError:
            return x._node, x.requires_grad
        for since, node, requires_grad in past:
            if seq < since:
                return node, requires_grad
    return x._node, x.requires_grad


def tensor(data, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (a number, nested list, or array).

    Python floats become float32 and ints int64 (PyTorch's defaults); arrays keep their dtype
    where kernelgraph keeps it (float32, float64, int32, int64, bool), other dtypes are
    converted only exactly, and an explicit ``dtype`` converts as PyTorch does, except that a
    value the dtype cannot hold is refused (:func:`kernelgraph.dtypes.convert` says how). The
    tensor goes to ``device``, else to the ``with kg.device(...)`` device, else the CPU.

    >>> import kernelgraph as kg
    >>> kg.tensor([[1, 2], [3, 4]]).dtype.name, kg.tensor(2.5).dtype.name
    ('int64', 'float32')
    """
    if type(data) is float and dtype is None:  # (as dtypes.convert makes a Python float)
        arr, source = np.array(data, D.DEFAULT_FLOAT), None
    else:
        arr, source, device = _from_data(data, dtype, device)
    target = devices.device(device) if device is not None else devices.current()
    t = _wrap(arr if target is None or target.type == "cpu" else devices.transfer(arr, target))
    if requires_grad:
        t.requires_grad_(True)
    if _tracer is not None:  # made from data: a constant of a trace; from a tensor: a copy
        _tracer("new" if source is None else "copy", t, source)
    return t


def _from_data(data, dtype, device) -> tuple:
    """``(array, the tensor copied or None, device)`` for ``kg.tensor(data, dtype, device=)``:
    a tensor's copy stays on its device unless told otherwise."""
    source = None
    if isinstance(data, Tensor):
        if device is None and devices.current() is None:
            device = data.device
        source, data = data, devices.to_numpy(data._array)
    if isinstance(data, Node):
        raise TypeError(f"kg.tensor() got the graph node '{data.name}'; graph nodes have no "
                        "value until a Session runs them")
    return D.convert(data, dtype, what="kg.tensor"), source, device


def _wrap(data, requires_grad=False) -> Tensor:
    t = Tensor.__new__(Tensor)
    t._array = data
    t.requires_grad = requires_grad
    t._node = None
    return t


def _is_device_name(text: str) -> bool:
    try:
        devices.device(text)
    except ValueError:
        return False
    return True


def _type_name(value) -> str:
    t = type(value)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _check_grad(t, value) -> None:
    """What ``t.grad = value`` accepts, with PyTorch's words: None, or a Tensor of ``t``'s
    dtype, device and size."""
    if not isinstance(value, Tensor):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                        f"{_type_name(value)}")
    new, own = value._array, t._array
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
