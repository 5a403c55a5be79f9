"""The pool: a Dask cluster's workers, numbered the way kernelgraph's device names count them.

``kg.distributed.local(n)`` starts a ``LocalCluster`` of ``n`` worker processes (one thread
each) and a ``Client``; ``connect(target)`` wraps what ``kg.Session(target=...)`` was given
(a :class:`Cluster`, a ``dask.distributed.Client``, or a scheduler address such as
``"tcp://10.0.0.5:8786"``). Either way the result is a :class:`Cluster`: a context manager
whose ``workers`` are the Dask workers' addresses in kernelgraph's order.

**Worker numbers.** ``"worker:i"`` (TF1's ``"/job:worker/task:i"``) is the Dask worker
whose *name* is ``i``: ``LocalCluster`` names its workers 0, 1, ... and so does
``dask worker --name i``. A worker that dies and is replaced by its nanny keeps its name,
so it keeps its number (its address changes). Where the names are not all integers the
workers are numbered in the order of their names (then addresses).

>>> import kernelgraph as kg
>>> import kernelgraph.distributed
>>> with kg.distributed.local(2) as pool:          # doctest: +SKIP
...     pool.workers
['tcp://127.0.0.1:40123', 'tcp://127.0.0.1:40125']

Dask is imported only when a cluster is made or connected (``pip install
'kernelgraph[distributed]'``), so importing kernelgraph stays fast.
"""

from __future__ import annotations

import logging
import os
import signal
import time

from ..errors import shown
from . import worker

INSTALL_HINT = "pip install 'kernelgraph[distributed]'"


def _dask():
    """``distributed`` (the Dask package), or an ImportError saying how to install it."""
    try:
        import distributed
    except ImportError as e:  # the extra is optional: say how to get it
        raise ImportError(f"kernelgraph.distributed runs on Dask: {INSTALL_HINT} ({e})") \
            from None
    return distributed


class Cluster:
    """A Dask client (and, for :func:`local`, the cluster it started), as kernelgraph sees
    it: ``workers`` in a stable order, ``dashboard_link``, ``close()``.

    ``owns`` says what :meth:`close` shuts: the client it made and the LocalCluster it
    started; a Client the user passed in is left open.
    """

    def __init__(self, client, cluster=None, owns_client: bool = False):
        self.client = client
        self.cluster = cluster
        self._owns_client = owns_client
        self._closed = False
        self._dead: set = set()  # addresses of workers known dead, maybe still listed

    # -- the workers -----------------------------------------------------------------------
    def worker_info(self) -> dict:
        """{address: the scheduler's record of the worker} (asked afresh: one round trip)."""
        # the scheduler's reply itself, not client.scheduler_info()'s cached copy,
        # which the client's periodic refresh overwrites with one that lists no workers
        # (then every worker looked dead to a waiting run)
        reply = self.client.sync(self.client.scheduler.identity, n_workers=-1)
        return dict(reply["workers"])

    @property
    def workers(self) -> list[str]:
        """The workers' addresses; ``workers[i]`` is ``"worker:i"`` (see the module
        docstring). A number whose worker is gone (dead, not yet replaced) holds None."""
        return order_workers(self.worker_info())

    def address(self, index: int, info: dict | None = None) -> str:
        """The address of ``"worker:index"``, or a LookupError naming the workers there are."""
        ordered = order_workers(self.worker_info() if info is None else info)
        if 0 <= index < len(ordered) and ordered[index] is not None:
            return ordered[index]
        have = [i for i, a in enumerate(ordered) if a is not None]
        raise LookupError(f"no worker:{index} in the pool: it has "
                          f"{', '.join(f'worker:{i}' for i in have) or 'no workers'} "
                          f"(scheduler {self.scheduler_address})")

    def wait_for_workers(self, n_workers: int, timeout: float = 30.0) -> list[str]:
        """Wait until ``worker:0`` .. ``worker:n-1`` are all up (after one died, until its
        nanny has replaced it); their addresses. Raises TimeoutError after ``timeout`` s.

        A worker known to be dead (:meth:`kill`, or a run that lost it) must first be gone
        from the scheduler's list: the scheduler lists a killed worker for a moment after
        its process died, and a session restored then (``kg.load(path, into=sess)``) would
        find its number held by no one once the scheduler drops it."""
        deadline = time.monotonic() + timeout
        while True:
            info = self.worker_info()
            self._dead &= set(info)  # dropped by the scheduler: nothing left to wait for
            ordered = order_workers(info)
            if not self._dead and len(ordered) >= n_workers \
                    and None not in ordered[:n_workers]:
                return ordered[:n_workers]
            if time.monotonic() > deadline:
                dead = f" ({len(self._dead)} dead still listed)" if self._dead else ""
                raise TimeoutError(f"waited {timeout:g} s for {n_workers} workers; the pool "
                                   f"has {sum(a is not None for a in ordered)}{dead}")
            time.sleep(0.05)

    def mark_dead(self, addresses) -> None:
        """Note workers known to be dead, for :meth:`wait_for_workers`."""
        self._dead.update(a for a in addresses if a is not None)

    def pids(self) -> dict[str, int]:
        """{address: process id} of every worker."""
        return self.client.run(os.getpid)

    def kill(self, index: int) -> int:
        """Kill ``worker:index``'s process at once (SIGKILL, as a crash would), to see a
        fault; a LocalCluster's nanny starts a new worker in its place. Returns the pid.
        Only for workers on this machine."""
        address = self.address(index)
        pid = self.client.run(os.getpid, workers=[address])[address]
        os.kill(pid, signal.SIGKILL)
        self.mark_dead([address])
        return pid

    # -- what a learner looks at -----------------------------------------------------------
    @property
    def dashboard_link(self) -> str | None:
        """The Dask dashboard's address (task stream, worker memory, progress)."""
        try:
            return self.client.dashboard_link
        except Exception:  # noqa: BLE001 - a scheduler started without the dashboard
            return None

    @property
    def scheduler_address(self) -> str:
        return self.client.scheduler.address

    # -- lifetime --------------------------------------------------------------------------
    def close(self) -> None:
        """Close what this object started (the client it made, the LocalCluster)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._owns_client:
                self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        if self._closed:
            return "<kg.distributed.Cluster (closed)>"
        try:
            n = len([a for a in self.workers if a is not None])
        except Exception:  # noqa: BLE001 - repr must not raise on a broken connection
            n = "?"
        return f"<kg.distributed.Cluster {self.scheduler_address}, {n} workers>"

    def _repr_html_(self) -> str:
        import html  # only notebooks ask
        link = self.dashboard_link
        dash = "" if link is None else \
            f' &middot; dashboard <a href="{html.escape(link)}" target="_blank">' \
            f"{html.escape(link)}</a>"
        return f"<code>{html.escape(repr(self))}</code>{dash}"


def order_workers(info: dict) -> list:
    """The workers' addresses in kernelgraph's order (see the module docstring): by
    integer name (a missing number is None), else by (name, address)."""
    names = {addr: w.get("name", addr) for addr, w in info.items()}
    ints = {}
    for addr, name in names.items():
        try:
            number = int(name)
        except (TypeError, ValueError):
            break
        if number < 0 or number in ints:
            break
        ints[number] = addr
    else:
        if ints:
            return [ints.get(i) for i in range(max(ints) + 1)]
    return [a for _, a in sorted((str(n), a) for a, n in names.items())]


def local(n_workers: int = 2, threads_per_worker: int = 1, processes: bool = True,
          dashboard_address: str | None = ":0", **kwargs) -> Cluster:
    """Start a Dask ``LocalCluster`` of ``n_workers`` workers and connect to it: the pool
    for ``kg.Session(target=kg.distributed.local(2))``. Close it (``with`` or ``.close()``)
    to stop its processes.

    ``processes=True`` runs each worker in its own process (a real pool: a crash of one
    leaves the others, and Python runs on several cores); ``False`` runs them as threads of
    this process (quicker to start). The dashboard gets a free port (``dashboard_link``);
    other keywords go to ``LocalCluster``.

    >>> import kernelgraph as kg
    >>> import kernelgraph.distributed
    >>> with kg.distributed.local(2) as pool:          # doctest: +SKIP
    ...     len(pool.workers)
    2
    """
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise ValueError(f"local(n_workers): expected a positive int, got {shown(n_workers)}")
    distributed = _dask()
    scheduler_kwargs = dict(kwargs.pop("scheduler_kwargs", None) or {})
    # A task whose worker dies fails at once (KilledWorker) instead of being retried on
    # another worker: kernelgraph's tasks belong to their worker (its variables are there).
    scheduler_kwargs.setdefault("allowed_failures", 0)
    # Workers' log lines would land in notebook cells (ipykernel forwards the processes'
    # stderr); a failed run raises its error in the session anyway.
    kwargs.setdefault("silence_logs", logging.CRITICAL)
    cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker,
                                       processes=processes, dashboard_address=dashboard_address,
                                       scheduler_kwargs=scheduler_kwargs, **kwargs)
    try:
        client = distributed.Client(cluster, set_as_default=False)
    except BaseException:
        cluster.close()
        raise
    pool = Cluster(client, cluster, owns_client=True)
    try:
        pool.wait_for_workers(n_workers, timeout=60)
        # Each worker imports kernelgraph now, all at once, not in a learner's first run.
        client.run(worker.identity)
    except BaseException:
        pool.close()
        raise
    return pool


def connect(target) -> Cluster:
    """The :class:`Cluster` for a Session's ``target``: a Cluster (itself), a
    ``dask.distributed.Client`` (left open when the session closes), or a scheduler
    address (``"tcp://host:8786"``; the client made for it closes with the session).

    >>> from kernelgraph.distributed import connect
    >>> pool = connect("tcp://10.0.0.5:8786")          # doctest: +SKIP
    >>> pool.workers                                    # doctest: +SKIP
    ['tcp://10.0.0.7:40331', 'tcp://10.0.0.8:38811']
    """
    if isinstance(target, Cluster):
        if target.closed:
            raise ValueError("Session(target=...): this kg.distributed cluster is closed")
        return target
    distributed = _dask()
    if isinstance(target, distributed.Client):
        return Cluster(target)
    if isinstance(target, str):
        if "://" not in target and ":" not in target:
            raise ValueError(f"Session(target={shown(target)}): expected a Dask scheduler "
                             "address such as 'tcp://127.0.0.1:8786', a dask.distributed.Client"
                             " or kg.distributed.local(n_workers)")
        client = distributed.Client(target, set_as_default=False, timeout=10)
        return Cluster(client, owns_client=True)
    raise TypeError(f"Session(target=...) takes kg.distributed.local(n), a "
                    f"dask.distributed.Client or a scheduler address, got "
                    f"{type(target).__name__}")
