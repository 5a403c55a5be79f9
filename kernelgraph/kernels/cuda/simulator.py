"""What a GPU computes, under numba's CUDA simulator too.

The simulator (``NUMBA_ENABLE_CUDASIM=1``) runs kernels as Python, so a scalar body of
:mod:`kernelgraph.kernels.cpu` meets Python's ``math``: ``math.exp(1000.0)`` raises
OverflowError where a GPU's ``exp`` (and the CPU kernel) gives inf, and storing NaN into an
integer array raises ValueError where a GPU's conversion gives 0. Under the simulator only,
the device functions built from those bodies read :data:`GPU_MATH` as their ``math``, and
float-to-integer casts convert as the GPU's ``cvt.rzi`` does. On a GPU nothing here changes
what numba compiles: :func:`device_function` is ``cuda.jit(device=True)`` itself.
"""

from __future__ import annotations

import math
import types

import numpy as np
from numba import config, cuda

SIMULATOR = bool(config.ENABLE_CUDASIM)  # as kernels.cuda.core reads it (core imports this)


def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:  # only a large positive x overflows
        return math.inf


def _log(x):
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def _sqrt(x):
    return math.sqrt(x) if x >= 0 else math.nan


# Python's math with IEEE results where the functions the kernels call raise: what a GPU's
# libdevice returns. Other values are Python's (the C library's, as the CPU kernels' are).
GPU_MATH = types.ModuleType("math", "math as a GPU computes it (see kernels/cuda/simulator.py)")
GPU_MATH.__dict__.update({k: v for k, v in vars(math).items() if not k.startswith("__")})
GPU_MATH.__dict__.update(exp=_exp, log=_log, sqrt=_sqrt)


def _with_gpu_math(fn):
    """A copy of ``fn`` whose global ``math`` is :data:`GPU_MATH` (its other globals are
    those ``fn`` sees now)."""
    copy = types.FunctionType(fn.__code__, {**fn.__globals__, "math": GPU_MATH}, fn.__name__,
                              fn.__defaults__, fn.__closure__)
    copy.__qualname__, copy.__doc__ = fn.__qualname__, fn.__doc__
    copy.gpu_math = True
    return copy


def device_function(fn):
    """``fn``, a scalar body, as a CUDA device function: ``cuda.jit(device=True)(fn)`` on a
    GPU; under the simulator, one running with :data:`GPU_MATH`.

    >>> from kernelgraph.kernels import cpu
    >>> f = device_function(cpu._exp)
    >>> f(1000.0) if SIMULATOR else float("inf")
    inf
    """
    return cuda.jit(device=True)(_with_gpu_math(fn) if SIMULATOR else fn)


def use_gpu_math(kernel) -> None:
    """Under the simulator, let a generated kernel's module (``kernel``'s globals: a fused
    group's, :mod:`kernelgraph.static.fusion`) call the scalar bodies with
    :data:`GPU_MATH`: each ``cuda.jit(device=True)(cpu._exp)`` there becomes
    :func:`device_function`'s. Nothing to do on a GPU."""
    if not SIMULATOR:
        return
    namespace = kernel.fn.__globals__
    for name, value in list(namespace.items()):
        body = getattr(value, "fn", None)
        if (getattr(value, "_device", False) and getattr(body, "__module__", "") ==
                "kernelgraph.kernels.cpu" and not getattr(body, "gpu_math", False)):
            namespace[name] = device_function(body)


def float_to_int(value, info: np.iinfo):
    """A float converted to an integer type as a GPU converts it (PTX ``cvt.rzi``):
    toward zero, clamped to the type's range, NaN to 0.

    >>> float_to_int(float("nan"), np.iinfo(np.int32)), float_to_int(-1e20, np.iinfo(np.int32))
    (0, -2147483648)
    """
    if value != value:
        return 0
    if value >= info.max:
        return info.max
    if value <= info.min:
        return info.min
    return int(value)


if SIMULATOR:
    @cuda.jit
    def cast_float_to_int(src, out):
        """``out[i] = src[i]`` for a float ``src`` and an integer ``out``, as a GPU casts."""
        info = np.iinfo(out.dtype)
        start, step = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, out.size, step):
            out[i] = float_to_int(float(src[i]), info)
else:  # pragma: no cover - a GPU's own cast already does it
    cast_float_to_int = None
