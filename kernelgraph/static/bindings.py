"""Leaner kernels for a plan whose shapes and dtypes are known.

An op's CPU forward must accept anything a user may pass: it promotes dtypes, checks shapes
and picks a loop on every call. In a plan compiled for one feed signature those questions
are answered once, at compile time, so the plan can call the loop itself: the ufunc of an
elementwise op (which can also write in place, see :mod:`.memory`), BLAS for a 2-D float
``matmul``, ``x.T`` for a matrix transpose. Each binding computes exactly what the op's
forward computes for those inputs (same kernels, same bits); the plan source shows them as
``_add_float32(...)`` or ``_matmul_2d(...)``.
"""

from __future__ import annotations

import numpy as np

from ..kernels import cpu
from ..ops import add, sub
from ..ops.shape import normalize_perm
from .variables import assign_add_op, assign_op, assign_sub_op

_ASSIGNS = (assign_op, assign_add_op, assign_sub_op)
_BLAS = (np.dtype(np.float32), np.dtype(np.float64))


def _known(shape) -> bool:
    return shape is not None and None not in shape


def loop_name(node, op) -> str:
    """``_add_float32``: the name a plan gives the ufunc loop of ``op`` for node's dtype."""
    return f"_{op.name}_{node.dtype.name}"


def ufunc_of(node):
    """The NumPy ufunc that computes ``node`` exactly as its op's CPU forward would, when the
    forward would just call it (no casts, no checks), else None. The plan may then call it
    directly, and with ``out=`` to write in place. For an ``assign_add``/``assign_sub`` it is
    the add/sub loop of the variable's dtype."""
    if node.device.type != "cpu" or node.dtype is None:
        return None
    op, inputs = node.op, node.inputs
    if op in _ASSIGNS:
        if op is assign_op or node.inputs[1].dtype != node.dtype:
            return None
        op, inputs = (add if op is assign_add_op else sub), (node.inputs[0], node.inputs[0])
    fused = op.ufunc  # a fused group's card: its compiled ufunc
    if fused is not None:
        return fused if isinstance(fused, np.ufunc) and fused.nout == 1 else None
    kernel = op.loops  # an elementwise card: its ufunc per dtype
    if kernel is None or (op.name == "pow" and node.dtype.kind != "f"):
        return None  # integer powers check for negative exponents first
    dtypes = tuple(i.dtype for i in inputs)
    for dt in dict.fromkeys(dtypes):
        ins, out = kernel.signature(dt)
        if tuple(ins) == dtypes and out == node.dtype:
            return kernel.by_dtype.get(dt) or kernel.compile(dt)
    return None


def bound_call(node, args: list, shape_of=lambda n: n.shape):
    """(name, function, expression) of a lean call computing ``node`` from the plan
    variables ``args``, or None to call the op's forward. ``function`` may be None when the
    expression needs none (``x.T``). ``shape_of`` gives an input's shape for this run (a fed
    node's is the fed value's)."""
    if node.device.type != "cpu" or not _known(node.shape):
        return None
    name = node.op.name
    if name == "matmul":
        (a, b), (sa, sb) = node.inputs, [shape_of(i) for i in node.inputs]
        if (_known(sa) and _known(sb) and len(sa) == 2 and len(sb) == 2
                and a.dtype == b.dtype == node.dtype and a.dtype in _BLAS
                and 0 not in (*sa, sb[1])):
            return "_matmul_2d", cpu.matmul_2d, f"_matmul_2d({args[0]}, {args[1]})"
    elif name == "sum_to_like":
        g = shape_of(node.inputs[0])
        if (_known(g) and len(g) == 2 and len(node.shape) == 1 and g[1] == node.shape[0]
                and node.dtype in _BLAS and node.inputs[0].dtype == node.dtype):
            return "_sum_rows_2d", cpu.sum_rows_2d, f"_sum_rows_2d({args[0]})"
    elif name == "matrix_transpose" and len(node.shape) == 2:
        return None, None, f"{args[0]}.T"
    elif name == "transpose" and len(node.shape) == 2:  # np.transpose of a matrix: x.T
        perm = (node.attrs or {}).get("perm")  # checked against the input's rank at build
        if perm is None or normalize_perm(perm, 2) == (1, 0):
            return None, None, f"{args[0]}.T"
    elif node.ndim:  # a 0-d ufunc result is a NumPy scalar: those keep the forward
        ufunc = ufunc_of(node)
        if ufunc is not None:
            fn = loop_name(node, node.op)
            return fn, ufunc, f"{fn}({', '.join(args)})"
    return None
