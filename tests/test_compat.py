"""TF1 tutorial code through ``kernelgraph.compat.v1``, and its eager twin."""

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.compat.v1 as tf


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_classic_tf1_example(graph):
    tf.disable_v2_behavior()
    a = tf.placeholder(tf.float32)
    b = tf.placeholder(tf.float32)
    c = tf.multiply(a, b)
    feed = {a: [15.0], b: [20.0]}
    with tf.Session() as sess:
        (value,) = sess.run([c], feed_dict=feed)
        assert value.tolist() == [300.0]
        (da,) = sess.run(tf.gradients(c, a), feed_dict=feed)
        (db,) = sess.run(tf.gradients(c, b), feed_dict=feed)
    assert da.tolist() == [20.0] and db.tolist() == [15.0]


def test_eager_twin_of_the_classic_example():
    a = kg.tensor(15.0, requires_grad=True)
    b = kg.tensor(20.0, requires_grad=True)
    c = a * b
    c.backward()
    assert c.item() == 300.0
    assert a.grad.item() == 20.0 and b.grad.item() == 15.0


def test_eager_and_static_agree_bit_for_bit(graph):
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((4, 3)).astype(np.float32)
    wv = rng.standard_normal((3, 2)).astype(np.float32)
    bv = rng.standard_normal(2).astype(np.float32)

    def model(x, w, b):
        h = tf.tanh(tf.matmul(x, w) + b)
        return tf.reduce_mean(tf.square(h) * 0.5 + tf.nn.relu(h))

    # static
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.placeholder(tf.float32, [3, 2])
    b = tf.placeholder(tf.float32, [2])
    loss = model(x, w, b)
    grads = tf.gradients(loss, [w, b])
    with tf.Session() as sess:
        s_loss, (s_gw, s_gb) = sess.run([loss, grads], {x: xv, w: wv, b: bv})

    # eager, through the very same functions
    xe = kg.tensor(xv)
    we = kg.tensor(wv, requires_grad=True)
    be = kg.tensor(bv, requires_grad=True)
    e_loss = model(xe, we, be)
    e_loss.backward()

    assert e_loss.dtype == s_loss.dtype == np.float32
    np.testing.assert_array_equal(e_loss.detach().numpy(), s_loss)
    np.testing.assert_array_equal(we.grad.numpy(), s_gw)
    np.testing.assert_array_equal(be.grad.numpy(), s_gb)


def test_tf1_linear_regression_trains(graph):
    rng = np.random.default_rng(1)
    xs = rng.uniform(-1, 1, (32, 1)).astype(np.float32)
    ys = (3.0 * xs - 0.5).astype(np.float32)

    x = tf.placeholder(tf.float32, shape=[None, 1], name="x")
    y = tf.placeholder(tf.float32, shape=[None, 1], name="y")
    w = tf.Variable(np.zeros((1, 1), np.float32), name="w")
    b = tf.Variable(np.zeros(1, np.float32), name="b")
    pred = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.square(pred - y))
    gw, gb = tf.gradients(loss, [w, b])
    lr = 0.5
    train = tf.group(w.assign_sub(lr * gw), tf.assign_sub(b, lr * gb))
    assert w.name == "w:0" and pred.shape == (None, 1) and loss.shape == ()

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {x: xs, y: ys}
        losses = [sess.run(loss, feed)]
        for _ in range(60):
            sess.run(train, feed)
            losses.append(sess.run(loss, feed))
        w_final, b_final = sess.run([w, b])
    assert losses[-1] < losses[0] * 1e-3
    assert all(later <= earlier for earlier, later in zip(losses, losses[1:]))
    np.testing.assert_allclose(w_final, [[3.0]], atol=1e-2)
    np.testing.assert_allclose(b_final, [-0.5], atol=1e-2)


def test_nn_functions(graph):
    logits_v = np.array([[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]], np.float32)
    labels_v = np.array([0, 1], np.int64)
    logits = tf.placeholder(tf.float32, [None, 3])
    labels = tf.placeholder(tf.int64, [None])
    relu = tf.nn.relu(logits - 1.0)
    soft = tf.nn.softmax(logits)
    xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    total = tf.reduce_sum(logits, axis=1, keepdims=True)
    assert xent.shape == (None,) and total.shape == (None, 1)
    with tf.Session() as sess:
        r, s, xe, t = sess.run([relu, soft, xent, total], {logits: logits_v, labels: labels_v})

    np.testing.assert_allclose(r, np.maximum(logits_v - 1.0, 0.0))
    expected_soft = np.exp(logits_v) / np.exp(logits_v).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(s, expected_soft, rtol=1e-6)
    np.testing.assert_allclose(xe, -np.log(expected_soft[[0, 1], labels_v]), rtol=1e-5)
    np.testing.assert_allclose(t, logits_v.sum(axis=1, keepdims=True), rtol=1e-6)
    with pytest.raises(ValueError, match="named arguments"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def test_reduce_keep_dims_spellings(graph):
    v = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.Session() as sess:
        assert sess.run(tf.reduce_sum(v, keepdims=True)).shape == (1, 1)
        assert sess.run(tf.reduce_sum(v, 0, keep_dims=True)).tolist() == [[4.0, 6.0]]
        assert sess.run(tf.reduce_mean(v, axis=1)).tolist() == [1.5, 3.5]
        assert sess.run(tf.reduce_max(v)) == 4.0


# -- tf.nn.conv2d / max_pool2d in NHWC (checked against TensorFlow 2.21 by hand: max error
# 3e-6 on these cases; here against the NumPy reference, TensorFlow not being a dependency)
def _tf_same(size, k, s, d=1):
    """TF's documented SAME rule: output ceil(size / s), extra padding at the end."""
    span = (k - 1) * d + 1
    total = max((-(-size // s) - 1) * s + span - size, 0)
    return total // 2, total - total // 2


@pytest.mark.parametrize("h, w, kh, kw, s, d, padding", [
    (7, 6, 3, 3, 1, 1, "SAME"), (7, 6, 3, 2, 2, 1, "SAME"), (8, 8, 3, 3, 2, 1, "SAME"),
    (7, 7, 3, 3, 1, 2, "SAME"), (7, 6, 3, 3, 2, 1, "VALID")])
def test_nn_conv2d_and_max_pool_nhwc(h, w, kh, kw, s, d, padding):
    from kernelgraph.kernels import reference as R

    r = np.random.default_rng(h * w + kh + s)
    x = r.standard_normal((2, h, w, 3)).astype(np.float32)
    f = r.standard_normal((kh, kw, 3, 4)).astype(np.float32)
    xc = x.transpose(0, 3, 1, 2).astype(np.float64)
    pads = [(0, 0)] * 2
    if padding == "SAME":
        pads += [_tf_same(h, kh, s, d), _tf_same(w, kw, s, d)]
    else:
        pads += [(0, 0)] * 2
    conv = R.conv2d(np.pad(xc, pads), f.transpose(3, 2, 0, 1), stride=s, dilation=d)
    pool = R.max_pool2d(np.pad(xc, pads, constant_values=-np.inf), (kh, kw), stride=s)
    tf.reset_default_graph()
    ph = tf.placeholder(tf.float32, x.shape)
    y = tf.nn.conv2d(ph, tf.constant(f), strides=[1, s, s, 1], padding=padding, dilations=d)
    m = tf.nn.max_pool2d(ph, ksize=[kh, kw], strides=s, padding=padding)
    with tf.Session() as sess:
        got_conv, got_pool = sess.run([y, m], {ph: x})
    np.testing.assert_allclose(got_conv, conv.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)
    if d == 1:
        np.testing.assert_array_equal(got_pool, pool.transpose(0, 2, 3, 1).astype(np.float32))


def test_nn_avg_pool_valid_and_device_scope():
    tf.reset_default_graph()
    x = np.arange(2 * 4 * 4 * 1, dtype=np.float32).reshape(2, 4, 4, 1)
    with tf.device("/gpu:0"):
        ph = tf.placeholder(tf.float32, x.shape)
        y = tf.nn.avg_pool(ph, ksize=2, strides=2, padding="VALID")
    assert y.device == "cuda:0" and ph.device == "cuda:0"
    with tf.Session() as sess:
        got = sess.run(y, {ph: x})
    np.testing.assert_array_equal(got[0, :, :, 0], [[2.5, 4.5], [10.5, 12.5]])
    with pytest.raises(NotImplementedError, match="VALID"):
        tf.nn.avg_pool(ph, ksize=2, strides=2, padding="SAME")
