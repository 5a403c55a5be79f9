"""Record TF1's ``tf.nn`` functions, ``tf.losses``, ``tf.layers``, ``tf.get_variable`` /
``tf.variable_scope`` and the deterministic initializers into ``tf_layers.json`` (read by
tests/test_tf_layers.py), as TF1 tutorials use them.

Each case is a function of the ``tf`` module, written once against TF1's API: this script
runs it with ``tensorflow.compat.v1``, the test with ``kernelgraph.compat.v1`` (random
initial values are not compared: kernelgraph does not reproduce TF's generator). Run::

    TF_USE_LEGACY_KERAS=1 /work/refvenv/bin/python tests/recorded/record_tf_layers.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # the recording helpers, next to this file
from record_tf_control_flow21 import encode, record  # noqa: E402, F401 - encode: for the test

LOGITS = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], np.float32)
SOFT = np.array([[0.2, 0.7, 0.1], [0.0, 0.0, 1.0]], np.float32)
X = np.arange(12, dtype=np.float32).reshape(3, 4) / 10.0 - 0.5


def softmax_xent_and_gradients(tf):
    labels = tf.constant(SOFT)
    logits = tf.constant(LOGITS)
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    g1 = tf.gradients(v1, [labels, logits])
    g2 = tf.gradients(v2, [labels, logits])
    with tf.Session() as sess:
        return [sess.run([v1, v2, g1[1], g2[0], g2[1]]), g1[0] is None]


def softmax_xent_dim(tf):
    loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.constant(SOFT.T),
                                                      logits=tf.constant(LOGITS.T), dim=0)
    with tf.Session() as sess:
        return sess.run(loss)


def sigmoid_xent_and_gradient_at_zero(tf):
    logits = tf.constant([[0.0, 2.0, -3.0], [50.0, -50.0, 0.5]])
    labels = tf.constant([[1.0, 0.0, 1.0], [0.0, 1.0, 0.3]])
    loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    g = tf.gradients(tf.reduce_sum(loss), logits)[0]
    with tf.Session() as sess:
        return sess.run([loss, g])


def sparse_softmax_xent(tf):
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([1, 2]),
                                                          logits=tf.constant(LOGITS))
    with tf.Session() as sess:
        return sess.run(loss)


def bias_add_l2_loss_activations(tf):
    x = tf.constant(X)
    b = tf.constant([1.0, -1.0, 0.5, 0.0])
    outs = [tf.nn.bias_add(x, b), tf.nn.l2_loss(x), tf.nn.relu6(x * 20.0),
            tf.nn.leaky_relu(x), tf.nn.leaky_relu(x, alpha=0.1), tf.nn.elu(x), tf.nn.softsign(x),
            tf.nn.softmax(x), tf.nn.log_softmax(x), tf.nn.l2_normalize(x, axis=1)]
    grads = tf.gradients(tf.reduce_sum(tf.nn.elu(x) + tf.nn.relu6(x * 20.0)), x)
    with tf.Session() as sess:
        return sess.run(outs + grads)


def moments_and_in_top_k(tf):
    x = tf.constant(X)
    mean, var = tf.nn.moments(x, axes=[0])
    mean2, var2 = tf.nn.moments(x, axes=[0, 1], keep_dims=True)
    top = tf.nn.in_top_k(tf.constant(LOGITS), tf.constant([1, 0]), 1)
    top2 = tf.nn.in_top_k(tf.constant(LOGITS), tf.constant([0, 0]), 2)
    with tf.Session() as sess:
        return sess.run([mean, var, mean2, var2, top, top2])


def embedding_lookup(tf):
    params = tf.constant(X)
    ids = tf.constant([[0, 2], [1, 1]])
    with tf.Session() as sess:
        return sess.run(tf.nn.embedding_lookup(params, ids))


def dropout_keep_prob_fed_one_is_identity(tf):
    keep = tf.placeholder(tf.float32)
    x = tf.constant(X)
    y = tf.nn.dropout(x, keep)
    z = tf.nn.dropout(x, keep_prob=1.0)
    with tf.Session() as sess:
        return sess.run([y, z], {keep: 1.0})


def losses_reductions(tf):
    labels = tf.constant([[1.0, 0.0], [0.5, 2.0]])
    preds = tf.constant([[0.5, 0.5], [1.0, 1.0]])
    w = tf.constant([[1.0, 0.0], [2.0, 1.0]])
    r = tf.losses.Reduction
    outs = [tf.losses.mean_squared_error(labels, preds),
            tf.losses.mean_squared_error(labels, preds, weights=w),
            tf.losses.mean_squared_error(labels, preds, weights=w, reduction=r.SUM),
            tf.losses.mean_squared_error(labels, preds, weights=w, reduction=r.MEAN),
            tf.losses.mean_squared_error(labels, preds, weights=w,
                                         reduction=r.SUM_OVER_BATCH_SIZE),
            tf.losses.mean_squared_error(labels, preds, weights=w, reduction=r.NONE),
            tf.losses.absolute_difference(labels, preds),
            tf.losses.huber_loss(labels, preds * 3.0),
            tf.losses.log_loss(tf.constant([[1.0], [0.0]]), tf.constant([[0.8], [0.3]])),
            tf.losses.hinge_loss(tf.constant([[1.0], [0.0]]), tf.constant([[0.3], [-2.0]]))]
    with tf.Session() as sess:
        return sess.run(outs)


def losses_cross_entropies(tf):
    onehot = tf.constant([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    logits = tf.constant(LOGITS)
    outs = [tf.losses.softmax_cross_entropy(onehot, logits),
            tf.losses.softmax_cross_entropy(onehot, logits, label_smoothing=0.1),
            tf.losses.sparse_softmax_cross_entropy(tf.constant([1, 2]), logits),
            tf.losses.sparse_softmax_cross_entropy(tf.constant([1, 2]), logits, weights=0.5),
            tf.losses.sigmoid_cross_entropy(onehot, logits),
            tf.losses.sigmoid_cross_entropy(onehot, logits, label_smoothing=0.2)]
    g = tf.gradients(outs[0], logits)
    with tf.Session() as sess:
        return sess.run(outs + g)


def dense_layers_names_and_values(tf):
    x = tf.placeholder(tf.float32, [None, 4])
    h = tf.layers.dense(x, 3, activation=tf.nn.relu,
                        kernel_initializer=tf.constant_initializer(
                            np.linspace(-1, 1, 12).reshape(4, 3)),
                        bias_initializer=tf.constant_initializer(0.1))
    y = tf.layers.dense(h, 2, kernel_initializer=tf.ones_initializer())
    z = tf.layers.dense(h, 2, kernel_initializer=tf.zeros_initializer(), use_bias=False,
                        name="out")
    names = [v.name.split(":")[0] for v in tf.trainable_variables()]
    shapes = [v.get_shape().as_list() for v in tf.trainable_variables()]
    loss = tf.reduce_sum(y * y)
    grads = tf.gradients(loss, tf.trainable_variables()[:4])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return [names, shapes, sess.run([h, y, z] + grads, {x: X})]


def dense_on_rank3_inputs(tf):
    x = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 10.0)
    y = tf.layers.dense(x, 2, kernel_initializer=tf.constant_initializer(0.5))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return [y.get_shape().as_list(), sess.run(y)]


def conv_pool_flatten_dropout(tf):
    # (no ties in the pooling windows: which of two equal values TF's max-pool gradient
    # picks depends on the last bit of each convolution's sum)
    x = tf.constant(np.sin(np.arange(2 * 6 * 6 * 2) * 0.37).astype(np.float32).reshape(
        2, 6, 6, 2))
    c = tf.layers.conv2d(x, 3, 3, padding="same", activation=tf.nn.relu,
                         kernel_initializer=tf.constant_initializer(
                             np.linspace(-0.5, 0.5, 54).reshape(3, 3, 2, 3)),
                         bias_initializer=tf.constant_initializer(0.05))
    c2 = tf.layers.conv2d(x, 2, (2, 3), strides=2, padding="valid",
                          kernel_initializer=tf.ones_initializer())
    p = tf.layers.max_pooling2d(c, pool_size=2, strides=2)
    p2 = tf.layers.max_pooling2d(c, pool_size=[3, 3], strides=2, padding="same")
    a = tf.layers.average_pooling2d(c, 2, 2)
    f = tf.layers.flatten(p)
    training = tf.placeholder(tf.bool)
    d = tf.layers.dropout(f, rate=0.4, training=training)
    d2 = tf.layers.dropout(f, rate=0.4)
    names = [v.name.split(":")[0] for v in tf.trainable_variables()]
    g = tf.gradients(tf.reduce_sum(f * f), tf.trainable_variables()[0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return [names, [t.get_shape().as_list() for t in (c, c2, p, p2, f)],
                sess.run([c, c2, p, p2, a, f, d, d2] + g, {training: False})]


def get_variable_and_scopes(tf):
    with tf.variable_scope("model"):
        w = tf.get_variable("w", [2, 3], initializer=tf.constant_initializer(2.0))
        b = tf.get_variable("b", [3], initializer=tf.zeros_initializer())
        with tf.variable_scope("inner"):
            c = tf.get_variable("c", initializer=tf.constant([1.0, 2.0]))
        y = tf.matmul(tf.ones([1, 2]), w) + b
    with tf.variable_scope("model", reuse=True):
        w2 = tf.get_variable("w")
    with tf.variable_scope("model") as scope:
        scope.reuse_variables()
        b2 = tf.get_variable("b", [3])
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        a1 = tf.get_variable("a", [1], initializer=tf.ones_initializer())
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        a2 = tf.get_variable("a", [1])
    errors = []
    try:
        with tf.variable_scope("model"):
            tf.get_variable("w", [2, 3])
    except ValueError as e:
        errors.append(str(e).split(" Originally")[0])
    try:
        with tf.variable_scope("other", reuse=True):
            tf.get_variable("w", [2, 3])
    except ValueError as e:
        errors.append(str(e))
    names = [v.name.split(":")[0] for v in (w, b, c, a1)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return [names, [w2 is w, b2 is b, a2 is a1], errors, sess.run([y, c]),
                tf.get_variable_scope().name]


def layers_reuse_and_shared_weights(tf):
    x1 = tf.constant(X)
    x2 = tf.constant(X * 2.0)
    y1 = tf.layers.dense(x1, 2, name="shared", kernel_initializer=tf.constant_initializer(0.25))
    y2 = tf.layers.dense(x2, 2, name="shared", reuse=True)
    with tf.variable_scope("tower"):
        t = tf.layers.dense(x1, 1, kernel_initializer=tf.ones_initializer())
    names = [v.name.split(":")[0] for v in tf.global_variables()]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return [names, sess.run([y1, y2, t])]


def initializers_deterministic(tf):
    vs = [tf.get_variable("z", [2, 2], initializer=tf.zeros_initializer()),
          tf.get_variable("o", [3], initializer=tf.ones_initializer()),
          tf.get_variable("c", [2, 3], initializer=tf.constant_initializer(0.5)),
          tf.get_variable("l", [2, 2], initializer=tf.constant_initializer([1.0, 2.0, 3.0, 4.0])),
          tf.get_variable("i", [2], dtype=tf.int32, initializer=tf.zeros_initializer())]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(vs)


def initializers_random_shapes(tf):
    inits = [tf.random_normal_initializer(0.0, 0.01), tf.truncated_normal_initializer(stddev=0.1),
             tf.random_uniform_initializer(-0.05, 0.05), tf.glorot_uniform_initializer(),
             tf.glorot_normal_initializer(), tf.variance_scaling_initializer(scale=2.0)]
    vs = [tf.get_variable(f"v{k}", [30, 20], initializer=init) for k, init in enumerate(inits)]
    d = tf.get_variable("default", [40, 10])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run(vs + [d])
    # Within the distributions' bounds (the draws themselves are TF's own).
    return [[v.shape for v in values], bool(np.abs(values[1]).max() <= 0.2),
            bool(np.abs(values[2]).max() <= 0.05), bool(np.abs(values[3]).max() <= np.sqrt(0.12)),
            bool(np.abs(values[6]).max() <= np.sqrt(6 / 50))]


def static_rnn_with_constant_weights(tf):
    xs = [tf.constant(X[:, :2] * (k + 1)) for k in range(3)]
    with tf.variable_scope("rnn", initializer=tf.constant_initializer(0.1)):
        cell = tf.nn.rnn_cell.BasicRNNCell(4)
        outputs, state = tf.nn.static_rnn(cell, xs, dtype=tf.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return [len(outputs), sess.run(outputs + [state])]


def batch_normalization_training_and_updates(tf):
    x2 = tf.constant(np.arange(8, dtype=np.float32).reshape(4, 2) ** 1.5)
    x4 = tf.constant(np.sin(np.arange(2 * 3 * 3 * 2, dtype=np.float32)).reshape(2, 3, 3, 2))
    training = tf.placeholder(tf.bool)
    y2 = tf.layers.batch_normalization(x2, training=True, momentum=0.9)
    y4 = tf.layers.batch_normalization(x4, training=training)
    loss = tf.reduce_sum(y4 * tf.constant(np.linspace(-1, 1, 36, dtype=np.float32).reshape(
        2, 3, 3, 2))) + tf.reduce_sum(y2 * y2 * 0.5)
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    names = [v.name.split(":")[0] for v in tf.global_variables()]
    trainable = [v.name.split(":")[0] for v in tf.trainable_variables()]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run([y2, y4], {training: True})
        sess.run(train, {training: True})
        after = sess.run(tf.global_variables())
        return [names, trainable, len(update_ops), first, after,
                sess.run(y4, {training: False})]


def gan_style_reuse_of_a_scope(tf):
    def generator(z, reuse=False):
        with tf.variable_scope("generator", reuse=reuse):
            h = tf.layers.dense(z, 4, activation=tf.nn.relu,
                                kernel_initializer=tf.constant_initializer(0.5))
            return tf.layers.dense(h, 2, kernel_initializer=tf.ones_initializer())

    a = generator(tf.constant([[1.0, 2.0, 3.0]]))
    b = generator(tf.constant([[-1.0, 0.0, 2.0]]), reuse=True)
    names = [v.name.split(":")[0] for v in tf.global_variables()]
    error = None
    with tf.variable_scope("d"):
        tf.layers.dense(tf.zeros([1, 3]), 1)
    try:
        with tf.variable_scope("d"):
            tf.layers.dense(tf.zeros([1, 3]), 1)
    except ValueError as e:
        error = str(e).split(" Originally")[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return [names, error, sess.run([a, b])]


CASES = [softmax_xent_and_gradients, softmax_xent_dim, sigmoid_xent_and_gradient_at_zero,
         sparse_softmax_xent, bias_add_l2_loss_activations, moments_and_in_top_k,
         embedding_lookup, dropout_keep_prob_fed_one_is_identity, losses_reductions,
         losses_cross_entropies, dense_layers_names_and_values, dense_on_rank3_inputs,
         conv_pool_flatten_dropout, get_variable_and_scopes, layers_reuse_and_shared_weights,
         initializers_deterministic, initializers_random_shapes,
         static_rnn_with_constant_weights, batch_normalization_training_and_updates,
         gan_style_reuse_of_a_scope]


def main() -> None:
    record(CASES, Path(__file__).with_name("tf_layers.json"))


if __name__ == "__main__":
    main()
