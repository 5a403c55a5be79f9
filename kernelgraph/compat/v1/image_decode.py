"""TF1's image decoders, ``tf.image.decode_jpeg``, ``decode_png``, ``decode_bmp``,
``decode_gif`` and ``decode_image``: a string tensor holding a file's bytes (what
``tf.read_file`` gives) becomes a uint8 image (H, W, C).

They are one host op, ``decode_image``: it runs on the CPU whatever the device scope (its
input is bytes, which no device array holds), and it decodes with Pillow, restricted to the
four formats TF1 reads. Its value depends on the bytes fed each run, so it is never folded.
Pillow's JPEG decoder uses libjpeg's accurate integer inverse DCT: it gives TF's bytes for
``dct_method="INTEGER_ACCURATE"``; TF's default (``""``, libjpeg's fast one) differs from it
by a few levels (up to 3 on the tests' image). PNG, BMP and GIF are lossless and decode to
the same bytes, except grayscale made from colour (``channels=1``), which may differ by a
level (libpng's weights against Pillow's).

``channels`` is TF's: 0 keeps the file's channels, 1 gives grayscale, 3 RGB, 4 RGBA.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image, UnidentifiedImageError

from ... import dtypes as D
from ... import errors, ops
from ...devices import device
from ...graph import Node
from ...ops.registry import define
from ...static.build import constant_node

# TF's decoders share one kernel: decode_jpeg reads a PNG too, and decode_png a JPEG.
_STILL = ("JPEG", "PNG", "BMP")
_FORMATS = {"jpeg": _STILL, "png": _STILL, "bmp": _STILL, "gif": ("GIF",),
            "any": (*_STILL, "GIF"), "first": (*_STILL, "GIF")}
_MODES = {1: "L", 3: "RGB", 4: "RGBA"}


def _bytes(contents) -> bytes:
    value = contents.item() if isinstance(contents, np.ndarray) else contents
    if isinstance(value, str):
        value = value.encode("latin-1")
    if not isinstance(value, bytes | bytearray):
        raise errors.InvalidArgumentError(
            None, None, f"decode_image: contents must be a scalar string (the file's bytes), "
                        f"got {errors.shown(contents)}")
    return bytes(value)


def _decode(contents, *, channels, kind):
    data = _bytes(contents)
    try:
        img = Image.open(io.BytesIO(data), formats=_FORMATS[kind])
        frames = []
        for k in range(getattr(img, "n_frames", 1) if kind in ("gif", "any") else 1):
            img.seek(k)
            frames.append(_pixels(img, channels))
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError,
            SyntaxError) as e:
        wanted = ", ".join(_FORMATS[kind])
        raise errors.InvalidArgumentError(
            None, None, f"Unknown image file format or a damaged file: {wanted} required "
                        f"({e})") from None
    if img.format == "GIF" and kind != "first":  # TF1 gives GIFs as (frames, H, W, 3)
        return np.stack(frames)
    return frames[0]


def _pixels(img, channels) -> np.ndarray:
    if channels == 0:
        mode = {"L": "L", "LA": "LA", "RGBA": "RGBA", "P": "RGB"}.get(img.mode, "RGB")
        if img.format == "GIF":
            mode = "RGB"
    else:
        mode = _MODES[channels]
    if img.mode == "P" and "transparency" in img.info and mode in ("RGB", "L"):
        img = img.convert("RGBA")
    if img.format == "JPEG" and mode == "L":
        img.draft("L", img.size)  # the decoder's own grayscale (the Y plane), as TF's
    out = np.asarray(img.convert(mode) if img.mode != mode else img, dtype=np.uint8)
    return out[..., None] if out.ndim == 2 else out


def _infer(shapes_, dtypes, attrs):
    if shapes_[0] not in (None, ()):
        raise ValueError(f"decode_image: contents must be a scalar string, got shape "
                         f"{shapes_[0]}")
    channels = attrs["channels"] or None
    if attrs["kind"] == "gif":
        return (None, None, None, 3), D.uint8
    if attrs["kind"] == "any":
        return None, D.uint8  # a GIF gives 4 dims, the others 3
    return (None, None, channels), D.uint8


# "stateful" keeps the compiler from folding it (its input is bytes, which no constant of a
# folded graph holds); "host_only": a device plan runs it on the host.
decode_image_op = define(
    "decode_image", _decode, _infer, traits=("stateful", "host_only"), inputs=1,
    doc="A uint8 image (H, W, C) decoded from a file's bytes with Pillow (JPEG, PNG, BMP; a "
        "GIF gives (frames, H, W, 3)); channels 0 keeps the file's, else 1, 3 or 4.")


def _op(contents, channels, kind, what) -> Node:
    if channels not in (0, 1, 3, 4):
        raise ValueError(f"{what}: channels must be 0, 1, 3 or 4, got {errors.shown(channels)}")
    with device("cpu"):  # a host op: its image is made on the host, whatever the scope
        if not isinstance(contents, Node):
            contents = constant_node(np.array(_bytes(contents), dtype=object), dtype=D.string)
        return decode_image_op(contents, channels=int(channels), kind=kind)


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True,
                try_recover_truncated=False, acceptable_fraction=1, dct_method="", name=None):
    """TF1's ``tf.image.decode_jpeg``: a JPEG file's bytes -> uint8 (H, W, C) (CPU only;
    Pillow's accurate inverse DCT: TF's bytes with ``dct_method="INTEGER_ACCURATE"``, a few
    levels apart from TF's default fast one)."""
    if ratio != 1:
        raise NotImplementedError("decode_jpeg: ratio (downscaling while decoding) is not "
                                  "implemented in kernelgraph")
    return _op(contents, channels, "jpeg", "decode_jpeg")


def decode_png(contents, channels=0, dtype=D.uint8, name=None):
    """TF1's ``tf.image.decode_png``: a PNG file's bytes -> uint8 (H, W, C) (CPU only)."""
    if D.as_dtype(dtype) != D.uint8:
        raise NotImplementedError("decode_png: only dtype=tf.uint8 is implemented in "
                                  "kernelgraph")
    return _op(contents, channels, "png", "decode_png")


def decode_bmp(contents, channels=0, name=None):
    """TF1's ``tf.image.decode_bmp``: a BMP file's bytes -> uint8 (H, W, C) (CPU only)."""
    return _op(contents, channels, "bmp", "decode_bmp")


def decode_gif(contents, name=None):
    """TF1's ``tf.image.decode_gif``: a GIF's frames -> uint8 (frames, H, W, 3) (CPU only)."""
    return _op(contents, 0, "gif", "decode_gif")


def decode_image(contents, channels=None, dtype=D.uint8, name=None, expand_animations=True):
    """TF1's ``tf.image.decode_image``: JPEG, PNG, BMP or GIF bytes -> uint8 (H, W, C) (a GIF:
    (frames, H, W, 3), so the rank is unknown when the graph is built, as in TF1; with
    ``expand_animations=False`` a GIF's first frame, and rank 3); ``dtype=tf.float32``
    scales to [0, 1] (CPU only)."""
    out = _op(contents, channels or 0, "any" if expand_animations else "first",
              "decode_image")
    dtype = D.as_dtype(dtype)
    if dtype == D.uint8:
        return out
    if dtype.kind != "f":
        raise NotImplementedError(f"decode_image: dtype {dtype.name} is not implemented in "
                                  "kernelgraph (uint8 and floats are)")
    return ops.mul(ops.cast(out, dtype=dtype), dtype.type(1.0 / 255))


__all__ = ["decode_bmp", "decode_gif", "decode_image", "decode_image_op", "decode_jpeg",
           "decode_png"]
