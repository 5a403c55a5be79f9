"""Data-parallel training (TF1's in-graph replication and kg.nn's DataParallel), TF1's run
metadata and the timeline (kernelgraph.distributed.replicas / metadata / timeline).

The placement, the averaging and the metadata are checked in one process; the same
training on a two-worker Dask cluster (if dask.distributed and the runtime are there) must
give single-process training's weights."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.compat.v1 as tf
import kernelgraph.nn.functional as F
from kernelgraph.distributed import metadata, replicas, timeline

RNG = np.random.default_rng(7)
X = RNG.standard_normal((16, 8)).astype(np.float32)
Y = RNG.integers(0, 3, 16)
STEPS = 4


# -- placement ---------------------------------------------------------------------------------
def test_replica_device_setter_puts_variables_on_the_ps_and_ops_on_the_worker():
    with kg.Graph().as_default() as g:
        with tf.device(tf.train.replica_device_setter(
                ps_tasks=1, ps_device="/job:worker/task:0",
                worker_device="/job:worker/task:1")):
            w = tf.Variable(np.ones((2, 2), np.float32), name="w")
            y = tf.matmul(w, w)
    assert w.device == "worker:0/cpu"
    assert y.device == "worker:1/cpu"
    assert w.initializer.device == "worker:0/cpu"  # assigned where it is stored
    # the worker reads the variable through an explicit transfer node
    assert [i.op.type for i in y.op.inputs] == ["ToDevice", "ToDevice"]  # TF1's Operations
    assert all(i.op.inputs[0] is w for i in y.op.inputs)
    assert {n.device.name for n in g.nodes} == {"worker:0/cpu", "worker:1/cpu"}


def test_replica_device_setter_round_robin_and_its_device_function():
    setter = replica_device_setter_2ps()
    with kg.Graph().as_default():
        with kg.device(setter):
            a, b, c = (kg.Variable(float(i), name=f"v{i}") for i in range(3))
    assert [v.device.name for v in (a, b, c)] == ["worker:1/cpu", "worker:2/cpu",
                                                    "worker:1/cpu"]
    # TF1's device function: called with an op, it names a device
    assert setter(tf.ops.registry.OPS["exp"]) == "worker:0/cpu"


def replica_device_setter_2ps():
    spec = tf.train.ClusterSpec({"worker": ["tcp://a:1", "tcp://b:1", "tcp://c:1"],
                                 "ps": ["tcp://b:1", "tcp://c:1"]})
    return tf.train.replica_device_setter(cluster=spec, worker_device="/job:worker/task:0")


def test_replica_device_setter_without_ps_and_with_a_foreign_ps():
    assert tf.train.replica_device_setter() is None  # TF1: no ps tasks, no device function
    assert tf.train.replica_device_setter(cluster={"worker": ["a"]}) is None
    with pytest.raises(ValueError, match="no worker's address"):
        tf.train.replica_device_setter(cluster={"worker": ["a"], "ps": ["elsewhere"]})


def test_cluster_spec_as_tf1():
    spec = tf.train.ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": {3: "p:2222"}})
    assert spec.jobs == ["worker", "ps"]
    assert spec.num_tasks("worker") == 2 and spec.task_indices("ps") == [3]
    assert spec.task_address("ps", 3) == "p:2222"
    assert spec.as_dict() == {"worker": ["w0:2222", "w1:2222"], "ps": {3: "p:2222"}}
    assert tf.train.ClusterSpec(spec) == spec
    with pytest.raises(ValueError, match="No such job"):
        spec.num_tasks("chief")
    with pytest.raises(ValueError, match="No task with index 5"):
        spec.task_address("worker", 5)
    with pytest.raises(TypeError, match="dict of job name"):
        tf.train.ClusterSpec(["w0"])


# -- training equals single-process training ---------------------------------------------------
def _tower_graph(devices_of_towers, ps):
    """TF1's in-graph replication: a tower per device, gradients averaged on the ps."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [16, 8])
        y = tf.placeholder(tf.int64, [16])
        with tf.device(ps):
            w1 = tf.Variable(RNG_W1, name="w1")
            w2 = tf.Variable(RNG_W2, name="w2")
        opt, towers, losses = tf.train.GradientDescentOptimizer(0.5), [], []
        n = len(devices_of_towers)
        for xs, ys, dev in zip(tf.split(x, n), tf.split(y, n), devices_of_towers):
            with tf.device(dev):
                logits = tf.matmul(tf.nn.relu(tf.matmul(xs, w1)), w2)
                loss = tf.losses.sparse_softmax_cross_entropy(ys, logits)
                towers.append(opt.compute_gradients(loss, [w1, w2]))
                losses.append(loss)
        train = opt.apply_gradients(kg.distributed.replicas.average_gradients(towers))
        init = tf.global_variables_initializer()
    return g, (x, y), train, init, [w1, w2]


RNG_W1 = (np.random.default_rng(1).standard_normal((8, 16)) * 0.3).astype(np.float32)
RNG_W2 = (np.random.default_rng(2).standard_normal((16, 3)) * 0.3).astype(np.float32)


def _train(graph_parts, target=None):
    g, (x, y), train, init, variables = graph_parts
    with tf.Session(graph=g, **({"target": target} if target is not None else {})) as sess:
        sess.run(init)
        for _ in range(STEPS):
            sess.run(train, {x: X, y: Y})
        return [np.asarray(sess.run(v)) for v in variables]


def test_tf1_towers_average_gradients_where_the_variables_live():
    g, _, train, _, (w1, w2) = _tower_graph(["cpu", "cpu"], "cpu")
    assert train.type == "NoOp"  # TF1's Operation
    single = _train(_tower_graph(["cpu"], "cpu"))
    towers = _train(_tower_graph(["cpu", "cpu"], "cpu"))
    for a, b in zip(single, towers):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert not np.allclose(single[0], RNG_W1)  # it trained


def test_average_gradients_places_the_average_on_the_variable_device():
    with kg.Graph().as_default():
        with kg.device("worker:0/cpu"):
            w = kg.Variable(np.float32(2.0), name="w")
        grads = []
        for i in range(2):
            with kg.device(f"worker:{i + 1}/cpu"):
                grads.append([(w * float(i + 1), w)])
        (avg, var), = replicas.average_gradients(grads)
    assert var is w and avg.device == "worker:0/cpu"
    with pytest.raises(ValueError, match="other variables"):
        replicas.average_gradients([[(avg, w)], []])
    with pytest.raises(ValueError, match="at least one tower"):
        replicas.average_gradients([])


def _module_training(workers, target=None):
    kg.manual_seed(0)
    model = kg.nn.Sequential(kg.nn.Linear(8, 16), kg.nn.ReLU(), kg.nn.Linear(16, 3))
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, [16, 8])
        y = kg.placeholder(kg.int64, [16])
        net = replicas.DataParallel(model, workers) if workers else model
        loss = F.cross_entropy(net(x), y)
        train = kg.optim.SGD(model.parameters(), lr=0.5).minimize(loss)
        init = kg.global_variables_initializer()
    return g, (x, y), train, init, model.variables(g)


def test_data_parallel_module_trains_as_one_process():
    single = _train(_module_training(None))
    parallel = _train(_module_training(["cpu", "cpu"]))
    for a, b in zip(single, parallel):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_data_parallel_places_replicas_and_refuses_eager_tensors():
    model = kg.nn.Linear(8, 3)
    with kg.Graph().as_default() as g:
        x = kg.placeholder(kg.float32, [16, 8])
        out = replicas.DataParallel(model, ["worker:0/cpu", "worker:1/cpu"])(x)
    assert out.device == "worker:0/cpu"
    assert {v.device.name for v in model.variables(g)} == {"worker:0/cpu"}
    matmuls = [n for n in g.nodes if n.op.name in ("matmul", "linear", "addmm")]
    assert {n.device.name for n in matmuls} == {"worker:0/cpu", "worker:1/cpu"}
    with pytest.raises(TypeError, match="static mode"):
        replicas.DataParallel(model, ["cpu"])(kg.zeros(2, 8))
    with pytest.raises(TypeError, match="wraps a kg.nn.Module"):
        replicas.DataParallel(lambda t: t, ["cpu"])


# -- run metadata and the timeline -------------------------------------------------------------
def test_full_trace_fills_step_stats_of_a_local_run():
    with kg.Graph().as_default() as g:
        x = kg.placeholder(kg.float32, shape=[3])
        y = kg.exp(x) * 2.0
    md = kg.RunMetadata()
    with kg.Session(g) as sess:
        plain = sess.run(y, {x: [0.0, 1.0, 2.0]})
        traced = sess.run(y, {x: [0.0, 1.0, 2.0]}, run_metadata=md, options=kg.RunOptions(
            trace_level=kg.RunOptions.FULL_TRACE))
        np.testing.assert_array_equal(plain, traced)
        # no trace level: nothing recorded (TF1's rule)
        sess.run(y, {x: [0.0, 1.0, 2.0]}, options=kg.RunOptions(), run_metadata=md)
    (dev,) = md.step_stats.dev_stats
    assert dev.device == "cpu"
    count = len(dev.node_stats)
    with kg.Session(g) as sess:  # a second traced run replaces the first's stats (TF1)
        sess.run(y, {x: [0.0, 1.0, 2.0]}, run_metadata=md, options=kg.RunOptions(
            trace_level=kg.RunOptions.FULL_TRACE))
    assert [len(d.node_stats) for d in md.step_stats.dev_stats] == [count]
    (dev,) = md.step_stats.dev_stats
    names = [s.node_name for s in dev.node_stats]
    assert names[-2:] == [n.name for n in (y.inputs[0], y)]
    for s in dev.node_stats:
        assert s.pid == os.getpid() and s.all_end_rel_micros >= 0
        assert abs(s.all_start_micros / 1e6 - __import__("time").time()) < 60
    starts = [s.all_start_micros for s in dev.node_stats]
    assert starts == sorted(starts)
    with pytest.raises(ValueError, match="trace_level"):
        kg.RunOptions(trace_level=7)
    # TF1's make_callable(accept_options=True) passes them on
    md2 = kg.RunMetadata()
    with kg.Session(g) as sess:
        call = sess.make_callable(y, [x], accept_options=True)
        call([1.0, 1.0, 1.0], options=kg.RunOptions(trace_level=3), run_metadata=md2)
    assert md2.step_stats.dev_stats[0].node_stats[-1].node_name == y.name


def _sample_metadata():
    md = kg.RunMetadata()
    metadata.fill(md, [
        {"node": "w/read", "op": "matmul", "device": "worker:0/cpu", "start_us": 100.0,
         "duration_us": 30.0, "address": "tcp://127.0.0.1:1", "pid": 11},
        {"node": "<b>", "op": "relu", "device": "worker:1/cpu", "start_us": 140.0,
         "duration_us": 5.0, "address": "tcp://127.0.0.1:2", "pid": 12}],
        [{"name": "w/read", "src": "worker:0/cpu", "dst": "worker:1/cpu", "start_us": 130.0,
          "end_us": 139.0, "nbytes": 1024}], dashboard_link="http://127.0.0.1:8787/status")
    return md


def test_chrome_trace_is_written_atomically_with_lanes_nodes_and_arrows(tmp_path):
    md = _sample_metadata()
    assert md.dashboard_link.endswith("/status")
    path = tmp_path / "step.json"
    assert md.timeline().write_chrome_trace(path) == str(path)
    assert os.listdir(tmp_path) == ["step.json"]  # no temporary file left behind
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names == {0: "worker:0/cpu (tcp://127.0.0.1:1, pid 11)",
                     1: "worker:1/cpu (tcp://127.0.0.1:2, pid 12)"}
    ops = [(e["pid"], e["args"]["name"], e["ts"], e["dur"]) for e in events if e["ph"] == "X"]
    assert ops == [(0, "w/read", 0.0, 30.0), (1, "<b>", 40.0, 5.0)]
    flow = [(e["ph"], e["pid"], e["ts"]) for e in events if e.get("cat") == "DataFlow"]
    assert flow == [("s", 0, 30.0), ("f", 1, 39.0)]


def test_timeline_figure_draws_a_lane_per_device_and_an_arrow_per_transfer():
    pytest.importorskip("plotly")
    tl = timeline.Timeline(_sample_metadata())
    fig = tl.figure()
    assert [t.y[0] for t in fig.data] == ["worker:0/cpu (tcp://127.0.0.1:1, pid 11)",
                                          "worker:1/cpu (tcp://127.0.0.1:2, pid 12)"]
    assert [list(t.base) for t in fig.data] == [[0.0], [40.0]]
    assert [list(t.text) for t in fig.data] == [["w/read"], ["&lt;b&gt;"]]  # escaped
    assert "http://127.0.0.1:8787/status" in fig.layout.title.text
    (arrow,) = fig.layout.annotations
    assert (arrow.ax, arrow.x) == (30.0, 39.0) and "1024 bytes" in arrow.hovertext
    assert "1 transfer:\n  w/read worker:0/cpu -> worker:1/cpu 1024 bytes, 9.0 us\n" \
        "Dask dashboard: http://127.0.0.1:8787/status" in tl.summary()
    with pytest.raises(TypeError, match="step_stats"):
        timeline.Timeline({"dev_stats": []})


def test_compat_names():
    assert tf.RunOptions is kg.RunOptions and tf.RunMetadata is kg.RunMetadata
    assert tf.RunOptions.TraceLevel.FULL_TRACE == tf.RunOptions.FULL_TRACE == 3
    md = tf.RunMetadata()
    md.step_stats.device("cpu")
    md.Clear()
    assert md.step_stats.dev_stats == []


def test_fill_stages_draws_an_arrow_per_value_crossing_workers():
    from kernelgraph.distributed.partition import partition

    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[4, 3], name="x")
        with kg.device("worker:0"):
            h = kg.relu(x * 2.0, name="h")
        with kg.device("worker:1"):
            y = kg.reduce_sum(h, axis=1, name="y")
    part = partition([y], [x])
    row = {"op": "op", "address": "", "pid": 1}
    rows = {0: [{**row, "node": "mul", "device": "worker:0/cpu", "start_us": 5.0,
                 "duration_us": 5.0},
                {**row, "node": "h", "device": "worker:0/cpu", "start_us": 10.0,
                 "duration_us": 5.0}],
            1: [{**row, "node": "y", "device": "worker:1/cpu", "start_us": 20.0,
                 "duration_us": 3.0}]}
    md = metadata.fill_stages(kg.RunMetadata(), rows, part.transfers)
    assert [d.device for d in md.step_stats.dev_stats] == ["worker:0/cpu", "worker:1/cpu"]
    (t,) = md.step_stats.transfers
    assert (t.name, t.src, t.dst, t.start_us, t.end_us, t.nbytes) == \
        ("h", "worker:0/cpu", "worker:1/cpu", 15.0, 20.0, 48)


def test_transfers_between_workers_are_timed_by_the_nodes_around_them():
    md = metadata.fill(kg.RunMetadata(), [
        {"node": "w", "op": "variable", "device": "worker:0/cpu", "start_us": 0.0,
         "duration_us": 2.0},
        {"node": "w", "op": "variable", "device": "worker:0/cpu", "start_us": 10.0,
         "duration_us": 2.0},
        {"node": "y", "op": "matmul", "device": "worker:1/cuda:0", "start_us": 5.0,
         "duration_us": 1.0},
        {"node": "z", "op": "matmul", "device": "worker:1/cuda:0", "start_us": 20.0,
         "duration_us": 1.0}],
        [{"name": "w", "src": "worker:0", "dst": "worker:1", "start_us": 0.0, "end_us": 0.0,
          "nbytes": 8}])
    (t,) = md.step_stats.transfers
    # from the end of the last 'w' on worker 0 to worker 1's next node
    assert (t.src, t.dst, t.start_us, t.end_us) == ("worker:0/cpu", "worker:1/cuda:0",
                                                    12.0, 20.0)


# -- on a pool of two worker processes ---------------------------------------------------------
@pytest.fixture(scope="module")
def pool():
    """Two Dask worker processes, one thread each; closed whatever happens."""
    pytest.importorskip("distributed")
    import kernelgraph.distributed.runner  # noqa: F401 - registers Session(target=...)
    from kernelgraph.distributed import cluster

    p = cluster.local(2, threads_per_worker=1, processes=True)
    try:
        p.wait_for_workers(2, timeout=60)
        yield p
    finally:
        p.close()


def test_tf1_in_graph_replication_on_two_workers_equals_one_process(pool):
    # TF1's spelling: the ps job is worker 0's address, so its task is worker:0
    spec = tf.train.ClusterSpec({"worker": pool.workers, "ps": pool.workers[:1]})
    setters = [tf.train.replica_device_setter(cluster=spec,
                                              worker_device=f"/job:worker/task:{i}")
               for i in range(2)]
    assert setters[1](tf.ops.registry.OPS["variable"]) == "worker:0/cpu"
    single = _train(_tower_graph(["cpu"], "cpu"))
    spread = _train(_tower_graph(setters, "/job:worker/task:0"), target=pool)
    for a, b in zip(single, spread):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_data_parallel_module_on_two_workers_equals_one_process_and_is_traced(pool, tmp_path):
    single = _train(_module_training(None))
    g, (x, y), train, init, variables = _module_training(["worker:0", "worker:1"])
    md = kg.RunMetadata()
    with kg.Session(g, target=pool) as sess:
        sess.run(init)
        for step in range(STEPS):
            traced = step == STEPS - 1  # the last step is traced: the same update
            sess.run(train, {x: X, y: Y}, run_metadata=md if traced else None,
                     options=kg.RunOptions(trace_level=kg.RunOptions.FULL_TRACE))
        spread = [np.asarray(sess.run(v)) for v in variables]
    for a, b in zip(single, spread):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # run metadata: a lane per worker, each node with its worker's address and pid
    lanes = {d.device: d for d in md.step_stats.dev_stats}
    assert set(lanes) == {"worker:0/cpu", "worker:1/cpu"}
    pids = pool.pids()
    for i, name in enumerate(("worker:0/cpu", "worker:1/cpu")):
        dev = lanes[name]
        assert dev.address == pool.workers[i] and dev.pid == pids[pool.workers[i]]
        assert dev.pid != os.getpid()
        assert {(s.address, s.pid) for s in dev.node_stats} == {(dev.address, dev.pid)}
    # worker 1 computed its replica: a matmul of its shard
    assert "matmul" in {s.op for s in lanes["worker:1/cpu"].node_stats} | \
        {s.op for s in lanes["worker:0/cpu"].node_stats}
    crossing = {(t.src, t.dst) for t in md.step_stats.transfers}
    assert crossing == {("worker:0/cpu", "worker:1/cpu"), ("worker:1/cpu", "worker:0/cpu")}
    assert all(t.end_us >= t.start_us and t.nbytes > 0 for t in md.step_stats.transfers)
    assert md.dashboard_link == pool.dashboard_link
    path = md.timeline().write_chrome_trace(tmp_path / "step.json")
    events = json.loads(open(path).read())["traceEvents"]
    assert sum(e["ph"] == "s" for e in events) == len(md.step_stats.transfers)


def test_replicas_overlap_the_sending_stage_is_split():
    """The variables' worker sends the variables and a shard before running its own tower:
    worker 1's tower waits only for that, not for worker 0's tower."""
    from kernelgraph.distributed.partition import partition

    setters = [tf.train.replica_device_setter(ps_tasks=1, ps_device="/job:worker/task:0",
                                              worker_device=f"/job:worker/task:{i}")
               for i in range(2)]
    _, (x, y), train, _, _ = _tower_graph(setters, "/job:worker/task:0")
    part = partition([train.kg_node], [x.kg_node, y.kg_node])  # the nodes TF1's types wrap
    (tower1,) = [s for s in part.stages if s.worker == "worker:1"]
    sources = {part.source[k] for k in tower1.inputs} | set(tower1.after)
    tower0 = [s for s in part.stages if s.worker == "worker:0" and "matmul" in
              {n.op.name for n in s.nodes}]
    assert len(tower0) == 1 and tower0[0].index not in sources
    for k in sources:  # what worker 1 waits for: reads and slices, no arithmetic
        assert {n.op.name for n in part.stages[k].nodes} <= {"variable", "split_piece",
                                                             "const", "to_device"}


def test_overlap_is_the_time_two_lanes_are_busy_at_once():
    md = metadata.fill(kg.RunMetadata(), [
        {"node": n, "op": "op", "device": dev, "start_us": a, "duration_us": d}
        for n, dev, a, d in (("a", "worker:0/cpu", 0.0, 10.0), ("b", "worker:0/cpu", 5.0, 10.0),
                             ("c", "worker:1/cpu", 8.0, 4.0), ("d", "worker:1/cpu", 30.0, 5.0))])
    # worker 0 busy 0..15, worker 1 busy 8..12 and 30..35: both at once for 4 us of 35
    assert timeline.Timeline(md).overlap_us() == (4.0, 35.0)
    assert timeline.Timeline(kg.RunMetadata()).overlap_us() == (0.0, 0.0)
