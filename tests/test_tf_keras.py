"""TF1 graph code's ``tf.keras`` and ``tf.feature_column`` (kernelgraph/compat/v1/keras.py)
against legacy Keras 2 in TF 2.21's graph mode, recorded in tests/recorded/tf_keras.json by
record_tf_keras.py: layers called on placeholders (values, shapes, variable names), the
feature columns' input layer, and a tiny Sequential fitted from fixed initial weights with
SGD and Adam (each epoch's loss and accuracy, what a Callback saw, predict and evaluate)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import kernelgraph.compat.v1 as tf

_spec = importlib.util.spec_from_file_location(
    "record_tf_keras", Path(__file__).parent / "recorded" / "record_tf_keras.py")
_record = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_record)
D = _record.data()


@pytest.fixture(scope="module")
def rec(recorded):
    return recorded("tf_keras")


def test_layers_on_placeholders_and_feature_columns(rec):
    const = tf.constant_initializer
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        h = tf.keras.layers.Dense(4, activation="relu", kernel_initializer=const(D["k1"]))(x)
        y = tf.keras.layers.Dense(2, kernel_initializer=const(D["k2"]))(h)
        im = tf.placeholder(tf.float32, [None, 6, 6, 2])
        c = tf.keras.layers.Conv2D(3, 3, activation="tanh", kernel_initializer=const(D["kc"]))(im)
        f = tf.keras.layers.Flatten()(tf.keras.layers.MaxPooling2D()(c))
        cols = [tf.feature_column.numeric_column("b", shape=(2,)),
                tf.feature_column.numeric_column("a")]
        feats = {"a": tf.placeholder(tf.float32, [None]),
                 "b": tf.placeholder(tf.float32, [None, 2])}
        inp = tf.feature_column.input_layer(feats, cols)
        want = rec["layers"]
        assert f.shape.as_list() == want["f_shape"]
        assert [v.name for v in tf.global_variables()] == want["variables"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run({"y": y, "f": f, "inp": inp},
                           {x: D["x"], im: D["img"], feats["a"]: D["x"][:, 0],
                            feats["b"]: D["x"][:, 1:]})
    for k in ("y", "f", "inp"):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6)


def _fit(last, loss, y_fit, metrics=None, optimizer=None):
    const = tf.constant_initializer
    with tf.Graph().as_default():
        model = tf.keras.Sequential()
        model.add(tf.keras.layers.Dense(4, activation="tanh", input_shape=(3,),
                                        kernel_initializer=const(D["k1"])))
        model.add(last())
        model.compile(optimizer=optimizer or tf.keras.optimizers.SGD(learning_rate=0.1),
                      loss=loss, metrics=metrics)
        seen = []

        class Seen(tf.keras.callbacks.Callback):
            def on_epoch_end(self, epoch, logs=None):
                seen.append([epoch, sorted(logs)])

        hist = model.fit(D["x"], y_fit, batch_size=4, epochs=3, shuffle=False, verbose=0,
                         callbacks=[Seen()])
        return {"history": hist.history, "seen": seen, "predict": model.predict(D["x"]),
                "evaluate": model.evaluate(D["x"], y_fit, verbose=0)}


def _dense2():
    return tf.keras.layers.Dense(2, kernel_initializer=tf.constant_initializer(D["k2"]))


@pytest.mark.parametrize("case", ["mse", "softmax", "adam"])
def test_sequential_fit_predict_evaluate(rec, case):
    if case == "mse":
        got = _fit(_dense2, "mse", D["y"])
    elif case == "adam":
        got = _fit(_dense2, "mse", D["y"], optimizer="adam")
    else:
        got = _fit(lambda: tf.keras.layers.Dense(
            3, activation="softmax", kernel_initializer=tf.constant_initializer(D["k3"])),
            "sparse_categorical_crossentropy", D["labels"], metrics=["accuracy"],
            optimizer="sgd")
    want = rec[case]
    assert sorted(got["history"]) == sorted(want["history"])
    for k, v in want["history"].items():
        np.testing.assert_allclose(got["history"][k], v, rtol=1e-5)
    assert got["seen"] == want["seen"]
    np.testing.assert_allclose(got["predict"], want["predict"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["evaluate"], want["evaluate"], rtol=1e-5)


def test_fit_shuffles_with_numpys_generator_and_needs_compile():
    def losses(seed):
        np.random.seed(seed)
        with tf.Graph().as_default():
            model = tf.keras.Sequential([tf.keras.layers.Dense(
                2, input_shape=(3,), kernel_initializer=tf.constant_initializer(D["k1"][:, :2]))])
            model.compile(optimizer="sgd", loss="mse")
            return model.fit(D["x"], D["y"], batch_size=3, epochs=2, verbose=0).history["loss"]

    assert losses(1) == losses(1) != losses(2)
    with tf.Graph().as_default():
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_dim=3)])
        with pytest.raises(RuntimeError, match="compile"):
            model.fit(D["x"], D["y"])
        with pytest.raises(ValueError, match="Unknown activation"):
            tf.keras.layers.Dense(2, activation="swishy")


def test_a_layer_called_twice_shares_its_variables():
    with tf.Graph().as_default():
        layer = tf.keras.layers.Dense(3)
        a, b = tf.placeholder(tf.float32, [None, 2]), tf.placeholder(tf.float32, [None, 2])
        layer(a), layer(b)
        assert [v.name for v in tf.trainable_variables()] == ["dense/kernel:0", "dense/bias:0"]


def test_simple_rnn_cell_keras_calls_and_static_rnn(rec):
    const = tf.constant_initializer
    want = rec["simple_rnn_cell"]
    with tf.Graph().as_default():
        cell = tf.keras.layers.SimpleRNNCell(5, kernel_initializer=const(D["ck"]),
                                             recurrent_initializer=const(D["rk"]),
                                             bias_initializer=const(D["cb"]))
        xs = tf.placeholder(tf.float32, [4, None, 3])
        h = cell.get_initial_state(inputs=xs[0], dtype=tf.float32)
        hs = []
        for t in range(4):
            step, state = cell(xs[t], [h])
            assert isinstance(state, list) and len(state) == 1
            h = state[0]
            hs.append(step)
        outs, last = tf.nn.static_rnn(cell, tf.unstack(xs), dtype=tf.float32)
        assert [v.name for v in tf.global_variables()] == want["variables"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run({"hs": hs, "static": outs, "last": last}, {xs: D["seq"]})
    for k in ("hs", "static", "last"):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6)


def test_simple_rnn_cells_recurrent_kernel_starts_orthogonal():
    with tf.Graph().as_default():
        cell = tf.keras.layers.SimpleRNNCell(6)
        x = tf.placeholder(tf.float32, [None, 2])
        cell(x, cell.zero_state(3, tf.float32))
        (rk,) = [v for v in tf.global_variables() if "recurrent_kernel" in v.name]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            r = sess.run(rk)
    np.testing.assert_allclose(r.T @ r, np.eye(6), atol=1e-5)


def test_a_model_without_input_shape_is_built_from_the_data(rec):
    """Keras builds such a model at the first fit, from the data's shape: the same losses as
    the recorded model that named its input_shape."""
    const = tf.constant_initializer
    with tf.Graph().as_default():
        model = tf.keras.models.Sequential([
            tf.keras.layers.Dense(4, activation="tanh", kernel_initializer=const(D["k1"])),
            tf.keras.layers.Dense(2, kernel_initializer=const(D["k2"]))])
        model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.1), loss="mse")
        hist = model.fit(D["x"], D["y"], batch_size=4, epochs=3, shuffle=False, verbose=0)
        np.testing.assert_allclose(hist.history["loss"], rec["mse"]["history"]["loss"],
                                   rtol=1e-5)
        np.testing.assert_allclose(model.predict(D["x"]), rec["mse"]["predict"], rtol=1e-5,
                                   atol=1e-6)
