"""``kg.Session(target=...)``: a session whose graph runs on the workers of a Dask cluster.

>>> import kernelgraph as kg
>>> import kernelgraph.distributed
>>> g = kg.Graph()
>>> with g.as_default():
...     x = kg.placeholder(kg.float32, shape=[3], name="x")
...     with kg.device("worker:0"):
...         h = kg.exp(x)
...     with kg.device("worker:1"):
...         y = kg.reduce_sum(h)
>>> with kg.distributed.local(2) as pool:                        # doctest: +SKIP
...     with kg.Session(graph=g, target=pool) as sess:
...         sess.run(y, {x: [0.0, 0.0, 0.0]})
3.0

Each run of a (fetches, fed nodes) pair is partitioned once (:mod:`.partition`) into stages,
each one Dask task on its worker (:func:`.worker.run_stage`). A stage's program is sent to a
worker the first time it runs there, then only its id: an unchanged graph sends only the
feeds, the fetched values and the values that cross workers, and Dask moves those directly
between the workers (a stage's task takes the futures of the stages it reads).

**Faults.** While a run waits, the runner watches the workers it uses: if one dies, the run
is rolled back on the others (their variables are as before the run) and
:class:`WorkerLostError` names the worker and the nodes it held, within a second or so; a
run never waits forever on a dead worker. Once a worker has taken its place
(``pool.wait_for_workers(n)``), ``kg.load(checkpoint, into=sess)`` puts its variables back
and the session runs on. ``kg.save(path, sess)`` gathers every variable from its worker.

**Deadlines.** A run given ``RunOptions(timeout_in_ms=...)`` that takes longer raises
:class:`DeadlineExceededError` and is rolled back on every worker it used, one worker or
several: its stages still waiting are refused, and the variables its finished stages wrote
are put back. (TF1 leaves the writes of a cancelled step in place; here a run that raises
changes no variable, deadline or dead worker alike.)
"""

from __future__ import annotations

import time
import uuid

import numpy as np

from .. import errors
from ..errors import OpError, shown
from ..graph import node_of
from ..static import session as _session
from ..static.feeds import FetchSpec, feed_converter, fetch_key
from . import cluster as _cluster
from . import metadata, worker
from .partition import partition

POLL_SECONDS = 0.2  # how often a waiting run checks that its workers are alive


class WorkerLostError(errors.OpError, RuntimeError):
    """A worker died during a run (TF1 says ``UnavailableError``): the message names it and
    the nodes it held; the other workers' variables are as before the run."""


class DeadlineExceededError(errors.OpError, TimeoutError):
    """A run took longer than ``RunOptions(timeout_in_ms=...)`` allowed (TF1's name)."""


class Runner:
    """The distributed side of one Session (``sess._remote``): see the module docstring.

    ``programs_sent`` counts the stage programs shipped to workers (an unchanged graph's
    second run adds none)."""

    def __init__(self, session, target):
        self.session = session
        self.cluster = _cluster.connect(target)
        # A client made here for an address is this session's to close; a pool or Client
        # the user made is theirs.
        self._owns = isinstance(target, str)
        self.key = f"kg-{uuid.uuid4().hex[:12]}"
        self._parts: dict = {}
        self._sent: dict = {}  # worker address -> ids of the programs it holds
        self._addresses: list | None = None  # kg worker number -> address (cached)
        self._run_id = 0
        self.programs_sent = 0

    # -- the workers -----------------------------------------------------------------------
    def addresses(self, refresh: bool = False) -> list:
        if refresh or self._addresses is None:
            self._addresses = _cluster.order_workers(self.cluster.worker_info())
        return self._addresses

    def address_of(self, name: str, addresses: list) -> str:
        """The address of kg worker ``name`` ('worker:1'), or a LookupError."""
        job, _, task = name.rpartition(":")
        if job != "worker" or not task.isdigit():
            raise LookupError(f"'{name}': a Dask pool runs the tasks of job 'worker' "
                              f"('/job:worker/task:N' or 'worker:N'); place nodes there")
        i = int(task)
        if i < len(addresses) and addresses[i] is not None:
            return addresses[i]
        have = ", ".join(f"worker:{k}" for k, a in enumerate(addresses) if a is not None)
        raise LookupError(f"the graph places nodes on '{name}' but the pool has "
                          f"{have or 'no workers'} (scheduler {self.cluster.scheduler_address})")

    def _options(self) -> dict:
        s = self.session
        return {"optimize": s.optimize, "skip_passes": tuple(s.skip_passes),
                "check_numerics": s.check_numerics}

    # -- running ---------------------------------------------------------------------------
    def _partition(self, fetches, feed_keys):
        try:
            key = (fetch_key(fetches), feed_keys)
            entry = self._parts.get(key)
        except TypeError:
            key, entry = None, None
        if entry is None:
            s = self.session
            spec = FetchSpec(s._as_graph_node, fetches)
            feed_nodes = [s._as_graph_node(k, "Feed") for k in feed_keys]
            spec.keep_arrays(feed_nodes)
            part = partition(spec.nodes, feed_nodes)
            # Feeds are checked here (a bad one is refused before anything is sent) and
            # converted on the host; a worker uploads them where its nodes need them.
            converters = [feed_converter(n) if n.device.type == "cpu" else _as_array
                          for n in feed_nodes]
            entry = (part, spec, feed_nodes, converters)
            if key is not None:
                self._parts[key] = entry
        return entry

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """``Session.run`` on the cluster (the Session's hook calls this)."""
        feed_keys = tuple(feed_dict) if feed_dict else ()
        part, spec, feed_nodes, converters = self._partition(fetches, feed_keys)
        fed = {}
        if feed_dict:
            for node, convert, value in zip(feed_nodes, converters, feed_dict.values()):
                fed[node.name] = convert(value)
        traced = metadata.wants_trace(options, run_metadata)
        timeout = getattr(options, "timeout_in_ms", 0) or 0
        for attempt in range(2):
            try:
                results, rows = self._run(part, fed, traced, timeout, resend=attempt > 0)
                break
            except worker.ProgramMissing:
                if attempt:
                    raise
        values = [fed[k] if part.source[k] is None else
                  results[part.source[k]][part.stages[part.source[k]].outputs.index(k)]
                  for k in part.fetches]
        if traced:
            metadata.fill(run_metadata, rows, self._transfers(part, rows, fed),
                          self.cluster.dashboard_link)
        if spec.single and not spec.post:
            return values[0]
        if spec.fed_strings:
            values = spec.as_fed(values, list(feed_dict.values()))
        return spec.rebuild(values)

    def _run(self, part, fed, traced, timeout_ms, resend=False):
        client = self.cluster.client
        addresses = self.addresses(refresh=resend)
        self._run_id += 1
        run_id = self._run_id
        options = self._options()
        # Undo copies are kept where a run can be rolled back: across workers (one may die
        # mid-run) and under a deadline (a stage may have run before the deadline cancels the
        # run), so a run that raises has changed no variable.
        transactional = len(part.workers) > 1 or bool(timeout_ms)
        futures, used = [], {}
        for s in part.stages:
            address = self.address_of(s.worker, addresses)
            used.setdefault(address, s.worker)
            program = s.program
            sent = self._sent.setdefault(address, set())
            payload = program if resend or program.program_id not in sent else None
            upstream, slot, picks = [], {}, []
            for key in s.inputs:
                src = part.source[key]
                if src is None:
                    picks.append((0, fed[key]))
                    continue
                if src not in slot:
                    slot[src] = len(upstream)
                    upstream.append(futures[src])
                picks.append((1, slot[src], part.stages[src].outputs.index(key)))
            for src in s.after:  # run after these (control dependencies) as well
                if src not in slot:
                    slot[src] = len(upstream)
                    upstream.append(futures[src])
            message = (self.key, s.worker, program.program_id, payload, program.n_outputs,
                       options, transactional, traced)
            futures.append(client.submit(
                worker.run_stage, message, run_id, tuple(picks), *upstream,
                key=f"{self.key}-{run_id}-{s.index}", workers=[address],
                allow_other_workers=False, pure=False))
            if payload is not None:
                sent.add(program.program_id)
                self.programs_sent += 1
        self._wait(futures, part, used, run_id, timeout_ms)
        wanted = sorted({part.source[k] for k in part.fetches if part.source[k] is not None})
        if traced:  # every stage's rows, those that fetch nothing (assigns) too
            wanted = list(range(len(futures)))
        try:
            gathered = self._gather([futures[i] for i in wanted], futures, part, used,
                                    run_id) if wanted else []
        except Exception:  # noqa: BLE001 - a worker that died after its stage finished
            alive = self.cluster.worker_info()
            dead = [a for a in used if a not in alive]
            if dead:
                self._lost(dead, futures, part, used, run_id)
            raise
        for f in futures:  # released now: Dask must not keep (or redo) a finished run
            f.release()
        results, rows = {}, []
        for i, r in zip(wanted, gathered):
            if traced:
                r, stage_rows = r
                rows.extend(stage_rows)
            results[i] = r
        return results, rows

    def _gather(self, wanted, futures, part, used: dict, run_id: int) -> list:
        """The results of the finished stages ``wanted``. A worker that dies after its stage
        finished takes the result with it, and Dask's gather would then wait for a rerun
        that never comes (a stage never runs twice): so each try is bounded, and between
        tries a dead worker ends the run with :class:`WorkerLostError`. The bound doubles
        each time, so a large fetch is never cut off for good."""
        client = self.cluster.client
        bound = 4 * POLL_SECONDS
        while True:
            try:
                return client.sync(client._gather, wanted, direct=True,
                                   callback_timeout=bound)
            except TimeoutError:
                alive = self.cluster.worker_info()
                dead = [a for a in used if a not in alive]
                if dead:
                    self._lost(dead, futures, part, used, run_id)
                bound *= 2

    def _wait(self, futures, part, used: dict, run_id: int, timeout_ms: int) -> None:
        """Wait for every stage; a dead worker, an error or the deadline ends the wait."""
        from distributed.client import _wait  # the extra's, imported once a pool exists

        client = self.cluster.client
        start = time.monotonic()
        while True:
            poll = POLL_SECONDS
            if timeout_ms:
                poll = max(0.001, min(poll, timeout_ms / 1e3 - (time.monotonic() - start)))
            try:  # an erred stage is done too (and so are the stages that read it)
                client.sync(_wait, futures, timeout=poll)
            except TimeoutError:
                pass
            failed = [f for f in futures if f.status == "error"]
            if failed:
                self._raise(failed, futures, part, used, run_id)
            if all(f.status == "finished" for f in futures):
                return
            alive = self.cluster.worker_info()
            dead = [a for a in used if a not in alive]
            if dead:
                self._lost(dead, futures, part, used, run_id)
            if timeout_ms and (time.monotonic() - start) * 1e3 > timeout_ms:
                client.cancel(futures)
                self._rollback(list(used), run_id)
                raise DeadlineExceededError(
                    f"the run took longer than RunOptions(timeout_in_ms={timeout_ms}); it was "
                    f"cancelled and rolled back on {', '.join(sorted(used.values()))}")

    def _raise(self, failed, futures, part, used, run_id):
        """The error of the earliest failed stage (the others failed because of it)."""
        from distributed.scheduler import KilledWorker  # the extra's package

        order = {f.key: i for i, f in enumerate(futures)}
        first = min(failed, key=lambda f: order[f.key])
        exc = first.exception()
        if isinstance(exc, KilledWorker):
            last = getattr(exc, "last_worker", None)
            address = getattr(last, "address", None)
            dead = [address] if address in used else \
                [part_addr for part_addr, name in used.items()
                 if name == part.stages[order[first.key]].worker]
            self._lost(dead, futures, part, used, run_id)
        self.cluster.client.cancel(futures)
        if len(used) > 1:
            self._rollback(list(used), run_id)
        if isinstance(exc, worker.ProgramMissing):
            raise exc
        if isinstance(exc, worker.RemoteOpError):
            cls = getattr(errors, exc.kind, None)
            if not (isinstance(cls, type) and issubclass(cls, OpError)):
                cls = OpError
            node = None
            if exc.node_name is not None:
                try:
                    node = self.session.graph.get_node(exc.node_name)
                except Exception:  # noqa: BLE001 - a node the worker's passes made (fused)
                    node = None
            raise cls(exc.message, node=node) from None
        raise exc

    def _lost(self, dead: list, futures, part, used: dict, run_id: int):
        """Roll the run back on the live workers and raise WorkerLostError for ``dead``."""
        client = self.cluster.client
        client.cancel(futures)
        alive = [a for a in used if a not in dead]
        self._rollback(alive, run_id)
        for a in dead:
            self._sent.pop(a, None)
        self.cluster.mark_dead(dead)  # wait_for_workers waits until they are gone
        self._addresses = None
        lines = []
        for address in dead:
            name = used.get(address, "a worker")
            held = [n.name for s in part.stages if s.worker == name for n in s.nodes]
            shown_nodes = ", ".join(f"'{n}'" for n in held[:12])
            more = f" and {len(held) - 12} more" if len(held) > 12 else ""
            lines.append(f"{name} ({address}) died during the run; it held the nodes "
                         f"{shown_nodes or 'of no stage'}{more}")
        others = ", ".join(sorted(used[a] for a in alive)) or "no other worker"
        raise WorkerLostError(
            "\n".join(lines) + f"\n  the run was rolled back on {others}: their variables "
            "are as before it.\n  Once a worker takes its place (pool.wait_for_workers(n)), "
            "restore its variables from a checkpoint (kg.load(path, into=sess)) and run "
            "again.", node=None)

    def _rollback(self, addresses: list, run_id: int) -> None:
        if not addresses:
            return
        try:
            self.cluster.client.run(worker.rollback, self.key, run_id, workers=addresses,
                                    on_error="return")
        except Exception:  # noqa: BLE001 - a survivor that died too has nothing to undo
            pass

    def _transfers(self, part, rows, fed) -> list:
        """The run's cross-worker transfers for run metadata: from the end of the stage
        that made the value to the start of the first stage that read it."""
        bounds = {}
        for r in rows:
            lo, hi = bounds.get(r["device"].rsplit("/", 1)[0], (float("inf"), 0.0))
            bounds[r["device"].rsplit("/", 1)[0]] = (min(lo, r["start_us"]),
                                                    max(hi, r["start_us"] + r["duration_us"]))
        sizes = part.transfer_bytes({k: getattr(v, "shape", ()) for k, v in fed.items()})
        found = []
        for t in part.transfers:
            src, dst = bounds.get(t.src), bounds.get(t.dst)
            if src is None or dst is None:
                continue
            found.append({"name": t.key, "src": t.src, "dst": t.dst, "start_us": src[1],
                          "end_us": max(src[1], dst[0]), "nbytes": sizes.get(t.key) or 0})
        return found

    # -- variables (checkpoints) -----------------------------------------------------------
    def _by_worker(self, variables) -> dict:
        """{address: [variable nodes]} for ``variables`` (a graph's Variable nodes)."""
        addresses = self.addresses(refresh=True)
        found: dict = {}
        for v in variables:
            name = v.device.worker or "worker:0"
            found.setdefault(self.address_of(name, addresses), []).append(v)
        return found

    def pull_variables(self) -> dict:
        """Copy every set variable of the graph from its worker into ``session._store``
        (what ``kg.save(path, sess)`` reads); returns that store."""
        store = self.session._store
        store.clear()
        for address, nodes in self._by_worker(self.session.graph.variables).items():
            got = self.cluster.client.run(worker.get_variables, self.key,
                                          [v.name for v in nodes], workers=[address])[address]
            for v in nodes:
                if v.name in got:
                    store[v] = got[v.name]
        return store

    def push_variables(self, values: dict) -> None:
        """Set variables ({variable node: host array}) on their workers (a checkpoint
        restored, or a replaced worker given its variables back)."""
        options = self._options()
        for address, nodes in self._by_worker(list(values)).items():
            self.cluster.client.run(worker.set_variables, self.key,
                                    {v.name: values[v] for v in nodes}, options,
                                    workers=[address])

    def explain(self, fetches, feed_dict=None) -> str:
        """The partition of a run: stages, their workers, and the transfers with their bytes."""
        feed_keys = tuple(feed_dict or ())
        part, _, feed_nodes, _ = self._partition(fetches, feed_keys)
        shapes = {n.name: np.shape(v) for n, v in zip(feed_nodes, (feed_dict or {}).values())
                  if v is not None}
        return part.explain(shapes)

    def close(self) -> None:
        """Free the session's state on the workers; close a client made for an address."""
        try:
            if self.cluster.client.status == "running":
                self.cluster.client.run(worker.release, self.key, on_error="return")
        except Exception:  # noqa: BLE001 - a pool already gone has nothing left to free
            pass
        if self._owns:
            self.cluster.close()

    def __repr__(self):
        return f"<kg.distributed runner {self.key} on {self.cluster!r}>"


def _as_array(value):
    """A value fed to a GPU placeholder: the worker converts and uploads it."""
    return np.asarray(value)


def make_runner(session, target) -> Runner:
    """The Session's hook: a Runner for ``target`` (see :func:`.cluster.connect`)."""
    if target in (None, "") or node_of(target) is not None:
        raise ValueError(f"Session(target={shown(target)}): not a cluster")
    return Runner(session, target)


_session.REMOTE[:] = [make_runner]
