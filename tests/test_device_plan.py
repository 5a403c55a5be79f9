"""The static plan on a GPU (kernelgraph.static.device_plan): recorded once, replayed after.

Without a GPU these run on numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), with tiny
shapes. They check what a replay must keep: the bits of the live run, the same device
buffers run after run, a recording per feed signature and again when a variable's array is
replaced, fresh random draws, and errors that name the node and the user's line. CUDA graph
capture needs a real GPU: here every segment says why it was not captured.
"""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph import devices
from kernelgraph.errors import InvalidArgumentError
from kernelgraph.ops import random
from kernelgraph.static import device_plan

pytest.importorskip("kernelgraph.kernels.cuda.core")

W0 = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)


def _model(device="cuda"):
    """A softmax regression trained by plain SGD: (graph, x, y, w, b, loss, train, init)."""
    g = kg.Graph()
    with g.as_default(), kg.device(device):
        x = kg.placeholder(kg.float32, [None, 4], name="x")
        y = kg.placeholder(kg.int32, [None], name="y")
        w = kg.Variable(W0, name="w")
        b = kg.Variable(np.zeros(3, np.float32), name="b")
        loss = kg.cross_entropy(kg.matmul(x, w) + b, y)
        gw, gb = kg.gradients(loss, [w, b])
        train = [w.assign_sub(0.5 * gw), b.assign_sub(0.5 * gb)]
        init = kg.global_variables_initializer()
    return g, x, y, w, b, loss, train, init


def _batches(n, rows=5, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((rows, 4)).astype(np.float32),
             rng.integers(0, 3, rows).astype(np.int32)) for _ in range(n)]


def _train(batches, enabled=True, **session):
    """Losses and final (w, b) of SGD steps on ``batches``; the session's last plan."""
    device_plan.ENABLED, before = enabled, device_plan.ENABLED
    try:
        g, x, y, w, b, loss, train, init = _model()
        with kg.Session(g, **session) as sess:
            sess.run(init)
            losses = [sess.run([loss, train], {x: xv, y: yv})[0] for xv, yv in batches]
            plan = sess.plan([loss, train], {x: batches[-1][0], y: batches[-1][1]})
            return losses, sess.run([w, b]), plan
    finally:
        device_plan.ENABLED = before


def test_replayed_training_has_the_bits_of_the_live_run():
    batches = _batches(4)
    replayed, (w, b), plan = _train(batches)
    live, (w_live, b_live), live_plan = _train(batches, enabled=False)
    unoptimised, (w_raw, b_raw), _ = _train(batches, enabled=False, optimize=False)
    assert plan.device.recorded and plan.device.records == 1
    assert live_plan.device.reason.startswith("switched off")
    np.testing.assert_array_equal(replayed, live)
    np.testing.assert_array_equal(w, w_live)
    np.testing.assert_array_equal(b, b_live)
    np.testing.assert_array_equal(w, w_raw)  # passes and transposes-as-layouts change no bit
    np.testing.assert_array_equal(replayed, unoptimised)
    assert not np.array_equal(w, W0)  # it did train


def test_buffers_feeds_and_variables_stay_the_same_arrays():
    g, x, y, w, b, loss, train, init = _model()
    batches = _batches(3)
    with kg.Session(g) as sess:
        sess.run(init)
        sess.run([loss, train], {x: batches[0][0], y: batches[0][1]})
        device = sess.plan([loss, train], {x: batches[0][0], y: batches[0][1]}).device
        buffers, feeds = dict(device.buffers), list(device.feed_buffers)
        w_array = sess._store[w]
        for xv, yv in batches[1:]:
            sess.run([loss, train], {x: xv, y: yv})
            assert device.buffers.keys() == buffers.keys()
            assert all(device.buffers[k] is v for k, v in buffers.items())
            assert all(a is c for a, c in zip(device.feed_buffers, feeds))
            assert sess._store[w] is w_array  # in place
        assert device.records == 1 and len(buffers) > 5
        # The plain graph on the CPU computes what the replays did, to float tolerance.
        text = device.summary()
        assert "launches recorded once" in text and "buffers" in text
        assert "live: softmax_cross_entropy" in text


def test_a_new_feed_shape_records_its_own_plan_and_a_new_variable_array_records_again(
        tmp_path):
    g, x, y, w, b, loss, train, init = _model()
    small, large = _batches(1, rows=3)[0], _batches(1, rows=6, seed=1)[0]
    with kg.Session(g) as sess:
        sess.run(init)
        first = sess.run(loss, {x: small[0], y: small[1]})
        sess.run(loss, {x: large[0], y: large[1]})
        again = sess.run(loss, {x: small[0], y: small[1]})
        p_small = sess.plan(loss, {x: small[0], y: small[1]})
        p_large = sess.plan(loss, {x: large[0], y: large[1]})
        assert p_small is not p_large
        assert p_small.device.records == 1 and p_large.device.records == 1
        assert first == again
        assert tuple(p_small.device.feed_buffers[0].shape) == (3, 4)
        assert tuple(p_large.device.feed_buffers[0].shape) == (6, 4)
        kg.save(tmp_path / "start.kg", sess)
        sess.run(train, {x: small[0], y: small[1]})
        assert sess.run(loss, {x: small[0], y: small[1]}) != first
        sess.run(init)  # an initializer on the GPU writes the variables' own arrays
        assert sess.run(loss, {x: small[0], y: small[1]}) == first
        assert p_small.device.records == 1
        sess.run(train, {x: small[0], y: small[1]})
        kg.load(tmp_path / "start.kg", into=sess)  # new arrays: the plan records again
        assert sess.run(loss, {x: small[0], y: small[1]}) == first
        assert p_small.device.records == 2


def test_random_nodes_run_live_and_draw_fresh_values():
    g = kg.Graph()
    with g.as_default(), kg.device("cuda"):
        x = kg.placeholder(kg.float32, [4], name="x")
        noise = random.random_normal([4], name="noise")
        y = kg.relu(x) + noise
    with kg.Session(g) as sess:
        feed = {x: np.arange(4, dtype=np.float32)}
        draws = [sess.run(y, feed) for _ in range(3)]
        device = sess.plan(y, feed).device
    assert device.recorded
    assert "noise" in device.live and "random" in device.live["noise"]
    assert not np.array_equal(draws[1], draws[2]) and not np.array_equal(draws[0], draws[1])


def test_error_in_a_live_node_of_a_replayed_run_names_the_node_and_line():
    g, x, y, w, b, loss, train, init = _model()
    xv, yv = _batches(1)[0]
    with kg.Session(g) as sess:
        sess.run(init)
        sess.run(loss, {x: xv, y: yv})
        sess.run(loss, {x: xv, y: yv})  # replayed
        with pytest.raises(InvalidArgumentError) as info:
            sess.run(loss, {x: xv, y: np.array([0, 1, 7, 0, 1], np.int32)})
    text = str(info.value)
    assert "softmax_cross_entropy" in text and "outside the valid range" in text
    assert "test_device_plan.py" in text  # the user's line that made the node


def test_error_in_a_replayed_launch_names_the_node():
    g = kg.Graph()
    with g.as_default(), kg.device("cuda"):
        x = kg.placeholder(kg.float32, [2, 3], name="x")
        y = kg.exp(x, name="grow") * 2.0
    with kg.Session(g, skip_passes=("fuse",)) as sess:
        feed = {x: np.ones((2, 3), np.float32)}
        sess.run(y, feed)
        device = sess.plan(y, feed).device
        (_, segment, _), = [s for s in device.steps if s[0] == "seg"]
        launch, node = next((launch, node) for launch, node in segment
                            if node.name == "grow")
        launch.args = launch.args[:1]  # a launch the kernel cannot take
        with pytest.raises(InvalidArgumentError) as info:
            sess.run(y, feed)
    assert "'grow'" in str(info.value) and "test_device_plan.py" in str(info.value)


def test_explain_shows_the_device_plan_and_why_nothing_was_captured():
    g = kg.Graph()
    with g.as_default(), kg.device("cuda"):
        x = kg.placeholder(kg.float32, [2, 3], name="x")
        y = kg.relu(x) * 3.0
    with kg.Session(g) as sess:
        feed = {x: np.array([[1, -2, 3], [-4, 5, -6]], np.float32)}
        np.testing.assert_array_equal(sess.run(y, feed), np.maximum(feed[x], 0) * 3)
        explained = sess.explain(y, feed)
    text = str(explained)
    assert "device plan:" in text and "segment 0: not captured:" in text
    assert explained.device.captured == [None]
    assert explained.device.capture_reasons[0]


def test_transposes_become_matmul_layouts_on_the_gpu():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 2)).astype(np.float32), \
        rng.standard_normal((4, 3)).astype(np.float32)
    g = kg.Graph()
    with g.as_default(), kg.device("cuda"):
        pa = kg.placeholder(kg.float32, [3, 2], name="a")
        pb = kg.placeholder(kg.float32, [4, 3], name="b")
        c = kg.matmul(kg.ops.matrix_transpose(pa), kg.ops.matrix_transpose(pb),
                      name="product")
    with kg.Session(g) as sess:
        feed = {pa: a, pb: b}
        got = sess.run(c, feed)
        explained = sess.explain(c, feed)
    changes = [ch for r in explained.passes if r.name == "simplify" for ch in r.changes]
    assert any("trans_a" in ch for ch in changes) and any("trans_b" in ch for ch in changes)
    assert "matrix_transpose" not in explained.source
    np.testing.assert_allclose(got, a.T @ b.T, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("trans_a, trans_b", [(True, False), (False, True), (True, True)])
def test_matmul_layout_flags_against_numpy_and_finite_differences(trans_a, trans_b):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 2) if trans_a else (2, 3))
    b = rng.standard_normal((4, 3) if trans_b else (3, 4))
    want = (a.T if trans_a else a) @ (b.T if trans_b else b)
    op = kg.ops.matmul
    np.testing.assert_allclose(op.forward(a, b, trans_a=trans_a, trans_b=trans_b), want,
                               rtol=1e-12)
    cuda = op.kernel(devices.Device("cuda"))
    core = pytest.importorskip("kernelgraph.kernels.cuda.core")
    got = cuda(core.to_device(a), core.to_device(b), trans_a=trans_a, trans_b=trans_b)
    np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-12)
    # The gradient rule with the flags, against central differences of sum(c * r).
    r = rng.standard_normal(want.shape)
    g = kg.Graph()
    with g.as_default():
        pa, pb = kg.placeholder(kg.float64, a.shape), kg.placeholder(kg.float64, b.shape)
        c = op(pa, pb, trans_a=trans_a, trans_b=trans_b)
        grads = kg.gradients(kg.reduce_sum(c * r), [pa, pb])
    with kg.Session(g) as sess:
        ga, gb = sess.run(grads, {pa: a, pb: b})

    def f(a_, b_):
        return float(np.sum(((a_.T if trans_a else a_) @ (b_.T if trans_b else b_)) * r))

    for value, grad, which in ((a, ga, 0), (b, gb, 1)):
        numeric = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            up, down = value.copy(), value.copy()
            up[idx] += 1e-6
            down[idx] -= 1e-6
            args_up = (up, b) if which == 0 else (a, up)
            args_down = (down, b) if which == 0 else (a, down)
            numeric[idx] = (f(*args_up) - f(*args_down)) / 2e-6
        np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_cpu_plans_have_no_device_plan_and_generic_plans_run_live():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, [None], name="x")
        y = x * 2.0
    with kg.Session(g) as sess:
        assert sess.plan(y, {x: np.ones(2, np.float32)}).device is None
    g = kg.Graph()
    with g.as_default(), kg.device("cuda"):
        x = kg.placeholder(kg.float32, [None], name="x")
        y = x * 2.0
    with kg.Session(g) as sess:
        generic = sess.plan(y, {x: None})
        assert generic.device.reason.startswith("a generic plan")
        np.testing.assert_array_equal(generic.fn(np.ones(2, np.float32))[0], [2.0, 2.0])
        assert "every run is live" in generic.device.summary()


def test_host_nodes_in_a_gpu_plan_run_live_without_recording_again():
    g = kg.Graph()
    with g.as_default():
        with kg.device("cpu"):
            steps = kg.Variable(np.float32(0.0), name="steps")
            tick = steps.assign_add(np.float32(1.0))
        with kg.device("cuda"):
            x = kg.placeholder(kg.float32, [3], name="x")
            y = kg.relu(x) * 2.0
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        feed = {x: np.array([-1.0, 0.5, 2.0], np.float32)}
        runs = [sess.run([y, tick], feed) for _ in range(3)]
        device = sess.plan([y, tick], feed).device
    assert [float(t) for _, t in runs] == [1.0, 2.0, 3.0]
    for out, _ in runs:
        np.testing.assert_array_equal(out, [0.0, 1.0, 4.0])
    assert device.records == 1 and "runs on the host" in device.live["assign_add"]


def test_an_uninitialised_variable_is_named_by_the_recording_run():
    g, x, y, w, b, loss, train, init = _model()
    xv, yv = _batches(1)[0]
    with kg.Session(g) as sess:
        with pytest.raises(kg.errors.FailedPreconditionError, match="uninitialized value w"):
            sess.run(loss, {x: xv, y: yv})
        sess.run(init)  # the failed recording left nothing behind: the next run records
        assert np.isfinite(sess.run(loss, {x: xv, y: yv}))
        assert sess.plan(loss, {x: xv, y: yv}).device.records == 1


def test_a_run_while_the_plan_is_busy_runs_live_on_arrays_of_its_own():
    # (numba's simulator runs no kernels from two threads at once, so the busy plan is
    # held here by hand: what another thread inside the plan would do.)
    g = kg.Graph()
    with g.as_default(), kg.device("cuda"):
        x = kg.placeholder(kg.float32, [3], name="x")
        y = kg.relu(x) * 2.0
    with kg.Session(g) as sess:
        first = np.array([1, -2, 3], np.float32)
        sess.run(y, {x: first})
        device = sess.plan(y, {x: first}).device
        held = dict(device.buffers)
        feed_before = device.feed_buffers[0].copy_to_host()
        with device._lock:
            out = sess.run(y, {x: np.array([-1, 5, 6], np.float32)})
        np.testing.assert_array_equal(out, [0, 10, 12])
        np.testing.assert_array_equal(device.feed_buffers[0].copy_to_host(), feed_before)
        assert all(device.buffers[k] is v for k, v in held.items()) and device.records == 1
        np.testing.assert_array_equal(sess.run(y, {x: first}), [2, 0, 6])


def test_a_non_contiguous_feed_is_uploaded_into_the_fixed_buffer():
    g = kg.Graph()
    with g.as_default(), kg.device("cuda"):
        x = kg.placeholder(kg.float32, [2, 3], name="x")
        y = x * 2.0
    base = np.arange(6, dtype=np.float32).reshape(3, 2)
    with kg.Session(g) as sess:
        sess.run(y, {x: np.zeros((2, 3), np.float32)})
        np.testing.assert_array_equal(sess.run(y, {x: base.T}), base.T * 2)
        assert sess.plan(y, {x: base.T}).device.records == 1


def test_host_feeds_moved_to_the_gpu_are_read_fresh_every_run():
    g = kg.Graph()
    with g.as_default():
        with kg.device("cpu"):
            x = kg.placeholder(kg.float32, [3], name="x")
        with kg.device("cuda"):
            y = kg.relu(x) * 2.0
    with kg.Session(g) as sess:
        for k in range(3):
            v = np.array([k, -1.0, 2.0 * k], np.float32)
            np.testing.assert_array_equal(sess.run(y, {x: v}), np.maximum(v, 0) * 2)
        device = sess.plan(y, {x: v}).device
    assert device.records == 1 and any("host and device" in r for r in device.live.values())


def test_fetching_a_variable_with_its_update_keeps_the_old_value_and_runs_live():
    g, x, y, w, b, loss, train, init = _model()
    xv, yv = _batches(1)[0]
    with kg.Session(g) as sess:
        sess.run(init)
        old_w, _ = sess.run([w, train], {x: xv, y: yv})
        np.testing.assert_array_equal(old_w, W0)  # the value before this run's update
        assert not np.array_equal(sess.run(w), W0)
        device = sess.plan([w, train], {x: xv, y: yv}).device
    assert "cannot be updated in place" in device.reason
