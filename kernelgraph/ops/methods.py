"""One method table for both kinds of tensor: eager tensors and graph nodes get their
PyTorch-style methods (``x.relu()``, ``x.sum(dim=0)``, ``x.view(2, 3)``, ``x.float()`` ...)
from :data:`METHODS`, so a function written once with methods computes at once on eager
tensors and adds nodes on graph nodes.

Every method is written with the public ops, which dispatch on their arguments: the same
function runs on both. The ops whose cards carry the trait ``method`` are methods too, so a
new elementwise op (``sin``, ``cos`` ...) is one without a line here. Methods that need a
value (``item``, ``numpy``, ``backward``, the in-place ``add_`` ...) exist on eager tensors
only; a graph node answers them with an error that names static mode (:data:`EAGER_ONLY`).

>>> import kernelgraph as kg
>>> def f(x):
...     return x.relu().sum(dim=0).mean()
>>> f(kg.tensor([[1.0, -2.0], [3.0, 4.0]])).item()
4.0
>>> x = kg.placeholder(kg.float32, shape=[2, 2])
>>> with kg.Session() as sess:
...     float(sess.run(f(x), {x: [[1.0, -2.0], [3.0, 4.0]]}))
4.0
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import devices
from .. import dtypes as D
from . import closeness, elementwise_math, linalg, torch_reduce
from . import shape_functions as SF
from .elementwise import cast, square
from .nn import log_softmax, softmax
from .registry import OPS, Op
from .shape import reshape, swapped_axes, transpose

#: Method name -> function(self, ...), installed on eager tensors and graph nodes alike.
METHODS: dict[str, Callable] = {}


def method(name: str | None = None):
    """Register a function in :data:`METHODS` under ``name`` (its own name by default)."""
    def register(fn):
        METHODS[name or fn.__name__.rstrip("_")] = fn
        return fn
    return register


# -- PyTorch's reductions and products (ops/torch_reduce.py, ops/linalg.py) ----------------
def _function_method(fn: Callable):
    def call(self, *args, **kw):
        return fn(self, *args, **kw)
    call.__name__ = call.__qualname__ = getattr(fn, "__name__", None) or fn.name  # or a card
    call.__doc__ = fn.__doc__
    return call


# sum mean max min amax amin argmax argmin prod all any std var norm clamp ...: x.sum(dim=0),
# x.max(1) (values, indices), x.max(y) (elementwise), with PyTorch's signatures.
for _name in torch_reduce.__all__:
    METHODS[_name] = _function_method(getattr(torch_reduce, _name))
METHODS["matmul"] = _function_method(linalg.matmul_torch)  # vectors too, as torch.matmul
for _name in ("mm", "bmm", "dot", "outer", "addmm"):
    if hasattr(linalg, _name):
        METHODS[_name] = _function_method(getattr(linalg, _name))


@method()
def softmax_(self, dim: int = -1, *, axis: int | None = None):
    """softmax along ``dim``."""
    return softmax(self, axis=dim if axis is None else axis)


@method()
def log_softmax_(self, dim: int = -1, *, axis: int | None = None):
    """log_softmax along ``dim``."""
    return log_softmax(self, axis=dim if axis is None else axis)


_UNSET = object()


def _torch_softmax(card, what: str):
    def fn(input, dim=_UNSET, dtype=None, *, axis=_UNSET, name=None):  # noqa: A002
        if dtype is not None:
            input = cast(input, dtype=dtype)  # noqa: A001 - PyTorch casts before
        kw = {} if name is None else {"name": name}
        if dim is not _UNSET:
            kw["axis"] = dim
        elif axis is not _UNSET:
            kw["axis"] = axis
        return card(input, **kw)
    fn.__name__ = fn.__qualname__ = what
    fn.__doc__ = (f"``torch.{what}(input, dim)`` (and kernelgraph's ``axis=``): the "
                  f"{what} card along ``dim``, after casting to ``dtype`` if given.")
    return fn


#: ``kg.softmax(x, 1)`` / ``torch.softmax(x, dim=1)``: exported by kernelgraph/__init__.py
#: over the cards, which take ``axis=`` only (they stay ``kg.ops.softmax``).
softmax_torch = _torch_softmax(softmax, "softmax")
log_softmax_torch = _torch_softmax(log_softmax, "log_softmax")

METHODS["square"] = lambda self: square(self)
METHODS["allclose"] = _function_method(closeness.allclose)  # x.allclose(y, rtol=, atol=)
METHODS["isclose"] = _function_method(closeness.isclose)
# PyTorch's other method names for comparisons and logic (plain functions over the cards).
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "true_divide", "isnan", "isinf", "isfinite",
              "logical_not", "logical_and", "logical_or", "logical_xor", "round"):
    METHODS[_name] = _function_method(getattr(elementwise_math, _name))
METHODS["mv"] = _function_method(linalg.mv) if hasattr(linalg, "mv") else METHODS["matmul"]


# -- shapes ----------------------------------------------------------------------------------
@method()
def reshape_(self, *shape):
    """``x.reshape(2, 3)`` or ``x.reshape((2, 3))``: PyTorch's rules (see kg.reshape)."""
    if not shape:
        raise TypeError('reshape() missing 1 required positional arguments: "shape"')
    one = len(shape) == 1 and isinstance(shape[0], tuple | list)
    return reshape(self, shape=shape[0] if one else shape)


@method()
def view_(self, *shape):
    """``x.view(2, 3)``: the elements in a new shape (a view, as reshape here)."""
    if len(shape) == 1 and not isinstance(shape[0], tuple | list | int | np.integer):
        raise TypeError("x.view(dtype) reinterprets the bits in PyTorch; kernelgraph does not "
                        "(use x.to(dtype) to convert the values)")
    return reshape_(self, *shape)


@method()
def transpose_(self, dim0=None, dim1=None):
    """Swap two dims (PyTorch); with no arguments, reverse all dims."""
    if dim0 is None and dim1 is None:
        return transpose(self)
    return transpose(self, perm=swapped_axes(SF._rank(self, "transpose"), dim0, dim1))


METHODS["permute"] = SF.permute
METHODS["t"] = SF.t
METHODS["T"] = property(lambda self: transpose(  # all dims reversed (PyTorch's permute)
    self, perm=None if SF.dims_of(self) is None else tuple(range(self.ndim - 1, -1, -1))))
METHODS["mT"] = property(lambda self: SF.transpose(self, -2, -1))
for _name in ("unsqueeze", "squeeze", "flatten", "unflatten", "expand", "expand_as", "repeat",
              "view_as", "reshape_as", "narrow", "chunk", "clone", "swapaxes", "swapdims",
              "unbind", "flip", "masked_fill", "index_select"):
    METHODS[_name] = getattr(SF, _name)


@method()
def split_(self, split_size, dim: int = 0):
    """``torch.Tensor.split``: pieces of ``split_size`` elements (or of the listed sizes)."""
    return SF.split(self, split_size, dim)


@method()
def broadcast_to_(self, shape):
    """``x`` broadcast to ``shape``."""
    return SF.expand(self, tuple(shape))


@method()
def contiguous_(self, memory_format=None):
    """``x`` itself: kernelgraph's arrays are laid out as their ops need them."""
    return self


@method()
def size_(self, dim=None):
    """The shape (a graph node's may hold None), or the size of ``dim``."""
    s = SF.dims_of(self)
    if dim is None:
        return s
    return s[SF.wrap_dim(dim, len(s), "size")]


@method()
def dim_(self) -> int:
    """The number of dims."""
    return SF._rank(self, "dim")


METHODS["ndimension"] = METHODS["dim"]
METHODS["numel"] = METHODS["nelement"] = SF.numel


# -- dtypes ----------------------------------------------------------------------------------
def _to_dtype(self, dtype):
    dtype = D.as_dtype(dtype)
    return self if self.dtype == dtype else cast(self, dtype=dtype)


def _cast_method(name: str, dtype_name: str):
    def to_dtype(self, memory_format=None):
        return _to_dtype(self, getattr(D, dtype_name))
    to_dtype.__name__ = to_dtype.__qualname__ = name
    to_dtype.__doc__ = f"``x`` as {dtype_name} (``x`` itself if it is already)."
    return to_dtype


for _name, _dt in (("float", "float32"), ("double", "float64"), ("long", "int64"),
                   ("int", "int32"), ("bool", "bool_"), ("half", "float16"),
                   ("short", "int16"), ("char", "int8"), ("byte", "uint8")):
    METHODS[_name] = _cast_method(_name, _dt)


@method()
def to_(self, *args, dtype=None, **kw):
    """``x.to(dtype)`` (a graph node is placed by ``with kg.device(...)``, not moved)."""
    for a in args:
        if isinstance(a, str) and a.split(":")[0] in ("cpu", "cuda") or \
                isinstance(a, devices.Device):
            raise TypeError("x.to(device) on a graph node: in static mode ops are placed with "
                            "`with kg.device('cuda'):` while the graph is built")
        dtype = a
    return self if dtype is None else _to_dtype(self, dtype)


_TENSOR_TYPES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
                 "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


@method()
def type_(self, dtype=None, non_blocking: bool = False):
    """With no argument, the tensor type's name (``'torch.FloatTensor'``); given a dtype or
    such a name, ``x`` as that dtype (eager tensors: a graph node's ``type`` is TF1's)."""
    if dtype is None:
        cuda = "cuda." if getattr(self, "is_cuda", False) else ""
        return f"torch.{cuda}{_TENSOR_TYPES.get(self.dtype.name, 'Tensor')}"
    if isinstance(dtype, str) and dtype.rsplit(".", 1)[-1] in _TENSOR_TYPES.values():
        short = dtype.rsplit(".", 1)[-1]
        dtype = next(k for k, v in _TENSOR_TYPES.items() if v == short)
    return _to_dtype(self, dtype)


@method()
def is_floating_point_(self) -> bool:
    """Whether the dtype is a floating-point one."""
    return np.dtype(self.dtype).kind == "f"


@method()
def is_contiguous_(self, memory_format=None) -> bool:
    """True: kernelgraph's ops take care of the layout themselves."""
    return True


@method()
def element_size_(self) -> int:
    """Bytes per element."""
    return np.dtype(self.dtype).itemsize


@method()
def detach_(self):
    """``x`` held constant by gradients: on a graph node, TF1's ``tf.stop_gradient`` (an
    eager tensor's own ``detach`` cuts it off the recorded graph)."""
    stop = OPS.get("stop_gradient")  # registered by the static front-end
    if stop is None:
        raise TypeError("detach() of a graph node needs kernelgraph.static (tf.stop_gradient)")
    return stop(self)


@method()
def type_as_(self, other):
    """``x`` cast to ``other``'s dtype."""
    return _to_dtype(self, other.dtype)


# -- the ops whose cards say "method" --------------------------------------------------------
def card_methods() -> dict[str, Callable]:
    """Name -> method for every registered op whose card has the trait ``method``."""
    out = {}
    for name, op in list(OPS.items()):
        if "method" in op.traits:
            out[name] = _card_method(op)
    return out


def _card_method(op: Op):
    def call(self, *args, **kw):
        return op(self, *args, **kw)
    call.__name__ = call.__qualname__ = op.name
    call.__doc__ = op.doc
    return call


# -- what only an eager tensor has -----------------------------------------------------------
#: Methods that read a value or change a tensor in place: eager tensors only.
EAGER_ONLY = ("item", "tolist", "numpy", "backward", "retain_grad", "register_hook",
              "requires_grad_", "detach_", "add_", "sub_", "mul_", "div_", "pow_", "zero_",
              "fill_", "copy_", "clamp_", "normal_", "uniform_", "exp_", "relu_", "cpu",
              "cuda")


def _eager_only(name: str):
    def refuse(self, *args, **kw):
        node = getattr(self, "name", "?")
        if name.endswith("_"):
            why = (f"{name}() changes a tensor in place, which only eager tensors do; graph "
                   f"node '{node}' is never changed (static mode): use the op that returns a "
                   "new tensor, or assign to a kg.Variable")
        elif name in ("cpu", "cuda"):
            why = (f"{name}() moves an eager tensor; in static mode a graph node such as "
                   f"'{node}' is placed with `with kg.device(...)` while the graph is built")
        else:
            why = (f"{name}() needs a value, and graph node '{node}' has none while the graph "
                   "is built (static mode): run it with sess.run(node) or node.eval()")
        raise TypeError(why)
    refuse.__name__ = refuse.__qualname__ = name
    return refuse


_CLASSES: list[tuple[type, bool]] = []


def install(cls: type, *, graph_node: bool = False) -> None:
    """Give ``cls`` every method of :data:`METHODS` and of the op cards with the trait
    ``method`` that it does not define itself; a ``graph_node`` class also gets the
    refusals of :data:`EAGER_ONLY`. Installing again (:func:`refresh`) adds the methods of
    ops registered since, and never replaces what another module set on ``cls``."""
    if not any(c is cls for c, _ in _CLASSES):
        _CLASSES.append((cls, graph_node))
    mine = cls.__dict__.get("_table_methods")
    if mine is None:
        mine = {}
        type.__setattr__(cls, "_table_methods", mine)
    table = dict(card_methods(), **METHODS)
    if graph_node:
        table.update({n: _eager_only(n) for n in EAGER_ONLY})
    for name, fn in table.items():
        current = cls.__dict__.get(name, _MISSING)
        # What the class defines itself, or another module set since, wins.
        if current is _MISSING or current is mine.get(name, _MISSING):
            type.__setattr__(cls, name, fn)
            mine[name] = fn


_MISSING = object()


def refresh() -> None:
    """Install again on every class installed so far (after more ops were registered)."""
    for cls, graph_node in list(_CLASSES):
        install(cls, graph_node=graph_node)
