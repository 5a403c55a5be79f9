"""Run the CUDA kernels on numba's CUDA simulator when this machine has no NVIDIA GPU, and
pin the CPU code paths that round differently from one x86-64 CPU to the next.

numba reads ``NUMBA_ENABLE_CUDASIM`` once, when it is first imported, so this is set here,
before any test module imports kernelgraph. On a machine with an NVIDIA driver the real
GPU runs the same tests.

The notebooks' stored outputs (nbval) include losses after training, which amplify a last-bit
difference into the printed digits. OpenBLAS picks its matrix kernels by CPU model (on two
AMD EPYC machines of ours: "Haswell" on one, "SkylakeX" on the other, whose products round
differently), and NumPy picks AVX-512 or AVX2 loops for ``exp``/``tanh``. The notebook
kernels inherit this process's environment, so the tests pin both to what every x86-64 CPU
with AVX2 runs: OpenBLAS's Haswell kernels and NumPy's X86_V3 loops. A product OpenBLAS
splits across threads also rounds differently from the same product on one thread (a
convolution is one large product over the whole batch), and how many threads it uses is
the machine's: the tests pin OpenBLAS to one thread. The notebooks were executed with the
same settings.
"""

import ctypes.util
import os
import platform

import pytest


def _has_nvidia_driver() -> bool:
    return os.path.exists("/dev/nvidiactl") or ctypes.util.find_library("cuda") is not None


if not _has_nvidia_driver():
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

if platform.machine() in ("x86_64", "AMD64"):
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")
    os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@pytest.fixture(autouse=True)
def _kernelgraph_warning_filters():
    """kernelgraph adds its warnings filters when first imported (kernels/cpu.py
    ``ignore_fp_warnings``), but pytest collects modules inside ``warnings.catch_warnings()``,
    which drops filters added there: each test gets them back, as a user's session has them."""
    from kernelgraph.kernels.cpu import ignore_fp_warnings

    ignore_fp_warnings()
