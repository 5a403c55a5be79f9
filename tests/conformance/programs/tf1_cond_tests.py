"""In the manner of TF1's kernel tests for tf.cond (control_flow_ops_py_test.py's testCond*
methods): true and false branches with closures over outer tensors, a placeholder predicate
fed at run time, tuple and dict branch outputs, nested conds, a variable read inside a
branch, and gradients through both branches."""
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def test_cond_true_false():
    x = tf.constant(2)
    y = tf.constant(5)
    z = tf.cond(tf.less(x, y), lambda: tf.multiply(x, 17), lambda: tf.add(y, 23))
    w = tf.cond(tf.greater(x, y), lambda: tf.multiply(x, 17), lambda: tf.add(y, 23))
    with tf.Session() as sess:
        print("true/false", sess.run([z, w]))


def test_cond_placeholder_pred():
    pred = tf.placeholder(tf.bool, shape=[])
    x = tf.constant([1.0, 2.0, 3.0])
    r = tf.cond(pred, lambda: x * 2.0, lambda: x - 1.0)
    with tf.Session() as sess:
        print("pred", sess.run(r, {pred: True}), sess.run(r, {pred: False}))


def test_cond_structures():
    x = tf.constant(10.0)
    pair = tf.cond(x > 5.0, lambda: (x + 1.0, x * 2.0), lambda: (x - 1.0, x / 2.0))
    d = tf.cond(x < 5.0, lambda: {"a": x, "b": tf.square(x)},
                lambda: {"a": -x, "b": tf.sqrt(x)})
    with tf.Session() as sess:
        out = sess.run(d)
        print("structures", sess.run(pair), sorted(out), out["a"], out["b"])


def test_cond_nested():
    x = tf.placeholder(tf.int32, shape=[])
    r = tf.cond(x > 0,
                lambda: tf.cond(x > 10, lambda: x * 100, lambda: x * 10),
                lambda: tf.constant(-1))
    with tf.Session() as sess:
        print("nested", [sess.run(r, {x: v}) for v in (-3, 4, 20)])


def test_cond_variable():
    v = tf.Variable(np.array([1.0, 2.0], dtype=np.float32))
    flag = tf.placeholder(tf.bool)
    r = tf.cond(flag, lambda: v.read_value() * 3.0, lambda: tf.identity(v))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print("variable", sess.run(r, {flag: True}), sess.run(r, {flag: False}))


def test_cond_grad():
    x = tf.constant(3.0)
    pred = tf.placeholder(tf.bool, shape=[])
    r = tf.cond(pred, lambda: x * x * x, lambda: tf.sin(x))
    g = tf.gradients(r, x)[0]
    with tf.Session() as sess:
        print("grad", sess.run([r, g], {pred: True}), sess.run([r, g], {pred: False}))


def test_cond_matrix_shapes():
    a = tf.placeholder(tf.float32, shape=[None, 2])
    r = tf.cond(tf.reduce_sum(a) > 0.0, lambda: tf.matmul(a, a, transpose_b=True),
                lambda: tf.zeros([tf.shape(a)[0], tf.shape(a)[0]]))
    with tf.Session() as sess:
        print("shapes", r.shape.as_list(), sess.run(r, {a: [[1.0, 2.0], [3.0, 4.0]]}).tolist(),
              sess.run(r, {a: [[-1.0, -2.0]]}).tolist())


for test in (test_cond_true_false, test_cond_placeholder_pred, test_cond_structures,
             test_cond_nested, test_cond_variable, test_cond_grad, test_cond_matrix_shapes):
    test()
