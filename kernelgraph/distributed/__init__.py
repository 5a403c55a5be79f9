"""A pool of devices on Dask: a static graph whose nodes are placed on workers runs as one
sub-plan per worker of a Dask cluster (``pip install 'kernelgraph[distributed]'``).

>>> import kernelgraph as kg
>>> import kernelgraph.distributed
>>> g = kg.Graph()
>>> with g.as_default():
...     x = kg.placeholder(kg.float32, shape=[3], name="x")
...     with kg.device("/job:worker/task:0"):      # or "worker:0", "worker:0/cuda:0"
...         w = kg.Variable([1.0, 2.0, 3.0], name="w")
...         h = kg.exp(x) * w
...     with kg.device("worker:1"):
...         y = kg.reduce_sum(h)
...     init = kg.global_variables_initializer()
>>> with kg.distributed.local(2) as pool:                         # doctest: +SKIP
...     with kg.Session(graph=g, target=pool) as sess:
...         _ = sess.run(init)
...         sess.run(y, {x: [0.0, 0.0, 0.0]})
6.0

- :func:`local` starts a ``LocalCluster`` (worker processes on this machine) and returns a
  :class:`Cluster`; :func:`connect` wraps a ``dask.distributed.Client`` or a scheduler
  address. ``"worker:i"`` is the Dask worker *named* ``i`` (:mod:`.cluster`).
- ``kg.Session(target=pool | client | "tcp://host:8786")`` partitions each run into stages
  (:mod:`.partition`, :mod:`.transfer`), runs each as one Dask task on its worker, compiled
  and kept there (:mod:`.worker`); variables live on their worker across runs (:mod:`.runner`).
- A worker that dies during a run raises :class:`WorkerLostError` naming it and its nodes;
  the other workers' variables are rolled back to before the run; ``kg.save(path, sess)``
  gathers every variable and ``kg.load(path, into=sess)`` restores them on their workers.
- Data-parallel training (:mod:`.replicas`), run metadata and the timeline
  (:mod:`.metadata`, :mod:`.timeline`).

Dask itself is imported only when a pool is started or connected.

PyTorch's process group (``torch.distributed``: ``init_process_group``, ``all_reduce``,
``broadcast``, ``barrier``, ``get_rank`` ...) lives beside the pool, in
:mod:`.process_group`: the same program in several processes meeting over TCP, for
``nn.parallel.DistributedDataParallel``. ``torch.distributed.checkpoint`` (:mod:`.checkpoint`)
and the activation-checkpoint wrapper (:mod:`.algorithms._checkpoint.checkpoint_wrapper`) are
submodules imported on first use.
"""

from __future__ import annotations

from . import metadata, partition, process_group, replicas, runner, timeline, transfer, worker
from .cluster import Cluster, connect, local
from .metadata import RunMetadata, RunOptions
from .replicas import ClusterSpec, DataParallel, average_gradients, replica_device_setter
from .runner import DeadlineExceededError, WorkerLostError
from .timeline import Timeline  # docs and notebook 10 use kg.distributed.Timeline

__all__ = ["Cluster", "ClusterSpec", "DataParallel", "DeadlineExceededError", "RunMetadata",
           "RunOptions", "WorkerLostError", "average_gradients", "connect", "local", "metadata",
           "partition", "replica_device_setter", "replicas", "runner", "timeline", "transfer",
           "worker"]
__all__ += ["Timeline"]
from .process_group import *  # noqa: E402, F403 - torch.distributed's process group names
from .process_group import __all__ as _pg_all  # noqa: E402

__all__ += ["process_group", *_pg_all]
