"""Running an op now on eager tensors: :func:`apply`, the eager front-end of every op;
:func:`_binary`, the Python operators' hot path; the recording of an :class:`EagerNode` for
autograd and for trace listeners; and :func:`graph_of`, which reads what was recorded."""

from __future__ import annotations

import time

import numpy as np

from .. import devices, trace
from .. import dtypes as D
from ..graph import Node, _sequence, user_location
from ..ops import registry
from ..ops.casting import write_out
from .creation import tensor
from .grad_mode import _local
from .tensors import EagerNode, Tensor, _wrap, source

ndarray = np.ndarray

# While a ``with kg.autobatch():`` block is open in some thread, ``_deferred`` is a callable
# ``(op, args, attrs)`` that records the op for batched execution instead of running it (see
# kernelgraph/autobatching/); the ops of that thread alone are deferred (``_local.batching``),
# other threads' run at once. None otherwise: one global check per op. It is set on the
# package (``kernelgraph.eager._deferred = ...``), which passes it on to here (see
# eager/__init__.py).
_deferred = None


# -- running ops ---------------------------------------------------------------------------------
def _value(a, op=None, args=()):
    """The value an op computes on for operand ``a`` (one of ``args``, the op's operands): a
    tensor's array; a NumPy array, a list or a NumPy scalar converted exactly as kg.tensor
    converts it (an array of a kept dtype as it is); Python numbers as they are (weak)."""
    t = type(a)
    if t is Tensor:
        return a._array
    if t is ndarray:
        return a if a.dtype in _KEPT else D.operand(a, *_argument(op, args, a))
    if t is float or t is int or t is bool:
        return a
    if devices.is_cuda_array(a):
        return a
    if isinstance(a, np.floating | np.integer):  # weak, as PyTorch takes NumPy scalars
        return a.item()
    if isinstance(a, Node):
        raise TypeError(f"cannot mix the graph node '{a.name}' with eager tensors; run the "
                        "graph in a Session first, or build everything in one mode")
    if isinstance(a, list | tuple | np.generic):
        op_name, position = _argument(op, args, a)
        return D.convert(a, what=f"{op_name}(): argument {position + 1}" if op_name
                         else "an operand")
    raise TypeError(f"expected a kg.Tensor or a number, got {type(a).__name__}")


def _argument(op, args, a) -> tuple:
    """(op name, position of ``a`` among ``args``) for a conversion's error message."""
    return (op.name if op is not None else "",
            next((i for i, x in enumerate(args) if x is a), 0))


_KEPT = D.KEPT  # a module global: one lookup on the hot path
_FLOAT = np.dtype(np.float32)


def _explain(op, args, attrs, error):
    """Turn a kernel's error into one that names the op, the shapes and dtypes (see
    :meth:`kernelgraph.ops.registry.Op.explain`)."""
    return op.explain([_value(a, op, args) for a in args], attrs, error)


def apply(op, args, attrs) -> Tensor:
    """Run ``op`` now on eager tensors (the eager front-end of every op)."""
    if attrs and "name" in attrs:
        attrs = {k: v for k, v in attrs.items() if k != "name"}
    if attrs and "out" in attrs:  # PyTorch's out=: the result copied into a tensor you own
        out = attrs["out"]
        result = apply(op, args, {k: v for k, v in attrs.items() if k != "out"})
        if out is None:
            return result
        return write_out(op.name, result, out, args, grad_enabled=_local.grad_enabled,
                         differentiable=op.grad is not None)
    if _deferred is not None and _local.batching:
        return _deferred(op, args, attrs)
    # ``checked``: some value is not known to be a GPU array or a Python number, so a GPU op
    # must look its device up (and name a CPU/GPU mix) instead of taking the cached kernel.
    values, need, any_tensor, on_gpu, checked = [], False, False, False, False
    gpu = _GPU_TYPES
    for a in args:
        if type(a) is Tensor:
            d = a._array
            values.append(d)
            any_tensor = True
            if type(d) is not ndarray:
                on_gpu = True
                if type(d) not in gpu:
                    checked = True
            else:
                checked = True
            if a.requires_grad:
                need = True
        else:
            v = _value(a, op, args)
            values.append(v)
            if type(v) not in gpu and type(v) not in _NUMBER_TYPES:
                checked = True
    if not any_tensor:
        checked = True
        if values and not isinstance(values[0], ndarray):
            values[0] = tensor(values[0])._array  # kg.add(1.0, 2.0): the first number is a tensor
            on_gpu = type(values[0]) is not ndarray
        elif not values and devices.current() is not None:  # kg.random.normal(...) in a scope
            on_gpu = devices.current().type != "cpu"
    forward = op.forward
    if on_gpu:
        # The lean path: every operand is already a CUDA array, so the device is cuda:0 and
        # the op's CUDA kernel, built and checked (devices.require) on its first use, is
        # reused without asking the driver again.
        forward = None if checked else op._cuda_kernel
        if forward is None:
            forward = _gpu_forward(op, values)
    start = time.perf_counter() if trace.active else 0.0
    try:
        out = forward(*values, **attrs)
    except devices.DeviceError:
        raise
    except Exception as e:  # noqa: BLE001 - re-raised with the op's shapes named
        raise _explain(op, args, attrs, e) from None
    result = _wrap(out)
    # (an integer or bool result never requires grad, as in PyTorch: x.long(), x.argmax())
    if need and _local.grad_enabled and op.grad is not None and \
            getattr(out, "dtype", _FLOAT).kind in "fc":
        _record(op, args, attrs, result)
        result.requires_grad = True
    if trace.active:
        _trace(op, args, attrs, result, start)
    return result


# The exact classes of numba's device arrays (filled on the first GPU op: looking them up
# imports numba.cuda) and of Python numbers, for the GPU fast path of :func:`apply`.
_GPU_TYPES: frozenset = frozenset()
_NUMBER_TYPES = frozenset((float, int, bool))


def _gpu_forward(op, values):
    """The CUDA kernel of ``op`` for ``values`` through every check (the device of each
    value, a CPU/GPU mix named, the device usable here); afterwards :func:`apply` takes
    ``op._cuda_kernel`` directly for operands that are all CUDA arrays."""
    global _GPU_TYPES
    forward = op.kernel(devices.device_of_values(op, values) if values else devices.current())
    if not _GPU_TYPES and devices.CUDA_ARRAY_TYPES:
        _GPU_TYPES = frozenset(devices.CUDA_ARRAY_TYPES)
    return forward


def _record(op, args, attrs, result):
    node = EagerNode.__new__(EagerNode)
    node.op = op
    node.inputs = args
    node.attrs = attrs
    node.value = result._array
    node.seq = next(_sequence)
    node.freed = False
    node.hooks = None
    node.retained = None
    node.location = None
    result._node = node
    return node


def _trace(op, args, attrs, result, start):
    elapsed = time.perf_counter() - start
    # While someone watches, every op is recorded (not only those that need gradients), so
    # the whole computation can be drawn; requires_grad is left as it was.
    node = result._node if result._node is not None else _record(op, args, attrs, result)
    node.location = user_location(3)
    trace.emit("node_added", node=node, mode="eager", location=node.location)
    trace.emit("node_executed", node=node, mode="eager", seconds=elapsed)


def _binary(op):
    """Python operator ``x <op> y`` for a Tensor on the left: the eager hot path.

    The common case -- two tensors of one dtype whose ufunc loop exists, nobody tracing --
    calls the kernel's ufunc directly; everything else takes :func:`apply`.
    """
    loops = op.loops.by_dtype
    new = Tensor.__new__

    def method(x, y):
        if _deferred is not None and _local.batching:
            return _deferred(op, (x, y), {})
        ty = type(y)
        if ty is Tensor:
            yd = y._array
            need = x.requires_grad or y.requires_grad
        elif ty is float:
            yd = y
            need = x.requires_grad
        else:
            return apply(op, (x, y), {})
        xd = x._array
        if type(xd) is not ndarray:
            return apply(op, (x, y), {})  # a GPU tensor: the CUDA kernel
        dt = xd.dtype
        u = loops.get(dt)
        if u is None or trace.active or (yd.dtype is not dt if ty is Tensor else dt.kind != "f"):
            return apply(op, (x, y), {})
        try:
            out = u(xd, yd)
        except Exception as e:  # noqa: BLE001
            raise _explain(op, (x, y), {}, e) from None
        t = new(Tensor)
        t._array = out if type(out) is ndarray else np.asarray(out)
        if need and _local.grad_enabled:
            _record(op, (x, y), None, t)
            t.requires_grad = True
        else:
            t._node = None
            t.requires_grad = False
        return t

    return method


# The registry dispatches here for eager tensors and for calls with no tensor at all.
registry.FRONTENDS[Tensor] = apply
registry.DEFAULT_FRONTEND[:] = [apply]


# -- inspection ----------------------------------------------------------------------------------
def graph_of(*tensors) -> dict:
    """The recorded graph behind ``tensors``: ``{'nodes': [...], 'edges': [(src, dst)]}``
    with every node's id, op, shape, dtype and value, in creation order. A node an in-place
    op recorded has its op's in-place name (``add_``, ``setitem_``) and ``inplace`` True.

    >>> import kernelgraph as kg
    >>> y = kg.tensor([1.0, 2.0], requires_grad=True) * 2
    >>> y[0] = 5.0
    >>> [(n["op"], n["inplace"]) for n in graph_of(y)["nodes"]]
    [('leaf', False), ('mul', False), ('setitem_', True)]
    """
    nodes, edges, seen = [], [], {}
    leaves = {}

    def leaf_id(t):
        if id(t) not in leaves:
            leaves[id(t)] = (f"leaf_{len(leaves)}", t)
        return leaves[id(t)][0]

    stack = [t._node for t in tensors if t._node is not None]
    while stack:
        n = stack.pop()
        if n.seq in seen:
            continue
        seen[n.seq] = n
        for x in n.inputs:
            if type(x) is Tensor:
                made_by = source(x, n.seq)[0]  # x as n used it (before any in-place op)
                if made_by is not None:
                    stack.append(made_by)
                    edges.append((made_by.name, n.name))
                else:
                    edges.append((leaf_id(x), n.name))
    for lid, t in leaves.values():
        nodes.append({"id": lid, "op": "leaf", "shape": t.shape, "dtype": t.dtype.name,
                      "value": t._array, "requires_grad": t.requires_grad, "inplace": False})
    for n in sorted(seen.values(), key=lambda n: n.seq):
        nodes.append({"id": n.name, "op": n.op.name, "shape": n.shape, "dtype": n.dtype.name,
                      "value": n.value, "requires_grad": True,
                      "inplace": getattr(n.op, "inplace", False)})
    return {"nodes": nodes, "edges": edges}
