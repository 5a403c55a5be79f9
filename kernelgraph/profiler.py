"""``torch.profiler`` / ``torch.autograd.profiler``: how long each op took, measured.

While a :class:`profile` block runs, it listens to the engine's trace events
(:mod:`kernelgraph.trace`): every op that runs reports its own measured duration (eager ops,
and the nodes of a static plan run by ``Session.run``). :class:`record_function` names a
range of your code (``"model_inference"``) and measures its wall time; ops run inside it
count towards its total. ``key_averages().table()`` prints PyTorch's table: name, self time
and total time (with their shares), average, and number of calls.

The names are kernelgraph's op names (``matmul``, ``add``, ``relu``), where PyTorch prints
``aten::addmm``; the times are kernelgraph's own, measured on this run. Only the CPU side is
timed (``ProfilerActivity.CUDA`` adds nothing: kernelgraph times a GPU op as the host waits
for it only under ``kg.cuda.synchronize``). Watching costs a little per op; nothing when no
profiler is active.

>>> import kernelgraph as kg
>>> with profile() as prof:
...     with record_function("model_inference"):
...         y = kg.ones(2, 2) @ kg.ones(2, 2)
>>> [e.key for e in prof.key_averages()][:2]
['model_inference', 'matmul']
>>> prof.key_averages()[1].count
1
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import socket
import sys
import tempfile
import time

from . import autograd, ops, trace

__all__ = ["FunctionEventAvg", "ProfilerActivity", "profile", "record_function",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    """What to time: ``CPU`` (host time, what kernelgraph measures) or ``CUDA``."""
    CPU = 0
    CUDA = 1


_active: list = []  # the profiles now recording, innermost last


class _Event:
    __slots__ = ("name", "seconds", "end", "child_seconds", "shapes")

    def __init__(self, name, seconds, end, shapes=()):
        self.name, self.seconds, self.end = name, seconds, end
        self.child_seconds, self.shapes = 0.0, shapes


class FunctionEventAvg:
    """One row of :meth:`profile.key_averages`: every event with the same name (and input
    shapes, when grouped by them). Times in microseconds, as PyTorch's."""

    def __init__(self, key: str, input_shapes=()):
        self.key, self.input_shapes = key, [list(s) for s in input_shapes]
        self.count, self.cpu_time_total, self.self_cpu_time_total = 0, 0.0, 0.0

    def add(self, event: _Event) -> None:
        self.count += 1
        self.cpu_time_total += event.seconds * 1e6
        self.self_cpu_time_total += (event.seconds - event.child_seconds) * 1e6

    @property
    def cpu_time(self) -> float:
        """The average total time of one call, in microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_fmt(self.self_cpu_time_total)}"
                f" cpu_time={_fmt(self.cpu_time)} count={self.count}>")


def _fmt(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class _Averages(list):
    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs) -> str:
        """PyTorch's table of the rows, sorted by ``sort_by`` (``'cpu_time_total'``,
        ``'self_cpu_time_total'``, ``'cpu_time'``, ``'count'``; any ``cuda_*`` key sorts by
        the CPU time), at most ``row_limit`` rows."""
        rows = list(self)
        if sort_by is not None:
            key = {"cpu_time_total": "cpu_time_total", "self_cpu_time_total":
                   "self_cpu_time_total", "cpu_time": "cpu_time", "count": "count",
                   "calls": "count"}.get(sort_by.replace("cuda", "cpu").replace("device", "cpu"))
            if key is None:
                raise ValueError(f"sort_by {sort_by!r}: expected one of 'cpu_time_total', "
                                 f"'self_cpu_time_total', 'cpu_time', 'count'")
            rows.sort(key=lambda r: getattr(r, key), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        total = sum(r.self_cpu_time_total for r in self) or 1.0
        shapes = any(r.input_shapes for r in rows)
        heads = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                 "# of Calls"] + (["Input Shapes"] if shapes else [])
        body = [[r.key, f"{100 * r.self_cpu_time_total / total:.2f}%",
                 _fmt(r.self_cpu_time_total), f"{100 * r.cpu_time_total / total:.2f}%",
                 _fmt(r.cpu_time_total), _fmt(r.cpu_time), str(r.count)]
                + ([str(r.input_shapes)] if shapes else []) for r in rows]
        widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h)
                  for i, h in enumerate(heads)]
        line = "  ".join("-" * w for w in widths)

        def fmt(cells):
            return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        out = [line, fmt(heads), line, *(fmt(b) for b in body), line,
               f"Self CPU time total: {_fmt(sum(r.self_cpu_time_total for r in self))}", ""]
        return "\n".join(out)


class profile:  # noqa: N801 - PyTorch's name
    """``with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:``
    records every op run in the block (see the module's docstring). Also
    ``torch.autograd.profiler.profile(enabled=True, use_cuda=False, record_shapes=False)``."""

    def __init__(self, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, enabled: bool = True, use_cuda: bool = False,
                 **kwargs):
        if schedule is not None:
            raise ValueError("kernelgraph's profiler records the whole block; schedule= is "
                             "not supported (leave it out)")
        self.enabled, self.record_shapes = enabled, record_shapes
        self.on_trace_ready = on_trace_ready
        self.events: list[_Event] = []
        self._ranges: list[_Event] = []  # the record_function ranges open now

    def _listen(self, kind, node=None, seconds=None, **info) -> None:
        if kind != "node_executed" or seconds is None:
            return
        shapes = ()
        if self.record_shapes:
            shapes = tuple(tuple(getattr(x, "shape", ())) for x in getattr(node, "inputs", ()))
        self.events.append(_Event(node.op.name, seconds, time.perf_counter(), shapes))
        if self._ranges:  # an op inside a range is part of its total, not of its self time
            self._ranges[-1].child_seconds += seconds

    def __enter__(self):
        if self.enabled:
            trace.add_listener(self._listen)
            _active.append(self)
        return self

    def __exit__(self, *exc):
        if self.enabled and self in _active:
            _active.remove(self)
            trace.remove_listener(self._listen)
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        return False

    def start(self):
        return self.__enter__()

    def stop(self):
        self.__exit__(None, None, None)

    def step(self) -> None:
        """Mark a training step (without a schedule, as in PyTorch, nothing to do)."""

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0):
        """One :class:`FunctionEventAvg` per name (and input shapes), in order of first
        appearance."""
        rows: dict = {}
        for e in sorted(self.events, key=lambda e: e.end - e.seconds):
            key = (e.name, e.shapes) if group_by_input_shape else e.name
            if key not in rows:
                rows[key] = FunctionEventAvg(e.name, e.shapes if group_by_input_shape else ())
            rows[key].add(e)
        return _Averages(rows.values())

    def table(self, sort_by=None, row_limit: int = 100, **kwargs) -> str:
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto), atomically."""
        start = min((e.end - e.seconds for e in self.events), default=0.0)
        trace_events = [{"name": e.name, "ph": "X", "cat": "cpu_op", "pid": os.getpid(),
                         "tid": 0, "ts": (e.end - e.seconds - start) * 1e6,
                         "dur": e.seconds * 1e6} for e in self.events]
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"traceEvents": trace_events}, f)
        os.replace(tmp, path)


class record_function(contextlib.ContextDecorator):  # noqa: N801 - PyTorch's name
    """``with record_function("name"):`` (or ``@record_function("name")`` on a function)
    times the block as one event named ``name``."""

    def _recreate_cm(self):
        return record_function(self.name)  # each decorated call times its own range

    def __init__(self, name: str, args=None):
        if not isinstance(name, str):
            raise TypeError(f"record_function expects a name (str), got {type(name).__name__}")
        self.name = name
        self._open: list = []

    def __enter__(self):
        self._start = time.perf_counter()
        for p in _active:
            event = _Event(self.name, 0.0, 0.0)
            p._ranges.append(event)
            self._open.append((p, event))
        return self

    def __exit__(self, *exc):
        end = time.perf_counter()
        for p, event in self._open:
            event.seconds, event.end = end - self._start, end
            if event in p._ranges:
                p._ranges.remove(event)
            if p._ranges:  # a nested range is part of its parent's total
                p._ranges[-1].child_seconds += event.seconds
            p.events.append(event)
        self._open = []
        return False


def _record_function_enter(name: str, args=None) -> record_function:
    """``torch.ops.profiler._record_function_enter(name)``: opens the range ``name`` (what
    ``with record_function(name):`` does on entry) and returns its handle for
    :func:`_record_function_exit`. PyTorch's handle is a tensor wrapping the range; here it
    is the :class:`record_function` itself."""
    handle = record_function(name, args)
    handle.__enter__()
    return handle


def _record_function_exit(handle: record_function) -> None:
    """``torch.ops.profiler._record_function_exit(handle)``: closes the range that
    :func:`_record_function_enter` opened, which the profiles recording now then hold."""
    if not isinstance(handle, record_function):
        raise TypeError("_record_function_exit expects the handle _record_function_enter "
                        f"returned, got {type(handle).__name__}")
    handle.__exit__(None, None, None)


class _ProfilerOps:
    """``torch.ops.profiler``: the two operators ``record_function`` is built on in PyTorch,
    which some programs call directly."""

    _record_function_enter = staticmethod(_record_function_enter)
    _record_function_exit = staticmethod(_record_function_exit)


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False):
    """An ``on_trace_ready`` that writes the profile as a Chrome trace into ``dir_name``
    (``<worker>.<milliseconds>.pt.trace.json``, the name PyTorch's handler gives it, which
    TensorBoard's profiler plugin and Perfetto read)."""
    if use_gzip:
        raise ValueError("tensorboard_trace_handler: use_gzip=True is not supported")

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        prof.export_chrome_trace(os.path.join(
            dir_name, f"{name}.{int(time.time() * 1000)}.pt.trace.json"))
    return handler


# torch.autograd.profiler is the same profiler (profile, record_function) under its old path
sys.modules[f"{autograd.__name__}.profiler"] = sys.modules[__name__]
autograd.profiler = sys.modules[__name__]
# torch.ops.X resolves on kernelgraph.ops.X; the engine's op registry package has no name
# "profiler" of its own, and it sits on a lower floor that may not import this module, so
# the namespace is set on it from here (as torch.autograd.profiler just above)
ops.profiler = _ProfilerOps
