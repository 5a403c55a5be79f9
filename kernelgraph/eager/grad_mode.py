"""Grad mode, per thread: :class:`no_grad`, :class:`enable_grad`,
:class:`set_grad_enabled`, :class:`inference_mode` and :func:`is_grad_enabled`, as context
managers and decorators (of functions, methods and generators) with PyTorch's semantics."""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading

import numpy as np


class _ThreadState(threading.local):
    """What one thread has switched on. Grad mode is per thread, as in PyTorch: a thread
    inside ``kg.no_grad()`` does not stop another thread's ops from recording, and a new
    thread starts with grad enabled. ``batching`` is set while this thread has a
    ``kg.autobatch()`` block open (see ``_deferred`` in :mod:`.dispatch`)."""

    grad_enabled = True  # class attributes: the values a new thread starts with
    batching = False
    inference = False


_local = _ThreadState()


# Grad mode lives in ``_local`` (per thread). As in PyTorch, a decorated function gets a fresh
# switch per call -- so a recursive call, or two threads in one function, each restore the
# mode they found -- and a decorated generator function runs under the mode at every resume,
# not only while the generator object is made.
class _GradMode(contextlib.ContextDecorator):
    mode = False

    def __enter__(self):
        self.prev = _local.grad_enabled
        _local.grad_enabled = self.mode
        return self

    def __exit__(self, *exc):
        _local.grad_enabled = self.prev
        return False

    def _recreate_cm(self):
        return type(self)()

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self._recreate_cm, func)
        return super().__call__(func)


def _wrap_generator(switch, func):
    @functools.wraps(func)
    def generator(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with switch():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with switch():
                        gen.close()
                    raise
                except BaseException as e:  # noqa: BLE001 - handed to the generator
                    with switch():
                        response = gen.throw(e)
                else:
                    with switch():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value

    return generator


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """``with kg.no_grad():`` computes without recording gradients, in this thread only.

    Also a decorator, with or without parentheses (``@kg.no_grad`` / ``@kg.no_grad()``).

    >>> import kernelgraph as kg
    >>> w = kg.tensor(2.0, requires_grad=True)
    >>> with kg.no_grad():
    ...     (w * 3.0).requires_grad
    False
    """

    mode = False

    def __new__(cls, func=None):
        self = super().__new__(cls)
        return self if func is None else self(func)  # @kg.no_grad, as PyTorch allows


class enable_grad(no_grad):  # noqa: N801 - PyTorch's name
    """Turn recording back on inside a ``no_grad`` block (this thread only; also a
    decorator, with or without parentheses)."""

    mode = True


class set_grad_enabled(_GradMode):  # noqa: N801 - PyTorch's name
    """Turn recording of the backward graph on or off for this thread.

    As in PyTorch it works as a call (``kg.set_grad_enabled(False)`` switches at once), as a
    ``with`` block (the previous mode comes back at its end) and as a decorator (the mode
    holds inside the function only). ``mode`` must be a bool.

    >>> import kernelgraph as kg
    >>> with kg.set_grad_enabled(False):
    ...     kg.is_grad_enabled()
    False
    >>> kg.is_grad_enabled()
    True
    """

    def __init__(self, mode: bool):
        if not isinstance(mode, bool | np.bool_):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be "
                            f"bool, not {type(mode).__name__}")
        self.prev = _local.grad_enabled
        self.mode = bool(mode)
        _local.grad_enabled = self.mode

    def __enter__(self):
        _local.grad_enabled = self.mode
        return self

    def _recreate_cm(self):
        return set_grad_enabled(self.mode)

    def __call__(self, func):
        _local.grad_enabled = self.prev  # decorating switches nothing outside the function
        return super().__call__(func)


class inference_mode(_GradMode):  # noqa: N801 - PyTorch's name
    """``with kg.inference_mode():`` computes without recording gradients, as ``no_grad``
    (kernelgraph has no separate inference tensors: results are ordinary tensors that do not
    require grad). ``inference_mode(False)`` changes nothing. Also a decorator, with or
    without parentheses.

    >>> import kernelgraph as kg
    >>> with kg.inference_mode():
    ...     kg.is_grad_enabled(), kg.is_inference_mode_enabled()
    (False, True)
    """

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode) and not isinstance(mode, bool):  # @kg.inference_mode
            self.enabled = True
            return self(mode)
        return self

    def __init__(self, mode: bool = True):
        if callable(mode) and not isinstance(mode, bool):
            mode = True
        self.enabled = bool(mode)

    def __enter__(self):
        self.prev = _local.grad_enabled
        self.prev_inference = _local.inference
        if self.enabled:
            _local.grad_enabled = False
            _local.inference = True
        return self

    def __exit__(self, *exc):
        _local.grad_enabled = self.prev
        _local.inference = self.prev_inference
        return False

    def _recreate_cm(self):
        return inference_mode(self.enabled)


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside ``kg.inference_mode()``."""
    return _local.inference


def is_grad_enabled() -> bool:
    """Whether ops on tensors that require grad record the backward graph in this thread
    (``False`` inside ``kg.no_grad()``; a new thread starts with ``True``)."""
    return _local.grad_enabled
