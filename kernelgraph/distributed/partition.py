"""The plan partitioned: a run's fetched subgraph split into one sub-program per worker
stage, with explicit transfers where edges cross workers.

A node placed with ``with kg.device("worker:1"):`` (or ``"/job:worker/task:1"``,
``"worker:1/cuda:0"``) lives on a worker; a node with no worker goes to ``default_worker``
(``"worker:0"``, as TF1 runs unplaced ops on the master's task). Where a node reads a value
computed on another worker, the graph already holds the ``to_device`` node that
:func:`kernelgraph.static.build.placed` inserted: the value moves there, and nowhere else.

>>> import kernelgraph as kg
>>> from kernelgraph.distributed.partition import partition
>>> g = kg.Graph()
>>> with g.as_default():
...     x = kg.placeholder(kg.float32, shape=[4, 3], name="x")
...     with kg.device("worker:0"):
...         h = kg.relu(x * 2.0)
...     with kg.device("worker:1"):
...         y = kg.reduce_sum(h, axis=1)
>>> p = partition([y], [x])
>>> [(s.index, s.worker) for s in p.stages]
[(0, 'worker:0'), (1, 'worker:1')]
>>> [(t.key, t.src, t.dst, t.nbytes) for t in p.transfers]
[('relu', 'worker:0', 'worker:1', 48)]
>>> p.stages[0].inputs, p.stages[0].outputs, p.stages[1].inputs, p.fetches
(['x'], ['relu'], ['relu'], ['sum'])

**Stages, not one task per worker.** A worker's nodes usually cannot run as one task: in
data-parallel training the parameter worker sends its variables to the others, and later
averages the gradients they send back (worker:0 -> worker:1 -> worker:0). So each node
gets a *level*, at first the most worker crossings on any path into it, and a
:class:`Stage` is the nodes of one worker at one level. Every edge between stages goes to
a higher level (or stays on one worker), so the stages, in :attr:`Partition.stages` order,
are a DAG in topological order: run each as one task on its worker, after the stages it
reads (:attr:`Stage.after`). A graph split in two along its data flow is two stages.

Since a task's outputs exist only once all of it has run, the levels are then adjusted
so that the workers overlap: variables another worker reads go out in a stage of their
own, first; a stage that both sends and computes for itself runs what it sends first
(:func:`kernelgraph.distributed.replicas.send_first`); and a worker's stage that sends
nothing to another worker joins its next stage where that loses no overlap (a stage is a
task: about a millisecond of scheduling). ``Stage.level`` is the stage's rank in that
order (0, 1, 2 ...).

**Values by key.** Every value that leaves a stage has a *key*: the name of the user's node
that computes it (unique in its graph). The client sends feeds by key
(:attr:`Partition.feeds`: key -> the fed node); stage ``s`` returns the values of
``s.outputs`` (a tuple, in that order: values other stages read, then the user's fetches
it computes) and takes the values of ``s.inputs`` (feeds, and other stages' outputs) as
arguments, in that order. :attr:`Partition.fetches` gives the key of each user fetch, in
the user's order (repeats allowed); :attr:`Partition.source` says which stage outputs a key
(None: a feed from the client). Values travel as NumPy arrays (a stage's plan fetches its
outputs, which downloads them from its GPU; a receiving ``to_device`` node uploads again).

**Transfers.** :attr:`Partition.transfers` lists the values that cross workers, each a
:class:`Transfer` with its source and destination workers and ``nbytes`` (None until the
shape is known: :meth:`Partition.transfer_bytes` computes it from fed shapes). A value
passed between two stages of the *same* worker is a *carry* (:attr:`Partition.carries`):
Dask keeps it in that worker's memory, nothing crosses the network.

**Sub-programs.** :attr:`Stage.program` is a :class:`SubProgram`: a plain-data description
of the stage's nodes (op names, input indices, attrs, shapes, dtypes, *local* device names,
node names and source lines; no op card, no Graph, no closure), small to ship and safe to
cache. On the worker, :meth:`SubProgram.build` makes real nodes of a fresh Graph and
returns ``(fetch_nodes, feed_nodes)`` ready for ``kernelgraph.static.plan.Plan`` (or a
``PlanFamily``): inputs are placeholders, outputs are fetches, devices are local
(``worker:1/cuda:0`` is ``cuda:0`` on worker 1), so the passes, fusion and memory plan run
as in one process. Variables are rebuilt once per worker: ``build(variables)`` takes a dict
(variable name -> node) that the worker keeps across runs and plans, so the node objects
that key its variable store stay the same. :attr:`SubProgram.program_id` is a content hash:
the worker caches the compiled stage by it, and an unchanged graph sends no program again.

**Effects.** A cross-stage control input (``kg.group`` of assigns on two workers, the
variables initializer) becomes a *target* of the stage that computes it
(:attr:`Stage.targets`: run for its effect; its value is not returned) and an ``after``
dependency of the stage that waited for it. Variables and constants are never carried
between stages of one worker: each stage that reads them reads its own copy of the node
(a variable read is a read of the worker's store). :attr:`Partition.variables` says which
variables live on which worker (for checkpoints: gather each from its worker by name).

API used by :mod:`kernelgraph.distributed.runner`: :func:`partition`, :class:`Partition`,
:class:`Stage`, :class:`Transfer`, :class:`SubProgram` (from :mod:`.subprogram`),
:func:`worker_of`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import devices
from ..errors import describe_location
from ..graph import Node
from ..static.program import needed
from ..static.variables import read_inputs, variable_op
from . import transfer
from .replicas import send_first  # stages that send run that part first
from .subprogram import NodeSpec, SubProgram  # noqa: F401 - part of this module's API

#: Where a node with no worker runs (TF1 runs unplaced ops on the master's task).
DEFAULT_WORKER = "worker:0"


def worker_of(node: Node, default: str = DEFAULT_WORKER) -> str:
    """The worker ``node`` runs on: its device's worker, else ``default``.

    >>> import kernelgraph as kg
    >>> g = kg.Graph()
    >>> with g.as_default(), kg.device("/job:worker/task:1"):
    ...     a = kg.constant(1.0)
    >>> worker_of(a), worker_of(kg.constant(2.0))
    ('worker:1', 'worker:0')
    """
    return node.device.worker or default


def worker_order(name: str) -> tuple:
    """Sort key of worker names: by job name, then task number (``worker:2`` before
    ``worker:10``)."""
    job, _, task = name.rpartition(":")
    return (job, int(task) if task.isdigit() else 0, name)


def _replicated(n: Node) -> bool:
    """Sources that every stage of their worker reads itself instead of receiving them:
    a variable (a read of the worker's store) and a constant (its value is in the program)."""
    return n.op is variable_op or (n.op.name == "const" and not n.inputs)


@dataclass(frozen=True)
class Transfer:
    """A value that crosses workers: ``key`` (its node's name) computed by stage ``src_stage``
    on ``src``, read by ``dst_stages`` on ``dst``. ``nbytes``: what it moves, None while a
    dim is unknown (:meth:`Partition.transfer_bytes` knows it for fed shapes)."""

    key: str
    node: Node = field(repr=False)
    src: str
    dst: str
    src_stage: int
    dst_stages: tuple
    shape: tuple | None
    dtype: np.dtype
    nbytes: int | None
    receivers: tuple = ()  # names of the nodes on ``dst`` that read it (its to_device nodes)

    @property
    def crosses(self) -> bool:
        """Whether the value crosses the network (False for a carry within one worker)."""
        return self.src != self.dst


@dataclass
class Stage:
    """The nodes of one worker at one level: one task on that worker per run.

    ``inputs``: keys it takes (feeds and other stages' outputs), in its program's feed order;
    ``outputs``: keys it returns, in its program's fetch order; ``targets``: nodes it runs
    only for their effect; ``after``: indices of the stages that must run first."""

    index: int
    worker: str
    level: int
    nodes: list = field(repr=False)  # the user's nodes it computes, in creation order
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    targets: list = field(default_factory=list, repr=False)
    after: tuple = ()
    program: SubProgram | None = field(default=None, repr=False)


@dataclass
class Partition:
    """A run's subgraph split across workers (see the module docstring)."""

    stages: list
    feeds: dict  # key -> the fed node (only those some stage reads, or fetched)
    fetches: list  # the key of each user fetch, in order
    source: dict  # key -> the index of the stage that outputs it (feeds: None)
    transfers: list  # Transfer values that cross workers
    carries: list  # Transfer values passed between stages of one worker
    variables: dict  # worker -> [its Variable nodes that this run reads or writes]
    workers: list  # the workers this run uses, in worker order

    def transfer_bytes(self, feed_shapes: dict | None = None) -> dict:
        """The bytes each cross-worker transfer moves (key -> int, None where unknown),
        with unknown dims taken from ``feed_shapes`` (key -> shape of the fed value).

        >>> import kernelgraph as kg
        >>> g = kg.Graph()
        >>> with g.as_default():
        ...     x = kg.placeholder(kg.float32, shape=[None, 3], name="x")
        ...     with kg.device("worker:1"):
        ...         y = kg.exp(x, name="y")
        ...     with kg.device("worker:0"):
        ...         z = kg.reduce_sum(y)
        >>> p = partition([z], [x])
        >>> p.transfer_bytes(), p.transfer_bytes({"x": (10, 3)})
        ({'y': None}, {'y': 120})
        """
        shapes = transfer.shapes_for(self, feed_shapes or {})
        return {t.key: _nbytes(shapes.get(t.key, t.shape), t.dtype) for t in self.transfers}

    def explain(self, feed_shapes: dict | None = None) -> str:
        """The partition as text: each stage's worker, nodes, inputs and outputs, and each
        transfer with the bytes it moves (what ``sess.explain`` shows for a cluster run)."""
        return transfer.describe(self, feed_shapes or {})

    def __str__(self):
        return self.explain()


def partition(fetches, feeds=(), default_worker: str = DEFAULT_WORKER) -> Partition:
    """Split the subgraph a run of ``fetches`` with ``feeds`` computes into stages (see the
    module docstring). ``fetches`` and ``feeds`` are graph nodes (``feeds``: the fed nodes,
    the keys of a feed_dict)."""
    fetches, feeds = list(fetches), list(feeds)
    fed = {id(n) for n in feeds}
    order = needed(fetches, feeds)
    # the variable an assign writes is not read, so not needed, but its stage names it
    written = {id(n.inputs[0]): n.inputs[0] for n in order
               if n.inputs and read_inputs(n) is not n.inputs}
    present = {id(n) for n in order}
    if any(k not in present for k in written):
        order = sorted([*order, *(v for k, v in written.items() if k not in present)],
                       key=lambda n: n.seq)
    home = {id(n): worker_of(n, default_worker) for n in order}
    level: dict[int, int] = {}
    for n in order:
        if id(n) in fed or _replicated(n):
            level[id(n)] = 0
            continue
        lv = 0
        for p in (*read_inputs(n), *n.control_inputs):
            if id(p) in fed:
                continue
            cross = home[id(p)] != home[id(n)]
            if _replicated(p) and not cross:
                continue
            lv = max(lv, level[id(p)] + cross)
        level[id(n)] = lv
    _check_colocated(order, home, fed)
    _merge_local_stages(order, home, level, fed)
    # a stage that sends to other workers runs what they wait for first, so
    # data-parallel replicas overlap instead of running one after another
    send_first(order, home, level, lambda n: id(n) in fed or _replicated(n))

    groups: dict[tuple, list] = {}
    for n in order:
        if id(n) not in fed and not _replicated(n):
            groups.setdefault((level[id(n)], home[id(n)]), []).append(n)

    # replicated sources fetched, or read on another worker, are output by level 0
    remote = set()  # read on another worker
    for c in order:
        for i in (*c.inputs, *c.control_inputs):
            if id(i) in home and home[id(i)] != home[id(c)]:
                remote.add(id(i))
    fetched = {id(f) for f in fetches}
    for n in order:
        if not _replicated(n) or id(n) in fed or not (id(n) in remote or id(n) in fetched):
            continue
        # A stage's outputs exist once all of it has run: variables another worker reads
        # (a parameter server's) go out in a stage of their own, before the worker's own
        # work, so the other replicas need not wait for it.
        first = -1 if id(n) in remote and (0, home[id(n)]) in groups else 0
        groups.setdefault((first, home[id(n)]), []).append(n)
    keys = sorted(groups, key=lambda k: (k[0], worker_order(k[1])))
    dense = {lv: i for i, lv in enumerate(sorted({k[0] for k in keys}))}
    stages = [Stage(i, k[1], dense[k[0]], sorted(groups[k], key=lambda n: n.seq))
              for i, k in enumerate(keys)]
    where: dict[int, int] = {}  # node id -> its stage (replicated: its first home stage)
    for s in stages:
        for n in s.nodes:
            where[id(n)] = s.index

    source: dict = {}
    feeds_by_key: dict = {}
    readers: dict[str, set] = {}
    receivers: dict[tuple, list] = {}  # (key, worker) -> names of the nodes reading it there
    after: dict[int, set] = {s.index: set() for s in stages}
    copies: dict[int, list] = {s.index: [] for s in stages}  # replicated nodes each reads

    def output(n, s_index):
        key = n.name
        if key not in stages[s_index].outputs:
            stages[s_index].outputs.append(key)
        source[key] = s_index
        return key

    def wire(p, s, reader):
        """Stage ``s`` reads node ``p``: internal, a local copy, a feed or another stage's."""
        if id(p) in fed:
            feeds_by_key[p.name] = p
            source[p.name] = None
            if p.name not in s.inputs:
                s.inputs.append(p.name)
            return
        if _replicated(p) and home[id(p)] == s.worker:
            if all(c is not p for c in copies[s.index]) and where.get(id(p)) != s.index:
                copies[s.index].append(p)
            return
        src = where[id(p)]
        if src == s.index:
            return
        key = output(p, src)
        after[s.index].add(src)
        readers.setdefault(key, set()).add(s.index)
        receivers.setdefault((key, s.worker), []).append(reader.name)
        if key not in s.inputs:
            s.inputs.append(key)

    for s in stages:
        for n in s.nodes:
            if _replicated(n):
                continue
            for p in n.inputs:
                wire(p, s, n)
            for c in n.control_inputs:
                if id(c) in fed or _replicated(c) or where.get(id(c)) == s.index:
                    continue
                src = stages[where[id(c)]]
                if all(t is not c for t in src.targets):
                    src.targets.append(c)
                after[s.index].add(src.index)
    fetch_keys = []
    for f in fetches:
        if id(f) in fed:
            feeds_by_key[f.name] = f
            source[f.name] = None
        else:
            output(f, where[id(f)])
        fetch_keys.append(f.name)
    for s in stages:
        s.after = tuple(sorted(after[s.index]))
        s.targets = [t for t in s.targets if t.name not in s.outputs]
    transfers, carries = [], []
    by_name = {n.name: n for n in order}
    for key in sorted(readers, key=lambda k: (source[k], k)):
        n, src = by_name[key], stages[source[key]]
        for dst_worker in sorted({stages[r].worker for r in readers[key]}, key=worker_order):
            dst = tuple(sorted(r for r in readers[key] if stages[r].worker == dst_worker))
            t = Transfer(key, n, src.worker, dst_worker, src.index, dst, n.shape, n.dtype,
                         _nbytes(n.shape, n.dtype), tuple(receivers[(key, dst_worker)]))
            (transfers if t.crosses else carries).append(t)
    variables: dict = {}
    for n in order:
        if n.op is variable_op and id(n) not in fed:
            variables.setdefault(home[id(n)], []).append(n)
    part = Partition(stages, feeds_by_key, fetch_keys, source, transfers, carries, variables,
                     sorted({s.worker for s in stages}, key=worker_order))
    for s in stages:
        s.program = SubProgram.of(s, copies[s.index], by_name, feeds_by_key)
    return part


def _merge_local_stages(order, home, level, fed) -> None:
    """Move a worker's stage that sends nothing to another worker into the next stage of
    that worker that reads it, where that loses nothing: a stage is a task (a millisecond
    of scheduling), while a stage of its own can overlap the other workers' stages of its
    levels. So it moves when no other worker has a stage to overlap (levels ``[L, L')``),
    or when its work is trivial (copies, views, values of at most :data:`CHEAP` elements). The
    levels stay a topological order: the moved nodes' inputs are below their old level,
    their readers at or above the new one."""
    computed = [n for n in order if id(n) not in fed and not _replicated(n)]
    readers: dict[int, list] = {}
    for n in computed:
        for p in (*n.inputs, *n.control_inputs):
            readers.setdefault(id(p), []).append(n)
    groups: dict[tuple, list] = {}
    for n in computed:
        groups.setdefault((level[id(n)], home[id(n)]), []).append(n)
    for lv, worker in sorted(groups, key=lambda k: -k[0]):
        later, local = set(), True
        for n in groups[(lv, worker)]:
            for r in readers.get(id(n), ()):
                if home[id(r)] != worker:
                    local = False
                elif level[id(r)] != lv:
                    later.add(level[id(r)])
        if not (local and later):
            continue
        new = min(later)
        alone = not any(w != worker and lv <= other < new for other, w in groups)
        if alone or all(_cheap(n) for n in groups[(lv, worker)]):
            for n in groups[(lv, worker)]:
                level[id(n)] = new


#: Elements a value may have for its node to count as trivial work (see _merge_local_stages).
CHEAP = 4096


def _cheap(n: Node) -> bool:
    if n.op.name == "to_device" and n.device.type == n.inputs[0].device.type:
        return True  # a copy within one worker's host: no work at all
    if "view" in n.op.traits:
        return True  # a transpose, reshape, slice ...: a view, no work
    return n.shape is not None and None not in n.shape and \
        int(np.prod(n.shape, dtype=np.int64)) <= CHEAP


def _check_colocated(order, home, fed) -> None:
    """An assign must run on its variable's worker (it writes that worker's store)."""
    for n in order:
        if id(n) in fed or read_inputs(n) is n.inputs or not n.inputs:
            continue
        var = n.inputs[0]
        if home[id(var)] != home[id(n)]:
            raise devices.DeviceError(
                f"node '{n.name}' writes the variable '{var.name}' on '{home[id(var)]}' but "
                f"is placed on '{home[id(n)]}': a variable is written where it lives\n"
                f"{describe_location(n.location)}")


def _nbytes(shape, dtype) -> int | None:
    if shape is None or any(d is None for d in shape):
        return None
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
