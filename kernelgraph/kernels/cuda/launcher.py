"""Every CUDA kernel launch of kernelgraph goes through :func:`launch`.

``launch(kernel, blocks, threads, *args)`` is ``kernel[blocks, threads](*args)``, with one
difference: while a :func:`recording` is open on this thread, each launch is also appended
to it as a :class:`Launch` (the kernel, its configuration and its arguments). A static plan
records the launches of each node once and replays them run after run, with the same
arguments (the same device buffers), so no op wrapper, shape check or allocation runs again
(:mod:`kernelgraph.static.device_plan`).

What a launch costs on the host. ``kernel[blocks, threads](*args)`` makes numba build a
launch configuration, type every argument, look the kernel's compiled overload up for those
types, and then turn each argument into the driver's parameters (an array becomes its
pointer, shape and strides). On a GPU this module skips what it can, in two ways:

- **Bound replays.** A recorded :class:`Launch` is *bound* when it is recorded: the
  specialised kernel (numba-cuda's ``_Kernel`` for the argument types), the driver's launch
  configuration and the parameter list are resolved once (:meth:`Launch.bind`), and
  calling the launch hands them straight to ``cuda.core.launch``. The buffers are the
  plan's own, so the parameters stay valid for as long as the Launch holds its arguments.
- **The eager fast path.** :func:`launch` remembers, per kernel and *argument-type
  signature* (read from the arguments without numba's typing: an array's numba type is
  cached on the array), which compiled overload numba chose; later calls with the same
  signature prepare the parameters and launch it directly.

Both are guarded: anything they do not know exactly as numba does (a kernel compiled per
launch configuration, argument extensions, a debug kernel, a host array, an argument type
not in the signature table, an older numba without the ``cuda.core`` launch path) takes
numba's own ``kernel[blocks, threads](*args)``, and :attr:`Launch.unbound_reason` or
:func:`fast_path_status` says why. Under numba's CUDA simulator kernels run as Python, so
there is nothing to bind: a replay is the plain call. ``KG_CUDA_FAST_LAUNCH=0`` in the
environment turns both paths off (numba's launch everywhere), to compare or to rule them
out.

Work that cannot be replayed (an op that reads device data on the host to decide what to
do, a random draw made on the host) calls :func:`not_replayable` while it runs, so that a
recording knows it holds only part of the node's work (:attr:`Recording.blockers`).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

import numpy as np
from numba import config

SIMULATOR = bool(config.ENABLE_CUDASIM)

__all__ = ["Launch", "Recording", "fast_path_status", "launch", "not_replayable",
           "recording", "replay"]


@dataclass
class Launch:
    """One recorded kernel launch: ``kernel[blocks, threads](*args)``.

    Calling it launches the kernel again on the same arguments: through the bound driver
    parameters where :meth:`bind` succeeded, else through numba.

    >>> from numba import cuda
    >>> @cuda.jit
    ... def twice(x, out):
    ...     i = cuda.grid(1)
    ...     if i < out.size:
    ...         out[i] = 2 * x[i]
    >>> x, out = cuda.to_device(np.arange(3.0)), cuda.device_array(3)
    >>> with recording() as launches:
    ...     launch(twice, 1, 32, x, out)
    >>> out.copy_to_device(np.zeros(3)); launches[0](); out.copy_to_host()
    array([0., 2., 4.])
    """

    kernel: object
    blocks: object
    threads: object
    args: tuple
    bound: object = field(default=None, repr=False, compare=False)
    unbound_reason: str = field(default="", repr=False, compare=False)

    def bind(self) -> bool:
        """Resolve the specialised kernel, its launch configuration and its parameter list
        once (see the module docstring); returns whether the launch is bound. A launch that
        cannot be bound keeps the reason in :attr:`unbound_reason` and replays through numba.
        """
        if self.bound is None and not self.unbound_reason:
            try:
                self.bound = _Bound.of(self.kernel, self.blocks, self.threads, self.args)
            except _NotBindable as e:
                self.unbound_reason = str(e)
            except Exception as e:  # noqa: BLE001 - numba's plain launch stays correct
                self.unbound_reason = f"binding failed ({type(e).__name__}: {e})"
        return self.bound is not None

    def __call__(self) -> None:
        bound = self.bound
        if bound is not None and bound.args is not self.args:
            # the arguments were replaced after binding: bind them anew (or fall back)
            self.bound, self.unbound_reason = None, ""
            bound = self.bound if self.bind() else None
        if bound is not None:
            try:
                bound.launch(bound.stream)
                return
            except Exception as e:  # noqa: BLE001 - the driver refused it: numba's launch
                self.bound = None
                self.unbound_reason = f"the bound launch failed ({type(e).__name__}: {e})"
        self.kernel[self.blocks, self.threads](*self.args)


class Recording(list):
    """The :class:`Launch` objects of one :func:`recording`, in launch order, and
    ``blockers``: why the recorded work cannot be replayed on its own (empty if it can).
    """

    def __init__(self):
        super().__init__()
        self.blockers: list[str] = []


class _Recorders(threading.local):
    def __init__(self):
        self.stack: list[Recording] = []


_recorders = _Recorders()


def launch(kernel, blocks, threads, *args) -> None:
    """Launch ``kernel`` on a grid of ``blocks`` blocks of ``threads`` threads (ints or
    tuples, as numba takes them), recording it if a :func:`recording` is open.

    >>> from numba import cuda
    >>> @cuda.jit
    ... def fill(out, v):
    ...     i = cuda.grid(1)
    ...     if i < out.size:
    ...         out[i] = v
    >>> out = cuda.device_array(4)
    >>> launch(fill, 1, 32, out, 7.0); out.copy_to_host()
    array([7., 7., 7., 7.])
    """
    fast = _fast_entry(kernel, args) if _FAST_ON else None
    if fast is None or not fast.launch_with(blocks, threads, args):
        kernel[blocks, threads](*args)
        if _FAST_ON:
            _learn(kernel, args)
    stack = _recorders.stack
    if stack:
        recorded = Launch(kernel, blocks, threads, args)
        if not SIMULATOR:
            recorded.bind()
        stack[-1].append(recorded)


class recording:
    """``with recording() as launches:`` collects every :func:`launch` made on this thread
    inside the block into the :class:`Recording` (a list) ``launches``.

    >>> with recording() as launches:
    ...     pass
    >>> launches, launches.blockers
    ([], [])
    """

    def __enter__(self) -> Recording:
        self.launches = Recording()
        _recorders.stack.append(self.launches)
        return self.launches

    def __exit__(self, *exc) -> None:
        _recorders.stack.pop()


def not_replayable(reason: str) -> None:
    """Tell every open :func:`recording` on this thread that the work being recorded cannot
    be replayed from its launches alone (``reason`` says why, for ``explain``). A no-op when
    nothing records.

    >>> with recording() as launches:
    ...     not_replayable("reads a flag back to the host")
    >>> launches.blockers
    ['reads a flag back to the host']
    """
    for rec in _recorders.stack:
        rec.blockers.append(reason)


def replay(launches) -> None:
    """Launch every recorded :class:`Launch` of ``launches`` again, in order."""
    for one in launches:
        one()


# -- binding: numba-cuda's specialised kernel and driver parameters, resolved once -----------


class _NotBindable(Exception):
    """Why a launch must go through numba's own ``kernel[blocks, threads](*args)``."""


class _Api:
    """What binding needs from numba-cuda (``numba.cuda.dispatcher`` of numba-cuda 0.30:
    ``cuda.core``'s ``launch`` and ``LaunchConfig``), looked up once."""

    reason = ""
    loaded = False

    @classmethod
    def get(cls):
        if not cls.loaded:
            cls.loaded = True
            cls.reason = cls._load()
        if cls.reason:
            raise _NotBindable(cls.reason)
        return cls

    @classmethod
    def _load(cls) -> str:
        if SIMULATOR:
            return "numba's CUDA simulator runs kernels as Python: a replay is the plain call"
        if os.environ.get("KG_CUDA_FAST_LAUNCH", "1") == "0":
            return "KG_CUDA_FAST_LAUNCH=0 in the environment"
        try:
            from numba.cuda import dispatcher
            from numba.cuda.cudadrv.devicearray import DeviceNDArray
            cls.core_launch = dispatcher.launch
            cls.LaunchConfig = dispatcher.LaunchConfig
            cls.Dispatcher = dispatcher.CUDADispatcher
            # cuda.core renamed LaunchConfig's cooperative flag in 1.0 (numba-cuda reads it so)
            cls.cooperative = ("is_cooperative" if getattr(dispatcher, "CUDA_CORE_GE_1_0",
                                                           False) else "cooperative_launch")
            dispatcher._Kernel._prepare_args  # noqa: B018 - the method the binding calls
        except (ImportError, AttributeError) as e:
            return f"this numba's CUDA target has no cuda.core launch path ({e})"
        cls.device_array = DeviceNDArray
        return ""


class _Bound:
    """A launch resolved down to ``cuda.core.launch(stream, config, function, *params)``."""

    __slots__ = ("args", "config", "function", "kernel", "params", "stream")

    def __init__(self, kernel, config, stream, params, function, args):
        self.kernel, self.config, self.stream = kernel, config, stream
        self.params, self.function = params, function
        self.args = args  # what params were prepared from (and keeps their buffers alive)

    @classmethod
    def of(cls, dispatcher, blocks, threads, args) -> _Bound:
        """Bind ``dispatcher[blocks, threads](*args)``; _NotBindable says why not."""
        spec = _Specialised.of(dispatcher, args)
        config, stream = spec.config(blocks, threads)
        params = spec.prepare(args, stream)
        return cls(spec.kernel, config, stream, params,
                   spec.kernel._codelibrary.get_cufunc().kernel, args)

    def launch(self, stream) -> None:
        """Launch on ``stream`` (a ``cuda.core`` stream; the recorded one, or a graph
        builder's while capturing, :mod:`.capture`)."""
        _Api.core_launch(stream, self.config, self.function, *self.params)


class _Specialised:
    """One compiled overload of a numba CUDA kernel (numba-cuda's ``_Kernel``), with the
    launch configurations made for it."""

    __slots__ = ("configs", "dispatcher", "kernel")

    def __init__(self, dispatcher, kernel):
        self.dispatcher, self.kernel = dispatcher, kernel
        self.configs: dict = {}

    @classmethod
    def of(cls, dispatcher, args) -> _Specialised:
        """The overload numba launched ``dispatcher`` with on ``args``."""
        api = _Api.get()
        if type(dispatcher) is not api.Dispatcher:
            raise _NotBindable(f"{dispatcher!r} is not a numba CUDA kernel")
        argtypes = tuple(dispatcher.typeof_pyval(a) for a in args)
        if getattr(dispatcher, "_launch_config_sensitive", False):
            raise _NotBindable("the kernel is compiled per launch configuration")
        if dispatcher.targetoptions.get("extensions"):
            raise _NotBindable("the kernel has argument extensions")
        if dispatcher.specialized:
            kernel = next(iter(dispatcher.overloads.values()))
        else:
            kernel = dispatcher.overloads.get(argtypes)
        if kernel is None or tuple(kernel.argument_types) != tuple(argtypes):
            raise _NotBindable("no overload compiled for exactly these argument types "
                               "(numba would convert the arguments)")
        if kernel.debug or getattr(kernel, "launch_config_sensitive", False):
            raise _NotBindable("a debug or launch-configuration-sensitive kernel")
        return cls(dispatcher, kernel)

    def config(self, blocks, threads):
        """(cuda.core LaunchConfig, stream) for this grid, made once per grid."""
        key = (blocks, threads)
        found = self.configs.get(key)
        if found is None:
            # numba's own launch configuration normalises the grid and the stream exactly
            # as a plain launch would (ints to 3-tuples, the default stream to cuda.core's)
            numba_cfg = self.dispatcher.configure(blocks, threads)
            found = (_Api.LaunchConfig(grid=numba_cfg.griddim, block=numba_cfg.blockdim,
                                       shmem_size=numba_cfg.sharedmem,
                                       **{_Api.cooperative: self.kernel.cooperative}),
                     numba_cfg.stream)
            if len(self.configs) > 256:
                self.configs.clear()
            self.configs[key] = found
        return found

    def prepare(self, args, stream) -> list:
        """The driver parameters of ``args``, as numba's ``_Kernel.launch`` makes them."""
        kernel = self.kernel
        if len(args) != len(kernel.argument_types):
            raise _NotBindable("the number of arguments differs from the kernel's")
        params, writeback = [], []
        for ty, value in zip(kernel.argument_types, args):
            kernel._prepare_args(ty, value, stream, writeback, params)
        if writeback:  # a host array was copied to the device for the call
            raise _NotBindable("an argument is a host array (copied to the device per call)")
        return params

    def launch_with(self, blocks, threads, args) -> bool:
        """Launch on ``args`` directly; False (nothing launched, and this overload leaves
        the fast path) where preparing or launching fails, so numba launches it instead."""
        try:
            config, stream = self.config(blocks, threads)
            params = self.prepare(args, stream)
            _Api.core_launch(stream, config, self.kernel._codelibrary.get_cufunc().kernel,
                             *params)
            return True
        except Exception:  # noqa: BLE001 - numba's own launch raises what it must
            for key, value in list(_SEEN.items()):
                if value is self:
                    _SEEN[key] = _NO
            return False


# -- the eager fast path ---------------------------------------------------------------------

_FAST_ON = not SIMULATOR and os.environ.get("KG_CUDA_FAST_LAUNCH", "1") != "0"
_NO = object()  # a (kernel, signature) numba keeps launching itself
_SEEN: dict = {}  # (kernel, signature) -> _Specialised or _NO
_INT64 = (-(2**63) + 1, 2**63)  # what numba types int64 (a 64-bit magnitude is not)
_NUMPY_SCALARS = frozenset(np.dtype(c).type for c in "?bhilqBHILQefd")


def _signature(args, array=None):
    """A key that determines numba's argument types of ``args`` (each ``array``'s numba
    type, which numba caches on the array; a Python or NumPy scalar's type), or None where
    an argument is of a kind this table does not know (numba then types the call itself).

    >>> _signature((1, 2.0, True, np.float32(1), (3, 4)), array=type(None))
    (<class 'int'>, <class 'float'>, <class 'bool'>, <class 'numpy.float32'>, \
(<class 'int'>, <class 'int'>))
    >>> _signature((2**63,), array=type(None)), _signature(([1],), array=type(None))
    (None, None)
    """
    key = []
    if array is None:
        array = _Api.device_array
    for a in args:
        t = type(a)
        if t is array:
            key.append(a._numba_type_)
        elif t is int:
            if not _INT64[0] <= a < _INT64[1]:
                return None  # numba types it uint64, or refuses it
            key.append(int)
        elif t is float or t is bool or t in _NUMPY_SCALARS:
            key.append(t)
        elif t is tuple:
            inner = _signature(a, array)
            if inner is None:
                return None
            key.append(inner)
        else:
            return None
    return tuple(key)


def _fast_entry(kernel, args):
    """The cached overload for this kernel and the signature of ``args``, or None."""
    if _Api.reason or not _Api.loaded:
        return None
    try:
        found = _SEEN.get((kernel, _signature(args)))
    except TypeError:  # an unhashable kernel: leave it to numba
        return None
    return None if found is None or found is _NO else found


def _learn(kernel, args) -> None:
    """After numba launched ``kernel`` on ``args`` (compiling it if needed), remember the
    overload it used for their signature, or that this kernel stays numba's."""
    global _FAST_ON
    try:
        _Api.get()
    except _NotBindable:
        _FAST_ON = False
        return
    sig = _signature(args)
    if sig is None:
        return
    try:
        if (kernel, sig) in _SEEN:
            return
        try:
            spec = _Specialised.of(kernel, args)
        except Exception:  # noqa: BLE001 - _NotBindable or numba's own: numba launches it
            spec = _NO
        if len(_SEEN) > 4096:
            _SEEN.clear()
        _SEEN[kernel, sig] = spec
    except TypeError:  # unhashable
        return


def fast_path_status() -> str:
    """Whether launches are bound and eager launches take the cached fast path on this
    machine: ``"on"``, or the reason they are not (under the simulator, always a reason).

    >>> status = fast_path_status()
    >>> status == "on" or any(w in status for w in ("simulator", "cuda.core", "KG_CUDA"))
    True
    """
    try:
        _Api.get()
    except _NotBindable as e:
        return str(e)
    return "on" if _FAST_ON else "off: the eager fast path was turned off"
