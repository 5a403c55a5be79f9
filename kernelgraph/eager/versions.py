"""Version counters, as PyTorch keeps them: every in-place write into a tensor's memory
bumps the ``_version`` of that tensor and of every view that shares the memory, and a
recorded node whose gradient rule reads a value that was written after the node was
recorded refuses to run ("one of the variables needed for gradient computation has been
modified by an inplace operation").

Nothing is stored per tensor or per node, so ops pay nothing for this: a write is stamped
with a number of the sequence that numbers recorded nodes (``Node.seq``), under the array
that owns the memory (NumPy collapses a view's ``.base`` to that owner, so a tensor, its
views and ``detach()``-ed aliases share one list of stamps). A node recorded at ``seq``
then sees a value as changed when a stamp of its memory is later than ``seq``. The list
goes when its array does.

>>> import numpy as np
>>> a = np.zeros(3)
>>> version(a[1:]), version(a)
(0, 0)
>>> stamp(a[1:], 7)
>>> version(a), written_after(a, 5, own=False)
(1, (1, 0))
"""

from __future__ import annotations

import weakref

# id(memory owner) -> [stamps (ascending), a reference that keeps the entry honest]
_STAMPS: dict[int, list] = {}
# The latest stamp of all: a backward whose nodes are all later than every write checks
# nothing (the SGD step's case). Read as ``versions.last_write`` (no call on backward's path).
last_write = -1


def owner(array):
    """The object that owns ``array``'s memory (itself, or its NumPy ``base``)."""
    base = getattr(array, "base", None)
    return array if base is None else base


def _forget(key):
    return lambda _ref: _STAMPS.pop(key, None)


def stamp(array, seq: int) -> None:
    """Record a write into ``array``'s memory at ``seq`` (which only ever grows)."""
    global last_write
    mem = owner(array)
    key = id(mem)
    entry = _STAMPS.get(key)
    if entry is None:
        try:
            ref = weakref.ref(mem, _forget(key))
        except TypeError:  # memory of an object without weak references (bytes): keep it
            ref = mem
        entry = _STAMPS[key] = [[], ref]
    entry[0].append(seq)
    last_write = seq


def version(array) -> int:
    """How many in-place writes went into ``array``'s memory (PyTorch's ``_version``)."""
    if not _STAMPS:
        return 0
    entry = _STAMPS.get(id(owner(array)))
    return 0 if entry is None else len(entry[0])


def written_after(array, seq: int, own: bool):
    """``(version now, version at seq)`` if ``array``'s memory was written after the node
    numbered ``seq`` was recorded, else None. ``own``: ``array`` is that node's output,
    which the node's own in-place write (stamped ``seq``) made."""
    entry = _STAMPS.get(id(owner(array)))
    if entry is None:
        return None
    stamps = entry[0]
    last = stamps[-1]
    if last < seq or (own and last == seq):
        return None
    before = sum(1 for s in stamps if s < seq or (own and s == seq))
    return len(stamps), before

