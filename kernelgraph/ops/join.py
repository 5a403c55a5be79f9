"""Joining tensors and cutting them apart: ``concat``, ``stack`` and ``split``, with the
gradient ops that undo them (``concat_slice``, ``split_grad``).

Each op has one output, so ``split`` returns one ``split_piece`` node per piece. Every
forward checks its arguments with the op's own rules before a kernel runs, on either device;
the kernels (:mod:`kernelgraph.kernels.indexing`, ``kernels.cuda.indexing``) get them
normalized.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError, shown
from ..graph import shape_str
from ..kernels import indexing as K
from ..kernels import reference as R
from ..kernels import reference_grads as RG
from ..shapes import axis_arg, checked_axis
from .elementwise import zeros_like
from .indexing import FULL, getitem
from .registry import define


def _merge_dims(a, b, what, shapes_):
    if a is None:
        return b
    if b is None or a == b:
        return a
    raise ShapeError(f"{what}: shapes {', '.join(shape_str(s) for s in shapes_)} differ "
                     f"({a} vs {b}) outside the joined axis")


def _same_dtype(dtypes, what):
    for d in dtypes[1:]:
        if d != dtypes[0]:
            raise TypeError(f"{what}: all tensors must have one dtype, got "
                            f"{', '.join(D.as_dtype(x).name for x in dtypes)}")
    return dtypes[0]


def _tensor_list(tensors, what):
    if isinstance(tensors, np.ndarray) or not isinstance(tensors, list | tuple):
        raise TypeError(f"{what} expects a list of tensors, got {type(tensors).__name__}")
    if not tensors:
        raise ValueError(f"{what} needs at least one tensor")
    return tuple(tensors)


# -- concat ----------------------------------------------------------------------------------
def _concat_infer(shapes_, dtypes, attrs):
    dt = _same_dtype(dtypes, "concat")
    axis_arg(attrs.get("axis", 0), "concat")  # also where no rank is known yet
    known = [s for s in shapes_ if s is not None]
    if not known:
        return None, dt
    rank = len(known[0])
    if any(len(s) != rank for s in known):
        raise ShapeError(f"concat: all tensors must have one rank, got shapes "
                         f"{', '.join(shape_str(s) for s in shapes_)}")
    if rank == 0:
        raise ShapeError("concat: cannot join 0-d tensors; use kg.stack")
    ax = checked_axis(attrs.get("axis", 0), rank, "concat")
    out = []
    for i in range(rank):
        if i == ax:
            dims = [None if s is None else s[i] for s in shapes_]
            out.append(None if None in dims else sum(dims))
        else:
            d = None
            for s in known:
                d = _merge_dims(d, s[i], "concat", shapes_)
            out.append(d)
    return tuple(out), dt


def _concat(kernels):
    def forward(*arrays, axis=0):
        _concat_infer([a.shape for a in arrays], [a.dtype for a in arrays], {"axis": axis})
        return kernels.concat(arrays, axis % arrays[0].ndim)
    return forward


def _concat_grad(g, out, needs, attrs, *inputs):
    return tuple(concat_slice(g, *inputs, index=i, axis=attrs.get("axis", 0)) if need else None
                 for i, need in enumerate(needs))


concat_op = define("concat", _concat(K), _concat_infer, _concat_grad, reference=R.concat,
                   cuda=lambda k: _concat(k.indexing),
                   doc="Join tensors of one dtype along an existing ``axis``.",
                   saves=(),  # the rule reads the inputs' sizes alone, as PyTorch's cat
                   grad_fn="CatBackward0", batch="join")


def _concat_slice_forward(g, *tensors, index, axis):
    ax = axis % g.ndim
    start = sum(t.shape[ax] for t in tensors[:index])
    return g[(slice(None),) * ax + (slice(start, start + tensors[index].shape[ax]),)]


def _concat_slice_grad(gg, out, needs, attrs, g, *tensors):
    index = attrs["index"]
    parts = [gg if j == index else zeros_like(t) for j, t in enumerate(tensors)]
    return (concat(parts, axis=attrs["axis"]),) + (None,) * len(tensors)


concat_slice = define(
    "concat_slice", _concat_slice_forward,
    lambda s, d, attrs: (s[1 + attrs["index"]], d[0]), _concat_slice_grad, traits=("view",),
    reference=RG.concat_slice, cuda=lambda k: k.indexing.concat_slice,
    doc="The piece of a concat's gradient ``g`` that belongs to input ``index``.", saves="all")


def concat(tensors, axis: int = 0, name: str | None = None):
    """Join ``tensors`` (one dtype, one rank) along the existing ``axis``.

    >>> import kernelgraph as kg
    >>> kg.concat([kg.tensor([1, 2]), kg.tensor([3])]).tolist()
    [1, 2, 3]
    """
    kw = {"name": name} if name is not None else {}
    return concat_op(*_tensor_list(tensors, "concat"), axis=axis, **kw)


# -- stack -----------------------------------------------------------------------------------
def _stack_infer(shapes_, dtypes, attrs):
    dt = _same_dtype(dtypes, "stack")
    axis_arg(attrs.get("axis", 0), "stack")  # also where no rank is known yet
    known = [s for s in shapes_ if s is not None]
    if not known:
        return None, dt
    rank = len(known[0])
    if any(len(s) != rank for s in known):
        raise ShapeError(f"stack: all tensors must have one shape, got "
                         f"{', '.join(shape_str(s) for s in shapes_)}")
    dims = []
    for i in range(rank):
        d = None
        for s in known:
            d = _merge_dims(d, s[i], "stack", shapes_)
        dims.append(d)
    ax = checked_axis(attrs.get("axis", 0), rank, "stack", extra=1)
    return tuple(dims[:ax]) + (len(shapes_),) + tuple(dims[ax:]), dt


def _stack(kernels):
    def forward(*arrays, axis=0):
        shapes_ = [tuple(a.shape) for a in arrays]
        _stack_infer(shapes_, [a.dtype for a in arrays], {"axis": axis})
        if len(set(shapes_)) != 1:
            raise ShapeError(f"stack: all tensors must have one shape, got "
                             f"{', '.join(shape_str(s) for s in shapes_)}")
        return kernels.stack(arrays, axis % (arrays[0].ndim + 1))
    return forward


def _pick(axis, i):
    """The index that picks entry ``i`` of ``axis`` (negative axes count from the end)."""
    if axis >= 0:
        return (FULL,) * axis + (i,)
    return ("...", i) + (FULL,) * (-axis - 1)


def _stack_grad(g, out, needs, attrs, *inputs):
    axis = attrs.get("axis", 0)
    return tuple(getitem(g, index=_pick(axis, i)) if need else None
                 for i, need in enumerate(needs))


stack_op = define("stack", _stack(K), _stack_infer, _stack_grad, reference=R.stack,
                  cuda=lambda k: _stack(k.indexing),
                  doc="Join tensors of one shape along a new ``axis``.", saves=(),
                  grad_fn="StackBackward0", batch="join")


def stack(tensors, axis: int = 0, name: str | None = None):
    """Join ``tensors`` (one shape and dtype) along a new ``axis``.

    >>> import kernelgraph as kg
    >>> kg.stack([kg.tensor([1, 2]), kg.tensor([3, 4])], axis=1).tolist()
    [[1, 3], [2, 4]]
    """
    kw = {"name": name} if name is not None else {}
    return stack_op(*_tensor_list(tensors, "stack"), axis=axis, **kw)


# -- split -----------------------------------------------------------------------------------
def _piece_bounds(size, sizes, index):
    """(start, stop) of piece ``index`` along an axis of ``size`` (None if unknown)."""
    if isinstance(sizes, int):
        if size is None:
            return None
        if size % sizes:
            raise ShapeError(f"split: an axis of size {size} does not split into {sizes} "
                             "equal pieces")
        step = size // sizes
        return index * step, (index + 1) * step
    if -1 in sizes:
        if size is None:
            return None
        rest = sum(s for s in sizes if s != -1)
        if rest > size:
            raise ShapeError(f"split: sizes {list(sizes)} need more than the axis size {size}")
        sizes = tuple(size - rest if s == -1 else s for s in sizes)
    elif size is not None and sum(sizes) != size:
        raise ShapeError(f"split: sizes {list(sizes)} add up to {sum(sizes)}, but the axis "
                         f"has size {size}")
    start = sum(sizes[:index])
    return start, start + sizes[index]


def _split_infer(shapes_, dtypes, attrs):
    s = shapes_[0]
    if s is None:
        return None, dtypes[0]
    ax = checked_axis(attrs["axis"], len(s), "split")
    bounds = _piece_bounds(s[ax], attrs["sizes"], attrs["index"])
    if bounds is None:
        sizes = attrs["sizes"]
        d = None if isinstance(sizes, int) or sizes[attrs["index"]] == -1 \
            else sizes[attrs["index"]]
    else:
        d = bounds[1] - bounds[0]
    return s[:ax] + (d,) + s[ax + 1:], dtypes[0]


def _split_index(shape, sizes, index, axis):
    if type(sizes) is list:  # (split() passes a tuple; a direct call may not)
        sizes = tuple(sizes)
    return _split_slices(tuple(shape), sizes, index, axis)


@functools.lru_cache(maxsize=1024)  # an LSTM step splits the same shape twice each way
def _split_slices(shape, sizes, index, axis):
    ax = checked_axis(axis, len(shape), "split")
    start, stop = _piece_bounds(shape[ax], sizes, index)
    return (slice(None),) * ax + (slice(start, stop),)


def _split_forward(x, sizes, index, axis):
    return x[_split_index(x.shape, sizes, index, axis)]


def _split_grad_forward(g, x, sizes, index, axis):
    out = np.zeros(x.shape, g.dtype)
    out[_split_index(x.shape, sizes, index, axis)] = g
    return out


def _split_cuda(k):
    read = k.indexing.read
    return lambda x, sizes, index, axis: read(x, _split_index(x.shape, sizes, index, axis))


def _split_grad_cuda(k):
    zeros_with = k.indexing.zeros_with
    return lambda g, x, sizes, index, axis: zeros_with(
        g, x.shape, _split_index(x.shape, sizes, index, axis))


split_piece = define(
    "split_piece", _split_forward, _split_infer,
    lambda g, out, needs, attrs, x: (split_grad(g, x, **attrs),), traits=("view",),
    reference=RG.split_piece, cuda=_split_cuda,
    doc="Piece ``index`` of x split along ``axis`` into ``sizes`` (an int: equal pieces).",
    saves=(0,), grad_fn="SplitBackward0", batch="split_piece")
split_grad = define(
    "split_grad", _split_grad_forward, lambda s, d, attrs: (s[1], d[0]),
    lambda gg, out, needs, attrs, g, x: (split_piece(gg, **attrs), None),
    reference=RG.split_grad, cuda=_split_grad_cuda,
    doc="Zeros of x's shape with g in piece ``index``: the gradient of split_piece.", saves=())


def split(x, num_or_size_splits, axis: int = 0, name: str | None = None) -> list:
    """Split ``x`` along ``axis`` into ``num_or_size_splits`` equal pieces (an int) or pieces
    of the given sizes (a list; one may be -1), as ``tf.split``; returns a list.

    >>> import kernelgraph as kg
    >>> [p.tolist() for p in kg.split(kg.tensor([1, 2, 3, 4]), [1, 3])]
    [[1], [2, 3, 4]]
    """
    if isinstance(num_or_size_splits, int | np.integer) and not isinstance(
            num_or_size_splits, bool):
        sizes, count = int(num_or_size_splits), int(num_or_size_splits)
        if count < 1:
            raise ValueError(f"split: the number of pieces must be >= 1, got {count}")
    else:
        try:
            # each size an int: a float is refused, not truncated (int(1.5) is 1)
            sizes = tuple(axis_arg(s, "split") for s in num_or_size_splits)
        except TypeError:
            raise TypeError("split: num_or_size_splits must be an int or a list of ints, got "
                            f"{shown(num_or_size_splits)}") from None
        if not sizes or any(s < -1 for s in sizes) or sizes.count(-1) > 1:
            raise ValueError(f"split: sizes {list(sizes)} must be non-negative, with at most "
                             "one -1")
        count = len(sizes)
    kw = {"name": name} if name is not None else {}
    axis = axis_arg(axis, "split")
    return [split_piece(x, sizes=sizes, index=i, axis=axis, **kw) for i in range(count)]
