"""kg.cond and kg.while_loop: both modes, gradients (NumPy and finite differences), nesting,
captured variables, maximum_iterations, shape invariants, error messages, the compiler
passes and the graph views."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernelgraph as kg
import kernelgraph.compat.v1 as tf
from kernelgraph.errors import InvalidArgumentError, ShapeError
from tests.test_ops import numeric_grad

HERE = "test_control_flow.py"



def run(fetches, feed=None, graph=None):
    with kg.Session(graph or kg.get_default_graph()) as sess:
        sess.run(kg.global_variables_initializer())
        return sess.run(fetches, feed)


@pytest.fixture
def graph():
    g = kg.Graph()
    with g.as_default():
        yield g


# -- cond ---------------------------------------------------------------------------------------
def test_cond_picks_the_branch_and_only_runs_that_one(graph):
    x = kg.placeholder(kg.float32, shape=[2], name="x")
    # The true branch would fail at run time (index 5 of 2 values): only the false one runs.
    y = kg.cond(kg.reduce_sum(x) > 0, lambda: kg.gather(x, kg.constant([5, 0])),
                lambda: x * 3.0)
    with kg.Session(graph) as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [-1.0, -2.0]}), [-3.0, -6.0])
        with pytest.raises(InvalidArgumentError, match="gather"):
            sess.run(y, {x: [1.0, 2.0]})


def test_cond_gradients_match_numpy_and_finite_differences(graph):
    x = kg.placeholder(kg.float64, shape=[3], name="x")
    w = kg.Variable(np.array([0.5, -1.0, 2.0]), name="w")
    v = kg.Variable(np.array([1.5, 0.25, -0.5]), name="v")  # read only by the false branch
    y = kg.cond(kg.reduce_sum(x) > 0, lambda: kg.reduce_sum(kg.tanh(x * w)),
                lambda: kg.reduce_sum(x * x * v))
    gx, gw, gv = kg.gradients(y, [x, w, v])

    w0, v0 = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.5])

    def f(xv, wv=w0, vv=v0):
        return np.tanh(xv * wv).sum() if xv.sum() > 0 else (xv * xv * vv).sum()

    for xv in (np.array([0.3, 0.2, 0.4]), np.array([-0.3, 0.2, -0.4])):
        out = run([y, gx, gw, gv], {x: xv})
        assert out[0] == pytest.approx(f(xv))
        np.testing.assert_allclose(out[1], numeric_grad(f, xv), rtol=1e-6)
        np.testing.assert_allclose(out[2], numeric_grad(lambda w_, xv=xv: f(xv, w_), w0),
                                   rtol=1e-6, atol=1e-10)
        np.testing.assert_allclose(out[3], numeric_grad(lambda v_, xv=xv: f(xv, vv=v_), v0),
                                   atol=1e-8)
    # The branch not taken contributes zeros (not None): w's gradient when x sums < 0.
    assert np.all(run(gw, {x: [-1.0, 0.0, 0.0]}) == 0)


def test_cond_with_several_outputs_keeps_the_structure(graph):
    x = kg.placeholder(kg.float32, shape=[], name="x")
    out = kg.cond(x > 0, lambda: {"a": x + 1.0, "b": (x * 2.0, 7.0)},
                  lambda: {"a": x - 1.0, "b": (x * 3.0, 8.0)})
    assert set(out) == {"a", "b"} and isinstance(out["b"], tuple)
    values = run(out, {x: -2.0})
    assert values["a"] == -3.0 and values["b"][0] == -6.0 and values["b"][1] == 8.0
    # A gradient through only one of the outputs.
    (gx,) = kg.gradients(out["b"][0], [x])
    assert run(gx, {x: 2.0}) == 2.0 and run(gx, {x: -2.0}) == 3.0


def test_cond_python_bool_just_calls_the_branch(graph):
    x = kg.placeholder(kg.float32)
    before = len(graph.nodes)
    y = kg.cond(True, lambda: x + 1.0, lambda: x - 1.0)
    assert y.op.name == "add" and len(graph.nodes) == before + 2  # a const and the add
    assert kg.cond(np.bool_(False), lambda: 1, lambda: 2) == 2


def test_cond_second_derivative(graph):
    x = kg.placeholder(kg.float64, shape=[], name="x")
    y = kg.cond(x > 0, lambda: x * x * x, lambda: -x)
    (dy,) = kg.gradients(y, [x])
    (d2y,) = kg.gradients(dy, [x])
    assert run([dy, d2y], {x: 2.0}) == [12.0, 12.0]  # 3x^2, 6x
    assert run([dy, d2y], {x: -2.0}) == [-1.0, 0.0]


def test_cond_inputs_reach_through_nested_branches(graph):
    x = kg.placeholder(kg.float64, shape=[], name="x")
    w = kg.Variable(3.0, dtype=kg.float64, name="w")
    y = kg.cond(x > 0, lambda: kg.cond(x > 1, lambda: x * w, lambda: x + w), lambda: w * w)
    (gx, gw) = kg.gradients(y, [x, w])
    assert run([y, gx, gw], {x: 2.0}) == [6.0, 3.0, 2.0]
    assert run([y, gx, gw], {x: 0.5}) == [3.5, 1.0, 1.0]
    assert run([y, gx, gw], {x: -1.0}) == [9.0, 0.0, 6.0]


def test_cond_errors_name_the_problem_and_the_line(graph):
    x = kg.placeholder(kg.float32, shape=[None], name="x")
    y = kg.placeholder(kg.float32, shape=[2], name="y")
    s = kg.reduce_sum(x) > 0
    cases = [
        (TypeError, "pred must be a bool scalar", lambda: kg.cond(x, lambda: x, lambda: x)),
        (ValueError, r"must be a scalar \(shape \(\)\)", lambda: kg.cond(x > 0, lambda: x,
                                                                          lambda: x)),
        (ValueError, "same structure", lambda: kg.cond(s, lambda: x, lambda: [x, x])),
        (TypeError, "float32 in true_fn but float64", lambda: kg.cond(
            s, lambda: x, lambda: kg.cast(x, kg.float64))),
        (ShapeError, r"\(2,\) in true_fn but \(4,\)", lambda: kg.cond(
            s, lambda: y, lambda: kg.concat([y, y], 0))),
        (TypeError, "returned None", lambda: kg.cond(s, lambda: None, lambda: None)),
        (TypeError, "needs two functions", lambda: kg.cond(s, x, x)),
    ]
    for kind, text, make in cases:
        with pytest.raises(kind, match=text) as info:
            make()
        assert HERE in str(info.value) or "needs two functions" in str(info.value)


def test_cond_shapes_may_differ_in_unknown_dims(graph):
    x = kg.placeholder(kg.float32, shape=[None], name="x")
    y = kg.placeholder(kg.float32, shape=[3], name="y")
    z = kg.cond(kg.reduce_sum(x) > 0, lambda: x, lambda: y)
    assert z.shape == (None,)
    np.testing.assert_array_equal(run(z, {x: [1.0], y: [1.0, 2.0, 3.0]}), [1.0])
    np.testing.assert_array_equal(run(z, {x: [-1.0], y: [1.0, 2.0, 3.0]}), [1.0, 2.0, 3.0])


def test_cond_run_time_error_names_the_inner_node_and_line(graph):
    x = kg.placeholder(kg.float32, shape=[None], name="x")
    z = kg.cond(kg.reduce_sum(x) > 0, lambda: kg.gather(x, kg.constant([5])), lambda: x)
    with pytest.raises(InvalidArgumentError) as info:
        run(z, {x: [1.0, 2.0]})
    text = str(info.value)
    assert "node 'gather'" in text and HERE in text and "true_fn of kg.cond 'cond'" in text
    assert info.value.node.op.name == "gather"


def test_eager_cond_runs_python_and_records_for_backward():
    x = kg.tensor([1.0, -2.0], requires_grad=True)
    y = kg.cond(x.sum() > 0, lambda: (x * x).sum(), lambda: (x * 3.0).sum())
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    with pytest.raises(TypeError, match="must be a bool tensor"):
        kg.cond(x.sum(), lambda: x, lambda: x)
    with pytest.raises(ValueError, match="must be a scalar"):
        kg.cond(x > 0, lambda: x, lambda: x)


# -- while_loop ---------------------------------------------------------------------------------
def test_while_loop_runs_as_many_iterations_as_the_data_asks(graph):
    n = kg.placeholder(kg.int64, shape=[], name="n")
    i, total = kg.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i * i), [0, 0])
    with kg.Session(graph) as sess:
        for k in (0, 1, 5, 12):
            assert sess.run([i, total], {n: k}) == [k, sum(j * j for j in range(k))]


def test_while_loop_gradients_wrt_initial_values_and_captured_weights(graph):
    rng = np.random.default_rng(0)
    w0, x0, h0 = (rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3),
                  rng.standard_normal(3))
    x = kg.placeholder(kg.float64, shape=[3], name="x")
    h = kg.placeholder(kg.float64, shape=[3], name="h")
    w = kg.Variable(w0, name="w")
    n = kg.placeholder(kg.int64, shape=[], name="n")
    _, hn = kg.while_loop(lambda i, h: i < n,
                          lambda i, h: (i + 1, kg.tanh(kg.matmul(w, h[:, None])[:, 0] + x)),
                          [0, h])
    loss = kg.reduce_sum(hn * hn)
    grads = kg.gradients(loss, [x, h, w])

    def f(xv=x0, hv=h0, wv=w0, steps=4):
        for _ in range(steps):
            hv = np.tanh(wv @ hv + xv)
        return (hv * hv).sum()

    out = run([loss] + grads, {x: x0, h: h0, n: 4})
    assert out[0] == pytest.approx(f())
    np.testing.assert_allclose(out[1], numeric_grad(lambda v: f(xv=v), x0), rtol=1e-5)
    np.testing.assert_allclose(out[2], numeric_grad(lambda v: f(hv=v), h0), rtol=1e-5)
    np.testing.assert_allclose(out[3], numeric_grad(lambda v: f(wv=v), w0), rtol=1e-5,
                               atol=1e-9)
    # No iteration: the loop is the identity on h, and x and w get zero gradients.
    out = run(grads, {x: x0, h: h0, n: 0})
    np.testing.assert_allclose(out[1], 2 * h0)
    assert not out[0].any() and not out[2].any()


@pytest.mark.parametrize("steps", [0, 1, 5])
def test_while_gradient_sums_a_weights_and_a_biass_gradient_once_over_all_rows(graph, steps):
    """A captured weight's gradient (sum over iterations of h_t^T g_t) runs as one product
    over every iteration's rows after the loop, and a bias's as one column sum (both as
    sum_to_like gives it and as a cell's reduce_sum does); a capture whose gradient sums no
    rows (``c``, one value per element of h) adds up iteration by iteration. All match finite
    differences, for 0, 1 and 5 iterations."""
    rng = np.random.default_rng(1)
    w0, b0 = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3)
    s0, h0 = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    h = kg.placeholder(kg.float64, shape=[None, 3], name="h")
    w, b, s = (kg.Variable(v, name=k) for v, k in ((w0, "w"), (b0, "b"), (s0, "c")))
    n = kg.placeholder(kg.int64, shape=[], name="n")
    _, hn = kg.while_loop(lambda i, h: i < n,
                          lambda i, h: (i + 1, kg.tanh(kg.matmul(h, w) + b) * s), [0, h])
    loss = kg.reduce_sum(hn * hn)
    grads = kg.gradients(loss, [w, b, s, h])
    spec = next(m for m in graph.nodes if m.op.name == "while_grad").attrs["spec"]
    assert [None if m is None else m.op.name for m, _ in spec.summed] == \
        ["matmul", "sum_to_like", None]

    def f(wv=w0, bv=b0, sv=s0, hv=h0):
        for _ in range(steps):
            hv = np.tanh(hv @ wv + bv) * sv
        return (hv * hv).sum()

    out = run(grads, {h: h0, n: steps})
    for got, k, v in zip(out, ("wv", "bv", "sv", "hv"), (w0, b0, s0, h0)):
        np.testing.assert_allclose(got, numeric_grad(lambda x, k=k: f(**{k: x}), v),
                                   rtol=1e-5, atol=1e-9)


def test_a_capture_over_rows_of_changing_width_adds_up_per_iteration(graph):
    """A row sum over values whose width changes between iterations (a state that grows by a
    column each time) cannot join their rows: that capture's gradient adds up iteration by
    iteration, and is right."""
    h = kg.placeholder(kg.float64, shape=[2, 1], name="h")
    b = kg.Variable(np.array([0.5]), name="b")
    _, hn = kg.while_loop(lambda i, h: i < 3,
                          lambda i, h: (i + 1, kg.concat(
                              [h, kg.reduce_sum(kg.tanh(h + b), axis=1, keepdims=True)], axis=1)),
                          [0, h], shape_invariants=[[], [2, None]])
    (db,) = kg.gradients(kg.reduce_sum(hn * hn), [b])
    spec = next(m for m in graph.nodes if m.op.name == "while_grad").attrs["spec"]
    assert [m for m, _ in spec.summed] == [None]
    h0 = np.array([[0.3], [-0.2]])

    def f(bv):
        hv = h0
        for _ in range(3):
            hv = np.concatenate([hv, np.tanh(hv + bv).sum(axis=1, keepdims=True)], axis=1)
        return (hv * hv).sum()

    np.testing.assert_allclose(run(db, {h: h0}), numeric_grad(f, np.array([0.5])), rtol=1e-6)


def test_static_rnn_cell_weight_gradients_are_summed_once(graph):
    """The RNN cell's own gradient (reduce_sum for the biases) is summed once too: the
    static dynamic_rnn's gradients equal eager's (which sums them in one product at the end,
    ops/products.py) to float tolerance."""
    class LoopCell(kg.nn.RNNCell):  # (a plain RNNCell is one rnn_tanh_sequence node)
        pass

    kg.random.seed(0)
    cell = LoopCell(4, 5)
    rng = np.random.default_rng(2)
    xs, lengths = rng.standard_normal((3, 6, 4)).astype(np.float32), [6, 2, 4]
    inputs = kg.placeholder(kg.float32, shape=(None, None, 4))
    lens = kg.placeholder(kg.int64, shape=(None,))
    _, h = kg.nn.dynamic_rnn(cell, inputs, sequence_length=lens)
    params = cell.variables(graph)
    grads = kg.gradients(kg.reduce_sum(h * h), params)
    spec = next(m for m in graph.nodes if m.op.name == "while_grad").attrs["spec"]
    assert [None if m is None else m.op.name for m, _ in spec.summed] == \
        ["matmul", "matmul", "sum", "sum"]
    static = run(grads, {inputs: xs, lens: lengths})
    eager_h = kg.nn.dynamic_rnn(cell, kg.tensor(xs), sequence_length=lengths)[1]
    (eager_h * eager_h).sum().backward()
    for got, p in zip(static, cell.parameters()):
        np.testing.assert_allclose(got, p.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_while_gradient_uses_the_activations_the_forward_made(graph):
    # The gradient replays the body backwards on what each forward iteration kept (TF's
    # stacks), so a random draw in the body is the same draw in its gradient: d(x*m1*m2*m3)/dx
    # is m1*m2*m3, which is the result over x.
    x = kg.placeholder(kg.float64, shape=[50], name="x")
    _, y = kg.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, kg.dropout(y, p=0.5)),
                         [0, x])
    (dx,) = kg.gradients(kg.reduce_sum(y), [x])
    x0 = np.linspace(1.0, 2.0, 50)
    value, slope = run([y, dx], {x: x0})
    assert 0 < np.count_nonzero(value) < 50
    np.testing.assert_allclose(slope, value / x0, rtol=1e-12)


def test_cond_gradient_repeats_the_draws_of_the_branch_it_recomputes(graph):
    # The gradient of a cond computes its branch again; a dropout inside must give the
    # mask the forward run drew (TF1's `tf.cond(training, dropout, identity)` pattern).
    x = kg.placeholder(kg.float64, shape=[50], name="x")
    training = kg.placeholder(kg.bool_, shape=[], name="training")
    y = kg.cond(training, lambda: kg.dropout(x, p=0.5) * x, lambda: x * x)
    (dx,) = kg.gradients(kg.reduce_sum(y), [x])
    x0 = np.linspace(1.0, 2.0, 50)
    with kg.Session(graph) as sess:
        masks = []
        for _ in range(2):  # each run draws a new mask, and its gradient uses that one
            value, slope = sess.run([y, dx], {x: x0, training: True})
            mask = value / (x0 * x0)
            assert 0 < np.count_nonzero(mask) < 50
            np.testing.assert_allclose(slope, 2 * mask * x0, rtol=1e-12)
            masks.append(mask)
        assert not np.array_equal(*masks)
        # Only the gradient fetched: the forward cond still runs first, so there is a draw.
        (g,) = sess.run([dx], {x: x0, training: True})
        assert set(np.unique(g / (2 * x0)).round(12)) <= {0.0, 2.0}
        value, slope = sess.run([y, dx], {x: x0, training: False})
        np.testing.assert_allclose(slope, 2 * x0)


def _tanh_loop(graph, steps):
    """(x, w, h, session): ``h = tanh(h @ w)`` ``steps`` times from a fed ``x``."""
    x = kg.placeholder(kg.float64, shape=[None, 3], name="x")
    w = kg.Variable(np.eye(3) * 0.5, name="w")
    _, h = kg.while_loop(lambda i, h: i < steps,
                         lambda i, h: (i + 1, kg.tanh(kg.matmul(h, w))), [0, x])
    sess = kg.Session(graph)
    sess.run(kg.global_variables_initializer())
    return x, w, h, sess


def test_while_gradient_does_not_run_the_body_forward_again(graph):
    x, w, h, sess = _tanh_loop(graph, 4)
    before = sess.run(h, {x: np.ones((2, 3))})  # the body compiled before any gradient
    grads = kg.gradients(kg.reduce_sum(h), [x, w])  # makes the body keep its tanh
    out = sess.run(grads, {x: np.ones((2, 3))})
    np.testing.assert_array_equal(sess.run(h, {x: np.ones((2, 3))}), before)
    while_grad = next(n for n in graph.nodes if n.op.name == "while_grad")
    sub = while_grad.attrs["spec"].sub
    (plan,) = sub._family.plans.values()
    fed = {id(n) for n in plan.feed_nodes}
    computed = [n.op.name for n in plan.order if id(n) not in fed]
    assert "matmul" in computed and "tanh" not in computed, computed  # tanh: fed, kept
    hv, dw = np.ones((2, 3)), np.zeros((3, 3))
    hs = [hv]
    for _ in range(4):
        hs.append(np.tanh(hs[-1] @ (np.eye(3) * 0.5)))
    g = np.ones((2, 3))
    for t in range(4, 0, -1):
        da = g * (1 - hs[t] ** 2)
        dw += hs[t - 1].T @ da
        g = da @ (np.eye(3) * 0.5).T
    np.testing.assert_allclose(out[0], g)
    np.testing.assert_allclose(out[1], dw)


def test_a_loop_checks_a_value_every_iteration_gets_once_per_run(graph):
    # The body's feeds are checked and converted per iteration, except a value each
    # iteration gets as the very same object (a captured weight): that one once per run.
    x, _, h, sess = _tanh_loop(graph, 5)
    first = sess.run(h, {x: np.ones((2, 3))})
    body = next(n for n in graph.nodes if n.op.name == "while_loop").attrs["spec"].body
    calls = []
    family = body._family
    family.converters = [lambda v, c=c, k=k: (calls.append(k), c(v))[1]
                         for k, c in enumerate(family.converters)]
    again = sess.run(h, {x: np.ones((2, 3))})
    np.testing.assert_array_equal(again, first)
    per_input = sorted(calls.count(k) for k in range(len(body.inputs)))  # i, h and w
    assert per_input == [1, 5, 5], per_input  # w once; i and h, new every iteration, 5 times


@given(st.floats(0.5, 1.5), st.integers(0, 6))
def test_while_power_and_its_derivative(base, steps):
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float64, shape=[], name="x")
        _, y = kg.while_loop(lambda i, y: i < steps, lambda i, y: (i + 1, y * x),
                             [0, kg.constant(1.0, dtype=kg.float64)])
        (dy,) = kg.gradients(y, [x])
        value, slope = run([y, dy], {x: base})
    assert value == pytest.approx(base ** steps)
    assert slope == pytest.approx(steps * base ** (steps - 1) if steps else 0.0)


def test_nested_cond_in_while_matches_finite_differences(graph):
    x = kg.placeholder(kg.float64, shape=[2], name="x")
    w = kg.Variable(np.array([[0.9, -0.3], [0.4, 0.7]]), name="w")

    def body(i, h):
        h2 = kg.tanh(kg.matmul(w, h[:, None])[:, 0] + x)
        return i + 1, kg.cond(kg.reduce_sum(h2) > 0, lambda: h2 * 2.0, lambda: h2 - 1.0)

    _, h = kg.while_loop(lambda i, h: i < 5, body, [0, x])
    loss = kg.reduce_sum(h * h)
    gx, gw = kg.gradients(loss, [x, w])

    w0 = np.array([[0.9, -0.3], [0.4, 0.7]])

    def f(xv, wv=w0):
        hv = xv
        for _ in range(5):
            h2 = np.tanh(wv @ hv + xv)
            hv = h2 * 2 if h2.sum() > 0 else h2 - 1
        return (hv * hv).sum()

    xv = np.array([0.3, -0.1])
    out = run([loss, gx, gw], {x: xv})
    assert out[0] == pytest.approx(f(xv))
    np.testing.assert_allclose(out[1], numeric_grad(f, xv), rtol=1e-5)
    np.testing.assert_allclose(out[2], numeric_grad(lambda v: f(xv, v), w0), rtol=1e-5)


def test_while_inside_while(graph):
    x = kg.placeholder(kg.float64, shape=[], name="x")

    def outer(i, y):
        _, inner = kg.while_loop(lambda j, z: j < i, lambda j, z: (j + 1, z * x),
                                 [kg.constant(0, dtype=kg.int64), y])
        return i + 1, inner + 1.0

    _, y = kg.while_loop(lambda i, y: i < 3, outer, [kg.constant(0, dtype=kg.int64),
                                                       kg.constant(1.0, dtype=kg.float64)])
    (dy,) = kg.gradients(y, [x])

    def f(xv):
        yv = 1.0
        for i in range(3):
            yv = yv * xv ** i + 1.0
        return yv

    value, slope = run([y, dy], {x: 1.5})
    assert value == pytest.approx(f(1.5))
    assert slope == pytest.approx(numeric_grad(f, 1.5), rel=1e-6)


def test_captured_variables_train_through_a_loop(graph):
    # Fit w so that applying h <- h * w three times maps 1 to 8 (w = 2).
    w = kg.Variable(1.0, dtype=kg.float64, name="w")
    _, h = kg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, h * w),
                         [0, kg.constant(1.0, dtype=kg.float64)])
    loss = kg.square(h - 8.0)
    (gw,) = kg.gradients(loss, [w])
    train = w.assign_sub(0.003 * gw)
    with kg.Session(graph) as sess:
        sess.run(kg.global_variables_initializer())
        losses = [sess.run([loss, train])[0] for _ in range(60)]
        assert losses[-1] < 1e-3 * losses[0]
        assert sess.run(w) == pytest.approx(2.0, abs=1e-2)


def test_maximum_iterations_stops_the_loop(graph):
    limit = kg.placeholder(kg.int64, shape=[], name="limit")
    forever = kg.while_loop(lambda i: i >= 0, lambda i: i + 1, [kg.constant(0)],
                            maximum_iterations=4)
    fed = kg.while_loop(lambda i: i >= 0, lambda i: i + 1, [kg.constant(0)],
                        maximum_iterations=limit)
    with kg.Session(graph) as sess:
        assert sess.run(forever) == [4]
        assert sess.run(fed, {limit: 7}) == [7]
        with pytest.raises(InvalidArgumentError, match="maximum_iterations must be a non-neg"):
            sess.run(fed, {limit: -1})
    assert kg.while_loop(lambda i: True, lambda i: i + 1, [0], maximum_iterations=3) == [3]
    with pytest.raises(ValueError, match="maximum_iterations must be >= 0"):
        kg.while_loop(lambda i: True, lambda i: i + 1, [0], maximum_iterations=-1)


def test_shape_invariants(graph):
    y = kg.placeholder(kg.float32, shape=[2], name="y")

    def cond(v):
        return kg.reduce_sum(v) < 10.0

    def body(v):
        return kg.concat([v, v], 0)

    with pytest.raises(ValueError, match=r"enters the loop with shape \(2,\) but the body "
                                         r"returns shape \(4,\); declare") as info:
        kg.while_loop(cond, body, [y])
    assert HERE in str(info.value)
    (grown,) = kg.while_loop(cond, body, [y], shape_invariants=[[None]])
    assert grown.shape == (None,)
    np.testing.assert_array_equal(run(grown, {y: [1.0, 2.0]}), [1, 2] * 4)
    # A dim declared fixed but only known at run time is checked at run time.
    picks = kg.placeholder(kg.int64, shape=[None], name="picks")
    (bad,) = kg.while_loop(cond, lambda v: kg.gather(v, picks) + 1.0, [y])
    np.testing.assert_array_equal(run(bad, {y: [1.0, 2.0], picks: [1, 0]}), [5, 6])
    with pytest.raises(InvalidArgumentError, match=r"shape \(3,\) after iteration 0, but its "
                                                   r"shape invariant is \(2,\)"):
        run(bad, {y: [1.0, 2.0], picks: [0, 1, 0]})
    with pytest.raises(ValueError, match="does not fit its shape invariant"):
        kg.while_loop(cond, body, [y], shape_invariants=[[3]])
    with pytest.raises(ValueError, match="must have the structure of loop_vars"):
        kg.while_loop(cond, body, [y], shape_invariants=[None, 2])
    # A single tensor, and a dict, as loop variables.
    bare = kg.while_loop(cond, body, y, shape_invariants=[None])
    named = kg.while_loop(lambda d: cond(d["v"]), lambda d: {"v": body(d["v"])}, {"v": y},
                          shape_invariants={"v": [None]})
    got = run([bare, named], {y: [1.0, 2.0]})
    np.testing.assert_array_equal(got[0], [1, 2] * 4)
    np.testing.assert_array_equal(got[1]["v"], [1, 2] * 4)


def test_while_errors_name_the_problem_and_the_line(graph):
    i0 = kg.constant(0)
    cases = [
        (TypeError, r"enters the loop as int64 but the body returns float32",
         lambda: kg.while_loop(lambda i: i < 3, lambda i: kg.cast(i, kg.float32), [i0])),
        (TypeError, "cond must return a bool scalar",
         lambda: kg.while_loop(lambda i: i, lambda i: i + 1, [i0])),
        (ValueError, r"structure of loop_vars \(2 value\(s\)\), got 1",
         lambda: kg.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1,), [i0, 1])),
        (ValueError, "Variable 'inside' was created inside the body",
         lambda: kg.while_loop(lambda i: i < 3, lambda i: i + kg.Variable(1, name="inside"),
                               [i0])),
    ]
    for kind, text, make in cases:
        with pytest.raises(kind, match=text) as info:
            make()
        assert HERE in str(info.value)


def test_while_run_time_error_names_the_node_line_and_iteration(graph):
    table = kg.constant(np.arange(4.0, dtype=np.float32), name="table")
    n = kg.placeholder(kg.int64, shape=[], name="n")
    _, s = kg.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + kg.gather(table, i)),
                         [0, 0.0], name="sum_loop")
    with kg.Session(graph) as sess:
        assert sess.run(s, {n: 4}) == 6.0
        with pytest.raises(InvalidArgumentError) as info:
            sess.run(s, {n: 6})
    text = str(info.value)
    assert "node 'gather'" in text and "iteration 4" in text and "'sum_loop'" in text
    assert text.count(HERE) == 2  # the gather's line and the while_loop's line


def test_zero_iterations_hand_out_copies(graph):
    v = kg.Variable(np.ones(3), name="v")
    (out,) = kg.while_loop(lambda x: kg.reduce_sum(x) < 0, lambda x: x * 2.0, [v])
    with kg.Session(graph) as sess:
        sess.run(kg.global_variables_initializer())
        got = sess.run(out)
        got[:] = 7.0
        np.testing.assert_array_equal(sess.run(v), np.ones(3))


def test_back_prop_false_gives_no_gradient(graph):
    x = kg.placeholder(kg.float64, shape=[], name="x")
    _, y = kg.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, y * x), [0, x],
                         back_prop=False)
    assert kg.gradients(y, [x]) == [None]


def test_plain_numbers_become_a_static_loop_when_the_body_builds_nodes(graph):
    n = kg.placeholder(kg.int64, shape=[], name="n")
    i = kg.while_loop(lambda i: i < n, lambda i: i + 2, [0])
    assert isinstance(i[0], kg.Node) and run(i, {n: 5}) == [6]


def test_eager_while_loop_is_a_python_loop_with_backward():
    x = kg.tensor(1.5, requires_grad=True)
    i, y = kg.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), [0, kg.tensor(1.0)])
    assert i == 3 and y.item() == pytest.approx(1.5 ** 3)
    y.backward()
    assert x.grad.item() == pytest.approx(3 * 1.5 ** 2)
    assert kg.while_loop(lambda v: v.sum() < 100, lambda v: v * 2.0, kg.ones(2)).tolist() == \
        [64.0, 64.0]
    with pytest.raises(ValueError, match="structure of loop_vars"):
        kg.while_loop(lambda i, y: i < 3, lambda i, y: i + 1, [0, kg.tensor(1.0)])
    with pytest.raises(TypeError, match="keeps its dtype"):
        kg.while_loop(lambda y: y.sum() < 3, lambda y: kg.cast(y, kg.float64) + 1,
                      [kg.tensor(1.0)])


def test_eager_and_static_loops_agree():
    w0 = np.array([[0.5, -0.2], [0.1, 0.8]], np.float32)
    x0 = np.array([[0.3, -0.7]], np.float32)

    def body(i, h, w):
        return i + 1, kg.tanh(kg.matmul(h, w) + 1.0)

    w = kg.tensor(w0, requires_grad=True)
    _, he = kg.while_loop(lambda i, h: i < 4, lambda i, h: body(i, h, w), [0, kg.tensor(x0)])
    he.sum().backward()
    with kg.Graph().as_default():
        ws = kg.Variable(w0, name="w")
        _, hs = kg.while_loop(lambda i, h: i < 4, lambda i, h: body(i, h, ws),
                              [0, kg.constant(x0)])
        (gs,) = kg.gradients(kg.reduce_sum(hs), [ws])
        static_h, static_g = run([hs, gs])
    np.testing.assert_allclose(static_h, he.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(static_g, w.grad.numpy(), rtol=1e-5)


@pytest.mark.skipif(not kg.cuda.is_available(), reason="needs CUDA or its simulator")
def test_control_flow_around_nodes_placed_on_cuda(graph):
    # The cond / while nodes run on the host; the ops inside them follow the device scope.
    with kg.device("cuda"):
        x = kg.placeholder(kg.float32, shape=[3], name="x")
        y = kg.cond(kg.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0)
        _, z = kg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, h * x), [0, y])
        (gx,) = kg.gradients(kg.reduce_sum(z), [x])
    xv = np.array([1.0, 2.0, -4.0], np.float32)
    got = run([z, gx], {x: xv})
    np.testing.assert_allclose(got[0], (xv - 1) * xv ** 3, rtol=1e-6)
    np.testing.assert_allclose(got[1], 4 * xv ** 3 - 3 * xv ** 2, rtol=1e-6)


# -- the compiler and the views -----------------------------------------------------------------
def test_passes_keep_control_flow_nodes(graph):
    # Every input of this cond is a constant: folding must not turn its tuple into an array.
    a = kg.constant(2.0)
    y = kg.cond(a > 1.0, lambda: a * 3.0, lambda: a)
    (z,) = kg.while_loop(lambda v: v < 100.0, lambda v: v * a, [y])
    with kg.Session(graph) as sess:
        assert sess.run([y, z]) == [6.0, 192.0]
        kept = [n.op.name for n in sess.plan([y, z]).order]
        assert "cond" in kept and "while_loop" in kept
    with kg.Session(graph, optimize=False) as sess:
        assert sess.run([y, z]) == [6.0, 192.0]


def test_graph_views_draw_control_flow_nodes(graph, capsys):
    x = kg.placeholder(kg.float32, shape=[2], name="x")
    w = kg.Variable(np.ones(2, np.float32), name="w")
    y = kg.cond(kg.reduce_sum(x) > 0, lambda: x * w, lambda: x - w)
    _, h = kg.while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, h * w), [0, y])
    loss = kg.reduce_sum(h)
    grads = kg.gradients(loss, [x, w])
    from kernelgraph.widgets.display import bundle_of

    for doc in (kg.widgets.document_of(graph), kg.widgets.document_of([loss, grads])):
        bundle = bundle_of(doc)
        assert bundle["image/svg+xml"].startswith("<svg")
    with kg.Session(graph) as sess:
        sess.run(kg.global_variables_initializer())
        doc = kg.widgets.run_document(sess, [loss, grads], {x: [1.0, 2.0]})
    kg.show(graph)  # outside IPython: the text form
    assert "static graph (24 nodes)" in capsys.readouterr().out
    values = {n["name"]: n["value"] for n in doc["nodes"]}
    assert values["while"].startswith("<2 values: int64 (), float32 (2,)>")
    assert values["cond"] == "<1 values: float32 (2,)>"
    assert values["sum"] == "3"
    assert "while/output_1" in values and "gradients/while_grad" in values


# -- TF1 spellings ------------------------------------------------------------------------------
def test_compat_v1_cond_and_while_loop(graph):
    i = tf.while_loop(lambda i: tf.less(i, 10), lambda i: tf.add(i, 1), [tf.constant(0)])
    j = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [0])  # numbers become constants
    kept = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], return_same_structure=True)
    p = tf.placeholder(tf.float32, [])
    c = tf.cond(p > 0, lambda: [p * 2.0], lambda: [p * 3.0])  # a 1-list is unpacked
    strict = tf.cond(p > 0, lambda: [p * 2.0], lambda: [p * 3.0], strict=True)
    assert isinstance(i, tf.Tensor) and isinstance(kept, list) and isinstance(strict, list)
    assert run([i, j, kept, c, strict], {p: -1.0}) == [10, 10, [3], -3.0, [-3.0]]
