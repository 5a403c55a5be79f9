"""TF1's record files: ``tf.train.Example`` and its parts, TFRecord files
(``tf.python_io.TFRecordWriter`` / ``tf_record_iterator``) and ``tf.compat.as_bytes``.

``Example``, ``Features``, ``Feature``, ``BytesList``, ``FloatList``, ``Int64List`` (and the
``SequenceExample`` family) are real protobuf messages, built from a descriptor made here
with the names and field numbers of TF's ``example.proto`` and ``feature.proto``, so their
``SerializeToString()`` bytes are TF's and either side reads the other's.

A TFRecord file is a sequence of records, each ``length`` (uint64, little-endian), the
masked CRC-32C of those 8 bytes, the data, and the masked CRC-32C of the data: the format of
TensorBoard's event files, written here by TensorBoard's own ``RecordWriter``.

>>> import os, tempfile
>>> import kernelgraph.compat.v1 as tf
>>> ex = tf.train.Example(features=tf.train.Features(feature={
...     "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[3]))}))
>>> ex.SerializeToString()
b'\\n\\x10\\n\\x0e\\n\\x05label\\x12\\x05\\x1a\\x03\\n\\x01\\x03'
>>> path = os.path.join(tempfile.mkdtemp(), "a.tfrecord")
>>> with tf.python_io.TFRecordWriter(path) as writer:
...     writer.write(ex.SerializeToString())
>>> [tf.train.Example.FromString(r).features.feature["label"].int64_list.value[0]
...  for r in tf.python_io.tf_record_iterator(path)]
[3]
"""

from __future__ import annotations

import os
import struct
import types

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c
from tensorboard.summary.writer.record_writer import RecordWriter

from ...errors import DataLossError, NotFoundError

_F = descriptor_pb2.FieldDescriptorProto


def _file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    """TF's ``tensorflow/core/example/{feature,example}.proto`` in one file: the same
    package, message names, field names, numbers, types and packing."""
    proto = descriptor_pb2.FileDescriptorProto(name="kernelgraph/tensorflow_example.proto",
                                               package="tensorflow", syntax="proto3")

    def message(name, *fields, nested=()):
        m = proto.message_type.add(name=name)
        for fname, number, ftype, label, type_name, oneof in fields:
            f = m.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                f.type_name = type_name
            if oneof is not None:
                f.oneof_index = oneof
            if ftype in (_F.TYPE_FLOAT, _F.TYPE_INT64):
                f.options.packed = True  # [packed = true] in feature.proto
        for n in nested:
            m.nested_type.add().CopyFrom(n)
        return m

    rep, opt = _F.LABEL_REPEATED, _F.LABEL_OPTIONAL
    message("BytesList", ("value", 1, _F.TYPE_BYTES, rep, None, None))
    message("FloatList", ("value", 1, _F.TYPE_FLOAT, rep, None, None))
    message("Int64List", ("value", 1, _F.TYPE_INT64, rep, None, None))
    feature = message("Feature",
                      ("bytes_list", 1, _F.TYPE_MESSAGE, opt, ".tensorflow.BytesList", 0),
                      ("float_list", 2, _F.TYPE_MESSAGE, opt, ".tensorflow.FloatList", 0),
                      ("int64_list", 3, _F.TYPE_MESSAGE, opt, ".tensorflow.Int64List", 0))
    feature.oneof_decl.add(name="kind")

    def map_entry(name, value_type):
        entry = descriptor_pb2.DescriptorProto(name=name)
        entry.field.add(name="key", number=1, type=_F.TYPE_STRING, label=opt)
        entry.field.add(name="value", number=2, type=_F.TYPE_MESSAGE, label=opt,
                        type_name=value_type)
        entry.options.map_entry = True
        return entry

    message("Features", ("feature", 1, _F.TYPE_MESSAGE, rep, ".tensorflow.Features.FeatureEntry",
                         None), nested=[map_entry("FeatureEntry", ".tensorflow.Feature")])
    message("FeatureList", ("feature", 1, _F.TYPE_MESSAGE, rep, ".tensorflow.Feature", None))
    message("FeatureLists", ("feature_list", 1, _F.TYPE_MESSAGE, rep,
                             ".tensorflow.FeatureLists.FeatureListEntry", None),
            nested=[map_entry("FeatureListEntry", ".tensorflow.FeatureList")])
    message("Example", ("features", 1, _F.TYPE_MESSAGE, opt, ".tensorflow.Features", None))
    message("SequenceExample",
            ("context", 1, _F.TYPE_MESSAGE, opt, ".tensorflow.Features", None),
            ("feature_lists", 2, _F.TYPE_MESSAGE, opt, ".tensorflow.FeatureLists", None))
    return proto


# A pool of its own: the names are TF's ("tensorflow.Example"), which another library in the
# process may have put in the default pool.
_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file_descriptor())


def _message(name: str) -> type:
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"tensorflow.{name}"))


BytesList = _message("BytesList")
FloatList = _message("FloatList")
Int64List = _message("Int64List")
Feature = _message("Feature")
Features = _message("Features")
FeatureList = _message("FeatureList")
FeatureLists = _message("FeatureLists")
Example = _message("Example")
SequenceExample = _message("SequenceExample")


# -- TFRecord files ---------------------------------------------------------------------------
class TFRecordWriter:
    """TF1's ``tf.python_io.TFRecordWriter`` (``tf.io.TFRecordWriter``): ``write(record)``
    appends one record (bytes; text is written as UTF-8) to the file at ``path``; ``close``
    (or leaving a ``with`` block) finishes it. Only uncompressed files (``options=None``)."""

    def __init__(self, path, options=None):
        if options not in (None, "", 0):
            raise NotImplementedError("TFRecordWriter: compressed record files (options="
                                      f"{options!r}) are not supported; pass options=None")
        self._path = os.fspath(as_str(path))
        self._writer = RecordWriter(open(self._path, "wb"))  # noqa: SIM115 - closed by close()

    def write(self, record) -> None:
        if self._writer.closed:
            raise ValueError("TFRecordWriter: write() on a closed writer")
        self._writer.write(as_bytes(record))

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        if not self._writer.closed:
            self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_records(path):
    """The records (bytes) of the TFRecord file at ``path``, each checked against its CRCs."""
    path = os.fspath(as_str(path))
    if not os.path.exists(path):
        raise NotFoundError(f"{path}; No such file or directory")
    with open(path, "rb") as f:
        while True:
            header = f.read(12)
            if not header:
                return
            if len(header) < 12:
                raise DataLossError(f"truncated record at the end of {path}")
            length, crc = struct.unpack("<QI", header)
            if masked_crc32c(header[:8]) != crc:
                raise DataLossError(f"corrupted record in {path}: the length's checksum is "
                                    "wrong (is it a TFRecord file?)")
            data, footer = f.read(length), f.read(4)
            if len(data) < length or len(footer) < 4:
                raise DataLossError(f"truncated record at the end of {path}")
            if masked_crc32c(data) != struct.unpack("<I", footer)[0]:
                raise DataLossError(f"corrupted record in {path}: the data's checksum is wrong")
            yield data


def tf_record_iterator(path, options=None):
    """TF1's ``tf.python_io.tf_record_iterator``: the records of a TFRecord file, in order."""
    if options not in (None, "", 0):
        raise NotImplementedError("tf_record_iterator: compressed record files are not "
                                  "supported; pass options=None")
    return read_records(path)


# -- tf.compat ---------------------------------------------------------------------------------
def as_bytes(text, encoding: str = "utf-8") -> bytes:
    """TF's ``tf.compat.as_bytes``: bytes as they are, text encoded."""
    if isinstance(text, bytes | bytearray):
        return bytes(text)
    if isinstance(text, str):
        return text.encode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {text!r}")


def as_str(text, encoding: str = "utf-8") -> str:
    """TF's ``tf.compat.as_str`` (``as_text``): text as it is, bytes decoded."""
    if isinstance(text, str):
        return text
    if isinstance(text, bytes | bytearray):
        return bytes(text).decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {text!r}")


as_text = as_str

python_io = types.SimpleNamespace(TFRecordWriter=TFRecordWriter,
                                  tf_record_iterator=tf_record_iterator)
#: tf.train's protobuf names
TRAIN_NAMES = dict(Example=Example, Features=Features, Feature=Feature, BytesList=BytesList,
                   FloatList=FloatList, Int64List=Int64List, FeatureList=FeatureList,
                   FeatureLists=FeatureLists, SequenceExample=SequenceExample)

__all__ = ["TFRecordWriter", "tf_record_iterator", "as_bytes", "as_str", "as_text", "python_io",
           "Example", "Features", "Feature", "BytesList", "FloatList", "Int64List"]
