"""Matrix multiplication, 2-D and batched (batch dims broadcast, as ``np.matmul``).

Both operands must have one dtype: PyTorch and TF1 refuse ``float32 @ float64`` and
``int32 @ float32`` rather than promote, and so does kernelgraph, in PyTorch's words where
it runs at once and in TF1's where a graph node is built.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from .. import shapes
from ..errors import ShapeError
from ..graph import shape_str
from ..kernels import cpu
from .registry import define
from .shape import matrix_transpose

# PyTorch's names for dtypes in its messages: (C type, scalar type).
TORCH_NAMES = {"bool": ("bool", "Bool"), "int32": ("int", "Int"), "int64": ("long int", "Long"),
               "float32": ("float", "Float"), "float64": ("double", "Double")}


def refused(message: str) -> D.DtypeError:
    """A DtypeError that eager mode shows as it is (already in the framework's words)."""
    error = D.DtypeError(message)
    error.checked = True
    return error


def mixed_dtypes(op: str, da, db, batched: bool = False, static: bool = False,
                 names=("a", "b"), tf_op: str = "MatMul") -> D.DtypeError:
    """The error for two operands of different dtypes (``op`` takes one dtype): PyTorch's
    words (``batched``: its batched and convolution kernels'), or TF1's (``static``)."""
    da, db = np.dtype(da).name, np.dtype(db).name
    hint = f"; cast one first, e.g. kg.cast({names[1]}, kg.{da})"
    if static:
        return refused(f"{op}: Input '{names[1]}' of '{tf_op}' Op has type {db} that does not "
                       f"match type {da} of argument '{names[0]}'{hint}")
    ta, tb = TORCH_NAMES.get(da, (da, da)), TORCH_NAMES.get(db, (db, db))
    if batched:
        return refused(f"{op}: expected scalar type {ta[1]} but found {tb[1]}{hint}")
    return refused(f"{op}: expected m1 and m2 to have the same dtype, but got: {ta[0]} != "
                   f"{tb[0]}{hint}")


def matmul_dtype(da, db, batched: bool = False, static: bool = False) -> np.dtype:
    """The dtype of ``a @ b``: their one dtype; two dtypes or bools are refused, as in
    PyTorch (and TF1)."""
    if da != db:
        raise mixed_dtypes("matmul", da, db, batched, static)
    if da == D.bool_:
        raise refused("\"matmul\" not implemented for 'Bool' (as in PyTorch); cast to an "
                      "integer or float dtype first")
    return D.as_dtype(da)


def _matmul_forward(a, b):
    if a.dtype is not b.dtype or a.dtype is D.bool_:
        matmul_dtype(a.dtype, b.dtype, a.ndim > 2 or b.ndim > 2)
    return cpu.matmul(a, b)


def _matmul_cuda(k):
    gemm = k.linalg.matmul

    def matmul(a, b):  # two dtypes and bools are refused, as on the CPU and in PyTorch
        matmul_dtype(a.dtype, b.dtype, a.ndim > 2 or b.ndim > 2)
        return gemm(a, b)
    return matmul


def _matmul_infer(shapes_, dtypes, attrs):
    sa, sb = shapes_
    dt = matmul_dtype(dtypes[0], dtypes[1], static=True)
    if sa is None or sb is None:
        return None, dt
    if len(sa) < 2 or len(sb) < 2:
        raise ShapeError(f"matmul expects tensors of rank >= 2, got shapes {shape_str(sa)} "
                         f"and {shape_str(sb)}")
    if sa[-1] is not None and sb[-2] is not None and sa[-1] != sb[-2]:
        raise ShapeError(f"matmul: the inner dimensions differ: {shape_str(sa)} @ "
                         f"{shape_str(sb)} ({sa[-1]} != {sb[-2]})")
    batch = shapes.broadcast(sa[:-2], sb[:-2], "matmul (batch dims)")
    return (*batch, sa[-2], sb[-1]), dt


def _matmul_grad(g, out, needs, attrs, a, b):
    return ((matmul(g, matrix_transpose(b)) if needs[0] else None),
            (matmul(matrix_transpose(a), g) if needs[1] else None))


matmul = define("matmul", _matmul_forward, _matmul_infer, _matmul_grad,
                traits=("fresh", "method"), reference=np.matmul, cuda=_matmul_cuda,
                doc="a @ b for rank >= 2; leading (batch) dims broadcast; both of one dtype "
                    "(not bool), as in PyTorch and TF1.")
