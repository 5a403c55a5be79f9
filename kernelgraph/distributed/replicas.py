"""Data-parallel training: one model, its variables on one worker, a replica per worker.

TF1's *in-graph replication*, spelled as TF1 spells it (``kernelgraph.compat.v1.train``):
a loop over the workers builds one tower per worker, each computing the loss and the
gradients of its shard of the batch; the gradients are averaged where the variables live,
and one update applies them::

    import kernelgraph.compat.v1 as tf
    x, y = tf.placeholder(tf.float32, [256, 64]), tf.placeholder(tf.int64, [256])
    with tf.device("/job:worker/task:0"):             # the variables' worker (TF1's ps)
        w = tf.Variable(tf.zeros([64, 10]))
    opt, towers = tf.train.GradientDescentOptimizer(0.1), []
    for i, (xs, ys) in enumerate(zip(tf.split(x, 2), tf.split(y, 2))):
        with tf.device(tf.train.replica_device_setter(
                worker_device=f"/job:worker/task:{i}", ps_device="/job:worker/task:0",
                ps_tasks=1)):
            loss = tf.losses.sparse_softmax_cross_entropy(ys, tf.matmul(xs, w))
            towers.append(opt.compute_gradients(loss))
    train = opt.apply_gradients(kg.distributed.average_gradients(towers))

With ``kg.nn`` modules the same is one wrapper, PyTorch's name for it: :class:`DataParallel`
splits each input's batch across the workers, runs a replica of the module on each, and
gathers the outputs on the first (where the variables live); ``opt.minimize(loss)`` then
computes each replica's gradients on its worker and sums them where the variables are.

Because every replica reads the same variables and the shards' gradients are averaged (or,
through :class:`DataParallel`, the loss is that of the whole batch), the trained weights
equal single-process training's on the same data, to float rounding.

:func:`replica_device_setter` returns a device scope that places each op as TF1's device
function does: variables on the ps task (round-robin over ``ps_tasks``), everything else on
``worker_device``. kernelgraph runs every job on the Dask cluster's workers, so a ps task is
a worker: name it ``/job:worker/task:0``, or give a :class:`ClusterSpec` whose ``ps``
addresses are workers' addresses (then ``/job:ps/task:k`` means that worker).
"""

from __future__ import annotations

import re

from .. import devices
from ..eager import Tensor
from ..graph import Node
from ..nn.module import Module
from ..ops import concat, split

#: the op names TF1's replica_device_setter puts on the ps (its STANDARD_PS_OPS), as
#: kernelgraph calls them.
STANDARD_PS_OPS = ("variable",)
_JOB = re.compile(r"^/?job:([A-Za-z_][\w-]*)(?:/replica:\d+)?(?:/task:(\d+))?(/.*)?$")


class ClusterSpec:
    """TF1's ``tf.train.ClusterSpec``: the jobs of a cluster and their tasks' addresses.

    >>> import kernelgraph as kg
    >>> spec = kg.distributed.ClusterSpec({"worker": ["tcp://10.0.0.1:8786",
    ...                                               "tcp://10.0.0.2:8786"]})
    >>> spec.jobs, spec.num_tasks("worker"), spec.task_address("worker", 1)
    (['worker'], 2, 'tcp://10.0.0.2:8786')
    """

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        if not isinstance(cluster, dict):
            raise TypeError(f"ClusterSpec needs a dict of job name -> list of addresses (or "
                            f"dict of task index -> address), got {type(cluster).__name__}")
        self._jobs: dict[str, dict[int, str]] = {}
        for job, tasks in cluster.items():
            if not isinstance(job, str):
                raise TypeError(f"ClusterSpec: a job name must be a str, got {job!r}")
            if isinstance(tasks, dict):
                self._jobs[job] = {int(k): str(v) for k, v in sorted(tasks.items())}
            elif isinstance(tasks, list | tuple):
                self._jobs[job] = {i: str(a) for i, a in enumerate(tasks)}
            else:
                raise TypeError(f"ClusterSpec: the tasks of job '{job}' must be a list or a "
                                f"dict of addresses, got {type(tasks).__name__}")

    @property
    def jobs(self) -> list[str]:
        return list(self._jobs)

    def as_dict(self) -> dict:
        """``{job: [address, ...]}`` (a dict of task index -> address where indices skip)."""
        out = {}
        for job, tasks in self._jobs.items():
            dense = list(tasks) == list(range(len(tasks)))
            out[job] = list(tasks.values()) if dense else dict(tasks)
        return out

    def num_tasks(self, job_name: str) -> int:
        return len(self._tasks(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        return list(self._tasks(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        tasks = self._tasks(job_name)
        if task_index not in tasks:
            raise ValueError(f"No task with index {task_index} in job {job_name}")
        return tasks[task_index]

    def job_tasks(self, job_name: str) -> list[str]:
        return list(self._tasks(job_name).values())

    def _tasks(self, job_name):
        if job_name not in self._jobs:
            raise ValueError(f"No such job in cluster: {job_name!r}")
        return self._jobs[job_name]

    def __bool__(self):
        return bool(self._jobs)

    def __eq__(self, other):
        return isinstance(other, ClusterSpec) and other._jobs == self._jobs

    __hash__ = None

    def __repr__(self):
        return f"ClusterSpec({self.as_dict()})"


def _parse(spec: str) -> devices.Device:
    """The kernelgraph device a TF1 device string names; a task with no device type is its
    CPU (``/job:worker/task:1`` is ``worker:1/cpu``)."""
    try:
        return devices.device(spec)
    except ValueError:
        return devices.device(spec.rstrip("/") + "/device:CPU:0")


class _ReplicaDeviceChooser(devices.Device):
    """The scope :func:`replica_device_setter` returns: a Device (the worker device, for
    ``with``) whose :meth:`choose` places each new op (``kernelgraph.graph`` asks it)."""

    __slots__ = ("ps_devices", "ps_ops", "strategy", "worker_device")

    def __init__(self, worker_device, ps_devices, ps_ops, strategy):
        super().__init__(worker_device.type, worker_device.index, worker_device.worker)
        self.worker_device, self.ps_devices = worker_device, ps_devices
        self.ps_ops, self.strategy = tuple(ps_ops), strategy

    def choose(self, op) -> devices.Device:
        if self.ps_devices and op.name in self.ps_ops:
            return self.ps_devices[self.strategy(op) % len(self.ps_devices)]
        return self.worker_device

    def __call__(self, op) -> str:
        """TF1's device function: the device name for ``op`` (an op card or a node)."""
        return self.choose(getattr(op, "op", op)).name

    def __repr__(self):
        ps = ", ".join(d.name for d in self.ps_devices)
        return f"replica_device_setter(worker_device={self.worker_device.name!r}, ps=[{ps}])"


class _RoundRobin:
    def __init__(self):
        self.next = 0

    def __call__(self, op) -> int:
        task, self.next = self.next, self.next + 1
        return task


def replica_device_setter(ps_tasks: int = 0, ps_device: str = "/job:ps",
                          worker_device: str = "/job:worker", merge_devices: bool = True,
                          cluster=None, ps_ops=None, ps_strategy=None):
    """TF1's ``tf.train.replica_device_setter``: use as ``with kg.device(setter):``.

    Variables made in its scope go to the ps tasks (``ps_device/task:k``, round-robin, or
    ``ps_strategy(op) -> k``), every other op to ``worker_device``. With a ``cluster``,
    ``ps_tasks`` is the size of its ``ps`` job, and a job's task whose address is a
    worker's address means that worker. As in TF1, None when there are no ps tasks.

    >>> import kernelgraph as kg
    >>> with kg.Graph().as_default():
    ...     with kg.device(kg.distributed.replica_device_setter(
    ...             ps_tasks=1, ps_device="/job:worker/task:0",
    ...             worker_device="/job:worker/task:1")):
    ...         w = kg.Variable(1.0, name="w")
    ...         y = w * 2.0
    >>> w.device, y.device
    (device('worker:0/cpu'), device('worker:1/cpu'))
    """
    if cluster is not None:
        spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
        m = _JOB.match(ps_device)
        ps_job = m.group(1) if m else "ps"
        if ps_job not in spec.jobs:
            return None
        ps_tasks = spec.num_tasks(ps_job)
    else:
        spec = None
    if ps_tasks == 0:
        return None
    del merge_devices  # kernelgraph's innermost device scope wins (TF1's merge is its default)
    if _JOB.match(ps_device) and _JOB.match(ps_device).group(2) is not None:
        ps_specs = [ps_device] * ps_tasks  # a task named already: every ps op goes there
    else:
        ps_specs = [f"{ps_device.rstrip('/')}/task:{k}" for k in range(ps_tasks)]
    ps = [_parse(_on_worker_job(s, spec)) for s in ps_specs]
    worker = _parse(_on_worker_job(worker_device, spec))
    return _ReplicaDeviceChooser(worker, ps, ps_ops or STANDARD_PS_OPS,
                                 ps_strategy or _RoundRobin())


def _on_worker_job(name: str, spec: ClusterSpec | None) -> str:
    """``name`` with a non-worker job's task replaced by the worker at the same address."""
    m = _JOB.match(name)
    if spec is None or m is None or m.group(1) == "worker":
        return name
    job, task, rest = m.group(1), int(m.group(2) or 0), m.group(3) or ""
    address = spec.task_address(job, task)
    workers = spec.job_tasks("worker") if "worker" in spec.jobs else []
    if address not in workers:
        raise ValueError(
            f"replica_device_setter: task {task} of job '{job}' is at {address}, which is "
            f"no worker's address ({workers}); kernelgraph runs every job on the Dask "
            "cluster's workers, so a ps task must be one of them")
    return f"/job:worker/task:{spec.task_indices('worker')[workers.index(address)]}{rest}"


def average_gradients(tower_grads: list) -> list:
    """The ``(gradient, variable)`` pairs averaged over towers (TF1's multi-GPU example's
    helper): each variable's gradients summed and scaled on the variable's own device.

    ``tower_grads``: one list of ``(gradient, variable)`` per tower (what
    ``opt.compute_gradients`` returns), the same variables in the same order.
    """
    if not tower_grads:
        raise ValueError("average_gradients needs the gradients of at least one tower")
    first = list(tower_grads[0])
    for k, tower in enumerate(tower_grads):
        if len(tower) != len(first) or any(v is not w for (_, v), (_, w) in zip(tower, first)):
            raise ValueError(f"average_gradients: tower {k} has other variables than tower 0 "
                             "(each tower must compute the gradients of the same variables)")
    averaged = []
    for i, (_, var) in enumerate(first):
        grads = [tower[i][0] for tower in tower_grads]
        if any(g is None for g in grads):
            averaged.append((None, var))
            continue
        with var.device:  # averaged where the variable lives: one value crosses per tower
            total = grads[0]
            for g in grads[1:]:
                total = total + g
            averaged.append((total * (1.0 / len(grads)) if len(grads) > 1 else total, var))
    return averaged


class DataParallel(Module):
    """PyTorch's ``nn.DataParallel`` across workers, in static mode: ``DataParallel(model,
    ["worker:0", "worker:1"])(x)`` splits ``x`` (and every other graph input) along
    ``dim`` into one shard per worker, runs ``model`` on each shard on its worker, and
    concatenates the outputs on ``output_device`` (the first worker), where the model's
    variables live. A batch must split evenly.

    >>> import kernelgraph as kg
    >>> model = kg.nn.Linear(3, 2)
    >>> with kg.Graph().as_default():
    ...     x = kg.placeholder(kg.float32, shape=[4, 3])
    ...     y = kg.distributed.DataParallel(model, ["cpu", "cpu"])(x)
    >>> y.shape
    (4, 2)
    """

    def __init__(self, module: Module, workers=("worker:0", "worker:1"), output_device=None,
                 dim: int = 0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel wraps a kg.nn.Module, got {type(module).__name__}")
        workers = [workers] if isinstance(workers, str | devices.Device) else list(workers)
        if not workers:
            raise ValueError("DataParallel needs at least one worker")
        self.module = module
        self.workers = [_parse(str(w)) for w in workers]
        self.output_device = _parse(str(output_device)) if output_device is not None \
            else self.workers[0]
        self.dim = dim

    def forward(self, *inputs):
        graph_inputs = [i for i in inputs if isinstance(i, Node)]
        if not graph_inputs or any(isinstance(i, Tensor) for i in inputs):
            raise TypeError("DataParallel runs in static mode: call it on graph nodes "
                            "(kg.placeholder ...) and run it in a kg.Session whose target "
                            "is a Dask cluster")
        n = len(self.workers)
        graph = graph_inputs[0].graph
        with self.output_device:  # the variables and the split batch live here
            self.module.variables(graph)
            shards = [split(i, n, axis=self.dim) if isinstance(i, Node) else [i] * n
                      for i in inputs]
        outputs = []
        for k, worker in enumerate(self.workers):
            with worker:
                outputs.append(self.module(*[s[k] for s in shards]))
        if n == 1:
            return outputs[0]
        with self.output_device:
            return concat(outputs, axis=self.dim)

    def extra_repr(self) -> str:
        return f"workers={[w.name for w in self.workers]}"



def send_first(order, home: dict, level: dict, skip) -> None:
    """Split each worker's stage that both sends values to other workers and computes for
    itself, so that the others start as soon as their inputs are ready.

    A stage is one task: its outputs exist only once all of it has run. In data-parallel
    training the variables' worker sends the variables and a shard to the other replicas
    *and* runs its own replica at the same level; as one stage, the other workers would
    wait for that replica to finish, and the replicas would run one after another. So the
    nodes another worker waits for (and what they need on their worker and level) run
    first, and the rest of the stage after them, alongside the other workers.

    ``kernelgraph.distributed.partition`` calls this on its levels (node id -> the most
    worker crossings into it) and homes (node id -> worker); ``skip(n)``: fed or
    replicated nodes, which are no stage's work. Where some stage mixes the two, every
    level becomes ``2 * level`` (what others wait for) or ``2 * level + 1`` (the rest),
    which keeps every edge going to the same or a later stage."""
    computed = [n for n in order if not skip(n)]
    ids = {id(n) for n in computed}
    group = {id(n): (level[id(n)], home[id(n)]) for n in computed}
    first = set()  # nodes whose value another worker reads
    for n in computed:
        for p in (*n.inputs, *n.control_inputs):
            if id(p) in ids and home[id(p)] != home[id(n)]:
                first.add(id(p))
    for n in reversed(computed):  # what they need from their own stage runs first too
        if id(n) in first:
            first.update(id(p) for p in (*n.inputs, *n.control_inputs)
                         if id(p) in ids and group[id(p)] == group[id(n)])
    kinds: dict = {}
    for n in computed:
        kinds.setdefault(group[id(n)], set()).add(id(n) in first)
    mixed = {g for g, k in kinds.items() if len(k) == 2}
    if not mixed:
        return  # every stage sends all or nothing: the levels stand as they are
    for key in level:
        level[key] *= 2
    for n in computed:
        if group[id(n)] in mixed and id(n) not in first:
            level[id(n)] += 1
