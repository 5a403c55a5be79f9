"""``Session.run``: compile the fetched subgraph once into a plan, then run it fast.

A :class:`Session` holds the values of a graph's Variables and answers ``run(fetches,
feed_dict)``. Each (fetches, fed nodes) pair is compiled once into a family of plans, one per
feed signature (:mod:`.plan`): the compiler's passes (:mod:`.passes`), a memory plan
(:mod:`.memory`) and one generated line per node (:mod:`.plan_source`). Feeds are checked and
converted, and fetch structures rebuilt around the values, by :mod:`.feeds`; an error inside a
plan is re-raised naming the node and the user's line that made it.

``with sess.as_default():`` (or an :class:`InteractiveSession`) makes a session the one
``node.eval()`` uses (:func:`get_default_session`).
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref

from .. import graph as _graph
from .. import trace
from ..errors import OpError, shown, where
from ..graph import Node, ancestors, get_default_graph, node_of
from ..kernels import records
from . import passes
from .control_flow.subgraph import use_compiler, writes_outer_variables
from .feeds import FetchSpec, fetch_key
from .plan import Plan, PlanFamily, plan_for
from .stepper import Stepper
from .variables import placeholder_op, variable_op, writes_variable

# [wants_trace(options, md), traced_run(sess, ...)], set by distributed.metadata
TRACED_RUN: list = []
# [make_runner(session, target)], set by kernelgraph.distributed.runner
REMOTE: list = []

#: graph -> {node: fn(store) -> value}: nodes whose value a session computes from its own
#: state at each run and feeds (TF1's ``tf.report_uninitialized_variables``, ...).
_SESSION_VALUES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def session_value(node: Node, fn) -> Node:
    """Make every ``Session.run`` of ``node``'s graph feed ``node`` with ``fn(store)``, the
    value computed from the session's variables (``store``: {variable node: value})."""
    _SESSION_VALUES.setdefault(node.graph, {})[node] = fn
    return node


class Session:
    """Runs graph nodes: ``with kg.Session() as sess: sess.run(c, feed_dict={a: 3.0})``.

    Holds the values of the graph's Variables. ``run`` accepts a node, a name, or any
    list/tuple/dict nesting of them, and returns values in the same structure.
    """

    def __init__(self, graph=None, target="", config=None, optimize: bool = True,
                 skip_passes=(), check_numerics: bool = False):
        self.graph = graph if graph is not None else get_default_graph()
        # The compiler passes (kernelgraph.static.passes) run on each fetched subgraph;
        # optimize=False or skip_passes=("cse", ...) switches them off to compare.
        self.optimize = optimize
        self.skip_passes = passes.check_pass_names(skip_passes)
        # Check every float value for NaN/Inf as it is made and name the first culprit.
        self.check_numerics = check_numerics
        self._store: dict = {}
        self._plans: dict = {}
        self._closed = False
        self._default_ctx = None
        # a target (a Dask pool) runs the graph's stages on its workers
        self._remote = None
        if target is not None and not (isinstance(target, str | bytes) and not target):
            if not REMOTE:
                raise ValueError("Session(target=...) runs on a Dask cluster: pip install "
                                 "'kernelgraph[distributed]' and import kernelgraph.distributed")
            self._remote = REMOTE[0](self, target)

    # -- running ---------------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Compute ``fetches`` given ``feed_dict`` ({placeholder or node: value}). As in TF1
        any node may be fed (a constant, a Variable, an intermediate): it then has the fed
        value in this run, and what only it reads is not computed."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        # a session with a target runs on its cluster's workers
        if self._remote is not None:
            return self._remote.run(fetches, feed_dict, options, run_metadata)
        # RunOptions(trace_level=FULL_TRACE) fills run_metadata (distributed/metadata;
        # a distributed session's runner records its own, so its hook must come first)
        if run_metadata is not None and TRACED_RUN and TRACED_RUN[0](options, run_metadata):
            return TRACED_RUN[1](self, fetches, feed_dict, options, run_metadata)
        computed = _SESSION_VALUES.get(self.graph) if _SESSION_VALUES else None
        if computed:
            feed_dict = dict(feed_dict or {})
            for node, fn in computed.items():
                if not any(k is node for k in feed_dict):
                    feed_dict[node] = fn(self._store)
        feed_keys = tuple(feed_dict) if feed_dict else ()
        try:
            entry = self._plans.get((fetch_key(fetches), feed_keys, trace.active))
        except TypeError:  # something unhashable in fetches: let FetchSpec name it
            entry = None
        family, spec = entry or self._family(fetches, feed_keys)
        if feed_dict:
            args = [convert(v) for convert, v in zip(family.converters, feed_dict.values())]
        else:
            args = ()
        plan = family.for_values(args)
        try:
            with records.run_scope() if plan.reads_run_records else _NO_SCOPE:
                values = _run_as(self, plan, args) if spec.per_session else plan.fn(*args)
        except OpError:
            raise
        except Exception as e:  # noqa: BLE001 - re-raised naming the node and user line
            raise plan.explain(e) from None
        if spec.single and not spec.post:
            return values[0]
        if spec.fed_strings:
            values = spec.as_fed(values, list(feed_dict.values()))
        return spec.rebuild(values)

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        """TF1's ``make_callable``: a function of the values of ``feed_list`` (in order)
        that runs ``fetches`` (``run = sess.make_callable(y, [x]); run(3.0)``)."""
        keys = list(feed_list or ())

        def call(*values, options=None, run_metadata=None):
            if len(values) != len(keys):
                raise TypeError(f"expected {len(keys)} feed values, got {len(values)}")
            # TF1's callables take options and run_metadata too
            return self.run(fetches, dict(zip(keys, values)) if keys else None, options,
                            run_metadata)
        return call

    def _compile(self, fetches, feed_keys):
        spec = FetchSpec(self._as_graph_node, fetches)
        feed_nodes = [self._as_graph_node(k, "Feed") for k in feed_keys]
        spec.keep_arrays(feed_nodes)  # TF1 answers a fetched fed tensor with an array
        # a host kernel that keeps state per Session (a tf.data iterator), maybe inside a
        # branch or loop body: runs of this plan say which Session runs them
        spec.per_session = any("host_only" in n.op.traits or writes_outer_variables(n)
                               for n in ancestors(spec.nodes, stop=feed_nodes))
        return PlanFamily(self, spec.nodes, feed_nodes, traced=trace.active), spec

    def plan(self, fetches, feed_dict=None) -> Plan:
        """The compiled plan ``run`` uses (``.source`` is the generated code): the one
        specialised to the fed values' shapes, or, where a value is None (only the keys
        matter), the generic plan for the placeholders' declared shapes."""
        return plan_for(self._family(fetches, tuple(feed_dict or ()))[0], feed_dict)

    def explain(self, fetches, feed_dict=None) -> passes.Explanation:
        """What the compiler does to the subgraph of ``fetches``: each pass's node counts and
        changes, the nodes before and after, the generated plan, its memory plan, and the
        compile time against the time of one run. With fed values, the plan is the one
        specialised to their shapes (and one run is timed when it changes nothing: no
        assigns, no random draws); with ``None`` values (``feed_dict={x: None}``) it is
        the generic one."""
        # a session on a cluster: its stages, workers and transfers (with bytes)
        if self._remote is not None:
            return self._remote.explain(fetches, feed_dict)
        family, spec = self._family(fetches, tuple(feed_dict or ()))
        plan = plan_for(family, feed_dict)
        before = passes.prune(spec.nodes, family.feed_nodes).nodes
        run_seconds = None
        values = list((feed_dict or {}).values())
        if not any(v is None for v in values) and not any(
                writes_variable(n) or "random" in n.op.traits or _advances(n)
                for n in plan.order):
            args = [convert(v) for convert, v in zip(family.converters, values)]
            try:
                run_seconds = min(_timed(plan, args) for _ in range(3))
            except Exception:  # noqa: BLE001 - the run itself reports it; explain still works
                run_seconds = None
        explained = passes.Explanation(plan.passes or [], before, plan.order, plan.source,
                                       plan.compile_seconds, plan.memory, run_seconds,
                                       self.skip_passes if self.optimize else
                                       tuple(passes.ORDER))
        # the GPU plan's launches, buffers, segments and capture
        explained.device = getattr(plan, "device", None)
        return explained

    def _family(self, fetches, feed_keys):
        """The (plan family, fetch spec) ``run`` uses for these fetches and fed nodes."""
        try:
            key = (fetch_key(fetches), feed_keys, trace.active)
            entry = self._plans.get(key)
        except TypeError:  # something unhashable in fetches: let FetchSpec name it
            key, entry = None, None
        if entry is None:
            entry = self._compile(fetches, feed_keys)
            if key is not None:
                self._plans[key] = entry
        return entry

    def step(self, fetches, feed_dict=None, optimize: bool = False):
        """A :class:`~kernelgraph.static.stepper.Stepper`: this run, executed node by node
        (``.step()``, ``.run_to(name)``, ``.run()``, ``.values``); the graph as written, or
        the compiled order with ``optimize=True``."""
        return Stepper(self, fetches, feed_dict, optimize=optimize)

    def _as_graph_node(self, x, what):
        if isinstance(x, str):
            return self.graph.get_node(x)
        if not isinstance(x, Node) and node_of(x) is not None:  # a face's wrapper
            if what == "Feed" and getattr(type(x), "kg_operation", False):
                raise TypeError(f"Cannot interpret feed_dict key as Tensor: Can not convert "
                                f"an Operation ('{x.name}') into a Tensor.")
            x = node_of(x)
        if not isinstance(x, Node) or not x.symbolic:
            if what == "Feed":
                raise TypeError(f"Cannot interpret feed_dict key as Tensor: Can not convert a "
                                f"{type(x).__name__} into a Tensor.")
            raise TypeError(f"Fetch argument {shown(x)} has invalid type {type(x)}, must be a "
                            "string or Tensor. (Can not convert a "
                            f"{type(x).__name__} into a Tensor or Operation.)")
        if x.graph is not self.graph:
            raise ValueError(f"Tensor {x!r} is not an element of this graph."
                             f"{where(x.location)}")
        return x

    # -- lifetime --------------------------------------------------------------------------------
    def close(self) -> None:
        # free the session's state on its workers
        if self._remote is not None and not self._closed:
            self._remote.close()
        self._closed = True
        self._store.clear()
        self._plans.clear()

    def as_default(self):
        return _default_sessions.push(self)

    def __enter__(self):
        self._default_ctx = _default_sessions.push(self)
        self._default_ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self._default_ctx.__exit__(*exc)
        self.close()
        return False

    def __repr__(self):
        state = "closed" if self._closed else f"{len(self._store)} variables set"
        return f"<kg.Session on {self.graph!r}, {state}>"


class InteractiveSession(Session):
    """A Session that makes itself the default at once (for ``node.eval()`` in notebooks)."""

    def __init__(self, graph=None):
        super().__init__(graph)
        self._default_ctx = _default_sessions.push(self)
        self._default_ctx.__enter__()

    def close(self):
        if not self._closed and self._default_ctx is not None:
            self._default_ctx.__exit__(None, None, None)
        super().close()


class _SessionStack(threading.local):
    def __init__(self):
        self.stack = []

    def push(self, session):
        stack = self.stack

        class _Ctx:
            def __enter__(self_inner):
                stack.append(session)
                return session

            def __exit__(self_inner, *exc):
                if stack and stack[-1] is session:
                    stack.pop()
                return False

        return _Ctx()


_default_sessions = _SessionStack()


class _Running(threading.local):
    session = None


_running = _Running()
_NO_SCOPE = contextlib.nullcontext()  # a run with no op reading its forward's records


def _run_as(session, plan, args):
    running = _running.session
    _running.session = session
    try:
        return plan.fn(*args)
    finally:
        _running.session = running


def running_session():
    """The Session whose ``run`` is computing in this thread now, or None: what a kernel
    that keeps state per Session (a tf.data iterator) asks, since it is not told."""
    return _running.session


def get_default_session():
    """The innermost Session entered with ``with`` (or an InteractiveSession), or None."""
    s = _default_sessions.stack
    return s[-1] if s else None


_SESSION_OPS = (placeholder_op, variable_op)  # fed, or read from the session's store


def _advances(node) -> bool:
    """Whether running ``node`` changes state a second run would see: a stateful op with a
    kernel of its own (a dataset iterator's get_next), not the session's own placeholders,
    variables and assigns (which have none)."""
    op = node.op
    return "stateful" in op.traits and op.forward is not None and op not in _SESSION_OPS


def _timed(plan: Plan, args) -> float:
    start = time.perf_counter()
    plan.fn(*args)
    return time.perf_counter() - start


# Floors below reach the session through slots they define: node.eval() asks for the default
# session, and control flow runs its branches and bodies through Sessions of their own.
_graph.SLOTS["default_session"] = get_default_session
use_compiler(Session, passes.prune, running_session)
