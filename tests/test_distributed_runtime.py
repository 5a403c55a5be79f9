"""The Dask runtime: a pool of worker processes, sessions with a target, stages compiled and
kept on their workers, variables living there across runs, errors and a killed worker.

One LocalCluster of two worker processes (one thread each) serves the module; every test
bounds its waits, and the cluster is closed whatever happens.
"""

import os
import threading
import time
import urllib.request

import numpy as np
import pytest

import kernelgraph as kg

distributed = pytest.importorskip("distributed")
import kernelgraph.distributed.runner  # noqa: E402,F401 - registers Session(target=...)
from kernelgraph.distributed import cluster, worker  # noqa: E402
from kernelgraph.distributed.runner import WorkerLostError  # noqa: E402

HERE = os.path.basename(__file__)


@pytest.fixture(scope="module")
def pool():
    # The workers run CUDA nodes on numba's simulator (this machine has no GPU).
    p = cluster.local(2, threads_per_worker=1, processes=True,
                      env={"NUMBA_ENABLE_CUDASIM": "1"})
    try:
        yield p
    finally:
        p.close()


@pytest.fixture
def live_pool(pool):
    """The pool with both workers up (a test before may have killed one)."""
    pool.wait_for_workers(2, timeout=60)
    return pool


def _split_graph():
    """x -> exp(x) * w on worker:0 -> sum on worker:1, and the numbers it should give."""
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 3], name="x")
        with kg.device("worker:0"):
            w = kg.Variable(np.array([1.0, 2.0, 3.0], np.float32), name="w")
            h = kg.exp(x) * w
        with kg.device("/job:worker/task:1"):
            y = kg.reduce_sum(h, axis=1, name="y")
        init = kg.global_variables_initializer()
    return g, x, w, h, y, init


# -- the pool --------------------------------------------------------------------------------
def test_order_workers_is_by_integer_name_and_keeps_a_dead_workers_number():
    info = {"tcp://b:2": {"name": 1}, "tcp://a:9": {"name": 0}}
    assert cluster.order_workers(info) == ["tcp://a:9", "tcp://b:2"]
    # worker 0 died and is not yet replaced: worker:1 keeps its number
    assert cluster.order_workers({"tcp://b:2": {"name": 1}}) == [None, "tcp://b:2"]
    named = {"tcp://x:1": {"name": "beta"}, "tcp://x:2": {"name": "alpha"}}
    assert cluster.order_workers(named) == ["tcp://x:2", "tcp://x:1"]


def test_local_pool_lists_its_workers_and_dashboard(live_pool):
    workers = live_pool.workers
    assert len(workers) == 2 and all(a.startswith("tcp://") for a in workers)
    names = {a: w["name"] for a, w in live_pool.worker_info().items()}
    assert [names[a] for a in workers] == [0, 1]
    assert live_pool.address(1) == workers[1]
    with pytest.raises(LookupError, match="no worker:5 in the pool: it has worker:0, worker:1"):
        live_pool.address(5)
    assert live_pool.dashboard_link.startswith("http")
    # the dashboard is served (bokeh comes with the distributed extra)
    with urllib.request.urlopen(live_pool.dashboard_link, timeout=30) as page:
        assert page.status == 200 and b"Dask" in page.read()
    assert "2 workers" in repr(live_pool)
    assert "&lt;kg.distributed.Cluster" in live_pool._repr_html_()


def test_local_refuses_a_bad_worker_count():
    with pytest.raises(ValueError, match="positive int, got 0"):
        cluster.local(0)


# -- running -----------------------------------------------------------------------------------
def test_split_graph_runs_on_two_workers_and_matches_numpy(live_pool):
    g, x, w, h, y, init = _split_graph()
    xv = np.array([[0.0, 1.0, 2.0], [0.5, -1.0, 0.0]], np.float32)
    with kg.Session(graph=g, target=live_pool) as sess:
        sess.run(init)
        got_y, got_h = sess.run([y, h], {x: xv})
    want_h = np.exp(xv) * np.array([1, 2, 3], np.float32)
    np.testing.assert_allclose(got_h, want_h, rtol=1e-6)
    np.testing.assert_allclose(got_y, want_h.sum(axis=1), rtol=1e-6)


def test_each_stage_runs_on_its_own_worker(live_pool):
    g = kg.Graph()
    with g.as_default():
        pid0 = kg.constant(0.0, name="c0")
        with kg.device("worker:1"):
            y = kg.add(pid0, 1.0, name="y")
    seen = set()
    with kg.Session(graph=g, target=live_pool) as sess:
        md = kg.distributed.metadata.RunMetadata()
        opts = kg.distributed.metadata.RunOptions(trace_level=3)
        assert sess.run(y, options=opts, run_metadata=md) == 1.0
        for dev in md.step_stats.dev_stats:
            for s in dev.node_stats:
                seen.add((dev.device.split("/")[0], s.address, s.pid))
    pids = live_pool.pids()
    addresses = live_pool.workers
    assert ("worker:1", addresses[1], pids[addresses[1]]) in seen
    assert all(pid != os.getpid() for _, _, pid in seen)


def test_an_unchanged_graph_sends_no_program_again(live_pool):
    g, x, w, h, y, init = _split_graph()
    xv = np.zeros((2, 3), np.float32)
    with kg.Session(graph=g, target=live_pool) as sess:
        sess.run(init)
        sess.run(y, {x: xv})
        sent = sess._remote.programs_sent
        assert sent >= 2  # one stage on each worker
        for _ in range(3):
            np.testing.assert_allclose(sess.run(y, {x: xv}), [6.0, 6.0])
        assert sess._remote.programs_sent == sent
        # a new feed shape is a new plan on the worker, not a new program
        np.testing.assert_allclose(sess.run(y, {x: np.zeros((4, 3), np.float32)}), [6.0] * 4)
        assert sess._remote.programs_sent == sent
        key = sess._remote.key
    # the session's state on the workers is freed when it closes
    left = live_pool.client.run(lambda dask_worker: [k for k in worker._SESSIONS
                                                     if k[1] == key])
    assert all(v == [] for v in left.values())


def test_variables_live_on_their_worker_across_runs(live_pool, tmp_path):
    g = kg.Graph()
    with g.as_default():
        with kg.device("worker:1"):
            v = kg.Variable(np.zeros(2, np.float32), name="v")
            bump = v.assign_add(np.ones(2, np.float32))
        with kg.device("worker:0"):
            u = kg.Variable(np.full(2, 10.0, np.float32), name="u")
        total = kg.add(u, v, name="total")
        init = kg.global_variables_initializer()
    with kg.Session(graph=g, target=live_pool) as sess:
        sess.run(init)
        for _ in range(3):
            sess.run(bump)
        np.testing.assert_array_equal(sess.run(v), [3.0, 3.0])
        np.testing.assert_array_equal(sess.run(total), [13.0, 13.0])
        assert sess._store == {}  # nothing kept on the client
        path = tmp_path / "vars.npz"
        kg.save(path, sess)  # gathers each variable from its worker
        saved = kg.load(path)
        np.testing.assert_array_equal(saved["v"], [3.0, 3.0])
        np.testing.assert_array_equal(saved["u"], [10.0, 10.0])
        held = live_pool.client.run(worker.get_variables, sess._remote.key, ["u", "v"])
        assert held[live_pool.workers[1]].keys() == {"v"}
        assert held[live_pool.workers[0]].keys() == {"u"}
        sess.run(bump)
        kg.load(path, into=sess)  # back to the checkpoint, on each worker
        np.testing.assert_array_equal(sess.run(v), [3.0, 3.0])


def test_a_stage_on_a_workers_gpu_keeps_its_variable_there(live_pool):
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[4, 4], name="x")
        with kg.device("worker:1/cuda:0"):
            w = kg.Variable(np.ones((4, 4), np.float32), name="w")
            y = kg.exp(x) * w
            update = w.assign_add(y)
        with kg.device("worker:0"):
            z = kg.reduce_sum(y, name="z")
        init = kg.global_variables_initializer()
    xv = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    with kg.Session(graph=g, target=live_pool) as sess:
        sess.run(init)
        got_z, got_w = sess.run([z, update], {x: xv})
        np.testing.assert_allclose(got_z, np.exp(xv).sum(), rtol=1e-5)
        np.testing.assert_allclose(got_w, 1 + np.exp(xv), rtol=1e-6)
        np.testing.assert_allclose(sess.run(w), 1 + np.exp(xv), rtol=1e-6)
        kinds = live_pool.client.run(
            lambda dask_worker, key=sess._remote.key: sorted(
                type(v).__module__.split(".")[0] for st, v in
                worker._SESSIONS[(dask_worker.address, key)]._store.items()),
            workers=[live_pool.address(1)])
    assert kinds[live_pool.address(1)] == ["numba"]  # a device array on worker:1


def test_a_target_given_as_an_address_or_a_client(live_pool):
    g, x, w, h, y, init = _split_graph()
    xv = np.zeros((1, 3), np.float32)
    with kg.Session(graph=g, target=live_pool.scheduler_address) as sess:
        sess.run(init)
        np.testing.assert_allclose(sess.run(y, {x: xv}), [6.0])
        own = sess._remote.cluster.client
    assert own.status in ("closed", "closing")  # the session made it, the session closed it
    with kg.Session(graph=g, target=live_pool.client) as sess:
        sess.run(init)
        np.testing.assert_allclose(sess.run(y, {x: xv}), [6.0])
    assert live_pool.client.status == "running"  # the user's client is left open


def test_bad_targets_are_refused_with_what_is_expected():
    with pytest.raises(TypeError, match="kg.distributed.local"):
        kg.Session(target=3.5)
    with pytest.raises(ValueError, match="scheduler address such as"):
        kg.Session(target="nowhere")


# -- errors ------------------------------------------------------------------------------------
def test_a_graph_on_workers_without_a_target_says_how_to_connect():
    g, x, w, h, y, init = _split_graph()
    with kg.Session(graph=g) as sess, pytest.raises(Exception, match="target="):
        sess.run(init)


def test_an_error_on_a_worker_names_the_node_and_the_users_line(live_pool):
    g = kg.Graph()
    with g.as_default():
        a = kg.placeholder(kg.float32, shape=[None, None], name="a")
        b = kg.placeholder(kg.float32, shape=[None, None], name="b")
        with kg.device("worker:1"):
            line = __import__("inspect").currentframe().f_lineno + 1
            prod = kg.matmul(a, b, name="prod")
    with kg.Session(graph=g, target=live_pool) as sess:
        with pytest.raises(kg.errors.InvalidArgumentError) as info:
            sess.run(prod, {a: np.ones((2, 3), np.float32), b: np.ones((4, 5), np.float32)})
    text = str(info.value)
    assert "'prod'" in text and f'{HERE}", line {line}' in text and "worker:1" in text
    assert info.value.node is prod


# -- faults ------------------------------------------------------------------------------------
def _heavy_graph():
    """worker:0 bumps a counter and hands a matrix to worker:1, which multiplies it many
    times (long enough to be killed in the middle)."""
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[400, 400], name="x")
        with kg.device("worker:0"):
            count = kg.Variable(np.zeros((), np.float32), name="count")
            bump = count.assign_add(1.0)
            m = kg.multiply(x, kg.add(bump, 0.0), name="m")
        with kg.device("worker:1"):
            scale = kg.Variable(np.full((), 2.0, np.float32), name="scale")
            h = m
            for i in range(12):  # only matmuls: no fused kernel to compile on a new worker
                h = kg.matmul(h, x, name=f"layer{i}")
            y = kg.reduce_sum(h * scale, name="y")
        init = kg.global_variables_initializer()
    return g, x, count, scale, bump, y, init


def test_a_run_past_its_deadline_is_cancelled_and_rolled_back(live_pool):
    g, x, count, scale, bump, y, init = _heavy_graph()
    xv = np.abs(np.random.default_rng(1).standard_normal((400, 400))).astype(np.float32)
    with kg.Session(graph=g, target=live_pool) as sess:
        sess.run(init)
        sess.run(y, {x: xv * 0.005})  # compiled on both workers; count is 1
        slow = kg.RunOptions(timeout_in_ms=1)
        with pytest.raises(kernelgraph.distributed.DeadlineExceededError,
                           match="timeout_in_ms=1"):
            sess.run(y, {x: xv * 0.005}, options=slow)
        np.testing.assert_array_equal(sess.run(count), 1.0)  # the bump was undone


def test_a_one_worker_run_past_its_deadline_is_rolled_back_too(live_pool):
    """The deadline's message says the run was rolled back: on one worker as on several, the
    variables its started stage wrote are put back (a one-worker run kept its assign_add)."""
    n = 800
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[n, n], name="x")
        with kg.device("worker:0"):
            count = kg.Variable(np.zeros((), np.float32), name="count")
            h = kg.multiply(x, kg.add(count.assign_add(1.0), 0.0), name="m")
            for i in range(50):  # the deadline passes while these run, after the bump
                h = kg.matmul(h, x, name=f"layer{i}")
            y = kg.reduce_sum(h, name="y")
        init = kg.global_variables_initializer()
    xv = np.eye(n, dtype=np.float32)
    with kg.Session(graph=g, target=live_pool) as sess:
        sess.run(init)
        start = time.monotonic()
        sess.run(y, {x: xv})  # compiled on worker:0; count is 1
        took = time.monotonic() - start
        with pytest.raises(kernelgraph.distributed.DeadlineExceededError,
                           match="rolled back on worker:0"):
            sess.run(y, {x: xv}, options=kg.RunOptions(timeout_in_ms=300))
        address = live_pool.address(0)
        key, run_id = sess._remote.key, sess._remote._run_id
        started = live_pool.client.run(
            lambda dask_worker: worker._SESSIONS[(dask_worker.address, key)].newest_run,
            workers=[address])[address]
        assert started == run_id, f"the stage had not started by the deadline ({took=:.2f} s)"
        np.testing.assert_array_equal(sess.run(count), 1.0)  # the bump was undone


def test_wait_for_workers_after_a_kill_returns_once_the_dead_worker_is_gone(live_pool,
                                                                           tmp_path):
    """The documented recovery: kill, wait_for_workers, kg.load. The scheduler lists a
    killed worker for a moment; wait_for_workers returned then, and kg.load raised
    LookupError (no worker:1) once the scheduler dropped it."""
    g = kg.Graph()
    with g.as_default():
        with kg.device("worker:1"):
            v = kg.Variable(np.array([1.0, 2.0], np.float32), name="v")
            bump = v.assign_add(np.ones(2, np.float32))
        init = kg.global_variables_initializer()
    with kg.Session(graph=g, target=live_pool) as sess:
        sess.run(init)
        sess.run(bump)
        path = tmp_path / "v.npz"
        kg.save(path, sess)
        dead = live_pool.address(1)
        live_pool.kill(1)
        live_pool.wait_for_workers(2, timeout=60)
        assert dead not in live_pool.worker_info()
        assert live_pool.address(1) != dead
        kg.load(path, into=sess)
        np.testing.assert_array_equal(sess.run(v), [2.0, 3.0])
        np.testing.assert_array_equal(sess.run(bump), [3.0, 4.0])


def test_a_worker_killed_mid_run_raises_in_seconds_and_the_session_recovers(live_pool,
                                                                            tmp_path):
    g, x, count, scale, bump, y, init = _heavy_graph()
    xv = np.abs(np.random.default_rng(0).standard_normal((400, 400))).astype(np.float32) * 0.005
    with kg.Session(graph=g, target=live_pool) as sess:
        sess.run(init)
        want = sess.run(y, {x: xv})  # count is 1 now
        path = tmp_path / "ckpt.npz"
        kg.save(path, sess)
        killed_at = []

        def kill():
            live_pool.kill(1)
            killed_at.append(time.monotonic())

        killer = threading.Timer(0.3, kill)
        done = 0
        killer.start()
        try:
            with pytest.raises(WorkerLostError) as info:
                for _ in range(200):  # until the kill lands inside (or before) a run
                    sess.run(y, {x: xv})
                    done += 1
        finally:
            killer.cancel()
        assert killed_at and time.monotonic() - killed_at[0] < 10  # the bound
        text = str(info.value)
        assert "worker:1" in text and "'layer0'" in text and "kg.load" in text
        # worker:0's counter: each finished run added one; the failed run was rolled back
        address0 = live_pool.address(0)
        held = live_pool.client.run(worker.get_variables, sess._remote.key, ["count"],
                                    workers=[address0])[address0]
        assert float(held["count"]) == 1.0 + done
        live_pool.wait_for_workers(2, timeout=60)
        kg.load(path, into=sess)  # count 1 on worker:0, scale 2 on the new worker:1
        np.testing.assert_allclose(sess.run(y, {x: xv}), _single_process(xv, count=1.0),
                                   rtol=1e-4)
        np.testing.assert_allclose(want, _single_process(xv, count=0.0), rtol=1e-4)


def _single_process(xv, count):
    """The heavy graph's y, computed in this process with the counter at ``count`` before
    the run (the run bumps it once more)."""
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[400, 400])
        h = x * (count + 1.0)
        for _ in range(12):
            h = kg.matmul(h, x)
        y = kg.reduce_sum(h * 2.0)
    with kg.Session(graph=g) as s:
        return s.run(y, {x: xv})
