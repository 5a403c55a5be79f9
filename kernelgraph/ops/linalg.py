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
from .casting import write_out
from .elementwise import add, mul
from .registry import define
from .shape import matrix_transpose, reshape

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


# ``trans_a`` / ``trans_b``: the operand is read with its last two dims swapped (a layout,
# not a copy). Only the compiler sets them, where it folds a ``matrix_transpose`` into the
# product (kernelgraph.static.passes.simplify): the CUDA gemm then reads the operand through
# swapped strides instead of launching a transpose copy first.
def _swapped(x, trans: bool):
    return np.swapaxes(x, -1, -2) if trans else x


def _matmul_forward(a, b, trans_a=False, trans_b=False):
    if a.dtype is not b.dtype or a.dtype is D.bool_:
        matmul_dtype(a.dtype, b.dtype, a.ndim > 2 or b.ndim > 2)
    if trans_a or trans_b:
        # the views an unfolded graph's matrix_transpose would give: the same bits
        return cpu.matmul(_swapped(a, trans_a), _swapped(b, trans_b))
    return cpu.matmul(a, b)


def _matmul_cuda(k):
    gemm = k.linalg.matmul

    def matmul(a, b, trans_a=False, trans_b=False):
        # two dtypes and bools are refused, as on the CPU and in PyTorch
        matmul_dtype(a.dtype, b.dtype, a.ndim > 2 or b.ndim > 2)
        if trans_a or trans_b:
            return k.linalg.gemm(a, b, trans_a=bool(trans_a), trans_b=bool(trans_b))
        return gemm(a, b)
    return matmul


def _matmul_infer(shapes_, dtypes, attrs):
    sa, sb = shapes_
    if sa is not None and len(sa) >= 2 and attrs.get("trans_a"):
        sa = (*sa[:-2], sa[-1], sa[-2])
    if sb is not None and len(sb) >= 2 and attrs.get("trans_b"):
        sb = (*sb[:-2], sb[-1], sb[-2])
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
    ta, tb = bool((attrs or {}).get("trans_a")), bool((attrs or {}).get("trans_b"))
    if ta or tb:  # the gradients of the logical operands, transposed back where read so
        la = matrix_transpose(a) if ta else a
        lb = matrix_transpose(b) if tb else b
        ga = matmul(g, matrix_transpose(lb)) if needs[0] else None
        gb = matmul(matrix_transpose(la), g) if needs[1] else None
        return ((matrix_transpose(ga) if ta and ga is not None else ga),
                (matrix_transpose(gb) if tb and gb is not None else gb))
    return ((matmul(g, matrix_transpose(b)) if needs[0] else None),
            (matmul(matrix_transpose(a), g) if needs[1] else None))


def _matmul_grad_fn(node) -> str:
    """PyTorch's name of matmul's backward: by the ranks of the operands."""
    ranks = [len(x.shape) if hasattr(x, "shape") else np.ndim(x) for x in node.inputs]
    return {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (2, 2): "MmBackward0"}.get(
        tuple(ranks), "BmmBackward0" if ranks == [3, 3] else "UnsafeViewBackward0")


matmul = define("matmul", _matmul_forward, _matmul_infer, _matmul_grad,
                traits=("fresh", "method"), reference=np.matmul, cuda=_matmul_cuda,
                saves=((1, 0), (0, 1)), grad_fn=_matmul_grad_fn,
                doc="a @ b for rank >= 2; leading (batch) dims broadcast; both of one dtype "
                    "(not bool), as in PyTorch and TF1.", batch="matmul")


# -- PyTorch's products (issue 21): mm, bmm, dot, outer, addmm, and matmul with vectors ------
class ProductShapeError(ShapeError, RuntimeError):
    """Operands of the wrong rank or size for a product: a ShapeError, and the RuntimeError
    PyTorch raises."""


def _named(name) -> dict:
    """The ``name=`` of a graph node, passed on only when given."""
    return {} if name is None else {"name": name}


def _rank(x, what: str, arg: str) -> int | None:
    """The rank of tensor or graph node ``x`` (None: unknown in a graph)."""
    if not hasattr(x, "ndim") or not hasattr(x, "dtype"):
        raise TypeError(f"{what}(): argument '{arg}' must be Tensor, not {type(x).__name__}")
    return x.ndim  # not len(x.shape): a traced function (kg.function) would count a read


def _need_rank(x, rank: int, what: str, arg: str, message: str):
    r = _rank(x, what, arg)
    if r is not None and r != rank:
        raise ProductShapeError(f"{what}: {message} (got a tensor of rank {r}, shape "
                                f"{shape_str(tuple(x.shape))})")


def mm(input, mat2, *, name=None):  # noqa: A002 - PyTorch's names
    """``torch.mm``: the product of two matrices (2-D, one dtype).

    >>> import kernelgraph as kg
    >>> kg.mm(kg.ones((2, 3)), kg.ones((3, 4))).shape
    torch.Size([2, 4])
    """
    _need_rank(input, 2, "mm", "input", "self must be a matrix")
    _need_rank(mat2, 2, "mm", "mat2", "mat2 must be a matrix")
    return matmul(input, mat2, **_named(name))


def bmm(input, mat2, *, name=None):  # noqa: A002
    """``torch.bmm``: batched products of two 3-D tensors ``(b, n, m) @ (b, m, p)``.

    >>> import kernelgraph as kg
    >>> kg.bmm(kg.ones((5, 2, 3)), kg.ones((5, 3, 4))).shape
    torch.Size([5, 2, 4])
    """
    _need_rank(input, 3, "bmm", "input", "batch1 must be a 3D tensor")
    _need_rank(mat2, 3, "bmm", "mat2", "batch2 must be a 3D tensor")
    a, b = tuple(input.shape), tuple(mat2.shape)
    if None not in (a[0], b[0]) and a[0] != b[0]:
        raise ProductShapeError(f"bmm: batch1 and batch2 must have same number of batches, "
                                f"got {a[0]} and {b[0]}")
    return matmul(input, mat2, **_named(name))


def dot(input, tensor, *, name=None):  # noqa: A002
    """``torch.dot``: the inner product of two 1-D tensors of one dtype (a 0-d tensor).

    >>> import kernelgraph as kg
    >>> kg.dot(kg.tensor([1.0, 2.0]), kg.tensor([3.0, 4.0])).item()
    11.0
    """
    _need_rank(input, 1, "dot", "input", "1D tensors expected, but got a different rank")
    _need_rank(tensor, 1, "dot", "tensor", "1D tensors expected, but got a different rank")
    da, db = np.dtype(input.dtype), np.dtype(tensor.dtype)
    if da != db:
        raise refused(f"dot : expected both vectors to have same dtype, but found "
                      f"{TORCH_NAMES.get(da.name, (da.name,) * 2)[1]} and "
                      f"{TORCH_NAMES.get(db.name, (db.name,) * 2)[1]}")
    return reshape(matmul(reshape(input, (1, -1)), reshape(tensor, (-1, 1))), (), **_named(name))


def outer(input, vec2, *, name=None):  # noqa: A002
    """``torch.outer`` (``torch.ger``): ``input[i] * vec2[j]`` for two 1-D tensors (dtypes
    promote, as in PyTorch).

    >>> import kernelgraph as kg
    >>> kg.outer(kg.tensor([1.0, 2.0]), kg.tensor([1.0, 10.0, 100.0])).tolist()
    [[1.0, 10.0, 100.0], [2.0, 20.0, 200.0]]
    """
    _need_rank(input, 1, "outer", "input", "expected a 1-D tensor")
    _need_rank(vec2, 1, "outer", "vec2", "expected a 1-D tensor")
    return mul(reshape(input, (-1, 1)), vec2, **_named(name))


ger = outer


def addmm(input, mat1, mat2, *, beta=1, alpha=1, name=None):  # noqa: A002
    """``torch.addmm``: ``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the
    product's shape (``beta=0`` ignores it, NaN included, as PyTorch does).

    >>> import kernelgraph as kg
    >>> kg.addmm(kg.ones(2), kg.ones((2, 3)), kg.ones((3, 2)), beta=0.5, alpha=2).tolist()
    [[6.5, 6.5], [6.5, 6.5]]
    """
    product = mm(mat1, mat2)
    if alpha != 1:
        product = mul(product, alpha)
    if beta == 0:
        return product
    return add(product, input if beta == 1 else mul(input, beta), **_named(name))


def matmul_torch(input, other, *, out=None, name=None):  # noqa: A002
    """``torch.matmul``: as ``matmul`` for ranks >= 2, and PyTorch's rules for vectors: a
    1-D first operand is a row (its dim then dropped), a 1-D second operand a column (its
    dim dropped); two vectors give their dot product. ``out=`` (eager) writes the product
    into that tensor and returns it, as PyTorch's does.

    >>> import kernelgraph as kg
    >>> kg.matmul(kg.ones(3), kg.ones((3, 2))).shape
    torch.Size([2])
    >>> kg.matmul(kg.ones((4, 2, 3)), kg.ones(3)).shape
    torch.Size([4, 2])
    """
    if out is not None:
        result = matmul_torch(input, other, name=name)
        want = TORCH_NAMES.get(np.dtype(result.dtype).name, (result.dtype,))[0]
        got = TORCH_NAMES.get(np.dtype(out.dtype).name, (out.dtype,))[0] \
            if hasattr(out, "dtype") else None
        return write_out("matmul", result, out, (input, other), grad_enabled=None,
                         exact_dtype=f"Expected out tensor to have dtype {want}, but got {got} "
                                     "instead")
    ra, rb = _rank(input, "matmul", "input"), _rank(other, "matmul", "other")
    if ra == 0 or rb == 0:
        raise ProductShapeError("matmul: both arguments to matmul need to be at least 1D, "
                                f"but they are {ra}D and {rb}D")
    if ra == 1 and rb == 1:
        return dot(input, other, name=name)
    if ra == 1:
        out = matmul(reshape(input, (1, -1)), other)
        return _drop_axis(out, -2, "matmul", name)
    if rb == 1:
        out = matmul(input, reshape(other, (-1, 1)))
        return _drop_axis(out, -1, "matmul", name)
    return matmul(input, other, **_named(name))


def mv(input, vec, *, name=None):  # noqa: A002
    """``torch.mv``: a matrix (2-D) times a vector (1-D).

    >>> import kernelgraph as kg
    >>> kg.mv(kg.tensor([[1.0, 2.0], [3.0, 4.0]]), kg.tensor([1.0, -1.0])).tolist()
    [-1.0, -1.0]
    """
    ra, rb = _rank(input, "mv", "input"), _rank(vec, "mv", "vec")
    if (ra is not None and ra != 2) or (rb is not None and rb != 1):
        raise ProductShapeError(f"mv: vector + matrix @ vector expected, got 1, {ra}, {rb}")
    return matmul_torch(input, vec, name=name)


def _drop_axis(x, axis: int, what: str, name=None):
    shape = tuple(x.shape)
    keep = list(shape)
    del keep[axis]
    if keep.count(None) > 1:
        raise ProductShapeError(f"{what}: with a vector operand, a graph needs all but one dim "
                                f"of the other known, got {shape_str(shape)}")
    return reshape(x, tuple(-1 if d is None else d for d in keep), **_named(name))


__all__ = ["addmm", "bmm", "dot", "ger", "mm", "mv", "outer"]  # and matmul_torch, as kg.matmul
