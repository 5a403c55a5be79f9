"""Step-through of static runs (kernelgraph.static.stepper): the same values as Session.run,
node by node, with variables, errors, run_to and reset behaving as a real run does."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelgraph as kg
from kernelgraph.errors import FailedPreconditionError, InvalidArgumentError
from kernelgraph.static.stepper import Stepper, StepperError


def step(sess, fetches, feed=None, **kw) -> Stepper:
    # Session.step is the public spelling; the class works on any Session as well.
    make = getattr(sess, "step", None)
    return make(fetches, feed, **kw) if make is not None else Stepper(sess, fetches, feed, **kw)


@pytest.fixture
def mlp():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 3], name="x")
        w = kg.constant(np.arange(6, dtype=np.float32).reshape(3, 2) / 7, name="w")
        with kg.name_scope("layer"):
            h = kg.relu(kg.matmul(x, w) - 0.5)
            y = kg.tanh(h * 2.0) + 1.0 * h
        loss = kg.reduce_mean(y * y, name="loss")
    feed = {x: np.linspace(-2, 3, 12, dtype=np.float32).reshape(4, 3)}
    return g, x, h, y, loss, feed


def test_every_step_value_is_what_session_run_computes(mlp):
    g, x, h, y, loss, feed = mlp
    with kg.Session(g) as sess, kg.Session(g, optimize=False) as plain:
        st_ = step(sess, [y, loss], feed)
        names = [n.name for n in st_.order]
        assert names[-1] == "loss" and "layer/matmul" in names  # as written: nothing fused
        seen = []
        while not st_.done:
            node, value = st_.step()
            seen.append(node.name)
            # each intermediate value, bit for bit, as a run fetching that node gives it
            np.testing.assert_array_equal(value, plain.run(node, feed))
            np.testing.assert_array_equal(value, sess.run(node, feed))
            assert st_.values[node.name] is value
        assert seen == names and st_.current is None
        expected = sess.run([y, loss], feed)
        assert isinstance(st_.fetched, list) and len(st_.fetched) == 2
        for got, want in zip(st_.fetched, expected):
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype
        assert st_.values["x"].shape == (4, 3) and "w" in st_.values  # fed and constant


def test_fetch_structures_come_back_as_session_run_returns_them(mlp):
    g, x, h, y, loss, feed = mlp
    with kg.Session(g) as sess:
        fetches = {"loss": loss, "pair": (h, [y])}
        got = step(sess, fetches, feed).run()
        want = sess.run(fetches, feed)
        assert set(got) == {"loss", "pair"} and isinstance(got["pair"], tuple)
        np.testing.assert_array_equal(got["loss"], want["loss"])
        np.testing.assert_array_equal(got["pair"][1][0], want["pair"][1][0])
        single = step(sess, loss, feed).run()
        assert np.ndim(single) == 0 and single == sess.run(loss, feed)


def test_run_to_reset_and_current(mlp):
    g, x, h, y, loss, feed = mlp
    with kg.Session(g) as sess:
        st_ = step(sess, loss, feed)
        first = st_.current
        assert first is st_.order[0] and st_.position == 0 and not st_.done
        value = st_.run_to("layer/relu")
        np.testing.assert_array_equal(value, sess.run(h, feed))
        assert st_.executed[-1].name == "layer/relu"
        assert st_.current.name == st_.order[st_.position].name
        assert st_.run_to(h) is value  # already run: no step taken
        position = st_.position
        np.testing.assert_array_equal(st_.run_to("w"), sess.run("w"))  # a constant
        assert st_.position == position
        with pytest.raises(StepperError, match=r"node 'nope' is not computed.*runs: layer/"):
            st_.run_to("nope")
        with pytest.raises(TypeError, match="node or a node name"):
            st_.run_to(3)
        st_.reset()
        assert st_.position == 0 and st_.current is first and st_.executed == []
        assert "layer/relu" not in st_.values and "x" in st_.values
        assert st_.run() == sess.run(loss, feed)
        with pytest.raises(StepperError, match="finished.*reset"):
            st_.step()
        assert "3/" not in repr(st_) and "done" in repr(st_)


def test_optimized_order_steps_through_fused_kernels(mlp):
    g, x, h, y, loss, feed = mlp
    with kg.Session(g) as sess:
        fast = step(sess, loss, feed, optimize=True)
        slow = step(sess, loss, feed)
        assert len(fast) < len(slow)
        assert any(hasattr(n.op.forward, "members") for n in fast.order)
        np.testing.assert_array_equal(fast.run(), slow.run())
        with pytest.raises(StepperError, match="optimize=False"):
            step(sess, loss, feed, optimize=True).run_to("layer/mul_1")


def test_assigns_write_the_sessions_variables_when_their_step_runs():
    g = kg.Graph()
    with g.as_default():
        v = kg.Variable(np.float32(1.0), name="v")
        x = kg.placeholder(kg.float32, shape=[], name="x")
        bump = v.assign_add(x * 2.0)
        total = kg.add(bump, 0.5, name="total")
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        st_ = step(sess, total, {x: 3.0})
        st_.run_to("mul")
        assert sess.run(v) == 1.0  # the assign has not run yet
        node, value = st_.step()
        assert node is bump and value == 7.0 and sess.run(v) == 7.0
        assert st_.run() == 7.5
        st_.reset()  # a second run reads what the first one wrote, as Session.run would
        assert st_.run() == 13.5 and sess.run(v) == 13.0


def test_uninitialised_variable_and_shape_errors_name_the_users_line():
    g = kg.Graph()
    with g.as_default():
        v = kg.Variable(np.ones((2, 2), np.float32), name="weights")
        p = kg.placeholder(kg.float32, shape=[None, None], name="p")
        q = kg.placeholder(kg.float32, shape=[None, None], name="q")
        m = kg.matmul(p, q)  # fails at run time on the fed shapes
        out = m + v
    with kg.Session(g) as sess:
        good = step(sess, out, {p: np.ones((2, 3)), q: np.ones((3, 2))})
        with pytest.raises(FailedPreconditionError, match=r"uninitialized value weights"
                                                           r"(.|\n)*kg.Variable"):
            good.run()
        sess.run(v.initializer)
        good.reset()
        np.testing.assert_array_equal(good.run(), np.full((2, 2), 4.0, np.float32))
        st_ = step(sess, out, {p: np.ones((2, 3)), q: np.ones((4, 2))})
        with pytest.raises(InvalidArgumentError, match=r"node 'matmul'(.|\n)*"
                                                        r"test_stepper.py(.|\n)*m = kg.matmul"):
            st_.run()
        assert st_.current.name == "matmul" and st_.error is not None and not st_.done
        assert [n.name for n in st_.executed] == ["weights"]
        with pytest.raises(StepperError, match="error at node 'matmul'.*reset"):
            st_.step()


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_check_numerics_stops_at_the_node_that_made_a_nan():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[2])
        s = kg.sqrt(x)
        y = s + 1.0
    with kg.Session(g, check_numerics=True) as sess:
        st_ = step(sess, y, {x: np.array([-1.0, 4.0], np.float32)})
        with pytest.raises(InvalidArgumentError, match=r"node 'sqrt'.*NaN(.|\n)*kg.sqrt"):
            st_.step()
        assert st_.current is s


def test_feeds_and_fetches_that_need_no_step():
    g = kg.Graph()
    with g.as_default():
        a = kg.placeholder(kg.float32, name="a")
        c = kg.constant(2.0, name="c")
    with kg.Session(g) as sess:
        st_ = step(sess, [a, c], {a: 5.0})
        assert st_.done and len(st_) == 0 and st_.current is None
        assert st_.fetched == sess.run([a, c], {a: 5.0}) == [5.0, 2.0]
        with pytest.raises(ValueError, match="needs a value"):
            step(sess, a, {a: None})
    with pytest.raises(RuntimeError, match="closed Session"):
        step(sess, c)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["add", "mul", "tanh", "relu", "sub"]), min_size=1,
                max_size=6),
       st.lists(st.floats(-3, 3, width=32), min_size=3, max_size=3))
def test_random_chains_step_to_session_run_results(ops, values):
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[3], name="x")
        y = x
        for op in ops:
            y = {"add": lambda t: t + x, "mul": lambda t: t * 0.5, "tanh": kg.tanh,
                 "relu": kg.relu, "sub": lambda t: t - 1.0}[op](y)
    feed = {x: np.array(values, np.float32)}
    with kg.Session(g) as sess:
        want = sess.run(y, feed)
        for optimize in (False, True):
            np.testing.assert_array_equal(step(sess, y, feed, optimize=optimize).run(), want)
