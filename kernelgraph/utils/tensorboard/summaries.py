"""TensorBoard's Summary protobufs, computed as the real frameworks compute them.

Each function returns a ``Summary`` message of the ``tensorboard`` package
(``tensorboard.compat.proto.summary_pb2``): TF1's summary ops serialize it (``tf.summary``,
:mod:`kernelgraph.compat.v1.summary`), PyTorch's ``SummaryWriter`` writes it
(:mod:`.writer`). Where the two frameworks differ, both are here: TF1's histogram op
(:func:`tf_histogram`, its C++ ``Histogram`` class) and PyTorch's (:func:`torch_histogram`,
NumPy's ``histogram`` over the same bucket limits, trimmed to the non-empty range).

>>> s = scalar("loss", 0.5)
>>> s.value[0].tag, s.value[0].simple_value
('loss', 0.5)
>>> h = tf_histogram("w", [0.0, 0.5, 0.5])
>>> list(h.value[0].histo.bucket), h.value[0].histo.num  # [0, 1e-12): 1, the two 0.5s
([0.0, 1.0, 0.0, 2.0, 0.0], 3.0)
"""

from __future__ import annotations

import functools
import struct
import zlib

import numpy as np

from ...errors import InvalidArgumentError


@functools.cache
def protos():
    """TensorBoard's protobuf modules (imported on first use: protobuf takes a moment)."""
    from tensorboard.compat.proto import (
        event_pb2,
        graph_pb2,
        summary_pb2,
        tensor_pb2,
        tensor_shape_pb2,
        types_pb2,
    )
    return type("Protos", (), {"event": event_pb2, "graph": graph_pb2, "summary": summary_pb2,
                               "tensor": tensor_pb2, "shape": tensor_shape_pb2,
                               "types": types_pb2})


def _value(tag: str, **fields):
    pb = protos().summary
    return pb.Summary(value=[pb.Summary.Value(tag=tag, **fields)])


def scalar(tag: str, value) -> object:
    """A scalar summary: ``simple_value`` holds the value as a float32. PyTorch's
    ``add_scalar`` takes any one-element tensor."""
    arr = np.asarray(value)
    if arr.size != 1:
        raise ValueError(f"add_scalar takes one value, got a tensor of shape {arr.shape} "
                         f"(tag '{tag}')")
    return _value(tag, simple_value=float(np.float32(arr.reshape(()))))


def tf_scalar(tag: str, value) -> object:
    """TF1's ``tf.summary.scalar`` value: as :func:`scalar`, of a tensor of shape () only."""
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise errors_invalid(f"tags and values are not the same shape: [] != "
                             f"[{','.join(str(d) for d in arr.shape)}] (tag '{tag}')")
    return scalar(tag, arr)


@functools.cache
def default_bucket_limits() -> np.ndarray:
    """TF1's default histogram bucket limits: +-1e-12 growing by 10 % up to 1e20, zero,
    and +-DBL_MAX at the ends (``tensorflow/core/lib/histogram/histogram.cc``)."""
    v, pos = 1.0e-12, []
    while v < 1.0e20:
        pos.append(v)
        v *= 1.1
    big = np.finfo(np.float64).max
    return np.array([-big, *(-p for p in reversed(pos)), 0.0, *pos, big])


def _histogram_proto(values: np.ndarray, limits, counts):
    return protos().summary.HistogramProto(
        min=float(values.min()), max=float(values.max()), num=float(values.size),
        sum=float(values.sum()), sum_squares=float(values.dot(values)),
        bucket_limit=[float(x) for x in limits], bucket=[float(c) for c in counts])


def tf_histogram(tag: str, values) -> object:
    """TF1's ``tf.summary.histogram`` value: every value counted in the bucket whose limit
    is the first above it; runs of empty buckets merged into one (the run's last limit)."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if not np.isfinite(values).all():
        raise errors_invalid("Nan in summary histogram for: " + tag if np.isnan(values).any()
                             else "Infinity in Histogram for: " + tag)
    limits = default_bucket_limits()
    counts = np.bincount(np.searchsorted(limits, values, side="right"),
                         minlength=len(limits))[:len(limits)]
    out_limits, out_counts, i = [], [], 0
    while i < len(limits):
        end, count = limits[i], counts[i]
        i += 1
        if count <= 0:
            while i < len(limits) and counts[i] <= 0:
                end, count = limits[i], counts[i]
                i += 1
        out_limits.append(end)
        out_counts.append(count)
    if values.size == 0:
        return _value(tag, histo=protos().summary.HistogramProto(
            min=float(np.finfo(np.float64).max), max=-float(np.finfo(np.float64).max),
            bucket_limit=out_limits, bucket=out_counts))
    return _value(tag, histo=_histogram_proto(values, out_limits, out_counts))


def torch_histogram(tag: str, values, bins="tensorflow") -> object:
    """PyTorch's ``SummaryWriter.add_histogram`` value: ``np.histogram`` over TF's bucket
    limits (``bins='tensorflow'``) or ``bins`` (NumPy's), trimmed to the non-empty range
    with one empty bucket on its left."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    if isinstance(bins, str) and bins == "tensorflow":
        bins = default_bucket_limits()[1:-1]
    counts, limits = np.histogram(values, bins=bins)
    cum = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum, [0, cum[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    return _value(tag, histo=_histogram_proto(values, limits, counts))


def errors_invalid(message: str) -> InvalidArgumentError:
    """A value a summary op refuses: TF1's InvalidArgumentError (a ValueError)."""
    return InvalidArgumentError(None, None, message)


# -- images ------------------------------------------------------------------------------------
def _png(pixels: np.ndarray) -> bytes:
    """``pixels`` (H, W, C) uint8 as a PNG file: 8-bit grey, grey+alpha, RGB or RGBA."""
    h, w, c = pixels.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    raw = b"".join(b"\x00" + pixels[row].tobytes() for row in range(h))  # filter 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def tf_image_pixels(image: np.ndarray) -> np.ndarray:
    """One image (H, W, C) as TF1's image summary makes it uint8: uint8 as it is; floats
    scaled by 255 / max when none is negative, else by 127 / max|v| around 128 (truncated),
    computed in float32; a pixel with a non-finite channel drawn red."""
    if image.dtype == np.uint8:
        return image
    values = image.astype(np.float32)
    finite = np.isfinite(values).all(axis=-1)
    seen = values[finite]
    lo = float(seen.min()) if seen.size else np.inf
    hi = float(seen.max()) if seen.size else -np.inf
    if lo < 0:
        top = max(abs(lo), abs(hi))
        scale, offset = np.float32(0.0 if top < 1e-6 else 127.0 / top), np.float32(128.0)
    else:
        scale, offset = np.float32(0.0 if hi < 1e-6 else 255.0 / hi), np.float32(0.0)
    out = np.zeros(values.shape, np.uint8)
    out[finite] = (values[finite] * scale + offset).astype(np.uint8)
    bad = np.zeros(values.shape[-1], np.uint8)
    bad[0] = 255
    if values.shape[-1] == 4:
        bad[3] = 255
    out[~finite] = bad
    return out


def image_value(tag: str, pixels: np.ndarray):
    """A Summary.Value holding ``pixels`` (H, W, C uint8) as a PNG."""
    pb = protos().summary
    h, w, c = pixels.shape
    return pb.Summary.Value(tag=tag, image=pb.Summary.Image(
        height=h, width=w, colorspace=c, encoded_image_string=_png(np.ascontiguousarray(pixels))))


def tf_images(tag: str, images, max_outputs: int = 3) -> object:
    """TF1's ``tf.summary.image`` value: up to ``max_outputs`` images of a [N, H, W, C] batch
    (C 1, 3 or 4), each normalised on its own (:func:`tf_image_pixels`); tagged
    '<tag>/image' when ``max_outputs`` is 1, else '<tag>/image/<i>'."""
    images = np.asarray(images)
    if images.ndim != 4 or images.shape[-1] not in (1, 3, 4):
        raise errors_invalid("Tensor must be 4-D with last dim 1, 3, or 4, not "
                             f"[{','.join(str(d) for d in images.shape)}]")
    pb = protos().summary
    names = ([f"{tag}/image"] if max_outputs == 1 else
             [f"{tag}/image/{i}" for i in range(max_outputs)])
    return pb.Summary(value=[image_value(names[i], tf_image_pixels(images[i]))
                             for i in range(min(max_outputs, len(images)))])


# -- text --------------------------------------------------------------------------------------
def text(tag: str, value) -> object:
    """A text summary: a string tensor read by TensorBoard's text plugin (markdown)."""
    p = protos()
    arr = np.asarray(value, dtype=object)
    strings = [s.encode() if isinstance(s, str) else bytes(s) for s in arr.reshape(-1)]
    shape = p.shape.TensorShapeProto(dim=[p.shape.TensorShapeProto.Dim(size=d)
                                          for d in arr.shape])
    tensor = p.tensor.TensorProto(dtype=p.types.DT_STRING, tensor_shape=shape,
                                  string_val=strings)
    metadata = p.summary.SummaryMetadata(
        plugin_data=p.summary.SummaryMetadata.PluginData(plugin_name="text"))
    return _value(tag, tensor=tensor, metadata=metadata)


def merge(serialized) -> object:
    """One Summary holding the values of several (serialized) ones, in order."""
    pb = protos().summary
    out = pb.Summary()
    for s in serialized:
        out.MergeFromString(bytes(s))
    return out
