"""TF1's readers, input producers and batching: the queue-based input pipeline.

``tf.train.string_input_producer(files, num_epochs, shuffle)`` is a FIFOQueue of file names
filled by a QueueRunner, ``num_epochs`` times (counted in a local variable, so
``tf.local_variables_initializer()`` must run first, as in TF; then OutOfRangeError closes
the queue). A reader's ``read(queue)`` is a graph op whose every run gives the next
``(key, value)`` record, taking the next file name from the queue when a file is done:
``tf.TextLineReader`` (lines), ``tf.TFRecordReader`` (records), ``tf.WholeFileReader``
(whole files) and ``tf.FixedLengthRecordReader`` (fixed-size records). ``tf.train.batch``
and ``tf.train.shuffle_batch`` put each element into a queue (a FIFOQueue, a
RandomShuffleQueue) filled by a QueueRunner, and give ``batch_size`` of them per run.

>>> import os, tempfile
>>> import kernelgraph.compat.v1 as tf
>>> path = os.path.join(tempfile.mkdtemp(), "data.csv")
>>> _ = open(path, "w").write("x,y\\n1,2.5\\n3,4.5\\n5,6.5\\n")
>>> with tf.Graph().as_default():
...     files = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
...     key, line = tf.TextLineReader(skip_header_lines=1).read(files)
...     x, y = tf.decode_csv(line, record_defaults=[[0], [0.0]])
...     xs, ys = tf.train.batch([x, y], batch_size=2)
...     with tf.Session() as sess:
...         sess.run(tf.local_variables_initializer())
...         coord = tf.train.Coordinator()
...         threads = tf.train.start_queue_runners(sess=sess, coord=coord)
...         print(sess.run([xs, ys]))
...         coord.request_stop()
...         coord.join(threads)
[array([1, 3], dtype=int32), array([2.5, 4.5], dtype=float32)]
"""

from __future__ import annotations

import glob
import os
import weakref

import numpy as np

from ... import dtypes as D
from ...devices import device
from ...errors import NotFoundError, OutOfRangeError
from ...graph import Node, name_scope, user_location
from ...ops.control import OBJECT, Results
from ...ops.registry import FRONTENDS, define
from ...static.control_flow.tracing import tuple_outputs
from .graph_collections import GraphKeys
from .queues import FIFOQueue, QueueBase, QueueRunner, RandomShuffleQueue, add_queue_runner
from .queues import _session_key as session_key
from .records import as_str, read_records
from .spellings import gather
from .tensor_shape import TensorShape
from .tensors import Variable, constant

_TRAITS = ("stateful", "host_only")


# -- readers ----------------------------------------------------------------------------------
def _read_forward(*, spec, queue, count):
    keys, values = spec._read(queue, count)
    if count is None:
        return Results([keys[0], values[0]])
    return Results([_bytes_array(keys), _bytes_array(values)])


def _bytes_array(items):
    arr = np.empty(len(items), dtype=object)
    arr[:] = items
    return arr


reader_read_op = define(
    "reader_read", _read_forward, lambda s, d, a: (None, OBJECT), None, traits=_TRAITS,
    doc="The next (key, value) record of a reader (count of them: read_up_to), taking file "
        "names from a queue.")


class _ReaderState:
    def __init__(self):
        self.records = None  # the records of the file being read: (key, value) pairs
        self.produced = 0
        self.files_done = 0


class ReaderBase:
    """What TF1's readers share: ``read(queue)`` and ``read_up_to(queue, n)`` (graph ops),
    kept per Session; subclasses say what records a file holds (:meth:`_records`)."""

    _default_name = "Reader"

    def __init__(self, name=None):
        self._name = name or self._default_name
        self._states: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def _records(self, filename: str):
        raise NotImplementedError

    def _state(self) -> _ReaderState:
        key = session_key()
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = _ReaderState()
        return state

    def _read(self, queue, count):
        state = self._state()
        keys, values = [], []
        want = 1 if count is None else count
        while len(keys) < want:
            if state.records is None:
                try:
                    (name,) = queue._take(None, False)
                except Exception:
                    if keys and count is not None:
                        break  # read_up_to: what was read before the names ran out
                    raise
                filename = as_str(np.asarray(name, dtype=object).item())
                if not os.path.exists(filename):
                    raise NotFoundError(f"{filename}; No such file or directory")
                state.records = iter(self._records(filename))
            try:
                key, value = next(state.records)
            except StopIteration:
                state.records = None
                state.files_done += 1
                continue
            keys.append(key)
            values.append(value)
            state.produced += 1
        return keys, values

    def _node(self, queue, count, name):
        if not isinstance(queue, QueueBase):
            raise TypeError(f"{type(self).__name__}.read needs a queue of file names (what "
                            f"tf.train.string_input_producer returns), got {queue!r}")
        with device("cpu"):
            node = FRONTENDS[Node](reader_read_op, (), {"spec": self, "queue": queue,
                                                        "count": count,
                                                        "name": name or "ReaderReadV2"})
        shape = () if count is None else (None,)
        return tuple(tuple_outputs(node, [shape, shape], [D.string, D.string],
                                   user_location(3)))

    def read(self, queue, name=None):
        """``(key, value)``: string scalars, the next record at each run."""
        return self._node(queue, None, name)

    def read_up_to(self, queue, num_records, name=None):
        """``(keys, values)``: up to ``num_records`` records at each run."""
        return self._node(queue, int(num_records), name or "ReaderReadUpToV2")

    def num_records_produced(self, name=None):
        raise NotImplementedError("reader.num_records_produced() is not implemented")

    def reset(self, name=None):
        raise NotImplementedError("reader.reset() is not implemented; make a new reader")

    @property
    def supports_serialize(self) -> bool:
        return False

    def __repr__(self):
        return f"<tf.{type(self).__name__}>"


class TextLineReader(ReaderBase):
    """TF1's ``tf.TextLineReader(skip_header_lines=None)``: one record per line (without its
    line end); the key is ``b'<file>:<line number>'``."""

    _default_name = "TextLineReaderV2"

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(name)
        self._skip = int(skip_header_lines or 0)

    def _records(self, filename):
        with open(filename, "rb") as f:
            lines = f.read().split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for number, line in enumerate(lines, start=1):
            if number > self._skip:
                yield f"{filename}:{number}".encode(), line.rstrip(b"\r")


class TFRecordReader(ReaderBase):
    """TF1's ``tf.TFRecordReader()``: one record per TFRecord of each file; the key is
    ``b'<file>:<offset of the record>'``."""

    _default_name = "TFRecordReaderV2"

    def __init__(self, name=None, options=None):
        if options not in (None, "", 0):
            raise NotImplementedError("TFRecordReader: compressed record files are not "
                                      "supported; pass options=None")
        super().__init__(name)

    def _records(self, filename):
        offset = 0
        for data in read_records(filename):
            yield f"{filename}:{offset}".encode(), data
            offset += len(data) + 16


class WholeFileReader(ReaderBase):
    """TF1's ``tf.WholeFileReader()``: one record per file, its whole contents; the key is
    the file name."""

    _default_name = "WholeFileReaderV2"

    def _records(self, filename):
        with open(filename, "rb") as f:
            yield filename.encode(), f.read()


class FixedLengthRecordReader(ReaderBase):
    """TF1's ``tf.FixedLengthRecordReader(record_bytes, header_bytes, footer_bytes,
    hop_bytes)``: records of ``record_bytes`` bytes between a header and a footer (CIFAR's
    binary files); the key is ``b'<file>:<record number>'``."""

    _default_name = "FixedLengthRecordReaderV2"

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        super().__init__(name)
        if encoding not in (None, ""):
            raise NotImplementedError("FixedLengthRecordReader: compressed files are not "
                                      "supported; pass encoding=None")
        self._record, self._header = int(record_bytes), int(header_bytes or 0)
        self._footer, self._hop = int(footer_bytes or 0), int(hop_bytes or 0)
        if self._record <= 0:
            raise ValueError(f"record_bytes must be > 0, got {self._record}")

    def _records(self, filename):
        with open(filename, "rb") as f:
            data = f.read()
        body = data[self._header:len(data) - self._footer]
        step = self._hop or self._record
        for number, start in enumerate(range(0, len(body) - self._record + 1, step)):
            yield f"{filename}:{number}".encode(), body[start:start + self._record]


# -- producers --------------------------------------------------------------------------------
def _epochs_forward(values, count, *, num_epochs, shuffle, rng):
    if num_epochs is not None and int(np.asarray(count)) > num_epochs:
        raise _out_of_range()
    values = np.asarray(values)
    return values[rng.permutation(len(values))] if shuffle else values


def _out_of_range():
    return OutOfRangeError("Reached limit of epochs (the input producer's num_epochs)")


producer_epoch_op = define(
    "producer_epoch", _epochs_forward, lambda s, d, a: (s[0], d[0]), None, traits=_TRAITS,
    inputs=2, doc="One epoch of an input producer's values (shuffled if asked), or "
                  "OutOfRangeError once the epoch count passes num_epochs.")


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True,
                   seed=None, capacity=32, shared_name=None, summary_name=None, name=None,
                   cancel_op=None):
    """TF1's ``tf.train.input_producer``: a FIFOQueue filled with the rows of
    ``input_tensor``, one epoch per run of its QueueRunner (``num_epochs`` of them, counted
    in a local variable; None: forever), each epoch shuffled if ``shuffle``."""
    values = input_tensor if isinstance(input_tensor, Node) else constant(input_tensor)
    row = tuple(element_shape) if element_shape is not None else (
        None if values.shape is None else tuple(values.shape[1:]))
    with name_scope(name or "input_producer"):
        if num_epochs is not None:
            with name_scope("limit_epochs"):
                epochs = Variable(np.int64(0), trainable=False, name="epochs",
                                  collections=[GraphKeys.LOCAL_VARIABLES])
                count = epochs.assign_add(np.int64(1))
        else:
            count = constant(np.int64(0))
        with device("cpu"):
            epoch = FRONTENDS[Node](producer_epoch_op, (values, count), {
                "num_epochs": None if num_epochs is None else int(num_epochs),
                "shuffle": bool(shuffle), "rng": np.random.default_rng(seed),
                "name": "epoch"})
        queue = FIFOQueue(capacity, [values.dtype], shapes=[row], name="fifo_queue")
        enqueue = queue.enqueue_many([epoch])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
    return queue


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None,
                          capacity=32, shared_name=None, name=None, cancel_op=None):
    """TF1's ``tf.train.string_input_producer``: a queue of the file names (strings) for
    a reader, ``num_epochs`` times over (shuffled per epoch unless ``shuffle=False``)."""
    names = string_tensor if isinstance(string_tensor, Node) else \
        constant(string_tensor, dtype=D.string)
    if names.dtype is not D.string:
        raise TypeError(f"string_input_producer needs strings (file names), got "
                        f"{names.dtype.name}")
    if not isinstance(string_tensor, Node) and np.asarray(names.attrs["value"]).size == 0:
        raise ValueError("string_input_producer requires a non-null input tensor")
    return input_producer(names, (), num_epochs, shuffle, seed, capacity,
                          name=name or "input_producer", cancel_op=cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """TF1's ``tf.train.range_input_producer``: a queue of the integers 0 .. limit - 1."""
    return input_producer(np.arange(int(limit), dtype=np.int32), (), num_epochs, shuffle,
                          seed, capacity, name=name or "input_producer")


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """TF1's ``tf.train.slice_input_producer``: one row of each tensor of ``tensor_list``
    (all of one length) per run, ``num_epochs`` times over the rows."""
    tensors = [t if isinstance(t, Node) else constant(t) for t in tensor_list]
    if not tensors:
        raise ValueError("slice_input_producer: expected at least one tensor")
    lengths = {t.shape[0] for t in tensors if t.shape is not None and t.shape[0] is not None}
    if len(lengths) != 1:
        raise ValueError("slice_input_producer: the tensors need one known, common length, "
                         f"got {sorted(lengths)}")
    with name_scope(name or "input_producer"):
        queue = range_input_producer(lengths.pop(), num_epochs, shuffle, seed, capacity)
        index = queue.dequeue()
        return [gather(t, index) for t in tensors]


def _matching_files_forward(pattern):
    patterns = np.asarray(pattern, dtype=object).reshape(-1)
    paths = sorted({p for pat in patterns for p in glob.glob(as_str(pat))})
    return _bytes_array([p.encode() for p in paths])


matching_files_op = define(
    "matching_files", _matching_files_forward, lambda s, d, a: ((None,), D.string), None,
    traits=_TRAITS, inputs=1, doc="The sorted names of the files a glob pattern matches.")


def matching_files(pattern, name=None):
    """TF1's ``tf.matching_files``: the sorted file names matching ``pattern`` (a glob, or a
    vector of them), found at each run."""
    pattern = pattern if isinstance(pattern, Node) else constant(pattern, dtype=D.string)
    with device("cpu"):
        return FRONTENDS[Node](matching_files_op, (pattern,), {"name": name or
                                                               "MatchingFiles"})


def match_filenames_once(pattern, name=None):
    """TF1's ``tf.train.match_filenames_once``: the sorted file names matching ``pattern``.
    TF keeps them in a local variable that ``tf.local_variables_initializer()`` sets;
    kernelgraph's variables hold numbers only, so this is :func:`matching_files`, which
    looks at each run (the same names while the folder does not change)."""
    return matching_files(pattern, name=name or "matching_filenames")


# -- batching ---------------------------------------------------------------------------------
def _flatten(tensors):
    if isinstance(tensors, dict):
        keys = sorted(tensors)
        return keys, [tensors[k] for k in keys]
    if isinstance(tensors, list | tuple):
        return None, list(tensors)
    return None, [tensors]


def _batch(queue_of, tensors, batch_size, num_threads, enqueue_many, shapes,
           allow_smaller_final_batch, name):
    keys, items = _flatten(tensors)
    items = [t if isinstance(t, Node) else constant(t) for t in items]
    if shapes is None:
        shapes = []
        for t in items:
            shape = t.shape if not enqueue_many or t.shape is None else t.shape[1:]
            if shape is None or any(d is None for d in shape):
                raise ValueError(f"All shapes must be fully defined: the tensor '{t.name}' "
                                 f"has shape {TensorShape(shape)}; give shapes= or reshape it")
            shapes.append(tuple(shape))
    with name_scope(name):
        queue = queue_of([t.dtype for t in items], shapes)
        enqueue = (queue.enqueue_many if enqueue_many else queue.enqueue)(items)
        add_queue_runner(QueueRunner(queue, [enqueue] * int(num_threads)))
        take = queue.dequeue_up_to if allow_smaller_final_batch else queue.dequeue_many
        out = take(int(batch_size))
    if keys is not None:
        out = [out] if len(keys) == 1 else out
        return dict(zip(keys, out))
    return out


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """TF1's ``tf.train.batch``: ``batch_size`` consecutive elements of ``tensors`` (a
    list, a dict or one tensor, of fully known shapes) stacked per run, collected by a
    queue runner; at the end of the input OutOfRangeError (or, with
    ``allow_smaller_final_batch``, a last smaller batch)."""
    if dynamic_pad:
        raise NotImplementedError("tf.train.batch(dynamic_pad=True) is not supported; pad the "
                                  "tensors to one shape, or use tf.data's padded_batch")
    return _batch(lambda dts, shp: FIFOQueue(capacity, dts, shapes=shp), tensors, batch_size,
                  num_threads, enqueue_many, shapes, allow_smaller_final_batch,
                  name or "batch")


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """TF1's ``tf.train.shuffle_batch``: ``batch`` through a RandomShuffleQueue, so each
    batch is drawn at random from more than ``min_after_dequeue`` buffered elements."""
    if min_after_dequeue >= capacity:
        raise ValueError(f"shuffle_batch: min_after_dequeue ({min_after_dequeue}) must be "
                         f"less than capacity ({capacity})")
    return _batch(lambda dts, shp: RandomShuffleQueue(capacity, min_after_dequeue, dts,
                                                      shapes=shp, seed=seed),
                  tensors, batch_size, num_threads, enqueue_many, shapes,
                  allow_smaller_final_batch, name or "shuffle_batch")


READER_OPS = ("reader_read", "producer_epoch", "matching_files")

__all__ = ["FixedLengthRecordReader", "ReaderBase", "TFRecordReader", "TextLineReader",
           "WholeFileReader", "batch", "input_producer", "match_filenames_once", "matching_files",
           "range_input_producer", "shuffle_batch", "slice_input_producer",
           "string_input_producer"]
