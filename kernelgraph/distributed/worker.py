"""What runs on a Dask worker: a session's stages, compiled there once and kept, and the
session's variables that live on that worker.

The client (:mod:`.runner`) sends each stage of a partitioned run (:mod:`.partition`) as one
Dask task calling :func:`run_stage` on the stage's worker. The first time a worker sees a
stage it gets the stage's :class:`~kernelgraph.distributed.partition.SubProgram`, builds its
nodes and compiles them with the ordinary :class:`~kernelgraph.static.plan.PlanFamily`
(passes, fusion, memory plan, one plan per fed shapes); the compiled stage is kept under
the program's id, so later runs send only that id, the feeds and the values crossing from
other workers.

Each (worker, session) pair has a :class:`WorkerSession`: the variable nodes the stages
built (by name, so every stage that reads a variable reads the same node), the variable
store keyed by them (what a local Session keeps in ``_store``), and the compiled stages.
Variables therefore live on their worker across runs, as on a TF1 parameter server.

**Undo.** A run that spans several workers, or has a deadline, is made all-or-nothing:
before a stage writes variables, the worker keeps a copy of their values for that run. If
another worker dies during the run, or the deadline passes, the client calls
:func:`rollback` on the workers left, which puts the copies back (and refuses the run's
stages that have not started), so their variables are as before the run. Only the latest
run's copies are kept.

Everything here runs on the worker; the functions take plain, picklable arguments.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from .. import devices
from ..errors import OpError
from ..static.plan import PlanFamily
from ..static.variables import writes_variable
from . import metadata
from .transfer import to_wire

# (worker address, session key) -> WorkerSession. Module state: one per worker process
# (threads-mode workers of one process share the module, hence the address in the key).
_SESSIONS: dict = {}
_SESSIONS_LOCK = threading.Lock()


class ProgramMissing(RuntimeError):
    """The client referred to a stage this worker has not compiled (it was replaced, or
    its session state freed): the client sends the program again."""


class StaleRun(RuntimeError):
    """A stage asked to run again, or after a newer run began: refused (see run_stage)."""


class RemoteOpError(RuntimeError):
    """An :class:`~kernelgraph.errors.OpError` raised on a worker, in a form that pickles:
    the client raises ``kind`` again, with its own node of that name."""

    def __init__(self, kind: str, message: str, node_name: str | None, worker: str):
        super().__init__(kind, message, node_name, worker)
        self.kind, self.message, self.node_name, self.worker = kind, message, node_name, worker

    def __str__(self):
        return self.message


class CompiledStage:
    """One stage, built into nodes on this worker: its plans (one family per traced/not),
    the variables it writes (saved for undo) and how many values it returns."""

    def __init__(self, state: WorkerSession, program, n_outputs: int):
        self.fetch_nodes, self.feed_nodes = program.build(state.variables)
        self.n_outputs = n_outputs
        self.families: dict = {}
        self.state = state
        self.writes = None  # the variable nodes its plan writes (found on first run)

    def family(self, traced: bool) -> PlanFamily:
        fam = self.families.get(traced)
        if fam is None:
            fam = self.families[traced] = PlanFamily(self.state, self.fetch_nodes,
                                                     self.feed_nodes, traced=traced)
        return fam


class WorkerSession:
    """A session's state on one worker (see the module docstring). Quacks like the
    Session a :class:`PlanFamily` compiles for: ``optimize``, ``skip_passes``,
    ``check_numerics``, ``_store``."""

    def __init__(self, options: dict):
        self.optimize = options.get("optimize", True)
        self.skip_passes = tuple(options.get("skip_passes", ()))
        self.check_numerics = options.get("check_numerics", False)
        self.variables: dict = {}  # variable name -> this worker's node
        self._store: dict = {}  # variable node -> value
        self.pending: dict = {}  # variable name -> value restored before its node was built
        self.stages: dict = {}  # program id -> CompiledStage
        self.lock = threading.RLock()
        self.undo_run = None  # the run whose copies `undo` holds
        self.undo: dict = {}  # variable node -> its value before that run (None: unset)
        self.cancelled: set = set()  # runs rolled back: their late stages must not run
        self.newest_run = 0  # the newest run a stage has started here
        self.ran: set = set()  # (run id, program id) of that run's stages started here

    def adopt_pending(self) -> None:
        """Values restored (by name) before their variable's node existed go to the store."""
        if self.pending:
            for name in [n for n in self.pending if n in self.variables]:
                self._store[self.variables[name]] = self.pending.pop(name)


def _worker():
    from distributed import get_worker  # only ever called on a Dask worker
    return get_worker()


def _state(address: str, session_key: str, options: dict | None) -> WorkerSession:
    key = (address, session_key)
    state = _SESSIONS.get(key)
    if state is None:
        with _SESSIONS_LOCK:
            state = _SESSIONS.get(key)
            if state is None:
                state = _SESSIONS[key] = WorkerSession(options or {})
    return state


def run_stage(message: tuple, run_id: int, picks: tuple, *upstream):
    """Run one stage of run ``run_id`` (a Dask task on the stage's worker).

    ``message``: (session key, worker name, program id, the SubProgram or None when this
    worker has it already, number of outputs, session options, transactional, traced).
    ``picks``: per stage input, ``(0, value)`` (a feed) or ``(1, j, i)`` (output ``i`` of
    the stage whose result is ``upstream[j]``). Returns the tuple of the stage's outputs,
    or ``(outputs, trace rows)`` when traced."""
    session_key, name, program_id, program, n_outputs, options, transactional, traced = message
    address = _worker().address
    state = _state(address, session_key, options)
    with state.lock:
        # Dask recomputes a lost result by running its task again (a worker died holding a
        # later stage's output). A stage has effects (assigns): never run one twice, nor a
        # stage of a run older than one this worker has started.
        if run_id in state.cancelled or run_id < state.newest_run or \
                (run_id, program_id) in state.ran:
            raise StaleRun(f"stage {program_id} of run {run_id} on {name}: that run is over "
                           "(rolled back, or a worker died and Dask tried to redo it)")
        if run_id > state.newest_run:
            state.newest_run, state.ran = run_id, set()
        state.ran.add((run_id, program_id))
        stage = state.stages.get(program_id)
        if stage is None:
            if program is None:
                raise ProgramMissing(program_id)
            stage = state.stages[program_id] = CompiledStage(state, program, n_outputs)
            state.adopt_pending()
        if traced:  # a traced stage returns (outputs, rows)
            upstream = [u[0] for u in upstream]
        args = [p[1] if p[0] == 0 else upstream[p[1]][p[2]] for p in picks]
        family = stage.family(traced)
        try:
            args = [convert(v) for convert, v in zip(family.converters, args)]
            if traced:
                (values, plan), rows = metadata.collect(
                    lambda: _run(stage, family, args, run_id, transactional, state),
                    lambda n: f"{name}/{n.device}", address)
            else:
                values, plan = _run(stage, family, args, run_id, transactional, state)
                rows = None
        except OpError as e:
            raise RemoteOpError(type(e).__name__, f"{e} [on {name}, {address}]",
                                getattr(e.node, "name", None), name) from None
        outputs = tuple(to_wire(v) for v in values[:n_outputs])  # GPU values come home
    return outputs if not traced else (outputs, rows)


def _run(stage: CompiledStage, family: PlanFamily, args, run_id: int, transactional: bool,
         state: WorkerSession):
    plan = family.for_values(args)
    if transactional:
        _keep_undo(state, run_id, plan)
    try:
        return plan.fn(*args), plan
    except OpError:
        raise
    except Exception as e:  # noqa: BLE001 - re-raised naming the node and the user's line
        raise plan.explain(e) from None


def _keep_undo(state: WorkerSession, run_id: int, plan) -> None:
    """Copy the values of the variables ``plan`` writes, once per run (the first stage of
    the run on this worker to write a variable saves it)."""
    if state.undo_run != run_id:
        state.undo_run, state.undo = run_id, {}
    for n in plan.order:
        if writes_variable(n):
            var = n.inputs[0]
            if var not in state.undo:
                value = state._store.get(var)
                state.undo[var] = None if value is None else _copy(value)


def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else devices.to_numpy(value).copy()


# -- called with client.run (on the worker's event loop, never queued behind tasks) --------
def rollback(session_key: str, run_id: int, dask_worker=None) -> bool:
    """Undo run ``run_id`` here: restore the variables its stages wrote, and refuse its
    stages that have not started yet. True when there was something to restore."""
    state = _SESSIONS.get((dask_worker.address, session_key))
    if state is None:
        return False
    with state.lock:
        state.cancelled.add(run_id)
        if state.undo_run != run_id:
            return False
        for var, value in state.undo.items():
            if value is None:
                state._store.pop(var, None)
            else:
                old = state._store.get(var)
                state._store[var] = value if old is None else _restore(old, value)
        state.undo_run, state.undo = None, {}
        return True


def _restore(old, value):
    if isinstance(old, np.ndarray) and old.shape == value.shape and old.flags.writeable:
        np.copyto(old, value)  # in place: a plan's bound buffers keep pointing at it
        return old
    return devices.transfer(value, devices.device_of(old))


def get_variables(session_key: str, names, dask_worker=None) -> dict:
    """{name: host array} of this worker's variables among ``names`` that are set."""
    state = _SESSIONS.get((dask_worker.address, session_key))
    if state is None:
        return {}
    found = {}
    with state.lock:
        for name in names:
            node = state.variables.get(name)
            if node is not None and node in state._store:
                found[name] = np.array(devices.to_numpy(state._store[node]), copy=True)
            elif name in state.pending:
                found[name] = np.array(state.pending[name], copy=True)
    return found


def set_variables(session_key: str, values: dict, options: dict, dask_worker=None) -> int:
    """Set variables by name (a checkpoint restored); a variable whose node this worker has
    not built yet gets its value when a stage builds it. Returns how many were set."""
    state = _state(dask_worker.address, session_key, options)
    with state.lock:
        for name, value in values.items():
            node = state.variables.get(name)
            if node is None:
                state.pending[name] = np.array(value, copy=True)
            else:
                state._store[node] = devices.transfer(np.array(value, copy=True), node.device)
        state.undo_run, state.undo = None, {}
    return len(values)


def release(session_key: str, dask_worker=None) -> bool:
    """Forget a closed session's state on this worker (its variables and stages)."""
    with _SESSIONS_LOCK:
        return _SESSIONS.pop((dask_worker.address, session_key), None) is not None


def identity(dask_worker=None) -> dict:
    """This worker's address, Dask name and process id (for errors and run metadata)."""
    return {"address": dask_worker.address, "name": dask_worker.name, "pid": os.getpid()}
