"""``grid_sample``: PyTorch's 2-D sampling of an image at the points of a grid
(``torch.nn.functional.grid_sample`` with ``padding_mode='zeros'``), as an op card with
two backward ops, one per input: ``grid_sample_backward_input`` (the samples' gradients
spread back onto the pixels they read) and ``grid_sample_backward_grid`` (the derivative of
the bilinear weights). The backward ops have no gradients of their own (second derivatives
through grid_sample are refused). Kernels: :mod:`kernelgraph.kernels.grid_sample` and its
CUDA twin.

>>> import kernelgraph as kg
>>> x = kg.arange(4.0).reshape(1, 1, 2, 2)
>>> grid = kg.tensor([[[[0.0, 0.0], [-0.5, -0.5]]]])         # the centre, pixel (0, 0)
>>> grid_sample(x, grid, mode="bilinear", align_corners=False).tolist()
[[[[1.5, 0.0]]]]
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError
from ..graph import shape_str
from ..kernels import grid_sample as K
from .registry import define

__all__ = ["grid_sample"]

_MODES = ("bilinear", "nearest")


def _mode(attrs) -> tuple:
    mode = attrs.get("mode", "bilinear")
    if mode not in _MODES:
        raise ValueError(f"grid_sample: mode must be 'bilinear' or 'nearest', got {mode!r}")
    return mode == "nearest", bool(attrs.get("align_corners", False))


def _shape(sx, sg) -> tuple:
    x = (None,) * 4 if sx is None else tuple(sx)
    g = (None,) * 4 if sg is None else tuple(sg)
    if len(x) != 4 or len(g) != 4 or g[3] not in (None, 2) or (
            None not in (x[0], g[0]) and x[0] != g[0]):
        raise ShapeError(f"grid_sample: expected an input (N, C, H, W) and a grid (N, H_out, "
                         f"W_out, 2) with the same N, got {shape_str(sx)} and {shape_str(sg)}")
    return (x[0], x[1], g[1], g[2])


def _dtype(dx, dg, static: bool = False):
    dx, dg = D.as_dtype(dx), D.as_dtype(dg)
    if not D.is_floating(dx) or dx != dg:
        raise TypeError(f"grid_sample: expected the input and the grid to have one floating "
                        f"dtype, got {dx.name} and {dg.name}")
    return dx


def _dims(a) -> tuple:
    return tuple(int(s) for s in np.shape(a))


def _cuda_kernels():
    from ..kernels.cuda import grid_sample as CK  # numba.cuda loads on first CUDA use
    return CK


def _forward(kernels):
    def forward(x, grid, **attrs):
        _shape(_dims(x), _dims(grid))
        _dtype(x.dtype, grid.dtype)
        return kernels().grid_sample(x, grid, *_mode(attrs))
    return forward


def _backward_input(kernels):
    def forward(g, like, grid, **attrs):
        return kernels().grid_sample_backward_input(g, _dims(like), grid, *_mode(attrs))
    return forward


def _backward_grid(kernels):
    def forward(g, x, grid, **attrs):
        return kernels().grid_sample_backward_grid(g, x, grid, *_mode(attrs))
    return forward


def _grad(g, out, needs, attrs, x, grid):
    return ((grid_sample_backward_input(g, x, grid, **attrs) if needs[0] else None),
            (grid_sample_backward_grid(g, x, grid, **attrs) if needs[1] else None))


_ATTRS = ("mode", "align_corners")
grid_sample = define(
    "grid_sample", _forward(lambda: K), lambda s, d, attrs: (
        _shape(s[0], s[1]), _dtype(d[0], d[1], static=True)),
    _grad, traits=("fresh",), reference=K.reference,
    cuda=lambda k: _forward(_cuda_kernels), inputs=2, attr_names=_ATTRS, saves=(0, 1),
    grad_fn="GridSampler2DBackward0",
    doc="Sample x (N, C, H, W) at grid (N, HO, WO, 2) ((x, y) in [-1, 1]) -> (N, C, HO, WO): "
        "mode 'bilinear' or 'nearest' (halves to even), align_corners False (the corner "
        "pixels' outer edges) or True (their centres), zeros outside the image; as "
        "torch.nn.functional.grid_sample with padding_mode='zeros'.")
grid_sample_backward_input = define(
    "grid_sample_backward_input", _backward_input(lambda: K),
    lambda s, d, attrs: (tuple(s[1]) if s[1] is not None else None, d[0]), None,
    reference=K.reference_backward_input, cuda=lambda k: _backward_input(_cuda_kernels),
    inputs=3, attr_names=_ATTRS,
    doc="The gradient of grid_sample with respect to its input: (g, like=x, grid) -> x's "
        "shape.")
grid_sample_backward_grid = define(
    "grid_sample_backward_grid", _backward_grid(lambda: K),
    lambda s, d, attrs: (tuple(s[2]) if s[2] is not None else None, d[0]), None,
    reference=K.reference_backward_grid, cuda=lambda k: _backward_grid(_cuda_kernels),
    inputs=3, attr_names=_ATTRS,
    doc="The gradient of grid_sample with respect to its grid: (g, x, grid) -> grid's shape "
        "(zeros in mode 'nearest').")
