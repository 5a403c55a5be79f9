"""Record what real TF1 (``tensorflow.compat.v1``, graph mode) computes for ``tf.train``'s
optimizers (a few steps of each on one small problem), what ``tf.train.Saver`` returns and
writes (the paths, the ``checkpoint`` state file) and what ``tf.metrics`` reports over a few
update batches, into ``tf_train.json`` (read by tests/test_tf_train.py).

Run with an environment that has tensorflow-cpu (see README.md here)::

    python tests/recorded/record_tf_train.py
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

HERE = Path(__file__).parent

X = [[1.0, 2.0, -1.0], [0.5, -1.5, 2.0], [-2.0, 0.3, 0.7], [1.2, 0.1, -0.4]]
Y = [1.0, -2.0, 0.5, 3.0]
W0 = [0.5, -0.3, 0.8]
B0 = 0.1
STEPS = 4

# (name, class, args, kwargs); "GS" in kwargs stands for the global step variable.
OPTIMIZERS = [
    ("rmsprop", "RMSPropOptimizer", [0.1], {}),
    ("rmsprop_momentum", "RMSPropOptimizer", [0.05],
     {"decay": 0.8, "momentum": 0.5, "epsilon": 1e-6}),
    ("rmsprop_centered", "RMSPropOptimizer", [0.05],
     {"momentum": 0.3, "centered": True, "epsilon": 1e-6}),
    ("adagrad", "AdagradOptimizer", [0.2], {}),
    ("adagrad_initial", "AdagradOptimizer", [0.2], {"initial_accumulator_value": 0.5}),
    ("adadelta", "AdadeltaOptimizer", [1.0], {}),
    ("adadelta_rho", "AdadeltaOptimizer", [0.5], {"rho": 0.9, "epsilon": 1e-6}),
    ("ftrl", "FtrlOptimizer", [0.3], {}),
    ("ftrl_l1_l2", "FtrlOptimizer", [0.3],
     {"l1_regularization_strength": 0.01, "l2_regularization_strength": 0.02}),
    ("ftrl_power_shrinkage", "FtrlOptimizer", [0.3],
     {"learning_rate_power": -0.7, "initial_accumulator_value": 0.2,
      "l1_regularization_strength": 0.001, "l2_shrinkage_regularization_strength": 0.05,
      "beta": 0.1}),
    ("proximal_gd", "ProximalGradientDescentOptimizer", [0.1], {}),
    ("proximal_gd_l1_l2", "ProximalGradientDescentOptimizer", [0.1],
     {"l1_regularization_strength": 0.05, "l2_regularization_strength": 0.1}),
    ("proximal_gd_l2", "ProximalGradientDescentOptimizer", [0.1],
     {"l2_regularization_strength": 0.3}),
    ("proximal_adagrad", "ProximalAdagradOptimizer", [0.2], {}),
    ("proximal_adagrad_l1_l2", "ProximalAdagradOptimizer", [0.2],
     {"initial_accumulator_value": 0.3, "l1_regularization_strength": 0.05,
      "l2_regularization_strength": 0.1}),
    ("adagrad_da", "AdagradDAOptimizer", [0.2], {"global_step": "GS"}),
    ("adagrad_da_l1_l2", "AdagradDAOptimizer", [0.2],
     {"global_step": "GS", "l1_regularization_strength": 0.01,
      "l2_regularization_strength": 0.02}),
    ("momentum_nesterov", "MomentumOptimizer", [0.1], {"momentum": 0.9, "use_nesterov": True}),
    ("momentum", "MomentumOptimizer", [0.1], {"momentum": 0.9}),
    ("adam", "AdamOptimizer", [0.1], {}),
    ("gradient_descent", "GradientDescentOptimizer", [0.1], {}),
]


def _problem(tf):
    x = tf.constant(X)
    y = tf.constant(Y)
    w = tf.Variable(W0, name="w")
    b = tf.Variable(B0, name="b")
    loss = tf.reduce_mean(tf.square(tf.reduce_sum(x * w, axis=1) + b - y))
    return w, b, loss


def optimizers(tf):
    out = {}
    for key, cls, args, kwargs in OPTIMIZERS:
        with tf.Graph().as_default():
            w, b, loss = _problem(tf)
            gs = tf.train.get_or_create_global_step()
            kw = {k: (gs if v == "GS" else v) for k, v in kwargs.items()}
            opt = getattr(tf.train, cls)(*args, **kw)
            train = opt.minimize(loss, global_step=gs)
            slots = {name: [opt.get_slot(v, name).name for v in (w, b)]
                     for name in opt.get_slot_names()}
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                steps = []
                for _ in range(STEPS):
                    sess.run(train)
                    wv, bv, gv = sess.run([w, b, gs])
                    steps.append({"w": wv.tolist(), "b": float(bv), "global_step": int(gv)})
                slot_values = {name: sess.run(opt.get_slot(w, name)).tolist()
                               for name in opt.get_slot_names()}
        out[key] = {"class": cls, "args": args, "kwargs": kwargs, "steps": steps,
                    "slot_names": opt.get_slot_names(), "slot_variable_names": slots,
                    "slot_values_w": slot_values}
    # compute_gradients / apply_gradients with a var_list: only w is trained
    with tf.Graph().as_default():
        w, b, loss = _problem(tf)
        opt = tf.train.RMSPropOptimizer(0.1)
        train = opt.apply_gradients(opt.compute_gradients(loss, var_list=[w]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                sess.run(train)
            wv, bv = sess.run([w, b])
        out["rmsprop_var_list"] = {"w": wv.tolist(), "b": float(bv),
                                   "slot_of_b": opt.get_slot(b, "rms") is None}
    with tf.Graph().as_default():  # what a train op is, and its name
        w = tf.Variable(1.0, name="w")
        gs = tf.train.get_or_create_global_step()
        names = [tf.train.RMSPropOptimizer(0.1).minimize(w * w).name,
                 tf.train.RMSPropOptimizer(0.1).minimize(w * w, global_step=gs).name,
                 tf.train.AdamOptimizer(0.1).minimize(w * w, name="train").name]
        kind = type(tf.train.AdamOptimizer(0.1).minimize(w * w)).__name__
        out["train_op_names"] = {"names": names, "type": kind}
    return out


def saver(tf):
    out = {}
    with tempfile.TemporaryDirectory() as root:
        os.chdir(root)
        with tf.Graph().as_default():
            w, b, loss = _problem(tf)
            step = tf.train.get_or_create_global_step()
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
            s = tf.train.Saver(max_to_keep=2)
            paths = []
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                out["state_before"] = tf.train.get_checkpoint_state("ckpt") is None
                out["latest_before"] = tf.train.latest_checkpoint("ckpt")
                for k in range(3):
                    sess.run(train)
                    paths.append(s.save(sess, "ckpt/model.ckpt", global_step=(k + 1) * 10))
                out["paths"] = paths
                with open("ckpt/checkpoint") as f:
                    out["checkpoint_file"] = f.read()
                out["files"] = sorted(os.listdir("ckpt"))
                ckpt = tf.train.get_checkpoint_state("ckpt")
                out["state"] = {"model_checkpoint_path": ckpt.model_checkpoint_path,
                                "all_model_checkpoint_paths":
                                    list(ckpt.all_model_checkpoint_paths)}
                out["latest"] = tf.train.latest_checkpoint("ckpt")
                out["exists"] = {p: tf.train.checkpoint_exists(p) for p in paths}
                out["last_checkpoints"] = s.last_checkpoints
                out["values_at_save"] = {"w": sess.run(w).tolist(), "b": float(sess.run(b))}
                out["no_step_path"] = tf.train.Saver().save(sess, "other/model.ckpt")
                with open("other/checkpoint") as f:
                    out["no_step_checkpoint_file"] = f.read()
                out["step_tensor_path"] = tf.train.Saver().save(sess, "third/model",
                                                                global_step=step)
                abs_path = tf.train.Saver().save(sess, os.path.join(root, "abs", "model"))
                with open("abs/checkpoint") as f:
                    out["abs_checkpoint_file"] = f.read().replace(root, "<root>")
                out["abs_latest"] = tf.train.latest_checkpoint(
                    os.path.join(root, "abs")).replace(root, "<root>")
                out["abs_path"] = abs_path.replace(root, "<root>")
                sess.run(train)
                sess.run(train)
                s.restore(sess, ckpt.model_checkpoint_path)
                out["values_restored"] = {"w": sess.run(w).tolist(), "b": float(sess.run(b)),
                                          "step": int(sess.run(step))}
        with tf.Graph().as_default():  # a Saver of a var_list dict, restored by a new graph
            v = tf.Variable([1.0, 2.0], name="v")
            s = tf.train.Saver({"renamed": v})
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                out["dict_path"] = s.save(sess, os.path.join(root, "d", "m"))
        with tf.Graph().as_default():
            u = tf.Variable([0.0, 0.0], name="u")
            s = tf.train.Saver({"renamed": u})
            with tf.Session() as sess:
                s.restore(sess, os.path.join(root, "d", "m"))
                out["dict_restored"] = sess.run(u).tolist()
        out["dict_path"] = out["dict_path"].replace(root, "<root>")
        os.chdir(HERE)
    return out


LABELS = [[0, 1, 1, 0], [1, 1, 0, 1], [0, 0, 1, 1]]
PREDS = [[0, 1, 0, 0], [1, 0, 0, 1], [1, 0, 1, 1]]
SCORES = [[0.1, 0.8, 0.4, 0.3], [0.9, 0.35, 0.2, 0.7], [0.6, 0.05, 0.55, 0.95]]
VALUES = [[1.0, 2.0, 3.0], [4.0, -1.0, 0.5], [2.5, 2.5, 0.0]]


def metrics(tf):
    out = {}
    cases = {
        "accuracy": lambda lab, pred, sc, val: tf.metrics.accuracy(lab, pred),
        "mean": lambda lab, pred, sc, val: tf.metrics.mean(val),
        "precision": lambda lab, pred, sc, val: tf.metrics.precision(lab, pred),
        "recall": lambda lab, pred, sc, val: tf.metrics.recall(lab, pred),
        "auc": lambda lab, pred, sc, val: tf.metrics.auc(lab, sc),
        "auc_pr": lambda lab, pred, sc, val: tf.metrics.auc(lab, sc, curve="PR",
                                                            num_thresholds=50),
        "mean_squared_error": lambda lab, pred, sc, val: tf.metrics.mean_squared_error(
            tf.cast(lab, tf.float32), sc),
        "mean_absolute_error": lambda lab, pred, sc, val: tf.metrics.mean_absolute_error(
            tf.cast(lab, tf.float32), sc),
    }
    for key, make in cases.items():
        with tf.Graph().as_default():
            lab = tf.placeholder(tf.int64, [None])
            pred = tf.placeholder(tf.int64, [None])
            sc = tf.placeholder(tf.float32, [None])
            val = tf.placeholder(tf.float32, [None])
            value, update = make(lab, pred, sc, val)
            names = sorted(v.name for v in tf.local_variables())
            globals_ = [v.name for v in tf.global_variables()]
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                before = float(sess.run(value))
                updates, values = [], []
                for k in range(3):
                    feed = {lab: LABELS[k], pred: PREDS[k], sc: SCORES[k], val: VALUES[k]}
                    updates.append(float(sess.run(update, feed)))
                    values.append(float(sess.run(value)))
        out[key] = {"local_variables": names, "global_variables": globals_,
                    "before": before, "updates": updates, "values": values,
                    "value_name": value.name, "update_name": update.name}
    with tf.Graph().as_default():  # local variables made by the program itself
        tf.Variable(0, trainable=False, name="seen", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        tf.get_variable("local_acc", [2], collections=[tf.GraphKeys.LOCAL_VARIABLES],
                        initializer=tf.zeros_initializer())
        tf.Variable(1.0, name="plain")
        out["own_locals"] = {
            "local": [v.name for v in tf.local_variables()],
            "global": [v.name for v in tf.global_variables()],
            "trainable": [v.name for v in tf.trainable_variables()]}
    return out


def main():
    import tensorflow as tf2  # noqa: F401 - its version is recorded
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    result = {"tensorflow": tf2.__version__, "X": X, "Y": Y, "W0": W0, "B0": B0,
              "labels": LABELS, "predictions": PREDS, "scores": SCORES, "values": VALUES,
              "optimizers": optimizers(tf), "saver": saver(tf), "metrics": metrics(tf)}
    (HERE / "tf_train.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n",
                                        encoding="utf-8")


if __name__ == "__main__":
    main()
