"""Shape ops: ``reshape transpose broadcast_to`` (views, no copy) and their gradient helpers."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..graph import shape_str
from . import shapes
from .reduce import sum_to_like
from .registry import define


def _norm_shape(shape):
    if isinstance(shape, int | np.integer):
        return (int(shape),)
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints, got {shape!r}") from None


def _reshape_forward(x, shape):
    return np.reshape(x, _norm_shape(shape))


def _reshape_infer(shapes_, dtypes, attrs):
    target = _norm_shape(attrs["shape"])
    if sum(d == -1 for d in target) > 1 or any(d < -1 for d in target):
        raise ShapeError(f"reshape: {target} may hold at most one -1 and no other negatives")
    src = shapes_[0]
    if shapes.known(src):
        size = int(np.prod(src, dtype=np.int64))
        rest = int(np.prod([d for d in target if d != -1], dtype=np.int64))
        if -1 in target:
            if rest == 0 or size % rest:
                raise ShapeError(f"reshape: cannot reshape {shape_str(src)} ({size} elements) "
                                 f"into {target}")
            return tuple(size // rest if d == -1 else d for d in target), dtypes[0]
        if rest != size:
            raise ShapeError(f"reshape: cannot reshape {shape_str(src)} ({size} elements) "
                             f"into {shape_str(target)} ({rest} elements)")
    return tuple(None if d == -1 else d for d in target), dtypes[0]


reshape = define("reshape", _reshape_forward, _reshape_infer,
                 lambda g, out, needs, attrs, x: (reshape_like(g, x),), view=True,
                 attr_names=("shape",),
                 doc="Same elements, new shape; one dim may be -1 (inferred).")
reshape_like = define("reshape_like", lambda x, like: np.reshape(x, np.shape(like)),
                      lambda s, d, attrs: (s[1], d[0]),
                      lambda gg, out, needs, attrs, x, like: (reshape_like(gg, x), None),
                      view=True, doc="Reshape x to like's shape.")


def _perm(perm, ndim):
    if perm is None:
        return tuple(range(ndim - 1, -1, -1))
    perm = tuple(int(p) for p in perm)
    if sorted(p % ndim if ndim else p for p in perm) != list(range(ndim)):
        raise ShapeError(f"transpose: perm {perm} is not a permutation of the {ndim} axes")
    return tuple(p % ndim for p in perm)


def _transpose_forward(x, perm=None):
    return np.transpose(x, _perm(perm, x.ndim))


def _transpose_infer(shapes_, dtypes, attrs):
    src = shapes_[0]
    if src is None:
        return None, dtypes[0]
    p = _perm(attrs.get("perm"), len(src))
    return tuple(src[i] for i in p), dtypes[0]


def _transpose_grad(g, out, needs, attrs, x):
    perm = attrs.get("perm")
    if perm is None:
        return (transpose(g),)
    p = _perm(perm, len(perm))
    inverse = [0] * len(p)
    for i, axis in enumerate(p):
        inverse[axis] = i
    return (transpose(g, perm=tuple(inverse)),)


transpose = define("transpose", _transpose_forward, _transpose_infer, _transpose_grad,
                   view=True, attr_names=("perm",),
                   doc="Permute axes (reverse them when ``perm`` is None).")


def _matrix_transpose_infer(shapes_, dtypes, attrs):
    s = shapes_[0]
    if s is not None and len(s) < 2:
        raise ShapeError(f"matrix_transpose needs rank >= 2, got shape {shape_str(s)}")
    return (None if s is None else (*s[:-2], s[-1], s[-2])), dtypes[0]


matrix_transpose = define(
    "matrix_transpose", lambda x: np.swapaxes(x, -1, -2), _matrix_transpose_infer,
    lambda g, out, needs, attrs, x: (matrix_transpose(g),), view=True,
    doc="Swap the last two axes.")


def _broadcast_to_infer(shapes_, dtypes, attrs):
    target = _norm_shape(attrs["shape"])
    got = shapes.broadcast(shapes_[0], target, "broadcast_to")
    if got is not None and len(got) == len(target) and any(
            g is not None and g != t for g, t in zip(got, target)):
        raise ShapeError(f"broadcast_to: cannot broadcast {shape_str(shapes_[0])} to "
                         f"{shape_str(target)}")
    if shapes_[0] is not None and len(shapes_[0]) > len(target):
        raise ShapeError(f"broadcast_to: cannot broadcast {shape_str(shapes_[0])} to the "
                         f"lower rank {shape_str(target)}")
    return target, dtypes[0]


broadcast_to = define(
    "broadcast_to", lambda x, shape: np.broadcast_to(x, _norm_shape(shape)),
    _broadcast_to_infer, lambda g, out, needs, attrs, x: (sum_to_like(g, x),), view=True,
    attr_names=("shape",), doc="Broadcast x to ``shape`` (a read-only view).")
