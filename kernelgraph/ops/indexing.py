"""Indexing ops: basic indexing ``x[1:3, ::2]`` (``getitem``), ``gather``/``embedding``,
``pad``, ``one_hot``, ``clip`` and ``argmax`` (joining and splitting: :mod:`.join`).

Attributes are plain hashable values: an index is normalized to a tuple whose items are
ints, ``None`` (new axis), ``"..."`` (Ellipsis) or ``(start, stop, step)`` triples (slices).
Every forward checks its arguments with the op's own rules before a kernel runs, on either
device; the kernels (:mod:`kernelgraph.kernels.indexing`, ``kernels.cuda.indexing``) get
them normalized.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError, shown
from ..graph import shape_str
from ..kernels import indexing as K
from ..kernels import reference as R
from ..kernels import reference_grads as RG
from ..shapes import axis_arg, checked_axis, nonempty_reduction
from .elementwise import greater_equal, less_equal, where
from .registry import define

FULL = (None, None, None)  # the slice ``:`` in a normalized index


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
        index = index[:k] + (FULL,) * (len(shape) - used) + index[k + 1:]
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


def _getitem_cuda(k):
    read = k.indexing.read

    def getitem(x, index):  # a contiguous copy of the view, where the CPU returns the view
        _getitem_shape(x.shape, index)  # the CPU's bounds checks and messages
        return read(x, _decode(index))
    return getitem


def _getitem_grad_fn(node) -> str:
    index = (node.attrs or {}).get("index", ())
    if any(type(i) is int for i in index):
        return "SelectBackward0"
    return "SliceBackward0" if any(type(i) is tuple for i in index) else "UnsqueezeBackward0"


getitem = define(
    "getitem", _getitem_forward,
    lambda s, d, attrs: (_getitem_shape(s[0], attrs["index"]), d[0]),
    lambda g, out, needs, attrs, x: (getitem_grad(g, x, index=attrs["index"]),),
    traits=("view",), reference=RG.getitem, cuda=_getitem_cuda, attr_names=("index",), saves=(),
    grad_fn=_getitem_grad_fn,
    doc="Basic indexing ``x[index]`` (ints, slices, ``...``, None): a view.", batch="getitem")


def _getitem_grad_forward(g, x, index):
    out = np.zeros(np.shape(x), g.dtype)
    out[_decode(index)] = g
    return out


getitem_grad = define(
    "getitem_grad", _getitem_grad_forward, lambda s, d, attrs: (s[1], d[0]),
    lambda gg, out, needs, attrs, g, x: (getitem(gg, index=attrs["index"]), None),
    reference=RG.getitem_grad,
    cuda=lambda k: lambda g, x, index: k.indexing.zeros_with(g, x.shape, _decode(index)),
    doc="Zeros of x's shape with g scattered into ``x[index]``: the gradient of getitem.", saves=())


# -- setitem: x[index] = value -----------------------------------------------------------------
class BroadcastError(ShapeError, RuntimeError):
    """A value that does not fit ``x[index]``: a ShapeError, and the RuntimeError PyTorch
    raises."""


def _setitem_infer(shapes_, dtypes, attrs):
    sx, sv = shapes_
    piece = _getitem_shape(sx, attrs["index"])  # the bounds checks, with getitem's words
    if piece is not None and sv is not None and None not in piece and None not in sv:
        sv = tuple(sv)
        while len(sv) > len(piece) and sv[0] == 1:  # leading 1s of a value are dropped
            sv = sv[1:]
        try:
            fits = len(sv) <= len(piece) and np.broadcast_shapes(sv, piece) == tuple(piece)
        except ValueError:
            fits = False
        if not fits:
            raise BroadcastError(_expand_message(sv, tuple(piece)))
    return sx, dtypes[0]


def _expand_message(value, target) -> str:
    """PyTorch's words for a value that does not expand to the indexed piece."""
    if len(value) > len(target):
        return (f"shape mismatch: value tensor of shape {list(value)} cannot be broadcast to "
                f"indexing result of shape {list(target)}")
    for k in range(1, len(value) + 1):
        if value[-k] not in (1, target[-k]):
            return (f"The expanded size of the tensor ({target[-k]}) must match the existing "
                    f"size ({value[-k]}) at non-singleton dimension {len(target) - k}.  Target "
                    f"sizes: {list(target)}.  Tensor sizes: {list(value)}")
    return f"cannot write a value of shape {list(value)} into {list(target)}"


def _setitem_forward(x, value, index):
    _setitem_infer([x.shape, np.shape(value)], [x.dtype, None], {"index": index})
    out = x.copy()
    out[_decode(index)] = np.reshape(value, _fitted(np.shape(value), out[_decode(index)].shape))
    return out


def _fitted(shape, piece):
    """``shape`` without the leading 1s that ``piece`` does not have (PyTorch drops them)."""
    shape = tuple(shape)
    while len(shape) > len(piece) and shape[0] == 1:
        shape = shape[1:]
    return shape


def _setitem_reference(x, value, index):
    """NumPy's own assignment into a copy: the oracle of :data:`setitem`."""
    out = np.array(x, copy=True)
    piece = out[_decode(index)]
    piece[...] = np.broadcast_to(np.reshape(value, _fitted(np.shape(value), piece.shape)),
                                 piece.shape)
    return out


def _setitem_grad(g, out, needs, attrs, x, value):
    index = attrs["index"]
    return ((setitem(g, 0.0, index=index) if needs[0] else None),
            (getitem(g, index=index) if needs[1] else None))


def _setitem_cuda(k):
    core, ix = k.core, k.indexing

    def forward(x, value, index):
        _setitem_infer([x.shape, np.shape(value)], [x.dtype, None], {"index": index})
        out = core.copy(x)
        piece, strides, base = ix.view(x.shape, _decode(index))
        if isinstance(value, int | float | bool | np.generic):
            src = core.full(piece, value, x.dtype)
        else:
            src = ix._assignable(core.astype(value, x.dtype), piece)
        return core.strided_write(src, out, strides, base)
    return forward


setitem = define(
    "setitem", _setitem_forward, _setitem_infer, _setitem_grad,
    traits=("fresh",), reference=_setitem_reference, cuda=_setitem_cuda, attr_names=("index",),
    inputs=2, saves=(),
    doc="A copy of x with ``value`` (broadcast) written at the basic index ``index``: what "
        "eager ``x[index] = value`` records (in place, as ``setitem_``); the gradient passes "
        "to x outside the index and to value inside it.", grad_fn="CopySlices")


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
    ax = checked_axis(attrs.get("axis", 0), len(sp), "gather")
    if si is None:
        return None, dtypes[0]
    return sp[:ax] + tuple(si) + sp[ax + 1:], dtypes[0]


def _gather_forward(params, indices, axis=0):
    indices = np.asarray(indices)
    _gather_infer([params.shape, indices.shape], [params.dtype, indices.dtype], {"axis": axis})
    return K.gather(params, indices, axis % params.ndim)


def _gather_grad(g, out, needs, attrs, params, indices):
    return gather_grad(g, indices, params, axis=attrs.get("axis", 0)), None


def _gather_cuda(k):
    gather = k.indexing.gather

    def forward(params, indices, axis=0):
        _gather_infer([params.shape, indices.shape], [params.dtype, indices.dtype],
                      {"axis": axis})
        return gather(params, indices, axis % params.ndim)
    return forward


gather = define("gather", _gather_forward, _gather_infer, _gather_grad, reference=R.gather,
                cuda=_gather_cuda, attr_names=("axis",), inputs=2,
                doc="Slices of ``params`` at integer ``indices`` along ``axis`` (tf.gather).",
                saves=(0, 1), grad_fn="IndexSelectBackward0", batch="gather")


def _gather_grad_forward(g, indices, like, axis=0):
    return K.scatter_add(g, np.asarray(indices), np.shape(like), axis % np.ndim(like))


gather_grad = define(
    "gather_grad", _gather_grad_forward, lambda s, d, attrs: (s[2], d[0]),
    lambda gg, out, needs, attrs, g, indices, like: (
        gather(gg, indices, axis=attrs.get("axis", 0)), None, None),
    reference=RG.gather_grad, cuda=lambda k: k.indexing.gather_grad,
    doc="Zeros of like's shape with g's slices added at ``indices`` (repeats accumulate).",
    saves=(1,))


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


def _pad_cuda(k):
    pad = k.indexing.pad

    def forward(x, paddings, value=0):
        shape, _ = _pad_infer([x.shape], [x.dtype], {"paddings": paddings})
        return pad(x, shape, _norm_paddings(paddings), value)
    return forward


pad = define("pad", _pad_forward, _pad_infer, _pad_grad, reference=R.pad, cuda=_pad_cuda,
             attr_names=("paddings", "value"),
             doc="Pad each dim with ``(before, after)`` entries of ``value`` (tf.pad).", saves=(),
             grad_fn="ConstantPadNdBackward0")


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


def _one_hot_cuda(k):
    one_hot = k.indexing.one_hot

    def forward(indices, depth, dtype=D.float32):
        _one_hot_infer([indices.shape], [indices.dtype], {"depth": depth})
        return one_hot(indices, int(depth), D.as_dtype(dtype))
    return forward


one_hot = define("one_hot", _one_hot_forward, _one_hot_infer, None, reference=R.one_hot,
                 cuda=_one_hot_cuda, attr_names=("depth", "dtype"),
                 doc="A 1 at each index along a new last axis of size ``depth`` (no gradient).",
                 batch="one_hot")


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


def _clip_cuda(k):
    clip, astype = k.indexing.clip, k.core.astype

    def forward(x, min=None, max=None):  # noqa: A002 - torch.clamp's names
        _, dtype = _clip_infer([x.shape], [D.as_dtype(x.dtype)], {"min": min, "max": max})
        return clip(astype(x, dtype), min, max)  # promoted with the bounds, as on the CPU
    return forward


clip = define("clip", _clip_forward, _clip_infer, _clip_grad, reference=R.clip, cuda=_clip_cuda,
              attr_names=("min", "max"),
              doc="x limited to [min, max] (torch.clamp: NaN stays NaN, a NaN bound gives NaN); "
                  "the gradient passes where min <= x <= max.", saves=(0,),
                  grad_fn="ClampBackward1", batch="elementwise")


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
    ax = checked_axis(axis, len(s), "argmax")
    nonempty_reduction(s, ax, "argmax", normalize=True)
    return s[:ax] + ((1,) if keepdims else ()) + s[ax + 1:], D.int64


def _argmax(kernels):
    def forward(x, axis=None, keepdims=False):
        _argmax_infer([x.shape], [x.dtype], {"axis": axis, "keepdims": keepdims})
        return kernels.argmax(x, None if axis is None else axis % x.ndim, keepdims)
    return forward


argmax = define("argmax", _argmax(K), _argmax_infer, None, reference=R.argmax,
                cuda=lambda k: _argmax(k.indexing), attr_names=("axis", "keepdims"),
                doc="int64 index of the first maximum along ``axis`` (None: of the flattened "
                    "tensor), or of the first NaN, as in PyTorch (which refuses bools, as "
                    "kernelgraph does); no gradient. An empty axis "
                    "is refused; other empty dims give an empty result.", batch="argmax")
