"""Record TF1 graph code's ``tf.keras`` (legacy Keras 2, ``TF_USE_LEGACY_KERAS=1``, eager
execution off) and ``tf.feature_column`` into ``tf_keras.json`` (read by
tests/test_tf_keras.py): layers called on placeholders (values, shapes and variable names),
and a tiny ``Sequential`` fitted with SGD from fixed initial weights (each epoch's loss, what
a Callback saw, ``predict`` and ``evaluate``), unshuffled so that the batches are known.

Run with an environment that has TensorFlow and tf-keras (see README.md here)::

    TF_USE_LEGACY_KERAS=1 python tests/recorded/record_tf_keras.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


def data():
    """Inputs, targets and initial weights every case uses (the tests rebuild them)."""
    rng = np.random.default_rng(11)
    return {
        "x": rng.uniform(-1, 1, (10, 3)).astype(np.float32),
        "y": rng.uniform(-1, 1, (10, 2)).astype(np.float32),
        "labels": rng.integers(0, 3, 10),
        "k1": rng.uniform(-0.5, 0.5, (3, 4)).astype(np.float32),
        "k2": rng.uniform(-0.5, 0.5, (4, 2)).astype(np.float32),
        "k3": rng.uniform(-0.5, 0.5, (4, 3)).astype(np.float32),
        "img": rng.uniform(0, 1, (2, 6, 6, 2)).astype(np.float32),
        "kc": rng.uniform(-0.5, 0.5, (3, 3, 2, 3)).astype(np.float32),
        "seq": rng.uniform(-1, 1, (4, 2, 3)).astype(np.float32),
        "rk": rng.uniform(-0.5, 0.5, (5, 5)).astype(np.float32),
        "ck": rng.uniform(-0.5, 0.5, (3, 5)).astype(np.float32),
        "cb": rng.uniform(-0.5, 0.5, (5,)).astype(np.float32),
    }


def main():
    assert os.environ.get("TF_USE_LEGACY_KERAS") == "1", "set TF_USE_LEGACY_KERAS=1"
    import tensorflow as tf

    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    d = data()
    import tf_keras

    out = {"tensorflow": tf.__version__, "keras": tf_keras.__version__}
    const = tf1.constant_initializer

    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [None, 3])
        h = tf.keras.layers.Dense(4, activation="relu", kernel_initializer=const(d["k1"]))(x)
        y = tf.keras.layers.Dense(2, kernel_initializer=const(d["k2"]))(h)
        im = tf1.placeholder(tf.float32, [None, 6, 6, 2])
        c = tf.keras.layers.Conv2D(3, 3, activation="tanh", kernel_initializer=const(d["kc"]))(im)
        p = tf.keras.layers.MaxPooling2D()(c)
        f = tf.keras.layers.Flatten()(p)
        cols = [tf.feature_column.numeric_column("b", shape=(2,)),
                tf.feature_column.numeric_column("a")]
        feats = {"a": tf1.placeholder(tf.float32, [None]),
                 "b": tf1.placeholder(tf.float32, [None, 2])}
        inp = tf1.feature_column.input_layer(feats, cols)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            got = sess.run({"y": y, "f": f, "inp": inp},
                           {x: d["x"], im: d["img"], feats["a"]: d["x"][:, 0],
                            feats["b"]: d["x"][:, 1:]})
        out["layers"] = {k: v.tolist() for k, v in got.items()}
        out["layers"]["f_shape"] = f.shape.as_list()
        out["layers"]["variables"] = [v.name for v in tf1.global_variables()]

    with tf1.Graph().as_default():
        cell = tf.keras.layers.SimpleRNNCell(5, kernel_initializer=const(d["ck"]),
                                             recurrent_initializer=const(d["rk"]),
                                             bias_initializer=const(d["cb"]))
        xs = tf1.placeholder(tf.float32, [4, None, 3])
        h = cell.get_initial_state(inputs=xs[0], dtype=tf.float32)
        hs = []
        for t in range(4):  # Keras's calling convention: cell(x, [h]) -> (out, [h'])
            step, state = cell(xs[t], [h])
            h = state[0]
            hs.append(step)
        outs, last = tf1.nn.static_rnn(cell, tf.unstack(xs), dtype=tf.float32)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            got = sess.run({"hs": hs, "static": outs, "last": last}, {xs: d["seq"]})
        out["simple_rnn_cell"] = {k: np.asarray(v).tolist() for k, v in got.items()}
        out["simple_rnn_cell"]["variables"] = [v.name for v in tf1.global_variables()]

    def fit_case(last, loss, y_fit, metrics=None, optimizer=None):
        with tf1.Graph().as_default():
            model = tf.keras.Sequential()
            model.add(tf.keras.layers.Dense(4, activation="tanh", input_shape=(3,),
                                            kernel_initializer=const(d["k1"])))
            model.add(last())
            model.compile(optimizer=optimizer or tf.keras.optimizers.legacy.SGD(learning_rate=0.1),
                          loss=loss, metrics=metrics)
            seen = []

            class Seen(tf.keras.callbacks.Callback):
                def on_epoch_end(self, epoch, logs=None):
                    seen.append([epoch, sorted(logs)])

            hist = model.fit(d["x"], y_fit, batch_size=4, epochs=3, shuffle=False, verbose=0,
                             callbacks=[Seen()])
            ev = model.evaluate(d["x"], y_fit, verbose=0)
            return {"history": {k: [float(v) for v in vs] for k, vs in hist.history.items()},
                    "seen": seen, "predict": model.predict(d["x"]).tolist(),
                    "evaluate": np.asarray(ev, np.float64).tolist()}

    def dense2():
        return tf.keras.layers.Dense(2, kernel_initializer=const(d["k2"]))

    out["mse"] = fit_case(dense2, "mse", d["y"])
    out["softmax"] = fit_case(
        lambda: tf.keras.layers.Dense(3, activation="softmax", kernel_initializer=const(d["k3"])),
        "sparse_categorical_crossentropy", d["labels"], metrics=["accuracy"], optimizer="sgd")
    out["adam"] = fit_case(dense2, "mse", d["y"], optimizer="adam")
    (HERE / "tf_keras.json").write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    main()
