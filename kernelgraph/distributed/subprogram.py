"""A stage's program as plain data: what the client ships to a worker once, and what the
worker builds into real nodes for the existing Plan machinery (see
:mod:`kernelgraph.distributed.partition`, whose stages hold one each).

>>> import kernelgraph as kg
>>> from kernelgraph.distributed.partition import partition
>>> g = kg.Graph()
>>> with g.as_default(), kg.device("worker:1/cuda:0"):
...     x = kg.placeholder(kg.float32, shape=[2], name="x")
...     y = kg.exp(x, name="y")
>>> program = partition([y], [x]).stages[0].program
>>> [(s.op, s.device) for s in program.specs]
[('placeholder', 'cpu'), ('to_device', 'cuda:0'), ('exp', 'cuda:0')]
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from .. import devices
from ..errors import describe_location
from ..graph import Graph
from ..ops import registry
from ..static.variables import variable_op

_PLAIN = (type(None), bool, int, float, complex, str, bytes, np.ndarray, np.generic, np.dtype)


def _plain(value) -> bool:
    """Whether an attr is plain data (shippable and hashable by content)."""
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, tuple | list):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def _digest(h, value) -> None:
    """Feed ``value`` (plain data) into the hash ``h`` by content."""
    if isinstance(value, np.ndarray):
        h.update(f"a{value.dtype.str}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, tuple | list):
        h.update(b"(")
        for v in value:
            _digest(h, v)
        h.update(b")")
    elif isinstance(value, dict):
        h.update(b"{")
        for k in sorted(value):
            h.update(k.encode() + b":")
            _digest(h, value[k])
        h.update(b"}")
    else:
        h.update(f"{type(value).__name__}:{value!r};".encode())


@dataclass(frozen=True)
class NodeSpec:
    """One node of a :class:`SubProgram`: what :meth:`SubProgram.build` needs to remake it."""

    op: str
    inputs: tuple  # indices of earlier specs
    attrs: dict
    shape: tuple | None
    dtype: np.dtype
    device: str  # local to the worker: 'cpu', 'cuda:0'
    name: str
    location: tuple | None
    controls: tuple = ()


@dataclass
class SubProgram:
    """A stage's nodes as plain data (see the module docstring): ``specs`` in an order where
    inputs come first; ``feeds``: the placeholder specs standing for the stage's inputs, in
    order; ``fetches``: the specs of its outputs, then of its targets (``n_outputs`` of
    them are outputs)."""

    specs: list
    feeds: list
    fetches: list
    n_outputs: int
    program_id: str = ""

    @classmethod
    def of(cls, stage, copies: list, by_name: dict, feeds: dict) -> SubProgram:
        """The program of ``stage`` (``copies``: the variables and constants it reads of its
        worker; ``by_name``/``feeds``: the run's nodes and fed nodes by key)."""
        specs: list[NodeSpec] = []
        index: dict[int, int] = {}
        uploads: dict[tuple, int] = {}  # (placeholder index, device) -> its to_device spec
        received = set()

        def add(spec):
            specs.append(spec)
            return len(specs) - 1

        feed_idx = []
        for key in stage.inputs:
            n = feeds[key] if key in feeds else by_name[key]
            # values arrive as host arrays: a placeholder on the worker's CPU
            i = add(NodeSpec("placeholder", (), {"shape": n.shape}, n.shape, n.dtype, "cpu", key,
                             n.location))
            index[id(n)] = i
            received.add(i)
            feed_idx.append(i)

        def input_index(p, consumer_device, consumer_op) -> int:
            i = index[id(p)]
            if i not in received or consumer_device == "cpu" or consumer_op == "to_device":
                return i
            hit = uploads.get((i, consumer_device))
            if hit is None:  # a kernel on a GPU reads the received value there
                hit = uploads[(i, consumer_device)] = add(NodeSpec(
                    "to_device", (i,), {"device": consumer_device}, specs[i].shape,
                    specs[i].dtype, consumer_device, f"{specs[i].name}/received_on_"
                    f"{consumer_device.replace(':', '')}", specs[i].location))
            return hit

        for n in [*copies, *stage.nodes]:
            if id(n) in index:
                continue
            for key, value in (n.attrs or {}).items():
                if not _plain(value):
                    raise NotImplementedError(
                        f"node '{n.name}' (op {n.op.name}) cannot run on a worker yet: its "
                        f"attr '{key}' holds a {type(value).__name__}, not plain data (control "
                        f"flow runs in one process for now)\n{describe_location(n.location)}")
            local = n.device.local.name
            inputs = tuple(input_index(p, local, n.op.name) for p in n.inputs)
            controls = tuple(index[id(c)] for c in n.control_inputs
                             if id(c) in index and index[id(c)] not in received)
            attrs = dict(n.attrs or {})
            if n.op.name == "to_device":  # copies to its device on this worker
                attrs["device"] = local
            index[id(n)] = add(NodeSpec(n.op.name, inputs, attrs, n.shape, n.dtype, local,
                                        n.name, n.location, controls))
        fetch_idx = [index[id(by_name[k])] for k in stage.outputs]
        fetch_idx += [index[id(t)] for t in stage.targets]
        program = cls(specs, feed_idx, fetch_idx, len(stage.outputs))
        h = hashlib.sha1()
        _digest(h, [[s.op, s.inputs, s.attrs, s.shape, np.dtype(s.dtype).str, s.device,
                     s.name, s.location, s.controls] for s in specs])
        _digest(h, [program.feeds, program.fetches, program.n_outputs])
        program.program_id = h.hexdigest()[:16]
        return program

    def build(self, variables: dict | None = None) -> tuple[list, list]:
        """Real nodes for this program in a fresh Graph: ``(fetch_nodes, feed_nodes)`` for
        ``kernelgraph.static.plan.Plan``. ``variables`` (name -> node) is the worker's
        table of variable nodes, kept across runs: a variable found there is reused (its
        node keys the worker's variable store), a new one is added to it.

        >>> import kernelgraph as kg
        >>> from kernelgraph.distributed.partition import partition
        >>> g = kg.Graph()
        >>> with g.as_default(), kg.device("worker:1"):
        ...     w = kg.Variable([1.0, 2.0], name="w")
        ...     y = kg.multiply(w, 3.0, name="y")
        >>> p = partition([y])
        >>> table = {}
        >>> fetch_nodes, feed_nodes = p.stages[0].program.build(table)
        >>> [n.name for n in fetch_nodes], str(fetch_nodes[0].device), list(table)
        (['y'], 'cpu', ['w'])
        """
        variables = {} if variables is None else variables
        graph = Graph()
        nodes: list = []
        for s in self.specs:
            op = registry.OPS[s.op]
            dev = devices.device(s.device).local
            if op is variable_op:
                node = variables.get(s.name)
                if node is None:
                    node = variables[s.name] = Graph().add_node(
                        op, (), dict(s.attrs), s.shape, s.dtype, s.name, s.location,
                        device=dev)
                elif node.shape != s.shape or node.dtype != s.dtype:
                    raise ValueError(
                        f"variable '{s.name}' is {node.shape} {node.dtype} on this worker but "
                        f"the program reads it as {s.shape} {s.dtype}")
            else:
                node = graph.add_node(op, tuple(nodes[i] for i in s.inputs), dict(s.attrs),
                                      s.shape, s.dtype, s.name, s.location,
                                      control_inputs=tuple(nodes[i] for i in s.controls),
                                      device=dev)
            nodes.append(node)
        return [nodes[i] for i in self.fetches], [nodes[i] for i in self.feeds]

    def __len__(self):
        return len(self.specs)
