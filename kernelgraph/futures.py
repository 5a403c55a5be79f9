"""``torch.futures``: :class:`Future`, a value that will be set later (by another thread),
with ``wait()``, ``then(callback)`` and :func:`wait_all` / :func:`collect_all`.

>>> f = Future()
>>> g = f.then(lambda fut: fut.value() * 2)
>>> f.set_result(21)
>>> g.wait(), wait_all([f, g])
(42, [21, 42])
"""

from __future__ import annotations

import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A result to come: ``set_result(v)`` (or ``set_exception(e)``) once; ``wait()`` blocks
    until then and returns it (or raises it); ``then(cb)`` is a Future of ``cb(self)``."""

    def __init__(self, *, devices=None):
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._value, self._error = None, None
        self._callbacks: list = []

    def done(self) -> bool:
        return self._done.is_set()

    def set_result(self, result) -> None:
        self._finish(result, None)

    def set_exception(self, result: BaseException) -> None:
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expects an exception, got {type(result).__name__}")
        self._finish(None, result)

    def _finish(self, value, error) -> None:
        with self._lock:
            if self._done.is_set():
                raise RuntimeError("Future can only be marked completed once")
            self._value, self._error = value, error
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def wait(self):
        """Block until the result is set; return it (raise the exception if one was set)."""
        self._done.wait()
        return self.value()

    def value(self):
        """The result (it must be set already)."""
        if not self._done.is_set():
            raise RuntimeError("Future.value() called before the result was set")
        if self._error is not None:
            raise self._error
        return self._value

    def add_done_callback(self, callback) -> None:
        """Call ``callback(self)`` once the result is set (at once if it is)."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback) -> Future:
        """A Future of ``callback(self)``, set when this one is."""
        out = Future()

        def run(fut):
            try:
                out.set_result(callback(fut))
            except Exception as e:  # noqa: BLE001 - handed to whoever waits on ``out``
                out.set_exception(e)
        self.add_done_callback(run)
        return out


def collect_all(futures) -> Future:
    """A Future of the list ``futures``, set when all of them are."""
    futures = list(futures)
    out, left = Future(), [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])

    def one_done(_):
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            out.set_result(futures)
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures) -> list:
    """Wait for every future; their values, in order (the first exception is raised)."""
    return [f.wait() for f in futures]
