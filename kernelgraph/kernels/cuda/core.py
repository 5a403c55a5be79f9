"""What every CUDA kernel module shares: allocation, launch sizes, strided indexing, casts.

Conventions (every CUDA forward in this package keeps them):

- Arrays are numba device arrays (``DeviceNDArray``, or ``FakeCUDAArray`` under numba's
  simulator, ``NUMBA_ENABLE_CUDASIM=1``). Every CUDA forward *returns a new C-contiguous
  device array* and accepts C-contiguous device arrays (plus Python numbers where the CPU
  forward accepts them). Nothing is copied to the host behind the caller's back.
- Kernels use grid-stride loops, so a launch needs only ``launch(n)`` threads: on a GPU that
  is enough blocks to fill it, and under the simulator (which runs every CUDA thread as a
  Python thread) a handful of threads, which keeps the tests fast.
- Indexing an N-d array from a flat index goes through :func:`offset` with ``shape`` and
  element ``strides`` passed as tuples (a stride of 0 broadcasts a dimension), so one kernel
  serves transpose, broadcast, slicing and elementwise broadcasting at every rank.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import config, cuda

from ...devices import is_cuda_array
from . import launcher
from .simulator import cast_float_to_int

SIMULATOR = bool(config.ENABLE_CUDASIM)
if not SIMULATOR:  # device arrays from CUDA's memory pool (before any context exists)
    from . import memory

    memory.install()
# Threads per block: 256 on a GPU; the simulator pays per thread, not per element.
THREADS = 32 if SIMULATOR else 256
MAX_BLOCKS = 1 if SIMULATOR else 65535 * 4
# A grid-stride launch needs only enough blocks to keep every SM busy: 32 blocks of 256
# threads per SM is four waves at 2,048 resident threads. One thread per element costs block
# scheduling instead: ``a * b`` over 64M float32 took 0.52 ms that way and 0.34 ms with 32
# blocks per SM (H100; 8 and 64 per SM gave the same 0.34). Read at call time: the tests set
# it to 0, one block, to walk every grid-stride loop on a GPU too.
BLOCKS_PER_SM = 32


@functools.cache
def _sm_count() -> int:
    return cuda.get_current_device().MULTIPROCESSOR_COUNT


def grid(blocks: int) -> int:
    """``blocks`` capped at what fills the GPU (:data:`BLOCKS_PER_SM`), at least 1."""
    return max(1, min(MAX_BLOCKS, BLOCKS_PER_SM * _sm_count(), blocks))


def is_device_array(x) -> bool:
    """Whether ``x`` is a numba device array (the simulator's numba.cuda has no
    ``is_cuda_array``, so kernelgraph.devices tells)."""
    return is_cuda_array(x)


def launch(n: int, threads: int = THREADS) -> tuple[int, int]:
    """(blocks, threads) for a grid-stride loop over ``n`` items."""
    if SIMULATOR:
        return 1, max(1, min(threads, n))
    return grid(math.ceil(n / threads)), threads


def empty(shape, dtype):
    """A new, uninitialised, C-contiguous device array."""
    return cuda.device_array(tuple(int(s) for s in shape), dtype=np.dtype(dtype))


def full(shape, value, dtype):
    out = empty(shape, dtype)
    if out.size:
        blocks, threads = launch(out.size)
        launcher.launch(_fill, blocks, threads, flat(out), out.dtype.type(value))
    return out


def to_device(a):
    """A host array (or number) copied to the device, as a C-contiguous device array."""
    a = np.asarray(a)
    # Not np.ascontiguousarray: it turns a 0-d array into a 1-d one.
    return cuda.to_device(a if a.flags.c_contiguous else np.ascontiguousarray(a))


def to_host(a) -> np.ndarray:
    return a.copy_to_host()


def flat(x):
    """A 1-D view of a C-contiguous device array (0-d arrays become length 1).

    The view is made once per array and kept on it: an eager op's output is flattened
    again as the next op's input, and each numba reshape builds a new array object, which
    a launch then has to type anew.

    >>> x = to_device(np.zeros((2, 3)))
    >>> flat(x).shape, flat(x) is flat(x)
    ((6,), True)
    """
    if x.ndim == 1:
        return x
    try:
        return x._kg_flat
    except AttributeError:
        pass
    view = x.reshape(x.size)
    try:
        x._kg_flat = view  # the view shares x's memory and does not refer to x: no cycle
    except AttributeError:  # an array class that takes no new attributes
        pass
    return view


def contiguous_strides(shape) -> tuple:
    """Element strides of a C-contiguous array of ``shape``."""
    strides, step = [], 1
    for n in reversed(tuple(shape)):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def broadcast_strides(shape, out_shape) -> tuple:
    """Element strides that read a C-contiguous ``shape`` array as if broadcast to
    ``out_shape`` (NumPy's rules; a stride of 0 repeats a dimension)."""
    shape, out_shape = tuple(shape), tuple(out_shape)
    pad = len(out_shape) - len(shape)
    own = contiguous_strides(shape)
    return tuple(0 if i < pad or shape[i - pad] == 1 and out_shape[i] != 1 else own[i - pad]
                 for i in range(len(out_shape)))


@cuda.jit(device=True)
def offset(i, shape, strides):
    """The element offset of flat (C-order) index ``i`` of ``shape`` under ``strides``."""
    off = 0
    for d in range(len(shape) - 1, -1, -1):
        n = shape[d]
        off += (i % n) * strides[d]
        i //= n
    return off


@cuda.jit
def _fill(out, value):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.size, step):
        out[i] = value


@cuda.jit
def _strided_copy(src, out, shape, strides, base):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.size, step):
        out[i] = src[base + offset(i, shape, strides)]


@cuda.jit
def _strided_write(src, out, shape, strides, base):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, src.size, step):
        out[base + offset(i, shape, strides)] = src[i]


def _dims(shape, strides):
    # Kernels take shape/strides tuples; a 0-d array reads as one element.
    return (tuple(int(s) for s in shape) or (1,)), (tuple(int(s) for s in strides) or (0,))


def strided_copy(src, out_shape, strides, base: int = 0, dtype=None):
    """A new C-contiguous array of ``out_shape``: element ``idx`` is
    ``src.flat[base + sum(idx * strides)]`` (``src`` C-contiguous). Transpose, broadcast and
    slicing are all this with different strides."""
    out = empty(out_shape, dtype or src.dtype)
    if out.size:
        shape, strides = _dims(out_shape, strides)
        blocks, threads = launch(out.size)
        launcher.launch(_strided_copy, blocks, threads, flat(src), flat(out), shape, strides,
                        int(base))
    return out


def strided_write(src, out, strides, base: int = 0):
    """Write C-contiguous ``src`` into ``out`` (C-contiguous) in place at
    ``out.flat[base + sum(idx * strides)]`` for each index ``idx`` of ``src``: the inverse of
    :func:`strided_copy` (padding, concatenation, slice gradients)."""
    if src.size:
        shape, strides = _dims(src.shape, strides)
        blocks, threads = launch(src.size)
        launcher.launch(_strided_write, blocks, threads, flat(src), flat(out), shape, strides,
                        int(base))
    return out


@cuda.jit
def _cast(src, out):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.size, step):
        out[i] = src[i]


@cuda.jit
def _cast_to_bool(src, out):
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, out.size, step):
        out[i] = src[i] != 0


def astype(x, dtype):
    """``x`` converted to ``dtype`` (a new array; ``x`` itself when it already is)."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    out = empty(x.shape, dtype)
    if out.size:
        blocks, threads = launch(out.size)
        kernel = _cast_to_bool if dtype == np.bool_ else _cast
        if SIMULATOR and x.dtype.kind == "f" and dtype.kind in "iu":
            kernel = cast_float_to_int  # NaN is 0, as on a GPU: no ValueError
        launcher.launch(kernel, blocks, threads, flat(x), flat(out))
    return out


def copy(x):
    """A new C-contiguous copy of a C-contiguous device array."""
    if not x.is_c_contiguous():
        raise ValueError("kernelgraph's CUDA kernels expect C-contiguous device arrays")
    out = empty(x.shape, x.dtype)
    if x.size:
        # a copy is a launch (not a driver memcpy), so a static plan that records
        # a node's launches replays its copies too (kernelgraph.static.device_plan)
        blocks, threads = launch(x.size)
        launcher.launch(_cast, blocks, threads, flat(x), flat(out))
    return out


_SCALARS: dict = {}


def scalar_array(value, dtype):
    """A cached 1-element device array holding ``value`` as ``dtype``: lets a Python number
    take part in an array kernel (with stride 0) without an upload on every call."""
    dtype = np.dtype(dtype)
    key = (dtype.str, value if value == value else "nan", type(value))
    hit = _SCALARS.get(key)
    if hit is None:
        if len(_SCALARS) > 1024:
            _SCALARS.clear()
        hit = _SCALARS[key] = to_device(np.array([value], dtype=dtype))
    return hit
