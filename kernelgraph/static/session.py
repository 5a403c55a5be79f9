"""``Session.run``: compile the fetched subgraph once into a plan, then run it fast.

A plan is built per (fetches, feed keys) and cached. It is a Python function generated with
one line per node, e.g. ``v3 = _k3(v0, v1)``, where ``_k3`` is the op's kernel: running it
costs one kernel call per node and nothing else. Because each line is one node, an exception
raised inside the plan is mapped back (by its line number) to the node, its input shapes,
and the user's line that created it. ``plan.source`` shows the generated code.

Node names are the user's text: they appear only in each line's comment, escaped where they
are not plain (:func:`kernelgraph.codegen.comment`); kernels, nodes and attribute values are
globals bound through a :class:`kernelgraph.codegen.Namespace`, so no name runs as code. A
plan's source stays in ``linecache`` (for tracebacks) only while the plan lives.
"""

from __future__ import annotations

import itertools
import math
import threading
import time

import numpy as np

from .. import codegen, devices, trace
from ..dtypes import FLOATS, DtypeError
from ..dtypes import convert as convert_value
from ..errors import FailedPreconditionError, InvalidArgumentError, OpError, clipped, shown
from ..graph import Node, describe_location, get_default_graph, shape_str
from ..ops import add, sub
from . import bindings, memory, passes
from .variables import (
    ASSIGNS as _ASSIGNS,
)
from .variables import (
    assign_add_op,
    assign_op,
    no_op,
    placeholder_op,
    variable_op,
    writes_variable,
)

_LITERALS = (int, float, bool, str, type(None))
_plan_ids = itertools.count()
# Names the generated function defines or assigns itself (the stepper renames _run to
# _steps), which no kernel made of an op's name may take.
_RESERVED = ("_run", "_steps", "_t0", "_t1")


def _literal(value) -> bool:
    """Whether ``repr(value)`` is a Python literal of ``value`` (exact types only: a
    subclass's repr may be anything)."""
    if type(value) is tuple:
        return all(_literal(v) for v in value)
    if type(value) is float and not math.isfinite(value):
        return False  # repr gives inf / nan, which are not Python literals
    return type(value) in _LITERALS


MAX_SPECIALIZED = 8  # plans per fetches/feeds pair; further feed shapes share a generic plan


class PlanFamily:
    """The plans of one (fetches, fed nodes) pair: one per feed signature (the fed values'
    shapes; their dtypes are the placeholders'), so each is compiled for concrete shapes. A
    pair fed more than :data:`MAX_SPECIALIZED` different shapes (a growing sequence length)
    gets one generic plan for the rest, as ``tf.function(reduce_retracing=True)`` would."""

    def __init__(self, session, fetch_nodes, feed_nodes, traced=False):
        self.session, self.fetch_nodes, self.feed_nodes = session, fetch_nodes, feed_nodes
        self.traced = traced
        self.converters = [_feed_converter(n) for n in feed_nodes]
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


class Plan:
    """The compiled form of one ``Session.run`` signature (see module docstring).

    ``shapes`` (one per fed node) specialises it to those fed shapes; None compiles it for
    the placeholders' declared shapes, so it runs for any."""

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
            self.order, self.fetch_nodes = _required(fetch_nodes, feed_nodes), fetch_nodes
        fed = {id(n) for n in feed_nodes}
        for n in self.order:
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
        for n in self.order:
            if n.device is not devices.CPU:
                _check_device(n)
        self._generate(session, traced)
        self.compile_seconds = time.perf_counter() - start

    def _generate(self, session, traced):
        # Every global of the generated function goes through `ns` (kernels named after
        # ops, nodes, attributes): user text reaches the source only as a comment made by
        # codegen.comment or as a repr literal, and no two objects share a name.
        ns = codegen.Namespace(reserved=_RESERVED)
        env = ns.env
        for helper, value in (("_store", session._store), ("_host", devices.to_numpy),
                              ("_check", _check_numerics), ("_copy_cuda", _device_copy),
                              ("_now", time.perf_counter), ("_emit", trace.emit)):
            ns.bind(helper, value)  # first, so that these names mean these helpers
        names, aliases = {}, set()
        for i, n in enumerate(self.feed_nodes):
            names[id(n)] = f"f{i}"
            aliases.add(id(n))
        body, self.line_nodes = [], {}
        if traced:
            body.append("_t0 = _now()")
        # A traced run hands every value to listeners, who may keep it: nothing is reused.
        ufuncs = {} if traced else {id(n): u for n in self.order
                                    if (u := bindings.ufunc_of(n)) is not None}
        self.memory = None if traced else memory.plan(
            self.order, self.fetch_nodes, self.feed_nodes, lambda n: id(n) in ufuncs)
        slots = self.memory.slots if self.memory else {}
        in_place = self.memory.in_place if self.memory else {}
        var_in_place = self.memory.variable_in_place if self.memory else ()

        checked = session.check_numerics
        fed_shapes = dict(zip(map(id, self.feed_nodes), self.feed_shapes or ()))

        def shape_of(node):
            return fed_shapes.get(id(node), node.shape)

        def emit(node, line):
            body.append(f"{line:<44} # {codegen.comment(node.name)}")
            self.line_nodes[len(body) + 1] = node  # +1: the def line comes first
            if checked and node.dtype in FLOATS and node.op is not no_op:
                body.append(f"_check({names[id(node)]}, {ns.bind(f'_n{node.seq}', node)})")
            if traced:
                body.append(f"_t1 = _now(); _emit('node_executed', "
                            f"node={ns.bind(f'_n{node.seq}', node)}, "
                            f"mode='static', seconds=_t1 - _t0, value={names[id(node)]}); "
                            "_t0 = _now()")

        for n in self.order:
            if id(n) in names:
                continue  # fed
            on_cpu = n.device.type == "cpu"
            if n.op.name == "const":  # uploaded once per plan when placed on a GPU
                names[id(n)] = ns.bind(f"c{n.seq}", n.attrs["value"] if on_cpu else
                                       devices.transfer(n.attrs["value"], n.device))
                aliases.add(id(n))
                continue
            slot = slots.get(id(n))
            v = f"v{n.seq}" if slot is None else f"s{slot}"
            if n.op is variable_op:
                names[id(n)] = v
                emit(n, f"{v} = _store[{ns.bind(f'_var{n.seq}', n)}]")
                aliases.add(id(n))
            elif n.op in _ASSIGNS:
                var, value = n.inputs
                stored = f"_store[{ns.bind(f'_var{n.seq}', var)}]"
                val = names[id(value)]
                names[id(n)] = v
                if id(n) in var_in_place:  # w -= delta into w's own array
                    fn = ns.bind(bindings.loop_name(n, add if n.op is assign_add_op else sub),
                                 ufuncs[id(n)])
                    emit(n, f"{v} = {fn}({stored}, {val}, {stored})")
                    aliases.add(id(n))
                    continue
                if id(value) in aliases:  # the variable gets its own array
                    val = f"{val}.copy()" if on_cpu else f"_copy_cuda({val})"
                if n.op is assign_op:
                    emit(n, f"{v} = {stored} = {val}")
                else:
                    math = add if n.op is assign_add_op else sub
                    fn = ns.bind(_kernel_name(math, n.device),
                                 devices.forward_for(math, n.device))
                    emit(n, f"{v} = {stored} = {fn}({stored}, {val})")
                aliases.add(id(n))  # its value is the variable's own array
            elif getattr(n.op.forward, "updates", None):  # fused: w - lr * g in one kernel
                var = n.inputs[0]
                stored = f"_store[{ns.bind(f'_var{n.seq}', var)}]"
                fn = ns.bind(f"_{n.op.name}", n.op.forward.ufunc)
                args = ", ".join([stored] + [names[id(i)] for i in n.inputs[1:]])
                names[id(n)] = v
                if id(n) in var_in_place:
                    emit(n, f"{v} = {fn}({args}, {stored})")
                else:
                    emit(n, f"{v} = {stored} = {fn}({args})")
                aliases.add(id(n))  # its value is the variable's own array
            elif n.op is no_op:
                names[id(n)] = v
                emit(n, f"{v} = None")
            else:
                args = [names[id(i)] for i in n.inputs]
                names[id(n)] = v
                source = in_place.get(id(n))
                if source is not None:  # written into its dying input's array
                    fn = ns.bind(bindings.loop_name(n, n.op), ufuncs[id(n)])
                    emit(n, f"{v} = {fn}({', '.join(args)}, {names[id(source)]})")
                    continue
                bound = None if traced else bindings.bound_call(n, args, shape_of)
                if bound is not None:  # known shapes and dtypes: the lean kernel itself
                    fn, function, expression = bound
                    if fn is not None:  # the expression is a call of fn: call it by its name
                        expression = ns.bind(fn, function) + expression[len(fn):]
                    emit(n, f"{v} = {expression}")
                    if n.op.view and id(n.inputs[0]) in aliases:
                        aliases.add(id(n))
                    continue
                kernel = ns.bind(_kernel_name(n.op, n.device),
                                 devices.forward_for(n.op, n.device))
                unnamed = {}  # attributes whose key is no plain identifier: passed by table
                for key, value in (n.attrs or {}).items():
                    if not codegen.is_identifier(key):
                        unnamed[key] = value
                    elif _literal(value):
                        args.append(f"{key}={value!r}")
                    else:
                        args.append(f"{key}={ns.bind(f'_a{n.seq}_{key}', value)}")
                if unnamed:
                    args.append(f"**{ns.bind(f'_a{n.seq}', unnamed)}")
                emit(n, f"{v} = {kernel}({', '.join(args)})")
                if n.op.view and id(n.inputs[0]) in aliases:
                    aliases.add(id(n))
        outs = [_fetched(names[id(n)], n, id(n) in aliases) for n in self.fetch_nodes]
        args = ", ".join(names[id(n)] for n in self.feed_nodes)
        body.append(f"return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
        self.names = names
        self.source = f"def _run({args}):\n" + "\n".join("    " + b for b in body) + "\n"
        filename = f"<kernelgraph plan {next(_plan_ids)}>"
        codegen.register(self, filename, self.source)  # for tracebacks, while the plan lives
        self.code = compile(self.source, filename, "exec")
        exec(self.code, env)  # noqa: S102 - generated here; user text only as escaped comments
        self.fn = env["_run"]

    def explain(self, error: Exception) -> Exception:
        """The error a user should see for ``error`` raised while running this plan."""
        tb, line, frame = error.__traceback__, None, None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self.code.co_filename:
                line, frame = tb.tb_lineno, tb.tb_frame
            tb = tb.tb_next
        node = self.line_nodes.get(line)
        if node is None:
            return error
        where = describe_location(node.location) if node.location else "  (unknown location)"
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
        members = getattr(node.op.forward, "members", None)  # a fused group's nodes
        op = node.op.name if members is None else \
            f"{node.op.name}, fused from {', '.join(members)}"
        return InvalidArgumentError(
            f"{type(error).__name__} in node '{node.name}' (op {op}): {error}\n"
            f"  inputs: {inputs}\n  the node was created at:\n{where}", node=node)


def _timed(plan, args) -> float:
    start = time.perf_counter()
    plan.fn(*args)
    return time.perf_counter() - start


def _plan_for(family: PlanFamily, feed_dict) -> Plan:
    values = list((feed_dict or {}).values())
    if any(v is None for v in values):
        return family.generic_plan()
    return family.for_values([convert(v) for convert, v in zip(family.converters, values)])


def _check_numerics(value, node):
    """``Session(check_numerics=True)``: stop at the first node that made a NaN or an Inf."""
    arr = devices.to_numpy(value)
    if np.isfinite(arr).all():
        return
    what = "NaN" if np.isnan(arr).any() else "Inf"
    where = describe_location(node.location) if node.location else "  (unknown location)"
    inputs = ", ".join(f"'{i.name}'" for i in node.inputs) or "none"
    raise InvalidArgumentError(
        f"check_numerics: node '{node.name}' (op {node.op.name}) produced {what} values "
        f"(shape {shape_str(arr.shape)}; inputs {inputs}); it was created at:\n{where}",
        node=node)


def _kernel_name(op, device) -> str:
    return f"_{op.name}" if device.type == "cpu" else f"_{op.name}_{device.type}"


def _fetched(var: str, node, aliased: bool) -> str:
    """The expression a plan returns for a fetched node: NumPy arrays the caller owns."""
    if node.op is no_op:
        return var
    if node.device.type != "cpu":
        return f"_host({var})"  # Session.run returns host arrays, as TensorFlow does
    return f"{var}.copy()" if aliased else var


def _device_copy(x):
    from ..kernels.cuda import core

    return core.copy(x)


def _check_device(node):
    try:
        devices.require(node.device)
    except devices.DeviceError as e:
        where = f"\n{describe_location(node.location)}" if node.location else ""
        raise devices.DeviceError(f"Cannot run node '{node.name}' (op {node.op.name}): {e}"
                                  f"{where}") from None


def _required(fetch_nodes, feed_nodes):
    """The nodes a run must compute, in creation (so topological) order; stops at feeds."""
    fed = {id(n) for n in feed_nodes}
    seen, stack = {}, list(fetch_nodes)
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = n
        if id(n) in fed:
            continue
        # An assign's first input is the variable it writes, not a value it reads.
        stack.extend(n.inputs[1:] if writes_variable(n) else n.inputs)
        stack.extend(n.control_inputs)
    return sorted(seen.values(), key=lambda n: n.seq)


def _feed_converter(node):
    dtype, shape = node.dtype, node.shape
    rank = None if shape is None else len(shape)
    checks = () if shape is None else tuple((i, d) for i, d in enumerate(shape)
                                            if d is not None)

    def convert(value):
        if type(value) is np.ndarray and value.dtype == dtype:
            arr = value  # the hot path: a loop body fed the arrays the last iteration made
        else:
            try:
                # Converted as TF1 converts a feed (floats truncated for an int dtype, text
                # parsed), except that nothing is wrapped: an int out of the dtype's range,
                # a uint64 above int64's, NaN for an int, or complex numbers are refused.
                arr = convert_value(value, dtype, what="the fed value", parse=True)
            except (TypeError, ValueError, OverflowError) as e:
                # TF1's error types: ValueError for text that is no number, TypeError for
                # an int the dtype cannot hold or a value NumPy cannot convert.
                kind = ValueError if isinstance(e, ValueError) and not isinstance(
                    e, DtypeError) else TypeError
                # Quoted in brief: the message never holds the whole fed value.
                raise kind(f"Cannot feed value {shown(value, 60)} to '{node.name}' "
                           f"({dtype.name}): {clipped(str(e))}") from None
        if rank is not None:
            got = arr.shape
            if len(got) != rank:
                _bad_feed(node, got)
            for i, d in checks:
                if got[i] != d:
                    _bad_feed(node, got)
        return arr

    if node.device.type == "cpu":
        return convert
    return lambda value: devices.transfer(convert(value), node.device)  # fed from the host


def _bad_feed(node, got):
    raise ValueError(f"Cannot feed value of shape {shape_str(got)} for Tensor '{node.name}:0', "
                     f"which has shape '{shape_str(node.shape)}'\n"
                     f"{describe_location(node.location)}")


class _FetchSpec:
    """How to turn a fetches structure into a flat node list and back."""

    def __init__(self, session, fetches):
        self.nodes = []
        self.template = self._flatten(session, fetches)

    def _flatten(self, session, f):
        if isinstance(f, list | tuple):
            return (type(f), [self._flatten(session, x) for x in f])
        if isinstance(f, dict):
            return (dict, {k: self._flatten(session, v) for k, v in f.items()})
        self.nodes.append(session._as_graph_node(f, "Fetch"))
        return len(self.nodes) - 1

    def rebuild(self, values, template=None):
        t = self.template if template is None else template
        if isinstance(t, int):
            return values[t]
        kind, inner = t
        if kind is dict:
            return {k: self.rebuild(values, v) for k, v in inner.items()}
        items = [self.rebuild(values, v) for v in inner]
        return items if kind is list else kind(items) if kind is tuple else kind(*items)


def _fetch_key(fetches):
    t = type(fetches)
    if t is list or t is tuple:
        return (t, *(_fetch_key(f) for f in fetches))
    if t is dict:
        return (dict, *((k, _fetch_key(v)) for k, v in fetches.items()))
    return fetches if isinstance(fetches, Node) else (type(fetches), repr(fetches))


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

    # -- running ---------------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Compute ``fetches`` given ``feed_dict`` ({placeholder or node: value}). As in TF1
        any node may be fed (a constant, a Variable, an intermediate): it then has the fed
        value in this run, and what only it reads is not computed."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        feed_keys = tuple(feed_dict) if feed_dict else ()
        try:
            entry = self._plans.get((_fetch_key(fetches), feed_keys, trace.active))
        except TypeError:  # something unhashable in fetches: let _FetchSpec name it
            entry = None
        family, spec = entry or self._family(fetches, feed_keys)
        if feed_dict:
            args = [convert(v) for convert, v in zip(family.converters, feed_dict.values())]
        else:
            args = ()
        plan = family.for_values(args)
        try:
            values = plan.fn(*args)
        except OpError:
            raise
        except Exception as e:  # noqa: BLE001 - re-raised naming the node and user line
            raise plan.explain(e) from None
        return values[0] if spec.template == 0 else spec.rebuild(values)

    def _compile(self, fetches, feed_keys):
        spec = _FetchSpec(self, fetches)
        feed_nodes = [self._as_graph_node(k, "Feed") for k in feed_keys]
        return PlanFamily(self, spec.nodes, feed_nodes, traced=trace.active), spec

    def plan(self, fetches, feed_dict=None) -> Plan:
        """The compiled plan ``run`` uses (``.source`` is the generated code): the one
        specialised to the fed values' shapes, or, where a value is None (only the keys
        matter), the generic plan for the placeholders' declared shapes."""
        return _plan_for(self._family(fetches, tuple(feed_dict or ()))[0], feed_dict)

    def explain(self, fetches, feed_dict=None) -> passes.Explanation:
        """What the compiler does to the subgraph of ``fetches``: each pass's node counts and
        changes, the nodes before and after, the generated plan, its memory plan, and the
        compile time against the time of one run. With fed values, the plan is the one
        specialised to their shapes (and one run is timed when it changes nothing: no
        assigns, no random draws); with ``None`` values (``feed_dict={x: None}``) it is
        the generic one."""
        family, spec = self._family(fetches, tuple(feed_dict or ()))
        plan = _plan_for(family, feed_dict)
        before = passes.prune(spec.nodes, family.feed_nodes).nodes
        run_seconds = None
        values = list((feed_dict or {}).values())
        if not any(v is None for v in values) and not any(
                writes_variable(n) or n.op.name in passes.RANDOM for n in plan.order):
            args = [convert(v) for convert, v in zip(family.converters, values)]
            try:
                run_seconds = min(_timed(plan, args) for _ in range(3))
            except Exception:  # noqa: BLE001 - the run itself reports it; explain still works
                run_seconds = None
        return passes.Explanation(plan.passes or [], before, plan.order, plan.source,
                                  plan.compile_seconds, plan.memory, run_seconds,
                                  self.skip_passes if self.optimize else tuple(passes.ORDER))

    def _family(self, fetches, feed_keys):
        """The (plan family, fetch spec) ``run`` uses for these fetches and fed nodes."""
        try:
            key = (_fetch_key(fetches), feed_keys, trace.active)
            entry = self._plans.get(key)
        except TypeError:  # something unhashable in fetches: let _FetchSpec name it
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
        from .stepper import Stepper  # the logic lives there; this is the TF-style entry

        return Stepper(self, fetches, feed_dict, optimize=optimize)

    def _as_graph_node(self, x, what):
        if isinstance(x, str):
            return self.graph.get_node(x)
        if not isinstance(x, Node) or type(x).__name__ == "EagerNode":
            if what == "Feed":
                raise TypeError(f"Cannot interpret feed_dict key as Tensor: Can not convert a "
                                f"{type(x).__name__} into a Tensor.")
            raise TypeError(f"Fetch argument {shown(x)} has invalid type {type(x)}, must be a "
                            "string or Tensor. (Can not convert a "
                            f"{type(x).__name__} into a Tensor or Operation.)")
        if x.graph is not self.graph:
            where = f"\n{describe_location(x.location)}" if x.location else ""
            raise ValueError(f"Tensor {x!r} is not an element of this graph.{where}")
        return x

    # -- lifetime --------------------------------------------------------------------------------
    def close(self) -> None:
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


def get_default_session():
    """The innermost Session entered with ``with`` (or an InteractiveSession), or None."""
    s = _default_sessions.stack
    return s[-1] if s else None
