"""TF1's math, clipping and indexing functions that are compositions of kernelgraph's ops:
``tf.div`` (TF1's: floor division for integers), ``tf.truncatediv``, ``tf.clip_by_norm``,
``tf.clip_by_global_norm``, ``tf.diag``, ``tf.matrix_diag_part``, ``tf.cross``,
``tf.tensordot``, ``tf.reverse``, ``tf.strided_slice``, ``tf.gather_nd``,
``tf.sequence_mask``, ``tf.unsorted_segment_sum``, ``tf.assert_rank``, ``tf.random_crop``;
and the matrix functions over the cards of kernelgraph/ops/matrix.py (``tf.matrix_inverse``,
``tf.cholesky`` ...) and tf.unique over ops/selection.py.
Each follows TF1's formula (so its gradient, taken through the ops, is TF1's too)."""

from __future__ import annotations

import builtins
import collections
from collections.abc import Sequence

import numpy as np

from ... import ops
from ...dtypes import bool_, float64, int32, int64
from ...graph import Node
from ...ops import matrix, selection
from .spellings import floordiv
from .tensors import constant, no_op

__all__ = [
    "cholesky", "matrix_determinant", "matrix_inverse", "matrix_solve", "self_adjoint_eig",
    "self_adjoint_eigvals", "assert_rank", "clip_by_global_norm", "clip_by_norm", "cross",
    "diag", "div", "floor_div",
    "gather_nd", "global_norm", "matrix_diag_part", "random_crop", "reverse", "reverse_v2",
    "sequence_mask", "strided_slice", "tensordot", "truncatediv", "unique",
    "unsorted_segment_sum",
]


def _node(x, dtype=None) -> Node:
    """Graph mode even for Python numbers and arrays (TF1 converts them to constants)."""
    return x if isinstance(x, Node) else constant(x, dtype=dtype)


def _shape(x: Node, what: str) -> tuple:
    if x.shape is None or None in x.shape:
        raise NotImplementedError(f"{what}: kernelgraph needs the input's whole shape known "
                                  f"when the graph is built, got {x.shape}")
    return tuple(x.shape)


def _pair(x, y):
    x = _node(x)
    return x, _node(y, x.dtype)


# -- division --------------------------------------------------------------------------------
def div(x, y, name=None):
    """TF1's ``tf.div``: Python 2's division: the floor of x / y for integers, x / y for
    floats.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.div(tf.constant([7, -7]), 2)))
    [ 3 -4]
    """
    x, y = _pair(x, y)
    if x.dtype.kind in "iu":
        return floordiv(x, y, name=name or "div")
    return ops.div(x, y, name=name or "div")


def floor_div(x, y, name=None):
    """TF1's ``tf.floor_div``: the floor of x / y, in x's dtype."""
    return floordiv(*_pair(x, y), name=name or "FloorDiv")


def truncatediv(x, y, name=None):
    """TF1's ``tf.truncatediv``: x / y rounded towards zero (C's integer division)."""
    x, y = _pair(x, y)
    out = ops.trunc(ops.div(x, y))
    return ops.cast(out, dtype=x.dtype, name=name or "TruncateDiv") if x.dtype.kind in "iu" \
        else ops.identity(out, name=name or "TruncateDiv")


# -- clipping --------------------------------------------------------------------------------
def clip_by_norm(t, clip_norm, axes=None, name=None):
    """TF1's ``tf.clip_by_norm``: ``t * clip_norm / max(l2norm(t, axes), clip_norm)``, with
    TF's guard that keeps the gradient finite at ``t == 0``."""
    t = _node(t)
    clip_norm = _node(clip_norm, t.dtype)
    axes = None if axes is None else tuple(axes) if isinstance(axes, Sequence) else (axes,)
    l2sum = ops.sum(t * t, axis=axes, keepdims=True)
    pred = ops.greater(l2sum, 0.0)
    safe = ops.where(pred, l2sum, ops.ones_like(l2sum))
    l2norm = ops.where(pred, ops.sqrt(safe), l2sum)
    return ops.identity(ops.div(t * clip_norm, ops.maximum(l2norm, clip_norm)),
                        name=name or "clip_by_norm")


def global_norm(t_list, name=None):
    """TF1's ``tf.global_norm``: sqrt of the sum of squares of every tensor (None skipped)."""
    if isinstance(t_list, str | Node) or not isinstance(t_list, Sequence):
        raise TypeError("t_list should be a sequence")
    squares = [ops.sum(_node(t) * _node(t)) for t in t_list if t is not None]
    if not squares:
        raise ValueError("global_norm: t_list holds no tensor")
    total = squares[0]
    for s in squares[1:]:
        total = total + s
    return ops.sqrt(total, name=name or "global_norm")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """TF1's ``tf.clip_by_global_norm``: ``(list_clipped, global_norm)``, each tensor times
    ``clip_norm / max(global_norm, clip_norm)``; None entries stay None (gradients of
    variables a loss does not reach). The scale is NaN when the norm is infinite, as TF's.

    >>> import kernelgraph.compat.v1 as tf
    >>> clipped, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0]), None], 1.0)
    >>> with tf.Session() as sess:
    ...     print(sess.run(clipped[0]), sess.run(norm), clipped[1])
    [0.6 0.8] 5.0 None
    """
    if isinstance(t_list, str | Node) or not isinstance(t_list, Sequence):
        raise TypeError("t_list should be a sequence")
    t_list = list(t_list)
    norm = global_norm(t_list) if use_norm is None else _node(use_norm)
    clip = _node(clip_norm, norm.dtype)
    scale = clip * ops.minimum(ops.div(1.0, norm), ops.div(1.0, clip))
    scale = scale + (norm - norm)  # NaN for an infinite norm, as TF's
    clipped = [None if t is None else ops.identity(_node(t) * scale) for t in t_list]
    return clipped, norm


# -- matrices and vectors --------------------------------------------------------------------
def diag(diagonal, name=None):
    """TF1's ``tf.diag``: a tensor of shape ``d + d`` with ``diagonal`` (shape ``d``) on its
    diagonal and zeros elsewhere."""
    v = _node(diagonal)
    shape = _shape(v, "tf.diag")
    n = int(np.prod(shape))
    flat = ops.reshape(v, shape=(n, 1))
    return ops.reshape(flat * constant(np.eye(n), dtype=v.dtype), shape=shape + shape,
                       name=name or "Diag")


def matrix_diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """TF1's ``tf.matrix_diag_part``: the main diagonal of each of the last two axes'
    matrices, shape ``[..., min(M, N)]``."""
    if k != 0:
        raise NotImplementedError("tf.matrix_diag_part: only the main diagonal (k=0) is "
                                  "implemented in kernelgraph")
    x = _node(input)
    m, n = _shape(x, "tf.matrix_diag_part")[-2:]
    picked = x * constant(np.eye(m, n), dtype=x.dtype)
    return ops.sum(picked, axis=-1 if m <= n else -2, name=name)


def cross(a, b, name=None):
    """TF1's ``tf.cross``: the cross product of 3-vectors along the last axis."""
    a, b = _pair(a, b)
    if _shape(a, "tf.cross")[-1] != 3 or _shape(b, "tf.cross")[-1] != 3:
        raise ValueError(f"tf.cross: both arguments need 3 elements on their last axis, got "
                         f"shapes {a.shape} and {b.shape}")

    def c(x, i):
        return x[..., i]
    parts = [c(a, 1) * c(b, 2) - c(a, 2) * c(b, 1), c(a, 2) * c(b, 0) - c(a, 0) * c(b, 2),
             c(a, 0) * c(b, 1) - c(a, 1) * c(b, 0)]
    return ops.stack(parts, axis=-1, name=name or "Cross")


def _tensordot_axes(axes, ra: int, rb: int):
    if isinstance(axes, int | np.integer):
        if axes < 0 or axes > builtins.min(ra, rb):
            raise ValueError(f"tf.tensordot: axes={axes} must be between 0 and the ranks")
        return list(builtins.range(ra - axes, ra)), list(builtins.range(axes))
    if len(axes) != 2:
        raise ValueError("tf.tensordot: axes must be an int or a pair of axis lists")
    xa, xb = ([v] if isinstance(v, int | np.integer) else list(v) for v in axes)
    if len(xa) != len(xb):
        raise ValueError(f"tf.tensordot: {len(xa)} axes of a against {len(xb)} of b")
    return [int(v) % ra for v in xa], [int(v) % rb for v in xb]


def tensordot(a, b, axes, name=None):
    """TF1's ``tf.tensordot``: contract ``a``'s ``axes[0]`` with ``b``'s ``axes[1]`` (an int
    n: a's last n with b's first n) as one matrix product."""
    a, b = _pair(a, b)
    sa, sb = _shape(a, "tf.tensordot"), _shape(b, "tf.tensordot")
    xa, xb = _tensordot_axes(axes, len(sa), len(sb))
    for i, j in zip(xa, xb):
        if sa[i] != sb[j]:
            raise ValueError(f"tf.tensordot: axis {i} of a (size {sa[i]}) does not match axis "
                             f"{j} of b (size {sb[j]})")
    fa = [i for i in builtins.range(len(sa)) if i not in xa]
    fb = [j for j in builtins.range(len(sb)) if j not in xb]
    k = int(np.prod([sa[i] for i in xa]))
    am = ops.reshape(ops.transpose(a, perm=fa + xa), shape=(-1, k))
    bm = ops.reshape(ops.transpose(b, perm=xb + fb), shape=(k, -1))
    out_shape = tuple(sa[i] for i in fa) + tuple(sb[j] for j in fb)
    return ops.reshape(ops.matmul(am, bm), shape=out_shape, name=name or "Tensordot")


# -- indexing --------------------------------------------------------------------------------
def reverse(tensor, axis, name=None):
    """TF1's ``tf.reverse`` (``reverse_v2``): the order of each axis in ``axis`` reversed."""
    x = _node(tensor)
    rank = len(_shape(x, "tf.reverse"))
    axes = [axis] if isinstance(axis, int | np.integer) else list(axis)
    flip = {int(a) % rank for a in axes}
    index = tuple(builtins.slice(None, None, -1) if d in flip else builtins.slice(None)
                  for d in builtins.range(rank))
    return ops.identity(x[index], name=name or "ReverseV2")


reverse_v2 = reverse


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """TF1's ``tf.strided_slice`` with Python ints: ``input_[begin:end:strides]`` per axis,
    the masks as TF reads them (bit i of ``begin_mask``: ignore ``begin[i]`` ...)."""
    x = _node(input_)
    strides = [1] * len(begin) if strides is None else list(strides)
    if not len(begin) == len(end) == len(strides):
        raise ValueError("tf.strided_slice: begin, end and strides must have the same length")
    index = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            index.append(Ellipsis)
        elif new_axis_mask & bit:
            index.append(None)
        elif shrink_axis_mask & bit:
            index.append(int(b))
        else:
            index.append(builtins.slice(None if begin_mask & bit else int(b),
                                        None if end_mask & bit else int(e), int(s)))
    return ops.identity(x[tuple(index)], name=name or "StridedSlice")


def _const_value(x):
    """A Python/NumPy value, or a constant node's value; None for a computed node."""
    if isinstance(x, Node):
        return x.attrs["value"] if x.op.name == "const" else None
    return np.asarray(x)


def gather_nd(params, indices, name=None, batch_dims=0):
    """TF1's ``tf.gather_nd``: the slices of ``params`` at the index tuples along the last
    axis of ``indices`` (a gather of the flattened leading axes)."""
    if batch_dims != 0:
        raise NotImplementedError("tf.gather_nd: batch_dims is not implemented in kernelgraph")
    p = _node(params)
    idx = ops.cast(_node(indices), dtype=int64)
    sp, si = _shape(p, "tf.gather_nd"), _shape(idx, "tf.gather_nd")
    r = si[-1]
    if r > len(sp):
        raise ValueError(f"tf.gather_nd: index tuples of {r} entries for params of rank "
                         f"{len(sp)}")
    strides = np.array([int(np.prod(sp[d + 1:r])) for d in builtins.range(r)], np.int64)
    linear = ops.sum(idx * constant(strides, dtype=int64), axis=-1)
    table = ops.reshape(p, shape=(int(np.prod(sp[:r])),) + sp[r:])
    return ops.gather(table, linear, axis=0, name=name or "GatherNd")


def sequence_mask(lengths, maxlen=None, dtype=bool_, name=None):
    """TF1's ``tf.sequence_mask``: ``mask[..., j] = j < lengths[...]``, ``maxlen`` columns
    (by default the largest length, which kernelgraph reads from a constant ``lengths``)."""
    lengths = _node(lengths)
    if maxlen is None:
        known = _const_value(lengths)
        if known is None:
            raise NotImplementedError("tf.sequence_mask: without maxlen kernelgraph needs "
                                      "constant lengths (the mask's width is a build-time size)")
        maxlen = int(np.max(known)) if np.size(known) else 0
    maxlen = _const_value(maxlen)
    if maxlen is None:
        raise NotImplementedError("tf.sequence_mask: maxlen must be a Python int or constant")
    columns = constant(np.arange(int(maxlen)), dtype=lengths.dtype)
    mask = ops.less(columns, ops.reshape(lengths, shape=tuple(lengths.shape) + (1,)))
    return ops.cast(mask, dtype=dtype, name=name or "SequenceMask")


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """TF1's ``tf.unsorted_segment_sum``: ``out[s] = sum of data[i] where segment_ids[i] ==
    s`` for ``num_segments`` segments (the accumulating scatter that is gather's gradient)."""
    data = _node(data)
    ids = ops.cast(_node(segment_ids), dtype=int64)
    sd, si = _shape(data, "tf.unsorted_segment_sum"), _shape(ids, "tf.unsorted_segment_sum")
    if sd[:len(si)] != si:
        raise ValueError(f"tf.unsorted_segment_sum: segment_ids of shape {si} must be a prefix "
                         f"of data's shape {sd}")
    n = _const_value(num_segments)
    rows = int(np.prod(si))
    flat = ops.reshape(data, shape=(rows,) + sd[len(si):])
    like = constant(np.zeros((int(n),) + sd[len(si):]), dtype=data.dtype)
    return ops.gather_grad(flat, ops.reshape(ids, shape=(rows,)), like, axis=0,
                           name=name or "UnsortedSegmentSum")


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """TF1's ``tf.assert_rank``: a ValueError now where the rank is known and wrong, else a
    no-op Operation (a known rank is checked when the graph is built, as TF1 does)."""
    x = _node(x)
    if x.shape is not None and len(x.shape) != int(rank):
        raise ValueError(f"{message + ' ' if message else ''}Tensor {x.name} must have rank "
                         f"{int(rank)}.  Received rank {len(x.shape)}, shape {tuple(x.shape)}")
    return no_op(name=name or "assert_rank")


# -- matrix functions (kernelgraph/ops/matrix.py) --------------------------------------------
def matrix_determinant(input, name=None):  # noqa: A002 - TF's names
    """TF1's ``tf.matrix_determinant`` of each matrix of [..., n, n]."""
    return matrix.matrix_determinant(_node(input), name=name or "MatrixDeterminant")


def matrix_inverse(input, adjoint=False, name=None):  # noqa: A002
    """TF1's ``tf.matrix_inverse`` (of the transposes with ``adjoint``)."""
    x = _node(input)
    return matrix.matrix_inverse(ops.matrix_transpose(x) if adjoint else x,
                                 name=name or "MatrixInverse")


def matrix_solve(matrix_, rhs, adjoint=False, name=None):
    """TF1's ``tf.matrix_solve``: X with ``matrix @ X = rhs`` (``matrix^T`` with
    ``adjoint``)."""
    a = _node(matrix_)
    return matrix.matrix_solve(ops.matrix_transpose(a) if adjoint else a, _node(rhs, a.dtype),
                               name=name or "MatrixSolve")


def cholesky(input, name=None):  # noqa: A002
    """TF1's ``tf.cholesky``: the lower factor L of each matrix (``A = L L^T``; its lower
    triangle read, as TF's)."""
    return matrix.cholesky(_node(input), name=name or "Cholesky")


def self_adjoint_eig(tensor, name=None):
    """TF1's ``tf.self_adjoint_eig``: ``(e, v)``, the eigenvalues ascending and the
    eigenvectors as columns (each signed so its largest entry is positive; TF's signs are
    its solver's, so a vector may differ from TF's by its sign)."""
    x = _node(tensor)
    return matrix.eigh_values(x, name=name), matrix.eigh_vectors(x)


def self_adjoint_eigvals(tensor, name=None):
    """TF1's ``tf.self_adjoint_eigvals``: the eigenvalues, ascending."""
    return matrix.eigh_values(_node(tensor), name=name)


UniqueResult = collections.namedtuple("Unique", ["y", "idx"])


def unique(x, out_idx=int32, name=None):
    """TF1's ``tf.unique`` of a vector: ``(y, idx)``, its distinct values in order of first
    occurrence and each element's index into them (int32 by default)."""
    y, idx = selection.unique(_node(x))
    return UniqueResult(ops.identity(y, name=name or "Unique"), ops.cast(idx, dtype=out_idx))


def random_crop(value, size, seed=None, name=None):
    """TF1's ``tf.random_crop``: a block of shape ``size`` of ``value`` at a uniformly drawn
    offset (a new one each run, seeded as every kernelgraph random op)."""
    x = _node(value)
    shape = _shape(x, "tf.random_crop")
    size = [int(s) for s in size]
    if len(size) != len(shape) or any(s > d or s < 0 for s, d in zip(size, shape)):
        raise ValueError(f"tf.random_crop: need 0 <= size <= value's shape, got size {size} "
                         f"for shape {shape}")
    limit = np.array([d - s + 1 for d, s in zip(shape, size)], np.float64)
    u = ops.random.random_uniform((len(shape),), seed=seed, dtype=float64)
    offset = ops.cast(ops.floor(u * constant(limit, dtype=float64)), dtype=int64)
    out = x
    for d, s in enumerate(size):
        if s == shape[d]:
            continue
        rows = offset[d] + constant(np.arange(s), dtype=int64)
        out = ops.gather(out, rows, axis=d)
    return ops.identity(out, name=name or "random_crop")

