"""The CUDA launch layer: every launch goes through ``launcher.launch``, recordings replay
to the same bits, and what cannot be bound, replayed or captured says why.

Without a GPU these run on numba's simulator (see ../conftest.py): there a replay is the
plain call and binding and capture decline with a reason; on a GPU the same tests check
the bound replays (and, where ``cuda.core`` is present, the captured graphs) instead.
"""

import ast
import gc
from pathlib import Path

import numpy as np
import pytest

from kernelgraph import devices, ops
from kernelgraph.kernels.cuda import capture as cap
from kernelgraph.kernels.cuda import conv, core, indexing, launcher
from kernelgraph.kernels.cuda import elementwise as E
from kernelgraph.kernels.cuda import random as cuda_random

ROOT = Path(__file__).resolve().parents[1] / "kernelgraph"
F32 = np.float32


def _forward(op):
    """The op's CUDA forward (what a CUDA node of it runs)."""
    return op.kernel(devices.device("cuda"))


def _bits(a) -> np.ndarray:
    """A host copy of device array ``a`` as raw bytes (NaN payloads and -0.0 included)."""
    return np.ascontiguousarray(a.copy_to_host()).view(np.uint8)


def _run(seed: int = 0):
    """A small chain of kernels of several families, on fresh inputs: (inputs, outputs)."""
    rng = np.random.default_rng(seed)
    x = core.to_device(rng.standard_normal((2, 3, 6, 6)).astype(F32))
    y = core.to_device(rng.standard_normal((1, 3, 1, 6)).astype(F32))
    idx = core.to_device(np.array([2, 0, 1], np.int64))
    s = _forward(ops.add)(x, y)                      # broadcast (strided) elementwise
    m = _forward(ops.mul)(s, 0.5)                    # flat elementwise with a number
    p = conv.max_pool2d(m, (2, 2), (2, 2), (0, 0))   # pooling
    t = core.strided_copy(p, (2, 3, 3, 3), core.contiguous_strides(p.shape))
    g = indexing.gather(core.copy(t).reshape(2, 3, 9), idx, 1)  # gather (checks indices)
    c = core.astype(g, np.float64)
    return (x, y, idx), (s, m, p, t, g, c)


def _parse(path):
    # CPython 3.11's AST conversion fails ("recursion depth mismatch") when a collection runs
    # a finalizer in the middle of it; the suite's earlier tests leave plenty to collect
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(path.read_text(), str(path))
    finally:
        if enabled:
            gc.enable()


def test_every_cuda_launch_in_kernelgraph_goes_through_the_launcher():
    """No ``kernel[blocks, threads](...)`` outside launcher.py (and the capture module):
    a launch anywhere else would escape a static plan's recording."""
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.name in ("launcher.py", "capture.py"):
            continue
        tree = _parse(path)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                    and isinstance(node.func.slice, ast.Tuple)
                    and 2 <= len(node.func.slice.elts) <= 4):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == [], f"launch these through launcher.launch: {offenders}"


def test_a_recording_collects_each_launch_with_its_configuration_and_arguments():
    x = core.to_device(np.arange(6, dtype=F32))
    with launcher.recording() as launches:
        out = _forward(ops.add)(x, 1.0)
    assert isinstance(launches, launcher.Recording) and launches.blockers == []
    assert len(launches) == 1
    (one,) = launches
    assert one.kernel is not None and one.blocks and one.threads
    assert any(a is not None and getattr(a, "shape", None) == (6,) for a in one.args)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(6, dtype=F32) + 1)


def test_launches_outside_a_recording_are_not_kept_and_recordings_nest():
    x = core.to_device(np.ones(4, F32))
    with launcher.recording() as outer:
        core.copy(x)
        with launcher.recording() as inner:
            core.copy(x)
            core.copy(x)
        core.copy(x)
    core.copy(x)  # nothing records this one
    assert (len(outer), len(inner)) == (2, 2)


def test_replaying_a_recording_gives_the_same_bits_as_the_original_launches():
    with launcher.recording() as launches:
        _, outputs = _run()
    first = [_bits(o) for o in outputs]
    assert len(launches) >= 6
    for o in outputs:  # wipe every output: the replay must write each of them again
        o.copy_to_device(np.full(o.shape, np.nan if o.dtype.kind == "f" else 0, o.dtype))
    launcher.replay(launches)
    for before, o in zip(first, outputs):
        assert np.array_equal(before, _bits(o))


def test_a_replay_reads_the_inputs_current_contents():
    """What a static plan relies on: new feeds written into the recorded input buffers,
    then a replay, give what running the ops afresh on those feeds gives, bit for bit."""
    with launcher.recording() as launches:
        (x, y, idx), outputs = _run(seed=0)
    (x2, y2, idx2), fresh = _run(seed=1)
    x.copy_to_device(x2.copy_to_host())
    y.copy_to_device(y2.copy_to_host())
    launcher.replay(launches)
    for got, want in zip(outputs, fresh):
        assert np.array_equal(_bits(got), _bits(want))


def test_work_read_back_on_the_host_marks_the_recording_not_replayable():
    ints = core.to_device(np.array([1, 2, 3], np.int64))
    with launcher.recording() as launches:
        assert not E.has_zero(ints)
        indexing.check_indices(ints, 4, "gather")
        drawn = cuda_random.drawn_on_host(lambda n: np.arange(n, dtype=F32))(3)
    np.testing.assert_array_equal(drawn.copy_to_host(), np.arange(3, dtype=F32))
    assert len(launches.blockers) == 3
    assert "host" in launches.blockers[0] and "gather" in launches.blockers[1]
    assert "random" in launches.blockers[2]
    launcher.not_replayable("nobody records this")  # no recording open: nothing happens


def test_not_replayable_reaches_every_open_recording():
    with launcher.recording() as outer, launcher.recording() as inner:
        launcher.not_replayable("reads a flag")
    assert outer.blockers == inner.blockers == ["reads a flag"]


@pytest.mark.skipif(not core.SIMULATOR, reason="the simulator's fallbacks")
def test_under_the_simulator_nothing_is_bound_and_a_replay_is_the_plain_call():
    x = core.to_device(np.arange(4, dtype=F32))
    with launcher.recording() as launches:
        out = core.copy(x)
    (one,) = launches
    assert one.bound is None
    assert one.bind() is False
    assert "simulator" in one.unbound_reason
    out.copy_to_device(np.zeros(4, F32))
    one()
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(4, dtype=F32))
    assert "simulator" in launcher.fast_path_status()


@pytest.mark.skipif(core.SIMULATOR, reason="needs a GPU")
def test_on_a_gpu_recorded_launches_are_bound_and_replay_the_same_bits():
    with launcher.recording() as launches:
        _, outputs = _run()
    reasons = {one.unbound_reason for one in launches if one.bound is None}
    assert launcher.fast_path_status() != "on" or not reasons, reasons
    first = [_bits(o) for o in outputs]
    for o in outputs:
        o.copy_to_device(np.zeros(o.shape, o.dtype))
    launcher.replay(launches)
    for before, o in zip(first, outputs):
        assert np.array_equal(before, _bits(o))


def test_capture_declines_with_a_reason_where_it_cannot_apply():
    assert cap.capture([]) == (None, "no launches to capture")
    with launcher.recording() as launches:
        _run()
    graph, why = cap.capture(launches)
    if core.SIMULATOR:
        assert graph is None and "simulator" in why
    elif graph is None:  # a GPU without cuda.core, or a driver refusal: said why
        assert why
    else:
        assert why == "" and len(graph) == len(launches)


@pytest.mark.skipif(core.SIMULATOR, reason="needs a GPU with cuda.core")
def test_a_captured_graph_replays_the_same_bits_as_plain_launches():
    with launcher.recording() as launches:
        _, outputs = _run()
    first = [_bits(o) for o in outputs]
    graph, why = cap.capture(launches)
    if graph is None:
        pytest.skip(f"no capture here: {why}")
    for o in outputs:
        o.copy_to_device(np.zeros(o.shape, o.dtype))
    graph.replay()
    for before, o in zip(first, outputs):
        assert np.array_equal(before, _bits(o))


def test_eager_launches_through_the_fast_path_compute_what_numba_computes():
    """Twice the same kernel and signature (the second call takes the cached overload on a
    GPU): the same values as NumPy, for flat, strided and scalar operands."""
    a = np.arange(12, dtype=F32).reshape(3, 4)
    b = np.linspace(-1, 1, 4).astype(F32)
    for _ in range(2):
        got = _forward(ops.add)(core.to_device(a), core.to_device(b))
        np.testing.assert_array_equal(got.copy_to_host(), a + b)
        got = _forward(ops.mul)(core.to_device(a), F32(3))
        np.testing.assert_array_equal(got.copy_to_host(), a * F32(3))


@pytest.mark.skipif(core.SIMULATOR, reason="needs a GPU")
def test_on_a_gpu_the_eager_fast_path_takes_over_after_the_first_launch():
    """numba launches (and types) the first call; the second of the same kernel and
    argument types goes through the cached overload. With numba-cuda installed the fast
    path must be on: a silent fallback would hide the host cost it exists to remove."""
    import importlib.util
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip(f"numba's built-in CUDA target: {launcher.fast_path_status()}")
    assert launcher.fast_path_status() == "on"
    x, out = core.to_device(np.arange(8, dtype=F32)), core.empty((8,), F32)
    for _ in range(2):
        launcher.launch(core._cast, 1, 32, x, out)
    entry = launcher._SEEN.get((core._cast, launcher._signature((x, out))))
    assert isinstance(entry, launcher._Specialised)
    np.testing.assert_array_equal(out.copy_to_host(), np.arange(8, dtype=F32))
