"""The static plan on a GPU: recorded on its first run, replayed on every later one.

A plan whose nodes run on a CUDA device (:mod:`.plan`) pays, on every run, for each node's
op wrapper, numba's argument typing and an allocation per output, although a plan knows
every kernel, shape and buffer before it runs. A :class:`DevicePlan` pays that once:

- **Recording** (the first run). The plan's own generated code runs once, with every
  kernel launch recorded per node (:func:`kernelgraph.kernels.cuda.launcher.recording`).
  The arrays allocated while recording become the plan's *buffers*: the launches keep
  them as arguments, so every later run writes the very same device arrays.
- **Replay** (every later run). The feeds are uploaded into fixed device buffers, each
  node's recorded launches are launched again (bound once by the launcher: no dispatch, no
  typing), and only the fetches are downloaded.
- **Live nodes.** A node a recording cannot stand for runs its op each time: a random
  draw (a new seed each run), host nodes and transfers, control flow, a node whose shape
  depends on data, and anything that reads device data on the host (an index or label
  check: its kernels call the launcher's ``not_replayable`` while recorded) or makes its
  array without a kernel launch. Its result is copied into its fixed buffer, so the
  replayed nodes after it read it; the launches between two live nodes form a *segment*.
- **Variables** are updated in place: an update computed into a new array is copied back
  into the variable's own array (a recorded launch too), so their buffers stay fixed. Each
  run checks that the session still holds those arrays (an initializer run again, a
  checkpoint restored, another plan's assign) and records again where it does not.
- **CUDA graphs.** Each segment is captured as one CUDA graph where the launcher's
  ``capture`` module can do it (a real GPU with ``cuda.core``); elsewhere it is replayed
  launch by launch, and :meth:`DevicePlan.summary` says why.

An error raised while replaying still names the node and the user's line: segments know
which node each launch belongs to, and a failing captured graph is replayed launch by
launch to find it.

``KG_DEVICE_PLAN=0`` in the environment runs every GPU plan live (to compare). A plan's
``device`` attribute is its DevicePlan; ``sess.explain(...)`` prints its summary::

    with kg.device("cuda"):
        x = kg.placeholder(kg.float32, [None, 3])
        y = kg.relu(x) * 2.0
    sess.run(y, {x: batch})                       # records
    sess.run(y, {x: batch})                       # replays
    print(sess.explain(y, {x: batch}).device_summary())
"""

from __future__ import annotations

import importlib
import os
import threading

import numpy as np

from .. import codegen, devices
from ..errors import OpError
from ..ops.registry import cuda_package
from .memory import NEVER
from .variables import ASSIGNS, no_op, placeholder_op, variable_op, writes_variable

#: ``KG_DEVICE_PLAN=0`` in the environment (or this flag set False) runs every GPU plan live,
#: op by op as its generated code says: to compare, or to rule the device plan out.
ENABLED = os.environ.get("KG_DEVICE_PLAN", "1") != "0"
_SESSION_OPS = (placeholder_op, variable_op, no_op, *ASSIGNS)


def live_reason(node) -> str | None:
    """Why ``node`` must run its op on every run of a device plan, or None when its
    recorded launches can stand for it (judged from the node alone; a recording adds what
    the kernels themselves report, and inputs that are live without a fixed buffer)."""
    if node.device.type != "cuda":
        return "runs on the host"
    traits, op = node.op.traits, node.op
    if "random" in traits:
        return "draws new random numbers every run"
    if "control" in traits or "host_only" in traits:
        return "runs sub-graphs on the host"
    if "transfer" in traits:
        return "moves a value between host and device"
    if "stateful" in traits and op.forward is not None and op not in _SESSION_OPS \
            and not writes_variable(node):
        return "changes state of its own every run"
    if node.shape is None or None in node.shape:
        return "its shape depends on the data"
    return None


class DevicePlan:
    """Runs one :class:`~kernelgraph.static.plan.Plan` that has CUDA nodes (see the module
    docstring). ``run(args)`` takes the fed values (host arrays or device arrays) and
    returns the fetched values as the plan's own function does.

    ``reason`` is None when the plan records and replays, else why it runs live every time
    (traced, check_numerics, a generic plan, switched off). After a run: ``buffers`` (node
    name -> device array), ``steps`` (segments of launches and live nodes, in order),
    ``live`` ({node name: why}), ``captured`` (per segment: its CUDA graph or None) and
    ``capture_reasons``; :meth:`summary` says it in words."""

    def __init__(self, plan, env: dict, store: dict, reason: str | None = None):
        self.plan, self.store, self.env = plan, store, env
        self.live_fn = env["_run"]
        self.reason = reason
        self.recorded = False
        self.records = 0  # how many times this plan was recorded (shape or variable change)
        self.nodes = [n for _, n in sorted(plan.line_nodes.items())]
        self.static_live = {id(n): r for n in self.nodes if (r := live_reason(n))}
        self.feed_cuda = [n.device.type == "cuda" for n in plan.feed_nodes]
        self._lock = threading.Lock()
        self._reset()
        if reason is None:
            reason = self.reason = _old_value_seen(plan)
        if reason is None:
            try:
                self._record_fn = self._recording_function()
            except Exception as e:  # noqa: BLE001 - the plan still runs, live
                self.reason = f"could not prepare the recording ({type(e).__name__}: {e})"

    def _reset(self) -> None:
        self.recorded = False
        self.steps: list = []      # ("seg", [(launch, node)], graph) or ("live", node, ...)
        self.values: dict = {}     # node id -> its value (fixed buffers, consts, host)
        self.buffers: dict = {}    # node name -> device array made while recording
        self.feed_buffers: list = []
        self.var_checks: list = []  # (variable node, the array the store must hold)
        self.live: dict = {}       # node name -> why it runs live
        self.captured: list = []   # per segment: a graph, or None
        self.capture_reasons: list = []
        self.launch_count = 0

    # -- the generated functions ------------------------------------------------------------
    def _recording_function(self):
        """The plan's source with ``_done(k, value)`` after node ``k``'s line: one run of it
        is the recording run. Its own line table maps an error back to the node."""
        plan, env = self.plan, dict(self.env)
        done = "_done"
        while done in env:
            done += "_"
        env[done] = self._done
        out, self.record_lines = [], {}
        k = 0
        for number, text in enumerate(plan.source.splitlines(), start=1):
            out.append(text.replace("def _run(", "def _record(", 1) if number == 1 else text)
            node = plan.line_nodes.get(number)
            if node is not None:
                self.record_lines[len(out)] = node
                out.append(f"    {done}({k}, {plan.names[id(node)]})")
                k += 1
        filename = f"<kernelgraph recording of {plan.code.co_filename.strip('<>')}>"
        source = "\n".join(out) + "\n"
        codegen.register(self, filename, source)
        self.record_code = compile(source, filename, "exec")
        exec(self.record_code, env)  # noqa: S102 - the plan's generated code plus markers
        return env["_record"]

    def _live_function(self, node):
        """``fn(*inputs) -> value``: node's own line of the plan, alone."""
        plan = self.plan
        line = next(text for number, text in enumerate(plan.source.splitlines(), start=1)
                    if plan.line_nodes.get(number) is node)
        params, ids = [], []
        for i in node.inputs:
            name = plan.names.get(id(i))
            if name is not None and name not in self.env and name not in params:
                params.append(name)
                ids.append(id(i))
        source = (f"def _live({', '.join(params)}):\n{line}\n"
                  f"    return {plan.names[id(node)]}\n")
        env = dict(self.env)
        exec(compile(source, f"<kernelgraph live node of {plan.code.co_filename.strip('<>')}>",
                     "exec"), env)  # noqa: S102 - one line of the plan's generated code
        return env["_live"], tuple(ids)

    # -- running ----------------------------------------------------------------------------
    def run(self, args):
        """The fetched values of one run with fed values ``args``."""
        # The buffers are the plan's own: a run while another thread (or this one, from a
        # loop body) is inside this plan runs live, on arrays of its own.
        if self.reason is not None or not self._lock.acquire(blocking=False):
            return self.live_fn(*self._uploaded(args))
        try:
            if not self.recorded or not self._still_valid(args):
                return self._record(args)
            return self._replay(args)
        finally:
            self._lock.release()

    def _uploaded(self, args) -> list:
        return [devices.transfer(a, n.device) if cuda else a
                for a, n, cuda in zip(args, self.plan.feed_nodes, self.feed_cuda)]

    def _still_valid(self, args) -> bool:
        store = self.store
        for var, array in self.var_checks:
            if store.get(var) is not array:
                return False
        for a, buf, cuda in zip(args, self.feed_buffers, self.feed_cuda):
            if cuda and tuple(a.shape) != tuple(buf.shape):
                return False
        return True

    def _record(self, args):
        launcher = cuda_package().launcher
        self._reset()
        plan = self.plan
        feeds = []
        for a, n, cuda in zip(args, plan.feed_nodes, self.feed_cuda):
            if cuda:  # the fixed buffer this feed is uploaded into on every run
                a = cuda_package().core.copy(a) if devices.is_cuda_array(a) else \
                    devices.transfer(a, n.device)
            self.feed_buffers.append(a)
            self.values[id(n)] = a
            feeds.append(a)
        for n in plan.order:  # constants: bound into the plan once
            name = plan.names.get(id(n))
            if n.op.name == "const" and name in self.env:
                self.values[id(n)] = self.env[name]
        self._homes = {}
        self._checked = {}
        self._per_node = []
        try:
            with launcher.recording() as launches:
                self._launches = launches
                self._mark = 0
                self._blockers = 0
                result = self._record_fn(*feeds)
        except OpError:
            self._reset()
            raise
        except Exception as e:
            self._reset()
            raise self.plan.explain(e, self.record_code.co_filename, self.record_lines) \
                from None
        finally:
            self._launches = None
        self._build_steps()
        self.records += 1
        return result

    def _done(self, k: int, value) -> None:
        """After node ``k`` of the recording run: its launches, value and live status."""
        node = self.nodes[k]
        launches = self._launches
        # A GPU variable keeps its own array (an update's copy into it is recorded); host
        # variables are the host code's business (their nodes run live).
        if writes_variable(node) and node.inputs[0].device.type == "cuda":
            self._settle(node)
        elif node.op is variable_op and node.device.type == "cuda":
            self._checked.setdefault(id(node), (node, value))
        mine = launches[self._mark:]
        blockers = launches.blockers[self._blockers:] if hasattr(launches, "blockers") \
            else []
        self._blockers = len(blockers) + self._blockers
        self._mark = len(launches)
        self._per_node.append((node, mine, value, list(blockers)))

    def _settle(self, node) -> None:
        """A variable write left a new array in the store: copy it into the variable's own
        array (recorded, when recording) and put that array back."""
        var = node.inputs[0]
        array = self.store.get(var)
        home = self._homes.get(id(var))
        if home is None:
            home = self._checked.get(id(var), (None, None))[1]
        if home is None or not devices.is_cuda_array(home) or \
                tuple(home.shape) != tuple(array.shape) or home.dtype != array.dtype:
            home = array  # first value of an uninitialised variable: its array from now on
        if array is not home:
            core = cuda_package().core
            core.strided_write(array, home, core.contiguous_strides(array.shape))
            self.store[var] = home
        self._homes[id(var)] = home
        self._checked[id(var)] = (var, home)

    def _build_steps(self) -> None:
        """Segments of replayed launches between live nodes, from the recording run."""
        unfixed: set = set()  # node ids whose value changes object every run
        segment: list = []
        segments: list = []
        for node, launches, value, blockers in self._per_node:
            reason = self.static_live.get(id(node))
            if reason is None and blockers:
                reason = "; ".join(dict.fromkeys(blockers))
            if reason is None and any(id(i) in unfixed for i in node.inputs):
                reason = "reads a live value whose array changes every run"
            if reason is None and not launches and devices.is_cuda_array(value) and \
                    node.op not in _SESSION_OPS and \
                    not any(_shares(value, self.values.get(id(i))) for i in node.inputs):
                reason = "made its array without a kernel launch"
            if reason is None:
                segment.extend((launch, node) for launch in launches)
                self.values[id(node)] = value
                if devices.is_cuda_array(value):
                    self.buffers[node.name] = value
                continue
            self.live[node.name] = reason
            if segment:
                segments.append(segment)
                self.steps.append(("seg", segment))
                segment = []
            fixed = devices.is_cuda_array(value) and node.shape is not None and \
                None not in node.shape and node.op is not no_op
            fn, ids = self._live_function(node)
            self.values[id(node)] = value
            if fixed:
                self.buffers[node.name] = value
            else:
                unfixed.add(id(node))
            self.steps.append(("live", node, fn, ids, value if fixed else None))
        if segment:
            segments.append(segment)
            self.steps.append(("seg", segment))
        self.launch_count = sum(len(s) for s in segments)
        self.var_checks = list(self._checked.values())
        self._capture(segments)
        self._per_node, self._homes, self._checked = [], {}, {}  # the recording's scratch
        self.recorded = True

    def _capture(self, segments) -> None:
        """One CUDA graph per segment where the launcher's capture module can make one."""
        capture, why = _capture_module()
        for seg in segments:
            graph, reason = None, why
            if capture is not None:
                try:
                    got = capture([launch for launch, _ in seg])
                    graph, reason = got if isinstance(got, tuple) else (got, "")
                except Exception as e:  # noqa: BLE001 - replayed launch by launch instead
                    graph, reason = None, f"capture failed ({type(e).__name__}: {e})"
            if graph is None and not reason:
                reason = "capture returned no graph"
            self.captured.append(graph)
            self.capture_reasons.append("" if graph is not None else reason)
        graphs = iter(self.captured)
        self.steps = [(s[0], s[1], next(graphs)) if s[0] == "seg" else s for s in self.steps]

    def _replay(self, args):
        values = self.values
        for a, buf, cuda, node in zip(args, self.feed_buffers, self.feed_cuda,
                                      self.plan.feed_nodes):
            if cuda:  # the one host-to-device copy of a run (a C-contiguous host array)
                buf.copy_to_device(np.ascontiguousarray(a) if isinstance(a, np.ndarray) and
                                   not a.flags.c_contiguous else a)
            else:  # a host value: the live nodes that read it take it as it is
                values[id(node)] = a
        for step in self.steps:
            if step[0] == "seg":
                _, seg, graph = step
                if graph is not None:
                    try:
                        _launch_graph(graph)
                        continue
                    except Exception:  # noqa: BLE001 - find the node launch by launch
                        pass
                item = None
                try:
                    for item in seg:  # (launch, the node it belongs to)
                        item[0]()
                except OpError:
                    raise
                except Exception as e:
                    raise self.plan.node_error(item[1], e) from None
            else:
                _, node, fn, ids, buf = step
                try:
                    value = fn(*[values[i] for i in ids])
                    if writes_variable(node):
                        self._settle_live(node)
                    if buf is not None:
                        if value is not buf:
                            _copy_into(buf, value)
                    else:
                        values[id(node)] = value
                except OpError:
                    raise
                except Exception as e:
                    raise self.plan.node_error(node, e) from None
        return tuple(_fetched(values.get(id(f)), f) for f in self.plan.fetch_nodes)

    def _settle_live(self, node) -> None:
        var = node.inputs[0]
        for checked, home in self.var_checks:
            if checked is var:
                array = self.store.get(var)
                if array is not home:
                    _copy_into(home, array)
                    self.store[var] = home

    # -- explaining -------------------------------------------------------------------------
    def summary(self) -> str:
        """What the device plan does, for ``Session.explain``."""
        if self.reason is not None:
            return f"device plan: none, every run is live ({self.reason})"
        if not self.recorded:
            live = ", ".join(f"{n.name} ({self.static_live[id(n)]})" for n in self.nodes
                             if id(n) in self.static_live) or "none"
            return ("device plan: recorded on the first run; live nodes expected: "
                    f"{live}")
        nbytes = sum(int(b.size) * b.dtype.itemsize for b in self.buffers.values())
        segments = sum(1 for s in self.steps if s[0] == "seg")
        lines = [f"device plan: {self.launch_count} launches recorded once (kernels chosen, "
                 f"configured and bound to their buffers), replayed in "
                 f"{segments} segment{'s' * (segments != 1)}; {len(self.buffers)} buffers "
                 f"({_size(nbytes)}) allocated once and reused every run; "
                 f"{sum(self.feed_cuda)} feeds uploaded into fixed buffers; recorded "
                 f"{self.records} time{'s' * (self.records != 1)}"]
        launches = [step[1][i][0] for step in self.steps if step[0] == "seg"
                    for i in range(len(step[1]))]
        bound = sum(1 for launch in launches if getattr(launch, "bound", None) is not None)
        unbound = {getattr(launch, "unbound_reason", "") for launch in launches} - {""}
        if cuda_package().launcher.SIMULATOR:
            lines.append("  launches replayed as plain calls (numba's simulator runs kernels "
                         "as Python: no driver parameters to prepare)")
        else:
            lines.append(f"  launches with their driver parameters prepared: {bound} of "
                         f"{len(launches)}" + (f" (the others through numba: "
                                                f"{'; '.join(sorted(unbound)[:2])})"
                                                if unbound else ""))
        for name, why in self.live.items():
            lines.append(f"  live: {name} ({why})")
        for k, (graph, why) in enumerate(zip(self.captured, self.capture_reasons)):
            lines.append(f"  segment {k}: " + ("captured as one CUDA graph" if graph
                                                is not None else f"not captured: {why}"))
        return "\n".join(lines)


def attach(plan, store: dict, reason: str | None = None) -> DevicePlan:
    """Make ``plan.fn`` run through a :class:`DevicePlan` (returned): the function stays a
    plain function of the plan's generated namespace (``plan.fn.__globals__`` is still the
    plan's, which the stepper reads); the generated function itself stays ``plan.live_fn``.
    Fed values for CUDA placeholders may be host arrays: they are uploaded here."""
    env = plan.fn.__globals__
    if reason is None and not ENABLED:
        reason = "switched off (KG_DEVICE_PLAN=0)"
    device = DevicePlan(plan, env, store, reason)
    name = "_device_run"
    while name in env:
        name += "_"
    env[name] = device.run
    source = f"def _dispatch(*args):\n    return {name}(args)\n"
    exec(compile(source, f"<kernelgraph device dispatch of {plan.code.co_filename.strip('<>')}>",
                 "exec"), env)  # noqa: S102 - a fixed line calling the device plan
    plan.live_fn, plan.fn = plan.fn, env.pop("_dispatch")
    return device


def _old_value_seen(plan) -> str | None:
    """Why the plan cannot update its GPU variables in place, or None: a variable's old
    value is fetched, or read after the node that writes it (the plan's own code keeps the
    old array then, and the fetched value must be the old one)."""
    last = _lifetimes(plan.order, plan.fetch_nodes)
    for k, n in enumerate(plan.order):
        if writes_variable(n) and n.inputs[0].device.type == "cuda":
            var = n.inputs[0]
            if last.get(id(var), -1) > k:
                return (f"variable '{var.name}' is read (or fetched) after '{n.name}' "
                        "writes it, so it cannot be updated in place")
    return None


def _lifetimes(order, fetch_nodes) -> dict:
    """node id -> the last position that may still see its array: its readers', and
    through any op not known to make a new array (trait ``fresh``: on a GPU too, every
    such forward returns a new array), its result's. The memory planner's rule
    (:func:`kernelgraph.static.memory.lifetimes`), which trusts ``fresh`` on the CPU only,
    since it plans the CPU's in-place writes."""
    position = {id(n): k for k, n in enumerate(order)}
    last = dict(position)
    for f in fetch_nodes:
        last[id(f)] = NEVER
    for n in reversed(order):
        k = position[id(n)]
        fresh = "fresh" in n.op.traits or n.op is no_op
        for index, i in enumerate(n.inputs):
            if id(i) not in last or (index == 0 and writes_variable(n)):
                continue
            aliased = not (fresh or index in n.op.shape_inputs)
            last[id(i)] = max(last[id(i)], max(k, last[id(n)]) if aliased else k)
    return last


# -- helpers -----------------------------------------------------------------------------------
def _capture_module():
    """(capture function or None, why not)."""
    try:
        module = importlib.import_module(cuda_package().__name__ + ".capture")
    except ImportError as e:
        return None, f"no capture module ({e})"
    fn = getattr(module, "capture", None)
    return (fn, "") if callable(fn) else (None, "the capture module has no capture()")


def _launch_graph(graph) -> None:
    for method in ("replay", "launch"):
        call = getattr(graph, method, None)
        if callable(call):
            call()
            return
    graph()


def _copy_into(buf, value) -> None:
    """Write device array ``value`` into the fixed buffer ``buf`` (same shape and dtype)."""
    if tuple(value.shape) != tuple(buf.shape) or value.dtype != buf.dtype:
        raise ValueError(f"a live node made a {value.dtype} array of shape "
                         f"{tuple(value.shape)} where the plan holds "
                         f"{buf.dtype} {tuple(buf.shape)}")
    core = cuda_package().core
    core.strided_write(value, buf, core.contiguous_strides(value.shape))


def _address(x):
    inner = getattr(x, "_ary", None)  # the simulator's FakeCUDAArray wraps a NumPy array
    if inner is not None:
        return inner.__array_interface__["data"][0], inner.nbytes
    iface = getattr(x, "__cuda_array_interface__", None)
    if iface is None:
        return None
    return iface["data"][0], int(x.size) * x.dtype.itemsize


def _shares(a, b) -> bool:
    """Whether device arrays ``a`` and ``b`` overlap in memory (a view of an input)."""
    if b is None or not devices.is_cuda_array(b):
        return False
    sa, sb = _address(a), _address(b)
    if sa is None or sb is None:
        return True  # unknown: assume a view, which replays for free
    return sa[0] < sb[0] + max(sb[1], 1) and sb[0] < sa[0] + max(sa[1], 1)


def _fetched(value, node):
    if node.op is no_op:
        return value
    if node.device.type != "cpu":
        return devices.to_numpy(value)
    return value.copy() if hasattr(value, "copy") else value


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


__all__ = ["DevicePlan", "attach", "live_reason"]
