"""numba CUDA kernels: one forward per op, with the same signature as the op's CPU forward.

``FORWARDS[op_name]`` is the CUDA forward of that op: it takes C-contiguous device arrays
(and Python numbers where the CPU forward does) and returns a new device array, so values
stay on the GPU from op to op. Importing this package imports ``numba.cuda``; the engine
does so only when a CUDA device is first used (:mod:`kernelgraph.devices`).
"""

from __future__ import annotations

from ...ops import registry
from . import conv, elementwise, indexing, linalg, nn, random, reduce, rnn, shape
from .core import SIMULATOR, is_device_array

FORWARDS: dict = {}
for _module in (elementwise, reduce, shape, linalg, nn, conv, indexing, random, rnn):
    FORWARDS.update(_module.FORWARDS)
# A transfer runs the same code on either end (it reads one device and writes the other).
FORWARDS["to_device"] = registry.OPS["to_device"].forward


def _register_array_types():
    """Gradient rules called on device arrays compute with the CUDA kernels: the plain-array
    front-end of :meth:`Op.__call__` learns the device array types here (it looks types up
    exactly, so each subclass is listed)."""
    from ... import devices

    if SIMULATOR:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        types = [FakeCUDAArray]
    else:
        from numba.cuda.cudadrv import devicearray as D

        types = [D.DeviceNDArray, D.MappedNDArray, D.ManagedNDArray]
    for t in types:
        registry.FRONTENDS[t] = devices.apply_device_arrays
    devices.CUDA_ARRAY_TYPES = tuple(types)


_register_array_types()
__all__ = ["FORWARDS", "is_device_array"]
