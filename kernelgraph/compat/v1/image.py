"""``tf.image``: TF1's image functions over graph tensors of images, (H, W, C) or a batch
(N, H, W, C), uint8 or float.

The resizes (``resize_bilinear``, ``resize_nearest_neighbor``, ``resize_images``,
``resize``) are the engine's ``resize`` op (kernelgraph/ops/resize.py) with TF1's legacy
sampling unless ``align_corners`` / ``half_pixel_centers`` say otherwise. Everything else
is a composition of existing ops, so it has gradients where TF1's has them. The colour
adjustments follow TF1's dtype handling: an integer image is converted to float32 in [0, 1]
(``convert_image_dtype``), adjusted, and converted back with saturation.

The random ones (``random_flip_left_right``, ``random_brightness`` ...) draw from
kernelgraph's generator, seeded by ``tf.set_random_seed`` and the op's ``seed`` as every
random op is: the same seeds give the same draws, but not TF's own numbers. The decoders
(``decode_jpeg`` ...) are in :mod:`.image_decode`.

>>> import numpy as np
>>> import kernelgraph.compat.v1 as tf
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [1, 2, 2, 1])
...     y = tf.image.resize_bilinear(x, [2, 4])
...     with tf.Session() as sess:
...         out = sess.run(y, {x: np.arange(4.0).reshape(1, 2, 2, 1)})
>>> out[0, :, :, 0].tolist()
[[0.0, 0.5, 1.0, 1.0], [2.0, 2.5, 3.0, 3.0]]
"""

from __future__ import annotations

import types

import numpy as np

from ... import dtypes as D
from ... import errors, ops
from ...graph import Node
from ...ops import shape_functions as SF
from ...ops.random import random_uniform as _random_uniform
from ...ops.resize import resize as _resize
from ...static.build import constant_node
from ...static.control_flow import random_uniform_like
from .image_decode import decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png


def _tensor(x) -> Node:
    return x if isinstance(x, Node) else constant_node(np.asarray(x))


def _rank(image, what, ranks=(3, 4)) -> int:
    if image.shape is None:
        raise ValueError("'images' contains no shape.")  # TF1's words
    if len(image.shape) not in ranks:
        raise ValueError(f"{what}: 'image' must have {' or '.join(map(str, ranks))} "
                         f"dimensions, got rank {len(image.shape)}")
    return len(image.shape)


def _batched(image, what):
    """(the images as a batch, a function that undoes the batching)."""
    if _rank(image, what) == 3:  # (a decoded image's height and width are known at run time)
        return SF.unsqueeze(image, 0), lambda y: SF.squeeze(y, 0)
    return image, lambda y: y


def _static_hw(size, what) -> tuple:
    if isinstance(size, Node):
        if size.op.name != "const":
            raise ValueError(f"{what}: the size must be known when the graph is built (a list "
                             f"or a constant), got the computed tensor '{size.name}'")
        size = size.attrs["value"]
    hw = [int(s) for s in np.asarray(size).reshape(-1)]
    if len(hw) != 2 or min(hw) <= 0:
        raise ValueError(f"{what}: size must be 2 positive integers [new_height, new_width], "
                         f"got {errors.shown(size)}")
    return tuple(hw)


def _known_hw(image, what) -> tuple:
    h, w = image.shape[-3], image.shape[-2]
    if h is None or w is None:
        raise ValueError(f"{what}: kernelgraph needs the image's height and width when the "
                         f"graph is built, got shape {image.shape}")
    return h, w


def _resized(images, size, mode, align_corners, half_pixel_centers, what, ranks=(4,)):
    images = _tensor(images)
    if _rank(images, what, ranks) and align_corners and half_pixel_centers:
        raise ValueError("If half_pixel_centers is True, align_corners must be False.")
    out = _resize(images, size=_static_hw(size, what), mode=mode,
                  align_corners=bool(align_corners), half_pixel=bool(half_pixel_centers))
    if mode == "bilinear":
        return ops.cast(out, dtype=D.float32)  # TF1's ResizeBilinear returns float32
    return out if out.dtype == images.dtype else ops.cast(out, dtype=images.dtype)


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """TF1's ``tf.image.resize_bilinear``: a batch (N, H, W, C) resized to ``size``, as
    float32; the legacy sampling unless ``align_corners`` or ``half_pixel_centers``."""
    return _resized(images, size, "bilinear", align_corners, half_pixel_centers,
                    "resize_bilinear")


def resize_nearest_neighbor(images, size, align_corners=False, name=None,
                            half_pixel_centers=False):
    """TF1's ``tf.image.resize_nearest_neighbor``: nearest sampling, the dtype kept."""
    return _resized(images, size, "nearest", align_corners, half_pixel_centers,
                    "resize_nearest_neighbor")


class ResizeMethod:
    """TF1's ``tf.image.ResizeMethod`` (only BILINEAR and NEAREST_NEIGHBOR are implemented)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_METHODS = {0: "bilinear", 1: "nearest", "bilinear": "bilinear", "nearest": "nearest"}


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False,
                  preserve_aspect_ratio=False, name=None):
    """TF1's ``tf.image.resize_images`` (and ``tf.image.resize``): one image (H, W, C) or a
    batch, to ``size``; float32 unless nearest (which keeps the dtype). An image already of
    that size is returned as it is, as TF1 does."""
    images = _tensor(images)
    if method not in _METHODS:
        raise NotImplementedError(f"tf.image.resize_images: method {errors.shown(method)} is "
                                  "not implemented in kernelgraph (BILINEAR and "
                                  "NEAREST_NEIGHBOR are)")
    if preserve_aspect_ratio:
        raise NotImplementedError("tf.image.resize_images: preserve_aspect_ratio=True is not "
                                  "implemented in kernelgraph")
    hw = _static_hw(size, "resize_images")
    _rank(images, "resize_images")
    if tuple(images.shape[-3:-1]) == hw:
        return images
    return _resized(images, hw, _METHODS[method], align_corners, False, "resize_images", (3, 4))


def resize_image_with_crop_or_pad(image, target_height, target_width):
    """TF1's ``tf.image.resize_image_with_crop_or_pad``: the centre cropped, or the image
    padded with zeros around it, to (target_height, target_width)."""
    image = _tensor(image)
    _rank(image, "resize_image_with_crop_or_pad")
    h, w = _known_hw(image, "resize_image_with_crop_or_pad")
    batch, back = _batched(image, "resize_image_with_crop_or_pad")
    th, tw = int(target_height), int(target_width)
    if th <= 0 or tw <= 0:
        raise ValueError("target_height and target_width must be > 0")
    top, left = max((h - th) // 2, 0), max((w - tw) // 2, 0)
    ch, cw = min(th, h), min(tw, w)
    cropped = batch[:, top:top + ch, left:left + cw, :] if (ch, cw) != (h, w) else batch
    pad_top, pad_left = max((th - h) // 2, 0), max((tw - w) // 2, 0)
    if (ch, cw) != (th, tw):
        cropped = ops.pad(cropped, paddings=((0, 0), (pad_top, th - ch - pad_top),
                                        (pad_left, tw - cw - pad_left), (0, 0)))
    return back(cropped)


# -- dtypes --------------------------------------------------------------------------------
def convert_image_dtype(image, dtype, saturate=False, name=None):
    """TF1's ``tf.image.convert_image_dtype``: integers scaled to [0, 1] as floats, floats
    to integers as ``trunc(x * (max + 0.5))`` (clamped first with ``saturate``)."""
    image = _tensor(image)
    dtype, src = D.as_dtype(dtype), D.as_dtype(image.dtype)
    if dtype == src:
        return image
    if src.kind in "iu" and dtype.kind == "f":
        return ops.mul(ops.cast(image, dtype=dtype), dtype.type(1.0 / np.iinfo(src).max))
    if src.kind == "f" and dtype.kind in "iu":
        top = np.iinfo(dtype).max
        scaled = ops.mul(image, src.type(top + 0.5))
        if saturate:
            scaled = ops.clip(scaled, min=float(np.iinfo(dtype).min), max=float(top))
        return ops.cast(scaled, dtype=dtype)
    if src.kind == "f" and dtype.kind == "f":
        return ops.cast(image, dtype=dtype)
    raise NotImplementedError(f"convert_image_dtype from {src.name} to {dtype.name} is not "
                              "implemented in kernelgraph (float <-> integer and float <-> "
                              "float are)")


def _as_float(image):
    image = _tensor(image)
    if D.as_dtype(image.dtype) == D.float32:
        return image
    return convert_image_dtype(image, D.float32)


def adjust_brightness(image, delta):
    """TF1's ``tf.image.adjust_brightness``: ``delta`` added to the image as floats in
    [0, 1] (integer images converted there and back, saturating)."""
    image = _tensor(image)
    adjusted = ops.add(_as_float(image), ops.cast(_tensor(delta), dtype=D.float32))
    return convert_image_dtype(adjusted, image.dtype, saturate=True)


def adjust_contrast(images, contrast_factor):
    """TF1's ``tf.image.adjust_contrast``: each channel's values moved away from (or toward)
    the channel's mean over the image by ``contrast_factor``."""
    images = _tensor(images)
    _rank(images, "adjust_contrast")
    x = _as_float(images)
    mean = ops.mean(x, axis=(-3, -2), keepdims=True)
    factor = ops.cast(_tensor(contrast_factor), dtype=D.float32)
    adjusted = ops.add(ops.mul(ops.sub(x, mean), factor), mean)
    return convert_image_dtype(adjusted, images.dtype, saturate=True)


def per_image_standardization(image):
    """TF1's ``tf.image.per_image_standardization``: each image scaled to mean 0 and
    standard deviation 1 (at least ``1 / sqrt(pixels)``), as float32."""
    image = _tensor(image)
    _rank(image, "per_image_standardization")
    x = ops.cast(image, dtype=D.float32)
    axes = (-3, -2, -1)
    mean = ops.mean(x, axis=axes, keepdims=True)
    centred = ops.sub(x, mean)
    std = ops.sqrt(ops.mean(ops.mul(centred, centred), axis=axes, keepdims=True))
    # the pixels counted at run time: a decoded image's size is known only then
    pixels = ops.sum(ops.ones_like(x), axis=axes, keepdims=True)
    floor = ops.div(1.0, ops.sqrt(pixels))
    return ops.div(centred, ops.maximum(std, floor))


def rgb_to_grayscale(images, name=None):
    """TF1's ``tf.image.rgb_to_grayscale``: ``0.2989 R + 0.5870 G + 0.1140 B``, one channel,
    in the images' dtype."""
    images = _tensor(images)
    weights = np.array([0.2989, 0.5870, 0.1140], np.float32)
    gray = ops.sum(ops.mul(_as_float(images), weights), axis=-1, keepdims=True)
    return convert_image_dtype(gray, images.dtype)


# -- hue and saturation: TF's AdjustHue / AdjustSaturation kernels, as compositions --------
def _channels(x):
    if x.shape is None or x.shape[-1] != 3:
        raise ValueError(f"the last dimension of the image must be 3 (RGB), got shape "
                         f"{None if x.shape is None else x.shape}")
    pick = [(slice(None),) * (len(x.shape) - 1) + (k,) for k in range(3)]
    return [x[p] for p in pick]


def _to_hsv(x):
    """(h in [0, 1), s, v) as TF's kernels compute them (not rgb_to_hsv's op)."""
    r, g, b = _channels(x)
    v = ops.maximum(ops.maximum(r, g), b)
    span = ops.sub(v, ops.minimum(ops.minimum(r, g), b))
    some = ops.greater(span, 0.0)
    s = ops.where(ops.greater(v, 0.0), ops.div(span, ops.where(ops.greater(v, 0.0), v, 1.0)),
                  0.0)
    norm = ops.div(1.0, ops.mul(6.0, ops.where(some, span, 1.0)))
    h = ops.where(ops.equal(r, v), ops.mul(norm, ops.sub(g, b)),
                  ops.where(ops.equal(g, v), ops.add(ops.mul(norm, ops.sub(b, r)), 2.0 / 6.0),
                            ops.add(ops.mul(norm, ops.sub(r, g)), 4.0 / 6.0)))
    h = ops.where(some, h, 0.0)
    return ops.where(ops.less(h, 0.0), ops.add(h, 1.0), h), s, v


def _from_hsv(h, s, v):
    c = ops.mul(s, v)
    m = ops.sub(v, c)
    dh = ops.mul(h, 6.0)
    sector = ops.floor(dh)
    half = ops.sub(dh, ops.mul(ops.floor(ops.mul(dh, 0.5)), 2.0))  # dh mod 2
    x = ops.mul(c, ops.sub(1.0, ops.abs(ops.sub(half, 1.0))))
    zero = ops.zeros_like(c)
    table = [(c, x, zero), (x, c, zero), (zero, c, x), (zero, x, c), (x, zero, c), (c, zero, x)]
    rgb = []
    for k in range(3):
        out = zero  # TF's default: a sector outside 0..5 (NaN) gives black
        for sec in range(5, -1, -1):
            out = ops.where(ops.equal(sector, float(sec)), table[sec][k], out)
        rgb.append(ops.add(out, m))
    return ops.stack(rgb, axis=-1)


def adjust_hue(image, delta, name=None):
    """TF1's ``tf.image.adjust_hue``: the hue turned by ``delta`` (a fraction of the colour
    circle, in [-1, 1]) in TF's HSV, for RGB images (float, or integers converted there and
    back)."""
    image = _tensor(image)
    h, s, v = _to_hsv(_as_float(image))
    h = ops.add(h, ops.cast(_tensor(delta), dtype=D.float32))
    h = ops.sub(h, ops.floor(h))  # fmod(h, 1), then + 1 where negative: h mod 1
    return convert_image_dtype(_from_hsv(h, s, v), image.dtype)


def adjust_saturation(image, saturation_factor, name=None):
    """TF1's ``tf.image.adjust_saturation``: the saturation multiplied by
    ``saturation_factor`` (clipped to [0, 1]) in TF's HSV, for RGB images."""
    image = _tensor(image)
    h, s, v = _to_hsv(_as_float(image))
    s = ops.clip(ops.mul(s, ops.cast(_tensor(saturation_factor), dtype=D.float32)),
                 min=0.0, max=1.0)
    return convert_image_dtype(_from_hsv(h, s, v), image.dtype)


def random_hue(image, max_delta, seed=None):
    """TF1's ``tf.image.random_hue``: ``adjust_hue`` by a delta drawn from
    [-max_delta, max_delta) (max_delta at most 0.5), a new draw each run."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, _random_uniform((), low=-max_delta, high=max_delta, seed=seed))


def random_saturation(image, lower, upper, seed=None):
    """TF1's ``tf.image.random_saturation``: ``adjust_saturation`` by a factor drawn from
    [lower, upper), a new draw each run."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_saturation(image, _random_uniform((), low=lower, high=upper, seed=seed))


# -- flips and random adjustments ----------------------------------------------------------
def flip_left_right(image):
    """TF1's ``tf.image.flip_left_right``: the width axis reversed."""
    image = _tensor(image)
    return SF.flip(image, _rank(image, "flip_left_right") - 2)


def flip_up_down(image):
    """TF1's ``tf.image.flip_up_down``: the height axis reversed."""
    image = _tensor(image)
    return SF.flip(image, _rank(image, "flip_up_down") - 3)


def _kept(out, image):
    # where() computes a uint8 image in int64; the result is the image's dtype again
    return out if out.dtype == image.dtype else ops.cast(out, dtype=image.dtype)


def _random_flip(image, seed, axis_from_end, what):
    image = _tensor(image)
    rank = _rank(image, what)
    flipped = SF.flip(image, rank - axis_from_end)
    if rank == 3:  # one draw: the whole image flipped when it is under 0.5
        u = _random_uniform((), seed=seed)
        return _kept(ops.where(ops.less(u, 0.5), flipped, image), image)
    # a batch: each image on its own draw, flipped when it rounds to 1
    u = random_uniform_like(ops.cast(image[:, :1, :1, :1], dtype=D.float32), seed=seed)
    return _kept(ops.where(ops.greater_equal(u, 0.5), flipped, image), image)


def random_flip_left_right(image, seed=None):
    """TF1's ``tf.image.random_flip_left_right``: flipped left to right with probability
    1/2 (each image of a batch on its own draw), a new draw each run."""
    return _random_flip(image, seed, 2, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """TF1's ``tf.image.random_flip_up_down``: flipped upside down with probability 1/2."""
    return _random_flip(image, seed, 3, "random_flip_up_down")


def random_brightness(image, max_delta, seed=None):
    """TF1's ``tf.image.random_brightness``: ``adjust_brightness`` by a delta drawn from
    [-max_delta, max_delta), a new draw each run."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = _random_uniform((), low=-max_delta, high=max_delta, seed=seed)
    return adjust_brightness(image, delta)


def random_contrast(image, lower, upper, seed=None):
    """TF1's ``tf.image.random_contrast``: ``adjust_contrast`` by a factor drawn from
    [lower, upper), a new draw each run."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    factor = _random_uniform((), low=lower, high=upper, seed=seed)
    return adjust_contrast(image, factor)


image = types.SimpleNamespace(
    resize_bilinear=resize_bilinear, resize_nearest_neighbor=resize_nearest_neighbor,
    resize_images=resize_images, resize=resize_images, ResizeMethod=ResizeMethod,
    resize_image_with_crop_or_pad=resize_image_with_crop_or_pad,
    convert_image_dtype=convert_image_dtype, adjust_brightness=adjust_brightness,
    adjust_contrast=adjust_contrast, per_image_standardization=per_image_standardization,
    rgb_to_grayscale=rgb_to_grayscale, flip_left_right=flip_left_right,
    flip_up_down=flip_up_down, random_flip_left_right=random_flip_left_right,
    random_flip_up_down=random_flip_up_down, random_brightness=random_brightness,
    random_contrast=random_contrast, adjust_hue=adjust_hue,
    adjust_saturation=adjust_saturation, random_hue=random_hue,
    random_saturation=random_saturation, decode_jpeg=decode_jpeg, decode_png=decode_png,
    decode_image=decode_image, decode_bmp=decode_bmp, decode_gif=decode_gif,
)
"""The ``tf.image`` namespace."""

__all__ = ["image"]
