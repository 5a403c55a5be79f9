"""CUDA kernels of image resizing, with the CPU kernels' signatures
(:mod:`kernelgraph.kernels.resize`): the same sampling tables (made on the host, copied to
the device), the same per-element bodies compiled for the device. The forward runs one
thread per output element; the gradient one thread per (n, c) plane, adding in the CPU's
order, so both give the CPU's bits without atomics."""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import resize as K
from . import core, launcher

_bilinear_value = cuda.jit(device=True)(K._bilinear_value)
_plane_backward = cuda.jit(device=True)(K._plane_backward)


@cuda.jit
def _forward(x, out, ylo, yhi, yfrac, xlo, xhi, xfrac, nearest, nchw):
    if nchw:
        n_, c_, oh, ow = out.shape[0], out.shape[1], out.shape[2], out.shape[3]
    else:
        n_, c_, oh, ow = out.shape[0], out.shape[3], out.shape[1], out.shape[2]
    start, step = cuda.grid(1), cuda.gridsize(1)
    for q in range(start, n_ * c_ * oh * ow, step):
        # q walks the output in memory order, so neighbouring threads write neighbours
        if nchw:
            j, i, c, n = q % ow, (q // ow) % oh, (q // (ow * oh)) % c_, q // (ow * oh * c_)
        else:
            c, j, i, n = q % c_, (q // c_) % ow, (q // (c_ * ow)) % oh, q // (c_ * ow * oh)
        if nearest:
            if nchw:
                out[n, c, i, j] = x[n, c, ylo[i], xlo[j]]
            else:
                out[n, i, j, c] = x[n, ylo[i], xlo[j], c]
        else:
            v = _bilinear_value(x, n, c, ylo[i], yhi[i], yfrac[i], xlo[j], xhi[j], xfrac[j],
                                nchw)
            if nchw:
                out[n, c, i, j] = v
            else:
                out[n, i, j, c] = v


@cuda.jit
def _backward(g, dx, ylo, yhi, yfrac, xlo, xhi, xfrac, nearest, nchw):
    c_ = dx.shape[1] if nchw else dx.shape[3]
    start, step = cuda.grid(1), cuda.gridsize(1)
    for p in range(start, dx.shape[0] * c_, step):
        _plane_backward(g, dx, p // c_, p % c_, ylo, yhi, yfrac, xlo, xhi, xfrac, nearest,
                        nchw)


def _shape(a) -> tuple:
    # Plain tuples: the simulator's shapes refuse negative indices, unlike real ones.
    return tuple(int(s) for s in np.shape(a))


def _device_tables(in_hw, size, mode, align_corners, half_pixel, scales, dtype):
    return [core.to_device(t) for t in
            K.tables(in_hw, size, mode, align_corners, half_pixel, scales, dtype)]


def resize(x, size, mode, align_corners, half_pixel, scales, nchw, out_dtype):
    """``x`` resized to ``size`` (H, W), into a new device array of ``out_dtype``."""
    out = core.empty(K.out_shape(_shape(x), size, nchw), out_dtype)
    if out.size:
        t = _device_tables(K.hw(_shape(x), nchw), size, mode, align_corners, half_pixel,
                           scales, out_dtype)
        blocks, threads = core.launch(out.size)
        launcher.launch(_forward, blocks, threads, x, out, *t, mode == "nearest", nchw)
    return out


def resize_backward(g, x_shape, mode, align_corners, half_pixel, scales, nchw):
    """The gradient of :func:`resize` with respect to its input (of shape ``x_shape``)."""
    x_shape = tuple(int(s) for s in x_shape)
    dx = core.full(x_shape, 0, g.dtype)
    if g.size and dx.size:
        t = _device_tables(K.hw(x_shape, nchw), K.hw(_shape(g), nchw), mode, align_corners,
                           half_pixel, scales, g.dtype)
        planes = x_shape[0] * (x_shape[1] if nchw else x_shape[3])
        blocks, threads = core.launch(planes)
        launcher.launch(_backward, blocks, threads, g, dx, *t, mode == "nearest", nchw)
    return dx
