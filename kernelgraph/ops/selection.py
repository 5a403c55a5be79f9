"""Selection: the ``k`` largest values of each row, and a vector's distinct values.

- ``top_k(x, k, sorted=True)`` -> ``(values, indices)`` over the last axis: the ``k``
  largest values, largest first, an earlier element first among equal values (TF's
  ``tf.nn.top_k`` and PyTorch's ``torch.topk(largest=True, sorted=True)``); the indices are
  int64. The card ``top_k_indices`` finds the indices (kernels/selection.py, one row at a
  time); the values are ``x`` at them, picked with ops, so their gradient goes to the
  picked elements alone.
- ``unique(x)`` -> ``(values, inverse)`` of a 1-D ``x``: its distinct values in order of
  first occurrence (TF's ``tf.unique``; ``sorted=True`` sorts them ascending, as PyTorch's
  ``torch.unique``) and, for each element, the index of its value in ``values`` (int64). The
  cards ``unique_positions`` (where each distinct value first occurs; its size is known only
  when it runs) and ``unique_inverse`` share one kernel.

>>> import numpy as np
>>> values, indices = top_k(np.array([[1.0, 5.0, 3.0, 5.0]]), 2)
>>> values.tolist(), indices.tolist()
([[5.0, 5.0]], [[1, 3]])
>>> values, inverse = unique(np.array([4, 1, 4, 7]))
>>> values.tolist(), inverse.tolist()
([4, 1, 7], [0, 1, 0, 2])
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError, shown
from ..kernels import selection as K
from .elementwise import equal, where
from .indexing import gather, getitem, normalize_index
from .reduce import sum as _sum
from .registry import define


def _check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
        raise ValueError(f"top_k: k must be a non-negative int, got {shown(k)}")
    return int(k)


def _top_k_infer(shapes_, dtypes, attrs):
    s, k = shapes_[0], _check_k(attrs["k"])
    dt = D.as_dtype(dtypes[0])
    if dt == D.bool_:
        raise TypeError("top_k: x must be a number type, got bool")
    if s is None:
        return None, D.int64
    if len(s) == 0:
        raise ShapeError("top_k: x must have at least one axis, got a scalar")
    if s[-1] is not None and s[-1] < k:
        raise ShapeError(f"top_k: input must have at least k={k} columns, got shape "
                         f"{tuple(s)}")
    return tuple(s[:-1]) + (k,), D.int64


def _top_k_forward(x, k):
    _top_k_infer([x.shape], [x.dtype], {"k": k})
    return K.top_k(x, k)


def _top_k_reference(x, k):
    order = np.argsort(-np.asarray(x, np.float64), axis=-1, kind="stable")
    return order[..., :k].astype(np.int64)


def _top_k_cuda(kernels):
    def forward(x, k):
        _top_k_infer([tuple(x.shape)], [x.dtype], {"k": k})
        return kernels.selection.top_k(x, k)
    return forward


top_k_indices = define(
    "top_k_indices", _top_k_forward, _top_k_infer, None, traits=("fresh",),
    reference=_top_k_reference, cuda=_top_k_cuda, attr_names=("k",), inputs=1,
    doc="int64 indices of the k largest values along the last axis, largest first (an "
        "earlier index first among equal values).")


def top_k(x, k: int = 1, sorted: bool = True):  # noqa: A002 - TF's and PyTorch's name
    """``(values, indices)``: the ``k`` largest values along the last axis, largest first,
    and their int64 indices (``sorted=False`` is accepted: sorted is one of the orders it
    allows)."""
    indices = top_k_indices(x, k=_check_k(k))
    n = tuple(x.shape)[-1] if x.shape is not None else None
    if n is None:
        raise ShapeError("top_k: the size of the last axis must be known")
    columns = np.arange(n, dtype=np.int64)
    picked = equal(getitem(indices, index=normalize_index((Ellipsis, None))), columns)
    rows = getitem(x, index=normalize_index((Ellipsis, None, slice(None))))
    values = _sum(where(picked, rows, np.zeros((), np.dtype(x.dtype))), axis=-1)
    return values, indices


# -- unique ----------------------------------------------------------------------------------
def _unique_infer(which):
    def infer(shapes_, dtypes, attrs):
        s = shapes_[0]
        if s is not None and len(s) != 1:
            raise ShapeError(f"unique: x must be a vector, got shape {tuple(s)}")
        return ((None,) if which == "positions" else (None if s is None else tuple(s))), D.int64
    return infer


def _unique_forward(which):
    def forward(x, sorted=False):  # noqa: A002
        _unique_infer(which)([x.shape], [x.dtype], {})
        return K.unique(x, sorted)[0 if which == "positions" else 1]
    return forward


def _unique_reference(which):
    def reference(x, sorted=False):  # noqa: A002
        _, first, inverse = np.unique(x, return_index=True, return_inverse=True)
        if sorted:  # np.unique's own order: ascending
            return (first if which == "positions" else inverse.reshape(-1)).astype(np.int64)
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return (first[order] if which == "positions" else rank[inverse.reshape(-1)]).astype(
            np.int64)
    return reference


def _unique_cuda(which):
    def build(k):
        def forward(x, sorted=False):  # noqa: A002
            _unique_infer(which)([x.shape], [x.dtype], {})
            if sorted:  # no device sort here: the vector goes to the host and back
                k.launcher.not_replayable("sorts the distinct values on the host")
                return k.core.to_device(K.unique(k.core.to_host(x), True)[
                    0 if which == "positions" else 1])
            return k.selection.unique(x)[0 if which == "positions" else 1]
        return forward
    return build


unique_positions = define(
    "unique_positions", _unique_forward("positions"), _unique_infer("positions"), None,
    reference=_unique_reference("positions"),
    cuda=_unique_cuda("positions"), inputs=1, attr_names=("sorted",),
    doc="int64 positions of the first occurrences of a vector's distinct values, in order "
        "of occurrence (of value with sorted=True).")
unique_inverse = define(
    "unique_inverse", _unique_forward("inverse"), _unique_infer("inverse"), None,
    traits=("fresh",), reference=_unique_reference("inverse"), cuda=_unique_cuda("inverse"),
    inputs=1, attr_names=("sorted",),
    doc="For each element of a vector, the index of its value among the distinct values "
        "(in order of first occurrence, or ascending with sorted=True).")


def unique(x, sorted: bool = False):  # noqa: A002 - PyTorch's name
    """``(values, inverse)``: the distinct values of the vector ``x`` in order of first
    occurrence (ascending with ``sorted=True``), and each element's index into them."""
    positions = unique_positions(x, sorted=bool(sorted))
    inverse = unique_inverse(x, sorted=bool(sorted))
    return gather(x, positions, axis=0), inverse
