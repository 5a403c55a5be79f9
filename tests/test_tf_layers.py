"""``tf.nn``, ``tf.losses``, ``tf.layers``, ``tf.get_variable`` / ``tf.variable_scope`` and
the initializers through ``kernelgraph.compat.v1``, compared with TF1's recorded results
(the cases: tests/recorded/record_tf_layers.py, written once against TF1's API), plus what
cannot be recorded: random draws (dropout's statistics, seeded initializers)."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph.compat.v1 as tf
from tests.tf_recorded_cases import assert_matches, load_cases, run_case

CASES = load_cases("tf_layers")


@pytest.mark.parametrize("case", CASES.CASES, ids=lambda c: c.__name__)
def test_like_tf1(case, recorded):
    want = recorded("tf_layers")["cases"][case.__name__]
    got = run_case(case)
    got = got if isinstance(got, dict) and "error" in got else CASES.encode(got)
    assert_matches(got, want, case.__name__)


def test_dropout_with_a_fed_keep_prob_keeps_and_scales():
    with tf.Graph().as_default():
        keep = tf.placeholder(tf.float32)
        x = tf.placeholder(tf.float32, [None, 1000])
        y = tf.nn.dropout(x, keep)
        r = tf.nn.dropout(x, rate=keep)
        with tf.Session() as sess:
            a, b = sess.run([y, r], {x: np.ones((4, 1000)), keep: 0.25})
    assert set(np.unique(a)) <= {0.0, 4.0} and 0.2 < (a > 0).mean() < 0.3
    assert set(np.unique(b)).issubset({0.0, np.float32(1 / 0.75)}) and 0.7 < (b > 0).mean() < 0.8


def test_dropout_gradient_is_its_mask():
    with tf.Graph().as_default():
        keep = tf.placeholder(tf.float32)
        x = tf.placeholder(tf.float32, [None, 50])
        y = tf.nn.dropout(x, keep)
        g = tf.gradients(tf.reduce_sum(y), x)[0]
        with tf.Session() as sess:
            out, grad = sess.run([y, g], {x: np.ones((2, 50)), keep: 0.5})
    np.testing.assert_array_equal(out, grad)


def test_layers_dropout_follows_a_training_placeholder():
    with tf.Graph().as_default():
        training = tf.placeholder(tf.bool)
        x = tf.ones([10, 100])
        y = tf.layers.dropout(x, rate=0.5, training=training)
        with tf.Session() as sess:
            kept = sess.run(y, {training: True})
            same = sess.run(y, {training: False})
    assert set(np.unique(kept)) == {0.0, 2.0}
    np.testing.assert_array_equal(same, np.ones((10, 100)))


def test_random_initializers_follow_tf_set_random_seed():
    def values():
        with tf.Graph().as_default():
            tf.set_random_seed(3)
            v = tf.get_variable("v", [50, 40])
            w = tf.get_variable("w", [50, 40], initializer=tf.truncated_normal_initializer(
                stddev=0.1, seed=1))
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                return sess.run([v, w])

    first, again = values(), values()
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    limit = np.sqrt(6.0 / 90)
    assert np.abs(first[0]).max() <= limit and first[0].std() > limit / 3
    assert np.abs(first[1]).max() <= 0.2 and 0.05 < first[1].std() < 0.1


def test_layer_objects_share_their_variables():
    with tf.Graph().as_default():
        layer = tf.layers.Dense(3, kernel_initializer=tf.ones_initializer())
        a = layer(tf.ones([2, 4]))
        b = layer(tf.ones([5, 4]) * 2.0)
        names = [v.name.split(":")[0] for v in tf.trainable_variables()]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            va, vb = sess.run([a, b])
    assert names == ["dense/kernel", "dense/bias"]
    np.testing.assert_array_equal(va, np.full((2, 3), 4.0))
    np.testing.assert_array_equal(vb, np.full((5, 3), 8.0))


def test_tf_compat_v1_logging_and_app_resolve():
    assert tf.compat.v1 is tf and tf.compat.v1.placeholder is tf.placeholder
    tf.logging.set_verbosity(tf.logging.ERROR)
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    assert callable(tf.app.run) and tf.disable_v2_behavior() is None


def test_layer_errors_say_what_was_expected():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="last dimension of the inputs to `Dense`"):
            tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 3)
        with pytest.raises(ValueError, match="padding"):
            tf.layers.conv2d(tf.ones([1, 4, 4, 1]), 2, 3, padding="full")
        with pytest.raises(ValueError, match="exactly one of rate= or keep_prob="):
            tf.nn.dropout(tf.ones([2]))
        with pytest.raises(ValueError, match="Invalid Reduction Key"):
            tf.losses.mean_squared_error(tf.ones([2]), tf.ones([2]), reduction="avg")
