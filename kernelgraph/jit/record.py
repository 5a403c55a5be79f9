"""Tracing: run the Python function eagerly once, recording what it did, and turn the record
into a static :class:`~kernelgraph.Graph`.

While :class:`Recorder` is active every eager op is recorded (through the trace bus: each
op's :class:`~kernelgraph.EagerNode` with its inputs, attributes and the user's line), and
eager tensors report (through ``eager.set_tracer``) when Python reads a value (``bool(t)``,
``t.item()`` ...), reads a shape, makes a tensor from data or detaches one.

:func:`to_graph` then rebuilds the computation with the static front-end: the function's
tensor arguments become placeholders, tensors it made from data become constants, tensors it
read from elsewhere (parameters) become *captures* (placeholders fed on every call), and each
recorded op is added with the same op and attributes -- so the graph computes what the eager
run computed, with the same kernels.

>>> import kernelgraph as kg
>>> x = kg.tensor([1.0, -2.0])
>>> with Recorder() as rec:
...     y = kg.relu(x) * 2.0
>>> traced = to_graph(rec, [x], ["x"], y)
>>> [n.op.name for n in traced.graph.nodes]
['placeholder', 'relu', 'const', 'mul']
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np

from .. import devices, eager, trace
from ..eager import EagerNode, Tensor
from ..graph import Graph, Node, user_location
from ..ops import random as kg_random
from ..ops import registry
from ..static.build import build, constant_node
from ..static.variables import placeholder_op

_cast, _to_device = registry.OPS["cast"], registry.OPS["to_device"]


def _identity(x):
    return x


def _stop_infer(shapes, dtypes, attrs):
    return shapes[0], dtypes[0]


# detach() and ops run under no_grad() inside a traced function: the value passes, the
# gradient stops (TensorFlow's tf.stop_gradient). It is the identity op without a gradient
# rule, so kg.gradients stops there while every device and compiler pass already knows how
# to run it; the node is named "stop_gradient". Not registered: it is not a public op.
stop_gradient = registry.Op("identity", _identity, _stop_infer, None, view=True,
                            doc="Passes its input through; no gradient flows back.")


class EagerStream:
    """The draw counter of an eager random op with an explicit ``seed``, looked up when
    the plan draws: all eager calls with that seed share one counter (restarted by
    ``kg.random.seed``), so a traced ``kg.dropout(x, seed=7)`` draws what eager would."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def take(self) -> int:
        return kg_random._state["streams"].setdefault(self.key, kg_random.Stream()).take()

    def __repr__(self):
        return f"<eager random stream {self.key}>"


def _random_attrs(attrs: dict) -> dict:
    """A random op's attributes for the graph: an explicitly seeded eager stream is shared
    with eager mode, so the node reads it through :class:`EagerStream`."""
    key = (attrs["global_seed"], attrs["seed"])
    if kg_random._state["streams"].get(key) is attrs["stream"]:
        return dict(attrs, stream=EagerStream(key))
    return attrs


# Recorders are per thread: a function traced in one thread records that thread's ops and
# reads, never another thread's eager work. ``eager._tracer`` is _dispatch while any thread
# records; it hands a read to the innermost recorder of the reading thread, if any.
class _Recording(threading.local):
    stack: tuple = ()


_recording = _Recording()
_open = [0]  # recorders active in all threads
_open_lock = threading.Lock()


def _dispatch(kind, tensor, value):
    stack = _recording.stack
    if stack:
        stack[-1]._hook(kind, tensor, value)


class Recorder:
    """Records this thread's eager ops and value reads while active
    (``with Recorder() as rec:``)."""

    def __init__(self):
        self.nodes: list = []  # (EagerNode, whether its result required grad)
        self.reads: list = []  # (kind, tensor, value, location)
        self.shape_reads: list = []  # (tensor, location)
        self.created: dict = {}  # id -> tensor made from data inside (kg.tensor, kg.ones ...)
        self.detached: dict = {}  # id(detached) -> (detached, source)
        self.backward_at = None  # where backward() was called inside, if it was
        self._seen: set = set()

    def __enter__(self):
        self._thread = threading.get_ident()
        _recording.stack = (*_recording.stack, self)
        with _open_lock:
            _open[0] += 1
            eager.set_tracer(_dispatch)
        trace.add_listener(self._listen)
        return self

    def __exit__(self, *exc):
        trace.remove_listener(self._listen)
        _recording.stack = tuple(r for r in _recording.stack if r is not self)
        with _open_lock:
            _open[0] -= 1
            if not _open[0]:
                eager.set_tracer(None)
        return False

    def _listen(self, kind, **info):
        if threading.get_ident() != self._thread:
            return
        if kind == "node_added":
            node = info.get("node")
            if type(node) is EagerNode and id(node) not in self._seen:
                self._seen.add(id(node))
                # the rule eager.apply used to decide whether the result requires grad
                rg = (eager._local.grad_enabled and node.op.grad is not None and
                      node.value.dtype.kind == "f" and
                      any(type(x) is Tensor and x.requires_grad for x in node.inputs))
                self.nodes.append((node, rg))
        elif kind == "gradient" and self.backward_at is None:
            if type(info.get("node")) in (EagerNode, Tensor):
                self.backward_at = user_location()

    def _hook(self, kind, tensor, value):
        if kind == "new":
            self.created[id(tensor)] = tensor
        elif kind == "detach":
            self.detached[id(tensor)] = (tensor, value)
        elif kind == "copy":  # kg.tensor(t): t's values (maybe cast, moved) as a new leaf
            self.detached[id(tensor)] = (tensor, value)
        elif kind == "shape":
            self.shape_reads.append((tensor, user_location()))
        else:
            if isinstance(value, np.ndarray):
                value = value.copy()  # the frozen value, as it was when read
            self.reads.append((kind, tensor, value, user_location()))


class Traced:
    """What :func:`to_graph` made: the graph and how the call's pieces map onto it."""

    def __init__(self, graph):
        self.graph = graph
        self.inputs: list = []  # a placeholder per distinct tensor argument
        self.captures: list = []  # (placeholder, tensor) per captured tensor, in order
        self.outputs: list = []  # the output nodes, in the order of the output template
        self.output_grads: list = []  # per output: did the eager result require grad
        self.template = None  # the returned structure with output indices in it
        self.guards: list = []  # (node, kind, value, location) for each value read
        self.shape_reads: list = []  # locations where a shape of an unknown dim was read
        self.dynamic: set = set()  # ids of the nodes whose values vary from call to call


def _clean(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_.-/" else "_" for c in name).strip("_") or "arg"


def to_graph(rec: Recorder, tensors: list, names: list, result, shapes=None) -> Traced:
    """The static graph of a recorded run. ``tensors`` are the call's distinct tensor
    arguments (named ``names``); ``shapes`` may give their placeholders' shapes with ``None``
    dims (a relaxed trace); ``result`` is what the function returned."""
    graph = Graph()
    traced = Traced(graph)
    static: dict = {}  # id(tensor) -> node, for arguments, constants and captures
    by_node: dict = {}  # id(EagerNode) -> node

    def new_nodes(start, location):
        for n in graph.nodes[start:]:
            n.location = location

    def resolve(t: Tensor) -> Node:
        n = static.get(id(t))
        if n is not None:
            return n
        en = t._node
        if en is not None and id(en) in by_node:
            return by_node[id(en)]
        start = len(graph.nodes)
        if id(t) in rec.detached:
            source = rec.detached[id(t)][1]
            n = build(stop_gradient, (resolve(source),), {"name": "stop_gradient"})
            if t.dtype != source.dtype:
                n = build(_cast, (n,), {"dtype": t.dtype})
            if t.device != source.device:
                n = build(_to_device, (n,), {"device": t.device.name})
        elif id(t) in rec.created:
            n = constant_node(devices.to_numpy(t._array), dtype=t.dtype, name="Const",
                              device=t.device)
        else:
            shape = tuple(t._array.shape)  # (the CUDA simulator's shapes are not tuples)
            with t.device:
                n = graph.add_node(placeholder_op, (), {"shape": shape}, shape, t.dtype,
                                   f"captured_{len(traced.captures)}")
            traced.captures.append((n, t))
        new_nodes(start, None)
        static[id(t)] = n
        return n

    with graph.as_default(), devices.unplaced():
        for i, (t, name) in enumerate(zip(tensors, names)):
            shape = tuple(t._array.shape) if shapes is None else shapes[i]
            with t.device:
                n = graph.add_node(placeholder_op, (), {"shape": shape}, shape, t.dtype,
                                   _clean(name))
            traced.inputs.append(n)
            static[id(t)] = n
        for en, rg in rec.nodes:
            inputs = []
            for x in en.inputs:
                if type(x) is Tensor:
                    inputs.append(resolve(x))
                elif devices.is_cuda_array(x):
                    inputs.append(devices.to_numpy(x))
                else:
                    inputs.append(x)
            start = len(graph.nodes)
            scope = en.device if not any(isinstance(x, Node) for x in inputs) else \
                contextlib.nullcontext()
            attrs = dict(en.attrs or {})
            if "random" in en.op.traits:
                attrs = _random_attrs(attrs)
            with scope:
                n = build(en.op, tuple(inputs), attrs)
                if not rg and en.op.grad is not None and any(
                        type(x) is Tensor and x.requires_grad for x in en.inputs):
                    # computed under kg.no_grad(): no gradient flows back through it
                    n = build(stop_gradient, (n,), {"name": "stop_gradient"})
            new_nodes(start, en.location)
            by_node[id(en)] = n

        outputs, grads = [], []

        def output(obj):
            if type(obj) is Tensor:
                outputs.append(resolve(obj))
                grads.append(obj.requires_grad)
                return ("T", len(outputs) - 1)
            if isinstance(obj, list | tuple):
                kind = type(obj)
                items = [output(x) for x in obj]
                return ("L", kind, items)
            if type(obj) is dict:
                return ("D", {k: output(v) for k, v in obj.items()})
            if obj is None or isinstance(obj, int | float | complex | str | bytes | np.generic):
                return ("C", obj)
            if isinstance(obj, np.ndarray):
                return ("C", obj.copy())
            raise TypeError(f"a kg.function returned a {type(obj).__name__}; return tensors, "
                            "Python numbers, strings, None, or lists / tuples / dicts of them")

        traced.template = output(result)
        traced.outputs, traced.output_grads = outputs, grads
        for kind, t, value, location in rec.reads:
            traced.guards.append((resolve(t), kind, value, location))
        for t, location in rec.shape_reads:
            n = static.get(id(t))
            if n is None and t._node is not None:
                n = by_node.get(id(t._node))
            if n is not None and n.shape is not None and None in n.shape:
                traced.shape_reads.append(location)

    placeholders = {id(n) for n in traced.inputs} | {id(n) for n, _ in traced.captures}
    for n in graph.nodes:
        if id(n) in placeholders or "random" in n.op.traits or any(
                id(i) in traced.dynamic for i in n.inputs):
            traced.dynamic.add(id(n))
    traced.guards = [g for g in traced.guards if id(g[0]) in traced.dynamic]
    return traced


def rebuild(template, values: list):
    """The returned structure with output ``i`` replaced by ``values[i]``."""
    kind = template[0]
    if kind == "T":
        return values[template[1]]
    if kind == "C":
        value = template[1]
        return value.copy() if isinstance(value, np.ndarray) else value
    if kind == "D":
        return {k: rebuild(v, values) for k, v in template[1].items()}
    items = [rebuild(v, values) for v in template[2]]
    cls = template[1]
    if cls is list:
        return items
    if cls is tuple:
        return tuple(items)
    return cls(*items)  # a namedtuple
