"""Record what real TF1 (``tensorflow.compat.v1``, graph mode) writes and computes for the
graph-file and training-loop helpers: a small GraphDef (Placeholder, Const, MatMul, Add, Relu,
a VariableV2 read through Identity, Sum) with its outputs on a feed, the values of
``tf.train.exponential_decay`` (with and without ``staircase``), ``ExponentialMovingAverage``
over a few updates (with and without ``num_updates``), ``MonitoredTrainingSession`` with a
``StopAtStepHook``, and the SavedModel constants, into ``tf_graph_io.json`` (read by
tests/test_tf_graph_io.py and tests/test_tf_training_loop.py).

Run with an environment that has tensorflow-cpu (see README.md here)::

    python tests/recorded/record_tf_graph_io.py
"""

from __future__ import annotations

import base64
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
FEED = [[1.0, 2.0, -1.0], [0.5, -1.5, 2.0]]
W = [[0.5, -0.3], [0.8, 0.1], [-0.2, 0.4]]
B = [0.1, -0.2]


def graph_def(tf):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(tf.constant(W), name="w")
        b = tf.Variable(tf.constant(B), name="b")
        y = tf.nn.relu(tf.add(tf.matmul(x, w), b), name="y")
        s = tf.reduce_sum(y, axis=1, name="s")
        init = tf.global_variables_initializer()
        with tf.Session() as sess:
            sess.run(init)
            ys, ss = sess.run([y, s], {x: FEED})
    gd = g.as_graph_def()
    return {"graph_def": base64.b64encode(gd.SerializeToString()).decode(),
            "init": init.name, "ops": [n.op for n in gd.node], "names": [n.name for n in gd.node],
            "feed": FEED, "y": ys.tolist(), "s": ss.tolist()}


def frozen_cnn(tf):
    """A small CNN frozen as tutorials ship them (variables turned into constants), with a
    few shape ops beside it, and what it computes on one input."""
    import numpy as np

    rng = np.random.default_rng(0)
    image = rng.standard_normal((2, 8, 8, 1)).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 8, 8, 1], name="input")
        k = tf.Variable(rng.standard_normal((3, 3, 1, 4)).astype(np.float32), name="k")
        kb = tf.Variable(rng.standard_normal(4).astype(np.float32), name="kb")
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME"), kb))
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        h = tf.nn.avg_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        flat = tf.reshape(h, [-1, 16])
        w = tf.Variable(rng.standard_normal((16, 3)).astype(np.float32), name="w")
        probs = tf.nn.softmax(tf.matmul(flat, w), name="probs")
        top = tf.reduce_max(probs, axis=0)  # shape (3,), known: tf.expand_dims needs it
        side = tf.concat([tf.expand_dims(top, 0), tf.stack([top * 2.0], axis=0)], axis=0)
        side = tf.squeeze(tf.transpose(tf.reduce_max(side, axis=1, keepdims=True), [1, 0]),
                          [0], name="side")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            frozen = tf.graph_util.convert_variables_to_constants(
                sess, g.as_graph_def(), ["probs", "side"])
            want_p, want_s = sess.run([probs, side], {x: image})
    return {"graph_def": base64.b64encode(frozen.SerializeToString()).decode(),
            "ops": sorted({n.op for n in frozen.node}), "image": image.tolist(),
            "probs": want_p.tolist(), "side": want_s.tolist()}


def decay(tf):
    out = {}
    for staircase in (False, True):
        with tf.Graph().as_default():
            step = tf.Variable(0, trainable=False, dtype=tf.int64)
            lr = tf.train.exponential_decay(0.1, step, 3, 0.5, staircase=staircase)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                values = []
                for i in range(8):
                    sess.run(step.assign(i))
                    values.append(float(sess.run(lr)))
        out["staircase" if staircase else "smooth"] = values
        out["name"] = lr.name
    return out


def ema(tf):
    out = {}
    for num_updates in (False, True):
        with tf.Graph().as_default():
            v = tf.Variable([1.0, 2.0], name="v")
            step = tf.Variable(0, trainable=False, name="step")
            avg = tf.train.ExponentialMovingAverage(
                0.9, num_updates=step if num_updates else None)
            update = avg.apply([v])
            shadow = avg.average(v)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                seen = []
                for i, new in enumerate([[3.0, 0.0], [5.0, -1.0], [4.0, 4.0]]):
                    sess.run([v.assign(new), step.assign(i + 1)])
                    sess.run(update)
                    seen.append(sess.run(shadow).tolist())
            names = sorted(avg.variables_to_restore())
            restore = {k: val.op.name for k, val in avg.variables_to_restore().items()}
        out["num_updates" if num_updates else "plain"] = {
            "values": seen, "shadow_name": shadow.name, "average_name": avg.average_name(v),
            "restore_keys": names, "restore": restore}
    return out


def ema_tensor(tf):
    """ExponentialMovingAverage of a tensor (a loss): zeros to start, optionally debiased."""
    out = {}
    for debias in (False, True):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [], name="x")
            loss = tf.square(x, name="loss")
            avg = tf.train.ExponentialMovingAverage(0.9, zero_debias=debias, name="avg")
            update = avg.apply([loss])
            shadow = avg.average(loss)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                seen = []
                for value in [2.0, 1.0, 3.0]:
                    sess.run(update, {x: value})
                    seen.append(float(sess.run(shadow)))
            names = sorted(v.op.name for v in tf.global_variables())
        out["debiased" if debias else "plain"] = {
            "values": seen, "shadow_name": shadow.name, "variables": names}
    return out


def monitored(tf):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(1.0, name="w")
        train = tf.group(w.assign_add(1.0), step.assign_add(1))
        seen = []
        ckpt = tempfile.mkdtemp()
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=ckpt, hooks=[tf.train.StopAtStepHook(last_step=5)],
                save_summaries_steps=None, save_summaries_secs=None) as sess:
            while not sess.should_stop():
                sess.run(train)
                seen.append(len(seen) + 1)
        latest = tf.train.latest_checkpoint(ckpt)
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(1.0, name="w")
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt) as sess:
            restored = [int(sess.run(step)), float(sess.run(w))]
    return {"steps": seen, "latest": Path(latest).name, "restored": restored}


def saved_model(tf):
    """A SavedModel TF wrote (its saved_model.pb) and what its signature says."""
    export = os.path.join(tempfile.mkdtemp(), "export")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [2.0]], name="w")
        y = tf.matmul(x, w, name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            builder = tf.saved_model.builder.SavedModelBuilder(export)
            sig = tf.saved_model.signature_def_utils.build_signature_def(
                inputs={"x": tf.saved_model.utils.build_tensor_info(x)},
                outputs={"y": tf.saved_model.utils.build_tensor_info(y)},
                method_name=tf.saved_model.signature_constants.PREDICT_METHOD_NAME)
            builder.add_meta_graph_and_variables(
                sess, [tf.saved_model.tag_constants.SERVING],
                signature_def_map={"serving_default": sig})
            path = builder.save()
    path_type = type(path).__name__
    path = path.decode() if isinstance(path, bytes) else path
    with open(path, "rb") as f:
        data = f.read()
    with tf.Graph().as_default():
        with tf.Session() as sess:
            mg = tf.saved_model.loader.load(sess, ["serve"], export)
            s = mg.signature_def["serving_default"]
            out = sess.run(s.outputs["y"].name, {s.inputs["x"].name: [[1.0, 1.0]]})
    return {"saved_model_pb": base64.b64encode(data).decode(),
            "files": sorted(os.listdir(export)), "pb_name": os.path.basename(path),
            "path_type": path_type,
            "x_name": s.inputs["x"].name, "y_name": s.outputs["y"].name,
            "y_dtype": int(s.outputs["y"].dtype), "method": s.method_name,
            "y_shape": [d.size for d in s.outputs["y"].tensor_shape.dim], "y": out.tolist()}


def monitored_summaries(tf):
    """What MonitoredTrainingSession writes for a scalar summary every 2 steps."""
    ckpt = tempfile.mkdtemp()
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(1.0, name="w")
        tf.summary.scalar("w", w)
        train = tf.group(w.assign_add(1.0), step.assign_add(1))
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=ckpt, hooks=[tf.train.StopAtStepHook(last_step=7)],
                save_summaries_steps=2, log_step_count_steps=None) as sess:
            while not sess.should_stop():
                sess.run(train)
    seen = []
    for name in sorted(os.listdir(ckpt)):
        if name.startswith("events.out.tfevents"):
            for event in tf.train.summary_iterator(os.path.join(ckpt, name)):
                for value in event.summary.value:
                    seen.append([int(event.step), value.tag, float(value.simple_value)])
    files = sorted(n if not n.startswith("events.") else "events.out.tfevents..."
                   for n in os.listdir(ckpt))
    return {"w": seen, "files": files}


def main():
    import tensorflow as real

    tf = real.compat.v1
    tf.disable_v2_behavior()
    tf.disable_resource_variables()
    sm = tf.saved_model
    constants = {
        "CLASSIFY_INPUTS": sm.signature_constants.CLASSIFY_INPUTS,
        "CLASSIFY_METHOD_NAME": sm.signature_constants.CLASSIFY_METHOD_NAME,
        "CLASSIFY_OUTPUT_CLASSES": sm.signature_constants.CLASSIFY_OUTPUT_CLASSES,
        "CLASSIFY_OUTPUT_SCORES": sm.signature_constants.CLASSIFY_OUTPUT_SCORES,
        "DEFAULT_SERVING_SIGNATURE_DEF_KEY":
            sm.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY,
        "PREDICT_METHOD_NAME": sm.signature_constants.PREDICT_METHOD_NAME,
        "PREDICT_INPUTS": sm.signature_constants.PREDICT_INPUTS,
        "PREDICT_OUTPUTS": sm.signature_constants.PREDICT_OUTPUTS,
        "REGRESS_METHOD_NAME": sm.signature_constants.REGRESS_METHOD_NAME,
        "SERVING": sm.tag_constants.SERVING,
        "TRAINING": sm.tag_constants.TRAINING,
    }
    out = {"versions": {"tensorflow": real.__version__},
           "graph": graph_def(tf), "frozen_cnn": frozen_cnn(tf), "decay": decay(tf),
           "ema": ema(tf), "ema_tensor": ema_tensor(tf),
           "monitored": monitored(tf),
           "monitored_summaries": monitored_summaries(tf), "saved_model_constants": constants,
           "saved_model": saved_model(tf),
           "flags": flag_cases(sys.executable, "tensorflow.compat.v1")}
    (HERE / "tf_graph_io.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")



FLAG_CASES = [  # (name, mode, command-line arguments)
    ("defaults", "read", []),
    ("given", "read", ["--data_dir=/x", "--steps", "5", "--learning_rate=0.5", "--verbose",
                       "--noshuffle"]),
    ("jupyter", "read", ["-f", "/root/.local/share/jupyter/runtime/kernel-1.json"]),
    ("run_tolerates", "run", ["--steps=3", "--unknown=1", "pos"]),
    ("bad_value", "bad", ["--steps=many"]),
]


def flag_cases(python, module, env=None):
    """What tf_flags_program.py prints for each case, run by ``python`` with ``module``."""
    import subprocess

    out = {}
    for name, mode, args in FLAG_CASES:
        proc = subprocess.run(
            [python, str(HERE / "tf_flags_program.py"), *args], capture_output=True, text=True,
            env={**os.environ, **(env or {}), "TFMOD": module, "MODE": mode}, check=True)
        out[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


if __name__ == "__main__":
    main()
