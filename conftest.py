"""Run the CUDA kernels on numba's CUDA simulator when this machine has no NVIDIA GPU.

numba reads ``NUMBA_ENABLE_CUDASIM`` once, when it is first imported, so this is set here,
before any test module imports kernelgraph. On a machine with an NVIDIA driver the real
GPU runs the same tests.
"""

import ctypes.util
import os


def _has_nvidia_driver() -> bool:
    return os.path.exists("/dev/nvidiactl") or ctypes.util.find_library("cuda") is not None


if not _has_nvidia_driver():
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
