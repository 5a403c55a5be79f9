"""A run's timeline: one lane per worker and device, a bar per node, an arrow per transfer.

Built from the step stats of a traced run (:mod:`.metadata`), as TF1's
``tensorflow.python.client.timeline.Timeline`` is::

    md = kg.RunMetadata()
    sess.run(train, feed, options=kg.RunOptions(trace_level=kg.RunOptions.FULL_TRACE),
             run_metadata=md)
    tl = md.timeline()                   # kg.distributed.timeline.Timeline(md.step_stats)
    tl.figure()                          # plotly, in the notebook
    tl.write_chrome_trace("step.json")   # open in chrome://tracing or https://ui.perfetto.dev

>>> import kernelgraph as kg
>>> md = kg.RunMetadata()
>>> _ = kg.distributed.metadata.fill(md, [
...     {"node": "a", "op": "matmul", "device": "worker:0/cpu", "start_us": 10.0,
...      "duration_us": 5.0},
...     {"node": "b", "op": "relu", "device": "worker:1/cpu", "start_us": 20.0,
...      "duration_us": 2.0}],
...     [{"name": "a", "src": "worker:0/cpu", "dst": "worker:1/cpu", "start_us": 15.0,
...       "end_us": 19.0, "nbytes": 4096}])
>>> tl = kg.distributed.timeline.Timeline(md.step_stats)
>>> tl.lanes()
['worker:0/cpu', 'worker:1/cpu']
>>> print(tl.summary())
lane          nodes  busy us  first node at us
worker:0/cpu      1      5.0               0.0
worker:1/cpu      1      2.0              10.0
two or more lanes busy at once: 0.0 us of 12.0 us
1 transfer:
  a worker:0/cpu -> worker:1/cpu 4096 bytes, 4.0 us
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import tempfile

from . import metadata


class Timeline:
    """The timeline of one run's :class:`~kernelgraph.distributed.metadata.StepStats`
    (see the module docstring). Times are shown relative to the run's first node."""

    def __init__(self, step_stats: metadata.StepStats, dashboard_link: str | None = None):
        if hasattr(step_stats, "step_stats"):  # a RunMetadata
            dashboard_link = dashboard_link or step_stats.dashboard_link
            step_stats = step_stats.step_stats
        if not hasattr(step_stats, "dev_stats") or not hasattr(step_stats, "transfers"):
            raise TypeError(f"Timeline needs the step_stats of a kg.RunMetadata, got "
                            f"{type(step_stats).__name__}")
        self.step_stats = step_stats
        self.dashboard_link = dashboard_link  # the Dask dashboard of the run's cluster
        starts = [s.all_start_micros for d in step_stats.dev_stats for s in d.node_stats]
        starts += [t.start_us for t in step_stats.transfers]
        self.origin_us = min(starts) if starts else 0.0

    def lanes(self) -> list[str]:
        """The devices, one lane each: those that ran nodes, then those only transfers
        touched, in the order they first appear."""
        names = [d.device for d in self.step_stats.dev_stats]
        for t in self.step_stats.transfers:
            names += [n for n in (self._lane(t.src), self._lane(t.dst)) if n not in names]
        return names

    def _lane(self, end: str) -> str:
        """The lane of a transfer's end: its device, or, where it names only a worker
        (``worker:1``), that worker's first device that ran nodes."""
        devices = [d.device for d in self.step_stats.dev_stats]
        if end in devices:
            return end
        return next((d for d in devices if d.startswith(end + "/")), end)

    def _label(self, lane: str) -> str:
        for d in self.step_stats.dev_stats:
            if d.device == lane and d.address:
                return f"{lane} ({d.address}, pid {d.pid})"
        return lane

    # -- Chrome's trace format -------------------------------------------------------------
    def generate_chrome_trace_format(self, show_dataflow: bool = True,
                                     show_memory: bool = False) -> str:
        """The run as Chrome trace-event JSON (TF1's method): a process per lane, a
        complete event per node, a flow arrow per transfer."""
        lanes = self.lanes()
        pid = {name: i for i, name in enumerate(lanes)}
        events = [{"ph": "M", "name": "process_name", "pid": i, "tid": 0,
                   "args": {"name": self._label(name)}} for i, name in enumerate(lanes)]
        events += [{"ph": "M", "name": "process_sort_index", "pid": i, "tid": 0,
                    "args": {"sort_index": i}} for i in range(len(lanes))]
        for d in self.step_stats.dev_stats:
            for s in d.node_stats:
                events.append({"ph": "X", "cat": "Op", "name": s.op, "pid": pid[d.device],
                               "tid": 0, "ts": s.all_start_micros - self.origin_us,
                               "dur": s.all_end_rel_micros,
                               "args": {"name": s.node_name, "op": s.op,
                                        "address": s.address, "pid": s.pid}})
        if show_dataflow:
            for k, t in enumerate(self.step_stats.transfers):
                common = {"cat": "DataFlow", "name": t.name, "id": k, "tid": 0}
                events.append({**common, "ph": "s", "pid": pid[self._lane(t.src)],
                               "ts": t.start_us - self.origin_us})
                events.append({**common, "ph": "f", "bp": "e", "pid": pid[self._lane(t.dst)],
                               "ts": t.end_us - self.origin_us,
                               "args": {"bytes": t.nbytes}})
        return json.dumps({"traceEvents": events, "displayTimeUnit": "ns",
                           "otherData": {"origin_epoch_us": self.origin_us}})

    def write_chrome_trace(self, path: str | os.PathLike) -> str:
        """Write :meth:`generate_chrome_trace_format` to ``path`` atomically (a temporary
        file in the same folder, then a rename: a reader never sees half a file); returns
        the path."""
        path = os.fspath(path)
        text = self.generate_chrome_trace_format()
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".trace-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return path

    def overlap_us(self) -> tuple[float, float]:
        """``(overlap, span)`` in microseconds: how long two or more lanes were busy at
        once (data-parallel replicas running side by side), and the whole run's span."""
        busy = {}  # lane -> open intervals, merged per lane first: a lane is busy or not
        for d in self.step_stats.dev_stats:
            spans = sorted((s.all_start_micros, s.all_start_micros + s.all_end_rel_micros)
                           for s in d.node_stats)
            merged = []
            for a, b in spans:
                if merged and a <= merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], b)
                else:
                    merged.append([a, b])
            busy[d.device] = merged
        edges = sorted((t, k) for spans in busy.values() for a, b in spans
                       for t, k in ((a, 1), (b, -1)))
        overlap, depth, last = 0.0, 0, None
        for t, k in edges:
            if depth >= 2:
                overlap += t - last
            depth, last = depth + k, t
        span = (edges[-1][0] - edges[0][0]) if edges else 0.0
        return overlap, span

    # -- the notebook's view ---------------------------------------------------------------
    def summary(self) -> str:
        """A text table: per lane, its node count, busy time and first start (us); how
        long lanes worked at once; the transfers; the Dask dashboard's address."""
        rows = [("lane", "nodes", "busy us", "first node at us")]
        by_lane = {d.device: d for d in self.step_stats.dev_stats}
        for lane in self.lanes():
            stats = by_lane[lane].node_stats if lane in by_lane else []
            busy = sum(s.all_end_rel_micros for s in stats)
            first = min((s.all_start_micros for s in stats), default=self.origin_us)
            rows.append((lane, str(len(stats)), f"{busy:.1f}",
                         f"{first - self.origin_us:.1f}"))
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                           for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
        if len(rows) > 2:
            overlap, span = self.overlap_us()
            lines.append(f"two or more lanes busy at once: {overlap:.1f} us of {span:.1f} us")
        transfers = self.step_stats.transfers
        if transfers:
            lines.append(f"{len(transfers)} transfer{'s' if len(transfers) != 1 else ''}:")
            lines += [f"  {t.name} {t.src} -> {t.dst} {t.nbytes} bytes, "
                      f"{t.end_us - t.start_us:.1f} us" for t in transfers]
        if self.dashboard_link:
            lines.append(f"Dask dashboard: {self.dashboard_link}")
        return "\n".join(lines)

    def figure(self, title: str = "one run, per worker and device"):
        """A plotly figure: one lane per device, a bar per node (hover: name, op, worker
        address, pid, duration), an arrow per transfer (hover: bytes). Names are shown
        escaped: a node called ``<b>`` reads as such and never becomes markup."""
        import plotly.graph_objects as go  # only when drawn: plotly is a notebook extra

        lanes = self.lanes()
        labels = [html.escape(self._label(lane)) for lane in lanes]
        esc = html.escape
        fig = go.Figure()
        for d in self.step_stats.dev_stats:
            stats = d.node_stats
            label = labels[lanes.index(d.device)]
            fig.add_trace(go.Bar(
                orientation="h", name=d.device, y=[label] * len(stats),
                x=[max(s.all_end_rel_micros, 0.5) for s in stats],
                base=[s.all_start_micros - self.origin_us for s in stats],
                text=[esc(s.node_name) for s in stats], textposition="none",
                customdata=[[esc(s.op), esc(s.address or "local"), s.pid] for s in stats],
                hovertemplate="%{text} (%{customdata[0]})<br>%{customdata[1]}, pid "
                              "%{customdata[2]}<br>%{x:.1f} us<extra></extra>"))
        for t in self.step_stats.transfers:
            fig.add_annotation(
                x=t.end_us - self.origin_us, y=labels[lanes.index(self._lane(t.dst))],
                ax=t.start_us - self.origin_us, ay=labels[lanes.index(self._lane(t.src))],
                xref="x", yref="y", axref="x", ayref="y", showarrow=True, arrowhead=2,
                hovertext=f"{esc(t.name)}: {t.nbytes} bytes", text="")
        if self.dashboard_link:
            title = f"{title} (Dask dashboard: {self.dashboard_link})"
        fig.update_layout(title=esc(title), barmode="overlay", showlegend=False,
                          xaxis_title="microseconds since the run's first node",
                          height=120 + 60 * len(lanes))
        fig.update_yaxes(categoryorder="array", categoryarray=labels[::-1])
        return fig

    def _repr_pretty_(self, p, cycle):
        p.text(self.summary())


metadata._TIMELINE[:] = [Timeline]
