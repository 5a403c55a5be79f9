"""kernelgraph's graphs as TensorBoard's ``GraphDef``, so its graph tab draws them.

TensorBoard draws a GraphDef's nodes grouped by the '/'-separated scopes of their names,
with an edge for every input (``'^name'`` a control input, drawn dotted), the op type in
each node's card, and the shapes from the ``_output_shapes`` attribute. Two sources:

- a static graph (:func:`static_graph_def`): every node with its name scope; the op type
  is asked of ``type_of`` (TF1's face passes its ``Operation.type``: 'MatMul', 'AddV2');
- one eager forward pass of a model (:func:`eager_graph_def`): the nodes recorded while
  ``model(*inputs)`` ran, each inside the scope of the module that made it, named as
  PyTorch's ``add_graph`` names scopes (``Net/Linear[fc1]``); the inputs under 'input/',
  the results under 'output/', parameters as 'Parameter' nodes in their module's scope.

>>> import kernelgraph as kg
>>> with kg.Graph().as_default() as g:
...     with kg.name_scope("layer"):
...         y = kg.placeholder(kg.float32, shape=[None, 2], name="x") * 2.0
>>> gd = static_graph_def(g)
>>> for n in gd.node:
...     print(n.name, n.op, list(n.input))
layer/x placeholder []
layer/Const const []
layer/mul mul ['layer/x', 'layer/Const']
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import numpy as np

from ... import trace
from ...eager.tensors import Tensor, source
from .summaries import protos

_DT = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF", "int32": "DT_INT32",
       "int64": "DT_INT64", "int16": "DT_INT16", "int8": "DT_INT8", "uint8": "DT_UINT8",
       "bool": "DT_BOOL", "complex64": "DT_COMPLEX64", "object": "DT_STRING"}


def _attrs(node_def, dtype, shape) -> None:
    p = protos()
    name = _DT.get(np.dtype(dtype).name) if dtype is not None else None
    if name is not None:
        node_def.attr["dtype"].type = getattr(p.types, name)
    if shape is not None:
        dims = [p.shape.TensorShapeProto.Dim(size=-1 if d is None else int(d)) for d in shape]
        node_def.attr["_output_shapes"].list.shape.add().dim.extend(dims)


def _node_def(graph_def, name, op, inputs, dtype=None, shape=None, device=""):
    node = graph_def.node.add(name=name, op=op, input=inputs, device=device)
    _attrs(node, dtype, shape)
    return node


def static_graph_def(graph, type_of: Callable | None = None):
    """The GraphDef of a static graph: its nodes in creation order, with names, op types
    (``type_of(node)``, else the op card's name), inputs, control inputs, dtypes and
    shapes."""
    gd = protos().graph.GraphDef()
    for n in graph.nodes:
        inputs = [i.name for i in n.inputs] + ["^" + c.name for c in n.control_inputs]
        shape = n.shape if n.dtype is not None and np.dtype(n.dtype) != object else None
        _node_def(gd, n.name, type_of(n) if type_of else n.op.name, inputs, n.dtype, shape)
    gd.versions.producer = 22
    return gd


@contextlib.contextmanager
def _module_scopes(model):
    """Inside: every submodule's forward runs in a scope named like PyTorch's (the
    class name, with the attribute name in brackets); ``stack`` holds the current one."""
    stack = [type(model).__name__]
    patched = []

    def scoped(module, name):
        forward = module.forward

        def forward_in_scope(*args, **kwargs):
            stack.append(name)
            try:
                return forward(*args, **kwargs)
            finally:
                stack.pop()
        return forward_in_scope

    for path, module in model.named_modules():
        if path:
            object.__setattr__(module, "forward", scoped(module, _scope(model, path)))
            patched.append(module)
    try:
        yield stack
    finally:
        for module in patched:
            object.__delattr__(module, "forward")


def _scope(model, path: str) -> str:
    """The scope of the submodule at ``path`` ('head.0'): 'Net/Sequential[head]/Linear[0]'."""
    parts, module = [type(model).__name__], model
    for attr in path.split(".") if path else ():
        module = module._modules[attr]
        parts.append(f"{type(module).__name__}[{attr}]")
    return "/".join(parts)


def eager_graph_def(model, inputs):
    """Run ``model(*inputs)`` once and return (GraphDef of what it computed, its output)."""
    inputs = inputs if isinstance(inputs, tuple | list) else (inputs,)
    recorded: list = []  # (node, scope) in creation order
    with _module_scopes(model) as stack:
        def listen(kind, **info):
            if kind == "node_added" and info.get("mode") == "eager":
                recorded.append((info["node"], stack[-1]))
        with trace.listening(listen):
            out = model(*inputs)
    outs = out if isinstance(out, tuple | list) else (out,)
    params = {id(p): name for name, p in model.named_parameters()}
    gd = protos().graph.GraphDef()
    names: dict = {}  # id(node) or id(leaf tensor) -> its name in the GraphDef
    counts: dict = {}

    def unique(base):
        k = counts.get(base, 0)
        counts[base] = k + 1
        return base if k == 0 else f"{base}_{k}"

    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            names[id(x)] = _node_def(gd, f"input/input_{i}", "IO Node", [], x.dtype,
                                     x.shape).name

    def leaf(x, scope):
        key = id(x)
        if key not in names:
            if key in params:
                owner, _, attr = params[key].rpartition(".")
                where = _scope(model, owner)
                names[key] = _node_def(gd, unique(f"{where}/{attr}"), "Parameter", [],
                                       x.dtype, x.shape).name
            else:
                names[key] = _node_def(gd, unique(f"{scope}/constant"), "Constant", [],
                                       x.dtype, x.shape).name
        return names[key]

    for node, scope in recorded:
        ins = []
        for x in node.inputs:
            if isinstance(x, Tensor):
                made = source(x, node.seq)[0]
                ins.append(names[id(made)] if made is not None and id(made) in names
                           else leaf(x, scope))
        names[id(node)] = _node_def(gd, unique(f"{scope}/{node.op.name}"), node.op.name, ins,
                                    node.dtype, node.shape).name
    for i, o in enumerate(outs):
        if isinstance(o, Tensor):
            src = names.get(id(o._node)) if o._node is not None else names.get(id(o))
            _node_def(gd, f"output/output_{i}", "IO Node", [src] if src else [], o.dtype,
                      o.shape)
    gd.versions.producer = 22
    return gd, out
