"""Record how TF1's ``Session`` answers the cases TF1's own session tests check
(``session_test.py``: fetching and feeding by name, errors and their ``op``, closed and
empty sessions, threads, partial runs) into ``tf_session_tests.json`` (read by
tests/test_tf_session_tests.py).

Run with an environment that has tensorflow-cpu (see README.md here)::

    python tests/recorded/record_tf_session_tests.py

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
        return value, str(e)[:len("No default session is registered.")]


@case
def fetch_scalars_keep_their_numpy_type(tf):
    out = []
    with tf.Session() as s:
        for scalar in np.int32, np.int64, np.float32, np.float64:
            xy = s.run(tf.add(tf.constant(scalar(7), shape=[]), tf.constant(scalar(8))))
            xy_list, = s.run([tf.add(tf.constant(scalar(1)), tf.constant(scalar(2)))])
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
        return (s.run(2 * x, feed_dict={x: np.ones(2).astype(np.float32)}).tolist(),
                s.run(2 * x, feed_dict={x.name: np.ones(2).astype(np.float32)}).tolist(),
                s.run(2 * x, feed_dict={x: [1, 1]}).tolist())


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


def _plain(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
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
    path = Path(__file__).with_name("tf_session_tests.json")
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(results)} cases)")


if __name__ == "__main__":
    main()
