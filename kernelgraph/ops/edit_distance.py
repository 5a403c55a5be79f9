"""``edit_distance``: the Levenshtein distance between the sequences of two sparse tensors
(TF's ``tf.edit_distance``), each given as its three parts ``(indices [N, R], values [N],
dense_shape [R])``: the last axis orders a sequence, the others say which one. The result
has the larger of the two dense shapes less its last axis, float32; with ``normalize`` each
distance is divided by the truth's length (a truth of length 0: ``inf``, or 0 where the
hypothesis is empty too, as TF's). Values may be numbers or strings.

A host op, as TF's own kernel is CPU-only: sparse parts are small and their sizes are read
while it runs; no gradient.

>>> import numpy as np
>>> h = (np.array([[0, 0], [0, 1], [1, 0]]), np.array([1, 2, 5]), np.array([2, 2]))
>>> t = (np.array([[0, 0], [0, 1], [1, 0]]), np.array([1, 3, 5]), np.array([2, 2]))
>>> edit_distance(*h, *t, normalize=False).tolist()
[1.0, 0.0]
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError
from ..kernels.edit_distance import levenshtein_pairs
from .registry import define


def _infer(shapes_, dtypes, attrs):
    for k in (0, 2, 3, 5):
        if D.as_dtype(dtypes[k]).kind not in "iu":
            raise TypeError(f"edit_distance: indices and dense shapes must be integers, got "
                            f"{D.as_dtype(dtypes[k]).name}")
    hi, ti = shapes_[0], shapes_[3]
    rank = None
    for s in (hi, ti):
        if s is not None and (len(s) != 2):
            raise ShapeError(f"edit_distance: indices must be a matrix [N, rank], got {s}")
        if s is not None and s[1] is not None:
            if rank is not None and rank != s[1]:
                raise ShapeError("edit_distance: hypothesis and truth must have one rank")
            rank = s[1]
    return (None if rank is None else (None,) * (rank - 1)), D.float32


def _sequences(indices, values, keys):
    """The codes of each sequence, ordered by its last index, and where each one starts."""
    indices = np.asarray(indices, np.int64).reshape(-1, max(np.shape(indices)[-1], 1))
    order = np.lexsort(indices.T[::-1]) if len(indices) else np.zeros(0, np.int64)
    flat = np.ravel_multi_index(indices[order, :-1].T, keys) if indices.shape[1] > 1 else \
        np.zeros(len(order), np.int64)
    counts = np.bincount(flat, minlength=int(np.prod(keys)))
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return np.asarray(values)[order], starts


def _forward(h_indices, h_values, h_shape, t_indices, t_values, t_shape, normalize=True):
    _infer([h_indices.shape, h_values.shape, h_shape.shape, t_indices.shape, t_values.shape,
            t_shape.shape], [h_indices.dtype, h_values.dtype, h_shape.dtype, t_indices.dtype,
                             t_values.dtype, t_shape.dtype], {})
    if len(h_shape) != len(t_shape):
        raise ValueError(f"edit_distance: hypothesis and truth have ranks {len(h_shape)} and "
                         f"{len(t_shape)}")
    batch = tuple(int(max(a, b)) for a, b in zip(h_shape[:-1], t_shape[:-1]))
    hv, hs = _sequences(h_indices, h_values, batch)
    tv, ts = _sequences(t_indices, t_values, batch)
    _, codes = np.unique(np.concatenate([hv.astype(object), tv.astype(object)]) if
                         hv.dtype != tv.dtype or hv.dtype.kind in "OSU" else
                         np.concatenate([hv, tv]), return_inverse=True)
    codes = codes.reshape(-1).astype(np.int64)
    n = int(np.prod(batch))
    dist = np.empty(n, np.int64)
    levenshtein_pairs(codes[:len(hv)], hs, codes[len(hv):], ts, dist)
    out = dist.astype(np.float64)
    if normalize:
        lengths = np.diff(ts).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(lengths > 0, out / np.where(lengths > 0, lengths, 1.0),
                           np.where(out > 0, np.inf, 0.0))
    return out.astype(np.float32).reshape(batch)


def _reference(h_indices, h_values, h_shape, t_indices, t_values, t_shape, normalize=True):
    """The oracle: plain Python dictionaries of sequences and the textbook recurrence."""
    batch = tuple(int(max(a, b)) for a, b in zip(h_shape[:-1], t_shape[:-1]))

    def seqs(indices, values):
        found: dict = {}
        for idx, v in sorted(zip(map(tuple, np.asarray(indices).tolist()), list(values))):
            found.setdefault(idx[:-1], []).append(v)
        return found

    hyp, truth = seqs(h_indices, h_values), seqs(t_indices, t_values)
    out = np.zeros(batch, np.float64)
    for b in np.ndindex(*batch):
        a, t = hyp.get(b, []), truth.get(b, [])
        row = list(range(len(t) + 1))
        for i, x in enumerate(a):
            new = [i + 1]
            for j, y in enumerate(t):
                new.append(min(row[j] + (x != y), row[j + 1] + 1, new[j] + 1))
            row = new
        d = float(row[-1])
        out[b] = d if not normalize else (d / len(t) if t else (np.inf if d else 0.0))
    return out.astype(np.float32)


edit_distance = define(
    "edit_distance", _forward, _infer, None, traits=("host_only",),
    reference=_reference, attr_names=("normalize",), inputs=6,
    doc="Levenshtein distances between the sequences of two sparse tensors (each as "
        "indices, values, dense_shape), optionally divided by the truth's lengths.")
