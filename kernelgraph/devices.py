"""Devices: where a value lives and where an op runs, and moving values between them.

>>> import kernelgraph as kg
>>> kg.device("cuda"), kg.device("cpu"), kg.device("worker:1/cuda:0")
(device('cuda:0'), device('cpu'), device('worker:1/cuda:0'))
>>> kg.device("/device:GPU:0") == "cuda:0"
True

A CPU value is a NumPy array; a CUDA value is a numba device array that stays on the GPU
from op to op. Eager ops run on the device of their tensors and refuse tensors of two
devices (PyTorch's rule). Static nodes are *placed*: inside ``with kg.device('cuda'):``
new nodes go to the GPU, elsewhere a node follows its first input; where a node's input
lives elsewhere, :func:`kernelgraph.static.build.build` inserts an explicit ``to_device``
node, so every transfer is visible in the graph (TensorFlow's placer does the same with
Send/Recv pairs).

Names are ``[worker/]type[:index]``: ``'cpu'``, ``'cuda:0'``, and, leaving room for
distributed graphs, ``'worker:1/cuda:0'``; a worker alone (``'worker:1'``) is its CPU.
TensorFlow's spellings (``'/gpu:0'``, ``'/device:GPU:0'``, ``'/job:worker/task:1'``,
``'/job:worker/replica:0/task:1/device:GPU:0'``) are accepted too. Workers are the workers
of a Dask cluster, numbered as :mod:`kernelgraph.distributed` documents; a session with a
cluster target runs each worker's nodes there (:mod:`kernelgraph.distributed.partition`),
where ``'worker:1/cuda:0'`` is that worker's local ``'cuda:0'`` (:attr:`Device.local`).
Nested scopes merge as in TF1: ``with kg.device('cuda'):`` inside ``with
kg.device('worker:1'):`` places on ``'worker:1/cuda:0'``.

Without an NVIDIA GPU, set ``NUMBA_ENABLE_CUDASIM=1`` before importing kernelgraph to run
the CUDA kernels on numba's (slow) CUDA simulator.
"""

from __future__ import annotations

import re
import sys
import threading

import numpy as np

from .errors import shown

ndarray = np.ndarray
_NUMBERS = (int, float, bool)


class DeviceError(RuntimeError):
    """A value or op on the wrong device, or a device this machine does not have."""


class Device:
    """A place to compute: ``kg.device('cpu')``, ``kg.device('cuda:0')``.

    Also a context manager: ``with kg.device('cuda'):`` places new static nodes and new
    eager tensors (``kg.tensor``, ``kg.zeros``, ``kg.random.normal`` ...) on that device.
    Compares equal to its name (``t.device == 'cuda:0'``).
    """

    __slots__ = ("type", "index", "worker", "name")

    def __init__(self, type: str, index: int = 0, worker: str | None = None):  # noqa: A002
        self.type = type
        self.index = index if type == "cuda" else 0
        self.worker = worker
        local = "cpu" if type == "cpu" else f"cuda:{self.index}"
        self.name = f"{worker}/{local}" if worker else local

    # -- identity ------------------------------------------------------------------------------
    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except ValueError:
                return False
        return isinstance(other, Device) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"device({self.name!r})"

    @property
    def is_local(self) -> bool:
        return self.worker is None

    @property
    def local(self) -> Device:
        """This device as its worker sees it: ``'worker:1/cuda:0'`` is ``'cuda:0'`` on
        worker 1 (the same objects as ``kg.device('cpu')``/``'cuda:0'`` where they exist).

        >>> device("worker:1/cuda:0").local
        device('cuda:0')
        """
        if self.worker is None:
            return self
        return CPU if self.type == "cpu" else (CUDA0 if self.index == 0 else
                                               Device(self.type, self.index))

    def on(self, worker: str | None) -> Device:
        """This device on ``worker`` (``'worker:1'``; None: this process).

        >>> device("cuda:0").on("worker:1")
        device('worker:1/cuda:0')
        """
        return self.local if worker is None else device(f"{worker}/{self.local.name}")

    # -- scope ---------------------------------------------------------------------------------
    def __enter__(self):
        stack = _scope.stack
        # TF1 merges nested scopes: a device inside ``with kg.device('worker:1'):`` is that
        # worker's (``with kg.device('cuda'):`` there places on 'worker:1/cuda:0').
        # (A Device subclass, such as replica_device_setter's chooser, is entered as it is.)
        if self.worker is None and stack and stack[-1].worker is not None \
                and type(self) is Device:
            stack.append(Device(self.type, self.index, stack[-1].worker))
        else:
            stack.append(self)
        return self

    def __exit__(self, *exc):
        _scope.stack.pop()
        return False


class _Scope(threading.local):
    def __init__(self):
        self.stack: list = []


_scope = _Scope()
CPU = Device("cpu")
CUDA0 = Device("cuda", 0)
_DEVICE = re.compile(r"(?:device:)?(cpu|cuda|gpu)(?::(\d+))?", re.IGNORECASE)
_SHORT = re.compile(r"([A-Za-z_][\w-]*)(?::(\d+))?")
_NUMBERED = re.compile(r"(job|replica|task):(.+)", re.IGNORECASE)
#: Job names that name a worker on their own (``'worker:1'``, ``'ps'``): a bare word must be
#: one of these, so that a misspelt device (``'cdua:0'``) is still refused.
JOBS = ("worker", "ps", "chief", "master", "evaluator")


def device(spec="cpu", index: int | None = None) -> Device:
    """The :class:`Device` named by ``spec`` (a name or a Device; ``index`` as in
    ``torch.device('cuda', 0)``); see the module docstring.

    A worker alone is its CPU, as TF1 places ``/job:worker/task:1`` on the task's CPU:

    >>> device("/job:worker/task:1"), device("worker:1/cuda:0"), device("/job:ps")
    (device('worker:1/cpu'), device('worker:1/cuda:0'), device('ps:0/cpu'))
    """
    if isinstance(spec, Device):
        return spec
    if index is not None:
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise RuntimeError(f"Device index must not be negative, got {shown(index)}")
        if not isinstance(spec, str) or ":" in spec:
            raise RuntimeError(f"type (string) must not include an index because index was "
                               f"passed explicitly: {spec}")
        spec = f"{spec}:{index}"
    if not isinstance(spec, str):
        raise TypeError(f"expected a device name such as 'cpu' or 'cuda:0', got "
                        f"{type(spec).__name__}")
    cached = _PARSED.get(spec)
    if cached is not None:
        return cached
    parsed = _parse(spec)
    if parsed is None:
        raise ValueError(f"unknown device {shown(spec)}: expected 'cpu', 'cuda', 'cuda:N', "
                         "optionally after a worker ('worker:1/cuda:0', "
                         "'/job:worker/task:1/device:GPU:0'), or a worker alone ('worker:1')")
    if len(_PARSED) < 256:
        _PARSED[spec] = parsed
    return parsed


def _parse(spec: str) -> Device | None:
    """``spec`` parsed (None: not a device name). Parts are separated by '/': TF1's
    ``job:``, ``replica:``, ``task:``, ``device:`` parts, a short worker ``name:N`` and a
    device ``cpu``/``cuda:N``/``gpu:N`` last."""
    parts = [p for p in spec.strip().split("/") if p]
    job = task = found = None
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        m = _DEVICE.fullmatch(part)
        if m is not None:
            if not last:
                return None
            found = m
            continue
        n = _NUMBERED.fullmatch(part)
        if n is not None:
            key, value = n.group(1).lower(), n.group(2)
            if key == "job":
                if job is not None or not _SHORT.fullmatch(value) or ":" in value:
                    return None
                job = value
            elif not value.isdigit():
                return None
            elif key == "task":
                task = int(value)
            continue  # replica: TF1's in-graph replicas all share replica 0
        s = _SHORT.fullmatch(part)
        # a bare worker name: before a device part, or one of the known job names
        if s is None or job is not None or (last and s.group(1).lower() not in JOBS):
            return None
        job, task = s.group(1), int(s.group(2) or 0) if task is None else task
    if job is None and task is not None:
        job = "worker"  # '/task:1': TF1's default job in a one-job cluster
    if found is None and job is None:
        return None
    worker = f"{job}:{task or 0}" if job is not None else None
    if found is None:
        return Device("cpu", 0, worker)
    kind = "cpu" if found.group(1).lower() == "cpu" else "cuda"
    return Device(kind, int(found.group(2) or 0), worker)


_PARSED: dict = {}


def current() -> Device | None:
    """The innermost ``with kg.device(...)`` device, else the default device set by
    :func:`set_default_device` (None: no scope and the CPU default)."""
    stack = _scope.stack
    return stack[-1] if stack else _default_device[0]


# set_default_device's device; None is the CPU (no placement, as before any call)
_default_device: list = [None]


def set_default_device(spec) -> None:
    """Make new tensors (``kg.tensor``, ``kg.zeros``, ``kg.randn`` ...) live on ``spec``
    unless told otherwise (``torch.set_default_device``); None or 'cpu' restores the CPU.

    >>> import kernelgraph as kg
    >>> kg.set_default_device("cpu"); kg.get_default_device()
    device('cpu')
    """
    if spec is None:
        _default_device[0] = None
        return
    dev = require(device(spec))
    _default_device[0] = None if dev == CPU else dev


def get_default_device() -> Device:
    """Where new tensors go now: the innermost ``with kg.device(...)``, else the default
    (``torch.get_default_device``).

    >>> import kernelgraph as kg
    >>> kg.get_default_device()
    device('cpu')
    """
    return current() or CPU


class unplaced:  # noqa: N801 - used like the device context it undoes
    """Inside this block no device scope applies (static gradient ops follow their inputs,
    like TensorFlow's ``colocate_gradients_with_ops``)."""

    def __enter__(self):
        self.saved = _scope.stack
        _scope.stack = []
        return self

    def __exit__(self, *exc):
        _scope.stack = self.saved
        return False


# -- CUDA arrays -----------------------------------------------------------------------------
def _cuda_module():
    """``numba.cuda`` (imported on first need: it adds ~0.3 s to the import)."""
    from numba import cuda

    return cuda


# numba's device array classes (every subclass: front-ends look types up exactly), filled
# in on the first look at a value that may be one (see cuda_array_types).
CUDA_ARRAY_TYPES: tuple = ()
# The loader of the CUDA kernels (kernelgraph.kernels.cuda, a floor above), installed by
# kernelgraph.ops.registry: a host value copied to a GPU goes through their allocator.
_cuda_loader: list = []


def install_cuda_loader(load) -> None:
    """Let this module load the CUDA kernels package with ``load()`` when it first needs it
    (kernelgraph.ops.registry calls this at import)."""
    _cuda_loader[:] = [load]


def cuda_array_types() -> tuple:
    """numba's device array classes: the simulator's one under ``NUMBA_ENABLE_CUDASIM=1``,
    else the driver's three (imports numba.cuda)."""
    global CUDA_ARRAY_TYPES
    if not CUDA_ARRAY_TYPES:
        from numba import config

        if config.ENABLE_CUDASIM:
            from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

            CUDA_ARRAY_TYPES = (FakeCUDAArray,)
        else:
            from numba.cuda.cudadrv import devicearray as D

            CUDA_ARRAY_TYPES = (D.DeviceNDArray, D.MappedNDArray, D.ManagedNDArray)
    return CUDA_ARRAY_TYPES


def is_cuda_array(x) -> bool:
    if type(x) is ndarray or isinstance(x, _NUMBERS):
        return False
    if not CUDA_ARRAY_TYPES:
        if "numba.cuda" not in sys.modules:
            return False  # nobody can have made a device array yet
        cuda_array_types()
    return isinstance(x, CUDA_ARRAY_TYPES)


def device_of(x) -> Device:
    """The device of an array, a number (CPU), an eager tensor or a graph node."""
    if type(x) is ndarray or isinstance(x, (*_NUMBERS, np.generic)):
        return CPU
    if is_cuda_array(x):  # before .device: the simulator's arrays forward it to NumPy's
        return CUDA0  # numba device arrays live on the current device; we use device 0
    dev = getattr(x, "device", None)  # tensors and graph nodes
    return dev if isinstance(dev, Device) else CPU


def require(dev: Device) -> Device:
    """``dev`` if this process can run on it, else a DeviceError saying why not."""
    if dev.type == "cpu" and dev.is_local:
        return dev
    if not dev.is_local:
        raise DeviceError(
            f"device '{dev}' is on the remote worker '{dev.worker}', which only a session "
            "connected to a cluster can run: kg.Session(target=kg.distributed.local(2)) (a "
            "Dask LocalCluster on this machine), or kg.Session(target='tcp://host:8786') (a "
            "Dask scheduler's address, or a dask.distributed.Client); eager tensors stay in "
            "this process")
    if not cuda_is_available():
        raise DeviceError(
            f"device '{dev}' is not available: CUDA needs an NVIDIA GPU and driver. On a "
            "machine without one, set NUMBA_ENABLE_CUDASIM=1 before importing kernelgraph to "
            "run the CUDA kernels on numba's simulator (slow, for learning and testing)")
    count = cuda_device_count()
    if dev.index >= count:
        raise DeviceError(f"device '{dev}' does not exist: this machine has {count} CUDA "
                          f"device(s)")
    if dev.index != 0:
        raise DeviceError(f"device '{dev}': kernelgraph runs CUDA on device 0 only for now")
    return dev


def transfer(x, dev: Device):
    """``x`` copied to ``dev`` (``x`` itself when it is there already)."""
    here = device_of(x)
    if here == dev:
        return x
    if dev.type == "cuda":  # from the host (a GPU-to-GPU copy is refused by require: one GPU)
        require(dev)
        return _cuda_loader[0]().core.to_device(np.asarray(x))
    return x.copy_to_host()


def to_numpy(x) -> np.ndarray:
    """A host copy of ``x`` for display (widgets, repr): explicit, never used by kernels."""
    return x if type(x) is ndarray else np.asarray(x.copy_to_host() if is_cuda_array(x) else x)


# -- kernels per device ----------------------------------------------------------------------
def device_of_values(op, values) -> Device:
    """The device all of ``values`` live on (CPU for none; Python numbers go anywhere), or a
    DeviceError naming two devices and ``op`` when they differ."""
    found = None
    for v in values:
        if isinstance(v, _NUMBERS):
            continue
        dev = device_of(v)
        if found is None:
            found = dev
        elif dev != found:
            raise mismatch(op, found, dev)
    return found or CPU


def forward_for(op, dev: Device):
    """The function that runs ``op`` on ``dev``: ``op.kernel(dev)`` (the op card knows its
    kernels; this module only knows devices)."""
    return op.kernel(dev)


def forward_for_values(op, values):
    """The function that runs ``op`` on the device all of ``values`` live on."""
    return op.kernel(device_of_values(op, values))


def mismatch(op, a: Device, b: Device) -> DeviceError:
    return DeviceError(f"Expected all tensors to be on the same device, but found at least "
                       f"two devices, {a} and {b}! (in op '{op.name}'; move one with "
                       f".to('{a}') or .to('{b}'))")


# -- the kg.cuda namespace -------------------------------------------------------------------
_available: list = []


def cuda_is_available() -> bool:
    """True when numba can run CUDA kernels here (a GPU, or the simulator)."""
    if not _available:
        try:
            _available.append(bool(_cuda_module().is_available()))
        except Exception:  # noqa: BLE001 - a broken driver install means: not available
            _available.append(False)
    return _available[0]


def cuda_device_count() -> int:
    if not cuda_is_available():
        return 0
    return len(_cuda_module().gpus)


def cuda_synchronize() -> None:
    """Wait for queued CUDA kernels to finish (for timing)."""
    if cuda_is_available():
        _cuda_module().synchronize()
