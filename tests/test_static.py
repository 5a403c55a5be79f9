"""Static mode: TF1's Graph / placeholder / Variable / gradients / Session semantics."""

import collections
import inspect
import os

import numpy as np
import pytest

import kernelgraph as kg

HERE = os.path.basename(__file__)


def here() -> int:
    """The caller's line number: ``line, node = here(), kg.op(...)`` records the line that
    makes a node; before an op that raises, ``line = here() + 1`` names the next line."""
    return inspect.currentframe().f_back.f_lineno


def assert_points_at(message: str, line: int) -> None:
    """The error message names this test file and the line that created the node."""
    assert f'{HERE}", line {line}' in message, message


@pytest.fixture
def graph():
    g = kg.Graph()
    with g.as_default():
        yield g


# -- graphs, defaults and names --------------------------------------------------------------
def test_graph_as_default_and_get_default_graph():
    g = kg.Graph()
    outer = kg.get_default_graph()
    with g.as_default() as entered:
        assert entered is g
        assert kg.get_default_graph() is g
        c = kg.constant(1.0)
        assert c.graph is g and g.nodes == [c]
    assert kg.get_default_graph() is outer
    assert c not in outer.nodes


def test_reset_default_graph():
    before = kg.get_default_graph()
    kg.constant(1.0)
    kg.reset_default_graph()
    after = kg.get_default_graph()
    assert after is not before and len(after) == 0
    with kg.Graph().as_default():
        with pytest.raises(AssertionError, match="Do not use tf.reset_default_graph"):
            kg.reset_default_graph()


def test_name_scopes_and_unique_names(graph):
    with kg.name_scope("layer"):
        w = kg.constant(1.0, name="w")
        w1 = kg.constant(2.0, name="w")
        with kg.name_scope("inner"):
            b = kg.constant(3.0, name="b")
    with kg.name_scope("layer"):  # a second scope of one name gets a new name
        w_again = kg.constant(4.0, name="w")
    top = kg.constant(5.0, name="w")
    assert [w.name, w1.name, b.name, w_again.name, top.name] == [
        "layer/w", "layer/w_1", "layer/inner/b", "layer_1/w", "w"]
    assert graph.get_node("layer/w_1") is w1
    assert graph.get_tensor_by_name("layer_1/w:0") is w_again


def test_default_names_are_uniquified(graph):
    a = kg.placeholder(kg.float32)
    b = kg.placeholder(kg.float32)
    s1 = a + b
    s2 = a + b
    assert (a.name, b.name, s1.name, s2.name) == ("Placeholder", "Placeholder_1", "add", "add_1")


# -- shape inference at creation ---------------------------------------------------------------
def test_shapes_inferred_with_unknown_dims(graph):
    x = kg.placeholder(kg.float32, shape=[None, 3])
    w = kg.constant(np.ones((3, 2), np.float32))
    y = x @ w
    assert y.shape == (None, 2) and y.dtype == kg.float32
    assert (y + kg.constant([1.0, 2.0])).shape == (None, 2)
    assert kg.reduce_sum(y, axis=1).shape == (None,)
    assert kg.reduce_mean(y).shape == ()
    assert kg.reduce_sum(y, axis=0, keepdims=True).shape == (1, 2)
    assert kg.relu(x).shape == (None, 3)
    assert kg.placeholder(kg.float32).shape is None
    assert (kg.placeholder(kg.float32) * x).shape is None  # unknown rank stays unknown


def test_matmul_mismatch_fails_at_creation(graph):
    a = kg.constant(np.ones((2, 3), np.float32))
    b = kg.constant(np.ones((4, 5), np.float32))
    with pytest.raises(ValueError) as info:
        line = here() + 1
        kg.matmul(a, b)
    msg = str(info.value)
    assert "(2, 3)" in msg and "(4, 5)" in msg
    assert_points_at(msg, line)
    assert "kg.matmul(a, b)" in msg  # the source text of the line


def test_broadcast_mismatch_fails_at_creation(graph):
    x = kg.placeholder(kg.float32, shape=[None, 3])
    with pytest.raises(ValueError) as info:
        line = here() + 1
        x + kg.constant([1.0, 2.0])
    msg = str(info.value)
    assert "(?, 3)" in msg and "(2,)" in msg and "cannot be broadcast" in msg
    assert_points_at(msg, line)


# -- variables ---------------------------------------------------------------------------------
def test_variable_assign_ops(graph):
    v = kg.Variable(np.array([1.0, 2.0], np.float32), name="v")
    assert isinstance(v, kg.Node) and v.name == "v" and v.shape == (2,)
    set_v = v.assign([10.0, 20.0])
    add_v = v.assign_add([1.0, 1.0])
    sub_v = v.assign_sub([0.5, 0.5])
    init = kg.global_variables_initializer()
    with kg.Session() as sess:
        assert sess.run(init) is None
        np.testing.assert_allclose(sess.run(v), [1.0, 2.0])
        np.testing.assert_allclose(sess.run(add_v), [2.0, 3.0])
        np.testing.assert_allclose(sess.run(sub_v), [1.5, 2.5])
        np.testing.assert_allclose(sess.run(set_v), [10.0, 20.0])
        np.testing.assert_allclose(sess.run(v), [10.0, 20.0])
        sess.run(init)
        np.testing.assert_allclose(sess.run(v), [1.0, 2.0])
    assert kg.global_variables() == [v] and kg.trainable_variables() == [v]


def test_two_sessions_hold_separate_variable_values(graph):
    v = kg.Variable(0.0)
    inc = v.assign_add(1.0)
    init = kg.global_variables_initializer()
    s1, s2 = kg.Session(), kg.Session()
    s1.run(init)
    s2.run(init)
    for _ in range(3):
        s1.run(inc)
    assert s1.run(v) == 3.0
    assert s2.run(v) == 0.0
    s1.close()
    s2.close()


def test_variable_shape_mismatch_in_assign(graph):
    v = kg.Variable(np.zeros(2, np.float32))
    with pytest.raises(ValueError, match=r"Cannot assign a value of shape \(3,\)"):
        v.assign([1.0, 2.0, 3.0])


def test_fetching_a_variable_returns_a_copy(graph):
    v = kg.Variable(np.array([1.0, 2.0], np.float32))
    with kg.Session() as sess:
        sess.run(kg.global_variables_initializer())
        got = sess.run(v)
        got[0] = 100.0
        np.testing.assert_allclose(sess.run(v), [1.0, 2.0])
        (a, b) = sess.run((v, kg.reshape(v, (2, 1))))
        a[0] = b[0, 0] = -1.0
        np.testing.assert_allclose(sess.run(v), [1.0, 2.0])


def test_fetching_an_assign_returns_a_copy(graph):
    v = kg.Variable(np.array([1.0, 2.0], np.float32))
    set_v = v.assign([5.0, 6.0])
    add_v = v.assign_add([1.0, 1.0])
    with kg.Session() as sess:
        sess.run(kg.global_variables_initializer())
        got = sess.run(set_v)
        got[0] = 100.0
        np.testing.assert_allclose(sess.run(v), [5.0, 6.0])
        got = sess.run(add_v)
        got[0] = 100.0
        np.testing.assert_allclose(sess.run(v), [6.0, 7.0])


def test_fed_array_is_copied_into_variable(graph):
    v = kg.Variable(np.zeros(2, np.float32))
    p = kg.placeholder(kg.float32, shape=[2])
    store = v.assign(p)
    with kg.Session() as sess:
        sess.run(kg.global_variables_initializer())
        fed = np.array([5.0, 6.0], np.float32)
        sess.run(store, {p: fed})
        fed[0] = -1.0
        np.testing.assert_allclose(sess.run(v), [5.0, 6.0])


# -- gradients ---------------------------------------------------------------------------------
def test_gradients_product(graph):
    a = kg.placeholder(kg.float32)
    b = kg.placeholder(kg.float32)
    c = a * b
    da, db = kg.gradients(c, [a, b])
    assert da.name.startswith("gradients/")
    with kg.Session() as sess:
        assert sess.run([da, db], feed_dict={a: 15.0, b: 20.0}) == [20.0, 15.0]


def test_gradients_sum_over_ys_and_none_when_unconnected(graph):
    x = kg.placeholder(kg.float32, shape=[None])
    y = kg.placeholder(kg.float32, shape=[None])
    z = kg.placeholder(kg.float32, shape=[None])
    y1 = x * 2.0
    y2 = x * y
    gx, gy, gz = kg.gradients([y1, y2], [x, y, z])
    assert gz is None
    with kg.Session() as sess:
        vx, vy = sess.run([gx, gy], {x: [1.0, 2.0], y: [3.0, 4.0]})
    np.testing.assert_allclose(vx, [2.0 + 3.0, 2.0 + 4.0])
    np.testing.assert_allclose(vy, [1.0, 2.0])


def test_gradients_grad_ys(graph):
    x = kg.placeholder(kg.float32, shape=[2])
    y = x * x
    (gx,) = kg.gradients(y, [x], grad_ys=[kg.constant([10.0, 100.0])])
    (g_single,) = kg.gradients(y, x)
    with kg.Session() as sess:
        np.testing.assert_allclose(sess.run(gx, {x: [1.0, 2.0]}), [20.0, 400.0])
        np.testing.assert_allclose(sess.run(g_single, {x: [1.0, 2.0]}), [2.0, 4.0])
    with pytest.raises(ValueError, match="Passed 2 grad_ys for 1 ys"):
        kg.gradients(y, [x], grad_ys=[1.0, 2.0])


def test_gradient_has_input_dtype(graph):
    p = kg.placeholder(kg.float32, [2])
    r = kg.reduce_sum(p * kg.constant(np.array([1.0, 2.0])))  # float64
    (gp,) = kg.gradients(r, [p])
    assert gp.dtype == kg.float32
    with kg.Session() as sess:
        got = sess.run(gp, {p: [1.0, 1.0]})
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [1.0, 2.0])


# -- Session.run ---------------------------------------------------------------------------------
def test_session_context_manager(graph):
    c = kg.constant(3.0)
    with kg.Session() as sess:
        assert kg.get_default_session() is sess
        assert sess.graph is graph
        assert c.eval() == 3.0
    assert kg.get_default_session() is None
    with pytest.raises(RuntimeError, match="Attempted to use a closed Session"):
        sess.run(c)


def test_run_returns_the_structure_of_fetches(graph):
    a = kg.placeholder(kg.float32, name="a")
    b = a * 2.0
    c = a + 1.0
    Pair = collections.namedtuple("Pair", "x y")
    with kg.Session() as sess:
        feed = {a: 3.0}
        single = sess.run(b, feed)
        assert np.ndim(single) == 0 and single == 6.0  # a NumPy scalar, as TF1 returns
        assert sess.run([b], feed) == [6.0]
        assert sess.run([b, c], feed) == [6.0, 4.0]
        got = sess.run((b, c), feed)
        assert isinstance(got, tuple) and got == (6.0, 4.0)
        assert sess.run({"b": b, "c": c}, feed) == {"b": 6.0, "c": 4.0}
        nested = sess.run({"k": [b, (c, {"z": b})], "p": Pair(b, c)}, feed)
        assert nested == {"k": [6.0, (4.0, {"z": 6.0})], "p": Pair(6.0, 4.0)}
        assert isinstance(nested["p"], Pair)
        assert sess.run([], feed) == [] and sess.run({}) == {}
        assert sess.run("a:0", {"a": 2.0}) == 2.0  # names work as fetches and feed keys


def test_shared_node_computed_once_per_run(graph):
    a = kg.placeholder(kg.float32, shape=[2])
    shared = kg.exp(a)
    left = shared * 2.0
    right = shared + 1.0
    total = left + right
    counts = collections.Counter()

    def listener(kind, **info):
        if kind == "node_executed":
            counts[info["node"].name] += 1

    with kg.Session() as sess, kg.trace.listening(listener):
        out = sess.run([left, right, total, shared], {a: [0.0, 1.0]})
    np.testing.assert_allclose(out[2], 3 * np.exp([0.0, 1.0]) + 1.0, rtol=1e-6)
    assert counts[shared.name] == 1
    assert counts == {shared.name: 1, left.name: 1, right.name: 1, total.name: 1}


@pytest.mark.parametrize("value", [
    [1.0, 2.0], np.array([1.0, 2.0], np.float32), np.array([1, 2]), (1, 2), [1, 2]])
def test_feeds_of_lists_tuples_and_arrays(graph, value):
    x = kg.placeholder(kg.float32, shape=[None])
    y = x * 2.0
    with kg.Session() as sess:
        got = sess.run(y, {x: value})
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [2.0, 4.0])


def test_feed_scalar(graph):
    x = kg.placeholder(kg.float32)
    s = kg.placeholder(kg.float32, shape=[])
    with kg.Session() as sess:
        assert sess.run(x * s, {x: 3.0, s: 2}) == 6.0
        assert sess.run(x * 2.0, {x: 1.5}) == 3.0


def test_feed_a_non_placeholder_node(graph):
    a = kg.placeholder(kg.float32)
    b = a * 2.0
    c = b + 1.0
    with kg.Session() as sess:
        assert sess.run(c, {b: 10.0}) == 11.0  # TF1: any tensor can be fed


def test_plan_source_shows_generated_code(graph):
    a = kg.placeholder(kg.float32, shape=[None, None], name="a")
    b = kg.placeholder(kg.float32, shape=[None, None], name="b")
    c = kg.relu(kg.matmul(a, b, name="mm"), name="act")
    with kg.Session() as sess:
        plan = sess.plan(c, {a: None, b: None})
        src = plan.source
        assert src.startswith("def _run(")
        assert "_matmul(" in src and "_relu(" in src
        assert "# mm" in src and "# act" in src
        assert "return" in src
        np.testing.assert_allclose(sess.run(c, {a: [[1.0, -1.0]], b: [[2.0], [3.0]]}), [[0.0]])


# -- errors, asserted by message and by the user's line ----------------------------------------
def test_unfed_placeholder(graph):
    line, a = here(), kg.placeholder(kg.float32, shape=[None, 3], name="a")
    b = a * 2.0
    with kg.Session() as sess, pytest.raises(kg.errors.InvalidArgumentError) as info:
        sess.run(b)
    msg = str(info.value)
    assert "You must feed a value for placeholder tensor 'a' with dtype float32" in msg
    assert "(?, 3)" in msg
    assert_points_at(msg, line)
    assert info.value.node is a


def test_fed_shape_incompatible(graph):
    line, x = here(), kg.placeholder(kg.float32, shape=[None, 3])
    with kg.Session() as sess:
        for bad in (np.ones((2, 4)), np.ones(3), np.ones((1, 1, 3))):
            with pytest.raises(ValueError, match="Cannot feed value of shape") as info:
                sess.run(x, {x: bad})
            msg = str(info.value)
            assert f"Cannot feed value of shape {bad.shape}" in msg
            assert "which has shape '(?, 3)'" in msg
            assert_points_at(msg, line)


def test_feed_key_that_is_not_a_node(graph):
    x = kg.placeholder(kg.float32)
    with kg.Session() as sess:
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key"):
            sess.run(x, {3: 1.0})
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key"):
            sess.run(x, {kg.tensor(1.0): 1.0})
        with pytest.raises(KeyError, match="'nope' refers to a Tensor which does not exist"):
            sess.run(x, {"nope": 1.0})


def test_fetch_that_is_not_a_node(graph):
    with kg.Session() as sess, pytest.raises(TypeError, match="has invalid type"):
        sess.run(3.0)


def test_uninitialized_variable(graph):
    line, v = here(), kg.Variable(np.zeros(2, np.float32), name="weights")
    doubled = v * 2.0
    bump = v.assign_add([1.0, 1.0])
    with kg.Session() as sess:
        for fetch in (v, doubled, bump):
            with pytest.raises(kg.errors.FailedPreconditionError) as info:
                sess.run(fetch)
            msg = str(info.value)
            assert "Attempting to use uninitialized value weights" in msg
            assert_points_at(msg, line)
            assert info.value.node is v
    with kg.Session() as other:  # initialising one session does not initialise another
        other.run(kg.global_variables_initializer())
        np.testing.assert_allclose(other.run(doubled), [0.0, 0.0])
        with kg.Session() as fresh, pytest.raises(kg.errors.FailedPreconditionError):
            fresh.run(v)


def test_closed_session(graph):
    c = kg.constant(1.0)
    sess = kg.Session()
    assert sess.run(c) == 1.0
    sess.close()
    with pytest.raises(RuntimeError, match="Attempted to use a closed Session"):
        sess.run(c)


def test_node_from_another_graph(graph):
    other = kg.Graph()
    with other.as_default():
        foreign = kg.constant(1.0, name="foreign")
    with kg.Session() as sess:
        with pytest.raises(ValueError, match="is not an element of this graph") as info:
            sess.run(foreign)
        assert "foreign" in str(info.value)
        with pytest.raises(ValueError, match="is not an element of this graph"):
            sess.run(kg.constant(2.0), {foreign: 1.0})


def test_node_from_another_graph_points_at_its_line(graph):
    other = kg.Graph()
    with other.as_default():
        line, foreign = here(), kg.constant(1.0, name="foreign")
    with kg.Session() as sess, pytest.raises(ValueError) as info:
        sess.run(foreign)
    assert_points_at(str(info.value), line)


def test_mixing_graphs_in_one_op_fails_at_creation(graph):
    mine = kg.constant(1.0)
    other = kg.Graph()
    with other.as_default():
        foreign = kg.constant(2.0)
    with pytest.raises(ValueError, match="must be from the same graph") as info:
        line = here() + 1
        mine + foreign
    assert_points_at(str(info.value), line)


def test_runtime_failure_names_node_shapes_and_line(graph):
    a = kg.placeholder(kg.float32, shape=[None, None], name="a")
    b = kg.placeholder(kg.float32, shape=[None, None], name="b")
    line, c = here(), kg.matmul(a, b, name="product")
    d = kg.relu(c)
    with kg.Session() as sess:
        with pytest.raises(kg.errors.InvalidArgumentError) as info:
            sess.run(d, {a: np.ones((2, 3)), b: np.ones((4, 5))})
        msg = str(info.value)
        assert "'product'" in msg
        assert "(2, 3)" in msg and "(4, 5)" in msg
        assert_points_at(msg, line)
        assert info.value.node is c
        # the same plan still works with compatible shapes
        got = sess.run(d, {a: np.ones((2, 3)), b: np.ones((3, 1))})
        np.testing.assert_allclose(got, [[3.0], [3.0]])


def test_attributes_by_position_are_attributes(graph):
    x = kg.placeholder(kg.float32, shape=[None, 3])
    s = kg.reduce_sum(x, 1)
    r = kg.reshape(x, (-1,))
    t = kg.transpose(x, (1, 0))
    assert (s.shape, r.shape, t.shape) == ((None,), (None,), (3, None))
    assert [i.name for i in s.inputs] == [x.name]  # the axis is not a tensor input
    (gx,) = kg.gradients(s, [x])
    with kg.Session() as sess:
        value = np.arange(6, dtype=np.float32).reshape(2, 3)
        got = sess.run([s, r, t, gx], {x: value})
    np.testing.assert_allclose(got[0], [3.0, 12.0])
    np.testing.assert_allclose(got[1], np.arange(6))
    np.testing.assert_allclose(got[2], value.T)
    np.testing.assert_allclose(got[3], np.ones((2, 3)))
    with pytest.raises(TypeError, match="multiple values for argument 'axis'"):
        kg.reduce_sum(x, 1, axis=0)


def test_non_finite_attributes_run_in_plans():
    # A plan line writes attributes as literals; inf and nan have none.
    g = kg.Graph()
    with g.as_default():
        p = kg.placeholder(kg.float32, shape=(2,))
        y = kg.pad(p, ((1, 1),), value=float("-inf"))
        z = kg.clip(p, min=float("-inf"), max=float("inf"))
    with kg.Session(g) as sess:
        got, clipped = sess.run([y, z], {p: np.array([1.0, 2.0], np.float32)})
    np.testing.assert_array_equal(got, [-np.inf, 1.0, 2.0, -np.inf])
    np.testing.assert_array_equal(clipped, [1.0, 2.0])
