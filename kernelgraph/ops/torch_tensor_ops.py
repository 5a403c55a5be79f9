"""PyTorch's tensor functions over the index-along-a-dim cards (:mod:`.torch_select`) and the
other cards, with PyTorch's signatures: ``gather``, ``scatter``, ``topk``, ``median``,
``tril``/``triu``, ``diag``, ``trace``, ``dist``, ``masked_select``, ``select``, ``ravel``,
``fmod``, ``meshgrid``, ``arccos``/``arcsin``/``arctan``. Each is also a tensor
method (``x.topk(2)``), and works in both modes: on eager tensors it computes, on graph
nodes it adds nodes (where it needs a shape, that shape must be known).

``kg.gather`` is ``torch.gather(input, dim, index)``; TF's spelling ``gather(params,
indices, axis=0)`` (an index tensor second) still gives TF's gather, as ``kg.max`` accepts
TF's ``axis=``; ``kernelgraph.compat.v1`` keeps TF1's ``tf.gather`` alone.

>>> import kernelgraph as kg
>>> x = kg.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
>>> kg.gather(x, 1, kg.tensor([[2, 0], [1, 1]])).tolist()
[[3.0, 1.0], [2.0, 2.0]]
>>> x.topk(2).indices.tolist(), x.median().item(), x.triu(1).tolist()
([[1, 2], [2, 0]], 3.0, [[0.0, 5.0, 3.0], [0.0, 0.0, 6.0]])
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..errors import ShapeError
from .elementwise import acos, asin, atan, cast, less, mul, not_equal, remainder, sub, where
from .indexing import gather as _tf_gather
from .indexing import getitem, normalize_index
from .methods import METHODS, _function_method
from .reduce import sum as _sum
from .shape import broadcast_to, reshape
from .shape_functions import dims_of, stack, wrap_dim
from .torch_reduce import norm, return_types
from .torch_select import (
    gather_dim,
    median_all,
    median_dim,
    scatter_dim,
    scatter_value,
    topk_indices,
    topk_values,
)
from .torch_select import tril as _tril
from .torch_select import triu as _triu

__all__ = ["arccos", "arcsin", "arctan", "cumprod", "diag", "dist", "fmod", "gather",
           "masked_select", "median", "meshgrid", "ravel", "scatter", "select", "topk", "tril",
           "triu"]
# (``trace`` is the method ``x.trace()`` only: ``kg.trace`` is kernelgraph's event bus.)


def _is_int(v) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool)


def _shape(x, what: str) -> tuple:
    s = dims_of(x)
    if s is None or None in s:
        raise ShapeError(f"{what}: the input's shape must be known (it is {s})")
    return s


def _const(values: np.ndarray, like):
    """``values`` as a constant next to ``like``: a NumPy array (a graph constant, or beside
    a CPU tensor), or an eager tensor on like's device (CUDA ops take CUDA inputs)."""
    device = getattr(like, "device", None)
    if device is not None and getattr(device, "type", "cpu") != "cpu" and \
            hasattr(like, "new_tensor"):
        return like.new_tensor(values, dtype=values.dtype)
    return values


def gather(input, dim=None, index=None, *, sparse_grad: bool = False, out=None,  # noqa: A002
           axis=None, name=None):
    """``torch.gather(input, dim, index)``: ``out[i][j] = input[i][index[i][j]]`` for
    ``dim=1`` (the index has input's rank, and is no larger along the other dims); the
    gradient adds back at the same places. Called TF's way, ``gather(params, indices,
    axis=0)`` with an index tensor second, it is TF's gather (slices along ``axis``).

    >>> import kernelgraph as kg
    >>> kg.gather(kg.tensor([[1, 2], [3, 4]]), 1, kg.tensor([[0, 0], [1, 0]])).tolist()
    [[1, 1], [4, 3]]
    """
    if out is not None:
        raise TypeError("gather(): out= is not supported; assign the result instead")
    if _is_int(dim) and index is not None:
        return gather_dim(input, index, axis=int(dim))
    if dim is None:
        raise TypeError("gather() missing 2 required arguments: 'dim' and 'index'")
    # TF's spelling: gather(params, indices, axis)
    ax = axis if axis is not None else (index if index is not None else 0)
    return _tf_gather(input, dim, axis=ax, **({"name": name} if name else {}))


def scatter(input, dim, index, src=None, value=None, *, reduce=None):  # noqa: A002
    """``torch.scatter(input, dim, index, src)``: a copy of ``input`` with ``src``'s
    elements (or the number ``value``) written at ``index`` along ``dim``; ``reduce='add'``
    or ``'multiply'`` combines instead. Of repeated indices the last write wins on the CPU.

    >>> import kernelgraph as kg
    >>> kg.zeros(2, 3).scatter(1, kg.tensor([[2], [0]]), 1.0).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    if src is not None and value is not None:
        raise TypeError("scatter(): give src or value, not both")
    if src is None or isinstance(src, int | float | bool | np.generic):
        v = value if src is None else src
        if v is None:
            raise TypeError("scatter() missing 1 required argument: 'src' (or 'value')")
        return scatter_value(input, index, axis=dim, value=v, reduce=reduce)
    return scatter_dim(input, index, src, axis=dim, reduce=reduce)


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True,  # noqa: A002
         *, out=None):
    """``torch.topk``: the named tuple ``(values, indices)`` of the ``k`` largest (or
    smallest) elements along ``dim``, best first (also with ``sorted=False``, where PyTorch
    leaves the order open); ties keep the lower index first, NaN counts as the largest.

    >>> import kernelgraph as kg
    >>> kg.topk(kg.tensor([3.0, 1.0, 2.0]), 2)
    torch.return_types.topk(
    values=tensor([3., 2.]),
    indices=tensor([0, 2]))
    """
    if out is not None:
        raise TypeError("topk(): out= is not supported; assign the result instead")
    if not _is_int(k):
        raise TypeError(f"topk(): argument 'k' must be int, not {type(k).__name__}")
    indices = topk_indices(input, k=int(k), axis=dim, largest=bool(largest))
    return return_types.topk(topk_values(input, indices, axis=dim), indices)


def median(input, dim=None, keepdim: bool = False):  # noqa: A002
    """``torch.median``: the lower median (of two middle values, the smaller) of all
    elements (0-d), or with ``dim`` the named tuple ``(values, indices)``; the gradient goes
    to the chosen element. NaN is sorted last here (PyTorch returns NaN for a row with NaN).

    >>> import kernelgraph as kg
    >>> kg.median(kg.tensor([4.0, 1.0, 3.0, 2.0])).item()
    2.0
    """
    s = _shape(input, "median")
    if dim is None:
        n = math.prod(s)
        if n == 0:
            raise RuntimeError("median() input tensor cannot be empty")
        order = topk_indices(reshape(input, shape=(-1,)), k=(n - 1) // 2 + 1, axis=0,
                             largest=False)
        return median_all(input, getitem(order, index=normalize_index(((n - 1) // 2,))))
    d = wrap_dim(dim, max(len(s), 1), "median")
    n = s[d] if s else 1
    order = topk_indices(input, k=(n - 1) // 2 + 1, axis=d, largest=False)
    pick = (slice(None),) * d + (slice((n - 1) // 2, (n - 1) // 2 + 1) if keepdim
                                 else (n - 1) // 2,)
    indices = getitem(order, index=normalize_index(pick))
    return return_types.median(median_dim(input, indices, axis=d, keepdims=bool(keepdim)),
                               indices)


def tril(input, diagonal: int = 0):  # noqa: A002
    """``torch.tril``: the lower triangle of the last two dims (on and below the
    ``diagonal``-th diagonal), zeros elsewhere.

    >>> import kernelgraph as kg
    >>> kg.tril(kg.ones(2, 3)).tolist()
    [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    """
    return _tril(input, diagonal=int(diagonal))


def triu(input, diagonal: int = 0):  # noqa: A002
    """``torch.triu``: the upper triangle of the last two dims (on and above the
    ``diagonal``-th diagonal), zeros elsewhere."""
    return _triu(input, diagonal=int(diagonal))


def _diagonal_positions(rows: int, cols: int, diagonal: int) -> np.ndarray:
    """Flat positions of the ``diagonal``-th diagonal of a (rows, cols) matrix."""
    r0, c0 = (0, diagonal) if diagonal >= 0 else (-diagonal, 0)
    n = max(0, min(rows - r0, cols - c0))
    return ((r0 + np.arange(n)) * cols + c0 + np.arange(n)).astype(np.int64)


def diag(input, diagonal: int = 0):  # noqa: A002
    """``torch.diag``: a 1-D tensor's values on the ``diagonal``-th diagonal of a square
    matrix, or a matrix's ``diagonal``-th diagonal as a 1-D tensor.

    >>> import kernelgraph as kg
    >>> kg.diag(kg.tensor([1, 2])).tolist(), kg.diag(kg.tensor([[1, 2], [3, 4]])).tolist()
    ([[1, 0], [0, 2]], [1, 4])
    """
    s = _shape(input, "diag")
    if len(s) == 1:
        m = s[0] + abs(int(diagonal))
        pos = _diagonal_positions(m, m, int(diagonal))
        zeros = _const(np.zeros(m * m, np.dtype(input.dtype.name)), input)
        return reshape(scatter_dim(zeros, _const(pos, input), input, axis=0), shape=(m, m))
    if len(s) != 2:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {len(s)}D")
    pos = _diagonal_positions(s[0], s[1], int(diagonal))
    return gather_dim(reshape(input, shape=(-1,)), _const(pos, input), axis=0)


def trace(input):  # noqa: A002
    """``torch.trace``: the sum of a matrix's main diagonal.

    >>> import kernelgraph as kg
    >>> kg.tensor([[1.0, 2.0], [3.0, 4.0]]).trace().item()
    5.0
    """
    s = _shape(input, "trace")
    if len(s) != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {len(s)}")
    return _sum(diag(input))


def dist(input, other, p=2):  # noqa: A002
    """``torch.dist``: the ``p``-norm of ``input - other`` (broadcast).

    >>> import kernelgraph as kg
    >>> kg.dist(kg.tensor([1.0, 2.0]), kg.tensor([4.0, 6.0])).item()
    5.0
    """
    return norm(sub(input, other), p=p)


def masked_select(input, mask):  # noqa: A002
    """``torch.masked_select``: the elements where ``mask`` (broadcast with ``input``) is
    true, as a 1-D tensor; the gradient goes back to them. The mask's values are read, so in
    a graph it must be a constant.

    >>> import kernelgraph as kg
    >>> x = kg.tensor([1.0, -2.0, 3.0])
    >>> kg.masked_select(x, x > 0).tolist()
    [1.0, 3.0]
    """
    shape = np.broadcast_shapes(_shape(input, "masked_select"), _shape(mask, "masked_select"))
    if tuple(input.shape) != shape:
        input = broadcast_to(input, shape=shape)
    if tuple(mask.shape) != shape:
        mask = broadcast_to(mask, shape=shape)
    return input[mask]


def select(input, dim: int, index: int):  # noqa: A002
    """``torch.select``: ``input`` indexed by ``index`` along ``dim`` (that dim removed)."""
    s = _shape(input, "select")
    d = wrap_dim(dim, len(s), "select")
    if not -s[d] <= index < s[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(s)} at dimension {d}")
    return getitem(input, index=normalize_index((slice(None),) * d + (int(index),)))


def ravel(input):  # noqa: A002
    """``torch.ravel``: the elements as a 1-D tensor in row-major order (a view where the
    input is contiguous)."""
    return reshape(input, shape=(-1,))


def fmod(input, other):  # noqa: A002
    """``torch.fmod``: C's remainder, with the sign of the dividend (``remainder`` has the
    divisor's).

    >>> import kernelgraph as kg
    >>> kg.fmod(kg.tensor([-3.0, 3.0]), 2).tolist()
    [-1.0, 1.0]
    """
    r = remainder(input, other)
    differ = not_equal(less(input, 0), less(other, 0))
    return where(differ & not_equal(r, 0), sub(r, other), r)


def meshgrid(*tensors, indexing: str | None = None):
    """``torch.meshgrid``: coordinate grids from 1-D tensors, ``indexing='ij'`` (matrix,
    PyTorch's default, with its warning when not given) or ``'xy'`` (Cartesian)."""
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                         f"received: {indexing}")
    sizes = [_shape(t, "meshgrid") for t in tensors]
    if any(len(s) > 1 for s in sizes):
        raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the input list")
    n = [s[0] if s else 1 for s in sizes]
    swap = indexing == "xy" and len(n) >= 2
    if swap:
        n[0], n[1] = n[1], n[0]
    grids = []
    for k, t in enumerate(tensors):
        pos = (1 - k if k < 2 else k) if swap else k
        shape = [1] * len(n)
        shape[pos] = n[pos]
        grids.append(broadcast_to(reshape(t, shape=tuple(shape)), shape=tuple(n)))
    return tuple(grids)


def cumprod(input, dim: int, *, dtype=None):  # noqa: A002
    """``torch.cumprod``: running products along ``dim`` (integers and bools give int64, as
    in PyTorch). Written as one product per step, so its gradient is exact where an element
    is 0 too (the eager graph shows the steps and ``StackBackward0``, not
    ``CumprodBackward0``); the dim's size must be known.

    >>> import kernelgraph as kg
    >>> kg.cumprod(kg.tensor([1.0, 2.0, 3.0]), 0).tolist()
    [1.0, 2.0, 6.0]
    """
    s = _shape(input, "cumprod")
    if dtype is not None:
        input = cast(input, dtype=dtype)
    elif np.dtype(input.dtype.name).kind in "biu" and input.dtype.name != "int64":
        input = cast(input, dtype="int64")
    if not s:
        return input
    d = wrap_dim(dim, len(s), "cumprod")
    if s[d] == 0:
        return input
    steps = [select(input, d, 0)]
    for k in range(1, s[d]):
        steps.append(mul(steps[-1], select(input, d, k)))
    return stack(steps, d)

arccos, arcsin, arctan = acos, asin, atan  # PyTorch's NumPy-style aliases

for _name in ("gather", "scatter", "topk", "median", "tril", "triu", "diag", "trace", "dist",
              "masked_select", "select", "ravel", "fmod", "arccos", "arcsin", "arctan",
              "cumprod"):
    METHODS.setdefault(_name, _function_method(globals()[_name]))
