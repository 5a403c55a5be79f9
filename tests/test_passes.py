"""The compiler passes: what each one rewrites, that results keep every bit, that the user's
graph is never changed, and that errors still point at the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.static import fusion, passes
from tests.test_ops import assert_same


def _runs(fetches, feed, graph):
    """(optimised, unoptimised) results of one run."""
    with kg.Session(graph) as fast, kg.Session(graph, optimize=False) as plain:
        return fast.run(fetches, feed), plain.run(fetches, feed)


def test_each_pass_does_its_part_and_the_graph_is_untouched():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float64, shape=[None, 3], name="x")
        k = kg.exp(kg.constant(1.0, kg.float64)) * 2.0  # constant: folded
        a = kg.transpose(kg.transpose(x * k))  # transposes cancel
        b = (a - 0.0) * 1.0 / 1.0 + (-0.0)  # identities (x + 0.0 is not one: -0.0 + 0.0 = 0.0)
        c = kg.tanh(x * k)  # the same as a's inner product: merged
        kg.sqrt(x)  # not fetched
    snapshot = [(n.name, tuple(i.name for i in n.inputs)) for n in g.nodes]
    with kg.Session(g) as sess:
        e = sess.explain([b, c], feed_dict={x: None})
    counts = {r.name: (r.before, r.after, r.changes) for r in e.passes}
    assert [r.name for r in e.passes] == list(passes.ORDER)
    assert counts["prune"][1] < counts["prune"][0]  # sqrt is gone
    assert counts["fold_constants"][2] == ["folded exp", "folded mul"]
    assert "transpose_1 -> mul_1" in counts["simplify"][2]
    assert any(c.startswith("mul_") for c in counts["cse"][2])
    ops = sorted(n.op.name for n in e.after)
    assert ops == ["const", "mul", "placeholder", "tanh"], ops
    assert "_tanh(" in e.source and "_transpose" not in e.source
    assert [(n.name, tuple(i.name for i in n.inputs)) for n in g.nodes] == snapshot
    assert "compiled in" in str(e)
    feed = {x: np.linspace(-1, 1, 6).reshape(2, 3)}
    fast, plain = _runs([b, c], feed, g)
    for f, p in zip(fast, plain):
        assert_same(f, p, "optimised vs plain run")


def test_identities_that_would_change_the_result_stay():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[3])
        wider = x * kg.constant(np.ones((2, 3), np.float32))  # broadcasts: a new shape
        doubled = x * kg.constant(np.float64(1.0), dtype=kg.float64)  # a new dtype
        u = kg.placeholder(kg.float32)
        unknown = u + (-0.0)  # unknown shape: not provably the same
        plus_zero = x + 0.0  # -0.0 + 0.0 is 0.0: not x's bits
        minus_negative_zero = x - (-0.0)  # the same sum
    fetches = [wider, doubled, unknown, plus_zero, minus_negative_zero]
    with kg.Session(g) as sess:
        e = sess.explain(fetches, feed_dict={x: None, u: None})
    assert next(r for r in e.passes if r.name == "simplify").changes == []
    assert {n.op.name for n in e.after} >= {"mul", "add", "sub"}


def test_stateful_and_random_nodes_are_never_folded_or_merged():
    g = kg.Graph()
    with g.as_default():
        r1 = kg.ops.random.random_normal((3,), seed=1)
        r2 = kg.ops.random.random_normal((3,), seed=1)  # same attrs, but each its own draw
        v = kg.Variable(np.zeros(3))
        step = v.assign_add(kg.constant(np.ones(3)) * 2.0)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        e = sess.explain([r1, r2, step])
        assert sum(n.op.name == "random_normal" for n in e.after) == 2
        first, second = sess.run(r1), sess.run(r1)
        assert not np.array_equal(first, second)  # a new draw per run, not a folded constant
        sess.run(init)
        sess.run(step)
        np.testing.assert_array_equal(sess.run(step), [4.0, 4.0, 4.0])


def test_skip_passes_and_unknown_names():
    g = kg.Graph()
    with g.as_default():
        y = kg.constant(2.0) * 3.0
    with kg.Session(g, skip_passes=("fold_constants",)) as sess:
        e = sess.explain(y)
        assert [r.name for r in e.passes] == ["prune", "specialize", "simplify", "cse",
                                              "fuse", "dce"]
        assert "_mul(" in e.source
        assert sess.run(y) == 6.0
    with kg.Session(g, optimize=False) as sess:
        assert sess.explain(y).passes == []
    with pytest.raises(ValueError, match=r"unknown passes \['fusion'\]"):
        kg.Session(g, skip_passes=("fusion",))
    assert kg.Session(g, skip_passes="cse").skip_passes == ("cse",)  # one name as a string


def test_fusion_makes_one_kernel_per_group_with_the_same_bits(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELGRAPH_CACHE", str(tmp_path))
    # As in a new process: an earlier test may have loaded the same pattern already, and a
    # kernel loaded in this process is not written to the new cache folder.
    monkeypatch.setattr(fusion, "_KERNELS", {})
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 4], name="x")
        w = kg.placeholder(kg.float64, shape=[4], name="w")
        hidden = kg.relu(x * 0.5 + 1.0)  # fetched: computed once, read by the next group
        y = kg.where(hidden > 1.2, kg.sigmoid(hidden) * w, kg.exp(-hidden))  # mixed dtypes
    feed = {x: np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4),
            w: np.arange(4.0)}
    with kg.Session(g) as sess:
        e = sess.explain([hidden, y], feed)
    fuse = next(r for r in e.passes if r.name == "fuse")
    assert fuse.changes == ["relu <- mul add", "where <- greater sigmoid mul_1 neg exp"]
    assert sorted(e.kernels) == ["relu", "where"]
    assert "float64(t" in e.kernels["where"]  # float32 values converted, as unfused
    files = list((tmp_path / "fused").glob("fused_*.py"))
    assert sorted(f.read_text() for f in files) == sorted(e.kernels.values())
    fast, plain = _runs([hidden, y], feed, g)
    for f, p in zip(fast, plain):
        assert_same(f, p, "fused vs op-by-op")


def test_errors_in_fused_kernels_name_the_group():
    g = kg.Graph()
    with g.as_default():
        a = kg.placeholder(kg.float32, shape=[None])
        b = kg.placeholder(kg.float32, shape=[None])
        y = kg.tanh(a + b) * 2.0
    feed = {a: np.ones(3), b: np.ones(4)}
    # Specialised to the fed shapes, the plan sees the mismatch before anything runs ...
    with kg.Session(g) as sess, pytest.raises(
            kg.errors.InvalidArgumentError,
            match=r"node 'add' \(op add\) cannot take the fed shapes(.|\n)*"
                  r"'Placeholder' \(3,\), 'Placeholder_1' \(4,\)(.|\n)*y = kg.tanh"):
        sess.run(y, feed)
    # ... and without that pass the fused kernel fails, naming every node it computes.
    with kg.Session(g, skip_passes="specialize") as sess, pytest.raises(
            kg.errors.InvalidArgumentError,
            match=r"fused from add, tanh, mul(.|\n)*y = kg.tanh\(a \+ b\)"):
        sess.run(y, feed)


def test_errors_still_name_the_users_line_after_rewrites():
    g = kg.Graph()
    with g.as_default():
        p = kg.placeholder(kg.float32, shape=[None, None])
        q = kg.placeholder(kg.float32, shape=[None, None])
        m = kg.matmul(p * 1.0, q)  # p * 1.0 is simplified away; the matmul fails at run time
    with kg.Session(g) as sess, pytest.raises(kg.errors.InvalidArgumentError,
                                              match=r"node 'matmul'.*\n.*\n.*\n.*"
                                                    r"test_passes.py.*m = kg.matmul"):
        sess.run(m, {p: np.ones((2, 3)), q: np.ones((4, 5))})


def test_a_failing_constant_is_left_to_fail_at_run_time():
    g = kg.Graph()
    with g.as_default():
        bad = kg.constant(2) ** kg.constant(-1)  # integers to a negative power
    with kg.Session(g) as sess:
        assert "folded" not in sess.explain(bad).summary()
        with pytest.raises(kg.errors.InvalidArgumentError, match="negative integer powers"):
            sess.run(bad)


def test_traced_runs_show_every_node_as_written():
    g = kg.Graph()
    with g.as_default():
        y = kg.constant(2.0) * 3.0
    seen = []
    with kg.Session(g) as sess, kg.trace.listening(
            lambda kind, node=None, **_: seen.append(node.name) if kind == "node_executed"
            else None):
        assert sess.run(y) == 6.0
    assert seen == ["mul"]  # computed, not folded away, while someone watches


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")  # exp overflows on purpose
def test_check_numerics_names_the_first_node_that_made_a_nan():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[3])
        s = kg.sqrt(x - 1.0)  # NaN below 1
        y = kg.exp(s * 100.0)  # Inf for large s, NaN stays NaN
    feed = {x: np.array([4.0, 0.0, 2.0], np.float32)}
    with kg.Session(g) as sess:
        assert np.isnan(sess.run(y, feed)).any()  # by default NaNs flow on silently
    with kg.Session(g, check_numerics=True) as sess, pytest.raises(
            kg.errors.InvalidArgumentError,
            match=r"node 'sqrt' \(op sqrt\) produced NaN values.*\n.*s = kg.sqrt\(x - 1.0\)"):
        sess.run(y, feed)
    with kg.Session(g, check_numerics=True) as sess, pytest.raises(
            kg.errors.InvalidArgumentError, match=r"node 'exp' \(op exp\) produced Inf"):
        sess.run(y, {x: np.array([4.0, 9.0, 2.0], np.float32)})
    with kg.Session(g, check_numerics=True) as sess:
        np.testing.assert_allclose(sess.run(y, {x: np.ones(3, np.float32)}), np.ones(3))


def test_fusion_works_when_the_kernel_cache_cannot_be_written(monkeypatch):
    monkeypatch.setenv("KERNELGRAPH_CACHE", "/proc/kernelgraph-cannot-write-here")
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[3])
        y = kg.tanh(x * 3.0) - 1.0
    with kg.Session(g) as sess:
        assert list(sess.explain(y, {x: None}).kernels) == ["sub"]
        np.testing.assert_allclose(sess.run(y, {x: np.zeros(3, np.float32)}), -np.ones(3))


@pytest.mark.parametrize("n, groups", [(16, 1), (1000, 4)])
def test_fusion_splits_groups_that_would_not_vectorise(n, groups):
    # Over more than SMALL_ELEMENTS values a group holds at most one math-library call and
    # MAX_MEMBERS nodes (bigger scalar functions make LLVM give up vectorising the loop);
    # over a few values everything fuses into one kernel. The bits never change.
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None], name="x")
        y = x
        for _ in range(4):
            y = kg.sigmoid(kg.tanh(y * 1.01 + 0.5))
    feed = {x: np.linspace(-1, 1, n, dtype=np.float32)}
    with kg.Session(g) as sess:
        e = sess.explain(y, feed)
    fuse = next(r for r in e.passes if r.name == "fuse")
    assert len(fuse.changes) == groups, fuse.changes
    for change in fuse.changes:
        members = change.replace("<-", "").split()
        assert sum(m.split("_")[0] in ("tanh", "sigmoid") for m in members) <= (
            1 if n > fusion.SMALL_ELEMENTS else 8)
        assert len(members) <= (fusion.MAX_MEMBERS if n > fusion.SMALL_ELEMENTS else 16)
    fast, plain = _runs(y, feed, g)
    assert_same(fast, plain, "split fusion vs op-by-op")
