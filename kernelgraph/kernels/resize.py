"""numba CPU kernels of image resizing (``resize`` and its gradient, kernelgraph/ops/resize.py),
the NumPy reference, and the sampling tables both share with the CUDA kernels
(:mod:`kernelgraph.kernels.cuda.resize`).

Resizing is separable: output row ``i`` reads input rows ``lo[i]`` and ``hi[i]``, mixed by
``frac[i]`` (bilinear), or row ``lo[i]`` alone (nearest); the same for columns. So the
sampling rule -- the part where TF1's legacy ``resize_bilinear``, TF2's ``tf.image.resize``
and PyTorch's ``F.interpolate`` differ -- is only in :func:`source_tables`, and one kernel
per mode serves all of them, in either layout (``nchw``: (N, C, H, W), else (N, H, W, C)).

The gradient is the transposed sampling: each output's gradient added back to the inputs it
read, with the same weights. Planes (n, c) are independent, so a plane is one serial loop on
the CPU and one thread on a GPU, adding in the same order: the two give the same bits.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MODES = ("nearest", "bilinear")


def source_tables(in_size: int, out_size: int, mode: str, align_corners: bool,
                  half_pixel: bool, scale: float | None = None, dtype=np.float32):
    """``(lo, hi, frac)``: for each output index along one axis, the input indices it reads
    and the weight of ``hi`` (zero for nearest), computed in ``dtype`` arithmetic as the
    frameworks do (float32 for float32 images).

    The input-per-output ratio is ``(in - 1) / (out - 1)`` with ``align_corners`` (corner
    pixels' centres line up), else ``1 / scale`` where a scale factor is given (PyTorch's
    ``scale_factor``), else ``in / out``. The source coordinate of output ``i`` is
    ``(i + 0.5) * ratio - 0.5`` with ``half_pixel`` (pixel centres line up: TF2, PyTorch's
    default), else ``i * ratio`` (TF1's legacy rule). Nearest takes ``floor`` of
    ``i * ratio`` (legacy; ``round`` with ``align_corners``, as TF1) or of
    ``(i + 0.5) * ratio`` (half pixel: TF2's nearest, PyTorch's "nearest-exact").

    >>> lo, hi, frac = source_tables(4, 2, "bilinear", False, False)
    >>> lo.tolist(), hi.tolist(), frac.tolist()
    ([0, 2], [1, 3], [0.0, 0.0])
    >>> source_tables(2, 4, "bilinear", False, True)[2].tolist()
    [0.0, 0.25, 0.75, 0.25]
    """
    if mode not in MODES:
        raise ValueError(f"resize: mode must be one of {MODES}, got {mode!r}")
    t = np.dtype(dtype).type
    if align_corners and out_size > 1:
        ratio = t(in_size - 1) / t(out_size - 1)
    elif scale is not None and scale > 0:
        ratio = t(1.0) / t(scale)
    else:
        ratio = t(in_size) / t(out_size)
    i = np.arange(out_size).astype(t)
    last = in_size - 1
    if mode == "nearest":
        if half_pixel:
            src = np.floor((i + t(0.5)) * ratio)
        elif align_corners:
            src = np.floor(i * ratio + t(0.5))  # roundf: the products are never negative
        else:
            src = np.floor(i * ratio)
        lo = np.clip(src.astype(np.int64), 0, last)
        return lo, lo.copy(), np.zeros(out_size)
    src = (i + t(0.5)) * ratio - t(0.5) if half_pixel else i * ratio
    src = np.maximum(src, t(0.0))
    lo = np.minimum(np.floor(src).astype(np.int64), last)
    hi = np.minimum(lo + 1, last)
    frac = (src - lo.astype(t)).astype(np.float64)
    return lo, hi, frac


# -- the per-element bodies, compiled for the CPU here and for CUDA devices there ------------
# (each self-contained, so that one Python body compiles for both)
def _bilinear_value(x, n, c, y0, y1, fy, x0, x1, fx, nchw):
    if nchw:
        a00, a01 = float(x[n, c, y0, x0]), float(x[n, c, y0, x1])
        a10, a11 = float(x[n, c, y1, x0]), float(x[n, c, y1, x1])
    else:
        a00, a01 = float(x[n, y0, x0, c]), float(x[n, y0, x1, c])
        a10, a11 = float(x[n, y1, x0, c]), float(x[n, y1, x1, c])
    return (1.0 - fy) * ((1.0 - fx) * a00 + fx * a01) + fy * ((1.0 - fx) * a10 + fx * a11)


def _plane_backward(g, dx, n, c, ylo, yhi, yfrac, xlo, xhi, xfrac, nearest, nchw):
    """Every output's gradient of plane (n, c) added back to the inputs it read."""
    oh, ow = ylo.shape[0], xlo.shape[0]
    for i in range(oh):
        y0, y1, fy = ylo[i], yhi[i], yfrac[i]
        for j in range(ow):
            v = g[n, c, i, j] if nchw else g[n, i, j, c]
            x0, x1, fx = xlo[j], xhi[j], xfrac[j]
            if nearest:
                if nchw:
                    dx[n, c, y0, x0] += v
                else:
                    dx[n, y0, x0, c] += v
            elif nchw:
                dx[n, c, y0, x0] += v * ((1.0 - fy) * (1.0 - fx))
                dx[n, c, y0, x1] += v * ((1.0 - fy) * fx)
                dx[n, c, y1, x0] += v * (fy * (1.0 - fx))
                dx[n, c, y1, x1] += v * (fy * fx)
            else:
                dx[n, y0, x0, c] += v * ((1.0 - fy) * (1.0 - fx))
                dx[n, y0, x1, c] += v * ((1.0 - fy) * fx)
                dx[n, y1, x0, c] += v * (fy * (1.0 - fx))
                dx[n, y1, x1, c] += v * (fy * fx)


bilinear_value = njit(cache=True)(_bilinear_value)
plane_backward = njit(cache=True)(_plane_backward)


@njit(cache=True)
def _dims(a, nchw):
    """(N, C, H, W) of ``a`` in either layout."""
    if nchw:
        return a.shape[0], a.shape[1], a.shape[2], a.shape[3]
    return a.shape[0], a.shape[3], a.shape[1], a.shape[2]


@njit(cache=True)
def _forward(x, out, ylo, yhi, yfrac, xlo, xhi, xfrac, nearest, nchw):
    n_, c_, oh, ow = _dims(out, nchw)
    for n in range(n_):
        for c in range(c_):
            for i in range(oh):
                for j in range(ow):
                    if nearest:
                        if nchw:
                            out[n, c, i, j] = x[n, c, ylo[i], xlo[j]]
                        else:
                            out[n, i, j, c] = x[n, ylo[i], xlo[j], c]
                    else:
                        v = bilinear_value(x, n, c, ylo[i], yhi[i], yfrac[i], xlo[j], xhi[j],
                                           xfrac[j], nchw)
                        if nchw:
                            out[n, c, i, j] = v
                        else:
                            out[n, i, j, c] = v


@njit(cache=True)
def _backward(g, dx, ylo, yhi, yfrac, xlo, xhi, xfrac, nearest, nchw):
    n_, c_, _, _ = _dims(dx, nchw)
    for n in range(n_):
        for c in range(c_):
            plane_backward(g, dx, n, c, ylo, yhi, yfrac, xlo, xhi, xfrac, nearest, nchw)


def out_shape(x_shape, size, nchw: bool) -> tuple:
    """The output's shape: ``x_shape`` with H and W replaced by ``size``."""
    if nchw:
        return (x_shape[0], x_shape[1], size[0], size[1])
    return (x_shape[0], size[0], size[1], x_shape[3])


def hw(shape, nchw: bool) -> tuple:
    """(H, W) of a shape in either layout."""
    return (shape[2], shape[3]) if nchw else (shape[1], shape[2])


def tables(in_hw, size, mode, align_corners, half_pixel, scales, dtype) -> tuple:
    """The row and column tables, six arrays: ylo, yhi, yfrac, xlo, xhi, xfrac."""
    scales = scales or (None, None)
    t = np.float64 if np.dtype(dtype) == np.float64 else np.float32
    return (*source_tables(in_hw[0], size[0], mode, align_corners, half_pixel, scales[0], t),
            *source_tables(in_hw[1], size[1], mode, align_corners, half_pixel, scales[1], t))


def resize(x, size, mode, align_corners, half_pixel, scales, nchw, out_dtype):
    """``x`` resized to ``size`` (H, W), into a new array of ``out_dtype`` (the op has checked
    the shapes and chosen the dtype)."""
    out = np.empty(out_shape(x.shape, size, nchw), out_dtype)
    if out.size:
        t = tables(hw(x.shape, nchw), size, mode, align_corners, half_pixel, scales, out_dtype)
        _forward(x, out, *t, mode == "nearest", nchw)
    return out


def resize_backward(g, x_shape, mode, align_corners, half_pixel, scales, nchw):
    """The gradient of :func:`resize` with respect to its input (of shape ``x_shape``)."""
    dx = np.zeros(tuple(x_shape), g.dtype)
    if g.size and dx.size:
        t = tables(hw(x_shape, nchw), hw(g.shape, nchw), mode, align_corners, half_pixel,
                   scales, g.dtype)
        _backward(g, dx, *t, mode == "nearest", nchw)
    return dx


# -- the NumPy reference ---------------------------------------------------------------------
def _as_nchw(a, nchw):
    return a if nchw else np.moveaxis(a, 3, 1)


def reference_resize(x, size=None, mode="bilinear", align_corners=False, half_pixel=False,
                     scales=None, layout="NHWC"):
    """The NumPy oracle of ``resize``: fancy indexing by the tables, weights multiplied out
    (bilinear results in float64, cast to the op's dtype by the caller's comparison)."""
    nchw = layout == "NCHW"
    if np.ndim(x) == 3:  # one image
        return reference_resize(np.asarray(x)[None], size, mode, align_corners, half_pixel,
                                scales, layout)[0]
    xs = _as_nchw(np.asarray(x), nchw)
    ylo, yhi, fy, xlo, xhi, fx = tables(xs.shape[2:], size, mode, align_corners, half_pixel,
                                        scales, np.float64)
    if mode == "nearest":
        out = xs[:, :, ylo][:, :, :, xlo]
    else:
        xs = xs.astype(np.float64)
        fy, fx = fy[:, None], fx[None, :]
        rows0, rows1 = xs[:, :, ylo], xs[:, :, yhi]
        out = ((1 - fy) * ((1 - fx) * rows0[..., xlo] + fx * rows0[..., xhi])
               + fy * ((1 - fx) * rows1[..., xlo] + fx * rows1[..., xhi]))
    return out if nchw else np.moveaxis(out, 1, 3)


def reference_resize_backward(g, like, size=None, mode="bilinear", align_corners=False,
                              half_pixel=False, scales=None, layout="NHWC"):
    """The NumPy oracle of ``resize_backward`` (``np.add.at`` scatters)."""
    nchw = layout == "NCHW"
    if np.ndim(g) == 3:  # one image
        return reference_resize_backward(np.asarray(g)[None], np.asarray(like)[None], size,
                                         mode, align_corners, half_pixel, scales, layout)[0]
    gs = _as_nchw(np.asarray(g, np.float64), nchw)
    shape = _as_nchw(np.empty(np.shape(like)), nchw).shape
    ylo, yhi, fy, xlo, xhi, fx = tables(shape[2:], gs.shape[2:], mode, align_corners,
                                        half_pixel, scales, np.float64)
    dx = np.zeros(shape)
    if mode == "nearest":
        fy, fx = np.zeros_like(fy), np.zeros_like(fx)
    for (ys, wy) in ((ylo, 1 - fy), (yhi, fy)):
        for (xs, wx) in ((xlo, 1 - fx), (xhi, fx)):
            w = wy[:, None] * wx[None, :]
            yy, xx = np.meshgrid(ys, xs, indexing="ij")
            np.add.at(dx, (slice(None), slice(None), yy, xx), gs * w)
    return dx if nchw else np.moveaxis(dx, 1, 3)


__all__ = ["MODES", "hw", "out_shape", "reference_resize", "reference_resize_backward",
           "resize", "resize_backward", "source_tables", "tables"]
