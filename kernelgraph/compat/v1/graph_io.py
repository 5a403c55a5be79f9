"""TF1's graph files: ``tf.GraphDef`` and ``tf.NodeDef`` (TensorBoard's copies of TF's own
protobuf classes), ``graph.as_graph_def()``, ``tf.train.write_graph`` and
``tf.import_graph_def``.

A kernelgraph graph is written node by node: each NodeDef has the node's name, TF1's op type
(``'MatMul'``, ``'VariableV2'``), its inputs (``'^name'`` a control input), ``dtype`` or
``T``, ``_output_shapes``, a constant's value as a ``TensorProto`` and a placeholder's
``shape`` as TF writes them. What TF's attributes cannot say of a kernelgraph op card is
written beside them in attributes whose names start with an underscore, which TF itself
leaves alone: ``_kg_op`` (the card) and ``_kg_attrs`` (its attributes, as tagged JSON).

Reading (:mod:`.graph_import`) builds kernelgraph nodes from NodeDefs by op type:
``_kg_op`` where a graph came from kernelgraph, else a table of TF's op types (Const,
Placeholder, Identity, MatMul, AddV2, Relu, VariableV2, Assign, Sum, Reshape ...), so a
GraphDef that TF1 wrote imports and computes what TF computed. An op type in neither is
refused with an error naming it; nothing in a file is ever run as code.

>>> import kernelgraph.compat.v1 as tf
>>> with tf.Graph().as_default() as g:
...     x = tf.placeholder(tf.float32, [None, 2], name="x")
...     y = tf.multiply(x, 3.0, name="y")
>>> gd = g.as_graph_def()
>>> [(n.name, n.op) for n in gd.node]
[('x', 'Placeholder'), ('Const', 'Const'), ('y', 'Mul')]
>>> with tf.Graph().as_default():
...     y2, = tf.import_graph_def(gd, return_elements=["y:0"], name="copy")
...     with tf.Session() as sess:
...         print(y2.name, sess.run(y2, {"copy/x:0": [[1.0, 2.0]]}))
copy/y:0 [[3. 6.]]
"""

from __future__ import annotations

import functools
import json
import os

import numpy as np

from ... import dtypes as D
from ...graph import Node, get_default_graph
from ...ops.random import Stream
from ...static.variables import Variable
from .face import TF_TYPES


@functools.cache
def protos():
    """TensorBoard's copies of TF's protobuf modules (imported on first use)."""
    from tensorboard.compat.proto import (
        attr_value_pb2,
        graph_pb2,
        meta_graph_pb2,
        node_def_pb2,
        saver_pb2,
        tensor_pb2,
        tensor_shape_pb2,
        types_pb2,
        variable_pb2,
    )
    return type("Protos", (), {
        "attr": attr_value_pb2, "graph": graph_pb2, "meta": meta_graph_pb2,
        "node": node_def_pb2, "saver": saver_pb2, "tensor": tensor_pb2,
        "shape": tensor_shape_pb2, "types": types_pb2, "variable": variable_pb2})


def __getattr__(name):
    # tf.GraphDef, tf.NodeDef ...: the protobuf classes, loaded when a program first asks
    classes = {"GraphDef": ("graph", "GraphDef"), "NodeDef": ("node", "NodeDef"),
               "MetaGraphDef": ("meta", "MetaGraphDef"), "AttrValue": ("attr", "AttrValue"),
               "TensorProto": ("tensor", "TensorProto")}
    if name in classes:
        module, cls = classes[name]
        return getattr(getattr(protos(), module), cls)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- values: dtypes and TensorProtos ---------------------------------------------------------
_DT = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF",
       "int32": "DT_INT32", "int64": "DT_INT64", "int16": "DT_INT16", "int8": "DT_INT8",
       "uint8": "DT_UINT8", "uint16": "DT_UINT16", "uint32": "DT_UINT32",
       "uint64": "DT_UINT64", "bool": "DT_BOOL", "complex64": "DT_COMPLEX64",
       "complex128": "DT_COMPLEX128", "object": "DT_STRING"}
_FROM_DT = {v: k for k, v in _DT.items()}


@functools.cache
def dt_enum(dtype) -> int:
    """TF's DataType number of a NumPy dtype (DT_FLOAT for float32)."""
    name = _DT.get(np.dtype(dtype).name)
    if name is None:
        raise TypeError(f"no TF DataType for dtype {np.dtype(dtype).name}")
    return getattr(protos().types, name)


def dtype_of(enum: int) -> np.dtype:
    """The NumPy dtype of TF's DataType number (reference types, DT_FLOAT_REF, as theirs)."""
    types = protos().types
    name = types.DataType.Name(enum)
    name = name[:-4] if name.endswith("_REF") else name
    if name not in _FROM_DT:
        raise TypeError(f"TF's {name} has no kernelgraph dtype")
    return D.as_dtype(np.dtype(_FROM_DT[name]))


def shape_proto(shape):
    """A TensorShapeProto (``unknown_rank`` for None; -1 for an unknown size)."""
    p = protos().shape.TensorShapeProto()
    if shape is None:
        p.unknown_rank = True
    else:
        p.dim.extend(p.Dim(size=-1 if d is None else int(d)) for d in shape)
    return p


def shape_of(proto):
    """A TensorShapeProto as kernelgraph's shape (None, or a tuple of ints and Nones)."""
    if proto.unknown_rank:
        return None
    return tuple(None if d.size < 0 else int(d.size) for d in proto.dim)


def make_tensor_proto(value):
    """A TensorProto of an array: its dtype, shape and bytes (``tensor_content``); text as
    ``string_val``."""
    arr = np.asarray(value)
    t = protos().tensor.TensorProto(dtype=dt_enum(arr.dtype),
                                    tensor_shape=shape_proto(arr.shape))
    if arr.dtype == object or arr.dtype.kind in "SU":
        t.string_val.extend(v if isinstance(v, bytes) else str(v).encode()
                            for v in arr.ravel())
    else:
        t.tensor_content = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"),
                                                            copy=False).tobytes()
    return t


_VALUE_FIELDS = {"float32": "float_val", "float64": "double_val", "int64": "int64_val",
                 "bool": "bool_val", "complex64": "scomplex_val",
                 "complex128": "dcomplex_val", "object": "string_val", "float16": "half_val"}


def make_ndarray(proto) -> np.ndarray:
    """The array a TensorProto holds: ``tensor_content``, or the typed value list, the
    last value repeated to fill the shape where the list is shorter (as TF reads it)."""
    dtype = dtype_of(proto.dtype)
    shape = tuple(d.size for d in proto.tensor_shape.dim)
    size = int(np.prod(shape, dtype=np.int64))
    if proto.tensor_content:
        return np.frombuffer(proto.tensor_content, dtype.newbyteorder("<")).astype(
            dtype).reshape(shape)
    field = _VALUE_FIELDS.get(dtype.name, "int_val")
    values = list(getattr(proto, field))
    if dtype.name == "float16":
        values = np.array(values, np.uint16).view(np.float16)
    if dtype.kind == "c":
        values = np.array(values, np.float64).view(np.complex128)
    arr = np.array(values, dtype=dtype)
    if arr.size < size:
        fill = arr[-1] if arr.size else np.zeros((), dtype)
        arr = np.concatenate([arr, np.full(size - arr.size, fill, dtype)])
    return arr[:size].reshape(shape)


# -- a kernelgraph op's attributes as tagged JSON ------------------------------------------
class Unwritable(TypeError):
    """An attribute a GraphDef cannot hold (a Python function, an open dataset)."""


def encode_attrs(value):
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.dtype):
        return {"__dtype__": value.name}
    if isinstance(value, np.generic):
        return {"__scalar__": [value.dtype.name, value.item()]}
    if isinstance(value, np.ndarray) and value.dtype != object:
        return {"__array__": [value.dtype.name, list(value.shape), value.ravel().tolist()]}
    if isinstance(value, tuple):
        return {"__tuple__": [encode_attrs(v) for v in value]}
    if isinstance(value, list):
        return [encode_attrs(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: encode_attrs(v) for k, v in value.items()}}
    if isinstance(value, Stream):
        return {"__stream__": True}  # a fresh stream of draws where the graph is read
    raise Unwritable(f"a {type(value).__name__}")


def decode_attrs(value):
    if isinstance(value, list):
        return [decode_attrs(v) for v in value]
    if not isinstance(value, dict):
        return value
    (tag, body), = value.items()
    if tag == "__dtype__":
        return D.as_dtype(np.dtype(body))
    if tag == "__scalar__":
        return np.dtype(body[0]).type(body[1])
    if tag == "__array__":
        return np.array(body[2], dtype=np.dtype(body[0])).reshape(body[1])
    if tag == "__tuple__":
        return tuple(decode_attrs(v) for v in body)
    if tag == "__dict__":
        return {k: decode_attrs(v) for k, v in body.items()}
    if tag == "__stream__":
        return Stream()
    raise ValueError(f"unknown attribute tag {tag!r} in a kernelgraph GraphDef")


# -- writing ---------------------------------------------------------------------------------
def tf_type(node: Node) -> str:
    """TF1's op type of a node ('MatMul'), as ``t.op.type`` says it."""
    card = node.op.name
    return TF_TYPES.get(card) or "".join(p.capitalize() for p in card.split("_"))


def _tensor_name(node: Node) -> str:
    return node.name


def node_def(node: Node):
    """The NodeDef of one node of a kernelgraph graph."""
    p = protos()
    nd = p.node.NodeDef(name=node.name, op=tf_type(node))
    nd.input.extend([_tensor_name(i) for i in node.inputs if isinstance(i, Node)]
                    + ["^" + c.name for c in node.control_inputs])
    card = node.op.name
    nd.attr["_kg_op"].s = card.encode()
    dtype = node.dtype
    kept = dtype is not None and np.dtype(dtype).name in _DT
    if kept and np.dtype(dtype) != object and card in ("const", "placeholder", "variable"):
        nd.attr["dtype"].type = dt_enum(dtype)
    elif kept and card != "no_op":  # an initializer (an Operation) has its T too
        nd.attr["T"].type = dt_enum(dtype)
    if node.shape is not None and not node.is_operation:
        nd.attr["_output_shapes"].list.shape.add().CopyFrom(shape_proto(node.shape))
    attrs = dict(node.attrs)
    if card == "const":
        nd.attr["value"].tensor.CopyFrom(make_tensor_proto(attrs.pop("value")))
    elif card in ("placeholder", "variable"):
        nd.attr["shape"].shape.CopyFrom(shape_proto(node.shape))
        attrs.pop("shape", None)
    if isinstance(node, Variable):
        nd.attr["_kg_initializer"].s = node.initializer.name.encode()
        nd.attr["_kg_trainable"].b = bool(node.trainable)
    if any(not isinstance(i, Node) for i in node.inputs):
        nd.attr["_kg_unwritable"].s = b"an input that is not a graph node"
    try:
        nd.attr["_kg_attrs"].s = json.dumps(encode_attrs(attrs)).encode()
    except Unwritable as e:
        nd.attr["_kg_unwritable"].s = f"an attribute that is {e}".encode()
    return nd


def as_graph_def(graph=None, add_shapes: bool = False):
    """The GraphDef of ``graph`` (default: the default graph), nodes in creation order."""
    graph = graph if graph is not None else get_default_graph()
    gd = protos().graph.GraphDef()
    gd.node.extend(node_def(n) for n in graph.nodes)
    gd.versions.producer = 22
    return gd


def write_graph(graph_or_graph_def, logdir, name, as_text: bool = True) -> str:
    """TF1's ``tf.train.write_graph``: the GraphDef written to ``logdir/name`` (protobuf's
    text format, or its binary one with ``as_text=False``); returns the path."""
    gd = graph_or_graph_def
    if not isinstance(gd, protos().graph.GraphDef):
        gd = as_graph_def(getattr(gd, "kg_graph", gd))
    path = os.path.join(os.fspath(logdir), name)
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    if as_text:
        from google.protobuf import text_format
        data = text_format.MessageToString(gd).encode()
    else:
        data = gd.SerializeToString()
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return path


def read_graph_def(path):
    """A GraphDef file (binary, or protobuf's text format) read back."""
    gd = protos().graph.GraphDef()
    with open(path, "rb") as f:
        data = f.read()
    try:
        gd.ParseFromString(data)
    except Exception:  # noqa: BLE001 - not binary: protobuf's text format
        from google.protobuf import text_format
        text_format.Parse(data.decode(), gd)
    return gd


__all__ = ["as_graph_def", "write_graph"]
