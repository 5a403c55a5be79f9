"""numba CPU kernels of the selection ops (kernelgraph/ops/selection.py): the ``k`` largest
values of each row (``top_k``), and the first occurrences of a vector's distinct values with
each element's position among them (``unique``).

Both work on C-contiguous 1-D / 2-D arrays their op has checked; ties keep the earlier
element first, as TF's ``tf.nn.top_k`` and PyTorch's ``torch.topk`` (sorted) do.
"""

from __future__ import annotations

import numpy as np
from numba import njit

ndarray = np.ndarray


@njit(cache=True)
def top_k_rows(x, k, out):
    # out[r] = the indices of the k largest of row r, largest first, an earlier index first
    # among equal values: an insertion into a sorted list of k (n * k steps, k small). NaN
    # counts as larger than every number (TF's and NumPy's sort order).
    rows, n = x.shape
    for r in range(rows):
        filled = 0
        for j in range(n):
            v = x[r, j]
            pos = filled
            while pos > 0:
                w = x[r, out[r, pos - 1]]
                if v > w or (v != v and w == w):
                    pos -= 1
                else:
                    break
            if pos >= k:
                continue
            last = filled if filled < k else k - 1
            for m in range(last, pos, -1):
                out[r, m] = out[r, m - 1]
            out[r, pos] = j
            if filled < k:
                filled += 1


def top_k(x: ndarray, k: int) -> ndarray:
    """int64 indices of the ``k`` largest values along the last axis of ``x`` (any rank,
    0 <= k <= its size), largest first."""
    n = x.shape[-1]
    rows = np.ascontiguousarray(x).reshape(-1, n) if x.size else np.zeros((0, n), x.dtype)
    out = np.zeros((rows.shape[0], k), np.int64)
    if k:
        top_k_rows(rows, k, out)
    return out.reshape(x.shape[:-1] + (k,))


@njit(cache=True)
def unique_positions(x, order, inverse):
    # order: a stable argsort of x, so each run of equal values starts at its first
    # occurrence. inverse[i] = the rank of x[i]'s first occurrence among all first
    # occurrences (first-occurrence order); returns the first occurrences' positions.
    n = x.shape[0]
    first = np.empty(n, np.int64)
    start = 0
    while start < n:
        stop = start + 1
        v = x[order[start]]
        while stop < n and (x[order[stop]] == v or (v != v and x[order[stop]] != x[order[stop]])):
            stop += 1
        for m in range(start, stop):
            first[order[m]] = order[start]
        start = stop
    rank = np.empty(n, np.int64)
    count = 0
    for i in range(n):
        if first[i] == i:
            rank[i] = count
            count += 1
    positions = np.empty(count, np.int64)
    for i in range(n):
        inverse[i] = rank[first[i]]
        if first[i] == i:
            positions[rank[i]] = i
    return positions


def unique(x: ndarray, sorted: bool = False) -> tuple[ndarray, ndarray]:  # noqa: A002
    """``(positions, inverse)`` of a 1-D ``x``: the positions of its distinct values' first
    occurrences, in order of occurrence (of value if ``sorted``), and for each element the
    index of its value among them."""
    x = np.ascontiguousarray(x)
    inverse = np.empty(x.shape[0], np.int64)
    order = np.argsort(x, kind="stable").astype(np.int64)
    positions = unique_positions(x, order, inverse)
    if sorted:  # the distinct values by value: the order's runs, in turn
        by_value = np.argsort(x[positions], kind="stable")
        rank = np.empty_like(by_value)
        rank[by_value] = np.arange(by_value.size)
        return positions[by_value], rank[inverse]
    return positions, inverse
