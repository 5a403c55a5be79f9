"""A plan's Python source: one line per node, generated, compiled and bound to its kernels.

The generated function takes the fed values and returns the fetched ones; each node is one
line such as ``v3 = _k3(v0, v1)  # layer1/mul``, where ``_k3`` is the op's kernel for the
node's device, or a leaner binding where shapes and dtypes are known
(:mod:`kernelgraph.static.bindings`), or a write into the array the memory plan gave it
(:mod:`kernelgraph.static.memory`). Variables and assigns read and write the session's
variable store (``_store``).

Generated code holds no user text as code: node names appear only in each line's comment,
escaped where they are not plain (:func:`kernelgraph.codegen.comment`); kernels, nodes and
attribute values are globals bound through a :class:`kernelgraph.codegen.Namespace`.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np

from .. import codegen, devices, trace
from ..dtypes import FLOATS
from ..errors import InvalidArgumentError, describe_location
from ..graph import shape_str
from ..ops import add, sub
from ..ops.registry import cuda_package
from . import bindings
from .variables import ASSIGNS, assign_add_op, assign_op, no_op, variable_op

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


def generate(plan, store: dict, check_numerics: bool, traced: bool) -> None:
    """Write, compile and bind ``plan``'s function: sets its ``source``, ``names`` (the
    variable of each node, by id), ``line_nodes`` (the node of each source line),
    ``code`` and ``fn``. ``plan`` gives the nodes in order (``order``), ``feed_nodes``,
    ``feed_shapes``, ``fetch_nodes`` and its ``memory`` plan (None: nothing reused)."""
    # Every global of the generated function goes through `ns` (kernels named after
    # ops, nodes, attributes): user text reaches the source only as a comment made by
    # codegen.comment or as a repr literal, and no two objects share a name.
    ns = codegen.Namespace(reserved=_RESERVED)
    env = ns.env
    for helper, value in (("_store", store), ("_host", devices.to_numpy),
                          ("_check", check_numerics_of), ("_copy_cuda", _device_copy),
                          ("_now", time.perf_counter), ("_emit", trace.emit)):
        ns.bind(helper, value)  # first, so that these names mean these helpers
    names, aliases = {}, set()
    for i, n in enumerate(plan.feed_nodes):
        names[id(n)] = f"f{i}"
        aliases.add(id(n))
    body, line_nodes = [], {}
    if traced:
        body.append("_t0 = _now()")
    memory = plan.memory
    slots = memory.slots if memory else {}
    in_place = memory.in_place if memory else {}
    var_in_place = memory.variable_in_place if memory else ()
    fed_shapes = dict(zip(map(id, plan.feed_nodes), plan.feed_shapes or ()))

    def shape_of(node):
        return fed_shapes.get(id(node), node.shape)

    def emit(node, line):
        body.append(f"{line:<44} # {codegen.comment(node.name)}")
        line_nodes[len(body) + 1] = node  # +1: the def line comes first
        if check_numerics and node.dtype in FLOATS and node.op is not no_op:
            body.append(f"_check({names[id(node)]}, {ns.bind(f'_n{node.seq}', node)})")
        if traced:
            body.append(f"_t1 = _now(); _emit('node_executed', "
                        f"node={ns.bind(f'_n{node.seq}', node)}, "
                        f"mode='static', seconds=_t1 - _t0, value={names[id(node)]}); "
                        "_t0 = _now()")

    for n in plan.order:
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
        elif n.op in ASSIGNS:
            var, value = n.inputs
            stored = f"_store[{ns.bind(f'_var{n.seq}', var)}]"
            val = names[id(value)]
            names[id(n)] = v
            math_op = add if n.op is assign_add_op else sub
            if id(n) in var_in_place:  # w -= delta into w's own array
                fn = ns.bind(bindings.loop_name(n, math_op), bindings.ufunc_of(n))
                emit(n, f"{v} = {fn}({stored}, {val}, {stored})")
                aliases.add(id(n))
                continue
            if id(value) in aliases:  # the variable gets its own array
                val = f"{val}.copy()" if on_cpu else f"_copy_cuda({val})"
            if n.op is assign_op:
                emit(n, f"{v} = {stored} = {val}")
            else:
                fn = ns.bind(_kernel_name(math_op, n.device), math_op.kernel(n.device))
                emit(n, f"{v} = {stored} = {fn}({stored}, {val})")
            aliases.add(id(n))  # its value is the variable's own array
        elif n.op.updates:  # fused: w - lr * g in one kernel
            var = n.inputs[0]
            stored = f"_store[{ns.bind(f'_var{n.seq}', var)}]"
            fn = ns.bind(f"_{n.op.name}", n.op.ufunc)
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
                fn = ns.bind(bindings.loop_name(n, n.op), bindings.ufunc_of(n))
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
            kernel = ns.bind(_kernel_name(n.op, n.device), n.op.kernel(n.device))
            args.extend(_attribute_args(n, ns))
            emit(n, f"{v} = {kernel}({', '.join(args)})")
            if n.op.view and id(n.inputs[0]) in aliases:
                aliases.add(id(n))
    outs = [_fetched(names[id(n)], n, id(n) in aliases) for n in plan.fetch_nodes]
    args = ", ".join(names[id(n)] for n in plan.feed_nodes)
    body.append(f"return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    plan.names, plan.line_nodes = names, line_nodes
    plan.source = f"def _run({args}):\n" + "\n".join("    " + b for b in body) + "\n"
    filename = f"<kernelgraph plan {next(_plan_ids)}>"
    codegen.register(plan, filename, plan.source)  # for tracebacks, while the plan lives
    plan.code = compile(plan.source, filename, "exec")
    exec(plan.code, env)  # noqa: S102 - generated here; user text only as escaped comments
    plan.fn = env["_run"]


def _attribute_args(n, ns) -> list:
    """The keyword arguments that pass node ``n``'s attributes to its kernel: literals
    where ``repr`` is one, else bound values; keys that are no plain identifier go in one
    table passed as ``**``."""
    args, unnamed = [], {}
    for key, value in (n.attrs or {}).items():
        if not codegen.is_identifier(key):
            unnamed[key] = value
        elif _literal(value):
            args.append(f"{key}={value!r}")
        else:
            args.append(f"{key}={ns.bind(f'_a{n.seq}_{key}', value)}")
    if unnamed:
        args.append(f"**{ns.bind(f'_a{n.seq}', unnamed)}")
    return args


def _kernel_name(op, device) -> str:
    return f"_{op.name}" if device.type == "cpu" else f"_{op.name}_{device.type}"


def _fetched(var: str, node, aliased: bool) -> str:
    """The expression a plan returns for a fetched node: NumPy arrays the caller owns."""
    if node.op is no_op:
        return var
    if node.device.type != "cpu":
        return f"_host({var})"  # Session.run returns host arrays, as TensorFlow does
    return f"{var}.copy()" if aliased else var


# -- helpers the generated code calls ----------------------------------------------------------
def check_numerics_of(value, node):
    """``Session(check_numerics=True)``: stop at the first node that made a NaN or an Inf."""
    arr = devices.to_numpy(value)
    if np.isfinite(arr).all():
        return
    what = "NaN" if np.isnan(arr).any() else "Inf"
    inputs = ", ".join(f"'{i.name}'" for i in node.inputs) or "none"
    raise InvalidArgumentError(
        f"check_numerics: node '{node.name}' (op {node.op.name}) produced {what} values "
        f"(shape {shape_str(arr.shape)}; inputs {inputs}); it was created at:\n"
        f"{describe_location(node.location)}", node=node)


def _device_copy(x):
    """A copy of the device array ``x`` (the CUDA kernels are loaded by the time a plan
    holds a device array)."""
    return cuda_package().core.copy(x)
