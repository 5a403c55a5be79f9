"""Indexing ops: ``concat stack split``, basic indexing ``x[1:3, ::2]`` (``getitem``),
``gather``/``embedding``, ``pad``, ``one_hot``, ``clip`` and ``argmax``.

Each op has one output, so ``split`` returns one ``split_piece`` node per piece. Attributes
are plain hashable values: an index is normalized to a tuple whose items are ints, ``None``
(new axis), ``"..."`` (Ellipsis) or ``(start, stop, step)`` triples (slices).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError, shown
from ..graph import shape_str
from ..kernels import indexing as K
from .elementwise import greater_equal, less_equal, where, zeros_like
from .registry import define
from .shapes import axis_arg, nonempty_reduction

_FULL = (None, None, None)


# -- helpers ---------------------------------------------------------------------------------
def _axis(axis, ndim, what, extra=0):
    """``axis`` normalized into ``[0, ndim + extra)``, or a ShapeError."""
    n = ndim + extra
    axis = axis_arg(axis, what)
    if not -n <= axis < n:
        raise ShapeError(f"{what}: axis {axis} is out of range for rank {ndim}")
    return int(axis) % n


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
    ax = _axis(attrs.get("axis", 0), rank, "concat")
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


def _concat_forward(*arrays, axis=0):
    _concat_infer([a.shape for a in arrays], [a.dtype for a in arrays], {"axis": axis})
    return K.concat(arrays, axis % arrays[0].ndim)


def _concat_grad(g, out, needs, attrs, *inputs):
    return tuple(concat_slice(g, *inputs, index=i, axis=attrs.get("axis", 0)) if need else None
                 for i, need in enumerate(needs))


concat_op = define("concat", _concat_forward, _concat_infer, _concat_grad,
                   doc="Join tensors of one dtype along an existing ``axis``.")


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
    lambda s, d, attrs: (s[1 + attrs["index"]], d[0]), _concat_slice_grad, view=True,
    doc="The piece of a concat's gradient ``g`` that belongs to input ``index``.")


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
    ax = _axis(attrs.get("axis", 0), rank, "stack", extra=1)
    return tuple(dims[:ax]) + (len(shapes_),) + tuple(dims[ax:]), dt


def _stack_forward(*arrays, axis=0):
    shapes_ = [a.shape for a in arrays]
    _stack_infer(shapes_, [a.dtype for a in arrays], {"axis": axis})
    if len(set(shapes_)) != 1:
        raise ShapeError(f"stack: all tensors must have one shape, got "
                         f"{', '.join(shape_str(s) for s in shapes_)}")
    ax = axis % (arrays[0].ndim + 1)
    return K.concat([np.expand_dims(a, ax) for a in arrays], ax)


def _pick(axis, i):
    """The index that picks entry ``i`` of ``axis`` (negative axes count from the end)."""
    if axis >= 0:
        return (_FULL,) * axis + (i,)
    return ("...", i) + (_FULL,) * (-axis - 1)


def _stack_grad(g, out, needs, attrs, *inputs):
    axis = attrs.get("axis", 0)
    return tuple(getitem(g, index=_pick(axis, i)) if need else None
                 for i, need in enumerate(needs))


stack_op = define("stack", _stack_forward, _stack_infer, _stack_grad,
                  doc="Join tensors of one shape along a new ``axis``.")


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
    ax = _axis(attrs["axis"], len(s), "split")
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
    ax = _axis(axis, len(shape), "split")
    start, stop = _piece_bounds(shape[ax], sizes, index)
    return (slice(None),) * ax + (slice(start, stop),)


def _split_forward(x, sizes, index, axis):
    return x[_split_index(x.shape, sizes, index, axis)]


def _split_grad_forward(g, x, sizes, index, axis):
    out = np.zeros(x.shape, g.dtype)
    out[_split_index(x.shape, sizes, index, axis)] = g
    return out


split_piece = define(
    "split_piece", _split_forward, _split_infer,
    lambda g, out, needs, attrs, x: (split_grad(g, x, **attrs),), view=True,
    doc="Piece ``index`` of x split along ``axis`` into ``sizes`` (an int: equal pieces).")
split_grad = define(
    "split_grad", _split_grad_forward, lambda s, d, attrs: (s[1], d[0]),
    lambda gg, out, needs, attrs, g, x: (split_piece(gg, **attrs), None),
    doc="Zeros of x's shape with g in piece ``index``: the gradient of split_piece.")


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


# -- getitem ---------------------------------------------------------------------------------
def _slice_part(v, what):
    if v is None:
        return None
    if isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_):
        return int(v)
    raise TypeError(f"slice {what} must be an int or None, got {type(v).__name__}")


def normalize_index(index) -> tuple:
    """A Python index as a hashable tuple of ints, None, "..." and (start, stop, step)."""
    items = index if isinstance(index, tuple) else (index,)
    out = []
    for it in items:
        if it is Ellipsis:
            out.append("...")
        elif it is None:
            out.append(None)
        elif isinstance(it, slice):
            step = _slice_part(it.step, "step")
            if step == 0:
                raise ValueError("slice step cannot be zero")
            out.append((_slice_part(it.start, "start"), _slice_part(it.stop, "stop"), step))
        elif isinstance(it, int | np.integer) and not isinstance(it, bool | np.bool_):
            out.append(int(it))
        else:
            raise TypeError(f"only basic indexing is supported (ints, slices, ..., None), got "
                            f"{type(it).__name__}; use kg.gather for index tensors")
    if out.count("...") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    return tuple(out)


def _decode(index):
    return tuple(Ellipsis if it == "..." else slice(*it) if isinstance(it, tuple) else it
                 for it in index)


def _getitem_shape(shape, index):
    """The result shape of ``x[index]`` (None dims stay unknown); IndexError when an int is
    out of range for a known dim or there are too many indices."""
    if shape is None:
        return None
    used = sum(1 for it in index if it is not None and it != "...")
    if used > len(shape):
        raise IndexError(f"too many indices for a tensor of shape {shape_str(shape)}: "
                         f"{used} indexed, but it has {len(shape)} dims")
    if "..." in index:
        k = index.index("...")
        index = index[:k] + (_FULL,) * (len(shape) - used) + index[k + 1:]
    out, axis = [], 0
    for it in index:
        if it is None:
            out.append(1)
            continue
        d = shape[axis]
        if isinstance(it, tuple):
            out.append(None if d is None else len(range(*slice(*it).indices(d))))
        elif d is not None and not -d <= it < d:
            raise IndexError(f"index {it} is out of range for axis {axis} with size {d}")
        axis += 1
    return tuple(out) + tuple(shape[axis:])


def _getitem_forward(x, index):
    _getitem_shape(x.shape, index)  # the bounds check, with a clear message
    out = x[_decode(index)]
    return out if type(out) is np.ndarray else np.asarray(out)  # x[0] of 1-d: a NumPy scalar


getitem = define(
    "getitem", _getitem_forward,
    lambda s, d, attrs: (_getitem_shape(s[0], attrs["index"]), d[0]),
    lambda g, out, needs, attrs, x: (getitem_grad(g, x, index=attrs["index"]),), view=True,
    attr_names=("index",),
    doc="Basic indexing ``x[index]`` (ints, slices, ``...``, None): a view.")


def _getitem_grad_forward(g, x, index):
    out = np.zeros(np.shape(x), g.dtype)
    out[_decode(index)] = g
    return out


getitem_grad = define(
    "getitem_grad", _getitem_grad_forward, lambda s, d, attrs: (s[1], d[0]),
    lambda gg, out, needs, attrs, g, x: (getitem(gg, index=attrs["index"]), None),
    doc="Zeros of x's shape with g scattered into ``x[index]``: the gradient of getitem.")


# -- gather / embedding ----------------------------------------------------------------------
def _check_int(dt, what):
    if D.as_dtype(dt) not in D.INTS:
        raise TypeError(f"{what}: indices must be int32 or int64, got {D.as_dtype(dt).name}")


def _gather_infer(shapes_, dtypes, attrs):
    _check_int(dtypes[1], "gather")
    axis_arg(attrs.get("axis", 0), "gather")  # also where no rank is known yet
    sp, si = shapes_
    if sp is None:
        return None, dtypes[0]
    ax = _axis(attrs.get("axis", 0), len(sp), "gather")
    if si is None:
        return None, dtypes[0]
    return sp[:ax] + tuple(si) + sp[ax + 1:], dtypes[0]


def _gather_forward(params, indices, axis=0):
    indices = np.asarray(indices)
    _gather_infer([params.shape, indices.shape], [params.dtype, indices.dtype], {"axis": axis})
    return K.gather(params, indices, axis % params.ndim)


def _gather_grad(g, out, needs, attrs, params, indices):
    return gather_grad(g, indices, params, axis=attrs.get("axis", 0)), None


gather = define("gather", _gather_forward, _gather_infer, _gather_grad,
                attr_names=("axis",), inputs=2,
                doc="Slices of ``params`` at integer ``indices`` along ``axis`` (tf.gather).")


def _gather_grad_forward(g, indices, like, axis=0):
    return K.scatter_add(g, np.asarray(indices), np.shape(like), axis % np.ndim(like))


gather_grad = define(
    "gather_grad", _gather_grad_forward, lambda s, d, attrs: (s[2], d[0]),
    lambda gg, out, needs, attrs, g, indices, like: (
        gather(gg, indices, axis=attrs.get("axis", 0)), None, None),
    doc="Zeros of like's shape with g's slices added at ``indices`` (repeats accumulate).")


def embedding(weights, ids):
    """Rows of ``weights`` (vocabulary, dim) for integer ``ids``: ``gather(weights, ids)``.

    >>> import kernelgraph as kg
    >>> kg.embedding(kg.tensor([[0.0, 1.0], [2.0, 3.0]]), kg.tensor([1, 1])).tolist()
    [[2.0, 3.0], [2.0, 3.0]]
    """
    return gather(weights, ids, axis=0)


# -- pad -------------------------------------------------------------------------------------
def _norm_paddings(paddings):
    try:
        pairs = tuple((int(b), int(a)) for b, a in paddings)
    except (TypeError, ValueError):
        raise TypeError(f"pad: paddings must be a list of (before, after) int pairs, got "
                        f"{shown(paddings)}") from None
    if any(b < 0 or a < 0 for b, a in pairs):
        raise ValueError(f"pad: paddings must be non-negative, got {list(pairs)}")
    return pairs


def _pad_infer(shapes_, dtypes, attrs):
    pairs = _norm_paddings(attrs["paddings"])
    s = shapes_[0]
    if s is None:
        return tuple(None for _ in pairs), dtypes[0]
    if len(pairs) != len(s):
        raise ShapeError(f"pad: {len(pairs)} (before, after) pairs for a tensor of shape "
                         f"{shape_str(s)}; expected one pair per dim ({len(s)})")
    return tuple(None if d is None else d + b + a for d, (b, a) in zip(s, pairs)), dtypes[0]


def _pad_forward(x, paddings, value=0):
    shape, _ = _pad_infer([x.shape], [x.dtype], {"paddings": paddings})
    out = np.full(shape, value, dtype=x.dtype)
    out[tuple(slice(b, b + d) for d, (b, _) in zip(x.shape, _norm_paddings(paddings)))] = x
    return out


def _pad_grad(g, out, needs, attrs, x):
    index = tuple((b, -a if a else None, None) for b, a in _norm_paddings(attrs["paddings"]))
    return (getitem(g, index=index),)


pad = define("pad", _pad_forward, _pad_infer, _pad_grad, attr_names=("paddings", "value"),
             doc="Pad each dim with ``(before, after)`` entries of ``value`` (tf.pad).")


# -- one_hot, clip, argmax -------------------------------------------------------------------
def _one_hot_infer(shapes_, dtypes, attrs):
    _check_int(dtypes[0], "one_hot")
    depth = attrs["depth"]
    if not isinstance(depth, int | np.integer) or isinstance(depth, bool) or depth < 0:
        raise ValueError(f"one_hot: depth must be a non-negative int, got {shown(depth)}")
    s = shapes_[0]
    return (None if s is None else tuple(s) + (int(depth),)), D.as_dtype(
        attrs.get("dtype", D.float32))


def _one_hot_forward(indices, depth, dtype=D.float32):
    indices = np.asarray(indices)
    _one_hot_infer([indices.shape], [indices.dtype], {"depth": depth})
    return K.one_hot(indices, int(depth), D.as_dtype(dtype))


one_hot = define("one_hot", _one_hot_forward, _one_hot_infer, None,
                 attr_names=("depth", "dtype"),
                 doc="A 1 at each index along a new last axis of size ``depth`` (no gradient).")


def _clip_infer(shapes_, dtypes, attrs):
    if attrs.get("min") is None and attrs.get("max") is None:
        raise ValueError("clip: at least one of 'min' or 'max' must not be None")
    for key in ("min", "max"):
        v = attrs.get(key)
        if v is not None and D.scalar_dtype(v) is None:
            raise TypeError(f"clip: {key} must be a Python number or None, got {shown(v)}")
    # The bounds are weak scalars, as in torch.clamp: an int tensor clipped to 0.5 is float32
    # (the bound is not truncated to the tensor's dtype).
    dtype = dtypes[0]
    for key in ("min", "max"):
        if attrs.get(key) is not None:
            dtype = D.promote_with_scalar(dtype, attrs[key])
    return shapes_[0], dtype


def _clip_forward(x, min=None, max=None):  # noqa: A002 - torch.clamp's names
    _, dtype = _clip_infer([x.shape], [D.as_dtype(x.dtype)], {"min": min, "max": max})
    return K.clip(x if x.dtype == dtype else x.astype(dtype), min, max)


def _clip_grad(g, out, needs, attrs, x):
    lo, hi = attrs.get("min"), attrs.get("max")
    if hi is not None:
        g = where(less_equal(x, hi), g, 0)
    if lo is not None:
        g = where(greater_equal(x, lo), g, 0)
    return (g,)


clip = define("clip", _clip_forward, _clip_infer, _clip_grad, attr_names=("min", "max"),
              doc="x limited to [min, max] (torch.clamp: NaN stays NaN, a NaN bound gives NaN); "
                  "the gradient passes where min <= x <= max.")


def _argmax_infer(shapes_, dtypes, attrs):
    s, axis, keepdims = shapes_[0], attrs.get("axis"), attrs.get("keepdims", False)
    if dtypes[0] == D.bool_:  # PyTorch refuses it (TF1 takes it); one rule for both modes
        raise D.DtypeError("argmax(): does not support bool input; cast it first, e.g. "
                           "kg.cast(x, kg.int32)")
    if axis is None:
        nonempty_reduction(s, None, "argmax")
        return (() if not keepdims else None if s is None else (1,) * len(s)), D.int64
    axis_arg(axis, "argmax")  # also where no rank is known yet
    if s is None:
        return None, D.int64
    if len(s) == 0:
        raise ShapeError("argmax: a 0-d tensor has no axis; use axis=None")
    ax = _axis(axis, len(s), "argmax")
    nonempty_reduction(s, ax, "argmax", normalize=True)
    return s[:ax] + ((1,) if keepdims else ()) + s[ax + 1:], D.int64


def _argmax_forward(x, axis=None, keepdims=False):
    _argmax_infer([x.shape], [x.dtype], {"axis": axis, "keepdims": keepdims})
    return K.argmax(x, None if axis is None else axis % x.ndim, keepdims)


argmax = define("argmax", _argmax_forward, _argmax_infer, None,
                attr_names=("axis", "keepdims"),
                doc="int64 index of the first maximum along ``axis`` (None: of the flattened "
                    "tensor), or of the first NaN, as in PyTorch (which refuses bools, as "
                    "kernelgraph does); no gradient. An empty axis "
                    "is refused; other empty dims give an empty result.")
