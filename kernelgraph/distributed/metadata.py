"""TF1's run metadata: ``RunOptions(trace_level=FULL_TRACE)`` asks a run to time every node,
and a ``RunMetadata`` receives the times, per device, as TF1's ``step_stats``.

>>> import kernelgraph as kg
>>> g = kg.Graph()
>>> with g.as_default():
...     x = kg.placeholder(kg.float32, shape=[2])
...     y = kg.exp(x) * 2.0
>>> md = kg.RunMetadata()
>>> with kg.Session(g) as sess:
...     _ = sess.run(y, {x: [0.0, 1.0]}, options=kg.RunOptions(
...         trace_level=kg.RunOptions.FULL_TRACE), run_metadata=md)
>>> dev = md.step_stats.dev_stats[0]
>>> dev.device, [s.node_name for s in dev.node_stats][-2:]
('cpu', ['exp', 'mul'])

Each :class:`NodeExecStats` holds TF1's fields (``node_name``, ``all_start_micros`` since
the epoch, ``op_end_rel_micros`` / ``all_end_rel_micros``: the duration) and, so that a
learner sees *where* a node ran, the ``address`` of the worker and its process id ``pid``.
A traced run shows every node as written (it is compiled without fusion, as any run with
a trace listener is), so its times are a picture of the work, not the fastest run.

**For the distributed runtime** (kernelgraph.distributed.runner / worker): a worker runs
its sub-plan inside :func:`collect` (``value, rows = collect(call, device_of, address)``:
a trace listener is attached for the call, so a plan compiled while it runs is the traced
form), sends the rows (plain dicts: picklable, small) back with its fetches, and the client
hands every stage's rows and the partition's transfers to :func:`fill_stages` (or any
rows and transfer dicts to :func:`fill`). The local Session
uses :func:`traced_run`, registered in ``kernelgraph.static.session``'s hook.
"""

from __future__ import annotations

import os
import threading
import time

from .. import trace
from ..errors import shown
from ..static import session as _session

# time.time() at perf_counter() == 0: node start times are read with perf_counter (fine
# grained) and reported, as TF1 does, in microseconds since the epoch.
_EPOCH = time.time() - time.perf_counter()


class RunOptions:
    """What a run should record: ``kg.RunOptions(trace_level=kg.RunOptions.FULL_TRACE)``.

    >>> import kernelgraph as kg
    >>> kg.RunOptions(trace_level=kg.RunOptions.FULL_TRACE).trace_level
    3
    """

    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3
    TraceLevel = type("TraceLevel", (), {"NO_TRACE": 0, "SOFTWARE_TRACE": 1,  # TF1's enum
                                         "HARDWARE_TRACE": 2, "FULL_TRACE": 3})

    def __init__(self, trace_level: int = 0, timeout_in_ms: int = 0,
                 output_partition_graphs: bool = False):
        if isinstance(trace_level, bool) or trace_level not in (0, 1, 2, 3):
            raise ValueError(f"RunOptions: trace_level must be one of NO_TRACE (0), "
                             f"SOFTWARE_TRACE (1), HARDWARE_TRACE (2), FULL_TRACE (3), got "
                             f"{shown(trace_level)}")
        self.trace_level = trace_level
        self.timeout_in_ms = timeout_in_ms
        self.output_partition_graphs = output_partition_graphs

    def __repr__(self):
        return f"RunOptions(trace_level={self.trace_level})"


class NodeExecStats:
    """One node's run: TF1's ``NodeExecStats`` fields, plus ``op``, ``address``, ``pid``."""

    __slots__ = ("node_name", "op", "all_start_micros", "op_start_rel_micros",
                 "op_end_rel_micros", "all_end_rel_micros", "timeline_label", "address",
                 "pid", "thread_id")

    def __init__(self, node_name: str, op: str, start_us: float, duration_us: float,
                 address: str = "", pid: int = 0, thread_id: int = 0):
        self.node_name, self.op = node_name, op
        self.all_start_micros = start_us
        self.op_start_rel_micros = 0.0
        self.op_end_rel_micros = self.all_end_rel_micros = duration_us
        self.timeline_label = f"{node_name} = {op}()"
        self.address, self.pid, self.thread_id = address, pid, thread_id

    @property
    def duration_micros(self) -> float:
        return self.all_end_rel_micros

    def __repr__(self):
        return (f"<NodeExecStats {self.node_name!r} ({self.op}) start={self.all_start_micros:.0f}"
                f" us, {self.all_end_rel_micros:.1f} us, {self.address or 'local'} "
                f"pid {self.pid}>")


class DeviceStepStats:
    """The nodes one device ran in a step (TF1's ``DeviceStepStats``)."""

    def __init__(self, device: str, address: str = "", pid: int = 0):
        self.device, self.address, self.pid = device, address, pid
        self.node_stats: list[NodeExecStats] = []

    def __repr__(self):
        return f"<DeviceStepStats {self.device!r}: {len(self.node_stats)} nodes>"


class Transfer:
    """A value that crossed from one device to another in the step (kernelgraph's: TF1
    shows these as Send/Recv nodes): drawn as an arrow by the timeline."""

    __slots__ = ("name", "src", "dst", "start_us", "end_us", "nbytes")

    def __init__(self, name: str, src: str, dst: str, start_us: float, end_us: float,
                 nbytes: int = 0):
        self.name, self.src, self.dst = name, src, dst
        self.start_us, self.end_us, self.nbytes = start_us, end_us, nbytes

    def __repr__(self):
        return f"<Transfer {self.name!r} {self.src} -> {self.dst}, {self.nbytes} bytes>"


class StepStats:
    """Per-device stats of one run: ``dev_stats`` (a list of :class:`DeviceStepStats`) and
    ``transfers`` (a list of :class:`Transfer`)."""

    def __init__(self):
        self.dev_stats: list[DeviceStepStats] = []
        self.transfers: list[Transfer] = []

    def device(self, name: str, address: str = "", pid: int = 0) -> DeviceStepStats:
        """The entry for device ``name`` (made on first use)."""
        for d in self.dev_stats:
            if d.device == name:
                return d
        entry = DeviceStepStats(name, address, pid)
        self.dev_stats.append(entry)
        return entry

    def __repr__(self):
        return f"<StepStats: {len(self.dev_stats)} devices, {len(self.transfers)} transfers>"


class RunMetadata:
    """What a traced run recorded (TF1's ``RunMetadata``): ``step_stats``, and
    ``dashboard_link`` (the Dask dashboard's address, for a distributed session).

    >>> import kernelgraph as kg
    >>> kg.RunMetadata().step_stats.dev_stats
    []
    """

    def __init__(self):
        self.step_stats = StepStats()
        self.partition_graphs: list = []
        self.dashboard_link: str | None = None

    def Clear(self) -> None:  # noqa: N802 - TF1's protobuf spelling
        """Forget what was recorded (a traced run replaces it anyway, as TF1's does)."""
        self.__init__()

    def timeline(self):
        """A :class:`~kernelgraph.distributed.timeline.Timeline` of this run."""
        return _TIMELINE[0](self.step_stats, self.dashboard_link)

    def __repr__(self):
        n = sum(len(d.node_stats) for d in self.step_stats.dev_stats)
        return f"<RunMetadata: {n} nodes on {len(self.step_stats.dev_stats)} devices>"


_TIMELINE: list = []  # the Timeline class (kernelgraph.distributed.timeline registers it)


def wants_trace(options, run_metadata) -> bool:
    """Whether a run with these arguments records step stats (as TF1: a trace level and
    somewhere to put it)."""
    return run_metadata is not None and getattr(options, "trace_level", 0) > 0


# -- recording ---------------------------------------------------------------------------------
_lock = threading.RLock()  # one recording at a time: trace listeners are process-wide


def collect(call, device_of=None, address: str = "", pid: int | None = None):
    """``(call(), rows)``: run ``call`` with a trace listener attached, and one row (a dict:
    ``node``, ``op``, ``device``, ``start_us``, ``duration_us``, ``address``, ``pid``,
    ``thread``) per node it ran, in order. ``device_of(node)`` names the device a node is
    reported on (default: its own ``node.device``)."""
    rows = []
    pid = os.getpid() if pid is None else pid
    me = threading.get_ident()
    now = time.perf_counter

    def listen(kind, node=None, seconds=0.0, mode="static", **info):
        if kind != "node_executed" or mode != "static" or threading.get_ident() != me:
            return
        end = now()
        rows.append({"node": node.name, "op": node.op.name,
                     "device": str(device_of(node) if device_of else node.device),
                     "start_us": (_EPOCH + end - seconds) * 1e6,
                     "duration_us": seconds * 1e6, "address": address, "pid": pid,
                     "thread": me})

    with _lock, trace.listening(listen):
        value = call()
    return value, rows


def fill(run_metadata: RunMetadata, rows, transfers=(), dashboard_link=None) -> RunMetadata:
    """Add ``rows`` (from :func:`collect`, any workers' together) and ``transfers`` (dicts
    with ``name``, ``src``, ``dst``, ``start_us``, ``end_us``, ``nbytes``) to
    ``run_metadata``'s step stats, one DeviceStepStats per device. What an earlier run
    recorded there is replaced (TF1 parses each run's metadata into the message afresh)."""
    stats = run_metadata.step_stats = StepStats()
    for r in rows:
        dev = stats.device(r["device"], r.get("address", ""), r.get("pid", 0))
        dev.node_stats.append(NodeExecStats(r["node"], r["op"], r["start_us"],
                                            r["duration_us"], r.get("address", ""),
                                            r.get("pid", 0), r.get("thread", 0)))
    for t in transfers:
        t = _refined(t, rows)
        stats.transfers.append(Transfer(t["name"], t["src"], t["dst"], t["start_us"],
                                        t["end_us"], t.get("nbytes", 0)))
    if dashboard_link is not None:
        run_metadata.dashboard_link = dashboard_link
    return run_metadata


def _refined(t: dict, rows) -> dict:
    """Transfer ``t``, given between workers (``worker:0``, not devices), timed by the rows:
    from the end of the node that made the value (the node named like it, on the sending
    worker) to the start of the receiving worker's first node after that; its ends are
    those nodes' devices. As given where no row says, or where it names devices."""
    def on(r, end):
        return r["device"].startswith(end + "/")

    made = [r for r in rows if r["node"] == t["name"] and on(r, t["src"])]
    if "/" in t["src"] or not made:
        return t
    src = made[-1]
    ready = src["start_us"] + src["duration_us"]
    later = [r for r in rows if on(r, t["dst"]) and r["start_us"] >= ready]
    first = min(later, key=lambda r: r["start_us"]) if later else None
    return {**t, "src": src["device"], "start_us": ready,
            "dst": first["device"] if first else t["dst"],
            "end_us": first["start_us"] if first else max(ready, t["end_us"])}


def fill_stages(run_metadata: RunMetadata, stage_rows: dict, transfers, nbytes=None,
                dashboard_link=None) -> RunMetadata:
    """:func:`fill` for a partitioned run: ``stage_rows`` maps a stage's index to the rows
    its worker's :func:`collect` returned; ``transfers`` are the partition's
    (:class:`kernelgraph.distributed.partition.Transfer`: ``key``, ``src``, ``dst``,
    ``src_stage``, ``dst_stages``, ``nbytes``). Each value crossing workers becomes an
    arrow from the end of the node computing it to the start of the first stage reading
    it; ``nbytes`` (key -> bytes moved in this run) overrides the partition's estimate."""
    rows = [r for k in sorted(stage_rows) for r in stage_rows[k] or ()]
    arrows = []
    for t in transfers:
        if t.src == t.dst:  # a carry: it stays in the worker's memory
            continue
        made = [r for r in stage_rows.get(t.src_stage) or () if r["node"] == t.key] or \
            list(stage_rows.get(t.src_stage) or ())[-1:]
        readers = [r for k in t.dst_stages for r in stage_rows.get(k) or ()]
        if not made or not readers:
            continue
        src, first = made[-1], min(readers, key=lambda r: r["start_us"])
        arrows.append({"name": t.key, "src": src["device"], "dst": first["device"],
                       "start_us": src["start_us"] + src["duration_us"],
                       "end_us": max(first["start_us"], src["start_us"] + src["duration_us"]),
                       "nbytes": (nbytes or {}).get(t.key, t.nbytes) or 0})
    return fill(run_metadata, rows, arrows, dashboard_link)


def traced_run(session, fetches, feed_dict, options, run_metadata):
    """A local ``Session.run`` that fills ``run_metadata`` (the session's hook calls this
    when :func:`wants_trace`)."""
    if not hasattr(run_metadata, "step_stats"):
        raise TypeError(f"run_metadata must be a kg.RunMetadata, got "
                        f"{type(run_metadata).__name__}")
    value, rows = collect(lambda: session.run(fetches, feed_dict))
    fill(run_metadata, rows)
    return value


# The local Session asks here when a run is traced (a floor below cannot import this one).
if not _session.TRACED_RUN:  # (a doctest's second copy of this module leaves it)
    _session.TRACED_RUN[:] = [wants_trace, traced_run]
