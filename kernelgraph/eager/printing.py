"""Printing tensors as PyTorch prints them, so a program run with ``import kernelgraph as
torch`` prints what it printed under PyTorch: ``tensor([0.1235, 2.0000], grad_fn=<AddBackward0>)``.

The rules are PyTorch's (``torch/_tensor_str.py``): 4 decimals by default; a float tensor
whose values are all integral prints as ``tensor([1., 2.])``; scientific notation when the
largest and smallest nonzero magnitudes are more than 1000 apart, or beyond 1e8 or below
1e-4; rows wrapped at 80 characters; more than 1000 elements summarised with 3 at each
edge; ``dtype=torch.float64`` where the dtype is not float32, int64 or bool; then
``requires_grad=True`` or the node that made the tensor, by PyTorch's name for its backward
(``grad_fn=<MulBackward0>``). :func:`set_printoptions` changes them as PyTorch's does.

>>> import kernelgraph as kg
>>> kg.tensor([[1.0, 2.5], [3.0, 1e-5]])
tensor([[1.0000e+00, 2.5000e+00],
        [3.0000e+00, 1.0000e-05]])
>>> kg.tensor([1.0, 2.0], requires_grad=True) * 2
tensor([2., 4.], grad_fn=<MulBackward0>)
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import devices
from .. import dtypes as D

__all__ = ["Size", "get_printoptions", "printoptions", "set_printoptions"]


class Size(tuple):
    """A shape: a tuple that prints as PyTorch's ``torch.Size([2, 3])``, what an eager
    tensor's ``x.shape`` and ``x.size()`` return (graph nodes keep plain tuples).

    >>> s = Size((2, 3))
    >>> s, s == (2, 3), s[1:], s.numel()
    (torch.Size([2, 3]), True, torch.Size([3]), 6)
    """

    __slots__ = ()

    def __repr__(self):
        return f"torch.Size([{', '.join(map(str, self))}])"

    __str__ = __repr__

    def __getitem__(self, index):
        got = tuple.__getitem__(self, index)
        return Size(got) if isinstance(index, slice) else got

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):  # (1,) + x.shape is a Size too, as in PyTorch
        return Size(tuple(other) + tuple(self))

    def numel(self) -> int:
        """The number of elements of a tensor of this shape."""
        return math.prod(self)


@dataclasses.dataclass
class _Options:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


OPTIONS = _Options()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print, as ``torch.set_printoptions`` (``profile``: ``"default"``,
    ``"short"`` or ``"full"``; ``sci_mode`` None chooses per tensor).

    >>> import kernelgraph as kg
    >>> kg.set_printoptions(precision=2)
    >>> kg.tensor([1.12345])
    tensor([1.12])
    >>> kg.set_printoptions(profile="default")
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {list(_PROFILES)}, "
                             f"got {profile!r}")
        (OPTIONS.precision, OPTIONS.threshold, OPTIONS.edgeitems,
         OPTIONS.linewidth) = _PROFILES[profile]
    if precision is not None:
        OPTIONS.precision = precision
    if threshold is not None:
        OPTIONS.threshold = threshold
    if edgeitems is not None:
        OPTIONS.edgeitems = edgeitems
    if linewidth is not None:
        OPTIONS.linewidth = linewidth
    OPTIONS.sci_mode = sci_mode  # as in PyTorch: not given means "choose per tensor"


def get_printoptions() -> dict:
    """The current print options, as keyword arguments of :func:`set_printoptions`.

    >>> get_printoptions()["precision"]
    4
    """
    return dataclasses.asdict(OPTIONS)


class printoptions:  # noqa: N801 - PyTorch's name
    """``with kg.printoptions(precision=2): ...``: options changed for the block only."""

    def __init__(self, **options):
        self._options, self._saved = options, None

    def __enter__(self):
        self._saved = get_printoptions()
        set_printoptions(**self._options)
        return self

    def __exit__(self, *exc):
        set_printoptions(**self._saved)
        return False


# -- dtype names -----------------------------------------------------------------------------
_TORCH_DTYPE = {"bool": "torch.bool", "uint8": "torch.uint8", "int8": "torch.int8",
                "int16": "torch.int16", "int32": "torch.int32", "int64": "torch.int64",
                "float16": "torch.float16", "float32": "torch.float32",
                "float64": "torch.float64", "complex64": "torch.complex64",
                "complex128": "torch.complex128"}


def dtype_name(dtype) -> str:
    """PyTorch's name of a dtype, as tensors print it.

    >>> import kernelgraph as kg
    >>> dtype_name(kg.float64)
    'torch.float64'
    """
    name = np.dtype(dtype).name
    return _TORCH_DTYPE.get(name, f"torch.{name}")


def _default_dtype():
    get = getattr(D, "get_default_dtype", None)  # where kernelgraph.dtypes offers one
    return np.dtype(get()) if get is not None else D.float32


# -- the numbers -----------------------------------------------------------------------------
class _Formatter:
    """How every element of one tensor is written: int mode, sci mode and one width."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        p = OPTIONS.precision
        flat = values.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return
        magnitude = np.abs(finite).astype(np.float64)
        low, high = magnitude.min(), magnitude.max()
        self.int_mode = bool(np.all(np.ceil(finite) == finite))
        self.sci_mode = (high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4) \
            if OPTIONS.sci_mode is None else OPTIONS.sci_mode
        items = finite.tolist()
        if self.sci_mode:
            widths = (len(f"{v:.{p}e}") for v in items)
        elif self.int_mode:
            widths = (len(f"{v:.0f}") + 1 for v in items)
        else:
            widths = (len(f"{v:.{p}f}") for v in items)
        self.max_width = max(self.max_width, max(widths))

    def format(self, value) -> str:
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{OPTIONS.precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{OPTIONS.precision}f}"
        else:
            text = f"{value}"
        return (self.max_width - len(text)) * " " + text


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows (PyTorch's ``get_summarized_data``)."""
    e = OPTIONS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:e], a[-e:])) if a.shape[0] > 2 * e else a
    if not e:
        return np.empty((0,) * a.ndim, a.dtype)
    rows = list(range(e)) + list(range(a.shape[0] - e, a.shape[0])) \
        if a.shape[0] > 2 * e else range(a.shape[0])
    return np.stack([_summarized(a[i]) for i in rows])


def _vector(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, math.floor((OPTIONS.linewidth - indent) / (fmt.max_width + 2)))
    e = OPTIONS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = ([fmt.format(v) for v in a[:e].tolist()] + [" ..."]
                + [fmt.format(v) for v in a[-e:].tolist()])
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    e = OPTIONS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        slices = ([_nested(a[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."]
                  + [_nested(a[i], indent + 1, summarize, fmt)
                     for i in range(a.shape[0] - e, a.shape[0])])
    else:
        slices = [_nested(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def array_str(a: np.ndarray, indent: int = 0) -> str:
    """The body of a tensor's print (PyTorch's ``_tensor_str``), for a NumPy array.

    >>> array_str(np.array([1.0, 2.0], np.float32))
    '[1., 2.]'
    """
    if a.size == 0:
        return "[]"
    summarize = a.size > OPTIONS.threshold
    return _nested(a, indent, summarize, _Formatter(_summarized(a) if summarize else a))


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > OPTIONS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


# -- grad_fn names ---------------------------------------------------------------------------
def grad_fn_name(node) -> str:
    """PyTorch's name for the backward of the op that recorded ``node``: its card's
    ``grad_fn`` (a name, or a function of the node where the name depends on the call).

    >>> import kernelgraph as kg
    >>> grad_fn_name((kg.tensor([1.0], requires_grad=True) + 1).grad_fn)
    'AddBackward0'
    """
    name = node.op.grad_fn
    return name if type(name) is str else name(node)


def grad_fn_repr(node) -> str:
    """``<AddBackward0 object at 0x...>``, as PyTorch shows a tensor's ``grad_fn``."""
    return f"<{grad_fn_name(node)} object at {id(node):#x}>"


# -- the whole print -------------------------------------------------------------------------
def tensor_repr(t) -> str:
    """``repr(t)`` and ``str(t)`` of an eager tensor, exactly as PyTorch writes it."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    data = t._array
    on_host = type(data) is np.ndarray
    if not on_host:
        suffixes.append(f"device='{devices.device_of(data)}'")
        data = devices.to_numpy(data)
    default = _default_dtype()
    if data.size == 0:
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if data.dtype != default:
            suffixes.append(f"dtype={dtype_name(data.dtype)}")
        body = "[]"
    else:
        if not OPTIONS.edgeitems:
            suffixes.append(f"size={tuple(data.shape)}")
        if data.dtype not in (default, D.int64, D.bool_):
            suffixes.append(f"dtype={dtype_name(data.dtype)}")
        body = array_str(data, indent)
    node = t._node
    if data.dtype.kind not in "fc":  # PyTorch's integer and bool tensors never require grad
        pass
    elif node is not None and t.requires_grad:
        suffixes.append(f"grad_fn=<{grad_fn_name(node)}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    text = _add_suffixes(prefix + body, suffixes, indent)
    # (``_param`` marks an nn.Parameter, which PyTorch prints with a first line of its own)
    return "Parameter containing:\n" + text if getattr(t, "_param", False) else text


def tensor_format(t, spec: str) -> str:
    """``f"{t:.4f}"``: a one-element (0-d) tensor formats as its number, as in PyTorch;
    anything else formats as its print, and only with an empty spec."""
    if t._array.ndim == 0:
        return format(t.item(), spec)
    return object.__format__(t, spec)
