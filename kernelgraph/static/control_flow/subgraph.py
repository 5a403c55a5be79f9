"""Running a traced function: :class:`Subgraph`, through the static compiler.

A control-flow node's kernel runs its branch or body through a Session of its own: the same
compiler passes and generated plan as any run, and an error inside names the inner node and
the user's line, plus where the control-flow node was made and which loop iteration.

The static compiler (``Session``, ``passes.prune``) sits on the floor above control flow, so
control flow does not import it: :mod:`kernelgraph.static.session` hands it over with
:func:`use_compiler` when it is imported (as it is by ``import kernelgraph``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

from ... import devices, trace
from ...autodiff import Parts
from ...errors import OpError
from ...graph import shape_str
from ...ops import zeros_like
from ...ops.random import Stream
from ..gradients import gradients
from ..variables import writes_variable
from .tracing import FuncGraph, placeholder

_COMPILER: dict[str, Callable] = {}


def use_compiler(session: Callable, prune: Callable, running: Callable) -> None:
    """Let control flow run sub-graphs: ``session(graph)`` makes the Session a Subgraph runs
    through, ``prune(fetches, feeds)`` gives the nodes a run needs (its ``.nodes``), and
    ``running()`` the Session whose run is computing now (whose variables a body assigns)."""
    _COMPILER["session"], _COMPILER["prune"], _COMPILER["running"] = session, prune, running


def writes_outer_variables(node) -> bool:
    """Whether a control-flow node's branches or body assign a variable of an enclosing
    graph (``tf.assign_add(v, 1)`` in a while body): its runs must share the running
    Session's variables, so that Session says it is running (``Session._compile``)."""
    spec = (node.attrs or {}).get("spec")
    return spec is not None and any(
        isinstance(sub, Subgraph) and sub.writes_outer for sub in vars(spec).values())


def compiler() -> dict[str, Callable]:
    """What :func:`use_compiler` was handed: ``{"session": ..., "prune": ...}``."""
    if not _COMPILER:
        raise RuntimeError("control flow runs sub-graphs through the static compiler: import "
                           "kernelgraph (or kernelgraph.static.session) first")
    return _COMPILER


def prune(fetches, feeds) -> list:
    """The nodes a run of ``fetches`` fed ``feeds`` computes (the compiler's own pruning)."""
    return compiler()["prune"](fetches, feeds).nodes


class Subgraph:
    """A traced function: ``inputs`` (placeholders of ``graph``) -> ``outputs`` (nodes of
    ``graph``). ``index[i]`` says which input of the control-flow node feeds ``inputs[i]``.
    Runs through a Session of its own, compiled once like any run."""

    def __init__(self, graph: FuncGraph, inputs: list, outputs: list, index: list, what: str):
        self.graph = graph
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.index = list(index)
        self.what = what
        self.gradients: dict = {}  # cache of gradient Subgraphs, by what they differentiate
        # Random streams whose last draw a run repeats: a cond's gradient computes its
        # branch's forward again, and must see the forward's dropout masks, not new ones.
        self.replays: tuple = ()
        self._session = None
        self._family = None  # the compiled plans of an untraced run, per fed shapes
        # Assigns to variables of an enclosing graph write the running Session's variables
        # (a Session of this graph's own, sharing them, per running Session).
        # (An assign on an outer variable may be made in the outer graph and only reached
        # through a control dependency, as ``with tf.control_dependencies([assign])``.)
        self.writes_outer = any(
            (writes_variable(m) and m.inputs[0].graph is not graph) or writes_outer_variables(m)
            or any(c.graph is not graph and writes_variable(c) for c in m.control_inputs)
            for m in graph.nodes)
        self._sharing: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        written = {id(m.inputs[0]) for m in graph.nodes
                   if writes_variable(m) and m.inputs[0].graph is not graph}
        read = [o for o, _ in getattr(graph, "captures", ()) if id(o) in written]
        if read:
            raise NotImplementedError(
                f"the {what} both reads and assigns the variable '{read[0].name}': kernelgraph "
                "reads it once, as it was when the loop or branch started, where TF1 reads it "
                "anew after each assign; assign a value computed without reading it, or carry "
                "it as a loop variable")

    def run(self, values, context, fed=None) -> list:
        """The outputs' values for the inputs' ``values``; an error inside is re-raised with
        ``context()`` (where the control-flow node was made, which iteration) added.
        ``fed`` (a :class:`FedValues`, one per loop run) lets the iterations of a loop check
        and convert a value they all get (a capture: a weight, the input batch) once."""
        if self._session is None:
            self._session = compiler()["session"](self.graph)
        for stream in self.replays:
            stream.replaying = True
        try:
            if self.writes_outer:
                return self._sharing_session().run(self.outputs, dict(zip(self.inputs, values)))
            if trace.active:  # a watched run reports every node: the Session's own path
                return self._session.run(self.outputs, dict(zip(self.inputs, values)))
            return self._run_plan(values, fed)
        except OpError as e:  # already names the inner node and the user's line
            raise type(e)(f"{e.message}\n  {context()}", node=e.node) from None
        finally:
            for stream in self.replays:
                stream.replaying = False

    def _sharing_session(self):
        outer = compiler()["running"]()
        if outer is None:
            return self._session
        session = self._sharing.get(outer)
        if session is None:
            session = self._sharing[outer] = compiler()["session"](self.graph)
            session._store = outer._store  # the very dict: its writes are the outer run's
        return session

    def _run_plan(self, values, fed=None) -> list:
        # What Session.run does, less what a loop body run once per iteration need not
        # repeat: looking up the fetches and feeds, and rebuilding the fetch structure.
        if self._family is None:
            self._family = self._session._family(self.outputs, tuple(self.inputs))[0]
        family = self._family
        plan = None
        if fed is None or fed.values is None:
            args = [convert(v) for convert, v in zip(family.converters, values)]
        else:  # the very object the last iteration was fed: checked and converted then
            plan, args = fed.plan, []
            for convert, v, last, a in zip(family.converters, values, fed.values, fed.args):
                if v is not last:
                    v = convert(v)
                    if v.shape != a.shape:  # (else the last iteration's plan fits)
                        plan = None
                    a = v
                args.append(a)
        if plan is None:
            plan = family.for_values(args)
        if fed is not None:
            fed.values, fed.args, fed.plan = values, args, plan
        try:
            return list(plan.fn(*args))
        except OpError:
            raise
        except Exception as e:  # noqa: BLE001 - re-raised naming the node and user line
            raise plan.explain(e) from None

    def random_streams(self) -> tuple:
        """The draw streams of the random ops a run of this Subgraph computes."""
        return tuple(m.attrs["stream"] for m in prune(self.outputs, self.inputs)
                     if isinstance((m.attrs or {}).get("stream"), Stream))

    def __repr__(self):
        return (f"<Subgraph {self.what}: {len(self.inputs)} inputs, "
                f"{len(self.outputs)} outputs, {len(self.graph.nodes)} nodes>")


class FedValues:
    """What one loop run last fed a Subgraph, what that became (see Subgraph.run) and the
    plan it ran, which the next iteration reuses when what changed kept its shape. Holding
    the values keeps them alive, so an ``is`` test cannot meet a recycled id; the loop drops
    this when it ends."""

    __slots__ = ("values", "args", "plan")

    def __init__(self):
        self.values = self.args = self.plan = None


def gradient_graph(sub: Subgraph, ys: list, xs: list, what: str, extra=()) -> Subgraph:
    """``sub``'s graph extended with d(ys)/d(xs) for incoming gradients fed to new
    placeholders: inputs ``sub.inputs + extra + those placeholders``, outputs one gradient
    per x (zeros where an x does not reach any y)."""
    graph = sub.graph
    with graph.as_default(), devices.unplaced():
        grad_ys = [placeholder(graph, y.shape, y.dtype, "grad_ys", graph.location)
                   for y in ys]
        found = gradients(ys, xs, grad_ys=grad_ys) if xs else []
        outs = [g if g is not None else zeros_like(x) for g, x in zip(found, xs)]
    return Subgraph(graph, sub.inputs + list(extra) + grad_ys, outs, [], what)


def run_bool(value, what: str) -> bool:
    """A predicate's value at run time, which must be a bool scalar."""
    arr = np.asarray(value)
    if arr.dtype != np.bool_ or arr.ndim != 0:
        raise ValueError(f"{what} must be a bool scalar, got {arr.dtype.name} of shape "
                         f"{shape_str(arr.shape)}")
    return bool(arr)


class TupleSpec:
    """The ``spec`` attribute of a tuple-valued node (cond, while_loop, while_grad): the
    kernel its op runs (``run``), and what the op's gradient rules ask of it."""

    def part(self, count: int, index: int, g) -> Parts:
        """The gradient ``g`` of item ``index`` of the ``count`` items of this node's value
        (the gradient rule of an ``output`` node)."""
        return Parts.one(count, index, g)
