"""TF1's graph files: ``tf.GraphDef`` and ``tf.NodeDef`` (TensorBoard's copies of TF's own
protobuf classes), ``graph.as_graph_def()``, ``tf.train.write_graph`` and
``tf.import_graph_def``.

A kernelgraph graph is written node by node: each NodeDef has the node's name, TF1's op type
(``'MatMul'``, ``'VariableV2'``), its inputs (``'^name'`` a control input), ``dtype`` or
``T``, ``_output_shapes``, a constant's value as a ``TensorProto`` and a placeholder's
``shape`` as TF writes them. What TF's attributes cannot say of a kernelgraph op card is
written beside them in attributes whose names start with an underscore, which TF itself
leaves alone: ``_kg_op`` (the card) and ``_kg_attrs`` (its attributes, as tagged JSON).

Reading builds kernelgraph nodes from NodeDefs by op type: ``_kg_op`` where a graph came
from kernelgraph, else a table of TF's op types (``TF_IMPORTS``: Const, Placeholder,
Identity, MatMul, AddV2, Relu, VariableV2, Assign, Sum, Reshape ...), so a GraphDef that
TF1 wrote imports and computes what TF computed. An op type in neither is refused with an
error naming it; nothing in a file is ever run as code.

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

import contextlib
import json
import os

import numpy as np

from ... import dtypes as D
from ...graph import Node, get_default_graph
from ...ops.random import Stream
from ...ops.registry import OPS
from ...static.build import build, constant_node
from ...static.variables import Variable, group, placeholder
from .face import TF_TYPES, operation_of


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


def _encode(value):
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.dtype):
        return {"__dtype__": value.name}
    if isinstance(value, np.generic):
        return {"__scalar__": [value.dtype.name, value.item()]}
    if isinstance(value, np.ndarray) and value.dtype != object:
        return {"__array__": [value.dtype.name, list(value.shape), value.ravel().tolist()]}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: _encode(v) for k, v in value.items()}}
    if isinstance(value, Stream):
        return {"__stream__": True}  # a fresh stream of draws where the graph is read
    raise Unwritable(f"a {type(value).__name__}")


def _decode(value):
    if isinstance(value, list):
        return [_decode(v) for v in value]
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
        return tuple(_decode(v) for v in body)
    if tag == "__dict__":
        return {k: _decode(v) for k, v in body.items()}
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
    elif kept and not node.is_operation:
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
        nd.attr["_kg_attrs"].s = json.dumps(_encode(attrs)).encode()
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


# -- reading ---------------------------------------------------------------------------------
def _attr_dtype(nd, *keys):
    for key in keys:
        if key in nd.attr:
            return dtype_of(nd.attr[key].type)
    return None


def _const_input(ctx, nd, index: int, what: str):
    name = nd.input[index].split(":")[0]
    source = ctx.defs.get(name)
    while source is not None and source.op == "Identity":
        source = ctx.defs.get(source.input[0].split(":")[0])
    if source is None or source.op != "Const":
        raise NotImplementedError(f"import_graph_def: {nd.op} '{nd.name}' needs a constant "
                                  f"{what} (input {index}), got {name}")
    return make_ndarray(source.attr["value"].tensor)


def _reduce(card):
    def rebuild(ctx, nd, ins, name):
        axis = _const_input(ctx, nd, 1, "axis")
        axis = tuple(int(a) for a in np.ravel(axis)) if np.ndim(axis) else int(axis)
        keep = bool(nd.attr["keep_dims"].b) if "keep_dims" in nd.attr else False
        return build(OPS[card], (ins[0],), {"axis": axis, "keepdims": keep, "name": name})
    return rebuild


def _card(card, arity=None):
    def rebuild(ctx, nd, ins, name):
        return build(OPS[card], tuple(ins[:arity] if arity else ins), {"name": name})
    return rebuild


def _matmul(ctx, nd, ins, name):
    a, b = ins
    if nd.attr["transpose_a"].b:
        a = build(OPS["matrix_transpose"], (a,), {"name": name + "/transpose_a"})
    if nd.attr["transpose_b"].b:
        b = build(OPS["matrix_transpose"], (b,), {"name": name + "/transpose_b"})
    return build(OPS["matmul"], (a, b), {"name": name})


def _const(ctx, nd, ins, name):
    return constant_node(make_ndarray(nd.attr["value"].tensor), name=name)


def _placeholder(ctx, nd, ins, name):
    shape = shape_of(nd.attr["shape"].shape) if "shape" in nd.attr else None
    return placeholder(_attr_dtype(nd, "dtype"), shape=shape, name=name)


def _variable(ctx, nd, ins, name):
    init = ctx.initial_value(nd)
    if init is None:  # no initializer in the file: a checkpoint gives the value
        shape = shape_of(nd.attr["shape"].shape)
        init = constant_node(np.zeros(shape, _attr_dtype(nd, "dtype")), name=name + "/zeros")
    var = Variable(init, name=name, trainable=ctx.trainable(nd))
    ctx.made_initializer[ctx.initializer_of.get(nd.name)] = var.initializer
    return var


def _assign(card):
    def rebuild(ctx, nd, ins, name):
        var, value = ins[0], ins[1]
        if not isinstance(var, Variable):
            raise NotImplementedError(f"import_graph_def: {nd.op} '{nd.name}' assigns to "
                                      f"'{var.name}', which is not a variable")
        return var._assign_node(OPS[card], value, name)
    return rebuild


def _read(ctx, nd, ins, name):
    # a variable's read (TF's 'w/read' Identity, a ReadVariableOp) is the variable itself
    if isinstance(ins[0], Variable):
        return ins[0]
    return build(OPS["identity"], (ins[0],), {"name": name})


def _no_op(ctx, nd, ins, name):
    return group(name=name)


def _cast(ctx, nd, ins, name):
    return build(OPS["cast"], (ins[0],), {"dtype": _attr_dtype(nd, "DstT"), "name": name})


def _reshape(ctx, nd, ins, name):
    shape = tuple(int(s) for s in _const_input(ctx, nd, 1, "shape"))
    return build(OPS["reshape"], (ins[0],), {"shape": shape, "name": name})


def _argmax(card):
    def rebuild(ctx, nd, ins, name):
        axis = int(_const_input(ctx, nd, 1, "dimension"))
        return build(OPS[card], (ins[0],), {"axis": axis, "name": name})
    return rebuild


def _softmax(card):
    def rebuild(ctx, nd, ins, name):
        return build(OPS[card], (ins[0],), {"axis": -1, "name": name})
    return rebuild


def _bias_add(ctx, nd, ins, name):
    if nd.attr["data_format"].s not in (b"", b"NHWC"):
        raise NotImplementedError(f"import_graph_def: BiasAdd '{nd.name}' in layout "
                                  f"{nd.attr['data_format'].s.decode()}")
    return build(OPS["add"], (ins[0], ins[1]), {"name": name})


#: TF's op types that a GraphDef written by TF may hold, and how each is rebuilt.
TF_IMPORTS = {
    "Const": _const, "Placeholder": _placeholder, "Identity": _read, "NoOp": _no_op,
    "VariableV2": _variable, "Variable": _variable, "VarHandleOp": _variable,
    "ReadVariableOp": _read, "Assign": _assign("assign"), "AssignAdd": _assign("assign_add"),
    "AssignSub": _assign("assign_sub"), "AssignVariableOp": _assign("assign"),
    "MatMul": _matmul, "Add": _card("add"), "AddV2": _card("add"), "Sub": _card("sub"),
    "Mul": _card("mul"), "RealDiv": _card("div"), "Maximum": _card("maximum"),
    "Minimum": _card("minimum"), "Pow": _card("pow"), "Relu": _card("relu"),
    "Sigmoid": _card("sigmoid"), "Tanh": _card("tanh"), "Exp": _card("exp"),
    "Log": _card("log"), "Neg": _card("neg"), "Sqrt": _card("sqrt"), "Rsqrt": _card("rsqrt"),
    "Equal": _card("equal"), "Greater": _card("greater"), "Less": _card("less"),
    "Sum": _reduce("sum"), "Mean": _reduce("mean"), "Max": _reduce("max"),
    "Min": _reduce("min"), "Prod": _reduce("prod"), "Reshape": _reshape, "Cast": _cast,
    "ArgMax": _argmax("argmax"), "ArgMin": _argmax("argmin"), "Softmax": _softmax("softmax"),
    "LogSoftmax": _softmax("log_softmax"), "BiasAdd": _bias_add,
}

# Nodes TF writes that a kernelgraph session has no use for: a resource variable's
# is-initialized check (its initializer is what a program runs).
_SKIPPED = {"VarIsInitializedOp", "IsVariableInitialized"}


def _kg_rebuild(ctx, nd, ins, name):
    card = nd.attr["_kg_op"].s.decode()
    if "_kg_unwritable" in nd.attr:
        raise NotImplementedError(f"import_graph_def: node '{nd.name}' ({nd.op}) was written "
                                  f"with {nd.attr['_kg_unwritable'].s.decode()}; it cannot "
                                  "be rebuilt from a file")
    if card not in OPS:
        raise NotImplementedError(f"import_graph_def: node '{nd.name}' needs kernelgraph's "
                                  f"op '{card}', which this kernelgraph does not have")
    attrs = _decode(json.loads(nd.attr["_kg_attrs"].s.decode() or "{}"))
    if card == "const":
        return _const(ctx, nd, ins, name)
    if card == "placeholder":
        return _placeholder(ctx, nd, ins, name)
    if card == "variable":
        return _variable(ctx, nd, ins, name)
    if card in ("assign", "assign_add", "assign_sub"):
        return _assign(card)(ctx, nd, ins, name)
    if card == "no_op" and not ins:
        return group(name=name)
    return build(OPS[card], tuple(ins), {**attrs, "name": name})


class _Import:
    """One import: the NodeDefs by name, what each became, and the variables' initializers."""

    def __init__(self, graph_def, input_map, prefix, trainable):
        self.defs = {nd.name: nd for nd in graph_def.node}
        self.made: dict = {}
        self.prefix = prefix
        self.input_map = input_map
        self._trainable = trainable
        self.made_initializer: dict = {}
        self.initializer_of: dict = {}  # variable's name -> its initializer Assign's name
        for nd in graph_def.node:
            if nd.op in ("VariableV2", "Variable", "VarHandleOp"):
                if "_kg_initializer" in nd.attr:
                    self.initializer_of[nd.name] = nd.attr["_kg_initializer"].s.decode()
                elif f"{nd.name}/Assign" in self.defs:
                    self.initializer_of[nd.name] = f"{nd.name}/Assign"
        self.initializers = {v: k for k, v in self.initializer_of.items()}

    def trainable(self, nd) -> bool:
        if "_kg_trainable" in nd.attr:
            return bool(nd.attr["_kg_trainable"].b)
        return self._trainable(nd.name)

    def initial_value(self, nd):
        assign = self.defs.get(self.initializer_of.get(nd.name, ""))
        return None if assign is None else self.node(assign.input[1])

    def deps(self, nd) -> list:
        if nd.name in self.initializers:  # an initializer: made with its variable
            return [self.initializers[nd.name]]
        if nd.name in self.initializer_of:
            assign = self.defs.get(self.initializer_of[nd.name])
            return [assign.input[1]] if assign is not None else []
        return list(nd.input)

    def node(self, ref: str):
        """What the input ``ref`` ('name', 'name:0', '^name') refers to, made if needed."""
        name = ref.lstrip("^")
        if name in self.input_map:
            return self.input_map[name]
        base, _, index = name.partition(":")
        if index not in ("", "0"):
            raise NotImplementedError(f"import_graph_def: output {index} of '{base}' "
                                      "(kernelgraph's nodes have one output)")
        if base in self.made:
            return self.made[base]
        if base not in self.defs:
            raise ValueError(f"import_graph_def: the GraphDef has no node named '{base}'")
        stack = [base]
        while stack:  # depth first without recursion: graphs can be long chains
            top = stack[-1]
            if top in self.made:
                stack.pop()
                continue
            waiting = [d.lstrip("^").split(":")[0] for d in self.deps(self.defs[top])
                       if d.lstrip("^") not in self.input_map]
            waiting = [d for d in waiting if d not in self.made]
            for d in waiting:
                if d not in self.defs:
                    raise ValueError(f"import_graph_def: node '{top}' reads '{d}', which "
                                     "the GraphDef does not have")
                if d in stack:
                    raise ValueError(f"import_graph_def: node '{top}' is in a cycle")
            if waiting:
                stack.extend(waiting)
                continue
            self.made[top] = self._make(self.defs[top])
            stack.pop()
        return self.made[base]

    def _make(self, nd):
        if nd.name in self.initializers:
            self.node(self.initializers[nd.name])
            return self.made_initializer[nd.name]
        if nd.op in _SKIPPED:
            return None
        ins, controls = [], []
        for ref in nd.input:
            target = self.node(ref)
            (controls if ref.startswith("^") else ins).append(target)
        rebuild = _kg_rebuild if "_kg_op" in nd.attr else TF_IMPORTS.get(nd.op)
        if rebuild is None:
            raise NotImplementedError(
                f"import_graph_def: node '{nd.name}' has op type '{nd.op}', which kernelgraph "
                f"cannot import (it reads {', '.join(sorted(TF_IMPORTS))})")
        graph = get_default_graph()
        controls = [c for c in controls if c is not None]
        with graph.control_dependencies(controls) if controls else contextlib.nullcontext():
            return rebuild(self, nd, ins, self.prefix + nd.name)


@contextlib.contextmanager
def _unscoped(graph):
    saved = graph._scope
    graph._scope = []  # the prefix is in every name given
    try:
        yield
    finally:
        graph._scope = saved


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None,
                     op_dict=None, producer_op_list=None, trainable=None):
    """TF1's ``tf.import_graph_def``: the nodes of ``graph_def`` added to the default graph
    under the scope ``name`` ('import' by default; '' for none), an input named in
    ``input_map`` ('x:0' -> a tensor) read from the given tensor instead; returns the nodes
    named in ``return_elements`` ('y:0' a tensor, 'train' an operation), else None."""
    if not isinstance(graph_def, protos().graph.GraphDef):
        raise TypeError(f"import_graph_def: graph_def must be a GraphDef proto, got "
                        f"{type(graph_def).__name__}")
    graph = get_default_graph()
    input_map = {k[:-2] if k.endswith(":0") else k: v for k, v in (input_map or {}).items()}
    with graph.name_scope("import" if name is None else name) as scope:
        ctx = _Import(graph_def, input_map, scope, trainable or (lambda _name: True))
        with _unscoped(graph):
            for nd in graph_def.node:
                ctx.node(nd.name)
    if return_elements is None:
        return None
    found = []
    for ref in return_elements:
        base = ref.split(":")[0]
        if base not in ctx.made:
            raise ValueError(f"Requested return_element '{ref}' not found in graph_def.")
        node = ctx.made[base]
        found.append(node if ":" in ref or node is None else operation_of(node))
    return found


__all__ = ["as_graph_def", "import_graph_def", "write_graph"]
