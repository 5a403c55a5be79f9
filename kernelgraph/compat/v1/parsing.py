"""TF1's ops on text and records: ``tf.decode_csv``, ``tf.decode_raw``,
``tf.string_to_number``, ``tf.parse_single_example`` (with ``tf.FixedLenFeature``) and
``tf.read_file``.

They take or make ``tf.string`` tensors (NumPy arrays of ``bytes``), so they are host ops
of the TF1 face, run on the CPU whatever the device scope: kernelgraph has no string
kernels on a GPU. Like the summary ops they are ``stateful`` so that the compiler never
folds one (a string is nothing a constant node of a device plan holds), and ``read_file``
reads the file at each run. Ops with several outputs (``decode_csv``,
``parse_single_example``) are one node whose value is a tuple, with one ``output`` node per
item, as a ``tf.cond``'s.

>>> import kernelgraph.compat.v1 as tf
>>> with tf.Graph().as_default():
...     a, b = tf.decode_csv(tf.constant(["1,2.5", "3,"]), record_defaults=[[0], [-1.0]])
...     with tf.Session() as sess:
...         print(sess.run([a, b]))
[array([1, 3], dtype=int32), array([ 2.5, -1. ], dtype=float32)]
"""

from __future__ import annotations

import csv

import numpy as np

from ... import dtypes as D
from ...devices import device
from ...errors import InvalidArgumentError, NotFoundError
from ...graph import Node, user_location
from ...ops.control import OBJECT, Results
from ...ops.registry import FRONTENDS, define
from ...static.control_flow.tracing import tuple_outputs
from . import records
from .tensors import constant

# Host ops of strings: never folded (see the module docstring), made on the host.
_TRAITS = ("stateful", "host_only")


def _strings(x) -> np.ndarray:
    arr = np.asarray(x, dtype=object)
    return arr


def _tuple_infer(shapes_, dtypes, attrs):
    return None, OBJECT


def _tensor(x, dtype=None) -> Node:
    return x if isinstance(x, Node) else constant(x, dtype=dtype)


def _node(op, inputs, attrs, name):
    with device("cpu"):  # a host op: made on the CPU whatever the device scope
        return FRONTENDS[Node](op, tuple(inputs), {**attrs, "name": name})


def _tuple_node(op, inputs, attrs, name, shapes, dtypes_):
    node = _node(op, inputs, attrs, name)
    return tuple_outputs(node, shapes, dtypes_, user_location(3))


# -- decode_csv ---------------------------------------------------------------------------------
def _convert_field(text: str, dtype, what):
    try:
        if dtype is D.string:
            return text.encode("utf-8")
        if dtype.kind in "iu":
            return int(text)
        return float(text)
    except ValueError:
        raise InvalidArgumentError(f"Field {what} in record is not a valid "
                                   f"{D.as_dtype(dtype).name}: {text}") from None


def _decode_csv_forward(records_, *, defaults, field_delim, na_value, select_cols):
    arr = _strings(records_)
    columns = [np.empty(arr.shape, dtype=dt) for dt, _ in defaults]
    wanted = len(defaults)
    for index, record in np.ndenumerate(arr):
        line = record.decode("utf-8") if isinstance(record, bytes) else str(record)
        fields = next(csv.reader([line], delimiter=field_delim, strict=True), [""])
        if select_cols is not None:
            if len(fields) <= max(select_cols):
                raise InvalidArgumentError(f"Expect {max(select_cols) + 1} fields but have "
                                           f"{len(fields)} in record {line!r}")
            fields = [fields[c] for c in select_cols]
        if len(fields) != wanted:
            raise InvalidArgumentError(f"Expect {wanted} fields but have {len(fields)} in "
                                       f"record {line!r}")
        for k, (text, (dt, default)) in enumerate(zip(fields, defaults)):
            if text == "" or (na_value and text == na_value):
                if default is None:
                    raise InvalidArgumentError(f"Field {k} is required but missing in record "
                                               f"{line!r}")
                columns[k][index] = default
            else:
                columns[k][index] = _convert_field(text, dt, k)
    return Results(columns)


decode_csv_op = define(
    "decode_csv", _decode_csv_forward, _tuple_infer, None, traits=_TRAITS, inputs=1,
    doc="The columns of CSV records (a tuple, one array per column; tf.decode_csv).")


def default_of(value):
    """(dtype, default or None) of one ``record_defaults`` entry: a one-element list or
    tensor (its dtype), or an empty one (the field is required)."""
    if isinstance(value, list | tuple) and len(value) == 1 and isinstance(value[0], Node):
        value = value[0]  # [tf.constant(0, tf.int64)]
    if isinstance(value, Node):
        if value.op.name != "const":
            raise TypeError("decode_csv: record_defaults must be constants (lists or "
                            f"tf.constant), got the tensor '{value.name}'")
        arr, dtype = np.asarray(value.attrs["value"]), value.dtype
    else:
        const = constant(value)
        arr, dtype = np.asarray(const.attrs["value"]), const.dtype
    if dtype not in (D.float32, D.float64, D.int32, D.int64, D.string):
        raise TypeError(f"decode_csv: a record default of dtype {dtype.name}; TF1 takes "
                        "float32, float64, int32, int64 or string")
    if arr.size > 1:
        raise ValueError(f"decode_csv: each record default holds one value or none, got "
                         f"{arr.size}")
    return dtype, (arr.reshape(-1)[0] if arr.size else None)


def decode_csv(records_, record_defaults, field_delim=",", use_quote_delim=True,
               name=None, na_value="", select_cols=None):
    """TF1's ``tf.decode_csv``: one tensor per column of the CSV ``records``, shaped like
    them, of the dtype of its ``record_defaults`` entry (an empty entry: the field is
    required), an empty field taking its default."""
    records_ = _tensor(records_, D.string)
    if records_.dtype is not D.string:
        raise TypeError(f"decode_csv needs a string tensor of records, got "
                        f"{records_.dtype.name}")
    defaults = tuple(default_of(v) for v in record_defaults)
    if select_cols is not None:
        select_cols = tuple(int(c) for c in select_cols)
        if len(select_cols) != len(defaults):
            raise ValueError("decode_csv: select_cols and record_defaults must have the same "
                             "length")
    attrs = {"defaults": defaults, "field_delim": str(field_delim), "na_value": str(na_value),
             "select_cols": select_cols}
    return _tuple_node(decode_csv_op, [records_], attrs, name or "DecodeCSV",
                       [records_.shape] * len(defaults), [dt for dt, _ in defaults])


# -- decode_raw, string_to_number, read_file -------------------------------------------------
def _decode_raw_forward(raw, *, out_type, little_endian):
    arr = _strings(raw)
    dtype = np.dtype(out_type).newbyteorder("<" if little_endian else ">")
    rows = [np.frombuffer(bytes(b), dtype=dtype) if len(b) % dtype.itemsize == 0 else None
            for b in arr.reshape(-1)]
    if any(r is None for r in rows):
        raise InvalidArgumentError(f"Input to DecodeRaw has length that is not a multiple of "
                                   f"{dtype.itemsize}, the size of {np.dtype(out_type).name}")
    sizes = {len(r) for r in rows}
    if len(sizes) > 1:
        raise InvalidArgumentError("DecodeRaw requires input strings to all be the same size, "
                                   f"got sizes {sorted(sizes)}")
    width = sizes.pop() if sizes else 0
    out = np.array(rows, dtype=np.dtype(out_type)).reshape(arr.shape + (width,))
    return out


def _decode_raw_infer(shapes_, dtypes, attrs):
    shape = None if shapes_[0] is None else tuple(shapes_[0]) + (None,)
    return shape, np.dtype(attrs["out_type"])


decode_raw_op = define(
    "decode_raw", _decode_raw_forward, _decode_raw_infer, None, traits=_TRAITS, inputs=1,
    doc="The bytes of each string read as numbers of out_type (tf.decode_raw).")


def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):
    """TF1's ``tf.decode_raw``: each string's bytes read as a vector of ``out_type``
    (all strings of one length); the result has one more dimension, of unknown size."""
    value = input_bytes if input_bytes is not None else bytes
    value = _tensor(value, D.string)
    out_type = D.as_dtype(out_type)
    if out_type is D.string or out_type.kind not in "iuf":
        raise TypeError(f"decode_raw: out_type must be a numeric dtype, got {out_type.name}")
    return _node(decode_raw_op, [value], {"out_type": out_type,
                                          "little_endian": bool(little_endian)},
                 name or "DecodeRaw")


def _string_to_number_forward(text, *, out_type):
    arr = _strings(text)
    out = np.empty(arr.shape, dtype=out_type)
    for index, s in np.ndenumerate(arr):
        s = s.decode("utf-8") if isinstance(s, bytes) else str(s)
        try:
            out[index] = int(s) if np.dtype(out_type).kind in "iu" else float(s)
        except ValueError:
            raise InvalidArgumentError(f"StringToNumberOp could not correctly convert "
                                       f"string: {s}") from None
    return out


string_to_number_op = define(
    "string_to_number", _string_to_number_forward,
    lambda s, d, a: (s[0], np.dtype(a["out_type"])), None, traits=_TRAITS, inputs=1,
    doc="Numbers parsed from strings (tf.string_to_number).")


def string_to_number(string_tensor, out_type=D.float32, name=None):
    """TF1's ``tf.string_to_number``: each string parsed as a number of ``out_type``."""
    out_type = D.as_dtype(out_type)
    if out_type not in (D.float32, D.float64, D.int32, D.int64):
        raise TypeError(f"string_to_number: out_type must be float32, float64, int32 or "
                        f"int64, got {out_type.name}")
    return _node(string_to_number_op, [_tensor(string_tensor, D.string)],
                 {"out_type": out_type}, name or "StringToNumber")


def _read_file_forward(filename):
    path = records.as_str(np.asarray(filename, dtype=object).reshape(()).item())
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory") from None


read_file_op = define(
    "read_file", _read_file_forward, lambda s, d, a: ((), D.string), None, traits=_TRAITS,
    inputs=1, doc="The bytes of the file a string scalar names, read at each run.")


def read_file(filename, name=None):
    """TF1's ``tf.read_file`` (``tf.io.read_file``): the contents of a file, as a string
    scalar, read at each run."""
    return _node(read_file_op, [_tensor(filename, D.string)], {}, name or "ReadFile")


# -- parse_single_example ----------------------------------------------------------------------
class FixedLenFeature:
    """TF1's ``tf.FixedLenFeature(shape, dtype, default_value=None)``: a feature of exactly
    ``prod(shape)`` values, parsed to a tensor of that shape (``default_value`` where the
    Example lacks it; none: the feature is required)."""

    def __init__(self, shape, dtype, default_value=None):
        self.shape = tuple(int(d) for d in (shape if shape is not None else ()))
        self.dtype = D.as_dtype(dtype)
        if self.dtype not in (D.float32, D.int64, D.string):
            raise ValueError(f"FixedLenFeature: dtype must be tf.float32, tf.int64 or "
                             f"tf.string (an Example's kinds), got {self.dtype.name}")
        self.default_value = default_value

    def _default(self):
        if self.default_value is None:
            return None
        if self.dtype is D.string:
            value = D.to_bytes(self.default_value)
        else:
            value = np.asarray(self.default_value, dtype=self.dtype)
        return np.broadcast_to(value, self.shape).copy()

    def __repr__(self):
        return (f"FixedLenFeature(shape={list(self.shape)}, dtype={self.dtype.name}, "
                f"default_value={self.default_value!r})")


_KINDS = {D.float32: "float_list", D.int64: "int64_list", D.string: "bytes_list"}


def _parse_forward(serialized, *, features):
    data = np.asarray(serialized, dtype=object).reshape(()).item()
    example = records.Example()
    try:
        example.ParseFromString(records.as_bytes(data))
    except Exception:  # noqa: BLE001 - the protobuf library's own error types vary
        raise InvalidArgumentError("Could not parse example input, value: "
                                   f"{data[:40]!r}") from None
    present = example.features.feature
    out = []
    for key, spec in features:
        if key not in present:
            default = spec._default()
            if default is None:
                raise InvalidArgumentError(f"Feature: {key} (data type: {spec.dtype.name}) "
                                           "is required but could not be found.")
            out.append(default)
            continue
        feature = present[key]
        kind = feature.WhichOneof("kind")
        if kind != _KINDS[spec.dtype]:
            raise InvalidArgumentError(f"Name: <unknown>, Feature: {key}.  Data types don't "
                                       f"match. Expected type: {spec.dtype.name}, Actual "
                                       f"type: {kind}")
        values = list(getattr(feature, kind).value)
        size = int(np.prod(spec.shape))
        if len(values) != size:
            raise InvalidArgumentError(f"Name: <unknown>, Key: {key}, Index: 0.  Number of "
                                       f"values != expected.  values size: {len(values)} "
                                       f"but output shape: {list(spec.shape)}")
        arr = np.empty(len(values), dtype=object) if spec.dtype is D.string else None
        if arr is not None:
            arr[:] = values
        else:
            arr = np.asarray(values, dtype=spec.dtype)
        out.append(arr.reshape(spec.shape))
    return Results(out)


parse_single_example_op = define(
    "parse_single_example", _parse_forward, _tuple_infer, None, traits=_TRAITS, inputs=1,
    doc="The features of one serialized tf.train.Example (a tuple; tf.parse_single_example).")


def parse_single_example(serialized, features, name=None, example_names=None):
    """TF1's ``tf.parse_single_example``: a dict of the ``features`` (names to
    :class:`FixedLenFeature`) of one serialized ``tf.train.Example``."""
    serialized = _tensor(serialized, D.string)
    if not isinstance(features, dict) or not features:
        raise ValueError("parse_single_example: features must be a non-empty dict of names "
                         "to tf.FixedLenFeature")
    for key, spec in features.items():
        if not isinstance(spec, FixedLenFeature):
            raise NotImplementedError(
                f"parse_single_example: feature {key!r} is a {type(spec).__name__}; "
                "kernelgraph parses tf.FixedLenFeature only (no SparseTensor)")
    keys = sorted(features)
    specs = tuple((k, features[k]) for k in keys)
    outs = _tuple_node(parse_single_example_op, [serialized], {"features": specs},
                       name or "ParseSingleExample", [features[k].shape for k in keys],
                       [features[k].dtype for k in keys])
    return dict(zip(keys, outs))


INPUT_OPS = ("decode_csv", "decode_raw", "string_to_number", "read_file",
             "parse_single_example")

__all__ = ["FixedLenFeature", "decode_csv", "decode_raw", "parse_single_example", "read_file",
           "string_to_number"]
