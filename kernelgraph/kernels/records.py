"""Values a kernel derived from an input array, kept while that array lives, for eager
backward: max pooling's picks, a convolution's im2col matrix.

A gradient rule in eager mode receives the very arrays its forward read, and eager mode
refuses a backward through an input changed in place since (PyTorch's rule), so what the
forward derived from an input is still true of it then. A compiled plan may overwrite a
buffer between two runs without running the forward again, so only eager gradient rules
look records up; every op still computes whatever it needs itself.
"""

from __future__ import annotations

import weakref

import numpy as np

_RECORDS: dict[int, tuple] = {}


def record(x: np.ndarray, what: tuple, value):
    """Keep ``value`` under ``what`` (hashable) while ``x`` lives (a weak reference: it does
    not keep x alive), replacing what was kept under the same ``what``."""
    key = id(x)
    entry = _RECORDS.get(key)
    if entry is not None and entry[0]() is x:
        entry[1][what] = value
        return

    def forget(ref, key=key):
        if _RECORDS.get(key, (None,))[0] is ref:
            del _RECORDS[key]

    try:
        ref = weakref.ref(x, forget)
    except TypeError:  # an array type that takes no weak references: nothing kept
        return
    _RECORDS[key] = (ref, {what: value})


def recorded(x: np.ndarray, what: tuple):
    """What was last kept under ``what`` for this very array, or None."""
    entry = _RECORDS.get(id(x))
    if entry is None or entry[0]() is not x:
        return None
    return entry[1].get(what)
