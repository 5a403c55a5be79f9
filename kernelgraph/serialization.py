"""``kg.serialization``: PyTorch's ``torch.serialization`` names around ``kg.save`` / ``kg.load``.

PyTorch's ``torch.load(..., weights_only=True)`` unpickles with an allow-list of classes,
which ``safe_globals`` / ``add_safe_globals`` extend. kernelgraph's checkpoints never hold
pickles (an ``.npz`` of arrays and a JSON marker, read with ``allow_pickle=False``), so the
list never decides what a load does: these functions keep it as PyTorch does (a program
reading ``get_safe_globals()`` sees what it added, and ``safe_globals`` restores the list
when its block ends), and ``kg.load`` loads the same arrays with or without it. Unlike
PyTorch's, the list starts empty: kernelgraph has no classes of its own to allow.

>>> import kernelgraph as kg
>>> class Config:
...     pass
>>> with kg.serialization.safe_globals([Config]):
...     kg.serialization.get_safe_globals() == [Config]
True
>>> kg.serialization.get_safe_globals()
[]
"""

from __future__ import annotations

import contextlib
import threading

from .checkpoint import load, save

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load",
           "safe_globals", "save"]

_lock = threading.Lock()
_allowed: list = []


def _entries(safe_globals) -> list:
    # torch iterates the argument: a class given alone is "'type' object is not iterable"
    return list(safe_globals)


def add_safe_globals(safe_globals) -> None:
    """Add classes and functions (or ``(obj, "module.Name")`` pairs) to the allow-list."""
    entries = _entries(safe_globals)
    with _lock:
        _allowed.extend(entries)


def get_safe_globals() -> list:
    """The allow-list (a copy): what ``add_safe_globals`` / ``safe_globals`` added."""
    with _lock:
        return list(_allowed)


def clear_safe_globals() -> None:
    """Empty the allow-list."""
    with _lock:
        _allowed.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Within the block, ``safe_globals`` are on the allow-list; afterwards the list is as
    it was (kernelgraph's loads never unpickle, so the list changes no load)."""
    entries = _entries(safe_globals)
    with _lock:
        saved = list(_allowed)
        _allowed.extend(entries)
    try:
        yield
    finally:
        with _lock:
            _allowed[:] = saved
