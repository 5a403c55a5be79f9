"""PyTorch's shape functions, in both modes: ``cat chunk split unsqueeze squeeze flatten
unflatten permute transpose t clone narrow expand expand_as repeat view_as reshape_as
numel``.

Each is a composition of the shape ops (``reshape``, ``transpose``, ``broadcast_to``,
``getitem``, ``concat``, ``split_piece``), so its gradient, CUDA kernels and static graph
come from theirs; ``clone`` is an op of its own (a copy, where ``identity`` is a view).
Arguments are checked with PyTorch's rules and messages. In static mode a function that
must know a size (``chunk``, ``repeat``, ``unsqueeze`` ...) reads it from the node's shape:
one unknown dim is fine where a reshape can infer it (``-1``), more are refused by name.

Where PyTorch and TF1 give one name two meanings, ``kg.split`` and ``kg.transpose`` follow
PyTorch unless called TF1's way (``axis=``, a ``perm``); ``kernelgraph.compat.v1`` keeps
TF1's.
"""

from __future__ import annotations

import math

import numpy as np

from .. import shapes
from ..errors import ShapeError
from . import join
from .elementwise import identity, where
from .indexing import gather, getitem, normalize_index
from .reduce import broadcast_like
from .registry import define
from .shape import (
    ArgumentTypeError,
    DimensionError,
    broadcast_to,
    reshape,
    reshape_like,
    swapped_axes,
)
from .shape import transpose as transpose_op

__all__ = ["cat", "concat", "concatenate", "chunk", "split", "unsqueeze", "squeeze",
           "flatten", "unflatten", "permute", "transpose", "swapaxes", "swapdims", "t",
           "clone", "narrow", "expand", "expand_as", "repeat", "view_as", "reshape_as",
           "numel", "stack", "unbind", "flip", "masked_fill", "index_select"]


# -- reading shapes in both modes -----------------------------------------------------------
def dims_of(x) -> tuple | None:
    """``x``'s shape as a tuple of ints and None (unknown dims of a graph node), or None
    for an unknown rank; TF1's TensorShape and Dimension objects are read too.

    >>> import kernelgraph as kg
    >>> dims_of(kg.ones(2, 3)), dims_of(kg.placeholder(kg.float32, [None, 3]))
    ((2, 3), (None, 3))
    """
    s = getattr(x, "shape", None) if hasattr(x, "shape") else np.shape(x)
    if s is None:
        return None
    try:
        items = tuple(s)
    except (TypeError, ValueError):  # an unknown TensorShape refuses to be iterated
        return None
    return tuple(None if d is None else int(getattr(d, "value", d))
                 if getattr(d, "value", d) is not None else None for d in items)


def _rank(x, what: str) -> int:
    s = dims_of(x)
    if s is None:
        raise ShapeError(f"{what}: the rank of graph node '{getattr(x, 'name', x)}' is not "
                         "known while the graph is built; give its placeholder a shape")
    return len(s)


def wrap_dim(dim, ndim: int, what: str = "dim", extra: int = 0) -> int:
    """``dim`` (an int) checked against a rank-``ndim`` tensor (``extra`` 1: a new dim, as
    ``unsqueeze`` inserts) and made non-negative; PyTorch's IndexError otherwise.

    >>> wrap_dim(-1, 3), wrap_dim(2, 2, extra=1)
    (2, 2)
    """
    if not shapes.is_int(dim):
        raise ArgumentTypeError(f"{what}(): argument 'dim' must be int, not "
                                f"{type(dim).__name__}")
    n = ndim + extra
    n_ok = max(n, 1)  # a 0-d tensor takes dim 0 or -1
    if not -n_ok <= dim < n_ok:
        raise DimensionError(f"Dimension out of range (expected to be in range of "
                             f"[{-n_ok}, {n_ok - 1}], but got {dim})")
    return int(dim) % n_ok


def _reshaped(x, target: tuple, what: str):
    """``reshape(x, target)`` where ``target`` may hold None (an unknown dim of a graph
    node): one becomes -1, inferred; more are refused."""
    unknown = [i for i, d in enumerate(target) if d is None]
    if len(unknown) > 1:
        shown = "(" + ", ".join("?" if d is None else str(d) for d in target) + ")"
        raise ShapeError(f"{what}: the result's shape {shown} has more than one dim unknown "
                         "while the graph is built; give the placeholder more of its shape")
    if unknown:
        target = tuple(-1 if d is None else d for d in target)
    return reshape(x, shape=target)


def _size_args(sizes: tuple, what: str) -> tuple:
    """``f(2, 3)`` or ``f((2, 3))``: the sizes as a tuple of ints."""
    if len(sizes) == 1 and isinstance(sizes[0], tuple | list | np.ndarray):
        sizes = tuple(sizes[0])
    for i, s in enumerate(sizes):
        if not shapes.is_int(s):
            raise ArgumentTypeError(f"{what}(): argument 'size' must be tuple of ints, but "
                                    f"found element of type {type(s).__name__} at pos {i}")
    return tuple(int(s) for s in sizes)


# -- joining and cutting ---------------------------------------------------------------------
def cat(tensors, dim: int = 0, *, axis: int | None = None, name: str | None = None):
    """Join ``tensors`` along the existing ``dim`` (``torch.cat``; ``torch.concat`` too).

    >>> import kernelgraph as kg
    >>> kg.cat([kg.tensor([[1, 2]]), kg.tensor([[3, 4]])], dim=1).tolist()
    [[1, 2, 3, 4]]
    """
    return join.concat(tensors, axis=dim if axis is None else axis, name=name)


concat = concatenate = cat


def stack(tensors, dim: int = 0, *, axis: int | None = None, name: str | None = None):
    """Join ``tensors`` (one shape) along a new ``dim`` (``torch.stack``, ``tf.stack``).

    >>> import kernelgraph as kg
    >>> kg.stack([kg.tensor([1, 2]), kg.tensor([3, 4])], dim=1).tolist()
    [[1, 3], [2, 4]]
    """
    return join.stack(tensors, axis=dim if axis is None else axis, name=name)


def _dim_size(x, d: int, what: str) -> int:
    size = dims_of(x)[d]
    if size is None:
        raise ShapeError(f"{what}: dim {d} of graph node '{getattr(x, 'name', x)}' is unknown "
                         "while the graph is built; give its placeholder that size")
    return size


def _pieces(x, sizes: list, d: int) -> tuple:
    return tuple(join.split_piece(x, sizes=tuple(sizes), index=i, axis=d)
                 for i in range(len(sizes)))


def split(x, split_size_or_sections, dim: int = 0, *, axis: int | None = None,
          name: str | None = None):
    """PyTorch's ``torch.split``: pieces of ``split_size_or_sections`` elements along
    ``dim`` (an int: that size each, the last one smaller; a list: those sizes), as a tuple.

    Called TF1's way, with ``axis=``, it is ``tf.split``: an int is a number of equal
    pieces, and the pieces come as a list.

    >>> import kernelgraph as kg
    >>> [p.tolist() for p in kg.split(kg.tensor([1, 2, 3, 4, 5]), 2)]
    [[1, 2], [3, 4], [5]]
    >>> [p.tolist() for p in kg.split(kg.tensor([1, 2, 3, 4]), 2, axis=0)]
    [[1, 2], [3, 4]]
    """
    if axis is not None:  # TF1's keyword: tf.split's meaning
        return join.split(x, split_size_or_sections, axis=axis, name=name)
    d = wrap_dim(dim, _rank(x, "split"), "split")
    if shapes.is_int(split_size_or_sections):
        step = int(split_size_or_sections)
        n = _dim_size(x, d, "split")
        if step < 0:
            raise ValueError(f"split expects split_size be non-negative, but got "
                             f"split_size={step}")
        if step == 0:
            if n:
                raise RuntimeError("split_size can only be 0 if dimension size is 0, but got "
                                   f"dimension size of {n}")
            return (clone(x),)
        sizes = [step] * (n // step) + ([n % step] if n % step else [])
        return _pieces(x, sizes or [0], d)
    try:
        sizes = [int(s) for s in split_size_or_sections if shapes.is_int(s)]
    except TypeError:
        sizes = None
    if sizes is None or len(sizes) != len(split_size_or_sections):
        raise TypeError("split(): argument 'split_size_or_sections' must be an int or a list "
                        f"of ints, not {type(split_size_or_sections).__name__}")
    n = dims_of(x)[d]
    if n is not None and (sum(sizes) != n or any(s < 0 for s in sizes)):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                           f"(input tensor's size at dimension {d}), but got "
                           f"split_sizes={sizes}")
    return _pieces(x, sizes, d)


def chunk(x, chunks: int, dim: int = 0):
    """``chunks`` pieces along ``dim``, each ``ceil(size / chunks)`` long but the last
    (``torch.chunk``); fewer when the size runs out first.

    >>> import kernelgraph as kg
    >>> [p.tolist() for p in kg.chunk(kg.tensor([1, 2, 3, 4, 5]), 3)]
    [[1, 2], [3, 4], [5]]
    """
    if not shapes.is_int(chunks):
        raise ArgumentTypeError(f"chunk(): argument 'chunks' must be int, not "
                                f"{type(chunks).__name__}")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, _rank(x, "chunk"), "chunk")
    n = _dim_size(x, d, "chunk")
    if not n:  # an empty dim: ``chunks`` empty pieces
        return tuple(clone(x) for _ in range(chunks))
    return split(x, -(-n // chunks), d)


# -- new shapes ------------------------------------------------------------------------------
def unsqueeze(x, dim: int):
    """``x`` with a dim of size 1 inserted at ``dim`` (``torch.unsqueeze``).

    >>> import kernelgraph as kg
    >>> kg.unsqueeze(kg.tensor([1, 2]), 1).shape
    torch.Size([2, 1])
    """
    s = dims_of(x)
    if s is None:
        raise ShapeError("unsqueeze: the input's rank is not known while the graph is built")
    d = wrap_dim(dim, len(s), "unsqueeze", extra=1)
    return _reshaped(x, s[:d] + (1,) + s[d:], "unsqueeze")


def squeeze(x, dim=None):
    """``x`` without its dims of size 1 (all of them, or those of ``dim``, an int or a
    tuple: a named dim that is not 1 is kept, as in PyTorch).

    >>> import kernelgraph as kg
    >>> kg.squeeze(kg.ones(1, 2, 1)).shape, kg.squeeze(kg.ones(1, 2, 1), 0).shape
    (torch.Size([2]), torch.Size([2, 1]))
    """
    s = dims_of(x)
    if s is None:
        raise ShapeError("squeeze: the input's rank is not known while the graph is built")
    if dim is None:
        if None in s:
            raise ShapeError("squeeze: which dims are 1 is not known while the graph is built "
                             "(a dim is unknown); name the dims to squeeze")
        picked = set(range(len(s)))
    else:
        many = dim if isinstance(dim, tuple | list) else (dim,)
        picked = {wrap_dim(d, len(s), "squeeze") for d in many}
    return _reshaped(x, tuple(n for i, n in enumerate(s) if not (i in picked and n == 1)),
                     "squeeze")


def flatten(x, start_dim: int = 0, end_dim: int = -1):
    """Dims ``start_dim`` .. ``end_dim`` merged into one (``torch.flatten``; a 0-d tensor
    becomes 1-d).

    >>> import kernelgraph as kg
    >>> kg.flatten(kg.ones(2, 3, 4), 1).shape
    torch.Size([2, 12])
    """
    s = dims_of(x)
    if s is None:
        raise ShapeError("flatten: the input's rank is not known while the graph is built")
    if not s:
        return _reshaped(x, (1,), "flatten")
    a, b = wrap_dim(start_dim, len(s), "flatten"), wrap_dim(end_dim, len(s), "flatten")
    if a > b:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    middle = s[a:b + 1]
    merged = None if None in middle else math.prod(middle)
    return _reshaped(x, s[:a] + (merged,) + s[b + 1:], "flatten")


def unflatten(x, dim: int, sizes):
    """Dim ``dim`` split into ``sizes`` (one may be -1): the inverse of flatten.

    >>> import kernelgraph as kg
    >>> kg.unflatten(kg.ones(2, 12), 1, (3, 4)).shape
    torch.Size([2, 3, 4])
    """
    s = dims_of(x)
    d = wrap_dim(dim, len(s), "unflatten")
    sizes = _size_args((sizes,), "unflatten")
    if -1 in sizes and s[d] is not None:
        rest = math.prod(v for v in sizes if v != -1)
        sizes = tuple(s[d] // rest if v == -1 and rest else v for v in sizes)
    elif -1 in sizes:
        sizes = tuple(None if v == -1 else v for v in sizes)
    return _reshaped(x, s[:d] + sizes + s[d + 1:], "unflatten")


def permute(x, *dims):
    """Dims reordered (``torch.permute(x, (1, 0))``; ``x.permute(1, 0)`` as a method).

    >>> import kernelgraph as kg
    >>> kg.permute(kg.ones(2, 3, 4), (2, 0, 1)).shape
    torch.Size([4, 2, 3])
    """
    one = len(dims) == 1 and isinstance(dims[0], tuple | list | np.ndarray | range)
    return transpose_op(x, perm=tuple(dims[0]) if one else dims)


def transpose(x, *dims, perm=None, dim0=None, dim1=None, name: str | None = None):
    """PyTorch's ``torch.transpose(x, dim0, dim1)``: two dims swapped. Called TF1's way it
    is ``tf.transpose``: ``transpose(x)`` reverses the dims, ``transpose(x, perm)`` (a
    sequence) permutes them.

    >>> import kernelgraph as kg
    >>> kg.transpose(kg.ones(2, 3, 4), 0, 2).shape, kg.transpose(kg.ones(2, 3, 4)).shape
    (torch.Size([4, 3, 2]), torch.Size([4, 3, 2]))
    >>> kg.transpose(kg.ones(2, 3, 4), (1, 0, 2)).shape
    torch.Size([3, 2, 4])
    """
    kw = {"name": name} if name is not None else {}
    if len(dims) == 2 or dim0 is not None or dim1 is not None:
        if len(dims) == 2:
            dim0, dim1 = dims
        elif len(dims) == 1 and dim0 is None:
            dim0 = dims[0]
        elif len(dims) == 1:
            dim1 = dims[0]
        if dim0 is None or dim1 is None or perm is not None:
            raise TypeError("transpose() takes the two dims to swap (PyTorch) or one perm "
                            "(TF1)")
        return transpose_op(x, perm=swapped_axes(_rank(x, "transpose"), dim0, dim1), **kw)
    if len(dims) > 2 or (dims and perm is not None):
        raise TypeError(f"transpose() takes two dims (PyTorch) or one perm (TF1), got "
                        f"{len(dims) + (perm is not None)} arguments")
    if dims:
        perm = dims[0]
    return transpose_op(x, perm=perm, **kw)


def swapaxes(x, axis0: int, axis1: int):
    """``torch.swapaxes``: ``transpose(x, axis0, axis1)``.

    >>> import kernelgraph as kg
    >>> kg.swapaxes(kg.ones(2, 3), 0, 1).shape
    torch.Size([3, 2])
    """
    return transpose(x, axis0, axis1)


swapdims = swapaxes


def t(x):
    """A matrix transposed; a 0-d or 1-d tensor as it is (``torch.t``).

    >>> import kernelgraph as kg
    >>> kg.t(kg.ones(2, 3)).shape
    torch.Size([3, 2])
    """
    n = _rank(x, "t")
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return transpose_op(x) if n == 2 else identity(x)


def _clone_forward(x, memory_format=None):
    return np.array(x, copy=True)


def _clone_cuda(k):
    copy = k.core.copy
    return lambda x, memory_format=None: copy(x)


_clone = define("clone", _clone_forward, lambda s, d, attrs: (s[0], d[0]),
                lambda g, out, needs, attrs, x: (g,), traits=("fresh",),
                reference=lambda x, **attrs: np.array(x, copy=True), cuda=_clone_cuda,
                inputs=1, doc="A copy of x (new memory; its gradient passes through).", saves=(),
                grad_fn="CloneBackward0")


def clone(x, *, memory_format=None):
    """A copy of ``x`` in new memory, recorded for autograd (``torch.clone``).

    >>> import kernelgraph as kg
    >>> kg.clone(kg.tensor([1.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    return _clone(x)


def narrow(x, dim: int, start: int, length: int):
    """``length`` entries of ``dim`` from ``start`` (a view; ``torch.narrow``).

    >>> import kernelgraph as kg
    >>> kg.narrow(kg.tensor([1, 2, 3, 4]), 0, 1, 2).tolist()
    [2, 3]
    """
    d = wrap_dim(dim, _rank(x, "narrow"), "narrow")
    size = dims_of(x)[d]
    for what, v in (("start", start), ("length", length)):
        if not shapes.is_int(v):
            raise ArgumentTypeError(f"narrow(): argument '{what}' must be int, not "
                                    f"{type(v).__name__}")
    if size is not None:
        if not -size <= start <= size:
            raise DimensionError(f"start out of range (expected to be in range of [{-size}, "
                                 f"{size}], but got {start})")
        start = start % size if start < 0 else start
        if length < 0 or start + length > size:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                               f"({size}).")
    elif start < 0:
        raise ShapeError("narrow: a negative start needs the dim's size, unknown while the "
                         "graph is built")
    index = (slice(None),) * d + (slice(int(start), int(start) + int(length)),)
    return getitem(x, index=normalize_index(index))


def expand(x, *sizes):
    """``x`` broadcast to ``sizes`` (a view; -1 keeps a dim; new dims go in front), as
    ``torch.Tensor.expand``.

    >>> import kernelgraph as kg
    >>> kg.expand(kg.ones(3, 1), -1, 4).shape, kg.expand(kg.ones(3, 1), (2, 3, 4)).shape
    (torch.Size([3, 4]), torch.Size([2, 3, 4]))
    """
    sizes = _size_args(sizes, "expand")
    s = dims_of(x)
    if s is None:
        raise ShapeError("expand: the input's rank is not known while the graph is built")
    if len(sizes) < len(s):
        raise RuntimeError(f"expand(torch.FloatTensor{{[{', '.join(map(str, s))}]}}, "
                           f"size=[{', '.join(map(str, sizes))}]): the number of sizes "
                           "provided ({len(sizes)}) must be greater or equal to the number "
                           f"of dimensions in the tensor ({len(s)})")
    lead = len(sizes) - len(s)
    target = []
    for i, v in enumerate(sizes):
        if v == -1:
            if i < lead:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            v = s[i - lead]
            if v is None:
                raise ShapeError(f"expand: dim {i - lead} is unknown while the graph is "
                                 "built; name its size")
        elif v < -1:
            raise RuntimeError(f"expand: invalid size {v}")
        target.append(v)
    return broadcast_to(x, shape=tuple(target))


def expand_as(x, other):
    """``x`` broadcast to ``other``'s shape (also where it is only known at run time).

    >>> import kernelgraph as kg
    >>> kg.expand_as(kg.ones(3, 1), kg.ones(3, 4)).shape
    torch.Size([3, 4])
    """
    return broadcast_like(x, other)


def repeat(x, *sizes):
    """``x`` tiled ``sizes`` times along each dim (``torch.Tensor.repeat``; more sizes than
    dims add leading dims).

    >>> import kernelgraph as kg
    >>> kg.repeat(kg.tensor([1, 2]), 2, 2).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    reps = _size_args(sizes, "repeat")
    s = dims_of(x)
    if s is None or None in s:
        raise ShapeError("repeat: the input's shape must be known while the graph is built")
    if len(reps) < len(s):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                           "number of dimensions of tensor")
    if any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(reps)}: "
                           f"[{', '.join(map(str, reps))}]")
    s = (1,) * (len(reps) - len(s)) + s
    # (a, b) -> (1, a, 1, b) -> broadcast to (r0, a, r1, b) -> (r0 * a, r1 * b)
    inter = tuple(v for d in s for v in (1, d))
    spread = tuple(v for r, d in zip(reps, s) for v in (r, d))
    out = broadcast_to(reshape(x, shape=inter), shape=spread)
    return reshape(out, shape=tuple(r * d for r, d in zip(reps, s)))


def view_as(x, other):
    """``x`` reshaped to ``other``'s shape (``torch.Tensor.view_as``; ``reshape_as``).

    >>> import kernelgraph as kg
    >>> kg.view_as(kg.ones(6), kg.ones(2, 3)).shape
    torch.Size([2, 3])
    """
    s, o = dims_of(x), dims_of(other)
    if s is not None and o is not None and None not in s and None not in o:
        return reshape(x, shape=o)
    return reshape_like(x, other)


reshape_as = view_as


def numel(x) -> int:
    """The number of elements (``torch.numel``); in static mode every dim must be known.

    >>> import kernelgraph as kg
    >>> kg.numel(kg.ones(2, 3))
    6
    """
    s = dims_of(x)
    if s is None or None in s:
        raise ShapeError("numel: the number of elements is not known while the graph is "
                         "built (a dim is unknown)")
    return math.prod(s)



def unbind(x, dim: int = 0) -> tuple:
    """The slices along ``dim``, that dim removed (``torch.unbind``).

    >>> import kernelgraph as kg
    >>> [t.tolist() for t in kg.unbind(kg.tensor([[1, 2], [3, 4]]), 1)]
    [[1, 3], [2, 4]]
    """
    d = wrap_dim(dim, _rank(x, "unbind"), "unbind")
    n = _dim_size(x, d, "unbind")
    return tuple(getitem(x, index=normalize_index((slice(None),) * d + (i,)))
                 for i in range(n))


def flip(x, dims):
    """``x`` with the order of ``dims`` (an int or a sequence) reversed (``torch.flip``).

    >>> import kernelgraph as kg
    >>> kg.flip(kg.tensor([[1, 2], [3, 4]]), [0, 1]).tolist()
    [[4, 3], [2, 1]]
    """
    n = _rank(x, "flip")
    picked = {wrap_dim(d, n, "flip") for d in (dims if isinstance(dims, tuple | list)
                                                else (dims,))}
    index = tuple(slice(None, None, -1) if i in picked else slice(None) for i in range(n))
    return clone(getitem(x, index=normalize_index(index)))  # a copy, as PyTorch's


def masked_fill(x, mask, value):
    """``value`` where ``mask`` is true, else ``x`` (``torch.Tensor.masked_fill``).

    >>> import kernelgraph as kg
    >>> x = kg.tensor([1.0, 2.0, 3.0])
    >>> kg.masked_fill(x, x > 1.5, 0.0).tolist()
    [1.0, 0.0, 0.0]
    """
    return where(mask, value, x)


def index_select(x, dim: int, index):
    """The entries ``index`` (a 1-D integer tensor) of ``dim`` (``torch.index_select``).

    >>> import kernelgraph as kg
    >>> kg.index_select(kg.tensor([[1, 2, 3]]), 1, kg.tensor([2, 0])).tolist()
    [[3, 1]]
    """
    return gather(x, index, axis=wrap_dim(dim, _rank(x, "index_select"), "index_select"))
