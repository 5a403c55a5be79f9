"""Reductions (``sum mean max min prod all any argmin`` with ``axis`` and ``keepdims``), the
value at an index along an axis (``max_dim``, ``min_dim``: ``torch.max(x, dim)``'s values),
and the broadcasts that are their gradients. PyTorch's signatures over these cards
(``torch.max(x, 1)`` and the rest) are in :mod:`.torch_reduce`."""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError
from ..kernels import cpu
from ..kernels import reduce as KR
from ..kernels import reference as R
from ..kernels import reference_grads as RG
from ..shapes import (
    axes_arg,
    axis_arg,
    checked_axis,
    nonempty_reduction,
    normalize_axes,
    reduced_shape,
)
from .elementwise import add, cast, div, equal, mul, sub, where
from .registry import define

sum_dtype = D.sum_dtype  # the dtype rule of sum (PyTorch's), shared with the CUDA kernel


def _static_axes(shape, axis, what):
    # The axis's type is checked even where the rank is unknown (a graph input of unknown
    # shape), so a float or a string never waits for Session.run to be refused.
    axes_arg(axis, what, None if shape is None else len(shape) or 1)
    if shape is None:
        return None
    try:
        return normalize_axes(axis, len(shape))
    except (ValueError, TypeError) as e:
        raise ShapeError(str(e)) from None


def _reduce_infer(shapes_, dtypes, attrs, out_dtype=None, what="max"):
    shape, axis, keepdims = shapes_[0], attrs.get("axis"), attrs.get("keepdims", False)
    axes = _static_axes(shape, axis, what)
    if axes is None:
        out_shape = () if axis is None and not keepdims else None
    else:
        out_shape = reduced_shape(shape, axes, keepdims)
    return out_shape, out_dtype or dtypes[0]


def _max_infer(shapes_, dtypes, attrs):
    out = _reduce_infer(shapes_, dtypes, attrs)
    nonempty_reduction(shapes_[0], attrs.get("axis"), "max")
    return out


def _max_forward(x, axis=None, keepdims=False):
    if x.size == 0:  # the kernel reduces non-empty tensors only: an empty result, or refused
        return np.empty(_max_infer([x.shape], [x.dtype], {"axis": axis,
                                                          "keepdims": keepdims})[0], x.dtype)
    return cpu.reduce_max(x, axis, keepdims)


def _sum_infer(shapes_, dtypes, attrs):
    return _reduce_infer(shapes_, dtypes, attrs, sum_dtype(dtypes[0]), "sum")


def _sum_forward(x, axis=None, keepdims=False):
    if x.dtype is D.int32:  # the kernel sums in int64 but returns x's dtype
        x = x.astype(D.int64)
    return cpu.reduce_sum(x, axis, keepdims)


def _mean_infer(shapes_, dtypes, attrs):
    if dtypes[0] not in D.FLOATS:
        torch_name = {"bool": "Bool", "int32": "Int", "int64": "Long"}.get(dtypes[0].name)
        raise D.DtypeError(f"mean() needs a floating-point tensor, got {dtypes[0].name}; "
                           "cast it first, e.g. kg.cast(x, kg.float32) (mean(): could not "
                           "infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {torch_name})")
    return _reduce_infer(shapes_, dtypes, attrs, what="mean")


def _mean_forward(x, axis=None, keepdims=False):
    if x.dtype not in D.FLOATS:
        _mean_infer([x.shape], [x.dtype], {})
    return cpu.reduce_mean(x, axis, keepdims)


def _mean_cuda(k):
    reduce_mean = k.reduce.reduce_mean

    def forward(x, axis=None, keepdims=False):
        if x.dtype not in D.FLOATS:  # refused, as on the CPU
            _mean_infer([x.shape], [x.dtype], {})
        return reduce_mean(x, axis, keepdims)
    return forward


def _max_cuda(k):
    reduce_max = k.reduce.reduce_max

    def forward(x, axis=None, keepdims=False):
        if x.size == 0:  # an empty dimension reduced is refused, as on the CPU
            _max_infer([tuple(x.shape)], [x.dtype], {"axis": axis, "keepdims": keepdims})
        return reduce_max(x, axis, keepdims)
    return forward


def _sum_grad(g, out, needs, attrs, x):
    return (broadcast_reduced(g, x, **attrs),)


def _mean_grad(g, out, needs, attrs, x):
    return (broadcast_reduced(g, x, mean=True, **attrs),)


def _max_grad(g, out, needs, attrs, x):
    # The gradient goes to the positions that hold the maximum, split evenly between ties.
    hit = cast(equal(x, broadcast_reduced(out, x, **attrs)), dtype=x.dtype)
    count = broadcast_reduced(sum(hit, **attrs), x, **attrs)
    return (div(mul(hit, broadcast_reduced(g, x, **attrs)), count),)


def _by_axis(all_of: str, by_axis: str):
    """A ``grad_fn`` by whether the reduction names an axis (PyTorch's ``sum()`` is
    ``SumBackward0``, ``sum(dim)`` ``SumBackward1``)."""
    def name(node) -> str:
        return all_of if (node.attrs or {}).get("axis") is None else by_axis
    return name


sum = define("sum", _sum_forward, _sum_infer, _sum_grad,  # noqa: A001
             traits=("fresh",), reference=R.reduce_sum, cuda=lambda k: k.reduce.reduce_sum,
             attr_names=("axis", "keepdims"), saves=(),
             grad_fn=_by_axis("SumBackward0", "SumBackward1"),
             doc="Sum over ``axis`` (int, tuple or None for all), keeping dims if ``keepdims``; "
                 "bools and integers sum to int64, as in PyTorch.", batch="reduce")
mean = define("mean", _mean_forward, _mean_infer, _mean_grad, traits=("fresh",),
              reference=R.reduce_mean, cuda=_mean_cuda, saves=(),
              grad_fn=_by_axis("MeanBackward0", "MeanBackward1"),
              doc="Mean over ``axis``; NaN over an empty dimension (PyTorch's).",
              attr_names=("axis", "keepdims"), batch="reduce")
max = define("max", _max_forward, _max_infer, _max_grad,  # noqa: A001
             traits=("fresh",), reference=R.reduce_max, cuda=_max_cuda,
             attr_names=("axis", "keepdims"), grad_fn=_by_axis("MaxBackward1", "AmaxBackward0"),
             doc="Maximum over ``axis`` (``torch.amax``): NaN where a NaN is reduced; the "
                 "gradient is split evenly between ties, and is NaN over a reduced NaN. An "
                 "empty dimension may be kept (a (0, 3) tensor's max over axis 1 is empty) "
                 "but not reduced, as in PyTorch.", saves=("out", 0), batch="reduce")


# -- the broadcasts that undo reductions -----------------------------------------------------
def _broadcast_reduced_forward(g, like, axis=None, keepdims=False, mean=False):
    axes = normalize_axes(axis, like.ndim)
    kept = reduced_shape(like.shape, axes, True)
    out = np.broadcast_to(np.reshape(g, kept), like.shape)
    if mean:
        count = 1
        for a in axes:
            count *= like.shape[a]
        # np.divide turns a 0-d array into a NumPy scalar; keep an array, or the next op
        # (dispatching on ndarray) would fall through to the eager front-end.
        out = np.asarray(np.divide(out, count or 1, dtype=out.dtype))
    return out


def _broadcast_reduced_grad(gg, out, needs, attrs, g, like):
    reduce = mean if attrs.get("mean") else sum
    return reduce(gg, axis=attrs.get("axis"), keepdims=attrs.get("keepdims", False)), None


broadcast_reduced = define(
    "broadcast_reduced", _broadcast_reduced_forward,
    lambda s, d, attrs: (s[1], d[0]), _broadcast_reduced_grad, shape_inputs=(1,),
    reference=RG.broadcast_reduced, cuda=lambda k: k.reduce.broadcast_reduced,
    doc="Spread a reduced gradient ``g`` back over ``like``'s shape (divided by the count if "
        "``mean``): the gradient of sum/mean/max.", saves=())


def _sum_to_like_forward(g, like):
    shape = np.shape(like)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    if lead < 0:
        raise ValueError(f"cannot sum a gradient of shape {g.shape} to shape {shape}")
    if g.shape[lead:] == shape and g.dtype.kind == "f":
        # A bias's gradient: sum over the leading (batch) axes only. This is what the general
        # path below computes too, by the same kernel, without its bookkeeping.
        return cpu.sum_leading(g, lead)
    axes = list(range(lead)) + [lead + i for i, d in enumerate(shape)
                                if d == 1 and g.shape[lead + i] != 1]
    return cpu.reduce_sum(g, tuple(axes), True).reshape(shape) if axes else g.reshape(shape)


sum_to_like = define(
    "sum_to_like", _sum_to_like_forward, lambda s, d, attrs: (s[1], d[0]),
    lambda gg, out, needs, attrs, g, like: (broadcast_like(gg, g), None), shape_inputs=(1,),
    reference=RG.sum_to_like, cuda=lambda k: k.reduce.sum_to_like,
    doc="Sum ``g`` over the axes broadcasting added to reach ``like``'s shape: how a "
        "gradient gets back to the shape of an input that was broadcast.", saves=(0,))
broadcast_like = define(
    "broadcast_like", lambda x, like: np.broadcast_to(x, np.shape(like)),
    lambda s, d, attrs: (s[1], d[0]),
    lambda gg, out, needs, attrs, x, like: (sum_to_like(gg, x), None), traits=("view",),
    shape_inputs=(1,), reference=RG.broadcast_like, cuda=lambda k: k.reduce.broadcast_like,
    doc="Broadcast x to like's shape.", saves=(0,), grad_fn="ExpandBackward0")


# -- issue 21: min, prod, all, any, argmin, and the value at an index ------------------------
def _min_infer(shapes_, dtypes, attrs):
    out = _reduce_infer(shapes_, dtypes, attrs, what="min")
    nonempty_reduction(shapes_[0], attrs.get("axis"), "min")
    return out


def _min_forward(x, axis=None, keepdims=False):
    if x.size == 0:  # an empty result, or refused, as max
        return np.empty(_min_infer([x.shape], [x.dtype], {"axis": axis,
                                                          "keepdims": keepdims})[0], x.dtype)
    return KR.reduce_min(x, axis, keepdims)


def _min_cuda(k):
    reduce_min = k.reduce.reduce_min

    def forward(x, axis=None, keepdims=False):
        if x.size == 0:
            _min_infer([tuple(x.shape)], [x.dtype], {"axis": axis, "keepdims": keepdims})
        return reduce_min(x, axis, keepdims)
    return forward


min = define("min", _min_forward, _min_infer, _max_grad,  # noqa: A001
             traits=("fresh",), reference=R.reduce_min, cuda=_min_cuda,
             attr_names=("axis", "keepdims"), grad_fn=_by_axis("MinBackward1", "AminBackward0"),
             doc="Minimum over ``axis`` (``torch.amin``): NaN where a NaN is reduced; the "
                 "gradient is split evenly between ties, as ``max``'s.", saves=("out", 0))


def _prod_infer(shapes_, dtypes, attrs):
    return _reduce_infer(shapes_, dtypes, attrs, sum_dtype(dtypes[0]), "prod")


def _prod_grad(g, out, needs, attrs, x):
    # d prod / d x_i is the product of the others: out / x_i where x_i != 0. Where x_i is
    # the only zero it is the product of the nonzero elements, and 0 where there are more
    # zeros (PyTorch's rule; no division by zero reaches the result).
    zero = equal(x, 0.0)
    nonzero_prod = prod(where(zero, 1.0, x), **attrs)
    zeros = sum(cast(zero, dtype=x.dtype), **attrs)
    others_if_zero = where(equal(zeros, 1.0), nonzero_prod, 0.0)
    spread = broadcast_reduced(others_if_zero, x, **attrs)
    full = broadcast_reduced(out, x, **attrs)
    each = where(zero, spread, div(full, where(zero, 1.0, x)))
    return (mul(each, broadcast_reduced(g, x, **attrs)),)


prod = define("prod", lambda x, axis=None, keepdims=False: KR.reduce_prod(x, axis, keepdims),
              _prod_infer, _prod_grad, traits=("fresh",), reference=R.reduce_prod,
              cuda=lambda k: k.reduce.reduce_prod, attr_names=("axis", "keepdims"),
              grad_fn=_by_axis("ProdBackward0", "ProdBackward1"),
              doc="Product over ``axis``; bools and integers give int64 (wrapping), as in "
                  "PyTorch; 1 over an empty axis. The gradient is the product of the other "
                  "elements, zeros included, as PyTorch's.", saves=("out", 0))


def _logical_infer(what):
    def infer(shapes_, dtypes, attrs):
        return _reduce_infer(shapes_, dtypes, attrs, D.bool_, what)
    return infer


all = define("all", lambda x, axis=None, keepdims=False: KR.reduce_all(x, axis, keepdims),  # noqa: A001
             _logical_infer("all"), None, traits=("fresh",), reference=R.reduce_all,
             cuda=lambda k: k.reduce.reduce_all, attr_names=("axis", "keepdims"),
             doc="Whether every element over ``axis`` is nonzero (bool; True over nothing).")
any = define("any", lambda x, axis=None, keepdims=False: KR.reduce_any(x, axis, keepdims),  # noqa: A001
             _logical_infer("any"), None, traits=("fresh",), reference=R.reduce_any,
             cuda=lambda k: k.reduce.reduce_any, attr_names=("axis", "keepdims"),
             doc="Whether any element over ``axis`` is nonzero (bool; False over nothing).")


def _argmin_infer(shapes_, dtypes, attrs):
    s, axis, keepdims = shapes_[0], attrs.get("axis"), attrs.get("keepdims", False)
    if dtypes[0] == D.bool_:
        raise D.DtypeError('"argmin_cpu" not implemented for \'Bool\' (as in PyTorch); cast '
                           "it first, e.g. kg.cast(x, kg.int32)")
    if axis is None:
        nonempty_reduction(s, None, "argmin")
        return (() if not keepdims else None if s is None else (1,) * len(s)), D.int64
    axis_arg(axis, "argmin")
    if s is None:
        return None, D.int64
    if len(s) == 0:
        raise ShapeError("argmin: a 0-d tensor has no axis; use axis=None")
    ax = checked_axis(axis, len(s), "argmin")
    nonempty_reduction(s, ax, "argmin", normalize=True)
    return s[:ax] + ((1,) if keepdims else ()) + s[ax + 1:], D.int64


def _argmin(kernel):
    def forward(x, axis=None, keepdims=False):
        _argmin_infer([tuple(x.shape)], [x.dtype], {"axis": axis, "keepdims": keepdims})
        return kernel(x, None if axis is None else axis % x.ndim, keepdims)
    return forward


argmin = define("argmin", _argmin(KR.argmin), _argmin_infer, None, reference=R.argmin,
                cuda=lambda k: _argmin(k.reduce.argmin), attr_names=("axis", "keepdims"),
                doc="int64 index of the first minimum along ``axis`` (None: of the flattened "
                    "tensor), or of the first NaN, as in PyTorch; bools refused; no gradient.")


# The values of torch.max(x, dim) and torch.min(x, dim): x at the index its argmax (argmin)
# chose, so that the gradient goes to that one element, as PyTorch's does (max over an axis
# without indices, the ``max`` card, splits it between ties, as torch.amax).
def _take_infer(what):
    def infer(shapes_, dtypes, attrs):
        s, si = shapes_
        if dtypes[1] != D.int64:
            raise D.DtypeError(f"{what}: indices must be int64, got {dtypes[1].name}")
        if s is None:
            return None, dtypes[0]
        ax = checked_axis(attrs["axis"], len(s), what)
        want = reduced_shape(s, (ax,), attrs.get("keepdims", False))
        if si is not None and (len(si) != len(want) or builtins_any(
                a is not None and b is not None and a != b for a, b in zip(si, want))):
            raise ShapeError(f"{what}: indices of shape {tuple(si)} do not fit x of shape "
                             f"{tuple(s)} reduced over axis {ax}")
        return want, dtypes[0]
    return infer


def builtins_any(items) -> bool:
    """Python's ``any`` (this module's ``any`` is the op)."""
    for item in items:
        if item:
            return True
    return False


def _check_indices(x, indices, axis, what):
    _take_infer(what)([tuple(x.shape), tuple(indices.shape)], [x.dtype, indices.dtype],
                      {"axis": axis, "keepdims": indices.ndim == x.ndim})


def _take_forward(what):
    def forward(x, indices, axis, keepdims=False):
        _check_indices(x, indices, axis, what)
        n = x.shape[axis]
        if indices.size and (indices.min() < 0 or indices.max() >= n):
            raise IndexError(f"{what}: an index is out of range for axis {axis} of size {n}")
        return KR.take_along_axis(x, indices, axis % x.ndim, keepdims)
    return forward


def _take_cuda(what):
    def build(k):
        take = k.reduce.take_along_axis

        def forward(x, indices, axis, keepdims=False):
            _check_indices(x, indices, axis, what)  # the kernel skips an index out of range
            return take(x, indices, axis % x.ndim, keepdims)
        return forward
    return build


def _take_grad(g, out, needs, attrs, x, indices):
    return put_along_axis(g, indices, x, axis=attrs["axis"],
                          keepdims=attrs.get("keepdims", False)), None


_TAKE_DOC = ("The values of torch.{0}(x, dim): x at ``indices`` (its arg{0} along ``axis``, "
             "int64, kept as a size-1 axis if ``keepdims``); the gradient goes to that "
             "element alone, as PyTorch's.")
max_dim = define("max_dim", _take_forward("max_dim"), _take_infer("max_dim"), _take_grad,
                 traits=("fresh",), reference=R.take_along_axis, cuda=_take_cuda("max_dim"),
                 attr_names=("axis", "keepdims"), inputs=2, doc=_TAKE_DOC.format("max"),
                 saves=(0, 1), grad_fn="MaxBackward0")
min_dim = define("min_dim", _take_forward("min_dim"), _take_infer("min_dim"), _take_grad,
                 traits=("fresh",), reference=R.take_along_axis, cuda=_take_cuda("min_dim"),
                 attr_names=("axis", "keepdims"), inputs=2, doc=_TAKE_DOC.format("min"),
                 saves=(0, 1), grad_fn="MinBackward0")


def _put_forward(g, indices, like, axis, keepdims=False):
    ax = axis % like.ndim
    return KR.put_along_axis(np.asarray(g), indices, like.shape, ax)


def _put_cuda(k):
    put = k.reduce.put_along_axis
    return lambda g, indices, like, axis, keepdims=False: put(g, indices, tuple(like.shape),
                                                              axis % like.ndim)


put_along_axis = define(
    "put_along_axis", _put_forward, lambda s, d, attrs: (s[2], d[0]),
    lambda gg, out, needs, attrs, g, indices, like: (
        max_dim(gg, indices, axis=attrs["axis"], keepdims=attrs.get("keepdims", False)),
        None, None),
    traits=("fresh",), shape_inputs=(2,), reference=RG.put_along_axis, cuda=_put_cuda,
    attr_names=("axis", "keepdims"), inputs=3,
    doc="Zeros of ``like``'s shape with ``g`` at ``indices`` along ``axis``: the gradient of "
        "max_dim and min_dim.", saves=(1,))


# -- cumsum ----------------------------------------------------------------------------------
def _cumsum_infer(shapes_, dtypes, attrs):
    s = shapes_[0]
    axis_arg(attrs.get("axis"), "cumsum")
    if s is not None:
        checked_axis(attrs["axis"], builtins_max(len(s), 1), "cumsum")
    return s, sum_dtype(dtypes[0])


def builtins_max(a: int, b: int) -> int:
    """Python's ``max`` of two ints (this module's ``max`` is the op)."""
    return a if a >= b else b


def _cumsum(kernel):
    def forward(x, axis):
        _cumsum_infer([tuple(x.shape)], [x.dtype], {"axis": axis})
        return kernel(x, axis % x.ndim if x.ndim else 0)
    return forward


def _cumsum_grad(g, out, needs, attrs, x):
    # Each x_i adds to every running sum from i on: the sums of g from i to the end, that is
    # the total minus the running sum before i.
    axis = attrs["axis"]
    return (add(sub(sum(g, axis=axis, keepdims=True), cumsum(g, axis=axis)), g),)


cumsum = define("cumsum", _cumsum(KR.cumsum), _cumsum_infer, _cumsum_grad,
                traits=("fresh",), reference=R.cumsum, cuda=lambda k: _cumsum(k.reduce.cumsum),
                attr_names=("axis",),
                doc="Running sums along ``axis``; bools and integers give int64, as in "
                    "PyTorch.", saves=(), grad_fn="CumsumBackward0")
