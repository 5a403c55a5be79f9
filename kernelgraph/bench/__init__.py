"""Benchmarks: ``python -m kernelgraph.bench`` times kernelgraph against NumPy, PyTorch and
TensorFlow (compat.v1) in one run, prints a table and writes ``bench-results.json``.

- :mod:`.cases` — what is timed: the cases, the shared 100-op chain, the references that
  every framework's output is checked against before timing, and the targets;
- :mod:`.timing` — how: ``timeit`` on a statement, warm-up, best of several repeats;
- :mod:`.frameworks` — lazy imports of the other frameworks, and the machine info;
- :mod:`.runner` — the command line, the table and the JSON.

PyTorch and TensorFlow are optional: when one is missing its cells read "n/a".
Speed is measured here, never asserted by timed unit tests.
"""

from .cases import CASES, CHAIN, make_chain
from .runner import FULL, QUICK, Settings, format_table, main, run
from .timing import Timing, measure

__all__ = ["CASES", "CHAIN", "FULL", "QUICK", "Settings", "Timing", "format_table", "main",
           "make_chain", "measure", "run"]
