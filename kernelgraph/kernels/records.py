"""Values a kernel derived from an input array, kept while that array lives, for eager
backward: max pooling's picks, a convolution's im2col matrix.

A gradient rule in eager mode receives the very arrays its forward read, and eager mode
refuses a backward through an input changed in place since (PyTorch's rule), so what the
forward derived from an input is still true of it then: eager gradient rules look up
:func:`recorded`. A compiled plan may overwrite a buffer between two runs without running
the forward again, but within one run it overwrites an array only after its last reader
(kernelgraph/static/memory.py): a static backward op looks up
:func:`recorded_in_this_run`, which answers only what the same run recorded. Either way the
bits are those the op would compute itself.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

_RECORDS: dict[int, tuple] = {}
_RUN = threading.local()  # .token: the compiled run now computing in this thread, or None


class run_scope:
    """``with run_scope():`` around one run of a compiled plan: what kernels record in it
    is answered by :func:`recorded_in_this_run` until it ends (runs nest, as a py_func
    calling Session.run does)."""

    __slots__ = ("outer",)

    def __enter__(self):
        self.outer = getattr(_RUN, "token", None)
        _RUN.token = self

    def __exit__(self, *exc):
        _RUN.token = self.outer


def record(x: np.ndarray, what: tuple, value):
    """Keep ``value`` under ``what`` (hashable) while ``x`` lives (a weak reference: it does
    not keep x alive), replacing what was kept under the same ``what``."""
    key = id(x)
    entry = _RECORDS.get(key)
    value = (getattr(_RUN, "token", None), value)
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
    return entry[1].get(what, (None, None))[1]


def recorded_in_this_run(x: np.ndarray, what: tuple):
    """:func:`recorded`, when the compiled run computing in this thread recorded it; else
    None (in eager mode, and for what an earlier run recorded)."""
    token = getattr(_RUN, "token", None)
    entry = _RECORDS.get(id(x))
    if token is None or entry is None or entry[0]() is not x:
        return None
    stamp, value = entry[1].get(what, (None, None))
    return value if stamp is token else None
