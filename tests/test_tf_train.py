"""TF1's ``tf.train`` optimizers, ``tf.train.Saver`` and ``tf.metrics`` against what real
TF1 computed and wrote (tests/recorded/record_tf_train.py -> tf_train.json)."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph.compat.v1 as tf


@pytest.fixture(scope="module")
def ref(recorded):
    return recorded("tf_train")


def _problem(ref):
    x = tf.constant(ref["X"])
    y = tf.constant(ref["Y"])
    w = tf.Variable(ref["W0"], name="w")
    b = tf.Variable(ref["B0"], name="b")
    loss = tf.reduce_mean(tf.square(tf.reduce_sum(x * w, axis=1) + b - y))
    return w, b, loss


OPTIMIZER_CASES = ["rmsprop", "rmsprop_momentum", "rmsprop_centered", "adagrad",
                   "adagrad_initial", "adadelta", "adadelta_rho", "ftrl", "ftrl_l1_l2",
                   "ftrl_power_shrinkage", "proximal_gd", "proximal_gd_l1_l2", "proximal_gd_l2",
                   "proximal_adagrad", "proximal_adagrad_l1_l2", "adagrad_da",
                   "adagrad_da_l1_l2", "momentum_nesterov", "momentum", "adam",
                   "gradient_descent"]


@pytest.mark.parametrize("key", OPTIMIZER_CASES)
def test_optimizer_steps_match_tf1(ref, key):
    case = ref["optimizers"][key]
    with tf.Graph().as_default():
        w, b, loss = _problem(ref)
        gs = tf.train.get_or_create_global_step()
        kwargs = {k: (gs if v == "GS" else v) for k, v in case["kwargs"].items()}
        opt = getattr(tf.train, case["class"])(*case["args"], **kwargs)
        train = opt.minimize(loss, global_step=gs)
        assert opt.get_slot_names() == case["slot_names"]
        assert {name: [opt.get_slot(v, name).name for v in (w, b)]
                for name in opt.get_slot_names()} == case["slot_variable_names"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for want in case["steps"]:
                assert sess.run(train) is None  # an Operation, as TF1's train op
                wv, bv, gv = sess.run([w, b, gs])
                np.testing.assert_allclose(wv, want["w"], rtol=1e-5, atol=1e-6)
                np.testing.assert_allclose(bv, want["b"], rtol=1e-5, atol=1e-6)
                assert int(gv) == want["global_step"]
            for name, want in case["slot_values_w"].items():
                np.testing.assert_allclose(sess.run(opt.get_slot(w, name)), want,
                                           rtol=1e-5, atol=1e-6)


def test_compute_and_apply_gradients_with_a_var_list(ref):
    want = ref["optimizers"]["rmsprop_var_list"]
    with tf.Graph().as_default():
        w, b, loss = _problem(ref)
        opt = tf.train.RMSPropOptimizer(0.1)
        train = opt.apply_gradients(opt.compute_gradients(loss, var_list=[w]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                sess.run(train)
            wv, bv = sess.run([w, b])
        np.testing.assert_allclose(wv, want["w"], rtol=1e-5, atol=1e-6)
        assert float(bv) == pytest.approx(want["b"])
        assert (opt.get_slot(b, "rms") is None) == want["slot_of_b"]
        assert opt.get_slot(w, "no such slot") is None


def test_optimizers_refuse_bad_hyperparameters():
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(ValueError, match="l1_regularization_strength"):
        tf.train.ProximalGradientDescentOptimizer(0.1, l1_regularization_strength=-1.0)
    with pytest.raises(ValueError, match="learning_rate_power"):
        tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)


def test_slots_are_named_outside_the_callers_name_scope():
    with tf.Graph().as_default():
        w = tf.Variable(1.0, name="w")
        opt = tf.train.RMSPropOptimizer(0.1)
        with tf.name_scope("training"):
            opt.minimize(w * w)
        assert opt.get_slot(w, "rms").name == "w/RMSProp:0"
