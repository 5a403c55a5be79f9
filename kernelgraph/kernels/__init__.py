"""Kernels: plain functions over arrays. ``cpu`` holds the numba kernels the engine runs;
``reference`` holds the NumPy versions the tests use as the oracle."""

import ctypes
import os
import site
import sys


def _let_numba_find_tbb() -> None:
    """Load the TBB library that the ``tbb`` package installed, so that numba runs its
    threaded loops on TBB, its first choice, rather than on OpenMP.

    A step alternates numba's threaded loops with BLAS products. OpenMP's idle threads spin
    for a while before they sleep, and on a machine with few cores they take the cores that
    BLAS's own threads need: the MNIST CNN step of bench row 17a ran half again as long.
    TBB's idle threads sleep almost at once. OpenMP's policy cannot be set for numba alone
    (it is one library per process, shared with PyTorch where PyTorch links the system's).
    pip puts the library in the environment's ``lib/``, where the loader does not look for
    it; numba finds it once it is loaded. A threading layer the user chose is left alone."""
    if os.environ.get("NUMBA_THREADING_LAYER", "default") not in ("default", "tbb"):
        return
    for prefix in (sys.prefix, site.USER_BASE):
        path = os.path.join(prefix or "", "lib", "libtbb.so.12")
        if os.path.exists(path):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError:  # a broken install: numba falls back to OpenMP
                pass
            return


_let_numba_find_tbb()
