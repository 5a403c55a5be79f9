"""TF1's graph files: GraphDef export and import (a kernelgraph graph round-trips; a GraphDef
that real TF wrote imports and computes what TF computed), ``tf.train.write_graph``, and
``.meta`` files (``Saver.save`` writes one; ``tf.train.import_meta_graph`` rebuilds the graph
and returns a Saver), checked against ``tests/recorded/tf_graph_io.json``."""

from __future__ import annotations

import base64
import os

import numpy as np
import pytest

import kernelgraph.compat.v1 as tf


def _tf_graph_def(recorded):
    rec = recorded("tf_graph_io")["graph"]
    gd = tf.GraphDef()
    gd.ParseFromString(base64.b64decode(rec["graph_def"]))
    return gd, rec


def test_graph_def_and_node_def_are_tfs_protobuf_classes():
    gd = tf.GraphDef()
    node = gd.node.add(name="a", op="Const")
    assert isinstance(node, tf.NodeDef)
    # TensorBoard's copies: TF's messages field for field, in the package 'tensorboard'
    assert type(gd).DESCRIPTOR.full_name == "tensorboard.GraphDef"
    assert [f.name for f in tf.NodeDef.DESCRIPTOR.fields][:5] == [
        "name", "op", "input", "device", "attr"]


def test_a_graph_def_written_by_tf_imports_and_computes_what_tf_computed(recorded):
    gd, rec = _tf_graph_def(recorded)
    assert [n.op for n in gd.node] == rec["ops"]  # VariableV2, Assign, Identity ...
    with tf.Graph().as_default() as g:
        y, s = tf.import_graph_def(gd, return_elements=["y:0", "s:0"])
        assert y.name == "import/y:0" and y.op.type == "Relu"
        init = g.get_operation_by_name("import/" + rec["init"])
        with tf.Session() as sess:
            sess.run(init)
            got_y, got_s = sess.run([y, s], {"import/x:0": rec["feed"]})
    np.testing.assert_allclose(got_y, rec["y"], rtol=1e-6)
    np.testing.assert_allclose(got_s, rec["s"], rtol=1e-6)


def test_a_frozen_cnn_written_by_tf_imports_and_classifies_as_tf(recorded, tmp_path):
    """The classic pattern: a frozen .pb read with FastGFile, imported, run by tensor name."""
    rec = recorded("tf_graph_io")["frozen_cnn"]
    path = tmp_path / "frozen.pb"
    path.write_bytes(base64.b64decode(rec["graph_def"]))
    assert {"Conv2D", "MaxPool", "AvgPool", "BiasAdd", "ConcatV2", "Pack", "ExpandDims",
            "Squeeze", "Transpose", "Max"} <= set(rec["ops"])
    with tf.gfile.FastGFile(str(path), "rb") as f:
        graph_def = tf.GraphDef()
        graph_def.ParseFromString(f.read())
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            probs, side = sess.run(["probs:0", "side:0"], {"input:0": rec["image"]})
        assert g.get_tensor_by_name("probs:0").op.type == "Softmax"
    np.testing.assert_allclose(probs, rec["probs"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(side, rec["side"], rtol=1e-5, atol=1e-6)


def test_import_with_input_map_and_no_prefix(recorded):
    gd, rec = _tf_graph_def(recorded)
    with tf.Graph().as_default() as g:
        fed = tf.constant(rec["feed"], name="data")
        y, = tf.import_graph_def(gd, input_map={"x:0": fed}, return_elements=["y:0"], name="")
        assert y.name == "y:0"
        with tf.Session() as sess:
            sess.run(g.get_operation_by_name("init"))
            np.testing.assert_allclose(sess.run(y), rec["y"], rtol=1e-6)


def test_a_kernelgraph_graph_round_trips_through_a_graph_def():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
        with tf.name_scope("layer"):
            h = tf.nn.softmax(tf.matmul(x, w) * 0.5)
        s = tf.reduce_sum(tf.reshape(h, [-1]), axis=0, name="s")
        c = tf.cast(tf.argmax(h, axis=1), tf.int32, name="c")
        init = tf.variables_initializer([w])
    gd = g.as_graph_def()
    assert [n.op for n in gd.node][:4] == ["Placeholder", "Const", "VariableV2", "Assign"]
    assert gd.node[0].attr["dtype"].type == 1  # DT_FLOAT
    feed = np.array([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0]], np.float32)
    with tf.Session(graph=g) as sess:
        sess.run(init)
        want = sess.run([h, s, c], {x: feed})
    with tf.Graph().as_default():
        h2, s2, c2 = tf.import_graph_def(
            gd, return_elements=[h.name, "s:0", "c"], name="copy")
        assert h2.name == "copy/" + h.name and c2.type == "Cast"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run([h2, s2, c2.outputs[0]], {"copy/x:0": feed})
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_write_graph_text_and_binary(tmp_path):
    with tf.Graph().as_default() as g:
        tf.add(tf.placeholder(tf.float32, name="a"), 1.0, name="b")
    text = tf.train.write_graph(g, str(tmp_path), "g.pbtxt")
    binary = tf.train.write_graph(g.as_graph_def(), str(tmp_path), "g.pb", as_text=False)
    assert text == os.path.join(str(tmp_path), "g.pbtxt")
    assert 'op: "AddV2"' in open(text).read()
    gd = tf.GraphDef()
    with tf.gfile.GFile(binary, "rb") as f:
        gd.ParseFromString(f.read())
    assert [(n.name, n.op) for n in gd.node] == [
        ("a", "Placeholder"), ("Const", "Const"), ("b", "AddV2")]


def test_an_unknown_op_type_is_refused_by_name():
    gd = tf.GraphDef()
    gd.node.add(name="q", op="FancyQuantumOp")
    with tf.Graph().as_default():
        with pytest.raises(NotImplementedError, match="'q' has op type 'FancyQuantumOp'"):
            tf.import_graph_def(gd)


def test_a_missing_input_and_a_bad_return_element_are_refused():
    gd = tf.GraphDef()
    gd.node.add(name="r", op="Relu", input=["nowhere"])
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="'r' reads 'nowhere'"):
            tf.import_graph_def(gd)
    with tf.Graph().as_default() as g:
        tf.constant(1.0, name="k")
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="'nope:0' not found"):
            tf.import_graph_def(g.as_graph_def(), return_elements=["nope:0"])
    with pytest.raises(TypeError, match="GraphDef proto"):
        tf.import_graph_def(b"not a proto")


def test_saver_writes_a_meta_graph_and_import_meta_graph_restores(tmp_path):
    """The classic tutorial: save in one program, import_meta_graph + restore in another."""
    feed = np.array([[1.0, 2.0, 3.0]], np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(tf.random_normal([3, 2], seed=1), name="w")
        y = tf.nn.relu(tf.matmul(x, w), name="y")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(y))
        tf.add_to_collection("train_op", train)
        saver = tf.train.Saver(max_to_keep=1)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
            sess.run(train, {x: feed})
            saver.save(sess, str(tmp_path / "model.ckpt"), global_step=2)
            want = sess.run(y, {x: feed})
    # max_to_keep removes the old checkpoint's .meta with its values, as TF1 does
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-2.meta",
                                            "model.ckpt-2.npz"]
    tf.reset_default_graph()
    with tf.Session() as sess:
        saver = tf.train.import_meta_graph(str(tmp_path / "model.ckpt-2.meta"))
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        graph = tf.get_default_graph()
        x2 = graph.get_tensor_by_name("x:0")
        y2 = graph.get_tensor_by_name("y:0")
        np.testing.assert_array_equal(sess.run(y2, {x2: feed}), want)
        assert [v.name for v in tf.trainable_variables()] == ["w:0"]
        train2, = tf.get_collection("train_op")  # collections come back
        sess.run(train2, {x2: feed})
        assert not np.array_equal(sess.run(y2, {x2: feed}), want)


def test_import_meta_graph_of_a_missing_file():
    with tf.Graph().as_default():
        with pytest.raises(OSError, match="does not exist"):
            tf.train.import_meta_graph("/nonexistent/model.meta")


def test_export_meta_graph_holds_variable_defs(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        tf.Variable(2.0, name="u", trainable=False)
        mg = tf.train.export_meta_graph(str(tmp_path / "m.meta"))
    assert len(mg.collection_def["variables"].bytes_list.value) == 2
    assert len(mg.collection_def["trainable_variables"].bytes_list.value) == 1
    with tf.Graph().as_default():
        assert tf.train.import_meta_graph(str(tmp_path / "m.meta")) is not None
        assert [v.name for v in tf.trainable_variables()] == ["v:0"]
        assert [v.name for v in tf.global_variables()] == ["v:0", "u:0"]


def test_each_meta_file_holds_the_graph_as_it_was_when_saved(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = saver.save(sess, str(tmp_path / "m"), global_step=1)
            again = saver.save(sess, str(tmp_path / "m"), global_step=2)
            tf.constant(2.0, name="later")
            tf.add_to_collection("extra", tf.constant(3.0, name="kept"))
            last = saver.save(sess, str(tmp_path / "m"), global_step=3)
    names = {}
    for path in (first, again, last):
        with tf.Graph().as_default() as g:
            tf.train.import_meta_graph(path + ".meta")
            names[path] = {op.name for op in g.get_operations()}
            extra = tf.get_collection("extra")
    assert names[first] == names[again] and "later" not in names[first]
    assert {"later", "kept"} <= names[last] and [t.name for t in extra] == ["kept:0"]


def test_the_sessions_graph_writes_itself(tmp_path):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, name="x")
        tf.square(x, name="y")
        with tf.Session() as sess:
            assert [n.name for n in sess.graph.as_graph_def().node] == [
                op.name for op in sess.graph.get_operations()]
            path = tf.train.write_graph(sess.graph_def, str(tmp_path), "graph.pb", False)
    gd = tf.GraphDef()
    with tf.gfile.FastGFile(path, "rb") as f:
        gd.ParseFromString(f.read())
    with tf.Graph().as_default():
        y, = tf.import_graph_def(gd, return_elements=["y:0"], name="")
        with tf.Session() as sess:
            assert sess.run(y, {"x:0": 3.0}) == 9.0


def test_nodes_a_file_cannot_hold_are_left_out_with_a_warning(tmp_path):
    """A dataset's iterator holds Python objects: its nodes, and those that read them, are
    left out of an import (with a warning naming them); the rest comes back."""
    with tf.Graph().as_default():
        data = tf.data.Dataset.from_tensor_slices(np.arange(4, dtype=np.float32)).batch(2)
        batch = data.make_one_shot_iterator().get_next()
        w = tf.Variable(2.0, name="w")
        tf.multiply(batch, w, name="scaled")
        tf.add_to_collection("outputs", tf.multiply(w, 3.0, name="tripled"))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default() as g:
        with pytest.warns(UserWarning, match="not imported .*'IteratorGetNext'.*file cannot"):
            saver = tf.train.import_meta_graph(path + ".meta")
        names = {op.name for op in g.get_operations()}
        assert "scaled" not in names and "tripled" in names
        with tf.Session() as sess:
            saver.restore(sess, path)
            assert sess.run(tf.get_collection("outputs")[0]) == 6.0
