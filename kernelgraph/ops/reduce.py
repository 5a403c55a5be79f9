"""Reductions (``sum mean max`` with ``axis`` and ``keepdims``) and the broadcasts that are
their gradients."""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError
from ..kernels import cpu
from ..kernels import reference as R
from ..kernels import reference_grads as RG
from ..shapes import axes_arg, nonempty_reduction, normalize_axes, reduced_shape
from .elementwise import cast, div, equal, mul
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


sum = define("sum", _sum_forward, _sum_infer, _sum_grad,  # noqa: A001
             traits=("fresh",), reference=R.reduce_sum, cuda=lambda k: k.reduce.reduce_sum,
             attr_names=("axis", "keepdims"),
             doc="Sum over ``axis`` (int, tuple or None for all), keeping dims if ``keepdims``; "
                 "bools and integers sum to int64, as in PyTorch.")
mean = define("mean", _mean_forward, _mean_infer, _mean_grad, traits=("fresh",),
              reference=R.reduce_mean, cuda=_mean_cuda,
              doc="Mean over ``axis``; NaN over an empty dimension (PyTorch's).",
              attr_names=("axis", "keepdims"))
max = define("max", _max_forward, _max_infer, _max_grad,  # noqa: A001
             traits=("fresh",), reference=R.reduce_max, cuda=_max_cuda,
             attr_names=("axis", "keepdims"),
             doc="Maximum over ``axis`` (``torch.amax``): NaN where a NaN is reduced; the "
                 "gradient is split evenly between ties, and is NaN over a reduced NaN. An "
                 "empty dimension may be kept (a (0, 3) tensor's max over axis 1 is empty) "
                 "but not reduced, as in PyTorch.")


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
        "``mean``): the gradient of sum/mean/max.")


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
        "gradient gets back to the shape of an input that was broadcast.")
broadcast_like = define(
    "broadcast_like", lambda x, like: np.broadcast_to(x, np.shape(like)),
    lambda s, d, attrs: (s[1], d[0]),
    lambda gg, out, needs, attrs, x, like: (sum_to_like(gg, x), None), traits=("view",),
    shape_inputs=(1,), reference=RG.broadcast_like, cuda=lambda k: k.reduce.broadcast_like,
    doc="Broadcast x to like's shape.")
