"""``tf.data``'s file datasets: ``TextLineDataset`` (one string per line),
``TFRecordDataset`` (one string per record) and ``tf.data.experimental.CsvDataset`` (one
tuple of columns per CSV line). Their elements are ``tf.string`` scalars (arrays of bytes,
held on the host), which ``map`` functions turn into numbers with ``tf.decode_csv``,
``tf.parse_single_example`` or ``tf.decode_raw``.

>>> import os, tempfile
>>> import kernelgraph.compat.v1 as tf
>>> path = os.path.join(tempfile.mkdtemp(), "data.csv")
>>> _ = open(path, "w").write("x,y\\n1,2.5\\n3,4.5\\n")
>>> with tf.Graph().as_default():
...     ds = tf.data.TextLineDataset(path).skip(1).map(
...         lambda line: tf.decode_csv(line, record_defaults=[[0], [0.0]])).batch(2)
...     x, y = ds.make_one_shot_iterator().get_next()
...     with tf.Session() as sess:
...         print(sess.run([x, y]))
[array([1, 3], dtype=int32), array([2.5, 4.5], dtype=float32)]
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as D
from ...graph import Node
from .data import Dataset
from .parsing import decode_csv_op, default_of
from .readers import TextLineReader, TFRecordReader
from .records import as_str
from .structure import Spec


class _FileNames:
    """The file names a dataset reads: strings, or a string tensor (a placeholder fed when
    the iterator is initialised, as the "Importing Data" guide feeds them)."""

    def __init__(self, filenames, what):
        self.what = what
        self.node = None
        if isinstance(filenames, Node):
            if filenames.dtype is not D.string:
                raise TypeError(f"{what}: the file names must be strings, got a tensor of "
                                f"{filenames.dtype.name}")
            if filenames.op.name == "const":
                filenames = filenames.attrs["value"]
            else:
                self.node = filenames
        if self.node is None:
            self.names = self._names(filenames)

    def _names(self, value) -> list:
        names = np.asarray(value, dtype=object).reshape(-1).tolist()
        if not names:
            raise ValueError(f"{self.what}: no file names")
        return [as_str(n) for n in names]

    def inputs(self) -> list:
        return [] if self.node is None else [self.node]

    def __call__(self, env) -> list:
        return self.names if self.node is None else self._names(env[id(self.node)])


def _scalar(value: bytes) -> np.ndarray:
    return np.array(value, dtype=object)


class _Records(Dataset):
    """The records of each file in turn, as ``tf.string`` scalars."""

    def __init__(self, filenames, reader, what):
        self.files = _FileNames(filenames, what)
        self.reader = reader
        self._spec = Spec(D.string, ())

    def _inputs(self):
        return self.files.inputs()

    def _iterate(self, env):
        for name in self.files(env):
            for _, value in self.reader._records(name):
                yield _scalar(value)

    def __repr__(self):
        return f"<{type(self).__name__} shapes: (), types: tf.string>"


class TextLineDataset(_Records):
    """TF1's ``tf.data.TextLineDataset(filenames)``: each line of the files (without its
    line end), a string scalar."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        if compression_type not in (None, ""):
            raise NotImplementedError("TextLineDataset: compressed files are not supported")
        super().__init__(filenames, TextLineReader(), "TextLineDataset")


class TFRecordDataset(_Records):
    """TF1's ``tf.data.TFRecordDataset(filenames)``: each record of the TFRecord files (a
    serialized ``tf.train.Example``, usually), a string scalar."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        if compression_type not in (None, ""):
            raise NotImplementedError("TFRecordDataset: compressed files are not supported")
        super().__init__(filenames, TFRecordReader(), "TFRecordDataset")


class CsvDataset(Dataset):
    """TF1's ``tf.data.experimental.CsvDataset(filenames, record_defaults, header=False)``:
    a tuple of scalars per CSV line, one per column, of the dtype of its
    ``record_defaults`` entry (a dtype: the field is required; a one-value list: its
    default where the field is empty)."""

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header=False, field_delim=",", use_quote_delim=True, na_value="",
                 select_cols=None, exclude_cols=None):
        self.files = _FileNames(filenames, "CsvDataset")
        defaults = []
        for value in record_defaults:
            try:
                dtype = D.as_dtype(value)
            except (TypeError, ValueError, KeyError):
                dtype = None
            if isinstance(value, np.dtype | type) or (dtype is not None and
                                                      not isinstance(value, list | Node)):
                defaults.append((dtype, None))
            else:
                defaults.append(default_of(value))
        self.defaults = tuple(defaults)
        self.header = bool(header)
        self.attrs = {"defaults": self.defaults, "field_delim": str(field_delim),
                      "na_value": str(na_value),
                      "select_cols": None if select_cols is None else tuple(select_cols)}
        self._spec = tuple(Spec(dt, ()) for dt, _ in self.defaults)

    def _inputs(self):
        return self.files.inputs()

    def _iterate(self, env):
        lines = TextLineReader(skip_header_lines=1 if self.header else 0)
        for name in self.files(env):
            for _, line in lines._records(name):
                columns = decode_csv_op.forward(_scalar(line), **self.attrs).values
                yield tuple(np.asarray(c) for c in columns)


__all__ = ["CsvDataset", "TFRecordDataset", "TextLineDataset"]
