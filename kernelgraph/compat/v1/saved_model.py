"""TF1's ``tf.saved_model``: ``builder.SavedModelBuilder``, ``loader.load``, ``simple_save``,
the signature helpers and TF's constants.

A SavedModel directory is laid out as TF lays it out: ``saved_model.pb`` is TF's
``SavedModel`` protobuf (a schema version and the ``MetaGraphDef`` of each tag set, with
its signatures; the message is declared from TF's schema over TensorBoard's
``MetaGraphDef``, so the bytes are TF's), and ``variables/`` holds the variables. Where TF
writes ``variables.index`` and ``variables.data-*``, kernelgraph writes ``variables.npz``,
its own atomic, pickle-free checkpoint (:mod:`.saver`): ``loader.load`` reads it, and reads
the graph and signatures of a SavedModel that TF wrote, but not TF's variable files.

>>> import kernelgraph.compat.v1 as tf, tempfile, os
>>> export = os.path.join(tempfile.mkdtemp(), "model")
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None], name="x")
...     y = tf.multiply(x, tf.Variable(3.0, name="w"), name="y")
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         tf.saved_model.simple_save(sess, export, {"x": x}, {"y": y})
>>> with tf.Graph().as_default(), tf.Session() as sess:
...     mg = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export)
...     sig = mg.signature_def["serving_default"]
...     print(sig.method_name, sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: [2.0]}))
tensorflow/serving/predict [6.]
"""

from __future__ import annotations

import functools
import os
import types

from ...graph import Node, get_default_graph
from .graph_io import dt_enum, protos, shape_proto
from .meta_graph import import_meta_graph, meta_graph_def
from .saver import SUFFIX, Saver

signature_constants = types.SimpleNamespace(
    DEFAULT_SERVING_SIGNATURE_DEF_KEY="serving_default",
    CLASSIFY_INPUTS="inputs", CLASSIFY_METHOD_NAME="tensorflow/serving/classify",
    CLASSIFY_OUTPUT_CLASSES="classes", CLASSIFY_OUTPUT_SCORES="scores",
    PREDICT_INPUTS="inputs", PREDICT_METHOD_NAME="tensorflow/serving/predict",
    PREDICT_OUTPUTS="outputs", REGRESS_INPUTS="inputs",
    REGRESS_METHOD_NAME="tensorflow/serving/regress", REGRESS_OUTPUTS="outputs")
tag_constants = types.SimpleNamespace(SERVING="serve", TRAINING="train", GPU="gpu", TPU="tpu")
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
SAVED_MODEL_SCHEMA_VERSION = 1
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
MAIN_OP_KEY = "saved_model_main_op"
LEGACY_INIT_OP_KEY = "legacy_init_op"


@functools.cache
def saved_model_class():
    """TF's ``SavedModel`` message (saved_model.proto), declared with protobuf's own
    descriptors over TensorBoard's ``MetaGraphDef``: field for field TF's."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    meta = protos().meta
    pool = descriptor_pool.Default()
    name = "kernelgraph/saved_model.proto"
    try:
        pool.FindFileByName(name)
    except KeyError:
        fdp = descriptor_pb2.FileDescriptorProto(
            name=name, package="tensorboard", syntax="proto3",
            dependency=[meta.DESCRIPTOR.name])
        msg = fdp.message_type.add(name="SavedModel")
        field = descriptor_pb2.FieldDescriptorProto
        msg.field.add(name="saved_model_schema_version", number=1, type=field.TYPE_INT64,
                      label=field.LABEL_OPTIONAL)
        msg.field.add(name="meta_graphs", number=2, type=field.TYPE_MESSAGE,
                      label=field.LABEL_REPEATED, type_name=".tensorboard.MetaGraphDef")
        pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorboard.SavedModel"))


# -- signatures ------------------------------------------------------------------------------
def build_tensor_info(tensor):
    """TF's ``TensorInfo`` of a tensor: its name ('x:0'), dtype and shape."""
    if not isinstance(tensor, Node):
        raise TypeError(f"build_tensor_info: expected a tensor, got {type(tensor).__name__}")
    info = protos().meta.TensorInfo(name=tensor.name + ":0", dtype=dt_enum(tensor.dtype))
    info.tensor_shape.CopyFrom(shape_proto(tensor.shape))
    return info


def build_signature_def(inputs=None, outputs=None, method_name=None, defaults=None):
    """TF's ``SignatureDef``: named ``TensorInfo`` inputs and outputs and a method name."""
    sig = protos().meta.SignatureDef()
    for key, info in (inputs or {}).items():
        sig.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        sig.outputs[key].CopyFrom(info)
    if method_name is not None:
        sig.method_name = method_name
    return sig


def predict_signature_def(inputs, outputs):
    """A predict signature of ``{name: tensor}`` inputs and outputs."""
    if not inputs:
        raise ValueError("Prediction inputs cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction outputs cannot be None or empty.")
    return build_signature_def({k: build_tensor_info(t) for k, t in inputs.items()},
                               {k: build_tensor_info(t) for k, t in outputs.items()},
                               signature_constants.PREDICT_METHOD_NAME)


def is_valid_signature(signature_def) -> bool:
    return bool(signature_def.method_name) and bool(signature_def.outputs)


# -- writing ---------------------------------------------------------------------------------
class SavedModelBuilder:
    """TF1's ``tf.saved_model.builder.SavedModelBuilder(export_dir)``: add the session's
    graph and variables once (``add_meta_graph_and_variables``), more tag sets of the same
    graph with ``add_meta_graph``, then ``save()`` writes ``saved_model.pb``."""

    def __init__(self, export_dir):
        export_dir = os.fspath(export_dir)
        if os.path.exists(export_dir):
            if os.listdir(export_dir):
                raise AssertionError(
                    f"Export directory already exists, and isn't empty. Please choose a "
                    f"different export directory, or delete all the contents of the specified "
                    f"directory: {export_dir}")
        else:
            os.makedirs(export_dir)
        self._dir = export_dir
        self._model = saved_model_class()(saved_model_schema_version=SAVED_MODEL_SCHEMA_VERSION)
        self._has_variables = False

    def _add(self, graph, tags, signature_def_map, saver, main_op):
        if tags is None or isinstance(tags, str):
            raise TypeError(f"tags must be a list of strings, got {tags!r}")
        for key, sig in (signature_def_map or {}).items():
            if not isinstance(sig, protos().meta.SignatureDef):
                raise TypeError(f"signature_def_map['{key}'] is not a SignatureDef")
        mg = meta_graph_def(graph, saver)
        if main_op is not None:
            mg.collection_def[MAIN_OP_KEY].node_list.value.append(main_op.name)
        mg.meta_info_def.tags.extend(tags)
        for key, sig in (signature_def_map or {}).items():
            mg.signature_def[key].CopyFrom(sig)
        self._model.meta_graphs.add().CopyFrom(mg)

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None,
                                     assets_collection=None, legacy_init_op=None,
                                     clear_devices: bool = False, main_op=None,
                                     strip_default_attrs: bool = False, saver=None,
                                     train_op=None):
        if self._has_variables:
            raise AssertionError("Graph state including variables and assets has already "
                                 "been saved. Please invoke `add_meta_graph()` instead.")
        variables = list(sess.graph.variables)
        saver = saver or (Saver(variables) if variables else None)
        os.makedirs(os.path.join(self._dir, VARIABLES_DIRECTORY), exist_ok=True)
        if saver is not None:
            saver.save(sess, os.path.join(self._dir, VARIABLES_DIRECTORY, VARIABLES_FILENAME),
                       write_meta_graph=False, write_state=False)
        self._saver = saver
        self._add(sess.graph, tags, signature_def_map, saver, main_op or legacy_init_op)
        self._has_variables = True

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None,
                       legacy_init_op=None, clear_devices: bool = False, main_op=None,
                       strip_default_attrs: bool = False, saver=None):
        if not self._has_variables:
            raise AssertionError("Graph state including variables and assets has not been "
                                 "saved yet. Please invoke `add_meta_graph_and_variables()` "
                                 "first.")
        self._add(get_default_graph(), tags, signature_def_map, saver or self._saver,
                  main_op or legacy_init_op)

    def save(self, as_text: bool = False) -> bytes:
        """Write ``saved_model.pb`` (``.pbtxt`` with ``as_text``); returns its path, as
        bytes as TF1's does."""
        if as_text:
            from google.protobuf import text_format
            path = os.path.join(self._dir, SAVED_MODEL_FILENAME_PBTXT)
            data = text_format.MessageToString(self._model).encode()
        else:
            path = os.path.join(self._dir, SAVED_MODEL_FILENAME_PB)
            data = self._model.SerializeToString()
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return os.fsencode(path)


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None) -> None:
    """TF1's one-call export: the session's graph and variables under the SERVING tag, with
    one predict signature ('serving_default') of ``inputs`` and ``outputs``."""
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session, [tag_constants.SERVING], legacy_init_op=legacy_init_op,
        signature_def_map={signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                           predict_signature_def(inputs, outputs)})
    builder.save()


# -- reading ---------------------------------------------------------------------------------
def read_saved_model(export_dir):
    """The ``SavedModel`` message of a SavedModel directory."""
    export_dir = os.fspath(export_dir)
    model = saved_model_class()()
    pb = os.path.join(export_dir, SAVED_MODEL_FILENAME_PB)
    pbtxt = os.path.join(export_dir, SAVED_MODEL_FILENAME_PBTXT)
    if os.path.isfile(pb):
        with open(pb, "rb") as f:
            model.ParseFromString(f.read())
    elif os.path.isfile(pbtxt):
        from google.protobuf import text_format
        with open(pbtxt, encoding="utf-8") as f:
            text_format.Parse(f.read(), model)
    else:
        raise OSError(f"SavedModel file does not exist at: {export_dir}/"
                      f"{{{SAVED_MODEL_FILENAME_PBTXT}|{SAVED_MODEL_FILENAME_PB}}}")
    return model


def maybe_saved_model_directory(export_dir) -> bool:
    export_dir = os.fspath(export_dir)
    return any(os.path.isfile(os.path.join(export_dir, n))
               for n in (SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT))


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """TF1's ``tf.saved_model.loader.load``: the graph of the MetaGraphDef whose tags are
    ``tags`` imported into ``sess.graph``, its variables restored, its main op run; returns
    the MetaGraphDef (``.signature_def`` says which tensors to feed and fetch)."""
    model = read_saved_model(export_dir)
    wanted = set(tags)
    found = [mg for mg in model.meta_graphs if set(mg.meta_info_def.tags) == wanted]
    if not found:
        available = [list(mg.meta_info_def.tags) for mg in model.meta_graphs]
        raise RuntimeError(f"MetaGraphDef associated with tags {sorted(wanted)} could not be "
                           f"found in SavedModel, with available tags '{available}'.")
    mg = found[0]
    with sess.graph.as_default():
        saver = import_meta_graph(mg, import_scope=import_scope)
        prefix = os.path.join(os.fspath(export_dir), VARIABLES_DIRECTORY, VARIABLES_FILENAME)
        if saver is not None:
            if not os.path.isfile(prefix + SUFFIX):
                raise OSError(f"{prefix}{SUFFIX}: the SavedModel's variables are not in "
                              "kernelgraph's checkpoint format (one written by TF is not "
                              "readable here)")
            saver.restore(sess, prefix)
        for key in (MAIN_OP_KEY, LEGACY_INIT_OP_KEY):
            if key in mg.collection_def:
                for name in mg.collection_def[key].node_list.value:
                    scope = f"{import_scope}/" if import_scope else ""
                    sess.run(sess.graph.get_node(scope + name.split(":")[0]))
    return mg


builder = types.SimpleNamespace(SavedModelBuilder=SavedModelBuilder)
loader = types.SimpleNamespace(load=load, maybe_saved_model_directory=maybe_saved_model_directory)
utils = types.SimpleNamespace(build_tensor_info=build_tensor_info)
signature_def_utils = types.SimpleNamespace(
    build_signature_def=build_signature_def, predict_signature_def=predict_signature_def,
    is_valid_signature=is_valid_signature)

saved_model = types.SimpleNamespace(
    builder=builder, loader=loader, utils=utils, signature_def_utils=signature_def_utils,
    signature_constants=signature_constants, tag_constants=tag_constants,
    Builder=SavedModelBuilder, load=load, simple_save=simple_save,
    build_tensor_info=build_tensor_info, build_signature_def=build_signature_def,
    predict_signature_def=predict_signature_def, is_valid_signature=is_valid_signature,
    contains_saved_model=maybe_saved_model_directory,
    SERVING=tag_constants.SERVING, TRAINING=tag_constants.TRAINING,
    DEFAULT_SERVING_SIGNATURE_DEF_KEY=signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY,
    PREDICT_METHOD_NAME=signature_constants.PREDICT_METHOD_NAME,
    CLASSIFY_METHOD_NAME=signature_constants.CLASSIFY_METHOD_NAME,
    REGRESS_METHOD_NAME=signature_constants.REGRESS_METHOD_NAME)
"""The ``tf.saved_model`` namespace."""
