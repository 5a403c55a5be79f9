"""Device memory from CUDA's stream-ordered allocator: a pool, as PyTorch's caching allocator.

numba's own memory manager calls ``cuMemAlloc`` for every new array and ``cuMemFree``
(batched) when arrays die. Eager code makes a new array per op, so on a GPU that is a
driver allocation per op: for ``a * b`` over 64M float32 the allocation and free cost
about as much as the multiplication itself. The CUDA driver has a pool made for this
(``cuMemAllocAsync`` / ``cuMemFreeAsync``, CUDA 11.2+): freed blocks go back to the
device's pool in stream order and the next allocation of a fitting size reuses them. Its
release threshold is raised from 0 to unlimited so that the pool keeps freed memory
between synchronisations instead of handing it back to the driver each time.

:class:`StreamOrderedMemoryManager` plugs that pool into numba through its External Memory
Management interface (the one RAPIDS' RMM and CuPy use); :func:`install` makes it numba's
memory manager unless the user chose one (``NUMBA_CUDA_MEMORY_MANAGER``). Every kernel in
this package runs on the default stream, the stream the memory is allocated and freed on.
It needs numba-cuda's NVIDIA bindings (``cuda.bindings``); without them numba's own
manager stays. Under the simulator there is no device memory and nothing is installed.
"""

from __future__ import annotations

import functools
import os

from numba import cuda

try:
    from cuda.bindings import driver as binding
    from numba.cuda import HostOnlyCUDAMemoryManager, MemoryInfo, MemoryPointer
    from numba.cuda.cudadrv.driver import driver
except ImportError:  # numba's built-in CUDA target (ctypes bindings), or the simulator
    binding = None
    HostOnlyCUDAMemoryManager = object  # the class below is then never installed

_KEEP_EVERYTHING = 2**64 - 1  # the pool's release threshold: never trim on synchronise


def _default_stream():
    return binding.CUstream(0)


def _free(ptr) -> None:
    try:
        driver.cuMemFreeAsync(ptr, _default_stream())
    except Exception:  # noqa: BLE001 - at interpreter exit the context may be gone already
        pass


class StreamOrderedMemoryManager(HostOnlyCUDAMemoryManager):
    """numba's device allocations from the device's default CUDA memory pool (see the module
    docstring); pinned and mapped host memory stay numba's own (``HostOnly``)."""

    stream_ordered = True  # how kg.cuda.memory_allocated knows the pool holds the memory

    def initialize(self):
        self.pool = driver.cuDeviceGetDefaultMemPool(self.context.device.id)
        driver.cuMemPoolSetAttribute(
            self.pool, binding.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            binding.cuuint64_t(_KEEP_EVERYTHING))

    def memalloc(self, size):
        # _attempt_allocation frees numba's pending host deallocations and retries once when
        # the device is out of memory.
        ptr = self._attempt_allocation(
            lambda: driver.cuMemAllocAsync(size, _default_stream()))
        return MemoryPointer(self.context, ptr, size, finalizer=functools.partial(_free, ptr))

    def get_memory_info(self):
        free, total = driver.cuMemGetInfo()
        return MemoryInfo(free=free, total=total)

    def get_ipc_handle(self, memory):
        raise NotImplementedError("kernelgraph's pooled device memory cannot be shared with "
                                  "other processes (CUDA IPC)")

    def reset(self):
        super().reset()
        driver.cuCtxSynchronize()
        driver.cuMemPoolTrimTo(self.pool, 0)  # hand the pool's free memory back

    @property
    def interface_version(self):
        return 1


def install() -> bool:
    """Make :class:`StreamOrderedMemoryManager` numba's memory manager, unless the user set
    ``NUMBA_CUDA_MEMORY_MANAGER`` or numba lacks the NVIDIA bindings. Contexts created
    before this keep their manager. Returns whether it was installed."""
    if binding is None or os.environ.get("NUMBA_CUDA_MEMORY_MANAGER", "default") != "default":
        return False
    cuda.set_memory_manager(StreamOrderedMemoryManager)
    return True
