"""TF1's ``tf.import_graph_def``: kernelgraph nodes built from a GraphDef's NodeDefs by op
type, through kernelgraph's op cards (a graph kernelgraph wrote, :mod:`.graph_io`) or a
table of TF's op types (``TF_IMPORTS``, a graph TF wrote). An op type in neither is refused
with an error naming it; nothing in a file is ever run as code. TF's Saver nodes (and what
reads them) are left out: kernelgraph's Saver takes their place.
"""

from __future__ import annotations

import contextlib
import json
import warnings

import numpy as np

from ...graph import get_default_graph
from ...ops.registry import OPS
from ...static.build import build, constant_node
from ...static.variables import Variable, group, placeholder
from .conv import avg_pool2d, conv2d, max_pool2d
from .face import operation_of
from .graph_io import decode_attrs, dtype_of, make_ndarray, protos, shape_of
from .spellings import concat, expand_dims, squeeze, stack


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


def _named(node, name):
    # the face's function names an inner node; the one a program fetches takes the name
    node.name = node.graph.unique_name(name)
    return node


def _layout(nd) -> str:
    return nd.attr["data_format"].s.decode() or "NHWC"


def _conv2d(ctx, nd, ins, name):
    out = conv2d(ins[0], ins[1], strides=list(nd.attr["strides"].list.i),
                 padding=nd.attr["padding"].s.decode(), data_format=_layout(nd),
                 dilations=list(nd.attr["dilations"].list.i) or 1, name=name + "/inner")
    return _named(out, name)


def _pool(pool):
    def rebuild(ctx, nd, ins, name):
        out = pool(ins[0], list(nd.attr["ksize"].list.i), list(nd.attr["strides"].list.i),
                   nd.attr["padding"].s.decode(), data_format=_layout(nd),
                   name=name + "/inner")
        return _named(out, name)
    return rebuild


def _concat(ctx, nd, ins, name):
    axis = int(_const_input(ctx, nd, len(nd.input) - 1, "axis"))
    return concat(ins[:-1], axis, name=name)


def _pack(ctx, nd, ins, name):
    return stack(ins, axis=int(nd.attr["axis"].i), name=name)


def _expand_dims(ctx, nd, ins, name):
    return expand_dims(ins[0], int(_const_input(ctx, nd, 1, "axis")), name=name)


def _squeeze(ctx, nd, ins, name):
    dims = list(nd.attr["squeeze_dims"].list.i)
    return squeeze(ins[0], axis=dims or None, name=name)


def _transpose(ctx, nd, ins, name):
    perm = tuple(int(p) for p in _const_input(ctx, nd, 1, "perm"))
    return build(OPS["transpose"], (ins[0],), {"perm": perm, "name": name})


def _square(ctx, nd, ins, name):
    return build(OPS["mul"], (ins[0], ins[0]), {"name": name})


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
    "LogSoftmax": _softmax("log_softmax"), "BiasAdd": _bias_add, "Conv2D": _conv2d,
    "MaxPool": _pool(max_pool2d), "AvgPool": _pool(avg_pool2d), "ConcatV2": _concat,
    "Pack": _pack, "ExpandDims": _expand_dims, "Squeeze": _squeeze, "Transpose": _transpose,
    "Square": _square,
}

# Nodes TF writes that kernelgraph does without, and every node reading them: TF's Saver
# (kernelgraph's Saver takes its place), and a variable's is-initialized check.
_SKIPPED = {"VarIsInitializedOp": "TF's is-initialized check",
            "IsVariableInitialized": "TF's is-initialized check",
            "SaveV2": "TF's Saver", "RestoreV2": "TF's Saver", "SaveSlices": "TF's Saver",
            "RestoreSlices": "TF's Saver", "MergeV2Checkpoints": "TF's Saver",
            "ShardedFilename": "TF's Saver", "StringJoin": "TF's Saver"}


def _skipped(graph_def) -> dict:
    """name -> why, for the nodes an import leaves out (``_SKIPPED``, TF's string constants,
    which feed its Saver) and those that read one of them."""
    why = {}
    for nd in graph_def.node:
        if nd.op in _SKIPPED:
            why[nd.name] = _SKIPPED[nd.op]
        elif "_kg_unwritable" in nd.attr:  # a dataset's iterator, a cond's branches
            why[nd.name] = (f"kernelgraph wrote it with "
                            f"{nd.attr['_kg_unwritable'].s.decode()}, which a file cannot hold")
        elif nd.op == "Const" and "_kg_op" not in nd.attr and \
                nd.attr["dtype"].type == protos().types.DT_STRING:
            why[nd.name] = "a string constant (kernelgraph's tensors hold numbers)"
    changed = bool(why)
    while changed:
        changed = False
        for nd in graph_def.node:
            if nd.name not in why:
                for ref in nd.input:
                    source = ref.lstrip("^").split(":")[0]
                    if source in why:
                        why[nd.name] = f"it reads '{source}', {why[source]}"
                        changed = True
                        break
    return why


def _kg_rebuild(ctx, nd, ins, name):
    card = nd.attr["_kg_op"].s.decode()
    if card not in OPS:
        raise NotImplementedError(f"import_graph_def: node '{nd.name}' needs kernelgraph's "
                                  f"op '{card}', which this kernelgraph does not have")
    attrs = decode_attrs(json.loads(nd.attr["_kg_attrs"].s.decode() or "{}"))
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
        self.skipped = _skipped(graph_def)

    def trainable(self, nd) -> bool:
        if "_kg_trainable" in nd.attr:
            return bool(nd.attr["_kg_trainable"].b)
        return self._trainable(nd.name)

    def initial_value(self, nd):
        assign = self.defs.get(self.initializer_of.get(nd.name, ""))
        return None if assign is None else self.node(assign.input[1])

    def deps(self, nd) -> list:
        if nd.name in self.skipped:
            return []
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
        if nd.name in self.skipped:
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
def unscoped(graph):
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
        with unscoped(graph):
            for nd in graph_def.node:
                ctx.node(nd.name)
    left = [n for n, why in ctx.skipped.items() if "file cannot hold" in why]
    if left:
        shown = ", ".join(f"'{n}'" for n in left[:5]) + (" ..." if len(left) > 5 else "")
        warnings.warn(f"import_graph_def: {len(left)} nodes were not imported ({shown}): "
                      f"{ctx.skipped[left[0]]}, or they read such a node", stacklevel=2)
    if return_elements is None:
        return None
    found = []
    for ref in return_elements:
        base = ref.split(":")[0]
        if base not in ctx.made:
            raise ValueError(f"Requested return_element '{ref}' not found in graph_def.")
        if base in ctx.skipped:
            raise ValueError(f"import_graph_def: '{ref}' was not imported: "
                             f"{ctx.skipped[base]}")
        node = ctx.made[base]
        found.append(node if ":" in ref or node is None else operation_of(node))
    return found


__all__ = ["import_graph_def"]
