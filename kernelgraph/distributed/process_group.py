"""PyTorch's process group (``torch.distributed``) for CPU processes: ``init_process_group``,
``all_reduce``, ``broadcast``, ``all_gather``, ``barrier``, ``get_rank``, ``get_world_size``.

This is a different thing from kernelgraph's Dask pool (the rest of
:mod:`kernelgraph.distributed`, which runs one static graph across workers). Here, as in
PyTorch, the *same program* runs in ``world_size`` processes (started by ``torchrun``, by
:func:`kernelgraph.multiprocessing.spawn`, or by hand with ``RANK``/``WORLD_SIZE`` set), and
the processes meet through TCP:

- ``init_method='env://'`` (the default) reads ``MASTER_ADDR``, ``MASTER_PORT``, ``RANK`` and
  ``WORLD_SIZE``; ``'tcp://host:port'`` names the address, with ``rank`` and ``world_size``
  given as arguments. Rank 0 listens there; every other rank connects to it (retrying until
  ``timeout``).
- A collective sends each rank's array to rank 0, which combines them in rank order (so every
  run gives the same bits) and sends the result back: a star, simple rather than fast (PyTorch's
  gloo uses rings), which is what a few local processes need.
- Only arrays cross the wire: a fixed header (the call's sequence number and kind, the dtype
  as a NumPy type string, the shape) and the raw bytes. Nothing is pickled, and a header whose
  dtype is not a plain bool/int/float is refused. A rank that calls a different collective (or
  a different shape) than rank 0 gets a ``RuntimeError`` saying which, not a hang; a peer
  that stops answering raises after ``timeout``.

The backend is called ``'gloo'`` as PyTorch's CPU backend is (``'nccl'`` is refused: there is
no NCCL here). ``ReduceOp.AVG``, which PyTorch's gloo refuses, is allowed.

PyTorch's tutorial, on kernelgraph (``import kernelgraph as torch``)::

    import os
    import kernelgraph as torch
    import kernelgraph.distributed as dist
    import kernelgraph.multiprocessing as mp

    def run(rank, world_size):
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "localhost", "29500"
        dist.init_process_group("gloo", rank=rank, world_size=world_size)
        model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(10, 1))
        ...                                  # each rank trains on its share of the data
        dist.destroy_process_group()

    if __name__ == "__main__":
        mp.spawn(run, args=(2,), nprocs=2, join=True)
"""

from __future__ import annotations

import datetime
import enum
import os
import socket
import struct
import time

import numpy as np

from .. import devices
from ..eager.creation import tensor as _tensor
from ..eager.grad_mode import no_grad
from ..eager.tensors import Tensor

__all__ = ["ReduceOp", "Work", "all_gather", "all_reduce", "barrier", "broadcast",
           "destroy_process_group", "get_backend", "get_default_backend_for_device", "get_rank",
           "get_world_size",
           "init_process_group", "is_available", "is_gloo_available", "is_initialized",
           "is_nccl_available"]

_MAGIC = b"KGPG"
_HELLO = struct.Struct("!4sII")  # magic, rank, world size
_HEAD = struct.Struct("!4sQBBH8sB")  # magic, sequence, kind, op, src, dtype, ndim
_DIM = struct.Struct("!Q")
_KINDS = {1: "all_reduce", 2: "broadcast", 3: "barrier", 4: "all_gather"}
_FAILED = 255  # rank 0 tells the others why a collective failed (the text as uint8 bytes)
_NOT_INIT = "Default process group has not been initialized, please make sure to call " \
            "init_process_group."


class ReduceOp(enum.Enum):
    """How :func:`all_reduce` combines the ranks' values."""
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4


class Work:
    """What ``async_op=True`` returns: the collective has already completed (kernelgraph's
    collectives run synchronously), so ``wait()`` returns at once."""

    def wait(self, timeout=None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True


class _Group:
    def __init__(self, rank: int, world: int, peers: dict, server, timeout: float):
        self.rank, self.world, self.peers, self.server = rank, world, peers, server
        self.timeout, self.seq = timeout, 0

    def close(self) -> None:
        for s in self.peers.values():
            s.close()
        if self.server is not None:
            self.server.close()


_group: list[_Group] = []


def is_available() -> bool:
    """True: kernelgraph's process group runs on any machine with TCP."""
    return True


def is_gloo_available() -> bool:
    return True


def is_nccl_available() -> bool:
    return False


def is_initialized() -> bool:
    """Whether :func:`init_process_group` has run (and :func:`destroy_process_group` not)."""
    return bool(_group)


def _current() -> _Group:
    if not _group:
        raise ValueError(_NOT_INIT)
    return _group[0]


def get_rank(group=None) -> int:
    """This process's rank, 0 .. world_size - 1."""
    return _current().rank


def get_world_size(group=None) -> int:
    """How many processes the group has."""
    return _current().world


def get_backend(group=None) -> str:
    _current()
    return "gloo"


def get_default_backend_for_device(device) -> str:
    """``'gloo'``, for every device: kernelgraph's one backend (a CUDA tensor is copied to
    the host to cross the wire; PyTorch would name NCCL for CUDA)."""
    kind = str(getattr(device, "type", device)).split(":")[0]
    if kind not in ("cpu", "cuda"):
        raise ValueError(f"unknown device {device!r}: expected 'cpu' or 'cuda'")
    return "gloo"


def _int_env(name: str) -> int:
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} expected, but not set")
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got "
                         f"{value!r}") from None


def _address(init_method: str | None, rank: int, world: int) -> tuple[str, int, int, int]:
    if init_method is None or init_method == "env://":
        host = os.environ.get("MASTER_ADDR")
        if host is None:
            raise ValueError("Error initializing torch.distributed using env:// rendezvous: "
                             "environment variable MASTER_ADDR expected, but not set")
        port = _int_env("MASTER_PORT")
        rank = _int_env("RANK") if rank < 0 else rank
        world = _int_env("WORLD_SIZE") if world < 0 else world
    elif init_method.startswith("tcp://"):
        host, sep, port_text = init_method[len("tcp://"):].rpartition(":")
        if not sep or not port_text.isdigit():
            raise ValueError(f"init_method {init_method!r}: expected 'tcp://host:port'")
        port = int(port_text)
        if rank < 0 or world < 0:
            raise ValueError("init_method 'tcp://...' needs rank and world_size")
    else:
        raise ValueError(f"init_method must be 'env://' or 'tcp://host:port', got "
                         f"{init_method!r}")
    if world < 1 or not 0 <= rank < world:
        raise ValueError(f"rank {rank} must lie in 0 .. world_size - 1 (world_size {world})")
    return host.strip("[]"), port, rank, world


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Join the default process group (every rank calls this; it returns once all have).

    ``backend``: ``'gloo'`` (or None); ``timeout``: how long to wait for the other ranks
    and, later, for each collective (default 30 minutes, as PyTorch's gloo)."""
    if backend is not None and str(backend).lower() not in ("gloo", "cpu:gloo"):
        raise RuntimeError(f"kernelgraph's process group has the 'gloo' (CPU, TCP) backend "
                           f"only, got backend {backend!r}")
    if store is not None:
        raise ValueError("kernelgraph's process group meets through init_method; store= is "
                         "not supported")
    if _group:
        raise ValueError("trying to initialize the default process group twice!")
    host, port, rank, world = _address(init_method, rank, world_size)
    wait = (timeout or datetime.timedelta(minutes=30)).total_seconds()
    deadline = time.monotonic() + wait
    if world > 65535:
        raise ValueError(f"world_size {world} is more than this process group handles (65535)")
    peers: dict = {}
    server = None
    try:
        server = _meet(host, port, rank, world, wait, deadline, peers)
    except BaseException:
        for conn in peers.values():
            conn.close()
        if server is not None:
            server.close()
        raise
    for conn in peers.values():
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    _group.append(_Group(rank, world, peers, server, wait))


def _meet(host, port, rank, world, wait, deadline, peers):
    """Rank 0 listens and waits for every other rank's hello, then answers them all; another
    rank connects (retrying until ``deadline``) and waits for that answer. Returns rank 0's
    listening socket (None elsewhere); fills ``peers``."""
    if rank == 0:
        server = socket.create_server((host, port), reuse_port=False)
        try:
            _listen(server, host, port, world, wait, deadline, peers)
        except BaseException:
            server.close()
            raise
        return server
    if world > 1:
        while True:
            try:
                conn = socket.create_connection((host, port), timeout=wait)
                break
            except OSError:
                _left(deadline, f"rank {rank} connecting to rank 0 at {host}:{port}")
                time.sleep(0.05)
        peers[0] = conn
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.sendall(_HELLO.pack(_MAGIC, rank, world))
        _recv(conn, _HELLO.size)  # rank 0 answers once every rank is in
    return None


def _listen(server, host, port, world, wait, deadline, peers) -> None:
    while len(peers) < world - 1:
        _left(deadline, f"waiting for {world - 1 - len(peers)} more rank(s) at "
                        f"{host}:{port}")
        server.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        conn.settimeout(wait)
        magic, r, w = _HELLO.unpack(_recv(conn, _HELLO.size))
        if magic != _MAGIC or w != world or not 0 < r < world or r in peers:
            conn.close()
            raise RuntimeError(f"rank 0: a peer introduced itself as rank {r} of world "
                               f"size {w}; expected a new rank in 1 .. {world - 1} of "
                               f"world size {world}")
        peers[r] = conn
    for conn in peers.values():
        conn.sendall(_HELLO.pack(_MAGIC, 0, world))


def _left(deadline: float, what: str) -> None:
    if time.monotonic() > deadline:
        raise TimeoutError(f"init_process_group timed out {what}")


def destroy_process_group(group=None) -> None:
    """Leave the process group (close its connections)."""
    _current().close()
    _group.clear()


# -- the wire: headers and raw bytes ---------------------------------------------------------
def _recv(conn, n: int) -> bytes:
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        try:
            k = conn.recv_into(view[got:])
        except TimeoutError:
            raise TimeoutError("a peer of the process group did not answer within the "
                               "timeout") from None
        except OSError as e:
            raise RuntimeError(f"the process group's connection failed ({e}); did another "
                               f"rank fail or exit?") from None
        if k == 0:
            raise RuntimeError("a peer of the process group closed its connection (did "
                               "another rank fail or exit?)")
        got += k
    return bytes(buf)


def _send(conn, seq: int, kind: int, op: int, src: int, array: np.ndarray) -> None:
    code = array.dtype.str.encode("ascii").ljust(8, b" ")
    head = _HEAD.pack(_MAGIC, seq, kind, op, src, code, array.ndim)
    dims = b"".join(_DIM.pack(d) for d in array.shape)
    conn.sendall(head + dims + np.ascontiguousarray(array).tobytes())


def _receive(conn, expect: tuple, who: str) -> np.ndarray:
    magic, seq, kind, op, src, code, ndim = _HEAD.unpack(_recv(conn, _HEAD.size))
    if magic != _MAGIC:
        raise RuntimeError(f"process group: garbled message from {who}")
    shape = tuple(_DIM.unpack(_recv(conn, _DIM.size))[0] for _ in range(ndim))
    if kind == _FAILED and ndim == 1:
        raise RuntimeError(_recv(conn, shape[0]).decode("utf-8", "replace"))
    dtype = np.dtype(code.decode("ascii").strip())
    if dtype.kind not in "biuf" or dtype.hasobject:
        raise RuntimeError(f"process group: {who} sent dtype {dtype}; only bool, integer and "
                           f"float arrays are exchanged")
    got = (seq, kind, op, src, dtype.str, shape)
    if got != expect:
        raise RuntimeError(
            f"process group: collectives out of step: this rank is at call {expect[0]}, "
            f"{_KINDS.get(expect[1])} of a {expect[4]} array of shape {list(expect[5])}, but "
            f"{who} is at call {seq}, {_KINDS.get(kind, kind)} of a {dtype.str} array of "
            f"shape {list(shape)} (every rank must make the same collective calls)")
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return np.frombuffer(_recv(conn, nbytes), dtype).reshape(shape).copy()


def _exchange(array: np.ndarray, kind: int, op: int, src: int, combine) -> np.ndarray:
    """Every rank sends ``array`` to rank 0, which returns ``combine(list in rank order)`` to
    every rank."""
    g = _current()
    g.seq += 1
    expect = (g.seq, kind, op, src, array.dtype.str, array.shape)
    if g.rank == 0:
        try:
            parts = [array] + [_receive(g.peers[r], expect, f"rank {r}")
                               for r in range(1, g.world)]
        except RuntimeError as e:  # every rank raises it, rather than waiting for rank 0
            text = np.frombuffer(str(e).encode("utf-8"), np.uint8)
            for conn in g.peers.values():
                try:
                    _send(conn, g.seq, _FAILED, 0, 0, text)
                except OSError:
                    pass
            raise
        result = np.ascontiguousarray(combine(parts))
        for r in range(1, g.world):
            _send(g.peers[r], g.seq, kind, op, src, result)
        return result
    _send(g.peers[0], g.seq, kind, op, src, array)
    out_shape = (g.world, *array.shape) if kind == 4 else array.shape
    return _receive(g.peers[0], expect[:5] + (out_shape,), "rank 0")


def _host(t) -> np.ndarray:
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a Tensor, got {type(t).__name__}")
    return np.ascontiguousarray(devices.to_numpy(t._array))


def _write(t: Tensor, values: np.ndarray) -> None:
    with no_grad():
        t.copy_(_tensor(values, dtype=t.dtype))


def _reduce(op: ReduceOp):
    def combine(parts):
        acc = parts[0].copy()
        for p in parts[1:]:  # rank order: the same sums on every run
            if op in (ReduceOp.SUM, ReduceOp.AVG):
                acc = acc + p
            elif op is ReduceOp.PRODUCT:
                acc = acc * p
            elif op is ReduceOp.MIN:
                acc = np.minimum(acc, p)
            else:
                acc = np.maximum(acc, p)
        if op is ReduceOp.AVG:
            acc = acc / len(parts) if acc.dtype.kind == "f" else acc // len(parts)
        return acc.astype(parts[0].dtype)
    return combine


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group=None,
               async_op: bool = False):
    """Replace ``tensor`` on every rank by the ranks' values combined by ``op`` (in place)."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be a dist.ReduceOp, got {op!r}")
    _write(tensor, _exchange(_host(tensor), 1, op.value, 0, _reduce(op)))
    return Work() if async_op else None


def broadcast(tensor: Tensor, src: int, group=None, async_op: bool = False):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every rank (in place)."""
    world = _current().world
    if not 0 <= src < world:
        raise ValueError(f"broadcast: src {src} is not a rank of this group (0 .. {world - 1})")
    _write(tensor, _exchange(_host(tensor), 2, 0, src, lambda parts: parts[src]))
    return Work() if async_op else None


def all_gather(tensor_list: list, tensor: Tensor, group=None, async_op: bool = False):
    """Fill ``tensor_list[r]`` with rank ``r``'s ``tensor``, on every rank."""
    world = _current().world
    if len(tensor_list) != world:
        raise ValueError(f"all_gather: tensor_list must have world_size ({world}) tensors, "
                         f"got {len(tensor_list)}")
    gathered = _exchange(_host(tensor), 4, 0, 0, np.stack)
    for t, v in zip(tensor_list, gathered, strict=True):
        _write(t, v)
    return Work() if async_op else None


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Return once every rank has reached its ``barrier()``."""
    _exchange(np.zeros(1, np.int8), 3, 0, 0, lambda parts: parts[0])
    return Work() if async_op else None
