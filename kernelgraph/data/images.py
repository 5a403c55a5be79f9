"""Synthetic images of simple shapes, at any size: a square, a disk or a cross.

Shapes are drawn in coordinates relative to the image (position and scale as fractions of
the side), so the same ``seed`` draws the same scene at every size: a CNN with global
pooling trained on 16×16 images can be evaluated on the very same scenes at 100×100.
"""

from __future__ import annotations

import numpy as np

CLASSES = ("square", "circle", "cross")


def shapes_images(n: int, size: int = 16, noise: float = 0.1, seed: int | None = 0
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``n`` grey images ``(X, y)``: X float32 (n, 1, size, size), y int64 in ``0..2``
    (:data:`CLASSES`: filled square, filled circle, cross).

    Each shape has a random centre and a random half-width of 15-35 % of the side, so the
    class depends on the shape, not on its size or place; Gaussian pixel noise of std
    ``noise`` is added (values are about 0 background, 1 shape).

    >>> import kernelgraph as kg
    >>> X, y = kg.data.shapes_images(6, size=16, seed=1)
    >>> X.shape, X.dtype, y.dtype
    ((6, 1, 16, 16), dtype('float32'), dtype('int64'))
    >>> X100, y100 = kg.data.shapes_images(6, size=100, seed=1)
    >>> X100.shape, bool((y100 == y).all())     # the same scenes, larger
    ((6, 1, 100, 100), True)
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if size < 4:
        raise ValueError(f"size must be >= 4 pixels, got {size}")
    rng = np.random.default_rng(seed)
    # Scene parameters first, pixel noise last: the scenes do not depend on the size.
    y = rng.integers(0, len(CLASSES), size=n)
    half = rng.uniform(0.15, 0.35, size=n)
    cx = rng.uniform(half, 1.0 - half)
    cy = rng.uniform(half, 1.0 - half)
    # The cross's arms are a third of its half-width thick, but at least one pixel wide.
    arm = np.maximum(half / 3.0, 0.5 / size)

    coords = (np.arange(size) + 0.5) / size  # pixel centres in [0, 1]
    dx = np.abs(coords[None, None, :] - cx[:, None, None])  # (n, 1, W)
    dy = np.abs(coords[None, :, None] - cy[:, None, None])  # (n, H, 1)
    h, a = half[:, None, None], arm[:, None, None]
    square = (dx <= h) & (dy <= h)
    circle = dx * dx + dy * dy <= h * h
    cross = ((dx <= h) & (dy <= a)) | ((dx <= a) & (dy <= h))
    kind = y[:, None, None]
    X = np.where(kind == 0, square, np.where(kind == 1, circle, cross)).astype(np.float32)
    if noise:
        X += (noise * rng.standard_normal(X.shape)).astype(np.float32)
    return X[:, None], y.astype(np.int64)
