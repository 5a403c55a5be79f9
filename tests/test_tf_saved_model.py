"""TF1's ``tf.saved_model``: a SavedModel written by ``SavedModelBuilder`` (TF's directory
layout and ``saved_model.pb``; variables in kernelgraph's own checkpoint format) is loaded
back by ``loader.load``; a ``saved_model.pb`` written by real TF is read (its tags and
signatures); the constants are TF's (``tests/recorded/tf_graph_io.json``)."""

from __future__ import annotations

import base64
import os

import numpy as np
import pytest

import kernelgraph.compat.v1 as tf
from kernelgraph.compat.v1.saved_model import saved_model_class


def test_constants_are_tfs(recorded):
    rec = recorded("tf_graph_io")["saved_model_constants"]
    sm = tf.saved_model
    for name, value in rec.items():
        where = sm.tag_constants if name in ("SERVING", "TRAINING") else sm.signature_constants
        assert getattr(where, name) == value, name
    assert sm.SERVING == rec["SERVING"]


def _export(export):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [2.0]], name="w")
        y = tf.matmul(x, w, name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(w.assign([[3.0], [-1.0]]))  # the session's values are what is saved
            builder = tf.saved_model.builder.SavedModelBuilder(export)
            sig = tf.saved_model.signature_def_utils.build_signature_def(
                inputs={"x": tf.saved_model.utils.build_tensor_info(x)},
                outputs={"y": tf.saved_model.utils.build_tensor_info(y)},
                method_name=tf.saved_model.signature_constants.PREDICT_METHOD_NAME)
            builder.add_meta_graph_and_variables(
                sess, [tf.saved_model.tag_constants.SERVING],
                signature_def_map={
                    tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: sig})
            return builder.save()


def test_builder_writes_tfs_layout_and_loader_reads_it_back(recorded, tmp_path):
    rec = recorded("tf_graph_io")["saved_model"]
    export = str(tmp_path / "export")
    path = _export(export)
    assert type(path).__name__ == rec["path_type"]  # bytes, as TF's
    assert os.path.basename(os.fsdecode(path)) == rec["pb_name"]
    assert sorted(os.listdir(export)) == rec["files"]  # saved_model.pb, variables/
    assert os.listdir(os.path.join(export, "variables")) == ["variables.npz"]
    with tf.Graph().as_default() as g, tf.Session() as sess:
        mg = tf.saved_model.loader.load(sess, ["serve"], export)
        s = mg.signature_def["serving_default"]
        assert (s.inputs["x"].name, s.outputs["y"].name) == (rec["x_name"], rec["y_name"])
        assert (s.method_name, s.outputs["y"].dtype) == (rec["method"], rec["y_dtype"])
        assert [d.size for d in s.outputs["y"].tensor_shape.dim] == rec["y_shape"]
        got = sess.run(s.outputs["y"].name, {s.inputs["x"].name: [[1.0, 1.0]]})
        assert g.get_tensor_by_name("w:0").op.type == "VariableV2"
    np.testing.assert_array_equal(got, [[2.0]])  # 3 - 1: the saved values, not the initial


def test_a_saved_model_pb_written_by_tf_is_read(recorded, tmp_path):
    rec = recorded("tf_graph_io")["saved_model"]
    model = saved_model_class()()
    model.ParseFromString(base64.b64decode(rec["saved_model_pb"]))
    assert model.saved_model_schema_version == 1
    mg, = model.meta_graphs
    assert list(mg.meta_info_def.tags) == ["serve"]
    s = mg.signature_def["serving_default"]
    assert (s.inputs["x"].name, s.outputs["y"].name, s.method_name) == (
        rec["x_name"], rec["y_name"], rec["method"])
    # TF's Saver nodes are left out of an import (kernelgraph's Saver takes their place)
    with tf.Graph().as_default():
        y, = tf.import_graph_def(mg.graph_def, return_elements=["y:0"], name="")
        assert y.op.type == "MatMul"
        with pytest.raises(ValueError, match="'save/RestoreV2' was not imported: TF's Saver"):
            tf.import_graph_def(mg.graph_def, return_elements=["save/RestoreV2"])
    # its graph imports; its variables are in TF's format, which is refused by name
    export = tmp_path / "tf_export"
    (export / "variables").mkdir(parents=True)
    (export / "saved_model.pb").write_bytes(base64.b64decode(rec["saved_model_pb"]))
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(OSError, match="not in kernelgraph's checkpoint format"):
            tf.saved_model.loader.load(sess, ["serve"], str(export))


def test_simple_save_and_wrong_tags(tmp_path):
    export = str(tmp_path / "m")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.square(x, name="y")
        with tf.Session() as sess:
            tf.saved_model.simple_save(sess, export, {"x": x}, {"y": y})
    assert tf.saved_model.loader.maybe_saved_model_directory(export)
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(RuntimeError, match="could not be found in SavedModel"):
            tf.saved_model.loader.load(sess, ["train"], export)
        mg = tf.saved_model.loader.load(sess, ["serve"], export)
        s = mg.signature_def["serving_default"]
        assert sess.run(s.outputs["y"].name, {s.inputs["x"].name: [3.0]}) == [9.0]
    with pytest.raises(AssertionError, match="already exists, and isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(export)
