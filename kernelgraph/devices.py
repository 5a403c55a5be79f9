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
distributed graphs, ``'worker:1/cuda:0'``. TensorFlow's spellings (``'/gpu:0'``,
``'/device:GPU:0'``, ``'/job:worker/task:1/device:GPU:0'``) are accepted too. Remote
workers can be named and placed, but running them is not supported yet.

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

    # -- scope ---------------------------------------------------------------------------------
    def __enter__(self):
        _scope.stack.append(self)
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
_WORKER = re.compile(r"(?:job:)?([A-Za-z_][\w-]*)(?::(\d+)|/task:(\d+))?")


def device(spec="cpu", index: int | None = None) -> Device:
    """The :class:`Device` named by ``spec`` (a name or a Device; ``index`` as in
    ``torch.device('cuda', 0)``); see the module docstring."""
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
    text = spec.strip().strip("/")
    head, _, last = text.rpartition("/")
    if head.lower().endswith("device") and ":" in last:  # '/device:GPU:0' split at the slash
        head, last = head[:-len("device")].rstrip("/"), "device:" + last
    m = _DEVICE.fullmatch(last)
    worker = None
    if head:
        w = _WORKER.fullmatch(head)
        if w is None:
            m = None
        else:
            task = w.group(2) or w.group(3) or "0"
            worker = f"{w.group(1)}:{task}"
    if m is None:
        raise ValueError(f"unknown device {shown(spec)}: expected 'cpu', 'cuda', 'cuda:N', "
                         "optionally after a worker ('worker:1/cuda:0')")
    kind = "cpu" if m.group(1).lower() == "cpu" else "cuda"
    result = Device(kind, int(m.group(2) or 0), worker)
    if len(_PARSED) < 256:
        _PARSED[spec] = result
    return result


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
        raise DeviceError(f"device '{dev}' is on a remote worker; kernelgraph runs graphs on "
                          "this machine's devices only ('cpu', 'cuda:N') for now")
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
