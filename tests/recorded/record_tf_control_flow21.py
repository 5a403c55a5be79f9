"""Record TF1's ``tf.cond``, ``tf.while_loop``, ``tf.case`` and ``tf.switch_case`` on the
shapes and structures TF's own tests use (control_flow_ops_py_test.py, cond_v2_test.py,
while_v2_test.py: nested conds, branches returning lists/tuples/dicts and outer tensors,
Python numbers, counters and accumulators, shape invariants, maximum_iterations, gradients)
into ``tf_control_flow21.json`` (read by tests/test_tf_control_flow21.py).

Each case is a function of the ``tf`` module, written once against TF1's API: this script
runs it with ``tensorflow.compat.v1``, the test with ``kernelgraph.compat.v1``. Run::

    TF_USE_LEGACY_KERAS=1 /work/refvenv/bin/python tests/recorded/record_tf_control_flow21.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np


def cond_basic(tf):
    x = tf.constant(10)
    r1 = tf.cond(tf.less(1, 2), lambda: tf.add(x, 1), lambda: tf.subtract(x, 1))
    r2 = tf.cond(tf.less(1, 0), lambda: tf.add(x, 1), lambda: tf.subtract(x, 1))
    with tf.Session() as sess:
        return sess.run([r1, r2])


def cond_nested(tf):
    x = tf.constant(10)
    pred = tf.less(1, 2)
    fn1 = lambda: tf.add(x, 1)  # noqa: E731 - as TF's tests write it
    fn2 = lambda: tf.subtract(x, 1)  # noqa: E731
    fn3 = lambda: tf.add(tf.cond(pred, fn1, fn2), 1)  # noqa: E731
    r = tf.cond(pred, fn3, fn2)
    with tf.Session() as sess:
        return sess.run(r)


def cond_lists_and_outer_tensors(tf):
    x = tf.constant(10)
    y = tf.constant(200)
    r = tf.cond(tf.less(1, 2), lambda: [tf.add(x, 1), tf.add(x, 2)], lambda: [y, y])
    with tf.Session() as sess:
        return sess.run(r)


def cond_single_element_list_unpacks(tf):
    p = tf.placeholder(tf.bool, [])
    a = tf.cond(p, lambda: [tf.constant(1.0)], lambda: [tf.constant(2.0)])
    b = tf.cond(p, lambda: (tf.constant(1.0),), lambda: (tf.constant(2.0),))
    c = tf.cond(p, lambda: [tf.constant(1.0)], lambda: [tf.constant(2.0)], strict=True)
    with tf.Session() as sess:
        return [sess.run(a, {p: True}), sess.run(b, {p: False}), sess.run(c, {p: True}),
                isinstance(a, list), isinstance(c, list)]


def cond_dict_and_tuple(tf):
    p = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [2])
    r = tf.cond(p, lambda: {"a": x * 2.0, "b": (x + 1.0, x - 1.0)},
                lambda: {"a": x * 3.0, "b": (x, -x)})
    with tf.Session() as sess:
        return [sess.run(r, {p: True, x: [1.0, 2.0]}), sess.run(r, {p: False, x: [1.0, 2.0]})]


def cond_python_numbers_in_branches(tf):
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p, lambda: tf.constant(3.0), lambda: 0.0)
    with tf.Session() as sess:
        return [sess.run(r, {p: True}), sess.run(r, {p: False})]


def cond_python_bool_pred_is_refused(tf):
    try:
        tf.cond(True, lambda: tf.constant(1), lambda: tf.constant(2))
    except TypeError as e:
        return ["TypeError", str(e)]
    return "no error"


def cond_in_python_loop(tf):
    alive = tf.constant(True, name="alive")
    count = tf.constant(0, name="count")

    def body(i):
        return tf.cond(alive, lambda: [tf.less(i, 3), tf.add(count, 1)], lambda: [alive, count])

    for i in range(10):
        alive, count = body(i)
    with tf.Session() as sess:
        return sess.run(count)


def cond_gradients(tf):
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(x > 0.0, lambda: x * x * 3.0, lambda: x * -2.0)
    g = tf.gradients(y, x)[0]
    with tf.Session() as sess:
        return [sess.run([y, g], {x: 2.0}), sess.run(g, {x: 3.0})]


def cond_gradient_to_variable(tf):
    v1 = tf.Variable([7.0])
    age = tf.constant(3.0)
    r = tf.cond(tf.greater(age, 4.0), lambda: age * 1.0, lambda: v1 * 2.0)
    grad = tf.gradients(r, v1)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run([r, grad])


def cond_reading_variable(tf):
    v1 = tf.Variable([7])
    age = tf.constant(3)
    r = tf.cond(tf.greater(age, 4), lambda: tf.constant([1]), lambda: v1 + 0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(r)


def while_counter(tf):
    n = tf.constant(0)
    r = tf.while_loop(lambda x: tf.less(x, 10000), lambda x: tf.add(x, 1), [n],
                      parallel_iterations=20)
    with tf.Session() as sess:
        return sess.run(r)


def while_counter_and_accumulator(tf):
    i = tf.constant(0)
    acc = tf.constant(0.0)
    r = tf.while_loop(lambda i, a: i < 10, lambda i, a: (i + 1, a + tf.cast(i, tf.float32)),
                      (i, acc))
    with tf.Session() as sess:
        return sess.run(r)


def while_four_vars(tf):
    def compute(i, m, c, o):
        m, c = [tf.add(m, 1), tf.add(c, 1)]
        o = tf.add(o, m)
        o = tf.add(o, c)
        i = tf.add(i, 1)
        return [i, m, c, o]

    i = tf.constant(0)
    d = tf.constant(100)
    r = tf.while_loop(lambda i, m, c, o: tf.less(i, d), compute, [i, 0, 0, 0])
    with tf.Session() as sess:
        return sess.run(r[3])


def while_gather(tf):
    x = tf.constant([1, 2, 3, 4, 5, 6])

    def compute(i, o):
        return [i + 1, o + tf.gather(x, i) * 2]

    r = tf.while_loop(lambda i, o: tf.less(i, 6), compute, [0, 0])
    with tf.Session() as sess:
        return sess.run(r)


def while_maximum_iterations(tf):
    s = tf.constant([1, 2, 3, 4, 5])
    r = tf.while_loop(lambda i, s: i < 10, lambda i, s: [i + 1, s + 1], [0, s],
                      maximum_iterations=3)
    r1 = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], maximum_iterations=1)
    m = tf.placeholder(tf.int32, [])
    r2 = tf.while_loop(lambda i: i < 100, lambda i: i + 2, [0], maximum_iterations=m)
    with tf.Session() as sess:
        return [sess.run(r), sess.run(r1), sess.run(r2, {m: 7})]


def while_python_cond(tf):
    a = tf.placeholder(tf.float32, [2])
    out, _ = tf.while_loop(lambda x, y: True, lambda x, y: (x + y, x + y), (a, a),
                           maximum_iterations=2)
    with tf.Session() as sess:
        return sess.run(out, {a: [1.0, 2.0]})


def while_nested_structure(tf):
    def body(i, state):
        a, (b, c) = state
        return i + 1, (a * 2.0, (b + a, c - 1.0))

    r = tf.while_loop(lambda i, s: i < 4, body,
                      (tf.constant(0), (tf.constant(1.0), (tf.constant(0.0), tf.constant(5.0)))))
    with tf.Session() as sess:
        return sess.run(r)


def while_dict_loop_vars(tf):
    r = tf.while_loop(lambda d: d["i"] < 3,
                      lambda d: [{"i": d["i"] + 1, "x": d["x"] * 2.0}],
                      [{"i": tf.constant(0), "x": tf.constant([1.0, 3.0])}])
    with tf.Session() as sess:
        return sess.run(r)


def while_shape_invariants(tf):
    i0 = tf.constant(0)
    m0 = tf.ones([2, 2])
    r = tf.while_loop(lambda i, m: i < 3, lambda i, m: [i + 1, tf.concat([m, m], axis=0)],
                      [i0, m0], shape_invariants=[i0.get_shape(), tf.TensorShape([None, 2])])
    with tf.Session() as sess:
        i, m = sess.run(r)
        return [i, np.asarray(m.shape), m.sum()]


def while_shape_change_without_invariant_is_refused(tf):
    i0 = tf.constant(0)
    m0 = tf.ones([2, 2])
    try:
        tf.while_loop(lambda i, m: i < 3, lambda i, m: [i + 1, tf.concat([m, m], axis=0)],
                      [i0, m0])
    except ValueError:
        return "ValueError"
    return "no error"


def while_gradient(tf):
    x = tf.placeholder(tf.float32, [])
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), [0, 1.0])
    g = tf.gradients(y, x)[0]
    with tf.Session() as sess:
        return sess.run([y, g], {x: 2.0})


def while_gradient_to_weights(tf):
    w = tf.Variable([[0.5, -0.25], [0.125, 1.0]])
    h0 = tf.constant([[1.0, 2.0]])

    def body(i, h):
        return i + 1, tf.tanh(tf.matmul(h, w))

    _, h = tf.while_loop(lambda i, h: i < 4, body, [0, h0])
    loss = tf.reduce_sum(h * h)
    g = tf.gradients(loss, [w, h0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run([loss, g])


def while_back_prop_false(tf):
    x = tf.placeholder(tf.float32, [])
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), [0, 1.0],
                         back_prop=False)
    with tf.Session() as sess:
        return sess.run(y, {x: 3.0})


def while_reading_placeholder_bound(tf):
    n = tf.placeholder(tf.int32, [])
    total = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), [0, 0])[1]
    with tf.Session() as sess:
        return [sess.run(total, {n: 5}), sess.run(total, {n: 0})]


def cond_inside_while(tf):
    def body(i, s):
        return i + 1, tf.cond(tf.less(i, 4), lambda: s + i, lambda: s - i)

    r = tf.while_loop(lambda i, s: i < 7, body, [0, 0])
    with tf.Session() as sess:
        return sess.run(r)


def while_inside_cond(tf):
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p, lambda: tf.while_loop(lambda i: i < 5, lambda i: i + 1, [0]),
                lambda: tf.constant(-1))
    with tf.Session() as sess:
        return [sess.run(r, {p: True}), sess.run(r, {p: False})]


def case_and_switch_case(tf):
    x = tf.placeholder(tf.int32, [])
    y = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)),
                 (tf.greater(x, 0), lambda: tf.constant(1))], default=lambda: tf.constant(0))
    # Without a default, the last pair is the default (TF also asserts that one predicate
    # holds: x = 0 is not asked here).
    z = tf.case([(tf.less(x, 0), lambda: tf.constant(10)),
                 (tf.greater(x, 0), lambda: tf.constant(20))])
    s = tf.switch_case(x, [lambda: tf.constant(100), lambda: tf.constant(200)],
                       default=lambda: tf.constant(-5))
    with tf.Session() as sess:
        return [[sess.run([y, z, s], {x: v}) for v in (-3, 1, 4)], sess.run([y, s], {x: 0})]


def cond_gradients_to_constants_nested(tf):
    pred = tf.placeholder(tf.bool, name="pred")  # no shape: fed a Python bool
    x = tf.constant(1.0, name="x")
    y = tf.constant(3.0, name="y")

    def false_fn():
        return tf.cond(pred, lambda: x * y * 2.0, lambda: x * 5.0, name="inside_false_fn")

    out = tf.cond(pred, lambda: 2.0, false_fn)
    multi = tf.cond(pred, lambda: (x * y, y), lambda: (x, y * 3.0))
    grads = [tf.gradients(out, [x, y]), tf.gradients(multi, [x, y]), tf.gradients(multi, [y])]
    with tf.Session() as sess:
        return [sess.run([out, multi, grads], {pred: v}) for v in (True, False)]


def map_fn_scan_fold(tf):
    x = tf.placeholder(tf.float32, [None, 2])
    squares = tf.map_fn(lambda row: row * row, x)
    pairs = tf.map_fn(lambda ab: ab[0] * ab[1], (x, x + 1.0), dtype=tf.float32)
    running = tf.scan(lambda a, row: a + row, x)
    with_init = tf.scan(lambda a, row: a * 2.0 + tf.reduce_sum(row), x, initializer=1.0)
    left = tf.foldl(lambda a, row: a * 10.0 + row[0], x, initializer=0.0)
    right = tf.foldr(lambda a, row: a * 10.0 + row[0], x, initializer=0.0)
    grads = tf.gradients(tf.reduce_sum(squares) + tf.reduce_sum(with_init) + left, x)
    value = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    with tf.Session() as sess:
        return sess.run([squares, pairs, running, with_init, left, right, grads], {x: value})


CASES = [cond_basic, cond_nested, cond_lists_and_outer_tensors,
         cond_single_element_list_unpacks, cond_dict_and_tuple, cond_python_numbers_in_branches,
         cond_python_bool_pred_is_refused, cond_in_python_loop, cond_gradients,
         cond_gradient_to_variable, cond_reading_variable, while_counter,
         while_counter_and_accumulator, while_four_vars, while_gather, while_maximum_iterations,
         while_python_cond, while_nested_structure, while_dict_loop_vars, while_shape_invariants,
         while_shape_change_without_invariant_is_refused, while_gradient,
         while_gradient_to_weights, while_back_prop_false, while_reading_placeholder_bound,
         cond_inside_while, while_inside_cond, case_and_switch_case,
         cond_gradients_to_constants_nested, map_fn_scan_fold]


# -- how results are written and compared (the test imports these too) ------------------------
def encode(value):
    """A JSON form of what a case returned: arrays keep their dtype name."""
    if isinstance(value, dict):
        return {"dict": {str(k): encode(v) for k, v in sorted(value.items())}}
    if isinstance(value, list | tuple):
        return {"list" if isinstance(value, list) else "tuple": [encode(v) for v in value]}
    if isinstance(value, bool | str) or value is None:
        return {"py": value}
    if isinstance(value, bytes):
        return {"py": value.decode()}
    arr = np.asarray(value)
    return {"dtype": arr.dtype.name, "shape": list(arr.shape), "value": arr.tolist()}


def record(cases, path: Path) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)
    out = {"tensorflow": tf.__version__, "cases": {}}
    for case in cases:
        with tf.Graph().as_default():
            tf.set_random_seed(0)
            try:
                out["cases"][case.__name__] = encode(case(tf))
            except Exception as e:  # noqa: BLE001 - recorded as what TF raised
                out["cases"][case.__name__] = {"error": type(e).__name__,
                                               "message": str(e).splitlines()[0]}
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    record(CASES, Path(__file__).with_name("tf_control_flow21.json"))


if __name__ == "__main__":
    main()
