"""numba CPU kernels of PyTorch's ``grid_sample`` (2-D, padding with zeros): sample x (N, C,
H, W) at the points of grid (N, HO, WO, 2), whose last dim holds (x, y) in [-1, 1], mode
'bilinear' or 'nearest', ``align_corners`` False (-1 and 1 are the outer edges of the
corner pixels) or True (their centres), as ``GridSampler.h`` computes them.

Three kernels: the forward, the input gradient (each output's gradient spread back onto the
pixels it read, with the same weights) and the grid gradient (the derivative of the
bilinear weights along x and y, times the unnormalisation's scale). A point outside the
image reads zeros and passes no gradient to the pixels it misses.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .conv import THREADED_MIN_WORK
from .loops import by_work

ndarray = np.ndarray


@njit(cache=True)
def unnormalize(v, size, align_corners):
    """Grid coordinate in [-1, 1] -> pixel coordinate, and d(pixel) / d(grid)."""
    if align_corners:
        return (v + 1.0) / 2.0 * (size - 1), (size - 1) / 2.0
    return ((v + 1.0) * size - 1.0) / 2.0, size / 2.0


@njit(cache=True)
def rint(v):
    """v rounded to the nearest int, halves to even (C's nearbyint, as PyTorch rounds)."""
    r = math.floor(v + 0.5)
    if r - v == 0.5 and r % 2 != 0:
        r -= 1
    return int(r)


@njit(cache=True)
def _inside(y, x, h, w):
    return 0 <= y < h and 0 <= x < w


@by_work(THREADED_MIN_WORK)  # threaded only for large outputs, as kernels/conv.py's loops
def _forward(x, grid, out, nearest, align_corners):
    n_, c_, h, w = x.shape
    ho_, wo_ = out.shape[2], out.shape[3]
    for n in prange(n_):
        for i in range(ho_):
            for j in range(wo_):
                ix, _ = unnormalize(float(grid[n, i, j, 0]), w, align_corners)
                iy, _ = unnormalize(float(grid[n, i, j, 1]), h, align_corners)
                if nearest:
                    xr, yr = rint(ix), rint(iy)
                    for c in range(c_):
                        out[n, c, i, j] = x[n, c, yr, xr] if _inside(yr, xr, h, w) else 0.0
                    continue
                x0, y0 = int(np.floor(ix)), int(np.floor(iy))
                tx, ty = ix - x0, iy - y0
                for c in range(c_):
                    acc = 0.0
                    for dy in range(2):
                        for dx in range(2):
                            yy, xx = y0 + dy, x0 + dx
                            if _inside(yy, xx, h, w):
                                wt = (ty if dy else 1.0 - ty) * (tx if dx else 1.0 - tx)
                                acc += wt * x[n, c, yy, xx]
                    out[n, c, i, j] = acc


@by_work(THREADED_MIN_WORK)
def _backward_input(g, grid, dx_, nearest, align_corners):
    n_, c_, h, w = dx_.shape
    ho_, wo_ = g.shape[2], g.shape[3]
    for n in prange(n_):  # each image writes only its own plane of dx
        for i in range(ho_):
            for j in range(wo_):
                ix, _ = unnormalize(float(grid[n, i, j, 0]), w, align_corners)
                iy, _ = unnormalize(float(grid[n, i, j, 1]), h, align_corners)
                if nearest:
                    xr, yr = rint(ix), rint(iy)
                    if _inside(yr, xr, h, w):
                        for c in range(c_):
                            dx_[n, c, yr, xr] += g[n, c, i, j]
                    continue
                x0, y0 = int(np.floor(ix)), int(np.floor(iy))
                tx, ty = ix - x0, iy - y0
                for dy in range(2):
                    for dx in range(2):
                        yy, xx = y0 + dy, x0 + dx
                        if _inside(yy, xx, h, w):
                            wt = (ty if dy else 1.0 - ty) * (tx if dx else 1.0 - tx)
                            for c in range(c_):
                                dx_[n, c, yy, xx] += wt * g[n, c, i, j]


@by_work(THREADED_MIN_WORK)
def _backward_grid(g, x, grid, dgrid, align_corners):
    n_, c_, h, w = x.shape
    ho_, wo_ = g.shape[2], g.shape[3]
    for n in prange(n_):
        for i in range(ho_):
            for j in range(wo_):
                ix, sx = unnormalize(float(grid[n, i, j, 0]), w, align_corners)
                iy, sy = unnormalize(float(grid[n, i, j, 1]), h, align_corners)
                x0, y0 = int(np.floor(ix)), int(np.floor(iy))
                tx, ty = ix - x0, iy - y0
                gx = 0.0
                gy = 0.0
                for dy in range(2):
                    for dx in range(2):
                        yy, xx = y0 + dy, x0 + dx
                        if not _inside(yy, xx, h, w):
                            continue
                        # d(weight)/d(ix) and d(weight)/d(iy) of this corner
                        wx = (1.0 if dx else -1.0) * (ty if dy else 1.0 - ty)
                        wy = (1.0 if dy else -1.0) * (tx if dx else 1.0 - tx)
                        for c in range(c_):
                            v = x[n, c, yy, xx] * g[n, c, i, j]
                            gx += wx * v
                            gy += wy * v
                dgrid[n, i, j, 0] = gx * sx
                dgrid[n, i, j, 1] = gy * sy


def check_shapes(x_shape: tuple, grid_shape: tuple) -> tuple:
    """The output shape (N, C, HO, WO), or a ValueError saying what was expected."""
    if len(x_shape) != 4 or len(grid_shape) != 4 or grid_shape[3] != 2 or (
            grid_shape[0] != x_shape[0]):
        raise ValueError(f"grid_sample expects an input (N, C, H, W) and a grid (N, HO, WO, 2) "
                         f"with the same N, got shapes {x_shape} and {grid_shape}")
    return (x_shape[0], x_shape[1], grid_shape[1], grid_shape[2])


def grid_sample(x: ndarray, grid: ndarray, nearest: bool, align_corners: bool) -> ndarray:
    out = np.zeros(check_shapes(x.shape, grid.shape), x.dtype)
    if out.size and x.size:
        _forward(out.size, np.ascontiguousarray(x), np.ascontiguousarray(grid), out, nearest,
                 align_corners)
    return out


def grid_sample_backward_input(g: ndarray, x_shape: tuple, grid: ndarray, nearest: bool,
                               align_corners: bool) -> ndarray:
    if g.shape != check_shapes(tuple(x_shape), grid.shape):
        raise ValueError(f"grid_sample_backward_input: the gradient has shape {g.shape}, "
                         f"expected {check_shapes(tuple(x_shape), grid.shape)}")
    dx = np.zeros(tuple(x_shape), g.dtype)
    if g.size and dx.size:
        _backward_input(g.size, np.ascontiguousarray(g), np.ascontiguousarray(grid), dx,
                        nearest, align_corners)
    return dx


def grid_sample_backward_grid(g: ndarray, x: ndarray, grid: ndarray, nearest: bool,
                              align_corners: bool) -> ndarray:
    if g.shape != check_shapes(x.shape, grid.shape):
        raise ValueError(f"grid_sample_backward_grid: the gradient has shape {g.shape}, "
                         f"expected {check_shapes(x.shape, grid.shape)}")
    dgrid = np.zeros(grid.shape, g.dtype)
    if g.size and x.size and not nearest:  # nearest: piecewise constant in the grid
        _backward_grid(g.size, np.ascontiguousarray(g), np.ascontiguousarray(x, g.dtype),
                       np.ascontiguousarray(grid), dgrid, align_corners)
    return dgrid


# -- the NumPy reference: the same formulas, one point at a time ------------------------------
def _corners(gx, gy, h, w, nearest, align_corners):
    """[(y, x, weight)] of the pixels one grid point reads."""
    if align_corners:
        ix, iy = (gx + 1) / 2 * (w - 1), (gy + 1) / 2 * (h - 1)
    else:
        ix, iy = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
    if nearest:
        picks = [(int(np.rint(iy)), int(np.rint(ix)), 1.0)]
    else:
        x0, y0 = int(np.floor(ix)), int(np.floor(iy))
        tx, ty = ix - x0, iy - y0
        picks = [(y0, x0, (1 - ty) * (1 - tx)), (y0, x0 + 1, (1 - ty) * tx),
                 (y0 + 1, x0, ty * (1 - tx)), (y0 + 1, x0 + 1, ty * tx)]
    return [(y, x, wt) for y, x, wt in picks if 0 <= y < h and 0 <= x < w]


def reference(x, grid, mode="bilinear", align_corners=False):
    x, grid = np.asarray(x), np.asarray(grid)
    n_, c_, h, w = x.shape
    out = np.zeros((n_, c_, grid.shape[1], grid.shape[2]))
    for n in range(n_):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                for y, xx, wt in _corners(grid[n, i, j, 0], grid[n, i, j, 1], h, w,
                                          mode == "nearest", align_corners):
                    out[n, :, i, j] += wt * x[n, :, y, xx]
    return out.astype(x.dtype)


def reference_backward_input(g, like, grid, mode="bilinear", align_corners=False):
    g, grid = np.asarray(g), np.asarray(grid)
    n_, c_, h, w = np.shape(like)
    dx = np.zeros((n_, c_, h, w))
    for n in range(n_):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                for y, xx, wt in _corners(grid[n, i, j, 0], grid[n, i, j, 1], h, w,
                                          mode == "nearest", align_corners):
                    dx[n, :, y, xx] += wt * g[n, :, i, j]
    return dx.astype(g.dtype)


def reference_backward_grid(g, x, grid, mode="bilinear", align_corners=False):
    """d sum(g * grid_sample(x, grid)) / d grid, point by point: each in-image corner's
    value times the derivative of its bilinear weight, times the unnormalisation's scale
    (zeros in mode 'nearest', which is flat in the grid)."""
    g, x, grid = np.asarray(g), np.asarray(x, np.float64), np.asarray(grid, np.float64)
    n_, c_, h, w = x.shape
    dgrid = np.zeros(grid.shape)
    if mode == "nearest":
        return dgrid.astype(g.dtype)
    sx, sy = ((w - 1) / 2, (h - 1) / 2) if align_corners else (w / 2, h / 2)
    for n in range(n_):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                gx, gy = grid[n, i, j]
                ix = (gx + 1) / 2 * (w - 1) if align_corners else ((gx + 1) * w - 1) / 2
                iy = (gy + 1) / 2 * (h - 1) if align_corners else ((gy + 1) * h - 1) / 2
                x0, y0 = int(np.floor(ix)), int(np.floor(iy))
                tx, ty = ix - x0, iy - y0
                for yy, xx, dwx, dwy in ((y0, x0, -(1 - ty), -(1 - tx)),
                                         (y0, x0 + 1, 1 - ty, -tx),
                                         (y0 + 1, x0, -ty, 1 - tx),
                                         (y0 + 1, x0 + 1, ty, tx)):
                    if 0 <= yy < h and 0 <= xx < w:
                        v = float(np.dot(x[n, :, yy, xx], g[n, :, i, j]))
                        dgrid[n, i, j, 0] += dwx * v * sx
                        dgrid[n, i, j, 1] += dwy * v * sy
    return dgrid.astype(g.dtype)
