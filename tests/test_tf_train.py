"""TF1's ``tf.train`` optimizers, ``tf.train.Saver`` and ``tf.metrics`` against what real
TF1 computed and wrote (tests/recorded/record_tf_train.py -> tf_train.json)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import kernelgraph.compat.v1 as tf
from kernelgraph import load as kg_load


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


def test_train_ops_are_named_as_tf1_names_them(ref):
    with tf.Graph().as_default():
        w = tf.Variable(1.0, name="w")
        gs = tf.train.get_or_create_global_step()
        names = [tf.train.RMSPropOptimizer(0.1).minimize(w * w).name,
                 tf.train.RMSPropOptimizer(0.1).minimize(w * w, global_step=gs).name,
                 tf.train.AdamOptimizer(0.1).minimize(w * w, name="train").name]
        assert names == ref["optimizers"]["train_op_names"]["names"]
        assert type(tf.train.AdamOptimizer(0.1).minimize(w * w)).__name__ == \
            ref["optimizers"]["train_op_names"]["type"]


def test_slots_are_named_outside_the_callers_name_scope():
    with tf.Graph().as_default():
        w = tf.Variable(1.0, name="w")
        opt = tf.train.RMSPropOptimizer(0.1)
        with tf.name_scope("training"):
            opt.minimize(w * w)
        assert opt.get_slot(w, "rms").name == "w/RMSProp:0"


@pytest.mark.parametrize("optimizer", ["AdamOptimizer", "MomentumOptimizer"])
def test_slots_made_under_update_ops_initialize_without_a_feed(optimizer):
    # the tf.layers.batch_normalization tutorial pattern: the train op is built under
    # control_dependencies(UPDATE_OPS), which depend on the placeholder; TF1 makes the
    # optimizer's slots outside that block, so the initializer needs no feed
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, (None, 2))
        h = tf.layers.batch_normalization(tf.layers.dense(x, 3), training=True)
        loss = tf.reduce_sum(h * h)
        opt = getattr(tf.train, optimizer)(0.1, **({"momentum": 0.9}
                                                   if optimizer == "MomentumOptimizer" else {}))
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train = opt.minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train, {x: [[1.0, 2.0], [3.0, 5.0]]})
            moving = [v for v in tf.global_variables() if "moving_mean" in v.name]
            assert sess.run(moving[0]).any()  # the update ops ran with the train op


# -- tf.train.Saver and the checkpoint-state file ---------------------------------------------
def test_saver_tutorial_pattern_matches_tf1(ref, tmp_path, monkeypatch):
    want = ref["saver"]
    monkeypatch.chdir(tmp_path)
    with tf.Graph().as_default():
        w, b, loss = _problem(ref)
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert (tf.train.get_checkpoint_state("ckpt") is None) == want["state_before"]
            assert tf.train.latest_checkpoint("ckpt") == want["latest_before"]
            paths = []
            for k in range(3):
                sess.run(train)
                paths.append(saver.save(sess, "ckpt/model.ckpt", global_step=(k + 1) * 10))
            assert paths == want["paths"]
            assert (tmp_path / "ckpt" / "checkpoint").read_text() == want["checkpoint_file"]
            # TF1's .index and .data files per checkpoint are kernelgraph's one .npz; the .meta
            # graph is written as TF1 writes it
            kept = {f.split(".data")[0].split(".index")[0] for f in want["files"]}
            assert set(os.listdir("ckpt")) == {
                f if f == "checkpoint" or f.endswith(".meta") else f + ".npz" for f in kept}
            ckpt = tf.train.get_checkpoint_state("ckpt")
            assert ckpt and ckpt.model_checkpoint_path == want["state"]["model_checkpoint_path"]
            assert list(ckpt.all_model_checkpoint_paths) == \
                want["state"]["all_model_checkpoint_paths"]
            assert tf.train.latest_checkpoint("ckpt") == want["latest"]
            assert {p: tf.train.checkpoint_exists(p) for p in paths} == want["exists"]
            assert saver.last_checkpoints == want["last_checkpoints"]
            saved = sess.run([w, b])
            np.testing.assert_allclose(saved[0], want["values_at_save"]["w"], rtol=1e-6)
            assert tf.train.Saver().save(sess, "other/model.ckpt") == want["no_step_path"]
            assert (tmp_path / "other" / "checkpoint").read_text() == \
                want["no_step_checkpoint_file"]
            assert tf.train.Saver().save(sess, "third/model", global_step=step) == \
                want["step_tensor_path"]
            absolute = tf.train.Saver().save(sess, str(tmp_path / "abs" / "model"))
            assert absolute.replace(str(tmp_path), "<root>") == want["abs_path"]
            assert (tmp_path / "abs" / "checkpoint").read_text().replace(
                str(tmp_path), "<root>") == want["abs_checkpoint_file"]
            assert tf.train.latest_checkpoint(str(tmp_path / "abs")).replace(
                str(tmp_path), "<root>") == want["abs_latest"]
            sess.run(train)
            sess.run(train)
            if ckpt and ckpt.model_checkpoint_path:
                saver.restore(sess, ckpt.model_checkpoint_path)
            wv, bv, sv = sess.run([w, b, step])
            np.testing.assert_allclose(wv, want["values_restored"]["w"], rtol=1e-6)
            assert float(bv) == pytest.approx(want["values_restored"]["b"])
            assert int(sv) == want["values_restored"]["step"]


def test_saver_var_list_dict_restores_into_a_new_graph(ref, tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        saver = tf.train.Saver({"renamed": v})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "d" / "m"))
    assert path.replace(str(tmp_path), "<root>") == ref["saver"]["dict_path"]
    with tf.Graph().as_default():
        u = tf.Variable([0.0, 0.0], name="u")
        other = tf.Variable(5.0, name="other")
        saver = tf.train.Saver({"renamed": u})
        with tf.Session() as sess:
            sess.run(other.initializer)
            saver.restore(sess, path)  # restores u alone: no initializer needed for it
            assert sess.run(u).tolist() == ref["saver"]["dict_restored"]
            # the file is kernelgraph's own checkpoint, read without pickle
            assert sorted(kg_load(path + ".npz")) == ["renamed"]


def test_saver_var_list_as_a_list_and_refusals(tmp_path):
    with tf.Graph().as_default():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        saver = tf.train.Saver([a])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "m"))
            assert sorted(kg_load(path + ".npz")) == ["a"]
            with pytest.raises(ValueError, match="not a valid checkpoint"):
                saver.restore(sess, str(tmp_path / "missing"))
            with pytest.raises(ValueError, match="None"):
                saver.restore(sess, None)
            with pytest.raises(tf.errors.NotFoundError, match="Key b not found"):
                tf.train.Saver([b]).restore(sess, path)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver()
    with pytest.raises(ValueError, match="not a checkpoint state line"):
        (tmp_path / "bad").mkdir()
        (tmp_path / "bad" / "checkpoint").write_text("garbage\n")
        tf.train.get_checkpoint_state(str(tmp_path / "bad"))


# -- tf.metrics ----------------------------------------------------------------------------------
METRICS = {
    "accuracy": lambda lab, pred, sc, val: tf.metrics.accuracy(lab, pred),
    "mean": lambda lab, pred, sc, val: tf.metrics.mean(val),
    "precision": lambda lab, pred, sc, val: tf.metrics.precision(lab, pred),
    "recall": lambda lab, pred, sc, val: tf.metrics.recall(lab, pred),
    "auc": lambda lab, pred, sc, val: tf.metrics.auc(lab, sc),
    "auc_pr": lambda lab, pred, sc, val: tf.metrics.auc(lab, sc, curve="PR", num_thresholds=50),
    "mean_squared_error": lambda lab, pred, sc, val: tf.metrics.mean_squared_error(
        tf.cast(lab, tf.float32), sc),
    "mean_absolute_error": lambda lab, pred, sc, val: tf.metrics.mean_absolute_error(
        tf.cast(lab, tf.float32), sc),
}


@pytest.mark.parametrize("key", sorted(METRICS))
def test_metric_streams_match_tf1(ref, key):
    want = ref["metrics"][key]
    with tf.Graph().as_default():
        lab = tf.placeholder(tf.int64, [None])
        pred = tf.placeholder(tf.int64, [None])
        sc = tf.placeholder(tf.float32, [None])
        val = tf.placeholder(tf.float32, [None])
        value, update = METRICS[key](lab, pred, sc, val)
        assert (value.name, update.name) == (want["value_name"], want["update_name"])
        assert sorted(v.name for v in tf.local_variables()) == want["local_variables"]
        assert sorted(v.name for v in tf.get_collection(tf.GraphKeys.LOCAL_VARIABLES)) == \
            want["local_variables"]
        assert [v.name for v in tf.global_variables()] == want["global_variables"]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert float(sess.run(value)) == want["before"]
            for k in range(3):
                feed = {lab: ref["labels"][k], pred: ref["predictions"][k],
                        sc: ref["scores"][k], val: ref["values"][k]}
                assert float(sess.run(update, feed)) == pytest.approx(want["updates"][k],
                                                                      rel=1e-5)
                assert float(sess.run(value)) == pytest.approx(want["values"][k], rel=1e-5)


def test_metrics_with_weights_and_a_trained_model_beside_them(tmp_path):
    with tf.Graph().as_default():
        w = tf.Variable(1.0, name="w")
        acc, acc_op = tf.metrics.accuracy([1, 0, 1, 1], [1, 1, 1, 0],
                                          weights=[1.0, 0.0, 2.0, 1.0])
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            assert float(sess.run(acc_op)) == pytest.approx(3.0 / 4.0)
            assert float(sess.run(acc)) == pytest.approx(3.0 / 4.0)
            assert float(sess.run(w)) == 1.0
            path = saver.save(sess, str(tmp_path / "m"))
        assert sorted(kg_load(path + ".npz")) == ["w"]  # the metric's counts are not saved


def test_variables_a_program_makes_local(ref):
    with tf.Graph().as_default():
        seen = tf.Variable(0, trainable=False, name="seen",
                           collections=[tf.GraphKeys.LOCAL_VARIABLES])
        tf.get_variable("local_acc", [2], collections=[tf.GraphKeys.LOCAL_VARIABLES],
                        initializer=tf.zeros_initializer())
        plain = tf.Variable(1.0, name="plain")
        assert {"local": [v.name for v in tf.local_variables()],
                "global": [v.name for v in tf.global_variables()],
                "trainable": [v.name for v in tf.trainable_variables()]} == \
            ref["metrics"]["own_locals"]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert int(sess.run(seen.assign_add(2))) == 2
            with pytest.raises(tf.errors.FailedPreconditionError):
                sess.run(plain)  # the local initializer leaves the global ones alone
