"""The compile side of issue 23: worker device names, the partition of a run into stages,
transfers and their bytes, and sub-programs that the existing Plan machinery compiles.

The stages run here in one process (:class:`Pool` below plays the workers: one variable
table and store each), so the partition is checked against a single-process Session on
the same graph without a cluster; the Dask runtime has its own tests.
"""

import pickle

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.devices import DeviceError
from kernelgraph.distributed.partition import Partition, partition, worker_of
from kernelgraph.distributed.transfer import describe, nbytes, to_wire
from kernelgraph.static.plan import Plan
from kernelgraph.static.session import Session


class _Worker:
    """What a worker keeps across runs: its variable table and store (as a Session does)."""

    def __init__(self):
        self.variables, self._store = {}, {}
        self.optimize, self.skip_passes, self.check_numerics = True, (), False
        self.plans = {}


class Pool:
    """Runs a Partition's stages in order, in this process, each on its worker's state."""

    def __init__(self):
        self.workers: dict[str, _Worker] = {}

    def run(self, part: Partition, feeds: dict):
        values = {k: np.asarray(v, dtype=part.feeds[k].dtype) for k, v in feeds.items()
                  if k in part.feeds}
        for s in part.stages:
            w = self.workers.setdefault(s.worker, _Worker())
            plan = w.plans.get(s.program.program_id)
            if plan is None:
                fetch_nodes, feed_nodes = s.program.build(w.variables)
                plan = w.plans[s.program.program_id] = Plan(w, fetch_nodes, feed_nodes)
            out = plan.fn(*[values[k] for k in s.inputs])
            for key, v in zip(s.outputs, out[:s.program.n_outputs]):
                values[key] = to_wire(v)
        return [values[k] for k in part.fetches]

    def store(self, worker):
        return {n.name: kg.devices.to_numpy(v)
                for n, v in self.workers[worker]._store.items()}


def _split_mlp(placed: bool):
    """A two-layer net, layer 1 on worker 0 and layer 2 on worker 1 (or unplaced)."""
    rng = np.random.default_rng(0)
    w1, w2 = rng.normal(size=(4, 8)).astype(np.float32), rng.normal(size=(8, 3))
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 4], name="x")
        with kg.device("/job:worker/task:0" if placed else "cpu"):
            h = kg.relu(kg.matmul(x, kg.constant(w1)), name="h")
        with kg.device("worker:1" if placed else "cpu"):
            y = kg.reduce_sum(kg.matmul(h, kg.constant(w2.astype(np.float32))), axis=1,
                              name="y")
    return g, x, h, y


def test_tf1_worker_names_parse():
    assert kg.device("/job:worker/task:1") == "worker:1/cpu"
    assert kg.device("worker:1") == kg.device("/job:worker/replica:0/task:1/device:CPU:0")
    assert kg.device("/job:worker/task:2/device:GPU:0") == "worker:2/cuda:0"
    assert kg.device("/job:ps").worker == "ps:0"
    assert kg.device("worker:1/cuda:0").local == kg.device("cuda:0")
    assert kg.device("cuda").on("worker:3") == "worker:3/cuda:0"
    for bad in ("cdua:0", "foo", "/job:worker/task:x", "worker:1/cpu/extra"):
        with pytest.raises(ValueError, match="unknown device"):
            kg.device(bad)


def test_nested_scopes_merge_as_in_tf1():
    g = kg.Graph()
    with g.as_default(), kg.device("/job:worker/task:1"):
        a = kg.constant(1.0)
        with kg.device("cpu"):
            b = a + 1.0
    assert a.device == "worker:1/cpu" and b.device == "worker:1/cpu"
    assert worker_of(a) == "worker:1"


def test_unconnected_session_says_how_to_connect():
    g, x, h, y = _split_mlp(placed=True)
    with Session(g) as sess, pytest.raises(DeviceError, match=r"kg\.distributed\.local"):
        sess.run(y, {x: np.ones((2, 4), np.float32)})


def test_split_in_two_is_two_stages_with_one_transfer():
    g, x, h, y = _split_mlp(placed=True)
    part = partition([y], [x])
    assert [(s.worker, s.level) for s in part.stages] == [("worker:0", 0), ("worker:1", 1)]
    first, second = part.stages
    assert first.inputs == ["x"] and first.outputs == ["h"]
    assert second.inputs == ["h"] and second.outputs == ["y"] and second.after == (0,)
    assert part.fetches == ["y"] and part.source == {"x": None, "h": 0, "y": 1}
    (t,) = part.transfers
    assert (t.key, t.src, t.dst, t.src_stage, t.dst_stages) == ("h", "worker:0", "worker:1",
                                                                   0, (1,))
    assert t.nbytes is None and t.receivers == ("h/to_cpu",)  # the graph's transfer node
    assert part.transfer_bytes({"x": (5, 4)}) == {"h": 5 * 8 * 4}
    text = part.explain({"x": (5, 4)})
    assert "h worker:0 -> worker:1 160 B" in text and "stage 1 on worker:1" in text
    assert part.carries == [] and part.workers == ["worker:0", "worker:1"]


def test_partitioned_run_equals_single_process():
    xs = np.random.default_rng(1).normal(size=(5, 4)).astype(np.float32)
    g, x, h, y = _split_mlp(placed=False)
    with Session(g) as sess:
        want = sess.run([y, h], {x: xs})
    g, x, h, y = _split_mlp(placed=True)
    got = Pool().run(partition([y, h], [x]), {"x": xs})
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)  # same kernels, same order: the same bits


def _data_parallel(placed: bool, lr=0.1):
    """TF1 in-graph replication: w on worker 0 (the parameter server), one replica per
    worker computing a gradient on its shard, the mean applied where w lives."""
    g = kg.Graph()
    with g.as_default():
        with kg.device("worker:0" if placed else "cpu"):
            w = kg.Variable(np.array([[0.5], [-0.25], [1.0]], np.float32), name="w")
        xs, ys, grads = [], [], []
        for i in range(2):
            with kg.device(f"worker:{i}" if placed else "cpu"):
                x = kg.placeholder(kg.float32, shape=[None, 3], name=f"x{i}")
                t = kg.placeholder(kg.float32, shape=[None, 1], name=f"t{i}")
                loss = kg.reduce_mean(kg.square(kg.matmul(x, w) - t))
                (gw,) = kg.gradients(loss, [w])
            xs.append(x), ys.append(t), grads.append(gw)
        with kg.device("worker:0" if placed else "cpu"):
            train = w.assign_sub(lr * (grads[0] + grads[1]) / 2.0)
        init = kg.global_variables_initializer()
    return g, w, xs, ys, train, init


def test_data_parallel_training_cycles_through_stages_and_matches():
    rng = np.random.default_rng(2)
    data = [(rng.normal(size=(4, 3)).astype(np.float32),
             rng.normal(size=(4, 1)).astype(np.float32)) for _ in range(2)]
    g, w, xs, ys, train, init = _data_parallel(placed=False)
    with Session(g) as sess:
        sess.run(init)
        for _ in range(3):
            sess.run(train, {xs[0]: data[0][0], ys[0]: data[0][1], xs[1]: data[1][0],
                             ys[1]: data[1][1]})
        want = sess.run(w)

    g, w, xs, ys, train, init = _data_parallel(placed=True)
    pool = Pool()
    pool.run(partition([init]), {})
    feeds = [xs[0], ys[0], xs[1], ys[1]]
    part = partition([train], feeds)
    # worker 0 sends w first, then computes its own gradient while worker 1 computes its
    # one (x1 transposed for it, a view, joins that stage) and sends it back; worker 0
    # applies the mean
    assert [(s.worker, s.level) for s in part.stages] == [
        ("worker:0", 0), ("worker:0", 1), ("worker:1", 2), ("worker:0", 3)]
    assert part.stages[0].outputs == ["w"] and part.stages[0].program.specs[0].op == "variable"
    assert part.stages[2].after == (0,)  # not after worker 0's replica: they overlap
    assert "gradients/matmul" in part.stages[1].outputs  # worker 0's own gradient
    assert {(t.key, t.src, t.dst) for t in part.transfers} >= {("w", "worker:0", "worker:1")}
    assert any(t.src == "worker:1" and t.dst == "worker:0" for t in part.transfers)
    assert part.carries and all(c.src == c.dst and not c.crosses for c in part.carries)
    assert [v.name for v in part.variables["worker:0"]] == ["w"]
    values = {"x0": data[0][0], "t0": data[0][1], "x1": data[1][0], "t1": data[1][1]}
    for _ in range(3):
        pool.run(part, values)
    np.testing.assert_allclose(pool.store("worker:0")["w"], want, rtol=1e-6)
    assert "worker:1" not in pool.workers or not pool.store("worker:1")  # w lives on 0


def test_variables_stay_one_node_per_worker_across_programs():
    g, w, xs, ys, train, init = _data_parallel(placed=True)
    pool = Pool()
    pool.run(partition([init]), {})
    table = pool.workers["worker:0"].variables
    before = table["w"]
    (value,) = pool.run(partition([w]), {})
    assert table["w"] is before and len(pool.workers["worker:0"]._store) == 1
    np.testing.assert_array_equal(value, [[0.5], [-0.25], [1.0]])


def test_initializer_across_workers_runs_targets_after_their_stages():
    g = kg.Graph()
    with g.as_default():
        with kg.device("worker:1"):
            a = kg.Variable([1.0, 2.0], name="a")
        with kg.device("worker:0"):
            b = kg.Variable([3.0], name="b")
        init = kg.global_variables_initializer()
        total = kg.reduce_sum(a) + kg.reduce_sum(b)
    part = partition([init])
    done = next(s for s in part.stages if s.outputs == [init.name])
    runs_a = next(s for s in part.stages if any(t.name == "a/Assign" for t in s.targets))
    assert runs_a.worker == "worker:1" and runs_a.index in done.after
    assert part.transfers == []  # control dependencies move no values
    pool = Pool()
    pool.run(part, {})
    assert pool.store("worker:1")["a"].tolist() == [1.0, 2.0]
    (got,) = pool.run(partition([total]), {})
    assert got == 6.0


def test_program_ids_are_stable_and_programs_ship_as_plain_data():
    g, x, h, y = _split_mlp(placed=True)
    ids = [s.program.program_id for s in partition([y], [x]).stages]
    assert ids == [s.program.program_id for s in partition([y], [x]).stages]
    assert ids != [s.program.program_id for s in partition([h], [x]).stages][:2]
    program = pickle.loads(pickle.dumps(partition([y], [x]).stages[1].program))
    fetch_nodes, feed_nodes = program.build({})
    assert [n.name for n in feed_nodes] == ["h"] and [n.name for n in fetch_nodes] == ["y"]
    assert all(n.device.is_local for n in fetch_nodes + feed_nodes)


def test_a_fed_fetch_comes_from_the_client():
    g, x, h, y = _split_mlp(placed=True)
    part = partition([y, x], [x])
    assert part.fetches == ["y", "x"] and part.source["x"] is None


def test_feeding_an_intermediate_cuts_the_graph_there():
    g, x, h, y = _split_mlp(placed=True)
    part = partition([y], [h])
    assert [s.worker for s in part.stages] == ["worker:1"] and part.transfers == []
    (got,) = Pool().run(part, {"h": np.ones((2, 8), np.float32)})
    assert got.shape == (2,)


def test_cuda_on_a_worker_uploads_what_it_receives():
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[2, 3], name="x")
        with kg.device("worker:1/cuda:0"):
            y = kg.exp(x * 2.0, name="y")
        with kg.device("worker:0"):
            z = kg.reduce_sum(y, name="z")
    part = partition([z], [x])
    gpu = part.stages[0]
    assert gpu.worker == "worker:1"
    ops = [s.op for s in gpu.program.specs]
    assert ops[0] == "placeholder" and "to_device" in ops
    assert {s.device for s in gpu.program.specs} == {"cpu", "cuda:0"}
    (got,) = Pool().run(part, {"x": xs})
    np.testing.assert_allclose(got, np.exp(xs * 2.0).sum(), rtol=1e-5)
    assert part.transfer_bytes() == {"y": 24}


def test_control_flow_is_refused_by_name():
    g = kg.Graph()
    with g.as_default(), kg.device("worker:1"):
        p = kg.placeholder(kg.bool_, shape=[], name="p")
        out = kg.cond(p, lambda: kg.constant(1.0), lambda: kg.constant(2.0))
    with pytest.raises(NotImplementedError, match="cannot run on a worker yet"):
        partition([out], [p])


def test_wire_values_and_bytes():
    assert nbytes([np.zeros(3, np.float32), None, 2.0]) == 12
    assert to_wire(None) is None and isinstance(to_wire(np.float32(1)), np.generic)
    g, x, h, y = _split_mlp(placed=True)
    assert "read by h/to_cpu" in describe(partition([y], [x]), {"x": (1, 4)})


def test_graph_view_shows_transfers_between_workers():
    from kernelgraph.widgets.document import graph_document
    from kernelgraph.widgets.svg import render_svg

    g, x, h, y = _split_mlp(placed=True)
    doc = graph_document(g, [y])
    by_name = {n["name"]: n for n in doc["nodes"]}
    assert by_name["h/to_cpu"]["transfer"] == "worker:0 \u2192 worker:1"  # batch unknown
    assert "transfer" not in by_name["h"]
    svg = render_svg(doc)
    assert "worker:0 \u2192 worker:1" in svg
    assert 'data-device="worker:1/cpu"' in svg and 'stroke="#7c3aed"' not in svg  # no GPU


def test_trivial_local_work_joins_the_next_stage_of_its_worker():
    # worker 1 copies its own feed (no work) while worker 0 computes: one task, not two
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 3], name="x")
        x2 = kg.placeholder(kg.float32, shape=[None, 3], name="x2")
        with kg.device("worker:0"):
            h = kg.exp(x, name="h")
        with kg.device("worker:1"):
            y = kg.add(h, x2, name="y")
    part = partition([y], [x, x2])
    assert [(s.worker, s.level) for s in part.stages] == [("worker:0", 0), ("worker:1", 1)]
    assert part.stages[1].inputs == ["h", "x2"] or part.stages[1].inputs == ["x2", "h"]
    xs = np.ones((2, 3), np.float32)
    (got,) = Pool().run(part, {"x": xs, "x2": xs})
    np.testing.assert_allclose(got, np.exp(xs) + 1.0, rtol=1e-6)


def test_a_fed_gpu_placeholder_on_a_worker_is_uploaded_there():
    g = kg.Graph()
    with g.as_default(), kg.device("worker:1/cuda:0"):
        x = kg.placeholder(kg.float32, shape=[2, 2], name="x")
        y = kg.exp(x, name="y")
    part = partition([y], [x])
    specs = part.stages[0].program.specs
    assert [(s.op, s.device) for s in specs] == [
        ("placeholder", "cpu"), ("to_device", "cuda:0"), ("exp", "cuda:0")]
    (got,) = Pool().run(part, {"x": [[1.0, 2.0], [3.0, 4.0]]})
    np.testing.assert_allclose(got, np.exp([[1.0, 2.0], [3.0, 4.0]]), rtol=1e-6)


def test_real_work_overlapping_another_worker_keeps_its_stage():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 3], name="x")
        x2 = kg.placeholder(kg.float32, shape=[None, 3], name="x2")
        with kg.device("worker:0"):
            h = kg.exp(x, name="h")
        with kg.device("worker:1"):
            e = kg.exp(x2, name="e")  # needs nothing from worker 0: runs while it works
            y = kg.add(h, e, name="y")
    part = partition([y], [x, x2])
    assert [(s.worker, s.level) for s in part.stages] == [
        ("worker:0", 0), ("worker:1", 0), ("worker:1", 1)]
    assert [(c.key, c.src, c.src_stage, c.dst_stages) for c in part.carries] == [
        ("e", "worker:1", 1, (2,))]
    xs = np.ones((2, 3), np.float32)
    (got,) = Pool().run(part, {"x": xs, "x2": xs})
    np.testing.assert_allclose(got, 2 * np.exp(xs), rtol=1e-6)
