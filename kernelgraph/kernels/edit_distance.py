"""numba CPU kernel of ``edit_distance`` (kernelgraph/ops/edit_distance.py): the Levenshtein
distance of pairs of sequences of integer codes, one pair per output element."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def levenshtein_pairs(hyp, hyp_start, truth, truth_start, out):
    # Pair k: hyp[hyp_start[k]:hyp_start[k + 1]] against truth[truth_start[k]:...]; the
    # classic two-row dynamic programme (insertions, deletions, substitutions cost 1).
    for k in range(out.shape[0]):
        a0, a1 = hyp_start[k], hyp_start[k + 1]
        b0, b1 = truth_start[k], truth_start[k + 1]
        n = b1 - b0
        prev = np.arange(n + 1)
        cur = np.empty(n + 1, np.int64)
        for i in range(a1 - a0):
            cur[0] = i + 1
            for j in range(n):
                cost = 0 if hyp[a0 + i] == truth[b0 + j] else 1
                best = prev[j] + cost
                if prev[j + 1] + 1 < best:
                    best = prev[j + 1] + 1
                if cur[j] + 1 < best:
                    best = cur[j] + 1
                cur[j + 1] = best
            prev, cur = cur, prev
        out[k] = prev[n]
