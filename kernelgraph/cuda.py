"""``kg.cuda``: is a GPU here, and which? (PyTorch's ``torch.cuda`` names.)

kernelgraph runs CUDA kernels through numba, on an NVIDIA GPU or on numba's simulator
(``NUMBA_ENABLE_CUDASIM=1``). Every function answers truthfully for this machine; where
there is no CUDA device, each behaves as PyTorch's does on a machine without one:
``is_available()`` is False, ``manual_seed`` is silently ignored, ``memory_allocated()`` is
0, ``set_device(-1)`` and ``with device(-1)`` do nothing, while ``current_device()``,
``set_device(0)``, ``get_device_name()``, ``with device(0)`` and ``cuda.FloatTensor(...)``
raise (with the same exception types as PyTorch).

Random numbers: kernelgraph draws the numbers of a CUDA tensor on the CPU generator
(``kg.manual_seed``) and copies them to the device, so ``torch.manual_seed(s)`` alone makes
GPU runs repeatable. ``manual_seed(s)`` / ``manual_seed_all(s)`` record ``s`` as the CUDA
seed (``initial_seed()``) and change no draw.

>>> import kernelgraph as kg
>>> isinstance(kg.cuda.is_available(), bool)
True
>>> kg.cuda.manual_seed(0)                      # ignored without a GPU, as in PyTorch
>>> device = "cuda" if kg.cuda.is_available() else "cpu"
"""

from __future__ import annotations

import numpy as np

from . import devices
from .devices import cuda_device_count as device_count
from .devices import cuda_is_available as is_available
from .devices import cuda_synchronize as synchronize
from .eager.creation import tensor
from .eager.legacy import _make
from .eager.tensors import Tensor
from .ops.torch_random import _to_seed
from .ops.torch_random import initial_seed as _cpu_initial_seed

__all__ = ["BoolTensor", "ByteTensor", "DoubleTensor", "FloatTensor", "IntTensor",
           "LongTensor", "current_device", "device", "device_count", "empty_cache",
           "get_device_capability", "get_device_name", "initial_seed", "is_available",
           "is_bf16_supported", "manual_seed", "manual_seed_all", "mem_get_info",
           "memory_allocated", "memory_reserved", "set_device", "synchronize"]

_NO_CUDA = "kernelgraph found no CUDA device (no GPU here; numba's simulator runs with " \
           "NUMBA_ENABLE_CUDASIM=1)"
_state = {"index": 0, "seed": None}


def _require(what: str) -> None:
    # PyTorch's CPU build raises AssertionError("Torch not compiled with CUDA enabled")
    if not is_available():
        raise AssertionError(f"{what}: {_NO_CUDA}")


def _index(dev, what: str) -> int:
    """The device index that ``dev`` (an int, ``'cuda:1'``, a device or None) names."""
    if dev is None:
        return _state["index"]
    if isinstance(dev, int | np.integer) and not isinstance(dev, bool):
        return int(dev)
    if isinstance(dev, str | devices.Device):
        d = devices.device(dev) if isinstance(dev, str) else dev
        if d.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {d}")
        return d.index or 0
    raise TypeError(f"{what}: expected a device index, 'cuda:N' or a torch.device, got "
                    f"{type(dev).__name__}")


def _check_index(i: int) -> int:
    if not 0 <= i < device_count():
        raise RuntimeError(f"CUDA error: invalid device ordinal {i} (there are "
                           f"{device_count()} CUDA devices)")
    return i


# -- seeds -----------------------------------------------------------------------------------
def manual_seed(seed) -> None:
    """``torch.cuda.manual_seed``: record the CUDA seed (kernelgraph draws a CUDA tensor's
    numbers on the CPU generator, so no draw changes); ignored without a GPU, as PyTorch."""
    s = _to_seed(seed, "manual_seed")
    if is_available():
        _state["seed"] = s


def manual_seed_all(seed) -> None:
    """``torch.cuda.manual_seed_all``: as :func:`manual_seed` (every device shares it)."""
    manual_seed(seed)


def initial_seed() -> int:
    """The seed last given to :func:`manual_seed` (PyTorch raises without CUDA)."""
    _require("initial_seed")
    # never seeded: the CPU generator's seed, the one the CUDA tensors' numbers come from
    return _cpu_initial_seed() if _state["seed"] is None else _state["seed"]


# -- the current device ----------------------------------------------------------------------
def current_device() -> int:
    """The index of the current CUDA device (``torch.cuda.current_device()``)."""
    _require("current_device")
    return _state["index"]


def set_device(device) -> None:
    """Make ``device`` (an index, ``'cuda:N'``) current. A negative index does nothing, as
    in PyTorch; without CUDA any other index raises ``AttributeError`` as PyTorch's CPU build
    does (``torch._C`` has no ``_cuda_setDevice``)."""
    i = _index(device, "set_device")
    if i < 0:
        return
    if not is_available():
        raise AttributeError(f"set_device({i}): {_NO_CUDA}")
    _state["index"] = _check_index(i)


class device:
    """``with torch.cuda.device(i):`` makes device ``i`` current inside the block. A
    negative index (or None) does nothing; without CUDA, entering with any other index
    raises ``RuntimeError`` as PyTorch's CPU build does.

    >>> with device(-1):
    ...     pass
    """

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device, "cuda.device")
        self.prev_idx = -1

    def __enter__(self):
        if self.idx < 0:
            return self
        if not is_available():
            raise RuntimeError(f"cuda.device({self.idx}): {_NO_CUDA}")
        self.prev_idx = _state["index"]
        _state["index"] = _check_index(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx >= 0:
            _state["index"] = self.prev_idx
        return False


# -- what the device is ----------------------------------------------------------------------
def _numba_device(dev):
    from numba import cuda as ncuda  # imported on first use: it slows ``import kernelgraph``

    _check_index(_index(dev, "device"))
    return ncuda.current_context().device


def get_device_name(device=None) -> str:
    """The GPU's name as the driver reports it (``'numba CUDA simulator'`` under the
    simulator)."""
    _require("get_device_name")
    name = getattr(_numba_device(device), "name", None)
    if isinstance(name, bytes):
        name = name.decode()
    return name or "numba CUDA simulator"


def get_device_capability(device=None) -> tuple[int, int]:
    """The GPU's compute capability ``(major, minor)``."""
    _require("get_device_capability")
    return tuple(int(v) for v in _numba_device(device).compute_capability)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: kernelgraph has no bfloat16 dtype (PyTorch also answers False without CUDA)."""
    return False


def mem_get_info(device=None) -> tuple[int, int]:
    """``(free, total)`` bytes of the GPU's memory, from the driver."""
    _require("mem_get_info")
    from numba import cuda as ncuda  # imported on first use (see _numba_device)

    _check_index(_index(device, "mem_get_info"))
    free, total = ncuda.current_context().get_memory_info()
    big = np.iinfo(np.int64).max  # the simulator reports infinite memory
    return (int(min(free, big)), int(min(total, big)))


def memory_allocated(device=None) -> int:
    """0 without a GPU (as PyTorch) and under the simulator (it has no device memory); on a
    GPU, the bytes in use in the device's memory pool (CUDA's stream-ordered pool that
    kernelgraph allocates from)."""
    return _pool_attribute("USED_MEM_CURRENT")


def memory_reserved(device=None) -> int:
    """0 without a GPU and under the simulator; on a GPU, the bytes the device's memory pool
    holds (in use or cached for reuse), PyTorch's "reserved"."""
    return _pool_attribute("RESERVED_MEM_CURRENT")


def _pool_attribute(name: str) -> int:
    if not is_available():
        return 0
    from numba import config
    from numba import cuda as ncuda  # imported on first use (see _numba_device)

    if config.ENABLE_CUDASIM:
        return 0
    manager = ncuda.current_context().memory_manager
    if not getattr(manager, "stream_ordered", False):
        raise RuntimeError("memory statistics come from CUDA's stream-ordered memory pool, "
                           "which kernelgraph did not install here (NUMBA_CUDA_MEMORY_MANAGER "
                           "is set, or numba-cuda's NVIDIA bindings are missing)")
    from cuda.bindings import driver as binding

    pool = manager.pool  # the device's default pool, which the manager allocates from
    attr = getattr(binding.CUmemPool_attribute, f"CU_MEMPOOL_ATTR_{name}")
    err, value = binding.cuMemPoolGetAttribute(pool, attr)
    if err != binding.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuMemPoolGetAttribute failed: {err}")
    return int(getattr(value, "value", value))


def empty_cache() -> None:
    """Wait for queued work (the pool frees on synchronisation where PyTorch empties its
    cache)."""
    synchronize()


# -- typed constructors: torch.cuda.FloatTensor ... ------------------------------------------
class _CudaTypedMeta(type):
    """``isinstance(t, kg.cuda.FloatTensor)``: t is a CUDA Tensor of that dtype."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and obj.is_cuda

    def __call__(cls, *args):
        if not is_available():
            raise TypeError(f"type torch.cuda.{cls.__name__} not available. {_NO_CUDA}.")
        return tensor(_make(args, cls.dtype, cls.__name__, None),
                      device=f"cuda:{_state['index']}")


def _typed(name: str, dtype) -> type:
    return _CudaTypedMeta(name, (), {"dtype": np.dtype(dtype), "__module__": "kernelgraph.cuda",
                                     "is_cuda": True,
                                     "__doc__": f"A {np.dtype(dtype).name} CUDA tensor: "
                                                f"``kg.cuda.{name}([1, 2])``."})


FloatTensor = _typed("FloatTensor", np.float32)
DoubleTensor = _typed("DoubleTensor", np.float64)
LongTensor = _typed("LongTensor", np.int64)
IntTensor = _typed("IntTensor", np.int32)
BoolTensor = _typed("BoolTensor", np.bool_)
ByteTensor = _typed("ByteTensor", np.uint8)
