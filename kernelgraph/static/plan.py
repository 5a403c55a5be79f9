"""Plans: the compiled form of one ``Session.run`` signature, cached per feed signature.

A plan is built per (fetches, fed nodes) and per fed shapes: the compiler's passes
(:mod:`.passes`) simplify the fetched subgraph, the memory planner (:mod:`.memory`) decides
which arrays may be reused, and the plan's source (:mod:`.plan_source`) is generated with
one line per node, so running it costs one kernel call per node and nothing else.
``plan.source`` shows the generated code.

Because each line is one node, an exception raised inside the plan is mapped back (by its
line number) to the node, its input shapes, and the user's line that created it
(:meth:`Plan.explain`). A plan's source stays in ``linecache`` (for tracebacks) only while
the plan lives.
"""

from __future__ import annotations

import time

import numpy as np

from .. import devices
from ..errors import FailedPreconditionError, InvalidArgumentError, describe_location, where
from ..graph import shape_str
from . import bindings, device_plan, memory, passes, plan_source
from .feeds import feed_converter
from .program import needed
from .variables import placeholder_op, variable_op, writes_variable

MAX_SPECIALIZED = 8  # plans per fetches/feeds pair; further feed shapes share a generic plan


class PlanFamily:
    """The plans of one (fetches, fed nodes) pair: one per feed signature (the fed values'
    shapes; their dtypes are the placeholders'), so each is compiled for concrete shapes. A
    pair fed more than :data:`MAX_SPECIALIZED` different shapes (a growing sequence length)
    gets one generic plan for the rest, as ``tf.function(reduce_retracing=True)`` would.

    ``session`` is what the plans are compiled for: anything with a Session's
    ``optimize``, ``skip_passes``, ``check_numerics`` and variable store ``_store``."""

    def __init__(self, session, fetch_nodes, feed_nodes, traced=False):
        self.session, self.fetch_nodes, self.feed_nodes = session, fetch_nodes, feed_nodes
        self.traced = traced
        # A CUDA placeholder's feed is converted on the host: its plan uploads it into a
        # fixed device buffer (kernelgraph.static.device_plan), not into a new array.
        self.converters = [feed_converter(n if n.device.type == "cpu" else _OnHost(n))
                           for n in feed_nodes]
        self.plans: dict = {}
        self.generic = None

    def for_values(self, args) -> Plan:
        """The plan for the converted feed values ``args``."""
        key = tuple([a.shape for a in args])
        plan = self.plans.get(key)
        if plan is None:
            if len(self.plans) < MAX_SPECIALIZED:
                plan = self.plans[key] = Plan(self.session, self.fetch_nodes,
                                              self.feed_nodes, self.traced, shapes=key)
            else:
                plan = self.generic_plan()
        return plan

    def generic_plan(self) -> Plan:
        """The plan that works for every fed shape (compiled for the declared shapes)."""
        if self.generic is None:
            self.generic = Plan(self.session, self.fetch_nodes, self.feed_nodes, self.traced)
        return self.generic


def plan_for(family: PlanFamily, feed_dict) -> Plan:
    """The plan of ``family`` for the values of ``feed_dict``: the one specialised to their
    shapes, or the generic one where a value is None (only the keys matter)."""
    values = list((feed_dict or {}).values())
    if any(v is None for v in values):
        return family.generic_plan()
    return family.for_values([convert(v) for convert, v in zip(family.converters, values)])


class Plan:
    """The compiled form of one ``Session.run`` signature (see the module docstring).

    ``shapes`` (one per fed node) specialises it to those fed shapes; None compiles it for
    the placeholders' declared shapes, so it runs for any. A traced run (a trace listener
    attached) is compiled as written: every node shows, and no array is reused."""

    def __init__(self, session, fetch_nodes, feed_nodes, traced=False, shapes=None):
        start = time.perf_counter()
        self.feed_nodes = feed_nodes
        self.feed_shapes = shapes
        self.passes = None  # what each compiler pass did (None: not optimised)
        if session.optimize and not traced:
            # With check_numerics every node's value is checked, so none is fused away.
            skip = session.skip_passes + (("fuse",) if session.check_numerics else ())
            by_id = None if shapes is None else {id(n): s for n, s in zip(feed_nodes, shapes)}
            program, self.passes = passes.optimize(fetch_nodes, feed_nodes, skip, by_id)
            self.order, self.fetch_nodes = program.nodes, program.fetches
        else:  # a traced run shows every node as written, so it is not optimised
            self.order, self.fetch_nodes = needed(fetch_nodes, feed_nodes), fetch_nodes
        _check_runnable(self.order, feed_nodes)
        # Each run of this plan is a records scope when an op reads its forward's records.
        self.reads_run_records = any("run_records" in n.op.traits for n in self.order)
        # A traced run hands every value to listeners, who may keep it: nothing is reused.
        self.memory = None if traced else plan_memory(self.order, self.fetch_nodes,
                                                      self.feed_nodes)
        plan_source.generate(self, session._store, session.check_numerics, traced)
        # On a GPU: recorded on the first run, replayed after (device_plan); ``device`` is
        # None for a plan with no CUDA node.
        self.device = None
        if any(n.device.type == "cuda" for n in (*self.order, *feed_nodes)):
            reason = ("a traced run shows every node" if traced else
                      "check_numerics reads every value on the host"
                      if session.check_numerics else
                      "a generic plan (compiled for any fed shape)" if shapes is None else None)
            self.device = device_plan.attach(self, session._store, reason)
        self.compile_seconds = time.perf_counter() - start

    def explain(self, error: Exception, filename: str | None = None,
                line_nodes: dict | None = None) -> Exception:
        """The error a user should see for ``error`` raised while running this plan (or
        while running code ``filename`` whose lines ``line_nodes`` maps to nodes)."""
        filename = filename or self.code.co_filename
        line_nodes = self.line_nodes if line_nodes is None else line_nodes
        tb, line, frame = error.__traceback__, None, None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                line, frame = tb.tb_lineno, tb.tb_frame
            tb = tb.tb_next
        node = line_nodes.get(line)
        if node is None:
            return error
        return self.node_error(node, error, frame)

    def node_error(self, node, error: Exception, frame=None) -> Exception:
        """The error naming ``node``, its inputs and the user's line, for ``error`` raised
        while computing it (``frame``: the generated code's frame, for the inputs' values;
        without it the inputs are described by their planned shapes)."""
        if isinstance(error, KeyError) and (node.op is variable_op or writes_variable(node)):
            var = node if node.op is variable_op else node.inputs[0]
            return FailedPreconditionError(
                f"Attempting to use uninitialized value {var.name}\n"
                f"  (run kg.global_variables_initializer() first)\n"
                f"{describe_location(var.location)}", node=var)
        described = []
        for i in node.inputs:
            var = self.names.get(id(i))
            value = None
            if frame is not None and var is not None:
                value = frame.f_locals.get(var, frame.f_globals.get(var))
            shape = np.shape(value) if value is not None else i.shape
            dtype = getattr(value, "dtype", i.dtype)
            described.append(f"'{i.name}' {shape_str(tuple(shape))} {dtype}")
        inputs = ", ".join(described) or "none"
        members = node.op.members  # a fused group's nodes
        op = node.op.name if members is None else \
            f"{node.op.name}, fused from {', '.join(members)}"
        return InvalidArgumentError(
            f"{type(error).__name__} in node '{node.name}' (op {op}): {error}\n"
            f"  inputs: {inputs}\n  the node was created at:\n"
            f"{describe_location(node.location)}", node=node)


class _OnHost:
    """A CUDA placeholder seen as placed on the host: its feed converter then checks and
    converts the value without uploading it."""

    def __init__(self, node):
        self.node = node

    def __getattr__(self, name):
        return devices.CPU if name == "device" else getattr(self.node, name)


def plan_memory(order, fetch_nodes, feed_nodes) -> memory.MemoryPlan:
    """The memory planning step, after the passes and before the source is generated:
    which values may be written into a dying input's array, and which buffers values share
    (:func:`kernelgraph.static.memory.plan`). Only nodes the plan calls as a bare ufunc
    (:func:`kernelgraph.static.bindings.ufunc_of`) can write in place."""
    bindable = {id(n) for n in order if bindings.ufunc_of(n) is not None}
    return memory.plan(order, fetch_nodes, feed_nodes, lambda n: id(n) in bindable)


def _check_runnable(order, feed_nodes) -> None:
    """Refuse, before compiling, a run that cannot work: an unfed placeholder, a fed
    variable that the run assigns, a node on a device this process cannot run."""
    fed = {id(n) for n in feed_nodes}
    for n in order:
        if n.op is placeholder_op and id(n) not in fed:
            shape = "" if n.shape is None else f" and shape {shape_str(n.shape)}"
            raise InvalidArgumentError(
                f"You must feed a value for placeholder tensor '{n.name}' with dtype "
                f"{n.dtype.name}{shape}\n{describe_location(n.location)}", node=n)
        if writes_variable(n) and id(n.inputs[0]) in fed:
            var = n.inputs[0]  # TF1: "Input 0 of node AssignSub was passed float ..."
            raise InvalidArgumentError(
                f"Cannot feed variable '{var.name}' in a run that assigns it (node "
                f"'{n.name}' writes the variable itself, which a fed value does not "
                f"stand for)\n{describe_location(n.location)}", node=n)
    for n in order:
        if n.device is not devices.CPU:
            try:
                devices.require(n.device)
            except devices.DeviceError as e:
                raise devices.DeviceError(f"Cannot run node '{n.name}' (op {n.op.name}): {e}"
                                          f"{where(n.location)}") from None
