"""Batch normalisation as fused op cards: each channel's statistics in one sweep over x, the
normalisation in one more, and the backward's two reductions and x's gradient in one sweep
each (PyTorch's CPU kernels' plan), in place of a dozen elementwise and reduce ops:

- ``batch_norm_stats(x, eps)`` -> (3, C): each channel's mean, biased variance and
  ``1 / sqrt(var + eps)`` (float64 sums rounded to x's dtype). It has no gradient rule of
  its own: ``batch_norm``'s rule is the total derivative through them;
- ``batch_norm(x, stats, weight, bias, eps, training)`` -> y: ``(x - mean) * invstd *
  weight + bias`` per channel (PyTorch's ``native_batch_norm``, grad_fn
  ``NativeBatchNormBackward0``). With ``training`` True, ``stats`` must be
  ``batch_norm_stats(x, eps)`` of this very x, and x's gradient includes the statistics'
  dependence on x (``stats`` gets none); with ``training`` False they are constants
  (running statistics: ``[mean, var, 1 / sqrt(var + eps)]``);
- ``batch_norm_grad_sums`` and ``batch_norm_grad_input``: the backward's two sweeps.

Second derivatives: when eager mode records the backward (``create_graph=True``) the rule
is written with the elementwise and reduce ops instead, which have gradients of their own;
in a static graph the fused backward ops refuse a gradient (NotImplementedError).
Kernels: :mod:`kernelgraph.kernels.batch_norm` and its CUDA twin.

>>> import numpy as np
>>> x = np.array([[1.0, 2.0], [3.0, 6.0]])
>>> s = batch_norm_stats(x, eps=0.0)
>>> s.tolist()
[[2.0, 4.0], [1.0, 4.0], [1.0, 0.5]]
>>> batch_norm(x, s, np.ones(2), np.zeros(2), eps=0.0).tolist()
[[-1.0, -1.0], [1.0, 1.0]]
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError
from ..graph import shape_str
from ..kernels import batch_norm as K
from .elementwise import add, mul, rsqrt, square, sub
from .indexing import getitem, normalize_index
from .reduce import mean, sum
from .registry import define
from .shape import reshape

__all__ = ["batch_norm", "batch_norm_grad_input", "batch_norm_grad_sums", "batch_norm_stats"]


def _channels(op: str, sx) -> int | None:
    if sx is not None and len(sx) < 2:
        raise ShapeError(f"{op}: expected an input (N, C, ...) of at least 2 dims, got "
                         f"{shape_str(sx)}")
    return None if sx is None else sx[1]


def _per_channel(op: str, what: str, s, rows, c) -> None:
    want = (c,) if rows is None else (rows, c)
    if s is not None and (len(s) != len(want) or any(
            a is not None and b is not None and a != b for a, b in zip(s, want))):
        raise ShapeError(f"{op}: expected {what} of shape {shape_str(want)} (the input's "
                         f"channels), got {shape_str(s)}")


def _same_float(op: str, *dts):
    dts = [D.as_dtype(d) for d in dts]
    if not D.is_floating(dts[0]) or any(d != dts[0] for d in dts):
        raise TypeError(f"{op}: expected floating inputs of one dtype, got "
                        f"{', '.join(d.name for d in dts)}")
    return dts[0]


def _dims(a):
    return tuple(int(s) for s in np.shape(a))


def _check(op: str, shapes, dtypes, whats) -> tuple:
    """Validate (x or g first) the inputs named by ``whats`` (what, rows): (shape, dtype)."""
    c = None
    for s, (what, rows) in zip(shapes, whats):
        if what == "x":
            if c is None:
                c = _channels(op, s)
            elif s is not None and shapes[0] is not None and tuple(s) != tuple(shapes[0]):
                raise ShapeError(f"{op}: expected the gradient and the input to have one "
                                 f"shape, got {shape_str(shapes[0])} and {shape_str(s)}")
        else:
            _per_channel(op, what, s, rows, c)
    return shapes[0], _same_float(op, *dtypes)


_STATS = (("x", None),)
_BN = (("x", None), ("stats", 3), ("weight", None), ("bias", None))
_SUMS = (("x", None), ("x", None), ("stats", 3))
_INPUT = (("x", None), ("x", None), ("stats", 3), ("weight", None), ("sums", 2))


def _stats_infer(s, d, attrs):
    _, dtype = _check("batch_norm_stats", s, d, _STATS)
    c = None if s[0] is None else s[0][1]
    return (3, c), dtype


def _sums_infer(s, d, attrs):
    _, dtype = _check("batch_norm_grad_sums", s, d, _SUMS)
    return (2, None if s[0] is None else s[0][1]), dtype


def _checked(name, whats, run):
    def forward(*arrays, **attrs):
        _check(name, [_dims(a) for a in arrays], [a.dtype for a in arrays], whats)
        return run(*arrays, **attrs)
    return forward


def _cuda_kernels():
    from ..kernels.cuda import batch_norm as CK  # numba.cuda loads on first CUDA use
    return CK


def _forwards(kernels):
    """The four forwards over one kernel module (``kernels()``: CPU or CUDA)."""
    return {
        "batch_norm_stats": _checked("batch_norm_stats", _STATS,
                                     lambda x, eps=1e-5: kernels().stats(x, eps)),
        "batch_norm": _checked("batch_norm", _BN, lambda x, s, w, b, eps=1e-5, training=True:
                               kernels().apply(x, s, w, b)),
        "batch_norm_grad_sums": _checked("batch_norm_grad_sums", _SUMS, lambda g, x, s:
                                         kernels().grad_sums(g, x, s)),
        "batch_norm_grad_input": _checked(
            "batch_norm_grad_input", _INPUT, lambda g, x, s, w, r, training=True:
            kernels().grad_input(g, x, s, w, r, training)),
    }


_CPU, _CUDA = _forwards(lambda: K), lambda name: _forwards(_cuda_kernels)[name]


def _recording(*values) -> bool:
    """Whether a rule's values are eager tensors, i.e. eager mode records the backward
    (``create_graph=True``; otherwise it hands rules plain arrays, and static mode nodes)."""
    return any(hasattr(v, "requires_grad") for v in values)


def _row(stats, k):
    return getitem(stats, index=normalize_index((k,)))


def _composite_grad(g, x, stats, weight, attrs):
    """The rule in elementwise and reduce ops, differentiable again (x's own statistics
    recomputed from x in training mode, so their dependence on x is part of the graph)."""
    rank = len(x.shape)
    axes = tuple(a for a in range(rank) if a != 1)
    view = (1, -1) + (1,) * (rank - 2)
    w = reshape(weight, shape=view)
    if not attrs.get("training", True):
        invstd = reshape(_row(stats, 2), shape=view)
        xhat = mul(sub(x, reshape(_row(stats, 0), shape=view)), invstd)
        return mul(g, mul(w, invstd)), sum(mul(g, xhat), axis=axes), sum(g, axis=axes)
    xc = sub(x, mean(x, axis=axes, keepdims=True))
    invstd = rsqrt(add(mean(square(xc), axis=axes, keepdims=True), attrs.get("eps", 1e-5)))
    xhat = mul(xc, invstd)
    gxhat = mul(g, xhat)
    dx = mul(mul(w, invstd), sub(sub(g, mean(g, axis=axes, keepdims=True)),
                                 mul(xhat, mean(gxhat, axis=axes, keepdims=True))))
    return dx, sum(gxhat, axis=axes), sum(g, axis=axes)


def _grad(g, out, needs, attrs, x, stats, weight, bias):
    if _recording(g, x, stats, weight):
        dx, dw, db = _composite_grad(g, x, stats, weight, attrs)
        return (dx if needs[0] else None), None, (dw if needs[2] else None), \
            (db if needs[3] else None)
    training = attrs.get("training", True)
    sums = batch_norm_grad_sums(g, x, stats) if training or needs[2] or needs[3] else None
    dx = None
    if needs[0]:  # (with running statistics the sums are not read: two rows stand in)
        dx = batch_norm_grad_input(g, x, stats, weight, getitem(
            stats, index=normalize_index((slice(0, 2),))) if sums is None else sums,
            training=training)
    return (dx, None, _row(sums, 1) if needs[2] else None,
            _row(sums, 0) if needs[3] else None)


def _refuse(name: str):
    raise NotImplementedError(
        f"{name}: the gradient of batch_norm's gradient in a graph is not implemented; "
        "take second derivatives through batch normalisation in eager mode "
        "(create_graph=True records them with elementwise and reduce ops)")


def _refuse_sums(g, out, needs, attrs, dy, x, stats):
    _refuse("batch_norm_grad_sums")


def _refuse_input(g, out, needs, attrs, dy, x, stats, weight, sums):
    _refuse("batch_norm_grad_input")


batch_norm_stats = define(
    "batch_norm_stats", _CPU["batch_norm_stats"], _stats_infer, None, traits=("fresh",),
    reference=K.reference_stats, cuda=lambda k: _CUDA("batch_norm_stats"), inputs=1,
    attr_names=("eps",),
    doc="Each channel (dim 1) of x (N, C, ...): [mean, biased variance, 1 / sqrt(var + "
        "eps)] -> (3, C), summed in float64 (two sweeps, as PyTorch's CPU kernel).")
batch_norm = define(
    "batch_norm", _CPU["batch_norm"], lambda s, d, attrs: _check("batch_norm", s, d, _BN),
    _grad, traits=("fresh",), reference=K.reference, cuda=lambda k: _CUDA("batch_norm"),
    inputs=4, attr_names=("eps", "training"), saves=(0, 1, 2),
    grad_fn="NativeBatchNormBackward0",
    doc="(x - mean) * invstd * weight + bias per channel (dim 1), stats = [mean, var, invstd] "
        "(3, C): in training mode batch_norm_stats(x, eps) of this x (x's gradient then "
        "includes theirs), else running statistics; as torch.native_batch_norm.")
batch_norm_grad_sums = define(
    "batch_norm_grad_sums", _CPU["batch_norm_grad_sums"], _sums_infer,
    _refuse_sums, saves=(), traits=("fresh",), reference=K.reference_grad_sums,
    cuda=lambda k: _CUDA("batch_norm_grad_sums"), inputs=3,
    doc="batch_norm's backward sums per channel: [sum(g), sum(g * (x - mean)) * invstd] "
        "-> (2, C) (the bias's and the weight's gradients).")
batch_norm_grad_input = define(
    "batch_norm_grad_input", _CPU["batch_norm_grad_input"],
    lambda s, d, attrs: _check("batch_norm_grad_input", s, d, _INPUT),
    _refuse_input, saves=(), traits=("fresh",),
    reference=K.reference_grad_input,
    cuda=lambda k: _CUDA("batch_norm_grad_input"), inputs=5, attr_names=("training",),
    doc="batch_norm's gradient for x from g, x, stats, weight and batch_norm_grad_sums' "
        "sums: training mode includes the statistics' dependence on x.")
