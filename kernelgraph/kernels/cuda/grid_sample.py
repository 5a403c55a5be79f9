"""CUDA ``grid_sample`` (:mod:`kernelgraph.kernels.grid_sample`): one thread per grid point
for the forward and the grid gradient, which read the same corners with the same formulas as
the CPU loops. The input gradient adds into a zeroed array with atomic adds (several grid
points may read one pixel), so its sums may round in another order than the CPU's.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from .. import grid_sample as K
from . import core, launcher

_unnormalize = cuda.jit(device=True)(K.unnormalize.py_func)
_rint = cuda.jit(device=True)(K.rint.py_func)


@cuda.jit(device=True)
def _point(grid, p, h, w, align_corners):
    """(n, i, j, ix, iy, sx, sy) of grid point p."""
    ho_, wo_ = grid.shape[1], grid.shape[2]
    j = p % wo_
    i = (p // wo_) % ho_
    n = p // (wo_ * ho_)
    ix, sx = _unnormalize(float(grid[n, i, j, 0]), w, align_corners)
    iy, sy = _unnormalize(float(grid[n, i, j, 1]), h, align_corners)
    return n, i, j, ix, iy, sx, sy


@cuda.jit
def _forward(x, grid, out, nearest, align_corners):
    c_, h, w = x.shape[1], x.shape[2], x.shape[3]
    for p in range(cuda.grid(1), grid.shape[0] * grid.shape[1] * grid.shape[2],
                   cuda.gridsize(1)):
        n, i, j, ix, iy, sx, sy = _point(grid, p, h, w, align_corners)
        if nearest:
            xr, yr = _rint(ix), _rint(iy)
            for c in range(c_):
                out[n, c, i, j] = x[n, c, yr, xr] if 0 <= yr < h and 0 <= xr < w else 0.0
            continue
        x0, y0 = int(math.floor(ix)), int(math.floor(iy))
        tx, ty = ix - x0, iy - y0
        for c in range(c_):
            acc = 0.0
            for dy in range(2):
                for dx in range(2):
                    yy, xx = y0 + dy, x0 + dx
                    if 0 <= yy < h and 0 <= xx < w:
                        acc += ((ty if dy else 1.0 - ty) * (tx if dx else 1.0 - tx)
                                * x[n, c, yy, xx])
            out[n, c, i, j] = acc


@cuda.jit
def _backward_input(g, grid, dx_, nearest, align_corners):
    c_, h, w = dx_.shape[1], dx_.shape[2], dx_.shape[3]
    for p in range(cuda.grid(1), grid.shape[0] * grid.shape[1] * grid.shape[2],
                   cuda.gridsize(1)):
        n, i, j, ix, iy, sx, sy = _point(grid, p, h, w, align_corners)
        if nearest:
            xr, yr = _rint(ix), _rint(iy)
            if 0 <= yr < h and 0 <= xr < w:
                for c in range(c_):
                    cuda.atomic.add(dx_, (n, c, yr, xr), g[n, c, i, j])
            continue
        x0, y0 = int(math.floor(ix)), int(math.floor(iy))
        tx, ty = ix - x0, iy - y0
        for dy in range(2):
            for dx in range(2):
                yy, xx = y0 + dy, x0 + dx
                if 0 <= yy < h and 0 <= xx < w:
                    wt = (ty if dy else 1.0 - ty) * (tx if dx else 1.0 - tx)
                    for c in range(c_):
                        cuda.atomic.add(dx_, (n, c, yy, xx), wt * g[n, c, i, j])


@cuda.jit
def _backward_grid(g, x, grid, dgrid, align_corners):
    c_, h, w = x.shape[1], x.shape[2], x.shape[3]
    for p in range(cuda.grid(1), grid.shape[0] * grid.shape[1] * grid.shape[2],
                   cuda.gridsize(1)):
        n, i, j, ix, iy, sx, sy = _point(grid, p, h, w, align_corners)
        x0, y0 = int(math.floor(ix)), int(math.floor(iy))
        tx, ty = ix - x0, iy - y0
        gx = 0.0
        gy = 0.0
        for dy in range(2):
            for dx in range(2):
                yy, xx = y0 + dy, x0 + dx
                if 0 <= yy < h and 0 <= xx < w:
                    wx = (1.0 if dx else -1.0) * (ty if dy else 1.0 - ty)
                    wy = (1.0 if dy else -1.0) * (tx if dx else 1.0 - tx)
                    for c in range(c_):
                        v = x[n, c, yy, xx] * g[n, c, i, j]
                        gx += wx * v
                        gy += wy * v
        dgrid[n, i, j, 0] = gx * sx
        dgrid[n, i, j, 1] = gy * sy


def _dims(a) -> tuple:
    return tuple(int(s) for s in a.shape)


def _launch(kernel, points, *args):
    if points:
        blocks, threads = core.launch(points)
        launcher.launch(kernel, blocks, threads, *args)


def grid_sample(x, grid, nearest, align_corners):
    shape = K.check_shapes(_dims(x), _dims(grid))
    out = core.full(shape, 0, np.dtype(x.dtype))
    if x.size:
        _launch(_forward, grid.size // 2, x, grid, out, bool(nearest), bool(align_corners))
    return out


def grid_sample_backward_input(g, x_shape, grid, nearest, align_corners):
    x_shape = tuple(int(s) for s in x_shape)
    if _dims(g) != K.check_shapes(x_shape, _dims(grid)):
        raise ValueError(f"grid_sample_backward_input: the gradient has shape {_dims(g)}, "
                         f"expected {K.check_shapes(x_shape, _dims(grid))}")
    dx = core.full(x_shape, 0, np.dtype(g.dtype))
    if dx.size:
        _launch(_backward_input, grid.size // 2, g, grid, dx, bool(nearest),
                bool(align_corners))
    return dx


def grid_sample_backward_grid(g, x, grid, nearest, align_corners):
    if _dims(g) != K.check_shapes(_dims(x), _dims(grid)):
        raise ValueError(f"grid_sample_backward_grid: the gradient has shape {_dims(g)}, "
                         f"expected {K.check_shapes(_dims(x), _dims(grid))}")
    dgrid = core.full(_dims(grid), 0, np.dtype(g.dtype))
    if x.size and not nearest:
        _launch(_backward_grid, grid.size // 2, g, x, grid, dgrid, bool(align_corners))
    return dgrid
