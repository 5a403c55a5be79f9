"""The static front-end of every op: calling an op on graph nodes adds a node.

Shapes and dtypes are inferred right here, so a known mismatch fails on the line that wrote
it, naming both shapes; Python numbers become ``const`` nodes whose dtype follows the other
operand (``x * 2.0`` stays float64 for a float64 ``x``).

Placement happens here too: a node goes to the ``with kg.device(...)`` device, else to the
device of its first input, and any input living elsewhere is read through a ``to_device``
node (one per input and device, shared by every reader).
"""

from __future__ import annotations

import numpy as np

from .. import devices, operators
from .. import dtypes as D
from ..eager.tensors import Tensor
from ..errors import ShapeError, located
from ..graph import Node, get_default_graph, node_of, user_location
from ..kernels import reference_grads as RG
from ..ops import methods, registry
from ..ops.registry import define


def _const_infer(shapes_, dtypes, attrs):
    v = attrs["value"]
    return v.shape, v.dtype


def _const_forward(value):
    return value


const = define("const", _const_forward, _const_infer, None, reference=RG.const,
               cuda=lambda k: lambda value: k.core.to_device(np.asarray(value)),
               doc="A value fixed in the graph.")


def constant_node(value, dtype=None, shape=None, name=None, graph=None, location=None,
                  device=None) -> Node:
    """A ``const`` node holding ``value`` (converted to ``dtype``; broadcast to ``shape``).

    Values convert as :func:`kernelgraph.dtypes.convert` says, as ``kg.tensor`` converts
    them: exactly, or refused with a ConversionError (no wrapped uint64, no int beyond
    int64, no complex or text). A Python scalar takes its kind's default dtype (float32,
    int64, bool); a NumPy scalar keeps its dtype where kernelgraph keeps it
    (``np.int32(1)`` is int32, ``np.float64(nan)`` float64), as in TF1."""
    if isinstance(value, Node):
        raise TypeError(f"kg.constant needs a value, got the graph node '{value.name}'")
    arr = D.convert(value, dtype, what="kg.constant")
    if shape is not None:
        arr = np.broadcast_to(arr, tuple(shape)).copy()
    arr.setflags(write=False)  # shared by every run: nobody may change it in place
    graph = graph if graph is not None else get_default_graph()
    return graph.add_node(const, (), {"value": arr}, arr.shape, arr.dtype, name or "Const",
                          location or user_location(2), device=device)


def placed(node: Node, device, location=None) -> Node:
    """``node`` as read on ``device``: itself, or the (shared) ``to_device`` node copying it."""
    if node.device is device or node.device == device:
        return node
    key = (id(node), device.name)
    graph = node.graph
    hit = graph.transfers.get(key)
    if hit is None:
        hit = graph.transfers[key] = graph.add_node(
            _to_device, (node,), {"device": device.name}, node.shape, node.dtype,
            f"{node.name}/to_{device.type}", location, device=device)
    return hit


def build(op, args, attrs) -> Node:
    """Add a node for ``op(*args, **attrs)`` to the graph of its node inputs."""
    name = attrs.pop("name", None) if "name" in attrs else None
    location = user_location(2)
    # A face's wrapper among the operands (kg_node * tf_tensor) is read as the node it wraps.
    for a in args:
        t = type(a)
        if t is Node or t is float or t is int:  # the common operands, told apart first
            continue
        if not isinstance(a, Node) and hasattr(t, "kg_node"):
            args = tuple(a if isinstance(a, Node) or node_of(a) is None else node_of(a)
                         for a in args)
            break
    # Control flow (static/control_flow.py): while a kg.cond branch or kg.while_loop body is
    # traced into its own graph, a node of an enclosing graph is read through a placeholder
    # of that graph (a *capture*, fed with the outer value when the branch or body runs).
    current = get_default_graph()
    if getattr(current, "capture", None) is not None:
        args = tuple(current.capture(a) if isinstance(a, Node) and a.graph is not current
                     else a for a in args)
    graph = first = None
    for a in args:
        if type(a) is Node or isinstance(a, Node):
            if graph is None:
                graph, first = a.graph, a
            elif a.graph is not graph:
                raise located(ValueError(
                    f"Tensor {a!r} must be from the same graph as Tensor {first!r}."), location)
    if graph is None:
        graph = current
    # The dtype a Python number meets (a weak scalar, as in PyTorch): the first node among
    # the operands; where's condition is none of them.
    if op.name == "where":
        peer = next((a.dtype for a in args[1:] if isinstance(a, Node)), None)
    else:
        peer = first.dtype if first is not None else None
    if op is _to_device:  # an explicit copy: it runs on (and writes to) the target device
        device, moves = devices.device(attrs["device"]), False
    else:
        device, moves = devices.current(), True
        if device is None:
            device = first.device if first is not None else devices.CPU
    elementwise = "elementwise" in op.traits
    inputs = []
    for a in args:
        if type(a) is Node or isinstance(a, Node):
            inputs.append(a if not moves or a.device is device else placed(a, device, location))
        elif isinstance(a, Tensor):
            raise located(TypeError(
                f"cannot use an eager tensor in graph op '{op.name}'; wrap its value with "
                "kg.constant(t.detach().numpy()) or use a kg.placeholder"), location)
        else:
            weak = None
            # A bool stays a bool constant (promotion gives the same dtype), so that the op
            # still sees a bool operand where PyTorch refuses one (x - True).
            if peer is not None and elementwise:
                kind = D.scalar_dtype(a)  # (None, or one of the dtype singletons)
                if kind is not None and kind is not D.bool_:
                    weak = D.promote_with_scalar(peer, a)
            try:
                inputs.append(constant_node(a, dtype=weak, graph=graph, location=location,
                                            device=device))
            except D.ConversionError as e:  # x + 2**40 for an int32 x
                refusal = D.scalar_overflow(a, weak, op.name) if type(a) is int and \
                    weak is not None else type(e)(f"{op.name}: {e}")  # eager mode's words
                raise located(refusal, location) from None
    inputs = tuple(inputs)
    try:
        shape, dtype = op.infer([i.shape for i in inputs], [i.dtype for i in inputs], attrs)
    except (ShapeError, TypeError, ValueError) as e:
        msg = str(e) if str(e).startswith(op.name) else f"{op.name}: {e}"
        raise located(type(e)(msg), location) from None
    node = graph.add_node(op, inputs, attrs, shape, D.as_dtype(dtype), name, location,
                          device=device)
    # int8/int16/uint8/float16 tensors compute wide and are stored narrow again, wrapping
    # or rounding as TF1 and PyTorch do (u8 + u8 is uint8; f16 * 2.0 is float16).
    if not elementwise or op is _cast:
        return node
    for i in inputs:
        if i.dtype in _NARROW:
            break
    else:
        return node  # no narrow operand: nothing to store narrow again
    narrow = D.kept_narrow([i.dtype for i in inputs if i.dtype is not None], node.dtype)
    if narrow is None:
        return node
    return graph.add_node(_cast, (node,), {"dtype": narrow}, shape, narrow, None, location,
                          device=device)


_to_device = registry.OPS["to_device"]
_cast = registry.OPS["cast"]
_NARROW = D.WIDE  # the storage dtypes that compute wide (its keys)
registry.FRONTENDS[Node] = build
operators.install(Node, build)
# The same tensor methods as eager tensors (x.relu(), x.sum(dim=0), x.view(2, 3) ...), from
# the one table both install; the eager-only ones (item, backward, add_ ...) refuse by name.
methods.install(Node, graph_node=True)
