"""``@kg.function``: eager code traced into a compiled static plan, once per input signature.

>>> import kernelgraph as kg
>>> @kg.function
... def f(x):
...     return kg.relu(x) * 2.0 + 1.0
>>> f(kg.tensor([-1.0, 3.0]))
tensor([1., 7.])
>>> f(kg.tensor([5.0, -4.0])), f.trace_count      # same signature: the plan is reused
(tensor([11.,  1.]), 1)
>>> f(kg.tensor([[1.0]])).shape, f.trace_count     # a new shape: traced again
(torch.Size([1, 1]), 2)

How it works (like ``tf.function`` and ``torch.compile``):

1. The *signature* of a call is, per tensor argument, its shape, dtype, device and
   ``requires_grad``, and for every other argument its value (see :mod:`.signature`).
2. The first call with a signature *traces*: the Python function runs eagerly once on the
   real inputs while every op is recorded, and the record becomes a static graph
   (:mod:`.record`): arguments become placeholders, tensors made inside from data become
   constants, tensors read from elsewhere -- parameters -- are *captured*: fed on every call
   with their current value (:mod:`.captures`). This call returns the eager results.
3. Later calls with that signature run the compiled Session plan (compiler passes, fused
   kernels) instead of the Python code (:mod:`.concrete`).

What a trace cannot see: Python side effects (``print``, appending to a list, changing a
NumPy array through ``t.data``) happen while tracing only, not on calls that reuse the plan.
When the Python code *reads a tensor's value* (``if t > 0:``, ``t.item()``, ``float(t)``,
``t.numpy()``, ``t.tolist()``), the trace freezes what Python did with it: kg.function warns
(:class:`kernelgraph.errors.TraceWarning`, naming the line), re-checks that value on every
call and traces again when it changes, so results always equal eager mode's. To keep both
branches in one graph, select with ``kg.where(cond, a, b)``.
"""

from __future__ import annotations

import collections
import functools
import inspect
import sys
import threading
import warnings

from .. import devices, eager
from ..errors import TraceError, TraceWarning, shown
from ..graph import _PACKAGE_DIR, describe_location
from ..ops.random import _state as _random_state
from .captures import Capture, find_paths, roots_of
from .concrete import ConcreteFunction, Guard, Miss, _short
from .record import Recorder, to_graph
from .signature import ArgumentError, accepts, changes, readable, relax, signature

__all__ = ["ConcreteFunction", "Function", "Guard", "TracedFunction", "function", "script",
           "trace"]

_ADVICE = ("To keep every outcome in the graph, compute both and select with "
           "kg.where(cond, a, b) (a kg.cond / kg.while_loop called inside a kg.function runs "
           "as Python, like an `if`; they keep branches and loops in graphs built with "
           "kg.placeholder).")


class _Tracing(threading.local):
    depth = 0  # > 0 while a kg.function traces: nested kg.functions run inline


_tracing = _Tracing()


class Function:
    """A Python function compiled per input signature (made by :func:`function`).

    Call it like the function. ``trace_count`` says how often it was traced;
    ``get_concrete_function(*args)`` / ``graph(*args)`` give the trace for those arguments,
    ``explain(*args)`` what the compiler did to it and ``source(*args)`` the generated plan.

    >>> import kernelgraph as kg
    >>> f = kg.function(lambda x: kg.exp(x) * 2.0)
    >>> x = kg.ones(3)
    >>> f.get_concrete_function(x)
    <kg ConcreteFunction <lambda>(x: float32(3,)): 4 nodes>
    >>> "fuse" in f.explain(x).summary(), f.source(x).startswith("def _run(f0):")
    (True, True)
    >>> f.trace_count
    1
    """

    def __init__(self, fn, *, reduce_retracing: bool = False, max_traces: int = 8,
                 strict: bool = False):
        if not callable(fn):
            raise TypeError(f"kg.function expects a Python function, got {type(fn).__name__}")
        if isinstance(max_traces, bool) or not isinstance(max_traces, int) or max_traces < 1:
            raise ValueError(f"kg.function: max_traces must be an int >= 1, got "
                             f"{shown(max_traces)}")
        functools.update_wrapper(self, fn)
        self._fn = fn
        self.reduce_retracing = bool(reduce_retracing)
        self.max_traces = max_traces
        self.strict = bool(strict)
        self.trace_count = 0
        self._name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
        self._cache: dict = {}  # signature key -> traces for it, most recently used first
        self._recent: list = []  # the latest traces, newest last (for relaxing, messages)
        self._relaxed: list = []  # traces with None dims (reduce_retracing)
        self._warned: collections.Counter = collections.Counter()
        try:
            params = inspect.signature(fn).parameters.values()
            self._params = [p.name for p in params
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            self._params = []

    # -- calling -----------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        """Run the compiled plan of this call's signature (tracing first if needed)."""
        if _tracing.depth:
            return self._fn(*args, **kwargs)  # inside another trace: recorded inline
        key, tensors = self._key(args, kwargs)
        candidates = self._cache.get(key)
        if candidates is None and self._relaxed:
            candidates = self._relaxed_for(key)
        miss = None
        if candidates:
            for i, cf in enumerate(candidates):
                result = cf.run(tensors, args, kwargs)
                if type(result) is not Miss:
                    if i:
                        candidates.insert(0, candidates.pop(i))
                    return result
                if miss is None:
                    miss = (cf, result)
            if miss[1].stale:  # a captured tensor is gone: that trace is useless now
                candidates.remove(miss[0])
        return self._trace(args, kwargs, key, tensors, miss)[1]

    def _key(self, args, kwargs):
        try:
            specs, tensors = signature(args, kwargs)
        except ArgumentError as e:
            raise TypeError(e.template.format(path=readable([e.path], self._params)[0])
                            ) from None
        # The global random seed too: a trace's random ops are seeded with it.
        return (eager._local.grad_enabled, devices.current(), specs, _random_state["seed"]), \
            tensors

    def _relaxed_for(self, key):
        for cf in self._relaxed:
            if _context(cf.key) == _context(key) and accepts(cf.relaxed, key[2]):
                self._cache[key] = candidates = [cf]
                return candidates
        return None

    # -- tracing -----------------------------------------------------------------------------
    def _trace(self, args, kwargs, key, tensors, miss):
        """Run the function eagerly while recording it; returns (trace, eager results)."""
        names: list = []
        signature(args, kwargs, names)
        names = readable(names, self._params)
        arg_names = [n for n, s in zip(names, key[2]) if s[0] == "T"]
        rec = Recorder()
        _tracing.depth += 1
        try:
            with rec:
                result = self._fn(*args, **kwargs)
        finally:
            _tracing.depth -= 1
        if rec.backward_at is not None:
            raise TraceError(
                f"kg.function '{self._name}' called backward() (or kg.autograd.grad) while "
                f"tracing:\n{describe(rec.backward_at)}\nA trace records the forward "
                "computation only; return the loss and call backward() on the result of the "
                "kg.function instead")

        relaxed, traced, note = None, None, None
        if self.reduce_retracing and miss is None:
            for prev in reversed(self._recent):
                if _context(prev.key) == _context(key):
                    relaxed = relax(prev.relaxed or prev.key[2], key[2])
                    if relaxed is not None:
                        break
        if relaxed is not None:
            shapes = [s[1] for s in relaxed if s[0] == "T"]
            try:
                traced = to_graph(rec, tensors, arg_names, result, shapes)
            except Exception:  # noqa: BLE001 - an op that needs known dims: trace exactly
                traced = None
            if traced is not None and traced.shape_reads:
                note = traced.shape_reads[0]
                traced = None
            if traced is None:
                relaxed = None
        if traced is None:
            traced = to_graph(rec, tensors, arg_names, result)
        cf = ConcreteFunction(self._name, traced, key, arg_names,
                              self._captures(traced, args, kwargs), relaxed)
        cf.spec_names = names
        if cf.guards and self.strict:
            raise TraceError(self._guard_message(cf, None) + "\n(kg.function strict=True "
                             "refuses traces that froze a tensor's value)")
        cf.prepare(tensors, args, kwargs)
        self.trace_count += 1
        candidates = self._cache.setdefault(key, [])
        candidates.insert(0, cf)
        del candidates[self.max_traces:]
        self._recent = [*self._recent[-7:], cf]
        if relaxed is not None:
            self._relaxed.insert(0, cf)
            del self._relaxed[self.max_traces:]
        self._report(cf, miss, note)
        return cf, _detached_outputs(result)

    def _captures(self, traced, args, kwargs) -> list:
        if not traced.captures:
            return []
        targets = {id(t): t for _, t in traced.captures}
        found = find_paths(targets, roots_of(self._fn, args, kwargs, self._params))
        caps = []
        for node, t in traced.captures:
            where = found.get(id(t))
            c = Capture(t, *where) if where is not None else Capture(t)
            c.node = node
            if c.name is not None:
                node.name = traced.graph.unique_name(_node_name(c.name))
            caps.append(c)
        return caps

    # -- warnings ----------------------------------------------------------------------------
    def _report(self, cf, miss, shape_note):
        parts = []
        guard_miss = miss is not None and miss[1].guard is not None
        if guard_miss:
            g, now = miss[1].guard, miss[1].now
            if self._loud(("flip", g.location)):
                parts.append(
                    f"kg.function '{self._name}' traced again (trace {self.trace_count}): a "
                    f"value its Python code read has changed since it was traced:\n"
                    f"{g.where()}\n    {g.kind} gave {_short(g.value)} when traced, "
                    f"{_short(now)} now\nThe new trace freezes the new outcome; kg.function "
                    f"keeps up to {self.max_traces} traces per signature and re-checks their "
                    "frozen values on every call, which is slow.")
        elif cf.guards and self._loud(("guards", *[g.location for g in cf.guards])):
            parts.append(self._guard_message(cf, miss))
        if shape_note is not None and self._loud(("shape", shape_note)):
            parts.append(
                f"kg.function '{self._name}' (reduce_retracing=True) kept exact shapes: the "
                f"Python code read a shape that changes from call to call:\n"
                f"{describe(shape_note)}")
        over = self.trace_count - self.max_traces
        if over > 0 and over & (over - 1) == 0:
            parts.append(self._retrace_message(cf, miss))
        if parts:
            _warn("\n".join(parts) + ("\n" + _ADVICE if cf.guards or guard_miss else ""))

    def _loud(self, key) -> bool:
        """Warn the 1st, 2nd, 4th, 8th ... time (a loop that retraces stays readable)."""
        self._warned[key] += 1
        n = self._warned[key]
        return n & (n - 1) == 0

    def _guard_message(self, cf, miss) -> str:
        lines = [f"kg.function '{self._name}' read a tensor's value while tracing, so the "
                 "trace froze what Python did with it:"]
        for g in cf.guards:
            deps = cf.depends_on(g.node)
            source = f" of a tensor computed from {', '.join(deps)}" if deps else ""
            lines.append(f"{g.where()}\n    {g.kind}{source} gave {_short(g.value)}")
        lines.append("The compiled plan replays only this outcome (one branch of an `if`, one "
                     "count of a loop); kg.function re-checks these values on every call and "
                     "traces again when one changes, which is slow.")
        return "\n".join(lines)

    def _retrace_message(self, cf, miss) -> str:
        if miss is not None and miss[1].guard is not None:
            why = f"a value read at{miss[1].guard.where()[1:]} changed"
        elif miss is not None:
            why = miss[1].reason
        else:
            prev = self._recent[-2] if len(self._recent) > 1 else None
            diff = changes(prev.key[2], prev.spec_names, cf.key[2], cf.spec_names) \
                if prev is not None and prev.key[2] != cf.key[2] else []
            if prev is not None and _context(prev.key) != _context(cf.key):
                diff.append("grad mode, device scope or kg.random.seed changed")
            why = "; ".join(diff) or "a new input signature"
        return (f"kg.function '{self._name}' has been traced {self.trace_count} times "
                f"(max_traces={self.max_traces}); the latest trace was for: {why}.\n"
                "Each trace runs the Python function eagerly and compiles a new plan, so "
                "retracing on most calls is slower than eager mode. Pass values that change "
                "from call to call as tensors (kg.tensor(n)) rather than Python numbers, keep "
                "shapes fixed or use kg.function(..., reduce_retracing=True), and do not "
                "branch on tensor values.")

    # -- introspection -----------------------------------------------------------------------
    def get_concrete_function(self, *args, **kwargs) -> ConcreteFunction:
        """The trace used for these arguments (tracing now -- running the function eagerly
        once -- if there is none yet)."""
        key, tensors = self._key(args, kwargs)
        candidates = self._cache.get(key) or self._relaxed_for(key)
        if candidates:
            return candidates[0]
        return self._trace(args, kwargs, key, tensors, None)[0]

    def graph(self, *args, **kwargs):
        """The traced :class:`~kernelgraph.Graph` for these arguments (``kg.show`` draws it).

        >>> import kernelgraph as kg
        >>> f = kg.function(lambda x: kg.exp(x) + 1.0)
        >>> [n.op.name for n in f.graph(kg.ones(3)).nodes]
        ['placeholder', 'exp', 'const', 'add']
        """
        return self.get_concrete_function(*args, **kwargs).graph

    def explain(self, *args, **kwargs):
        """What the static compiler did to the trace for these arguments
        (a :class:`~kernelgraph.static.passes.Explanation`; ``print`` it)."""
        key, tensors = self._key(args, kwargs)
        return self.get_concrete_function(*args, **kwargs).explain(tensors, args, kwargs)

    def source(self, *args, **kwargs) -> str:
        """The generated Python source of the compiled plan for these arguments."""
        key, tensors = self._key(args, kwargs)
        return self.get_concrete_function(*args, **kwargs).source(tensors, args, kwargs)

    def __get__(self, obj, objtype=None):
        return self if obj is None else _Bound(self, obj)

    def __repr__(self):
        return f"<kg.function {self._name}: {self.trace_count} traces>"


class _Bound:
    """A kg.function used as a method: ``self`` becomes its first argument."""

    def __init__(self, function: Function, obj):
        self.__func__, self.__self__ = function, obj

    def __call__(self, *args, **kwargs):
        return self.__func__(self.__self__, *args, **kwargs)

    def __getattr__(self, name):
        attr = getattr(self.__func__, name)
        if name in ("get_concrete_function", "graph", "explain", "source"):
            return functools.partial(attr, self.__self__)
        return attr


def function(fn=None, *, reduce_retracing: bool = False, max_traces: int = 8,
             strict: bool = False):
    """Compile an eager Python function into a static plan per input signature.

    Use as ``@kg.function`` or ``@kg.function(reduce_retracing=True, ...)``:

    - ``reduce_retracing``: when a new signature differs from an earlier one only in tensor
      dims, trace once with those dims unknown (None) and reuse that trace for every size
      (unless the code reads such a shape, e.g. ``x.shape[0]``; then shapes stay exact);
    - ``max_traces``: warn (``kg.errors.TraceWarning``) when the function has been traced
      more often than this, naming the arguments that changed;
    - ``strict``: raise ``kg.errors.TraceError`` instead of warning when the code reads a
      tensor's value while tracing (``if t > 0:``).

    >>> import kernelgraph as kg
    >>> w = kg.tensor([[1.0], [2.0]], requires_grad=True)
    >>> @kg.function
    ... def predict(x):
    ...     return kg.tanh(x @ w)                 # w is captured: fed on every call
    >>> y = predict(kg.ones(1, 2)); y = predict(kg.ones(1, 2))
    >>> y.sum().backward()                        # gradients flow into w
    >>> [round(g, 4) for g in w.grad.numpy().ravel().tolist()], predict.trace_count
    ([0.0099, 0.0099], 1)
    """
    if fn is None:
        return lambda f: Function(f, reduce_retracing=reduce_retracing, max_traces=max_traces,
                                  strict=strict)
    return Function(fn, reduce_retracing=reduce_retracing, max_traces=max_traces,
                    strict=strict)


def describe(location) -> str:
    return describe_location(location) if location else "  (unknown line)"


def _context(key: tuple) -> tuple:
    """What a signature key holds besides the arguments: grad mode, device scope, seed."""
    return key[0], key[1], key[3]


def _node_name(text: str) -> str:
    return "".join(c if c.isalnum() or c in "_.-/" else "_" for c in text).strip("_") or "w"


def _detached_outputs(result):
    """The eager results of a trace, with the record of ops that need no gradient dropped
    (tracing records every op; a result that does not require grad should be a leaf)."""
    if type(result) is eager.Tensor:
        if not result.requires_grad:
            result._node = None
    elif isinstance(result, list | tuple):
        for x in result:
            _detached_outputs(x)
    elif type(result) is dict:
        for x in result.values():
            _detached_outputs(x)
    return result


def _warn(message: str) -> None:
    """A TraceWarning attributed to the user's line that called the kg.function."""
    frame, level = sys._getframe(1), 2  # stacklevel 2 is the frame that called _warn
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, TraceWarning, stacklevel=level)
from .torch_api import TracedFunction, script, trace  # noqa: E402 - torch.jit.trace/script
