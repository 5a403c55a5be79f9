"""In the manner of TF1's kernel tests for tf.while_loop (control_flow_ops_py_test.py's
testWhile* methods): a counter, several loop variables, a tuple of tensors, a tensor that
grows under shape_invariants, maximum_iterations, a loop over a placeholder's length, and
gradients through the loop (x^(2^n) style)."""
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def test_while_counter():
    i = tf.constant(0)
    r = tf.while_loop(lambda i: tf.less(i, 10), lambda i: tf.add(i, 1), [i])
    with tf.Session() as sess:
        print("counter", sess.run(r))


def test_while_two_vars():
    n = tf.constant(1.0)
    k = tf.constant(0)
    r = tf.while_loop(lambda n, k: k < 5, lambda n, k: (n * 2.0, k + 1), (n, k))
    with tf.Session() as sess:
        print("two vars", sess.run(r))


def test_while_sum_of_squares():
    def body(i, acc):
        return i + 1, acc + tf.cast(i * i, tf.float32)

    _, total = tf.while_loop(lambda i, acc: i < 6, body, [tf.constant(0), tf.constant(0.0)])
    with tf.Session() as sess:
        print("squares", sess.run(total))


def test_while_shape_invariants():
    i0 = tf.constant(0)
    m0 = tf.ones([2, 2])
    c = lambda i, m: i < 3
    b = lambda i, m: [i + 1, tf.concat([m, m], axis=0)]
    _, m = tf.while_loop(c, b, loop_vars=[i0, m0],
                         shape_invariants=[i0.get_shape(), tf.TensorShape([None, 2])])
    with tf.Session() as sess:
        print("invariants", m.shape.as_list(), sess.run(m).shape)


def test_while_maximum_iterations():
    x = tf.constant(1.0)
    r = tf.while_loop(lambda x: x < 1000.0, lambda x: x * 3.0, [x], maximum_iterations=4)
    with tf.Session() as sess:
        print("max iterations", sess.run(r))


def test_while_over_placeholder():
    xs = tf.placeholder(tf.float32, shape=[None])
    n = tf.shape(xs)[0]

    def body(i, acc):
        return i + 1, acc + xs[i] * tf.cast(i + 1, tf.float32)

    _, acc = tf.while_loop(lambda i, acc: i < n, body, [0, 0.0])
    with tf.Session() as sess:
        print("placeholder", sess.run(acc, {xs: [1.0, 2.0, 3.0]}),
              sess.run(acc, {xs: [0.5] * 5}))


def test_while_grad():
    v = tf.constant(2.0)
    r = tf.while_loop(lambda a: a < 100.0, lambda a: tf.square(a), [v])
    g = tf.gradients(r, v)[0]
    x = tf.constant(1.5)
    _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), (0, tf.constant(1.0)))
    gx = tf.gradients(y, x)[0]
    with tf.Session() as sess:
        print("grad", sess.run([r, g]), sess.run([y, gx]))


for test in (test_while_counter, test_while_two_vars, test_while_sum_of_squares,
             test_while_shape_invariants, test_while_maximum_iterations,
             test_while_over_placeholder, test_while_grad):
    test()
