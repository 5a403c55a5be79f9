"""``running_sum``: a chain of additions ``((start + t1) + t2) + ...`` as ONE node -- how
``kg.autobatch`` runs the running total of per-sample code (``loss = loss + term`` in a loop
over samples), whose additions cannot be batched: each needs the one before it.

Not a public op (it is not in the registry): autobatching builds it from ``add`` calls that
it has checked (same shapes and dtype, no broadcasting). Its output holds every partial sum,
stacked: ``out[k] = start + terms[0] + ... + terms[k]``, added one after the other as the
chain of ``add`` calls adds them (NumPy's ``add.accumulate``), so with the same bits.

>>> import numpy as np
>>> running_sum.forward(np.float32(1.5), np.array([0.25, 1.0, -2.0], np.float32)).tolist()
[1.75, 2.75, 0.75]
"""

from __future__ import annotations

import numpy as np
from numpy import ndarray

from .join import concat
from .reduce import sum as reduce_sum
from .registry import Op
from .shape import reshape


def _forward(start, terms):
    start = np.asarray(start)
    both = np.concatenate([start.reshape(1, *start.shape).astype(terms.dtype), terms])
    return np.add.accumulate(both, axis=0, dtype=terms.dtype)[1:]


def _infer(shapes_, dtypes, attrs):
    return shapes_[1], dtypes[1]


def _grad(g, out, needs, attrs, start, terms):
    """Term k is in every partial sum from k on: its gradient is the sum of theirs (a
    cumulative sum from the end); the start is in all of them."""
    if type(g) is ndarray:
        tails = np.ascontiguousarray(np.add.accumulate(g[::-1], axis=0, dtype=g.dtype)[::-1])
        return (np.array(tails[0]) if needs[0] else None), (tails if needs[1] else None)
    rows = [reduce_sum(g[k:], axis=0) for k in range(g.shape[0])]  # a differentiable backward
    tails = concat([reshape(r, shape=(1, *r.shape)) for r in rows], axis=0)
    return (rows[0] if needs[0] else None), (tails if needs[1] else None)


running_sum = Op(
    "running_sum", _forward, _infer, _grad, inputs=2,
    doc="Every partial sum of start + terms[0] + terms[1] + ..., added in order, stacked "
        "(kg.autobatch's chains of additions).", saves=())
