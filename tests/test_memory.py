"""Plans per feed signature, lean kernel bindings and memory planning (static/session.py,
static/passes.py ``specialize``, static/bindings.py, static/memory.py).

The rule every test here comes back to: whatever the compiler reuses or overwrites, a run
returns exactly what the unoptimised, op-by-op run returns, and never touches an array the
caller can see.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelgraph as kg
from kernelgraph.static import plan as session_module


def _plain(graph, fetches, feed, init=None):
    with kg.Session(graph, optimize=False) as sess:
        if init is not None:
            sess.run(init)
        return sess.run(fetches, feed)


def _assert_same(got, want):
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
        assert np.asarray(a).dtype == np.asarray(b).dtype


def test_a_plan_per_feed_signature_then_a_generic_one(monkeypatch):
    monkeypatch.setattr(session_module, "MAX_SPECIALIZED", 2)
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 3], name="x")
        y = kg.reduce_sum(kg.relu(x) * 2.0, axis=1)
    with kg.Session(g) as sess:
        plans = []
        for rows in (1, 4, 1, 7, 9):
            value = np.linspace(-1, 1, rows * 3, dtype=np.float32).reshape(rows, 3)
            np.testing.assert_array_equal(sess.run(y, {x: value}),
                                          _plain(g, [y], {x: value})[0])
            plans.append(sess.plan(y, {x: value}))
        assert plans[0] is plans[2]  # the same shape reuses its plan
        assert plans[0] is not plans[1]
        assert plans[0].feed_shapes == ((1, 3),) and plans[1].feed_shapes == ((4, 3),)
        assert plans[3] is plans[4] is sess.plan(y, {x: None})  # past the limit: generic
        assert plans[3].feed_shapes is None


def test_specialising_drops_gradient_bookkeeping_that_unknown_shapes_needed():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 4], name="x")
        w = kg.Variable(np.ones((4, 2), np.float32))
        loss = kg.reduce_mean(kg.square(kg.matmul(x, w) - 1.0))
        (gw,) = kg.gradients(loss, [w])
        init = kg.global_variables_initializer()
    feed = {x: np.arange(12, dtype=np.float32).reshape(3, 4)}
    with kg.Session(g) as sess:
        sess.run(init)
        generic = sess.explain(gw, {x: None})
        special = sess.explain(gw, feed)
        np.testing.assert_array_equal(sess.run(gw, feed), _plain(g, [gw], feed, init)[0])

    def count(e, op):
        return sum(n.op.name == op for n in e.after)

    assert count(generic, "sum_to_like") > 0
    assert count(special, "sum_to_like") == 0  # no input was broadcast: nothing to sum
    assert count(special, "ones_like") == 0  # folded: only the loss's shape was needed
    assert "shapes known" in special.passes[1].changes[0]


def test_unknown_dims_are_not_assumed_equal():
    g = kg.Graph()
    with g.as_default():
        a = kg.placeholder(kg.float32, shape=[None, 2], name="a")
        b = kg.placeholder(kg.float32, shape=[None, 2], name="b")
        (ga,) = kg.gradients(a * b, [a])  # both (?, 2), yet a may be broadcast
    feed = {a: np.ones((1, 2), np.float32), b: np.arange(10, dtype=np.float32).reshape(5, 2)}
    with kg.Session(g) as sess:
        for f in (feed, {a: None, b: None}):
            np.testing.assert_array_equal(sess.run(ga, feed), [[20.0, 25.0]])
            if f[a] is None:  # the generic plan too: it cannot know the rows are equal
                assert any(n.op.name == "sum_to_like" for n in sess.explain(ga, f).after)


def test_fed_shapes_that_cannot_work_fail_before_running_naming_the_line():
    g = kg.Graph()
    with g.as_default():
        a = kg.placeholder(kg.float32, shape=[None, None], name="a")
        b = kg.placeholder(kg.float32, shape=[None, None], name="b")
        c = kg.matmul(a, b, name="product")  # the line the error names
        v = kg.Variable(np.zeros(3, np.float32), name="v")
        p = kg.placeholder(kg.float32, shape=[None], name="p")
        store = v.assign(p)
    with kg.Session(g) as sess:
        with pytest.raises(kg.errors.InvalidArgumentError,
                           match=r"'product' \(op matmul\) cannot take the fed shapes(.|\n)*"
                                 r"'a' \(2, 3\), 'b' \(4, 5\)(.|\n)*c = kg.matmul"):
            sess.run(c, {a: np.ones((2, 3)), b: np.ones((4, 5))})
        with pytest.raises(kg.errors.InvalidArgumentError,
                           match=r"Cannot assign a value of shape \(5,\) to variable 'v' "
                                 r"of shape \(3,\)(.|\n)*store = v.assign"):
            sess.run(store, {p: np.ones(5)})


def test_in_place_writes_never_touch_feeds_fetches_or_earlier_results():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float64, shape=[None, 3], name="x")
        h = kg.exp(x) + 1.0  # fetched: may not be overwritten by what reads it
        y = kg.tanh(h * 2.0)
        z = kg.relu(y - 0.5) * 3.0  # y dies here: z may be written into y's array
    value = np.linspace(-2, 2, 6).reshape(2, 3)
    kept = value.copy()
    with kg.Session(g, skip_passes="fuse") as sess:  # unfused, so each op could reuse
        first = sess.run([h, z], {x: value})
        first_copy = [a.copy() for a in first]
        second = sess.run([h, z], {x: value * 2})
        assert sess.plan([h, z], {x: value}).memory.in_place  # something was reused
    np.testing.assert_array_equal(value, kept)  # the caller's feed is untouched
    _assert_same(first, first_copy)  # the next run did not write into returned arrays
    _assert_same(first, _plain(g, [h, z], {x: value}))
    _assert_same(second, _plain(g, [h, z], {x: value * 2}))


def test_variables_update_in_place_only_when_nothing_reads_the_old_value_later():
    g = kg.Graph()
    with g.as_default():
        w = kg.Variable(np.arange(4.0), name="w")
        v = kg.Variable(np.arange(4.0), name="v")
        step = w.assign_sub(kg.constant(np.ones(4)) * 0.5)  # nothing reads w after it
        old = v * 1.0
        bump = v.assign_add(kg.constant(np.ones(4)) * 2.0)
        after = old + 10.0  # made after the assign but reads v's value from before it
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        plan = sess.plan(step, {})
        assert plan.memory.variable_in_place and "_store[" in plan.source
        watched = sess.run(w)  # a fetched value is a copy: the update must not reach it
        sess.run(step)
        np.testing.assert_array_equal(watched, np.arange(4.0))
        np.testing.assert_array_equal(sess.run(w), np.arange(4.0) - 0.5)
        assert not sess.plan([bump, after], {}).memory.variable_in_place
        got = sess.run([bump, after])
        np.testing.assert_array_equal(got[1], np.arange(4.0) + 10.0)
        np.testing.assert_array_equal(sess.run(v), np.arange(4.0) + 2.0)


def test_memory_plan_reports_peak_against_nothing_freed():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 256], name="x")
        h = x
        for _ in range(6):  # a chain of unfusable steps: each value dies at the next
            h = kg.softmax(h * 2.0, axis=1)
    with kg.Session(g) as sess:
        e = sess.explain(h, {x: np.ones((64, 256), np.float32)})
    m = e.memory
    one = 64 * 256 * 4
    assert m.naive_bytes >= 12 * one - 1  # twelve intermediates kept to the end
    assert m.peak_bytes <= 2 * one  # at most the value being read and the one being made
    assert len(set(m.slots.values())) <= 3 < len(m.slots)
    assert "peak 128.0 KiB live" in m.summary()
    assert e.run_seconds is not None and "compiling costs" in e.timing()


def test_explain_times_a_run_only_when_the_run_changes_nothing():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 2], name="x")
        w = kg.Variable(np.ones(2, np.float32), name="w")
        loss = kg.reduce_sum(x * w)
        (gw,) = kg.gradients(loss, [w])
        step = w.assign_sub(gw * 0.5)  # fused with its value: still an update
        init = kg.global_variables_initializer()
    feed = {x: np.ones((3, 2), np.float32)}
    with kg.Session(g) as sess:
        sess.run(init)
        trained = sess.explain([loss, step], feed)
        np.testing.assert_array_equal(sess.run(w), [1.0, 1.0])  # explain did not train
        assert trained.run_seconds is None
        assert sess.explain(loss, feed).run_seconds > 0


def test_plan_source_shows_the_lean_kernels_and_slots():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 3], name="x")
        w = kg.constant(np.ones((3, 2), np.float32))
        y = kg.matmul(x, w) + kg.constant(np.ones(2, np.float32))
        t = kg.ops.matrix_transpose(y)
    with kg.Session(g, skip_passes="fuse") as sess:
        src = sess.plan(t, {x: np.ones((4, 3))}).source
        generic = sess.plan(t, {x: None}).source
    assert "_matmul_2d(f0, c" in src and "_add_float32(" in src and ".T" in src
    assert "_matmul(f0" in generic  # unknown rows: the general kernel with its checks


# Random programs: the optimised run (specialised, bound, in place, slots) must give the very
# bits of the op-by-op run, whatever the wiring and whichever values are fetched.
_UNARY = ["tanh", "relu", "exp_small", "neg", "transpose", "sum_rows"]
_BINARY = ["add", "mul", "sub", "maximum", "matmul"]


@st.composite
def _programs(draw):
    steps = draw(st.lists(st.tuples(st.sampled_from(_UNARY + _BINARY),
                                    st.integers(0, 50), st.integers(0, 50)),
                          min_size=1, max_size=12))
    fetched = draw(st.lists(st.integers(0, 50), min_size=1, max_size=3))
    return steps, fetched


def _build(steps):
    x = kg.placeholder(kg.float64, shape=[None, None], name="x")
    values = [x]
    for op, i, j in steps:
        a, b = values[i % len(values)], values[j % len(values)]
        if op == "tanh":
            values.append(kg.tanh(a))
        elif op == "relu":
            values.append(kg.relu(a))
        elif op == "exp_small":
            values.append(kg.exp(kg.tanh(a)))
        elif op == "neg":
            values.append(-a)
        elif op == "transpose":
            values.append(kg.ops.matrix_transpose(a))
        elif op == "sum_rows":
            values.append(kg.reduce_sum(a, axis=0, keepdims=True) + a)
        elif op == "matmul":
            values.append(kg.matmul(a, b))
        else:
            values.append(getattr(kg, op)(a, b))
    return x, values


@settings(max_examples=60, deadline=None)
@given(_programs())
def test_random_programs_match_the_op_by_op_run(program):
    steps, fetched = program
    g = kg.Graph()
    with g.as_default():
        x, values = _build(steps)
    fetches = [values[k % len(values)] for k in fetched]
    feed = {x: np.linspace(-1.5, 1.5, 9).reshape(3, 3)}  # square: every op fits
    kept = feed[x].copy()
    with kg.Session(g) as sess:
        got = sess.run(fetches, feed)
        again = sess.run(fetches, feed)
    want = _plain(g, fetches, feed)
    _assert_same(got, want)
    _assert_same(again, want)
    np.testing.assert_array_equal(feed[x], kept)


def test_training_with_in_place_updates_matches_op_by_op_training():
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((16, 8)).astype(np.float32)
    labels = rng.integers(0, 3, 16)
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 8])
        y = kg.placeholder(kg.int64, shape=[None])
        w1 = kg.Variable(rng.standard_normal((8, 6)).astype(np.float32) * 0.3)
        b1 = kg.Variable(np.zeros(6, np.float32))
        w2 = kg.Variable(rng.standard_normal((6, 3)).astype(np.float32) * 0.3)
        params = [w1, b1, w2]
        loss = kg.cross_entropy(kg.matmul(kg.relu(kg.matmul(x, w1) + b1), w2), y)
        grads = kg.gradients(loss, params)
        train = kg.group(*[p.assign_sub(gp * 0.1) for p, gp in zip(params, grads)])
        init = kg.global_variables_initializer()
    results = []
    for optimize in (True, False):
        with kg.Session(g, optimize=optimize) as sess:
            sess.run(init)
            losses = [sess.run([loss, train], {x: xs, y: labels})[0] for _ in range(5)]
            results.append((losses, sess.run(params)))
            if optimize:  # each `p - 0.1 * g` is one fused kernel writing p's own array
                source = sess.plan(train, {x: xs, y: labels}).source
                updates = [line for line in source.splitlines()
                           if line.rstrip().endswith(("# assign_sub", "# assign_sub_1"))]
                assert len(updates) == 2, updates
                for line in updates:
                    assert "_fused_" in line and line.count("_store[") == 2, line
    (fast_losses, fast_params), (plain_losses, plain_params) = results
    _assert_same(fast_losses, plain_losses)
    _assert_same(fast_params, plain_params)
    assert fast_losses[-1] < fast_losses[0]
