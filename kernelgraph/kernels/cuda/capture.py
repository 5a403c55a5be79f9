"""Recorded launches captured as one CUDA graph, replayed with one driver call.

A static plan replays the same launches on the same buffers every run
(:mod:`.launcher`). Even bound, each replayed launch is a driver call from Python; a CUDA
graph holds all of them, and ``cuGraphLaunch`` starts the whole list at once: the host
cost of a step no longer grows with its number of kernels.

How: a ``cuda.core`` ``GraphBuilder`` captures its stream; each bound :class:`Launch`
launches into that stream (``cuda.core.launch`` accepts the builder's stream, as numba-cuda
0.30's ``kernel[blocks, threads, builder]`` does), and the finished graph is instantiated
once. Nothing runs while capturing. A replay launches the graph on the stream the launches
were recorded on (the default stream, where kernelgraph runs every kernel and copies the
feeds in), so it is ordered after the feeds' uploads and before the fetches' downloads like
the plain launches it stands for.

:func:`capture` returns ``(graph, "")``, or ``(None, reason)`` where capture cannot apply
(numba's simulator, no ``cuda.core``, a launch that is not bound, a driver error); the
caller then replays the launches one by one. ``KG_CUDA_GRAPHS=0`` in the environment turns
capture off.
"""

from __future__ import annotations

import gc
import os

from . import launcher

__all__ = ["CapturedGraph", "capture"]


class CapturedGraph:
    """An instantiated CUDA graph of recorded launches; :meth:`replay` (or calling it) runs
    them all, in their recorded order, with one driver call. It keeps the launches (and so
    their argument buffers) alive: the graph holds their device pointers."""

    def __init__(self, graph, stream, launches, builder):
        self._graph, self._stream, self._builder = graph, stream, builder
        self.launches = list(launches)

    def replay(self) -> None:
        """Launch the graph on the recorded launches' stream."""
        self._graph.launch(self._stream)

    __call__ = replay

    def __len__(self) -> int:
        return len(self.launches)

    def __repr__(self) -> str:
        return f"<CUDA graph of {len(self.launches)} kernel launches>"


def capture(launches) -> tuple[CapturedGraph | None, str]:
    """Capture ``launches`` (recorded :class:`.launcher.Launch` objects) into one CUDA
    graph: ``(graph, "")``, or ``(None, why not)``, where the caller replays them one by one.

    >>> graph, why = capture([])
    >>> graph is None, why
    (True, 'no launches to capture')
    """
    launches = list(launches)
    if not launches:
        return None, "no launches to capture"
    if launcher.SIMULATOR:
        return None, "numba's CUDA simulator has no CUDA graphs"
    if os.environ.get("KG_CUDA_GRAPHS", "1") == "0":
        return None, "KG_CUDA_GRAPHS=0 in the environment"
    try:
        from cuda.core import Device
    except ImportError as e:
        return None, f"cuda.core is not available ({e})"
    for one in launches:
        if not one.bind():
            return None, f"a launch of {_name(one.kernel)} is not bound: {one.unbound_reason}"
    stream = launches[0].bound.stream
    if len({_handle(one.bound.stream) for one in launches}) != 1:
        return None, "the launches were recorded on different streams"
    try:
        graph, builder = _build(Device, launches)
    except Exception as e:  # noqa: BLE001 - any driver failure: plain replays instead
        return None, f"capture failed ({type(e).__name__}: {e})"
    return CapturedGraph(graph, stream, launches, builder), ""


def _build(Device, launches):
    """(the instantiated graph of ``launches``, its builder), captured on a fresh builder's
    stream."""
    from numba import cuda

    device = Device(cuda.get_current_device().id)
    device.set_current()  # the primary context, which numba's kernels and arrays live in
    builder = device.create_graph_builder()
    # relaxed (numba-cuda's own tests capture so): nothing else is forbidden meanwhile. The
    # launches go only to the builder's stream; the garbage collector stays off so that no
    # device array dies (a free on the default stream) in the middle of the capture.
    collecting = gc.isenabled()
    gc.disable()
    try:
        builder.begin_building("relaxed")
        try:
            for one in launches:
                one.bound.launch(builder.stream)
        except BaseException:
            builder.end_building()  # leave no stream in capture mode behind
            raise
        builder.end_building()
    finally:
        if collecting:
            gc.enable()
    return builder.complete(), builder


def _handle(stream):
    """A stream's driver handle as an int (cuda.core makes a new object per lookup)."""
    try:
        return int(stream.handle)
    except (AttributeError, TypeError, ValueError):
        return id(stream)


def _name(kernel) -> str:
    fn = getattr(kernel, "py_func", None)
    return getattr(fn, "__name__", None) or repr(kernel)
