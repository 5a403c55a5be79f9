"""CUDA forwards of the selection ops (kernelgraph/ops/selection.py): ``top_k`` (one thread
per row: the same insertion into a sorted list of k as the CPU kernel, so the same indices)
and ``unique`` (one thread per element finds its value's first occurrence and that
occurrence's rank among the first occurrences; the count comes back to the host, as the
number of distinct values is the output's size).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from . import core, launcher


@cuda.jit
def _top_k_rows(x, k, out):
    rows, n = x.shape
    start, step = cuda.grid(1), cuda.gridsize(1)
    for r in range(start, rows, step):
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


def top_k(x, k: int):
    """int64 indices of the k largest values along the last axis, largest first."""
    shape = tuple(x.shape)  # (the simulator's shapes take no negative index)
    n = shape[-1]
    rows = x.size // n if n else 0
    out = core.empty((rows, k), np.int64)
    if rows and k:
        blocks, threads = core.launch(rows)
        launcher.launch(_top_k_rows, blocks, threads, x.reshape(rows, n), k, out)
    return out.reshape(shape[:-1] + (k,))


@cuda.jit
def _first_occurrence(x, first):
    n = x.shape[0]
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, n, step):
        v = x[i]
        j = 0
        while j < i and not (x[j] == v or (v != v and x[j] != x[j])):
            j += 1
        first[i] = j


@cuda.jit
def _ranks(first, inverse, positions, count):
    n = first.shape[0]
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, n, step):
        f = first[i]
        rank = 0
        for m in range(f):
            if first[m] == m:
                rank += 1
        inverse[i] = rank
        if f == i:
            positions[rank] = i
        if i == n - 1:
            total = 0
            for m in range(n):
                if first[m] == m:
                    total += 1
            count[0] = total


def unique(x):
    """``(positions, inverse)`` of a 1-D device array (see the CPU kernel)."""
    n = x.shape[0]
    inverse = core.empty((n,), np.int64)
    if n == 0:
        return core.empty((0,), np.int64), inverse
    first = core.empty((n,), np.int64)
    positions = core.empty((n,), np.int64)
    count = core.empty((1,), np.int64)
    blocks, threads = core.launch(n)
    launcher.launch(_first_occurrence, blocks, threads, x, first)
    launcher.launch(_ranks, blocks, threads, first, inverse, positions, count)
    launcher.not_replayable("reads the number of distinct values back to the host")
    u = int(core.to_host(count)[0])
    return core.copy(positions[:u]), inverse
