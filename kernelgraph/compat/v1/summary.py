"""TF1's ``tf.summary``: summaries are graph ops, and ``tf.summary.FileWriter`` writes what a
Session fetched from them into event files that TensorBoard reads.

A summary op's value is a serialized ``Summary`` protobuf (``bytes``, as TF1's ``tf.string``
scalar): ``sess.run(merged, feed_dict)`` returns it and ``writer.add_summary(s, step)``
writes it. The ops are host-side cards of their own, named as TF1 names them
(ScalarSummary, HistogramSummary, ImageSummary, TensorSummaryV2 for text, MergeSummary); the
values are computed as TF1 computes them (:mod:`kernelgraph.utils.tensorboard.summaries`).
Each summary joins the graph's ``tf.GraphKeys.SUMMARIES`` collection, which
``tf.summary.merge_all()`` merges.

>>> import tempfile
>>> import kernelgraph.compat.v1 as tf
>>> with tf.Graph().as_default() as g:
...     x = tf.placeholder(tf.float32, shape=[None], name="x")
...     with tf.name_scope("train"):
...         loss = tf.summary.scalar("loss", tf.reduce_mean(x))
...         hist = tf.summary.histogram("x", x)
...     merged = tf.summary.merge_all()
...     with tf.Session() as sess:
...         s = sess.run(merged, {x: [1.0, 2.0]})
...         writer = tf.summary.FileWriter(tempfile.mkdtemp(), sess.graph)
...         writer.add_summary(s, global_step=0)
...         writer.close()
>>> loss
<tf.Tensor 'train/loss:0' shape=() dtype=string>
>>> hist.op.type, merged.op.name, type(s)
('HistogramSummary', 'Merge/MergeSummary', <class 'bytes'>)
"""

from __future__ import annotations

import re
import types

import numpy as np

from ...devices import device
from ...graph import Graph as KgGraph
from ...graph import Node, name_scope
from ...ops.control import OBJECT
from ...ops.registry import define
from ...static.build import constant_node
from ...utils.tensorboard import EventWriter
from ...utils.tensorboard import summaries as S
from ...utils.tensorboard.graphs import static_graph_def
from .face import operation_of
from .tensors import GraphKeys, add_to_collection, get_collection


def _one_value(shapes_, dtypes, attrs):
    return (), OBJECT  # one serialized Summary: TF1's scalar tf.string


# Summaries are "stateful" so that the compiler never folds one (its value is bytes, which no
# constant node holds); they are made on the host (their values are protobufs), whatever the
# device scope, and are host_only for a device plan.
_TRAITS = ("stateful", "host_only")
scalar_summary_op = define(
    "scalar_summary", lambda x, *, tag: S.tf_scalar(tag, x).SerializeToString(), _one_value,
    traits=_TRAITS, inputs=1, doc="A serialized Summary of one scalar (tf.summary.scalar).")
histogram_summary_op = define(
    "histogram_summary", lambda x, *, tag: S.tf_histogram(tag, x).SerializeToString(),
    _one_value, traits=_TRAITS, inputs=1,
    doc="A serialized Summary of a histogram of the values (tf.summary.histogram).")
image_summary_op = define(
    "image_summary",
    lambda x, *, tag, max_outputs: S.tf_images(tag, x, max_outputs).SerializeToString(),
    _one_value, traits=_TRAITS, inputs=1,
    doc="A serialized Summary of up to max_outputs PNG images (tf.summary.image).")
tensor_summary_v2_op = define(
    "tensor_summary_v2", lambda x, *, tag: S.text(tag, x).SerializeToString(), _one_value,
    traits=_TRAITS, inputs=1, doc="A serialized Summary of a string tensor (tf.summary.text).")
merge_summary_op = define(
    "merge_summary", lambda *xs: S.merge(xs).SerializeToString(), _one_value, traits=_TRAITS,
    doc="The values of several serialized Summaries in one (tf.summary.merge).")


def _clean_tag(name):
    # TF1 replaces what a tag may not hold with '_' (and drops leading slashes)
    if name is None:
        return None
    cleaned = re.sub(r"[^-/\w\.]", "_", str(name)).lstrip("/")
    return cleaned


def _summary(op, name, tensor, collections, family, **attrs) -> Node:
    name = _clean_tag(name)
    family = _clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    if not isinstance(tensor, Node):
        tensor = constant_node(np.asarray(tensor))
    with device("cpu"):  # made on the host (a value on a GPU is copied there first)
        node = op(tensor, name=base, tag="", **attrs)
    # The tag is the op's name, made unique in the graph (TF1's summary_scope), with the
    # family in front again so that TensorBoard shows it in the family's section.
    node.attrs = {**node.attrs, "tag": node.name if family is None else f"{family}/{node.name}"}
    for key in ([GraphKeys.SUMMARIES] if collections is None else collections):
        add_to_collection(key, node)
    return node


def scalar(name, tensor, collections=None, family=None) -> Node:
    """TF1's ``tf.summary.scalar``: a serialized Summary of a scalar tensor's value."""
    return _summary(scalar_summary_op, name, tensor, collections, family)


def histogram(name, values, collections=None, family=None) -> Node:
    """TF1's ``tf.summary.histogram``: the values counted in TF1's exponential buckets."""
    return _summary(histogram_summary_op, name, values, collections, family)


def image(name, tensor, max_outputs=3, collections=None, family=None) -> Node:
    """TF1's ``tf.summary.image``: up to ``max_outputs`` images of a [batch, height, width,
    channels] tensor (1, 3 or 4 channels; floats normalised per image, uint8 as they are)."""
    return _summary(image_summary_op, name, tensor, collections, family,
                    max_outputs=int(max_outputs))


def text(name, tensor, collections=None) -> Node:
    """TF1's ``tf.summary.text``: a string tensor shown (as markdown) in the text tab."""
    return _summary(tensor_summary_v2_op, name, tensor, collections, None)


def merge(inputs, collections=None, name=None) -> Node:
    """TF1's ``tf.summary.merge``: one serialized Summary holding the values of ``inputs``."""
    with name_scope(name or "Merge"), device("cpu"):
        node = merge_summary_op(*inputs, name="MergeSummary")
    for key in collections or ():
        add_to_collection(key, node)
    return node


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """TF1's ``tf.summary.merge_all``: merge every summary of the default graph's collection
    ``key`` (those whose name matches ``scope``); None when there is none."""
    found = get_collection(key, scope)
    return merge(found, name=name) if found else None


def _tf_type(node) -> str:
    return operation_of(node).type  # TF1's op type names: 'MatMul', 'AddV2', 'VariableV2'


def graph_def(graph):
    """The GraphDef of a kernelgraph graph as TF1's face names it (``FileWriter`` writes it)."""
    return static_graph_def(graph, _tf_type)


class FileWriter(EventWriter):
    """TF1's ``tf.summary.FileWriter(logdir, graph=None)``: an event file in ``logdir``;
    ``graph`` (``sess.graph``) is written at once, for TensorBoard's graph tab."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        super().__init__(logdir, max_queue, flush_secs, filename_suffix or "")
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def add_graph(self, graph, global_step=None, graph_def=None) -> None:
        """Write ``graph`` (a tf.Graph) or ``graph_def`` as the graph TensorBoard draws."""
        if graph is None and graph_def is None:
            raise ValueError("You must pass either graph or graph_def.")
        if graph_def is None:
            graph_def = graph if hasattr(graph, "SerializeToString") else _graph_def(graph)
        self.add_graph_def(graph_def, global_step)

    def reopen(self) -> None:
        """Make a closed writer write again: its next event opens a new event file (as
        every write after ``close()`` does)."""

    def add_session_log(self, session_log, global_step=None) -> None:
        self._event(global_step, None, session_log=session_log)


def _graph_def(graph):
    if not isinstance(graph, KgGraph):
        raise TypeError(f"graph must be a tf.Graph (sess.graph) or a GraphDef, got "
                        f"{type(graph).__name__}")
    return graph_def(graph)


class _Namespace(types.SimpleNamespace):
    """``tf.summary``; its protobuf classes (``tf.summary.Summary``, which programs build by
    hand: ``Summary(value=[Summary.Value(tag='acc', simple_value=0.9)])``) are TensorBoard's,
    imported when first read."""

    def __getattr__(self, name):
        if name in ("Summary", "SummaryDescription", "SummaryMetadata", "HistogramProto"):
            return getattr(S.protos().summary, name)
        if name in ("Event", "SessionLog", "TaggedRunMetadata"):
            return getattr(S.protos().event, name)
        raise AttributeError(f"module 'tf.summary' has no attribute '{name}'")


summary = _Namespace(
    scalar=scalar, histogram=histogram, image=image, text=text, merge=merge,
    merge_all=merge_all, FileWriter=FileWriter)

__all__ = ["FileWriter", "graph_def", "summary"]
