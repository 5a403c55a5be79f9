"""Large graphs (issue #19, item 5): wide and deep graphs run in both modes, fused groups
stay within what a NumPy ufunc and a CUDA launch take, long chains compile a few kernels of
bounded size, and compiled plans release what they registered.

Nothing here is timed (speed is measured by benchmarks): a quadratic loop or a recursion
over the graph shows as a test that no longer finishes in seconds, or a RecursionError.
"""

from __future__ import annotations

import gc
import linecache

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph import codegen
from kernelgraph.static import fusion


@pytest.fixture(autouse=True)
def _kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELGRAPH_CACHE", str(tmp_path))


def _fused(plan) -> list:
    return [n for n in plan.order if hasattr(n.op.forward, "members")]


def _check_group_limits(plan) -> None:
    for n in _fused(plan):
        members, leaves = n.op.forward.members, n.inputs
        assert len(members) <= fusion.MAX_GROUP
        limit = fusion.MAX_OPERANDS["cpu" if n.device.type == "cpu" else "cuda"]
        assert len(leaves) <= limit
        if n.device.type == "cpu":
            assert n.op.forward.ufunc.nin == len(leaves)  # NumPy built it: nin + 1 <= 32


def _sum_graph(terms: int, shape, device="cpu"):
    """``a0 + a1 + ... + a{terms-1}``, every term its own placeholder."""
    g = kg.Graph()
    with g.as_default(), kg.device(device):
        xs = [kg.placeholder(kg.float32, shape=shape, name=f"a{i}") for i in range(terms)]
        total = xs[0]
        for x in xs[1:]:
            total = total + x
    return g, xs, total


@pytest.mark.parametrize("shape", [[4], [300]])  # fused without limit / at most MAX_MEMBERS
def test_a_sum_of_70_placeholders_runs_fused_and_unfused(shape):
    g, xs, total = _sum_graph(70, shape)
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(shape).astype(np.float32) for _ in xs]
    want = values[0]
    for v in values[1:]:
        want = want + v  # float32, left to right: the graph's own order
    feed = dict(zip(xs, values))
    for skip in ((), ("fuse",)):
        with kg.Session(g, skip_passes=skip) as sess:
            np.testing.assert_array_equal(sess.run(total, feed), want)
            plan = sess.plan(total, feed)
            _check_group_limits(plan)
            if not skip:
                assert len(_fused(plan)) >= 3  # 70 operands need three ufuncs or more
    # Gradients of the 70 terms, and the eager equivalent with backward.
    with g.as_default():
        grads = kg.gradients(kg.reduce_sum(total * total), xs)
    with kg.Session(g) as sess:
        got = sess.run(grads, feed)
    ts = [kg.tensor(v, requires_grad=True) for v in values]
    eager = ts[0]
    for t in ts[1:]:
        eager = eager + t
    np.testing.assert_array_equal(eager.detach().numpy(), want)
    kg.reduce_sum(eager * eager).backward()
    for g_static, t in zip(got, ts):
        np.testing.assert_allclose(g_static, 2 * want, rtol=1e-6)
        np.testing.assert_allclose(t.grad.numpy(), 2 * want, rtol=1e-6)


def test_a_sum_of_70_placeholders_on_cuda():
    pytest.importorskip("kernelgraph.kernels.cuda.core")
    g, xs, total = _sum_graph(70, [3], "cuda")
    values = [np.full(3, i, np.float32) for i in range(70)]
    with kg.Session(g) as sess:
        feed = dict(zip(xs, values))
        np.testing.assert_array_equal(sess.run(total, feed), np.full(3, sum(range(70))))
        plan = sess.plan(total, feed)
        _check_group_limits(plan)
        assert all(n.device.type == "cuda" for n in _fused(plan))


def _chain(x, n: int):
    """The chain of the benchmarks: * 1.01, + 0.5, tanh, sigmoid, repeated."""
    for i in range(n):
        k = i % 4
        x = (x * 1.01 if k == 0 else x + 0.5 if k == 1 else kg.tanh(x) if k == 2
             else kg.sigmoid(x))
    return x


def _reference_chain(x: np.ndarray, n: int) -> np.ndarray:
    x = x.astype(np.float64)
    for i in range(n):
        k = i % 4
        x = x * 1.01 if k == 0 else x + 0.5 if k == 1 else np.tanh(x) if k == 2 else \
            1 / (1 + np.exp(-x))
    return x


def test_a_20000_node_graph_runs_in_static_mode():
    value = np.linspace(-1, 1, 16, dtype=np.float32)
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[16], name="x")
        y = _chain(x, 13_336)  # and a constant per multiply and per add
    assert len(g.nodes) >= 20_000
    with kg.Session(g) as sess:
        got = sess.run(y, {x: value})
        plan = sess.plan(y, {x: value})
    _check_group_limits(plan)
    np.testing.assert_allclose(got, _reference_chain(value, 13_336), rtol=1e-4)


def test_a_20000_op_chain_runs_eagerly_with_backward():
    value = np.linspace(-1, 1, 8, dtype=np.float32)
    x = kg.tensor(value, requires_grad=True)
    y = kg.reduce_sum(_chain(x, 20_000))
    y.backward()
    want = _reference_chain(value, 20_000)
    np.testing.assert_allclose(float(y.detach().numpy()), want.sum(), rtol=1e-4)
    assert x.grad.numpy().shape == (8,)
    assert np.all(np.isfinite(x.grad.numpy()))


def test_gradients_of_a_2000_op_chain_match_eager_backward():
    value = np.linspace(-1, 1, 8, dtype=np.float32)
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[8], name="x")
        loss = kg.reduce_sum(_chain(x, 2_000))
        (grad,) = kg.gradients(loss, [x])
    with kg.Session(g) as sess:
        static = sess.run(grad, {x: value})
    t = kg.tensor(value, requires_grad=True)
    kg.reduce_sum(_chain(t, 2_000)).backward()
    np.testing.assert_allclose(static, t.grad.numpy(), rtol=1e-5, atol=1e-12)


def test_a_long_chain_compiles_a_few_kernels_of_bounded_size():
    """Compile time must grow linearly with a chain's length: each group has at most
    MAX_GROUP members, and groups that differ only in their nodes' names share one
    compiled kernel, so a 1,000-op chain compiles two (32-op groups and the rest)."""
    value = np.linspace(-1, 1, 16, dtype=np.float32)
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[16], name="x")
        y = _chain(x, 1_000)
    with kg.Session(g) as fused_sess, kg.Session(g, skip_passes=("fuse",)) as plain:
        got = fused_sess.run(y, {x: value})
        np.testing.assert_array_equal(got, plain.run(y, {x: value}))  # the same bits
        groups = _fused(fused_sess.plan(y, {x: value}))
    assert sum(len(n.op.forward.members) for n in groups) == 1_000
    assert max(len(n.op.forward.members) for n in groups) == fusion.MAX_GROUP
    assert len({id(n.op.forward.ufunc) for n in groups}) <= 2
    assert len({n.op.forward.source for n in groups}) == len(groups)  # each names its own


def test_small_groups_are_unchanged_by_the_limits():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 4], name="x")
        w = kg.placeholder(kg.float32, shape=[4], name="w")
        y = kg.relu(x * w + 1.0)
    with kg.Session(g) as sess:
        e = sess.explain(y, {x: np.ones((2, 4), np.float32), w: np.ones(4, np.float32)})
    assert [r.changes for r in e.passes if r.name == "fuse"] == [["relu <- mul add"]]


def _kernelgraph_entries() -> set:
    codegen.drop_collected()  # what register does before adding an entry
    return {k for k in linecache.cache if k.startswith("<kernelgraph")}


def test_plans_and_steppers_release_their_linecache_entries():
    before = _kernelgraph_entries()
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[3], name="x")
        y = kg.tanh(x) * 2.0
    feed = {x: np.ones(3, np.float32)}
    sess = kg.Session(g)
    sess.run(y, feed)
    stepper = sess.step(y, feed)
    made = _kernelgraph_entries() - before
    assert len(made) == 3  # the plan, the plan of the graph as written, the stepper's code
    stepper.run()
    del stepper
    gc.collect()
    assert len(_kernelgraph_entries() - before) == 1  # only the session's plan is left
    sess.close()
    gc.collect()
    assert not _kernelgraph_entries() - before
    # A session dropped without close() lets its plans go too.
    dropped = kg.Session(g)
    dropped.run(y, feed)
    assert _kernelgraph_entries() - before
    del dropped
    gc.collect()
    assert not _kernelgraph_entries() - before

