"""TF1's ``.meta`` files: ``tf.train.export_meta_graph`` and ``tf.train.import_meta_graph``.

A ``MetaGraphDef`` (TensorBoard's copy of TF's protobuf) holds the graph as a GraphDef
(:mod:`.graph_io`), a ``SaverDef`` and the graph's collections: the variables as TF's
``VariableDef`` protos, other collections of tensors and operations as their names.
``Saver.save`` writes one beside each checkpoint, as TF1 does, so the classic pattern runs::

    saver = tf.train.import_meta_graph("ckpt/model.ckpt-100.meta")
    saver.restore(sess, tf.train.latest_checkpoint("ckpt"))
    x = tf.get_default_graph().get_tensor_by_name("x:0")

>>> import kernelgraph.compat.v1 as tf, tempfile, os
>>> prefix = os.path.join(tempfile.mkdtemp(), "model.ckpt")
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None], name="x")
...     w = tf.Variable(2.0, name="w")
...     y = tf.multiply(x, w, name="y")
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         path = tf.train.Saver().save(sess, prefix)
>>> with tf.Graph().as_default() as g:
...     saver = tf.train.import_meta_graph(path + ".meta")
...     with tf.Session() as sess:
...         saver.restore(sess, path)
...         print(sess.run(g.get_tensor_by_name("y:0"), {"x:0": [1.0, 3.0]}))
[2. 6.]
"""

from __future__ import annotations

import os

from ...graph import Node, get_default_graph
from ...static.variables import Variable
from ...version import __version__
from . import graph_collections as C
from .graph_import import import_graph_def
from .graph_io import as_graph_def, protos

_VARIABLE_KEYS = (C.GraphKeys.GLOBAL_VARIABLES, C.GraphKeys.TRAINABLE_VARIABLES,
                  C.GraphKeys.LOCAL_VARIABLES)


def _variable_def(var) -> bytes:
    return protos().variable.VariableDef(
        variable_name=var.name + ":0", initializer_name=var.initializer.name,
        snapshot_name=var.name + ":0", trainable=bool(var.trainable),
        initial_value_name=var.initial_value.name + ":0").SerializeToString()


def _ref(item) -> str | None:
    if not isinstance(item, Node):
        return None
    return item.name if item.is_operation else item.name + ":0"


def meta_graph_def(graph=None, saver=None, collection_list=None):
    """The MetaGraphDef of ``graph``: its GraphDef, ``saver``'s SaverDef, its collections."""
    graph = graph if graph is not None else get_default_graph()
    p = protos()
    mg = p.meta.MetaGraphDef()
    mg.meta_info_def.tensorflow_version = f"kernelgraph {__version__}"  # who wrote it
    mg.graph_def.CopyFrom(as_graph_def(graph))
    if saver is not None:
        mg.saver_def.CopyFrom(p.saver.SaverDef(
            filename_tensor_name="save/Const:0", restore_op_name=saver.restore_op_name,
            max_to_keep=saver.max_to_keep or 0, version=p.saver.SaverDef.V2))
    with graph.as_default():
        variables = {C.GraphKeys.GLOBAL_VARIABLES: C.get_collection(C.GraphKeys.GLOBAL_VARIABLES),
                     C.GraphKeys.TRAINABLE_VARIABLES: C.trainable_variables(),
                     C.GraphKeys.LOCAL_VARIABLES: C.local_variables()}
        others = dict(C._collections.get(graph, {}))
    for key, items in variables.items():
        if items and (collection_list is None or key in collection_list):
            mg.collection_def[key].bytes_list.value.extend(_variable_def(v) for v in items)
    for key, items in others.items():
        if key in _VARIABLE_KEYS or not isinstance(key, str):
            continue
        if collection_list is not None and key not in collection_list:
            continue
        names = [_ref(i) for i in items]
        if items and all(names):  # collections of other things (a Python object) are left
            mg.collection_def[key].node_list.value.extend(names)
    return mg


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text: bool = False, graph=None,
                      export_scope=None, clear_devices: bool = False,
                      clear_extraneous_savers: bool = False, strip_default_attrs: bool = False,
                      save_debug_info: bool = False, saver=None, **kwargs):
    """TF1's ``tf.train.export_meta_graph``: the MetaGraphDef of the default graph (or
    ``graph``), written to ``filename`` where given."""
    mg = meta_graph_def(graph, saver, collection_list)
    if filename:
        filename = os.fspath(filename)
        if as_text:
            from google.protobuf import text_format
            data = text_format.MessageToString(mg).encode()
        else:
            data = mg.SerializeToString()
        directory = os.path.dirname(filename)
        if directory:
            os.makedirs(directory, exist_ok=True)
        tmp = filename + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, filename)
    return mg


def read_meta_graph(path):
    """A ``.meta`` file (binary, or protobuf's text format) as a MetaGraphDef."""
    mg = protos().meta.MetaGraphDef()
    with open(os.fspath(path), "rb") as f:
        data = f.read()
    try:
        mg.ParseFromString(data)
    except Exception:  # noqa: BLE001 - not binary: protobuf's text format
        from google.protobuf import text_format
        text_format.Parse(data.decode(), mg)
    return mg


def import_meta_graph(meta_graph_or_file, clear_devices: bool = False, import_scope=None,
                      **kwargs):
    """TF1's ``tf.train.import_meta_graph``: the graph of a ``.meta`` file (or a
    MetaGraphDef) added to the default graph, its collections restored; returns a
    ``tf.train.Saver`` over its variables (None where it has none)."""
    from .saver import Saver  # late: saver writes .meta files through this module

    mg = meta_graph_or_file
    if not isinstance(mg, protos().meta.MetaGraphDef):
        path = os.fspath(mg)
        if not os.path.isfile(path):
            raise OSError(f"File {path} does not exist.")
        mg = read_meta_graph(path)
    trainable = set()
    variable_keys: dict = {}
    var_proto = protos().variable.VariableDef
    for key in _VARIABLE_KEYS:
        if key in mg.collection_def:
            for raw in mg.collection_def[key].bytes_list.value:
                name = var_proto.FromString(raw).variable_name.split(":")[0]
                variable_keys.setdefault(key, []).append(name)
                if key == C.GraphKeys.TRAINABLE_VARIABLES:
                    trainable.add(name)
    graph = get_default_graph()
    before = set(graph.variables)
    scope = import_scope or ""
    import_graph_def(mg.graph_def, name=scope, trainable=lambda n: n in trainable)
    prefix = f"{scope}/" if scope else ""
    imported = [v for v in graph.variables if v not in before]
    by_name = {v.name: v for v in imported}
    # TF1's local variables (tf.metrics' counts) go back to their collection
    for name in variable_keys.get(C.GraphKeys.LOCAL_VARIABLES, []):
        var = by_name.get(prefix + name)
        if var is not None and var in graph.variables:
            C.in_collections(var, [C.GraphKeys.LOCAL_VARIABLES])
    with graph.as_default():
        for key, cdef in mg.collection_def.items():
            if key in _VARIABLE_KEYS or cdef.WhichOneof("kind") != "node_list":
                continue
            for ref in cdef.node_list.value:
                try:
                    C.add_to_collection(key, graph.get_node(prefix + ref.split(":")[0]))
                except KeyError:
                    pass  # a node the import left out (import_graph_def warned of it)
        if not imported:
            return None
        return Saver({v.name[len(prefix):]: v for v in imported
                      if isinstance(v, Variable) and v in graph.variables})


TRAIN_NAMES = {"export_meta_graph": export_meta_graph, "import_meta_graph": import_meta_graph}
