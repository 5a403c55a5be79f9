"""TensorBoard's files: TF1's ``tf.summary`` ops and ``tf.summary.FileWriter``, and
PyTorch's ``SummaryWriter`` (``kernelgraph.utils.tensorboard``).

The summaries a Session fetches are compared with the Summary protobufs real TF1 computed
for the same inputs (tests/recorded/tf_summary.json), and what ``SummaryWriter`` writes with
what real PyTorch wrote (torch_summary.json): tags, values, histogram buckets, image sizes
and pixels (decoded: two PNG encoders may compress alike pixels differently), text. Every
event file is read back with TensorBoard's own readers (``EventAccumulator`` and its raw
record loader), the graph included: node names with their scopes, op types and inputs.
"""

from __future__ import annotations

import base64
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from google.protobuf.json_format import MessageToDict
from PIL import Image
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.summary_pb2 import Summary

import kernelgraph as kg
import kernelgraph.compat.v1 as tf
from kernelgraph import nn
from kernelgraph.ops import OPS
from kernelgraph.utils.tensorboard import SummaryWriter

SUMMARY_OPS = ("scalar_summary", "histogram_summary", "image_summary", "tensor_summary_v2",
               "merge_summary")


def _decoded(summary: dict) -> dict:
    """A Summary's JSON form with each PNG replaced by its pixels."""
    for value in summary.get("value", []):
        image = value.get("image")
        if image is not None:
            png = base64.b64decode(image.pop("encodedImageString"))
            pixels = np.asarray(Image.open(io.BytesIO(png)))
            image["pixels"] = (pixels[..., None] if pixels.ndim == 2 else pixels).tolist()
    return summary


def _as_dict(serialized: bytes) -> dict:
    assert type(serialized) is bytes  # noqa: E721 - what TF1's Session returns
    return _decoded(MessageToDict(Summary.FromString(serialized)))


def _close(ours: dict, theirs: dict) -> None:
    """Equal, but a scalar's float32 value (a mean summed in another order) within 1 ulp."""
    for a, b in zip(ours["value"], theirs["value"], strict=True):
        if "simpleValue" in b:
            assert a["tag"] == b["tag"]
            assert np.float32(a["simpleValue"]) == pytest.approx(np.float32(b["simpleValue"]),
                                                                  rel=2e-7)
        else:
            assert a == b


def _tf_program(want):
    """The recording's program in kernelgraph: (graph, placeholder, summaries)."""
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, shape=[None], name="x")
        with tf.name_scope("train"):
            loss = tf.summary.scalar("loss", tf.reduce_mean(x))
            hist = tf.summary.histogram("weights", x)
        lr = tf.summary.scalar("lr", tf.constant(0.01))
        note = tf.summary.text("note", tf.constant("hello <b>world</b>"))
        images = {}
        for key, pixels in want["images"].items():
            dtype = tf.uint8 if key == "uint8" else tf.float32
            images[key] = tf.summary.image(key, tf.constant(np.array(pixels), dtype=dtype),
                                           max_outputs=3)
        two = tf.summary.image("two", tf.constant(np.array(want["images"]["signed"]),
                                                  tf.float32), max_outputs=1)
        merged = tf.summary.merge_all()
        pair = tf.summary.merge([loss, lr])
    return g, x, dict(loss=loss, hist=hist, lr=lr, note=note, images=images, two=two,
                      merged=merged, pair=pair)


def test_tf_summaries_are_tf1s(recorded):
    want = recorded("tf_summary")
    g, x, s = _tf_program(want)
    feed = {x: want["values"]}
    with g.as_default(), tf.Session() as sess:
        got = {"loss": sess.run(s["loss"], feed), "histogram": sess.run(s["hist"], feed),
               "lr": sess.run(s["lr"]), "text": sess.run(s["note"]),
               "merge_all": sess.run(s["merged"], feed), "merge": sess.run(s["pair"], feed),
               "one_of_two_images": sess.run(s["two"])}
        images = {k: _as_dict(sess.run(v)) for k, v in s["images"].items()}
        names = [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)]
    theirs = want["summaries"]
    for key, value in got.items():
        _close(_as_dict(value), theirs[key])
    assert images == theirs["images"]
    assert names == want["summaries_collection"]
    tensors = [s["loss"], s["hist"], s["lr"], s["note"], s["merged"], s["pair"], s["two"],
               *s["images"].values()]
    assert {t.name: t.op.type for t in tensors} == want["nodes"]


def test_an_empty_histogram_and_an_image_with_nan_are_tf1s(recorded):
    want = recorded("tf_summary")
    g, x, s = _tf_program(want)
    with g.as_default(), tf.Session() as sess:
        image = tf.summary.image("nan", tf.constant([[[[0.5, np.nan, 0.0]], [[1.0, 2.0, 0.0]]]]),
                                 collections=[])
        assert _as_dict(sess.run(s["hist"], {x: []})) == want["empty_histogram"]
        assert _as_dict(sess.run(image)) == want["image_with_nan"]  # a NaN pixel drawn red


@pytest.mark.parametrize("bad", ["nan", "inf"])
def test_a_nan_in_a_histogram_is_tf1s_error(recorded, bad):
    want = recorded("tf_summary")[f"{bad}_histogram"]
    g, x, s = _tf_program(recorded("tf_summary"))
    with g.as_default(), tf.Session() as sess:
        with pytest.raises(getattr(tf.errors, want["type"])) as caught:
            sess.run(s["hist"], {x: [1.0, float(bad)]})
    assert str(caught.value) == want["message"][0]


def test_a_scalar_summary_of_a_vector_is_tf1s_error(recorded):
    want = recorded("tf_summary")["scalar_of_a_vector"]
    with tf.Graph().as_default(), tf.Session() as sess:
        v = tf.placeholder(tf.float32, [None])
        bad = tf.summary.scalar("vec", v, collections=[])
        for n in (1, 2):
            with pytest.raises(getattr(tf.errors, want[str(n)]["type"])) as caught:
                sess.run(bad, {v: [1.0] * n})
            assert str(caught.value) == want[str(n)]["message"][0]
        assert tf.get_collection(tf.GraphKeys.SUMMARIES) == []


def _events(logdir) -> list:
    """Every Event of the one event file in ``logdir``, read by TensorBoard's loader."""
    files = list(Path(logdir).glob("events.out.tfevents.*"))
    assert len(files) == 1, files
    return [Event.FromString(r) for r in RawEventFileLoader(str(files[0])).Load()]


def test_file_writer_writes_what_tensorboard_reads(tmp_path, recorded):
    want = recorded("tf_summary")
    g, x, s = _tf_program(want)
    with g.as_default(), tf.Session() as sess:
        writer = tf.summary.FileWriter(str(tmp_path), sess.graph)
        for step in range(3):
            values = [v * (step + 1) for v in want["values"]]
            writer.add_summary(sess.run(s["merged"], {x: values}), global_step=step)
        writer.flush()
        writer.close()
    acc = EventAccumulator(str(tmp_path), size_guidance={"tensors": 0, "images": 0,
                                                    "histograms": 0})
    acc.Reload()
    tags = acc.Tags()
    assert sorted(tags["scalars"]) == ["lr", "train/loss"]
    assert tags["histograms"] == ["train/weights"] and tags["tensors"] == ["note"]
    assert "two/image" in tags["images"] and "signed/image/1" in tags["images"]
    mean = np.mean(np.float32(want["values"]))
    assert [e.step for e in acc.Scalars("train/loss")] == [0, 1, 2]
    assert [e.value for e in acc.Scalars("train/loss")] == pytest.approx(
        [mean, 2 * mean, 3 * mean], rel=1e-6)
    histo = acc.Histograms("train/weights")[0].histogram_value
    assert (histo.min, histo.max, histo.num) == (-3.5, 1000.0, 11)
    assert list(histo.bucket) == want["summaries"]["histogram"]["value"][0]["histo"]["bucket"]
    image = acc.Images("two/image")[0]
    assert (image.width, image.height) == (2, 1)
    assert acc.Tensors("note")[0].tensor_proto.string_val == [b"hello <b>world</b>"]
    # the graph: every node with its scope, TF1's op type and its inputs
    graph = acc.Graph()
    nodes = {n.name: n for n in graph.node}
    assert nodes["train/Mean"].op == "Mean" and list(nodes["train/Mean"].input) == ["x"]
    assert nodes["train/loss"].op == "ScalarSummary"
    assert list(nodes["train/loss"].input) == ["train/Mean"]
    assert list(nodes["Merge/MergeSummary"].input) == [
        "train/loss", "train/weights", "lr", "note", "unit", "signed", "large", "uint8", "two"]
    for op in g.get_operations():
        assert nodes[op.name].op == op.type
        assert list(nodes[op.name].input) == [t.op.name for t in op.inputs]
    assert nodes["x"].attr["dtype"].type == 1  # DT_FLOAT
    assert [d.size for d in nodes["x"].attr["_output_shapes"].list.shape[0].dim] == [-1]


def test_a_model_graph_in_tensorboard(tmp_path):
    """A TF1 model's graph: variables, scopes, control inputs ('^' inputs)."""
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        with tf.name_scope("layer1"):
            w = tf.Variable(tf.zeros([3, 2]), name="W")
            h = tf.nn.relu(tf.matmul(x, w))
        loss = tf.reduce_sum(h, name="loss")
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.control_dependencies([step]):
            done = tf.no_op(name="done")
    writer = tf.summary.FileWriter(str(tmp_path), g)
    writer.close()
    (event,) = [e for e in _events(tmp_path) if e.graph_def]
    nodes = {n.name: n for n in GraphDef.FromString(event.graph_def).node}
    assert nodes["layer1/W"].op == "VariableV2" and nodes["layer1/MatMul"].op == "MatMul"
    assert list(nodes["layer1/MatMul"].input) == ["x", "layer1/W"]
    assert list(nodes["done"].input) == ["^" + step.name]
    assert len(nodes) == len(g.get_operations())
    assert [d.size for d in nodes["layer1/MatMul"].attr["_output_shapes"].list.shape[0].dim] \
        == [-1, 2]
    del done


def test_a_closed_writer_writes_again(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path / "a"))
    with tf.Graph().as_default(), tf.Session() as sess:
        s = sess.run(tf.summary.scalar("v", tf.constant(1.5)))
    writer.close()
    writer.add_summary(s, 1)
    writer.close()
    acc = EventAccumulator(str(tmp_path / "a"))
    acc.Reload()
    assert [(e.step, e.value) for e in acc.Scalars("v")] == [(1, 1.5)]


def test_a_summary_built_by_hand_and_a_graph_with_control_flow(tmp_path):
    """``tf.summary.Summary`` is TensorBoard's protobuf class, as TF1's is its own; a cond and
    a while_loop are one node each in the GraphDef, with their inputs."""
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [], name="x")
        tf.cond(x > 0, lambda: x * 2.0, lambda: -x)
        tf.while_loop(lambda i: i < 10, lambda i: i + 1, [tf.constant(0)])
    writer = tf.summary.FileWriter(str(tmp_path), graph=g)
    value = tf.summary.Summary.Value(tag="accuracy", simple_value=0.875)
    writer.add_summary(tf.summary.Summary(value=[value]), 3)
    writer.close()
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    assert [(e.step, e.value) for e in acc.Scalars("accuracy")] == [(3, 0.875)]
    nodes = {n.name: n for n in acc.Graph().node}
    assert nodes["cond"].op == "Cond" and list(nodes["cond"].input) == ["greater", "x"]
    assert nodes["while"].op == "WhileLoop"
    assert tf.summary.Summary is Summary
    with pytest.raises(TypeError, match="tf.Graph"):
        writer.add_graph(tf.Session(graph=g))
    with pytest.raises(AttributeError):
        tf.summary.audio_v3  # noqa: B018


def test_a_script_that_never_closes_its_writers_loses_nothing(tmp_path):
    """TensorBoard's writer thread is a daemon: what it held at exit is written then."""
    script = f"""
import kernelgraph.compat.v1 as tf
from kernelgraph.utils.tensorboard import SummaryWriter
with tf.Graph().as_default() as g:
    x = tf.placeholder(tf.float32, [], name="x")
    s = tf.summary.scalar("y", x * 2.0)
    with tf.Session() as sess:
        w = tf.summary.FileWriter({str(tmp_path / "tf")!r}, sess.graph)
        for i in range(5):
            w.add_summary(sess.run(s, {{x: float(i)}}), i)
writer = SummaryWriter({str(tmp_path / "torch")!r})
for i in range(5):
    writer.add_scalar("a", i, i)
"""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=300)
    for run, tag in (("tf", "y"), ("torch", "a")):
        acc = EventAccumulator(str(tmp_path / run))
        acc.Reload()
        assert [e.step for e in acc.Scalars(tag)] == [0, 1, 2, 3, 4]


def check_summary_ops(device):
    """The behavioural check of the summary ops (tests/test_op_cards.py BEHAVIOURS): under
    a device scope and with the compiler's passes on, each run computes its summary from
    the values fed that run (never folded, even of a constant) on the host."""
    for name in SUMMARY_OPS:
        assert {"stateful", "host_only"} <= OPS[name].traits
    with tf.Graph().as_default(), kg.device(device):
        x = tf.placeholder(tf.float32, [None])
        merged = tf.summary.merge([tf.summary.scalar("mean", tf.reduce_mean(x)),
                                   tf.summary.scalar("const", 2.0),
                                   tf.summary.histogram("x", x),
                                   tf.summary.image("im", tf.reshape(x, [1, 1, -1, 1])),
                                   tf.summary.text("t", tf.constant("a"))])
        with tf.Session() as sess:
            a, b = (Summary.FromString(sess.run(merged, {x: v})) for v in ([1.0], [2.0, 4.0]))
    assert [v.tag for v in a.value] == ["mean", "const", "x", "im/image/0", "t"]
    assert (a.value[0].simple_value, b.value[0].simple_value) == (1.0, 3.0)
    assert a.value[1].simple_value == b.value[1].simple_value == 2.0
    assert (a.value[2].histo.num, b.value[2].histo.num) == (1, 2)
    assert (a.value[3].image.width, b.value[3].image.width) == (1, 2)


@pytest.mark.parametrize("device", ["cpu"])
def test_summary_ops(device):
    check_summary_ops(device)


# -- PyTorch's SummaryWriter ---------------------------------------------------------------
class Net(nn.Module):
    """The recording's model (record_torch_summary.py)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.head = nn.Sequential(nn.Linear(4, 2), nn.Tanh())

    def forward(self, x):
        return self.head(self.act(self.fc1(x)))


def test_summary_writer_writes_what_pytorch_writes(tmp_path, recorded):
    want = recorded("torch_summary")
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_scalar("loss", kg.tensor(0.125), 3)
        writer.add_histogram("weights", kg.tensor(want["values"], dtype=kg.float64), 4)
        writer.add_image("chw", kg.tensor(want["chw"]), 5)
        writer.add_image("hwc_uint8", kg.tensor(want["hwc_uint8"], dtype=kg.uint8), 6,
                         dataformats="HWC")
        writer.add_text("note", "hello *world*", 7)
        writer.add_images("batch", kg.arange(12, dtype=kg.float32).reshape(3, 1, 2, 2) / 11,
                          8)
        writer.add_graph(Net(), kg.zeros(2, 3))
    got, graphs = {}, []
    for event in _events(tmp_path):
        if event.HasField("summary"):
            for value in event.summary.value:
                got[value.tag] = {"step": event.step,
                                  "summary": _decoded(MessageToDict(Summary(value=[value])))}
        elif event.graph_def:
            graphs.append(GraphDef.FromString(event.graph_def))
    assert got == want["events"]
    (graph,) = graphs
    scopes = {n.name.rpartition("/")[0] for n in graph.node if n.op != "Parameter"}
    theirs = {s for s in want["graph_scopes"] if not s.endswith(("/weight", "/bias"))}
    assert scopes == theirs
    nodes = {n.name: n for n in graph.node}
    assert nodes["Net/Linear[fc1]/weight"].op == "Parameter"
    assert [d.size for d in nodes["output/output_0"].attr["_output_shapes"].list.shape[0].dim] \
        == [2, 2]
    reads_input = [n.name for n in graph.node if "input/input_0" in n.input]
    assert reads_input and all(n.startswith("Net/Linear[fc1]/") for n in reads_input)


def test_summary_writer_read_by_event_accumulator(tmp_path):
    with SummaryWriter(str(tmp_path)) as writer:
        for step in range(4):
            writer.add_scalar("train/loss", 1.0 / (step + 1), step)
        writer.add_scalars("run", {"a": 1.0, "b": 2.0}, 0)
        writer.add_images("batch", np.zeros((3, 1, 2, 2), np.float32), 0)
        writer.flush()
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    assert [e.value for e in acc.Scalars("train/loss")] == pytest.approx([1, 0.5, 1 / 3, 0.25])
    image = acc.Images("batch")[0]
    assert (image.width, image.height) == (6, 2)  # three 2x2 images in a row
    for tag, value in (("a", 1.0), ("b", 2.0)):
        sub = EventAccumulator(str(tmp_path / f"run_{tag}"))
        sub.Reload()
        assert [e.value for e in sub.Scalars("run")] == [value]
