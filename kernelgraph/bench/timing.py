"""How one benchmark cell is timed: ``timeit`` on a statement string, best of several repeats.

The statement runs inside ``timeit``'s generated loop (no extra Python call per iteration),
so ``"a + b"`` measures ``a + b`` and nothing else. Each measurement

1. warms up: calibration runs the statement until one batch of ``number`` iterations takes
   at least ``min_time`` seconds (or, when ``number`` is fixed, one full batch is run and
   thrown away), so lazy initialisation, compiled loops and plan caches are already built;
2. times ``repeat`` batches of ``number`` iterations;
3. reports the **best** batch (the least disturbed by the rest of the machine, as the
   ``timeit`` documentation recommends) and also keeps the median and every batch.

The garbage collector stays enabled while timing (``timeit`` turns it off by default):
frameworks that allocate Python objects per op pay for collecting them in real use, and the
comparison should show it. ``gc=False`` restores ``timeit``'s behaviour.
"""

from __future__ import annotations

import gc as _gc
import math
import statistics
import timeit
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    """Microseconds per call (divided by ``per`` when one call does ``per`` units of work)."""

    best_us: float
    median_us: float
    runs_us: tuple[float, ...]
    number: int
    repeat: int

    def as_json(self) -> dict:
        return {"us": self.best_us, "median_us": self.median_us, "runs_us": list(self.runs_us),
                "number": self.number, "repeat": self.repeat}


def calibrate(timer: timeit.Timer, min_time: float) -> int:
    """The number of iterations whose batch takes at least ``min_time`` seconds."""
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= min_time:
            return number
        if elapsed <= 0.0:
            number *= 10
        else:  # aim 10% past the goal, but grow at least a little and at most tenfold
            number = max(number + 1, min(number * 10, math.ceil(number * min_time / elapsed
                                                                * 1.1)))


def measure(stmt: str, namespace: dict, *, repeat: int = 7, min_time: float = 0.2,
            number: int | None = None, per: int = 1, gc: bool = True) -> Timing:
    """Time ``stmt`` (run with ``namespace`` as its globals); see the module docstring.

    >>> t = measure("x + 1", {"x": 1}, repeat=3, min_time=0.001)
    >>> t.best_us > 0 and t.best_us <= t.median_us
    True
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    globals_ = dict(namespace)
    globals_["_gc_"] = _gc
    timer = timeit.Timer(stmt, setup="_gc_.enable()" if gc else "pass", globals=globals_)
    if number is None:
        number = calibrate(timer, min_time)
    else:
        if number < 1:
            raise ValueError(f"number must be at least 1, got {number}")
        timer.timeit(number)  # warm-up batch, thrown away
    scale = 1e6 / (number * per)
    runs = tuple(t * scale for t in timer.repeat(repeat, number))
    return Timing(min(runs), statistics.median(runs), runs, number, repeat)
