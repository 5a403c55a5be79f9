"""One trace of a ``kg.function``: its graph, its compiled plans, and the checks that say
whether a call may reuse it (captured tensors still fit, frozen values still hold).

A call feeds the plan the arguments' arrays and the captured tensors' current arrays, and
fetches the outputs together with every *guarded* value (a value the Python code read while
tracing): if one of those differs from what the trace saw, the call is a miss and the
function is traced again for these inputs -- results are always those eager mode gives.

Gradients: when an input or a captured tensor requires grad, each output that requires grad
is recorded as one eager node (op ``function:<name>``) whose gradient rule runs a second
compiled plan, built with :func:`kernelgraph.gradients` on the traced graph. The forward
plan then also fetches the intermediate values that plan reads, so backward recomputes
nothing (and sees the very dropout masks the forward drew).
"""

from __future__ import annotations

import math

import numpy as np

from .. import devices, trace
from ..dtypes import FLOATS
from ..eager import Tensor, _record, _wrap
from ..errors import OpError, TraceError
from ..graph import ancestors, describe_location, shape_str, user_location
from ..ops.registry import Op
from ..static.gradients import gradients
from ..static.session import Session
from ..static.variables import placeholder_op
from .record import Traced, rebuild

ndarray = np.ndarray
_CONVERT = {"bool()": bool, "int()": int, "float()": float}


class Guard:
    """A value the Python code read while tracing: which node, how it was read (``kind``:
    ``"bool()"``, ``"item()"``, ``"numpy()"`` ...), what it was, and the user's line."""

    __slots__ = ("node", "kind", "value", "location")

    def __init__(self, node, kind, value, location):
        self.node, self.kind, self.location = node, kind, location
        self.value = self._python(value)

    def _python(self, v):
        convert = _CONVERT.get(self.kind)
        return convert(v) if convert is not None else v

    def seen(self, v):
        """What the Python code would have read from the fetched value ``v``."""
        v = devices.to_numpy(v)
        if self.kind in ("numpy()", "np.asarray()"):
            return np.asarray(v)
        if self.kind == "tolist()":
            return np.asarray(v).tolist()
        return self._python(np.asarray(v).item())

    def holds(self, v) -> bool:
        """Does the value fetched this call equal the value the trace froze?"""
        now = self.seen(v)
        if isinstance(now, ndarray):
            frozen = self.value
            return (now.shape == frozen.shape and
                    bool(np.array_equal(now, frozen, equal_nan=now.dtype.kind == "f")))
        if isinstance(now, float) and math.isnan(now):
            return isinstance(self.value, float) and math.isnan(self.value)
        if isinstance(now, list):
            return bool(np.array_equal(np.asarray(now), np.asarray(self.value),
                                       equal_nan=np.asarray(now).dtype.kind == "f"))
        return now == self.value

    def where(self) -> str:
        return describe_location(self.location) if self.location else "  (unknown line)"

    def __repr__(self):
        return f"<guard {self.kind} == {_short(self.value)} at {self.where().strip()}>"


def _short(value) -> str:
    if isinstance(value, ndarray):
        text = np.array2string(value, threshold=6, separator=", ")
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


class Miss:
    """Why a call could not reuse a trace (``reason``: words for the retracing warning);
    for a guard, the guard and the value it has now."""

    __slots__ = ("reason", "guard", "now", "stale")

    def __init__(self, reason: str, guard: Guard | None = None, now=None, stale=False):
        self.reason, self.guard, self.now, self.stale = reason, guard, now, stale


class _OutputGrad:
    """The backward plan of one output: its grad_ys placeholder, the gradient nodes (one per
    input that gets one, at ``positions`` of the feeds) and the forward nodes they read."""

    __slots__ = ("gy", "positions", "grads", "saved")

    def __init__(self, gy, positions, grads, saved):
        self.gy, self.positions, self.grads, self.saved = gy, positions, grads, saved


class ConcreteFunction:
    """One trace: a static graph for one input signature (``fn.get_concrete_function(x)``).

    ``graph`` is the traced :class:`~kernelgraph.Graph` (``kg.show(cf.graph)`` draws it);
    ``inputs`` its argument placeholders, ``captures`` the captured tensors it feeds,
    ``outputs`` the fetched nodes and ``guards`` the values it re-checks on every call.
    """

    def __init__(self, name: str, traced: Traced, key: tuple, arg_names: list, captures: list,
                 relaxed: tuple | None = None):
        self.name = name
        self.graph = traced.graph
        self.key = key
        self.arg_names = arg_names
        self.relaxed = relaxed  # the signature with None dims, for a relaxed trace
        self.inputs = traced.inputs
        self.captures = captures
        self.feeds = list(traced.inputs) + [c.node for c in captures]
        specs = [s for s in key[2] if s[0] == "T"]
        self.feed_grads = [s[4] for s in specs] + [c.spec[3] for c in captures]
        self.outputs = traced.outputs
        self.output_grads = traced.output_grads
        self.template = traced.template
        self.guards = [Guard(*g) for g in traced.guards]
        self.dynamic = traced.dynamic
        self.session = Session(self.graph)
        # Whether outputs get a grad_fn: decided by the trace's own eager run (grad mode is
        # part of the signature, and enable_grad / no_grad inside are in output_grads).
        self.differentiable = any(self.feed_grads) and any(self.output_grads)
        self._plans: dict = {}
        self._last = None  # (with_grad, trace.active, plan) of the last call
        self._grads: dict | None = None
        self._saved_nodes: list = []
        self.call_op = Op(f"function:{name}", None, None, _backward)

    # -- running -----------------------------------------------------------------------------
    def run(self, tensors: list, args: tuple, kwargs: dict):
        """The outputs for this call, or a :class:`Miss` when this trace does not fit it."""
        values = [t._array for t in tensors]
        held = None
        if self.captures:
            held = []
            for c in self.captures:
                t = c.get(args, kwargs)
                if type(t) is not Tensor:
                    return Miss(self._capture_change(c, t), stale=t is None and c.name is None)
                d = t._array
                if (d.shape, d.dtype, type(d), t.requires_grad) != c.spec:
                    return Miss(self._capture_change(c, t))
                held.append(t)
                values.append(d)
        with_grad = self.differentiable
        last = self._last
        if last is not None and last[0] is with_grad and last[1] is trace.active:
            plan = last[2]  # the common case: the same plan as the last call
        else:
            plan = self._plan(with_grad, values)
            if not self.relaxed:
                self._last = (with_grad, trace.active, plan)
        out = self._execute(plan, values)
        n = len(self.outputs)
        for i, g in enumerate(self.guards):
            v = out[n + i]
            if not g.holds(v):
                return Miss("", g, g.seen(v))
        return rebuild(self.template, self._wrap(out, values, tensors, held, with_grad))

    def prepare(self, tensors: list, args: tuple, kwargs: dict) -> None:
        """Compile now the plan the next call with these arguments will run (so a trace's
        first call pays for tracing and compiling, and later calls for neither)."""
        values = self._feed_values(tensors, args, kwargs)
        with_grad = self.differentiable
        plan = self._plan(with_grad, values)
        if not self.relaxed:
            self._last = (with_grad, trace.active, plan)

    def _plan(self, with_grad: bool, values: list):
        key = (with_grad, trace.active,
               tuple(np.shape(v) for v in values) if self.relaxed else None)
        plan = self._plans.get(key)
        if plan is None:
            fetches = self._fetches(with_grad)
            plan = self.session.plan(fetches, dict(zip(self.feeds, values))) if fetches \
                else None
            self._plans[key] = plan
        return plan

    def _fetches(self, with_grad: bool) -> list:
        fetches = list(self.outputs) + [g.node for g in self.guards]
        if with_grad:
            self._gradients()
            fetches += self._saved_nodes
        return fetches

    @staticmethod
    def _execute(plan, values):
        if plan is None:
            return ()
        try:
            return plan.fn(*values)
        except OpError:
            raise
        except Exception as e:  # noqa: BLE001 - re-raised naming the node and the user's line
            raise plan.explain(e) from None

    def _wrap(self, out, values, tensors, held, with_grad) -> list:
        results, saved = [], None
        for k, node in enumerate(self.outputs):
            v = out[k]
            if type(v) is not ndarray:
                v = np.asarray(v) if not devices.is_cuda_array(v) else v
            if node.device.type != "cpu" and type(v) is ndarray:
                v = devices.transfer(v, node.device)  # Session plans fetch to the host
            if with_grad and self.output_grads[k]:
                if saved is None:
                    saved = self._saved(out, values)
                results.append(self._differentiable(k, v, saved, tensors, held))
            else:
                results.append(_wrap(v))
        return results

    # -- gradients -----------------------------------------------------------------------------
    def _gradients(self) -> dict:
        """Build (once) the gradient nodes of every output that requires grad."""
        if self._grads is not None:
            return self._grads
        graph = self.graph
        forward = {id(n) for n in graph.nodes}
        positions = [p for p, rg in enumerate(self.feed_grads) if rg]
        xs = [self.feeds[p] for p in positions]
        grads, saved_all = {}, {}
        for k, (y, rg) in enumerate(zip(self.outputs, self.output_grads)):
            if not rg or y.dtype not in FLOATS:
                continue
            start = len(graph.nodes)
            with graph.as_default(), y.device:
                gy = graph.add_node(placeholder_op, (), {"shape": y.shape}, y.shape, y.dtype,
                                    f"grad_output_{k}")
                dxs = gradients(y, xs, grad_ys=gy) if xs else []
            keep = [(p, d) for p, d in zip(positions, dxs) if d is not None]
            saved = {}
            for n in graph.nodes[start:]:
                for i in n.inputs:
                    if id(i) in forward and i.op.name != "const":
                        saved[id(i)] = i
            for _, d in keep:
                if id(d) in forward and d.op.name != "const":
                    saved[id(d)] = d
            grads[k] = _OutputGrad(gy, [p for p, _ in keep], [d for _, d in keep],
                                   list(saved.values()))
            saved_all.update(saved)
        fed = {id(n) for n in self.feeds}
        self._saved_nodes = [n for n in saved_all.values() if id(n) not in fed]
        self._grads = grads
        return grads

    def _saved(self, out, values) -> dict:
        saved = {id(n): v for n, v in zip(self.feeds, values)}
        start = len(self.outputs) + len(self.guards)
        for n, v in zip(self._saved_nodes, out[start:]):
            if n.device.type != "cpu" and type(v) is ndarray:
                v = devices.transfer(v, n.device)  # Session plans fetch to the host
            saved[id(n)] = v
        return saved

    def _differentiable(self, k, value, saved, tensors, held) -> Tensor:
        """Output ``k`` as a tensor whose grad_fn runs the backward plan of this trace."""
        entry = self._grads.get(k)
        feeds = list(tensors) + (held or [])
        inputs = tuple(feeds[p] for p in entry.positions) if entry is not None else ()
        t = _wrap(value)
        node = _record(self.call_op, inputs, {"function": self, "output": k, "saved": saved},
                       t)
        if trace.active:  # as eager ops: the user's line is looked up only when watched
            node.location = user_location()
        t.requires_grad = True
        return t

    def backward(self, k: int, g, saved: dict) -> tuple:
        """The gradients of output ``k``'s inputs given its gradient ``g`` (arrays)."""
        entry = self._grads[k]
        if not entry.grads:
            return ()
        feed_nodes = [entry.gy] + entry.saved
        values = [g] + [saved[id(n)] for n in entry.saved]
        key = ("backward", k, trace.active,
               tuple(np.shape(v) for v in values) if self.relaxed else None)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self.session.plan(entry.grads,
                                                        dict(zip(feed_nodes, values)))
        out = self._execute(plan, values)
        result = []
        for d, v in zip(entry.grads, out):
            if d.device.type != "cpu" and type(v) is ndarray:
                v = devices.transfer(v, d.device)
            result.append(v)
        return tuple(result)

    # -- words -----------------------------------------------------------------------------------
    def feed_name(self, node) -> str:
        """'argument x' or 'captured tensor self.w' for a feed placeholder."""
        for n, name in zip(self.inputs, self.arg_names):
            if n is node:
                return f"argument '{name}'"
        for c in self.captures:
            if c.node is node:
                return f"captured tensor '{c.name}'" if c.name else "a captured tensor"
        return f"'{node.name}'"

    def depends_on(self, node) -> list[str]:
        """The arguments and captured tensors whose values ``node`` is computed from."""
        feeds = {id(n) for n in self.feeds}
        found = [n for n in ancestors([node], controls=False) if id(n) in feeds]
        order = {id(n): i for i, n in enumerate(self.feeds)}
        return [self.feed_name(n) for n in sorted(found, key=lambda n: order[id(n)])]

    def _capture_change(self, c, t) -> str:
        what = f"captured tensor '{c.name}'" if c.name else "a captured tensor"
        if t is None:
            return (f"{what} is gone (it was replaced; the trace held it by reference)"
                    if c.name is None else f"{what} can no longer be found")
        if type(t) is not Tensor:
            return f"{what} is now a {type(t).__name__}"
        s, d = c.spec, t._array
        parts = []
        if d.shape != s[0]:
            parts.append(f"shape {shape_str(s[0])} -> {shape_str(d.shape)}")
        if d.dtype != s[1]:
            parts.append(f"dtype {s[1].name} -> {d.dtype.name}")
        if type(d) is not s[2]:
            parts.append("device changed")
        if t.requires_grad != s[3]:
            parts.append(f"requires_grad {s[3]} -> {t.requires_grad}")
        return f"{what} changed: {', '.join(parts)}"

    # -- introspection -----------------------------------------------------------------------
    def _feed_values(self, tensors, args, kwargs) -> list:
        values = [t._array for t in tensors]
        for c in self.captures:
            t = c.get(args, kwargs)
            values.append(t._array if type(t) is Tensor else np.zeros(c.spec[0], c.spec[1]))
        return values

    def explain(self, tensors, args, kwargs):
        """``Session.explain`` of the forward plan: what the compiler did to the trace."""
        values = self._feed_values(tensors, args, kwargs)
        return self.session.explain(self._fetches(False), dict(zip(self.feeds, values)))

    def source(self, tensors, args, kwargs) -> str:
        """The generated source of the forward plan."""
        plan = self._plan(False, self._feed_values(tensors, args, kwargs))
        return plan.source if plan is not None else "def _run():\n    return ()\n"

    def __repr__(self):
        args = ", ".join(f"{name}: {n.dtype.name}{shape_str(n.shape)}"
                         for n, name in zip(self.inputs, self.arg_names))
        extra = f", {len(self.captures)} captured" if self.captures else ""
        extra += f", {len(self.guards)} guards" if self.guards else ""
        return f"<kg ConcreteFunction {self.name}({args}){extra}: {len(self.graph)} nodes>"


def _backward(g, out, needs, attrs, *inputs):
    """The gradient rule of a kg.function output: run its trace's backward plan."""
    if type(g) is Tensor:
        raise TraceError("backward(create_graph=True) through a kg.function is not supported: "
                         "its gradient is computed by a compiled plan, which records no graph "
                         "of its own; call the Python function without kg.function for "
                         "higher-order gradients")
    return attrs["function"].backward(attrs["output"], g, attrs["saved"])
