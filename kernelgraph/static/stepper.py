"""Step through a static run node by node: ``sess.step(fetches, feed_dict)``.

A :class:`Stepper` runs the very plan ``Session.run`` would generate (the same kernel per
node, the same variable writes), turned into a generator that pauses after each node, so
every intermediate value can be looked at, like a debugger on the generated code:

>>> import numpy as np
>>> import kernelgraph as kg
>>> g = kg.Graph()
>>> with g.as_default():
...     a = kg.placeholder(kg.float32, name="a")
...     b = kg.placeholder(kg.float32, name="b")
...     c = kg.multiply(a, b, name="c")
...     d = kg.add(c, 1.0, name="d")
>>> sess = kg.Session(g)
>>> st = Stepper(sess, d, {a: 15.0, b: 20.0})
>>> [n.name for n in st.order], st.current.name
(['c', 'd'], 'c')
>>> node, value = st.step()
>>> node.name, float(value)
('c', 300.0)
>>> float(st.run()), st.done, float(st.values["c"])
(301.0, True, 300.0)

By default the run is the graph *as written* (every node the user made is visible, none
folded or fused away); ``optimize=True`` steps through the compiled order instead (fused
kernels are then one step). Variables and assigns behave as in a real run: an assign writes
the session's variable when its step runs.
"""

from __future__ import annotations

import copy
import itertools
import time
from collections.abc import Callable, Mapping

import numpy as np

from .. import codegen, devices, trace
from ..errors import OpError
from ..graph import Node
from .feeds import FetchSpec, feed_converter
from .plan import PlanFamily, plan_for

_stepper_ids = itertools.count()

#: ``"stepper"`` -> ``(Stepper) -> MIME bundle``: how a notebook draws a stepper, which
#: kernelgraph.widgets.stepper (floors above) registers when imported.
DISPLAY: dict[str, Callable] = {}


class StepperError(RuntimeError):
    """Misuse of a :class:`Stepper` (stepping past the end, an unknown node)."""


class Stepper:
    """Executes one static run node by node (see the module docstring).

    - :meth:`step` runs the next node and returns ``(node, value)``;
    - :meth:`run_to` runs up to and including a node (its name or the node);
    - :meth:`run` runs to the end and returns what ``Session.run`` returns;
    - :meth:`reset` starts again (variables keep what earlier steps wrote, as after a
      real run);
    - :attr:`values` maps node names to the values computed so far (fed values and
      constants from the start), :attr:`current` is the node the next step runs,
      :attr:`executed` the nodes run so far (:attr:`seconds` how long each took),
      :attr:`done` says whether the run finished,
      :attr:`fetched` holds the run's result once it has.

    An error at a node is raised as ``Session.run`` raises it (naming the node, its inputs
    and the user's line); the stepper then stays at that node (:attr:`error`) until
    :meth:`reset`.
    """

    def __init__(self, session, fetches, feed_dict: Mapping | None = None,
                 optimize: bool = False):
        if getattr(session, "_closed", False):
            raise RuntimeError("Attempted to use a closed Session.")
        self.session = session
        self.fetches = fetches
        self.feed_dict = dict(feed_dict or {})
        self.optimize = bool(optimize)
        if any(v is None for v in self.feed_dict.values()):
            raise ValueError("a Stepper runs the graph, so every feed_dict entry needs a "
                             "value (None is only accepted by Session.explain)")
        self._spec = FetchSpec(session._as_graph_node, fetches)
        self.plan = self._plan()
        self._args = [feed_converter(n)(v)
                      for n, v in zip(self.plan.feed_nodes, self.feed_dict.values())]
        self._make_generator()
        self.reset()

    # -- building ------------------------------------------------------------------------------
    def _plan(self):
        if self.optimize:
            return self.session.plan(self.fetches, self.feed_dict)
        # The plan of the graph as written: unoptimised, over the session's own variable
        # store, so assigns write the user's session.
        feed_nodes = [self.session._as_graph_node(k, "Feed") for k in self.feed_dict]
        family = PlanFamily(_AsWritten(self.session), self._spec.nodes, feed_nodes,
                            traced=trace.active)
        return plan_for(family, self.feed_dict)

    def _make_generator(self) -> None:
        """The plan's source with a ``yield`` after each node's line(s): one generator step
        per node. Error lines map back to nodes through the same table the plan keeps."""
        plan = self.plan
        lines = plan.source.splitlines()
        out, line_nodes, order = [], {}, []
        pending = None

        def flush():
            if pending is not None:
                out.append(f"    yield {plan.names[id(pending)]}")
                order.append(pending)

        for number, text in enumerate(lines, start=1):
            node = plan.line_nodes.get(number)
            if number == 1:
                text = text.replace("def _run(", "def _steps(", 1)
                if not plan.line_nodes:  # nothing to compute: still a generator
                    text += "\n    if False:\n        yield"
            elif node is not None or text.strip().startswith("return"):
                flush()  # the previous node's value is complete (checks included)
                pending = node
            out.append(text)
            if node is not None:
                line_nodes[len(out)] = node
        source = "\n".join(out) + "\n"
        # One file name per stepper: two steppers of one plan each keep their own entry.
        filename = (f"<kernelgraph stepper {next(_stepper_ids)} of "
                    f"{plan.code.co_filename.strip('<>')}>")
        codegen.register(self, filename, source)  # for tracebacks, while the stepper lives
        code = compile(source, filename, "exec")
        env = dict(plan.fn.__globals__)  # the kernels, constants and the variable store
        exec(code, env)  # noqa: S102 - the plan's own generated code, plus yields
        self._steps_fn = env["_steps"]
        self.order: list[Node] = order
        self.source = source
        # Plan.explain maps an error to its node by the failing line of the plan's code:
        # a copy of the plan that knows this code's lines explains errors in the same words.
        self._explainer = copy.copy(plan)
        self._explainer.code = code
        self._explainer.line_nodes = line_nodes

    # -- state ---------------------------------------------------------------------------------
    def reset(self) -> None:
        """Start the run again from its first node (fed values and constants are kept)."""
        self._gen = self._steps_fn(*self._args)
        self.position = 0
        self.executed: list[Node] = []
        self.error: Exception | None = None
        self._result = None
        self._finished = False
        self.values: dict[str, object] = {}
        self.seconds: dict[str, float] = {}  # per node: its kernel call (and the yield)
        fed = {id(n) for n in self.plan.feed_nodes}
        for node, arr in zip(self.plan.feed_nodes, self._args):
            self.values[node.name] = _snapshot(arr)
        for n in self.plan.order:
            if n.op.name == "const" and id(n) not in fed:  # a fed constant has the fed value
                self.values[n.name] = _snapshot(n.attrs["value"])
        if not self.order:  # every fetch is fed or constant
            self._complete()

    @property
    def done(self) -> bool:
        """Whether every node has run (and :attr:`fetched` holds the result)."""
        return self._finished

    @property
    def current(self) -> Node | None:
        """The node the next :meth:`step` runs (the failing node after an error; None when
        done)."""
        if self._finished:
            return None
        return self.order[self.position] if self.position < len(self.order) else None

    @property
    def fetched(self):
        """What ``Session.run(fetches, feed_dict)`` returns, once the run is done (else
        None)."""
        return self._result

    def __len__(self) -> int:
        return len(self.order)

    # -- stepping ------------------------------------------------------------------------------
    def step(self) -> tuple[Node, object]:
        """Run the next node; returns ``(node, its value)`` (a host NumPy copy)."""
        if self.error is not None:
            raise StepperError(f"the run stopped with an error at node "
                               f"'{self.current.name}'; call reset() to run it again")
        if self._finished:
            raise StepperError(f"the run is finished (all {len(self.order)} nodes ran); "
                               "call reset() to run it again")
        node = self.order[self.position] if self.position < len(self.order) else None
        start = time.perf_counter()
        try:
            value = next(self._gen)
        except StopIteration as stop:  # only the return is left: the fetched values
            self._finish(stop.value)
            raise StepperError("the run is finished; call reset() to run it again") from None
        except OpError as e:
            self.error = e
            raise
        except Exception as e:  # noqa: BLE001 - re-raised naming the node and user line
            explained = self._explainer.explain(e)
            self.error = explained
            raise explained from None
        self.seconds[node.name] = time.perf_counter() - start
        snap = _snapshot(value)
        self.values[node.name] = snap
        self.executed.append(node)
        self.position += 1
        if self.position == len(self.order):
            self._complete()
        return node, snap

    def _complete(self) -> None:
        try:
            next(self._gen)
        except StopIteration as stop:
            self._finish(stop.value)
            return
        raise AssertionError("the stepped plan yielded more often than it has nodes")

    def _finish(self, values) -> None:
        self._finished = True
        self._result = self._spec.rebuild(values)

    def run_to(self, target) -> object:
        """Run up to and including ``target`` (a node or its name); returns its value.

        A node that has already run (or a fed value or constant) is returned at once."""
        node = self._find(target)
        if node.name in self.values and (node in self.executed or node not in self.order):
            return self.values[node.name]
        while not self._finished:
            ran, value = self.step()
            if ran is node:
                return value
        raise StepperError(f"node '{node.name}' did not run")  # unreachable: order has it

    def run(self):
        """Run the remaining nodes; returns what ``Session.run`` returns."""
        while not self._finished:
            self.step()
        return self._result

    def _find(self, target) -> Node:
        if isinstance(target, str):
            name = target[:-2] if target.endswith(":0") else target
            for n in self.plan.order:
                if n.name == name:
                    return n
        elif isinstance(target, Node):
            for n in self.plan.order:
                if n is target or (n.name == target.name and n.graph is target.graph):
                    return n
        else:
            raise TypeError(f"run_to expects a node or a node name, got "
                            f"{type(target).__name__}")
        name = target if isinstance(target, str) else target.name
        shown = ", ".join(n.name for n in self.order[:8]) + (", ..." if len(self.order) > 8
                                                              else "")
        hint = (" (the compiled order may have folded, merged or fused it: step with "
                "optimize=False to see every node)") if self.optimize else ""
        raise StepperError(f"node '{name}' is not computed by this run{hint}; it runs: "
                           f"{shown or 'nothing'}")

    # -- display -------------------------------------------------------------------------------
    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """Notebooks draw the stepper view (kernelgraph.widgets.stepper registers it);
        without it, the ``repr``."""
        draw = DISPLAY.get("stepper")
        return draw(self) if draw is not None else {"text/plain": repr(self)}

    def __repr__(self) -> str:
        state = ("failed" if self.error is not None else "done" if self._finished
                 else f"next: {self.current.name}" if self.current is not None else "ready")
        return f"<kg.Stepper {self.position}/{len(self.order)} nodes run, {state}>"


class _AsWritten:
    """What a plan of the graph as written is compiled for: ``session``'s variable store
    and numerics checks, no compiler passes."""

    optimize = False
    skip_passes = ()

    def __init__(self, session):
        self._store = session._store
        self.check_numerics = session.check_numerics


def _snapshot(value):
    """A host copy the user can keep: later steps (and a reused buffer) cannot change it."""
    if value is None:
        return None
    arr = devices.to_numpy(value)
    return arr.copy() if isinstance(arr, np.ndarray) else arr
