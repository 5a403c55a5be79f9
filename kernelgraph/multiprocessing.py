"""``torch.multiprocessing``: Python's :mod:`multiprocessing` (``Process``, ``Queue``,
``Pool``, ``set_start_method`` ...), plus :func:`spawn`, which starts ``nprocs`` processes
running ``fn(i, *args)`` and reports a failure in any of them, as PyTorch's does.

PyTorch wraps multiprocessing to share tensors' memory between processes; kernelgraph's
tensors cross a process boundary as any Python object does (pickled by multiprocessing),
and :mod:`kernelgraph.distributed.process_group` exchanges arrays as raw bytes. The function
and arguments given to :func:`spawn` reach the children the way multiprocessing sends them
(with the ``'spawn'`` start method, pickled), as in PyTorch.

>>> import kernelgraph.multiprocessing as mp
>>> mp.get_start_method(allow_none=True) in (None, "fork", "spawn", "forkserver")
True
"""

from __future__ import annotations

import multiprocessing as _mp
import traceback
from multiprocessing import (  # noqa: F401 - torch.multiprocessing re-exports these
    Array,
    Barrier,
    Condition,
    Event,
    Lock,
    Manager,
    Pipe,
    Pool,
    Process,
    Queue,
    RLock,
    Semaphore,
    SimpleQueue,
    Value,
    active_children,
    cpu_count,
    current_process,
    get_all_start_methods,
    get_context,
    get_start_method,
    set_start_method,
)

__all__ = ["Array", "Barrier", "Condition", "Event", "Lock", "Manager", "Pipe", "Pool",
           "Process", "ProcessContext", "ProcessExitedException", "ProcessRaisedException",
           "Queue", "RLock", "Semaphore", "SimpleQueue", "Value", "active_children",
           "cpu_count", "current_process", "get_all_start_methods", "get_context",
           "get_start_method", "set_start_method", "spawn", "start_processes"]


class ProcessRaisedException(Exception):
    """A spawned process raised; the message holds its traceback."""

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.error_index, self.pid = error_index, error_pid


class ProcessExitedException(Exception):
    """A spawned process exited with a non-zero code (or a signal)."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int):
        super().__init__(msg)
        self.error_index, self.pid, self.exit_code = error_index, error_pid, exit_code


def _wrap(fn, i, args, errors):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:  # noqa: BLE001 - its traceback goes to the parent, as text
        errors.put(traceback.format_exc())
        raise SystemExit(1) from None


class ProcessContext:
    """The processes :func:`spawn` started; ``join()`` waits for them (see :func:`spawn`)."""

    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues

    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait for every process; True when all finished. A process that failed makes
        this terminate the others and raise ``ProcessRaisedException`` (with its
        traceback) or ``ProcessExitedException``."""
        for i, p in enumerate(self.processes):
            p.join(timeout)
            if p.exitcode not in (None, 0):
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                for other in self.processes:
                    other.join()
                queue = self.error_queues[i]
                if not queue.empty():
                    raise ProcessRaisedException(
                        f"\n\n-- Process {i} terminated with the following error:\n"
                        f"{queue.get()}", i, p.pid)
                raise ProcessExitedException(f"process {i} terminated with exit code "
                                             f"{p.exitcode}", i, p.pid, p.exitcode)
        return all(p.exitcode is not None for p in self.processes)


def start_processes(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn"):
    """:func:`spawn` with a choice of start method."""
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"nprocs must be a positive int, got {nprocs!r}")
    ctx = _mp.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, tuple(args), q), daemon=daemon)
        p.start()
        processes.append(p)
        queues.append(q)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    context.join()
    return None


def spawn(fn, args=(), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn"):
    """Run ``fn(i, *args)`` for ``i`` in ``range(nprocs)``, each in a new process; with
    ``join`` wait for all (raising if one failed), else return a :class:`ProcessContext`."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
