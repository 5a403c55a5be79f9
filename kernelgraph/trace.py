"""The engine's event bus: the widgets, timers and debuggers listen here.

Events: ``node_added`` (a node was created, with its source location), ``node_executed``
(a node ran, with its duration in seconds), ``gradient`` (the gradient that reached a node
during ``backward()`` or ``gradients()``, as ``grad``). With no listener attached, the
engine pays one check of the module-level flag :data:`active` per op and nothing more.

>>> import kernelgraph as kg
>>> seen = []
>>> with kg.trace.listening(lambda kind, **info: seen.append(kind)):
...     y = kg.tensor([1.0, 2.0]) * 3.0
>>> seen
['node_added', 'node_executed']
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

active = False  # read by the engine on every op; True while any listener is attached
_listeners: list[Callable] = []


def add_listener(fn: Callable) -> Callable:
    """Call ``fn(kind, **info)`` for every engine event until :func:`remove_listener`."""
    global active
    _listeners.append(fn)
    active = True
    return fn


def remove_listener(fn: Callable) -> None:
    global active
    _listeners.remove(fn)
    active = bool(_listeners)


@contextlib.contextmanager
def listening(fn: Callable):
    """Attach ``fn`` as a listener for the duration of a ``with`` block."""
    add_listener(fn)
    try:
        yield fn
    finally:
        remove_listener(fn)


def emit(kind: str, **info) -> None:
    for fn in tuple(_listeners):
        fn(kind, **info)
