"""Record how TF1 answers the cases TF1's own tests check: its ``Session`` as
``session_test.py`` sees it (fetching and feeding by name, errors and their ``op``, closed and
empty sessions, threads, partial runs), ``tf.gradients`` as ``gradients_test.py`` does
(grad_ys, stop_gradients, unconnected and integer xs, hessians) and ``tf.while_loop`` as the
control-flow tests do (structures, shape invariants, gradients, nesting with cond), into
``tf_own_tests.json`` (read by tests/test_tf_own_tests.py).

Run with an environment that has tensorflow-cpu (see README.md here)::

    python tests/recorded/record_tf_own_tests.py

Each case is a function of the ``tf`` module (TF 2's ``compat.v1`` in graph mode here,
``kernelgraph.compat.v1`` in the test), run in a fresh graph; it is recorded as ``["ok",
value]`` or ``[error type name, message]``. The cases are kernelgraph's own, in the manner of
those tests.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def fetch_a_name_that_does_not_exist(tf):
    with tf.Session() as s:
        tf.constant(10.0, name="W1")
        return s.run("foo:0")


@case
def fetch_an_op_name_runs_it_and_answers_none(tf):
    with tf.Session() as s:
        a = tf.constant(1.0, name="a")
        return s.run("a"), float(s.run(b"a:0")), float(s.run([a, "a:0"])[1])


@case
def fetch_a_second_output_that_does_not_exist(tf):
    with tf.Session() as s:
        tf.constant(1.0, name="a")
        return s.run("a:1")


@case
def feed_an_op_name(tf):
    with tf.Session() as s:
        a = tf.constant(1.0, name="a")
        return s.run(a, feed_dict={"a": [2.0]})


@case
def feed_a_name_that_does_not_exist(tf):
    with tf.Session() as s:
        a = tf.constant(1.0, name="a")
        return s.run(a, feed_dict={"foo:0": 2.0})


@case
def feed_a_tensor_as_a_value(tf):
    with tf.Session() as s:
        p = tf.placeholder(tf.float32, name="p")
        return s.run(tf.identity(p), feed_dict={p: tf.constant(5.0)})


@case
def the_error_names_the_placeholder_op(tf):
    with tf.Session():
        a = tf.placeholder(tf.float32, name="a")
        try:
            a.eval()
        except tf.errors.OpError as e:
            return type(e).__name__, e.op is a.op, e.op.name, e.op.type


@case
def run_on_an_empty_graph(tf):
    with tf.Session() as s:
        return s.run([])


@case
def run_nothing_on_a_graph_with_nodes(tf):
    tf.constant(1.0)
    with tf.Session() as s:
        return s.run([])


@case
def use_after_close(tf):
    with tf.Session() as s:
        c = tf.constant(5.0)
        s.run(c)
    return s.run(c)


@case
def eval_without_a_default_session(tf):
    sess = tf.Session()
    c = tf.constant(5.0)
    value = float(sess.run(c))
    try:
        c.eval()
    except ValueError as e:
        return value, str(e)[: len("No default session is registered.")]


@case
def fetch_scalars_keep_their_numpy_type(tf):
    out = []
    with tf.Session() as s:
        for scalar in np.int32, np.int64, np.float32, np.float64:
            xy = s.run(tf.add(tf.constant(scalar(7), shape=[]), tf.constant(scalar(8))))
            (xy_list,) = s.run([tf.add(tf.constant(scalar(1)), tf.constant(scalar(2)))])
            out.append([type(xy).__name__, type(xy_list).__name__, xy.item()])
    return out


@case
def assign_eval_with_a_constant_fed_by_name(tf):
    with tf.Session():
        a = tf.constant(1.0, shape=[1, 2])
        b = tf.constant(2.0, shape=[1, 2], name="b")
        v = tf.Variable(a, a.dtype)
        tf.assign(v, a).eval()
        assign_b = tf.assign(v, b)
        assign_b.eval()
        first = v.eval().tolist()
        assign_b.eval(feed_dict={"b:0": [[3.0, 3.0]]})
        return first, v.eval().tolist()


@case
def feed_a_non_placeholder_by_name(tf):
    with tf.Session() as s:
        x = tf.zeros([2])
        return (
            s.run(2 * x, feed_dict={x: np.ones(2).astype(np.float32)}).tolist(),
            s.run(2 * x, feed_dict={x.name: np.ones(2).astype(np.float32)}).tolist(),
            s.run(2 * x, feed_dict={x: [1, 1]}).tolist(),
        )


@case
def threads_use_their_own_default_graph(tf):
    errors, values = [], []

    def work(i):
        try:
            with tf.Graph().as_default(), tf.Session() as s:
                ok = tf.get_default_graph() is s.graph
                v = tf.Variable(tf.constant(float(i)), name=f"var_{i}")
                v.initializer.run()
                values.append((ok, float(v.eval()) == i, v.name))
        except Exception as e:  # noqa: BLE001 - recorded
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors, sorted(values)


@case
def threads_run_one_session(tf):
    with tf.Session() as sess:
        c = tf.constant(5.0)
        start, wrong = threading.Event(), []

        def step():
            start.wait()
            if c.eval(session=sess) != 5.0:
                wrong.append(1)

        threads = [threading.Thread(target=step) for _ in range(40)]
        for t in threads:
            t.start()
        start.set()
        for t in threads:
            t.join()
        return len(wrong)


@case
def a_tensor_of_another_graph(tf):
    with tf.Graph().as_default():
        c_1 = tf.constant(1.0, name="c")
    with tf.Graph().as_default() as g_2:
        c_2 = tf.constant(2.0, name="c")
    out = [c_1.op.name, c_2.op.name]
    with tf.Session(graph=g_2) as s:
        out.append(float(s.run(c_2)))
        for fetch in (c_1, c_1.op):
            try:
                s.run(fetch)
                out.append("ran")
            except ValueError:
                out.append("ValueError")
    return out


def _abc(tf):
    a = tf.placeholder(tf.float32, shape=[])
    b = tf.placeholder(tf.float32, shape=[])
    c = tf.placeholder(tf.float32, shape=[])
    r1 = tf.add(a, b)
    return a, b, c, r1, tf.multiply(r1, c)


@case
def partial_run(tf):
    with tf.Session() as sess:
        a, b, c, r1, r2 = _abc(tf)
        out = []
        for factor in (17, 18):
            h = sess.partial_run_setup([r1, r2], [a, b, c])
            res = sess.partial_run(h, r1, feed_dict={a: 1, b: 2})
            out += [float(res), float(sess.partial_run(h, r2, feed_dict={c: res * factor}))]
        return out


@case
def partial_runs_at_once(tf):
    with tf.Session() as sess:
        a, b, c, r1, r2 = _abc(tf)
        h1 = sess.partial_run_setup([r1], [a, b, c])
        h2 = sess.partial_run_setup([r1, r2], [a, b, c])
        res = sess.partial_run(h1, r1, feed_dict={a: 1, b: 2})
        res2 = sess.partial_run(h2, r1, feed_dict={a: res * 19, b: 9})
        return float(res), float(res2), float(sess.partial_run(h2, r2, feed_dict={c: 7}))


@case
def many_partial_runs(tf):
    with tf.Session() as sess:
        a = tf.constant(2.0, tf.float32)
        inputs, outputs = [], []
        for i in range(50):
            inputs.append(tf.placeholder(tf.float32, shape=[]))
            a = tf.multiply(a, inputs[i])
            outputs.append(a)
        h = sess.partial_run_setup(outputs, inputs)
        for i in range(50):
            res = sess.partial_run(h, outputs[i], feed_dict={inputs[i]: 1.0})
        full = sess.run(outputs, {p: 1.0 for p in inputs})
        return float(res), len(full), float(full[-1])


@case
def partial_run_fetch_not_set_up(tf):
    with tf.Session() as sess:
        a, b, c, r1, r2 = _abc(tf)
        h = sess.partial_run_setup([r1], [a, b, c])
        return sess.partial_run(h, r2, feed_dict={a: 1, b: 2, c: 3})


# -- gradients, as TF1's gradients tests check them ----------------------------------------------
def _ev(tf, fetches, feed=None):
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        return _plain(s.run(fetches, feed))


@case
def gradients_basic(tf):
    x = tf.constant([[1.0, 2.0]])
    w = tf.constant([[3.0], [4.0]])
    return _ev(tf, tf.gradients(tf.matmul(x, w), [x, w]))


@case
def gradients_unused_output_split(tf):
    w = tf.constant(1.0, shape=[2, 2])
    x = tf.identity(w)
    a, b = tf.split(x, 2, 0)
    return _ev(tf, tf.gradients(a * 2.0, [w]))


@case
def gradients_grad_ys(tf):
    x = tf.constant([1.0, 2.0])
    y = x * x
    return _ev(tf, tf.gradients(y, x, grad_ys=tf.constant([10.0, 100.0])))


@case
def gradients_stop_gradients_arg(tf):
    a = tf.constant(0.0)
    b = 2 * a
    g = tf.gradients(a + b, [a, b], stop_gradients=[a, b])
    return _ev(tf, g)


@case
def gradients_unconnected_none(tf):
    x = tf.constant(1.0)
    y = tf.constant(2.0)
    return tf.gradients(y, x)


@case
def gradients_unconnected_zero(tf):
    x = tf.constant([1.0, 2.0])
    y = tf.constant(2.0)
    return _ev(tf, tf.gradients(y, x, unconnected_gradients=tf.UnconnectedGradients.ZERO))


@case
def gradients_stop_gradient_op(tf):
    x = tf.constant(3.0)
    y = tf.stop_gradient(x * x) + x
    return _ev(tf, tf.gradients(y, x))


@case
def gradients_aggregation_method(tf):
    x = tf.constant(3.0)
    y = x * x + x
    return _ev(
        tf, tf.gradients(y, x, aggregation_method=tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N)
    )


@case
def gradients_gate_and_colocate(tf):
    x = tf.constant(3.0)
    y = x * x
    return _ev(tf, tf.gradients(y, x, gate_gradients=True, colocate_gradients_with_ops=True))


@case
def gradients_dependent_ys(tf):
    x = tf.constant(3.0)
    y = x * x
    z = y * y
    return _ev(tf, tf.gradients([y, z], x))


@case
def gradients_hessians(tf):
    x = tf.constant([1.0, 2.0])
    y = tf.reduce_sum(x * x * x)
    return _ev(tf, tf.hessians(y, x))


@case
def gradients_no_gradient_string(tf):
    s = tf.constant("abc")
    x = tf.constant(1.0)
    return tf.gradients(x, s)


@case
def gradients_integer_x(tf):
    x = tf.constant(3)
    y = x * x
    return tf.gradients(y, x)


@case
def gradients_gradients_of_variable(tf):
    v = tf.Variable(2.0)
    y = v * v * v
    return _ev(tf, tf.gradients(y, v))


@case
def gradients_grad_of_list_xs_with_duplicates(tf):
    x = tf.constant(2.0)
    y = x * x
    return _ev(tf, tf.gradients(y, [x, x]))


@case
def gradients_gradient_of_sum_of_ys_with_grad_ys_none_entry(tf):
    x = tf.constant(2.0)
    y1 = x * x
    y2 = x * 3.0
    return _ev(tf, tf.gradients([y1, y2], x, grad_ys=[None, tf.constant(2.0)]))


@case
def gradients_grad_name_scope(tf):
    x = tf.constant(2.0)
    y = x * x
    g = tf.gradients(y, x, name="mygrads")[0]
    return g.name.split("/")[0]


# -- while_loop, as TF1's control-flow tests check it ------------------------------------------
@case
def while_loop_simple(tf):
    i = tf.constant(0)
    return _ev(tf, tf.while_loop(lambda i: tf.less(i, 10), lambda i: tf.add(i, 1), [i]))


@case
def while_loop_two_vars(tf):
    i = tf.constant(0)
    x = tf.constant(1.0)
    return _ev(tf, tf.while_loop(lambda i, x: i < 5, lambda i, x: (i + 1, x * 2.0), (i, x)))


@case
def while_loop_shape_invariants(tf):
    i = tf.constant(0)
    m = tf.ones([1, 2])
    r = tf.while_loop(
        lambda i, m: i < 3,
        lambda i, m: (i + 1, tf.concat([m, m], 0)),
        [i, m],
        shape_invariants=[i.get_shape(), tf.TensorShape([None, 2])],
    )
    return r[1].get_shape().as_list(), _ev(tf, tf.shape(r[1]))


@case
def while_loop_nested_structure(tf):
    i = tf.constant(0)
    d = {"a": tf.constant(1.0), "b": (tf.constant(2.0), tf.constant(3.0))}
    r = tf.while_loop(
        lambda i, d: i < 3,
        lambda i, d: (i + 1, {"a": d["a"] + 1, "b": (d["b"][0] * 2, d["b"][1])}),
        (i, d),
    )
    return _ev(tf, r)


@case
def while_loop_gradient(tf):
    x = tf.constant(2.0)
    r = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), (0, tf.constant(1.0)))
    return _ev(tf, tf.gradients(r[1], x))


@case
def while_loop_gradient_with_variable(tf):
    v = tf.Variable(2.0)
    r = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * v), (0, tf.constant(1.0)))
    return _ev(tf, tf.gradients(r[1], v))


@case
def while_loop_nested_loops(tf):
    def outer(i, s):
        j = tf.constant(0)
        _, inner = tf.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + 1), (j, s))
        return i + 1, inner

    return _ev(tf, tf.while_loop(lambda i, s: i < 4, outer, (0, 0)))


@case
def while_loop_maximum_iterations(tf):
    return _ev(tf, tf.while_loop(lambda i: i < 100, lambda i: i + 1, [0], maximum_iterations=7))


@case
def while_loop_loop_with_placeholder_bound(tf):
    n = tf.placeholder(tf.int32, [])
    return _ev(tf, tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), (0, 0)), {n: 5})


@case
def while_loop_wrong_body_structure(tf):
    return tf.while_loop(lambda i: i < 3, lambda i: (i + 1, i), [0])


@case
def while_loop_body_changes_shape_error(tf):
    m = tf.ones([1, 2])
    return tf.while_loop(lambda m: tf.shape(m)[0] < 4, lambda m: tf.concat([m, m], 0), [m])


@case
def while_loop_cond_not_boolean(tf):
    return tf.while_loop(lambda i: i, lambda i: i + 1, [0])


@case
def while_loop_back_prop_false(tf):
    x = tf.constant(2.0)
    r = tf.while_loop(
        lambda i, y: i < 3, lambda i, y: (i + 1, y * x), (0, tf.constant(1.0)), back_prop=False
    )
    return tf.gradients(r[1], x)


@case
def while_loop_parallel_iterations_swap_memory(tf):
    return _ev(
        tf,
        tf.while_loop(
            lambda i: i < 3, lambda i: i + 1, [0], parallel_iterations=1, swap_memory=True
        ),
    )


@case
def while_loop_while_in_cond(tf):
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(
        p, lambda: tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0]), lambda: tf.constant(-1)
    )
    return _ev(tf, r, {p: True}), _ev(tf, r, {p: False})


@case
def while_loop_cond_in_while(tf):
    return _ev(
        tf,
        tf.while_loop(
            lambda i, s: i < 6,
            lambda i, s: (i + 1, tf.cond(tf.equal(i % 2, 0), lambda: s + i, lambda: s)),
            (0, 0),
        ),
    )


@case
def while_loop_gradient_of_loop_with_cond(tf):
    x = tf.constant(3.0)
    r = tf.while_loop(
        lambda i, y: i < 3,
        lambda i, y: (i + 1, tf.cond(i > 0, lambda: y * x, lambda: y + x)),
        (0, tf.constant(1.0)),
    )
    return _ev(tf, tf.gradients(r[1], x))


@case
def while_loop_body_assigns_through_a_control_dependency(tf):
    v = tf.Variable(0)

    def body(i):
        with tf.control_dependencies([tf.assign_add(v, 1)]):
            return i + 1

    r = tf.while_loop(lambda i: i < 5, body, [0])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        return int(s.run(r)), int(s.run(v))


@case
def while_loop_body_assigns_a_value_it_computed(tf):
    v = tf.Variable(0.0)

    def body(i, x):
        with tf.control_dependencies([tf.assign(v, x * 2.0)]):
            return i + 1, x + 1.0

    r = tf.while_loop(lambda i, x: i < 4, body, [0, tf.constant(1.0)])
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        return _plain(s.run(r)), float(s.run(v))


@case
def cond_assigns_only_in_the_branch_taken(tf):
    v = tf.Variable(0)
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p, lambda: tf.assign_add(v, 5), lambda: tf.identity(v))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        return int(s.run(r, {p: True})), int(s.run(r, {p: False})), int(s.run(v))


def _plain(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def run(tf, name):
    with tf.Graph().as_default():
        try:
            return ["ok", _plain(CASES[name](tf))]
        except Exception as e:  # noqa: BLE001 - recorded
            return [type(e).__name__, str(e)]


def main():
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    results = {name: run(tf, name) for name in CASES}
    out = {"tensorflow": tf.__version__, "cases": results}
    path = Path(__file__).with_name("tf_own_tests.json")
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(results)} cases)")


if __name__ == "__main__":
    main()
