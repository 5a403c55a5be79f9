"""Loop nests compiled twice, threaded and serial, each call choosing by its amount of work
(:class:`ByWork`): the reductions', products' and convolutions' outer loops."""

from __future__ import annotations

import types

from numba import njit

# Work below this many multiply-adds is not worth waking numba's thread pool for.
PARALLEL_MIN_WORK = 1 << 18


class ByWork:
    """A loop nest compiled twice, with ``prange`` threads and without; a call passes how
    many elements of ``work`` it does first, and runs threaded only from ``threshold`` on.
    Below that, waking numba's thread pool costs more than it gains, and its threads,
    spinning between calls, fight BLAS's own threads for the cores (kernels/conv_gemm.py says
    how much that cost a CNN step). Each ``prange`` iteration writes its own part of the
    output in the same order either way, so the two versions compute the same bits."""

    def __init__(self, fn, threshold: int):
        self.threshold = threshold
        self.parallel = njit(cache=True, parallel=True)(fn)
        # A copy under its own name, so the two compiled versions get their own cache files.
        serial = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_serial",
                                    fn.__defaults__, fn.__closure__)
        serial.__qualname__ = fn.__qualname__ + "_serial"
        self.serial = njit(cache=True)(serial)

    def __call__(self, work: int, *args):
        (self.parallel if work >= self.threshold else self.serial)(*args)


def by_work(threshold: int):
    """Decorator: the loop nest as a :class:`ByWork` with that ``threshold``."""
    return lambda fn: ByWork(fn, threshold)
