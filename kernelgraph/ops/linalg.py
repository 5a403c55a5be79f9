"""Matrix multiplication, 2-D and batched (batch dims broadcast, as ``np.matmul``)."""

from __future__ import annotations

from .. import dtypes as D
from ..errors import ShapeError
from ..graph import shape_str
from ..kernels import cpu
from . import shapes
from .elementwise import _arith, _to
from .registry import define
from .shape import matrix_transpose


def _refuse_bools(da, db):
    if da == D.bool_ or db == D.bool_:
        raise D.DtypeError("\"matmul\" not implemented for 'Bool' (as in PyTorch); cast to an "
                           "integer or float dtype first")


def _matmul_forward(a, b):
    if a.dtype is not b.dtype or a.dtype is D.bool_:
        _refuse_bools(a.dtype, b.dtype)
        dt = _arith(D.promote(D.as_dtype(a.dtype), D.as_dtype(b.dtype)))
        a, b = _to(a, dt), _to(b, dt)
    return cpu.matmul(a, b)


def _matmul_infer(shapes_, dtypes, attrs):
    sa, sb = shapes_
    _refuse_bools(*dtypes)
    dt = _arith(D.promote(dtypes[0], dtypes[1]))
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
                doc="a @ b for rank >= 2; leading (batch) dims broadcast.")
