"""The fuzz harness behind tests/test_fuzz.py: odd inputs, random programs, a NumPy oracle,
and a worker process that runs them, so that a crash is a failed test naming its case.

A *case* is plain data (picklable, no arrays): the program's inputs as recipes (dtype,
base shape, values, a view such as ``[::-1]`` or ``.T``, read-only or not, handed in as an
array, a nested list or a Python scalar) and 1-6 steps, each an op with its operands (earlier
values, new inputs, Python numbers) and attributes. :func:`run_case` runs a case in every
mode -- eager on kg.tensor inputs, eager on raw NumPy arrays, static with placeholders fed the
arrays or with constants, on the CPU and the CUDA device (numba's simulator without a GPU) --
and returns a list of *findings*, one line each; an empty list is a pass. The checks:

- ingestion: ``kg.tensor`` / ``kg.constant`` / a fed placeholder keep every value exactly (a
  kernelgraph dtype of the same kind) or refuse with an error naming the value's dtype;
- each eager step against the NumPy oracle (:func:`expect`), computed from the step's own
  eager inputs, so a finding names one op: the same values (exactly, or within rounding for
  transcendental and accumulating ops), shape and dtype; or, where the oracle refuses, an
  error of a documented type (TypeError, ValueError and kernelgraph's errors, IndexError)
  whose message is kernelgraph's own, never NumPy's or numba's;
- the dtype rules are PyTorch's, recorded in tests/recorded/fuzz.json (a PyTorch refusal
  with RuntimeError is a rule; NotImplementedError is a gap in PyTorch's kernels, where
  kernelgraph may compute or refuse);
- static mode returns the eager bits (NaN payloads aside), also where an input or a step is
  fed another value (which must win over what computes it, as in TF1); raw NumPy arrays, of
  any dtype kg.tensor takes, give the eager bits on kg.tensor inputs (an op converts them as
  kg.tensor does) or the same clear error; CUDA agrees with the oracle; gradients of
  ``sum(out * w)`` agree between eager (``backward()``, ``kg.autograd.grad`` for an
  intermediate) and ``kg.gradients``;
- with ``KG_FUZZ_WARNINGS=1``, a NumPy RuntimeWarning printed by a step, through
  kernelgraph's own warnings filter, is a finding too (PyTorch prints nothing for NaN or
  overflow).

The parent process never runs a kernel: :class:`Worker` (here) sends cases to a child
process (``python -m tests.fuzzing``) and reads back the findings, restarting it after a
crash or a hang, which becomes a finding too. The rest, one idea a module:

- tests/fuzz_inputs.py: the odd inputs (dtypes, layouts, sources): built, written as code,
  drawn;
- tests/fuzz_programs.py: the programs: drawn from the op families, one step called on
  kernelgraph values, a case written as a program to paste;
- tests/fuzz_oracle.py: what a step must give (NumPy, PyTorch's dtype table), and how results
  are compared;
- tests/fuzz_runner.py: one case run in every mode and on every device (in the worker).
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.fuzz_runner import run_case

# -- the worker process ----------------------------------------------------------------------
ROOT = Path(__file__).resolve().parent.parent  # the worker runs tests.fuzzing from here


def _send(stream, obj) -> None:
    data = pickle.dumps(obj)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream):
    head = stream.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(n))


def serve() -> None:
    """The worker's loop: read a case from stdin, write its findings to the real stdout
    (anything the engine prints goes to stderr)."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    stdin = sys.stdin.buffer
    while True:
        case = _receive(stdin)
        if case is None:
            return
        _send(out, run_case(case))


class WorkerDied(Exception):
    pass


class Worker:
    """A child process that runs cases; a crash or hang there fails the case, not pytest."""

    def __init__(self, timeout: float = 120.0):
        self.timeout = timeout
        self.proc = None
        self.log = None

    def start(self) -> None:
        """A fresh worker (its stderr kept in a temporary file, for a crash's report)."""
        self.log = tempfile.TemporaryFile()
        env = dict(os.environ, PYTHONFAULTHANDLER="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.fuzzing"], cwd=ROOT,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, env=env)

    def run(self, case: dict) -> list[str]:
        """The case's findings; a crash or timeout becomes the only finding (and the next
        case gets a fresh worker)."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        try:
            _send(self.proc.stdin, case)
            ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
            if not ready:
                self.stop()
                return [f"[worker] no answer within {self.timeout:.0f} s (a hang?)"]
            result = _receive(self.proc.stdout)
            if result is None:
                raise WorkerDied
            return result
        except (WorkerDied, BrokenPipeError):
            code = self.proc.wait()
            self.log.seek(0)
            tail = self.log.read()[-3000:].decode("utf-8", "replace")
            self.stop()
            return [f"[worker] the process died (exit code {code}) running this case; its "
                    f"last output:\n{tail}"]

    def stop(self) -> None:
        """End the worker (killed if it still runs) and close its pipes and log."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc.stdin.close()
            self.proc.stdout.close()
            self.proc = None
        if self.log is not None:
            self.log.close()
            self.log = None


if __name__ == "__main__":
    serve()
