"""PyTorch's index-along-a-dim ops as cards: ``torch.gather``, ``scatter`` / ``scatter_``
(a tensor ``src`` or a number, ``reduce='add'`` / ``'multiply'``), ``scatter_add``, and the
indices of ``topk`` (which also give ``median``).

``gather_dim(x, index, axis)`` is ``torch.gather(x, dim, index)``: ``out[i][j] =
x[i][index[i][j]]`` for ``dim=1``; the index has x's rank and may be smaller than x along the
other axes. Its gradient adds ``g`` back at the same places (``scatter_add_dim``), whose own
gradient is a gather again. The values of ``topk`` and ``median`` are the same gather under
their own names (``topk_values``, ``median_dim``, ``median_all``), so that eager mode prints
PyTorch's ``grad_fn`` for each: the indices come first, from ``topk_indices`` (a stable sort:
ties keep the lower index first, NaN counts as the largest), and the values are read at them.
With ``keepdims`` given, the index holds one position per reduced row (``max(x, dim)``'s
shape); with ``axis=None`` it indexes the flattened ``x``.

The functions with PyTorch's signatures are in :mod:`kernelgraph.ops.torch_tensor_ops`.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError
from ..kernels import torch_select as K
from ..shapes import checked_axis
from .indexing import pad
from .registry import define

__all__: list[str] = []  # the cards only; the PyTorch functions are in torch_tensor_ops


class SelectError(RuntimeError):
    """An argument PyTorch refuses with a RuntimeError (a reduce it does not know, k out of
    range, src of another dtype), in its words."""

    checked = True


def _check_int(dt, what):
    if D.as_dtype(dt) not in D.INTS:
        raise TypeError(f"{what}(): Expected dtype int64 for index, got {D.as_dtype(dt).name}")


class SelectShapeError(ShapeError, RuntimeError):
    """An index that does not fit the tensor: PyTorch's RuntimeError, and a ShapeError."""

    checked = True


def _same_rank(si, sx, who):
    if len(si) != len(sx) and (len(si) or len(sx) > 1) and (len(sx) or len(si) > 1):
        raise SelectShapeError(f"Index tensor must have the same number of dimensions as {who} "
                               "tensor")


def _larger(a, b) -> bool:
    return a is not None and b is not None and a > b


def _gather_fits(si, sx, axis):
    """PyTorch's rule: the index has x's rank and is no larger apart from ``axis``."""
    _same_rank(si, sx, "input")
    for d, (i, n) in enumerate(zip(si, sx)):
        if d != axis and _larger(i, n):
            raise SelectShapeError(f"Size does not match at dimension {d} expected index "
                                   f"{list(si)} to be no larger than self {list(sx)} apart "
                                   f"from dimension {axis}")


def _scatter_fits(si, sx, axis, ss=None):
    """PyTorch's rule: the index has x's rank, is no larger than x apart from ``axis`` and no
    larger than ``src`` (shape ``ss``) anywhere."""
    _same_rank(si, sx, "self")
    bad = any(d != axis and _larger(i, n) for d, (i, n) in enumerate(zip(si, sx)))
    bad_src = ss is not None and any(_larger(i, n) for i, n in zip(si, ss))
    if bad or bad_src:
        also = f" and to be no larger size than src {list(ss)}" if ss is not None else ""
        raise SelectShapeError(f"Expected index {list(si)} to be no larger than self "
                               f"{list(sx)} apart from dimension {axis}{also}")


def _index_shape(sx, axis, keepdims):
    """The index shape a reduce-like take wants (one position per reduced row)."""
    return tuple(1 if d == axis else n for d, n in enumerate(sx)) if keepdims else \
        sx[:axis] + sx[axis + 1:]


def _take_infer(what):
    def infer(shapes_, dtypes, attrs):
        _check_int(dtypes[1], what)
        sx, si = shapes_
        axis, keepdims = attrs.get("axis"), attrs.get("keepdims")
        if axis is None or sx is None or si is None:
            return (None if si is None else tuple(si)), dtypes[0]
        ax = checked_axis(axis, max(len(sx), 1), what)
        if keepdims is None:
            _gather_fits(tuple(si), tuple(sx), ax)
        else:
            want = _index_shape(tuple(sx), ax, keepdims)
            if len(si) != len(want) or any(a is not None and b is not None and a != b
                                           for a, b in zip(si, want)):
                raise ShapeError(f"{what}: indices of shape {tuple(si)} do not fit x of shape "
                                 f"{tuple(sx)} reduced over axis {ax}")
        return tuple(si), dtypes[0]
    return infer


def _as_gather(x, index, axis, keepdims):
    """(x, index, axis) of the plain gather a take computes (flattened for axis=None)."""
    if axis is None:
        return x.reshape(-1), index.reshape(-1), 0
    ax = axis % max(x.ndim, 1)
    if keepdims is False:
        index = np.expand_dims(index, ax) if type(index) is np.ndarray else \
            index.reshape(_index_shape(index.shape[:ax] + (1,) + index.shape[ax:], ax, True))
    if x.ndim == 0:
        return x.reshape(1), index.reshape(1), 0
    return x, index, ax


def _take_forward(what, kernel_of=lambda: K.gather):
    infer = _take_infer(what)

    def forward(x, index, axis=None, keepdims=None):
        infer([x.shape, index.shape], [x.dtype, index.dtype], {"axis": axis,
                                                               "keepdims": keepdims})
        gx, gi, ax = _as_gather(x, index, axis, keepdims)
        return kernel_of()(gx, gi, ax).reshape(index.shape)
    return forward


def _take_cuda(what):
    def build(k):
        return _take_forward(what, lambda: k.torch_select.gather)
    return build


def _take_grad(g, out, needs, attrs, x, index):
    return scatter_add_dim(g, index, x, axis=attrs.get("axis"),
                           keepdims=attrs.get("keepdims")), None


def _take_card(name, grad_fn, doc):
    return define(name, _take_forward(name), _take_infer(name), _take_grad,
                  traits=("fresh",), reference=K.reference_gather, cuda=_take_cuda(name),
                  attr_names=("axis", "keepdims"), inputs=2, doc=doc, saves=(0, 1),
                  grad_fn=grad_fn)


gather_dim = _take_card("gather_dim", "GatherBackward0",
                        "torch.gather(x, dim, index): x read at ``index`` along ``axis``.")
topk_values = _take_card("topk_values", "TopkBackward0",
                         "The values of torch.topk: x at topk_indices along ``axis``.")
median_dim = _take_card("median_dim", "MedianBackward1",
                        "The values of torch.median(x, dim): x at the lower median's index.")
median_all = _take_card("median_all", "MedianBackward0",
                        "torch.median(x): the flattened x at the lower median's index.")


def _scatter_add_infer(shapes_, dtypes, attrs):
    _check_int(dtypes[1], "scatter_add")
    return (None if shapes_[2] is None else tuple(shapes_[2])), dtypes[0]


def _scatter_add_forward(scatter, zeros):
    def forward(g, index, like, axis=None, keepdims=None):
        shape = tuple(like.shape)
        _scatter_add_infer([g.shape, index.shape, shape], [g.dtype, index.dtype, g.dtype], {})
        base = zeros(shape, g.dtype)
        if axis is None:
            return scatter(base.reshape(-1), index.reshape(-1), g.reshape(-1), 0,
                           1).reshape(shape)
        _, gi, ax = _as_gather(base, index, axis, keepdims)
        return scatter(base, gi, g.reshape(gi.shape), ax, 1)
    return forward


def _scatter_add_cuda(k):
    return _scatter_add_forward(k.torch_select.scatter, lambda s, dt: k.core.full(s, 0, dt))


scatter_add_dim = define(
    "scatter_add_dim", _scatter_add_forward(K.scatter, np.zeros), _scatter_add_infer,
    lambda gg, out, needs, attrs, g, index, like: (
        gather_dim(gg, index, axis=attrs.get("axis"), keepdims=attrs.get("keepdims")),
        None, None),
    traits=("fresh",), shape_inputs=(2,), reference=K.reference_scatter_add,
    cuda=_scatter_add_cuda, attr_names=("axis", "keepdims"), inputs=3, saves=(1,),
    grad_fn="ScatterAddBackward0",
    doc="Zeros of ``like``'s shape with ``g`` added at ``index`` along ``axis`` "
        "(torch.scatter_add on zeros): the gradient of gather_dim.")


# -- scatter ----------------------------------------------------------------------------------
def _reduce_arg(reduce):
    if reduce not in K.SCATTER_MODES:
        raise SelectError("reduce argument must be either add or multiply.")
    return K.SCATTER_MODES[reduce]


def _scatter_infer(shapes_, dtypes, attrs):
    _check_int(dtypes[1], "scatter")
    _reduce_arg(attrs.get("reduce"))
    sx, si = shapes_[0], shapes_[1]
    if len(shapes_) == 3 and D.as_dtype(dtypes[2]) != D.as_dtype(dtypes[0]):
        raise SelectError("scatter(): Expected self.dtype to be equal to src.dtype")
    if sx is not None and si is not None:
        ax = checked_axis(attrs.get("axis", 0), max(len(sx), 1), "scatter")
        ss = tuple(shapes_[2]) if len(shapes_) == 3 and shapes_[2] is not None else None
        _scatter_fits(tuple(si), tuple(sx), ax, ss)
    return (None if sx is None else tuple(sx)), dtypes[0]


def _scatter_forward(scatter_of):
    def forward(x, index, src=None, axis=0, reduce=None, value=None):
        shapes_ = [x.shape, index.shape] + ([] if src is None else [src.shape])
        dtypes = [x.dtype, index.dtype] + ([] if src is None else [src.dtype])
        _scatter_infer(shapes_, dtypes, {"axis": axis, "reduce": reduce})
        ax = axis % max(x.ndim, 1)
        what = value if src is None else src
        if x.ndim == 0:
            return scatter_of()(x.reshape(1), index.reshape(1), what if src is None else
                                what.reshape(1), 0, K.SCATTER_MODES[reduce]).reshape(())
        return scatter_of()(x, index, what, ax, K.SCATTER_MODES[reduce])
    return forward


def _scatter_value_forward(scatter_of):
    inner = _scatter_forward(scatter_of)

    def forward(x, index, axis=0, value=0.0, reduce=None):
        return inner(x, index, None, axis, reduce, value)
    return forward


def _no_multiply_grad():
    raise NotImplementedError("the gradient of scatter with reduce='multiply' with respect to "
                              "src is not supported")


def _src_grad(g, index, src, axis):
    picked = gather_dim(g, index, axis=axis)
    si, ss = tuple(index.shape), tuple(src.shape)
    if si == ss:
        return picked
    return pad(picked, [(0, b - a) for a, b in zip(si, ss)])  # src beyond the index: 0


def _scatter_grad(g, out, needs, attrs, x, index, src):
    axis, reduce = attrs.get("axis", 0), attrs.get("reduce")
    if reduce == "multiply":
        if needs[2]:
            _no_multiply_grad()
        return scatter_dim(g, index, src, axis=axis, reduce="multiply"), None, None
    dx = g if reduce == "add" else scatter_value(g, index, axis=axis, value=0.0)
    return dx, None, (_src_grad(g, index, src, axis) if needs[2] else None)


def _scatter_value_grad(g, out, needs, attrs, x, index):
    axis, reduce = attrs.get("axis", 0), attrs.get("reduce")
    if reduce == "add":
        return g, None
    if reduce == "multiply":  # x times a constant factor per element
        return scatter_value(g, index, axis=axis, value=attrs.get("value", 0.0),
                             reduce="multiply"), None
    return scatter_value(g, index, axis=axis, value=0.0), None


scatter_dim = define(
    "scatter_dim", _scatter_forward(lambda: K.scatter), _scatter_infer, _scatter_grad,
    traits=("fresh",), reference=K.reference_scatter,
    cuda=lambda k: _scatter_forward(lambda: k.torch_select.scatter),
    attr_names=("axis", "reduce"), inputs=3, saves=(1, 2),
    grad_fn="ScatterBackward0",
    doc="torch.scatter(x, dim, index, src): a copy of x with src's elements written at "
        "``index`` along ``axis`` (added or multiplied with ``reduce``).")


def _value_reference(x, index, axis=0, value=0.0, reduce=None):
    return K.reference_scatter(x, index, None, axis, reduce, value)


scatter_value = define(
    "scatter_value", _scatter_value_forward(lambda: K.scatter), _scatter_infer,
    _scatter_value_grad, traits=("fresh",), reference=_value_reference,
    cuda=lambda k: _scatter_value_forward(lambda: k.torch_select.scatter),
    attr_names=("axis", "value", "reduce"), inputs=2, saves=(1,), grad_fn="ScatterBackward1",
    doc="torch.scatter(x, dim, index, value): a copy of x with the number ``value`` written "
        "at ``index`` along ``axis`` (added or multiplied with ``reduce``).")


# -- topk's indices -----------------------------------------------------------------------------
def _topk_infer(shapes_, dtypes, attrs):
    dt = D.as_dtype(dtypes[0])
    if dt == D.bool_:
        raise TypeError('"topk_cpu" not implemented for \'Bool\'')
    sx, k = shapes_[0], attrs["k"]
    if sx is None:
        return None, D.int64
    ax = checked_axis(attrs.get("axis", -1), max(len(sx), 1), "topk")
    n = sx[ax] if sx else 1
    if n is not None and not 0 <= k <= n:
        raise SelectError("selected index k out of range")
    return (tuple(sx[:ax]) + (k,) + tuple(sx[ax + 1:]) if sx else ()), D.int64


def _topk_forward(kernel_of):
    def forward(x, k, axis=-1, largest=True):
        _topk_infer([x.shape], [x.dtype], {"k": k, "axis": axis})
        ax = axis % max(x.ndim, 1)
        return kernel_of()(x, int(k), ax, bool(largest))
    return forward


def _topk_reference(x, k, axis=-1, largest=True):
    return K.reference_topk(x, k, axis, largest)


topk_indices = define(
    "topk_indices", _topk_forward(lambda: K.topk_indices), _topk_infer, None,
    traits=("fresh",), reference=_topk_reference,
    cuda=lambda k: _topk_forward(lambda: k.torch_select.topk_indices),
    attr_names=("k", "axis", "largest"), inputs=1,
    doc="int64 indices of the k largest (or smallest) elements along ``axis``, best first; "
        "ties keep the lower index first, NaN counts as the largest.")



# -- triangles ---------------------------------------------------------------------------------
def _triangle_infer(what):
    def infer(shapes_, dtypes, attrs):
        s = shapes_[0]
        if s is not None and len(s) < 2:
            raise SelectError(f"{what}: input tensor must have at least 2 dimensions")
        return (None if s is None else tuple(s)), dtypes[0]
    return infer


def _triangle_forward(what, upper, kernel_of):
    infer = _triangle_infer(what)

    def forward(x, diagonal=0):
        infer([x.shape], [x.dtype], {})
        return kernel_of()(x, diagonal, upper)
    return forward


def _triangle_card(name, upper, reference):
    def grad(g, out, needs, attrs, x):
        return (card(g, diagonal=attrs.get("diagonal", 0)),)
    card = define(name, _triangle_forward(name, upper, lambda: K.triangle),
                  _triangle_infer(name), grad, traits=("fresh",), reference=reference,
                  cuda=lambda k: _triangle_forward(name, upper,
                                                   lambda: k.torch_select.triangle),
                  attr_names=("diagonal",), inputs=1, saves=(),
                  doc=f"torch.{name}: the {'upper' if upper else 'lower'} triangle of the last "
                      "two dims (from the ``diagonal``-th diagonal on), zeros elsewhere.")
    return card


tril = _triangle_card("tril", False, K.reference_tril)
triu = _triangle_card("triu", True, K.reference_triu)
