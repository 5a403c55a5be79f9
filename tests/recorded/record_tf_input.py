"""Record TF1's queue-based input pipelines and record files into ``tf_input.json`` (read by
tests/test_tf_input.py): ``tf.train.Example`` protobufs and their bytes, TFRecord files,
``string_input_producer`` + readers (text lines, TFRecords, whole files, fixed-length
records) + ``decode_csv`` / ``parse_single_example`` / ``decode_raw`` + ``tf.train.batch``
run by queue runners under a ``Coordinator``, ``OutOfRangeError`` after ``num_epochs``,
``FIFOQueue`` / ``RandomShuffleQueue``, and the file datasets of ``tf.data``.

Each case is a function of the ``tf`` module (this script runs it with
``tensorflow.compat.v1``, the test with ``kernelgraph.compat.v1``); files are written to a
fresh temporary folder by the case itself. The script also writes ``tf_input.tfrecord``, a
small TFRecord file of Examples written by TF itself, which the test reads with kernelgraph
and compares byte for byte with what kernelgraph's writer makes. Run::

    /tmp/ref/bin/python tests/recorded/record_tf_input.py
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # the recording helpers, next to this file
from record_tf_control_flow21 import encode as _encode  # noqa: E402
from record_tf_control_flow21 import record  # noqa: E402

CSV = "a,b,label\n1,2.5,x\n3,4.5,y\n5,,z\n7,8.5,w\n"
RECORD_FILE = Path(__file__).with_name("tf_input.tfrecord")


def encode(value):
    """``encode`` of the recording helpers, with arrays of bytes (``tf.string``) as lists of
    text (an array of them says so, with its shape)."""
    if isinstance(value, np.ndarray) and value.dtype == object:
        return _encode(["strings", list(value.shape),
                        [v.decode("latin-1") for v in value.ravel().tolist()]])
    if isinstance(value, bytes):
        return {"py": value.decode("latin-1")}
    if isinstance(value, dict):
        return {"dict": {str(k): encode(v) for k, v in sorted(value.items())}}
    if isinstance(value, list | tuple):
        return {"list" if isinstance(value, list) else "tuple": [encode(v) for v in value]}
    return _encode(value)


def _file(name, text, folder=None):
    folder = folder or tempfile.mkdtemp(prefix="kg_input_")
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode())
    return path


def example(tf, i):
    """The i-th Example of the record files: an int64, two floats and raw bytes."""
    return tf.train.Example(features=tf.train.Features(feature={
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i, -i])),
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i / 2.0, 1.25])),
        "raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[bytes([i, 255, 7])])),
    }))


def run_pipeline(tf, fetch, limit=20):
    """Start the queue runners under a Coordinator and fetch until OutOfRangeError."""
    out = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while not coord.should_stop() and len(out) < limit:
                out.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            out.append("end")
        finally:
            coord.request_stop()
        coord.join(threads)
        out.append(coord.should_stop())
    return out


# -- protobufs and record files -------------------------------------------------------------
def example_protobufs(tf):
    one = tf.train.Example(features=tf.train.Features(feature={
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[3, -1, 2 ** 40]))}))
    many = example(tf, 5)
    back = tf.train.Example.FromString(many.SerializeToString())
    feature = back.features.feature
    return [one.SerializeToString().hex(), many.SerializeToString(deterministic=True).hex(),
            str(one), list(feature["label"].int64_list.value), list(feature["x"].float_list.value),
            list(feature["raw"].bytes_list.value), sorted(feature),
            back.features.feature["x"].WhichOneof("kind")]


def record_file_round_trip(tf):
    path = os.path.join(tempfile.mkdtemp(prefix="kg_input_"), "r.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(3):
            writer.write(example(tf, i).SerializeToString(deterministic=True))
    writer = tf.io.TFRecordWriter(path + "2")
    writer.write(b"")
    writer.write(b"plain bytes")
    writer.close()
    with open(path, "rb") as f:
        data = f.read()
    return [data.hex(), [r.hex() for r in tf.python_io.tf_record_iterator(path)],
            list(tf.python_io.tf_record_iterator(path + "2"))]


def compat_text(tf):
    return [tf.compat.as_bytes("héllo"), tf.compat.as_str(b"abc"), tf.compat.as_bytes(b"x"),
            tf.compat.as_str("y")]


# -- parsing ops -----------------------------------------------------------------------------
def decode_csv_defaults_and_dtypes(tf):
    lines = tf.constant(["1,2.5,x", "3,,y", ",4.5,"])
    a, b, c = tf.decode_csv(lines, record_defaults=[[0], [-1.0], ["?"]])
    d = tf.io.decode_csv("7;8", record_defaults=[[0.0], [tf.constant(0, tf.int64)]],
                         field_delim=";")
    with tf.Session() as sess:
        return sess.run([a, b, c, d]) + [a.dtype.name, b.dtype.name, c.dtype.name,
                                         a.shape.as_list()]


def decode_csv_bad_record(tf):
    a, b = tf.decode_csv(tf.constant("1,2,3"), record_defaults=[[0], [0]])
    with tf.Session() as sess:
        return sess.run(a)


def decode_csv_required_field_missing(tf):
    a, b = tf.decode_csv(tf.constant(",2"), record_defaults=[tf.constant([], tf.int32), [0]])
    with tf.Session() as sess:
        return sess.run(a)


def decode_raw_and_numbers(tf):
    raw = tf.constant([np.arange(4, dtype=np.float32).tobytes(),
                       np.array([1, -2, 3, 4], np.float32).tobytes()])
    floats = tf.decode_raw(raw, tf.float32)
    ints = tf.decode_raw(tf.constant(b"\x01\x00\x02\x00"), tf.int16)
    nums = tf.string_to_number(tf.constant(["1.5", "-2", "3e2"]))
    ints2 = tf.string_to_number("42", out_type=tf.int32)
    with tf.Session() as sess:
        return sess.run([floats, ints, nums, ints2]) + [floats.shape.as_list(),
                                                        ints.shape.as_list()]


def string_to_number_bad(tf):
    with tf.Session() as sess:
        return sess.run(tf.string_to_number(tf.constant("abc")))


def parse_single_example_features(tf):
    serialized = tf.constant(example(tf, 4).SerializeToString())
    parsed = tf.parse_single_example(serialized, features={
        "label": tf.FixedLenFeature([2], tf.int64),
        "x": tf.io.FixedLenFeature([2], tf.float32),
        "raw": tf.FixedLenFeature([], tf.string),
        "missing": tf.FixedLenFeature([1], tf.float32, default_value=[9.0])})
    with tf.Session() as sess:
        values = sess.run(parsed)
        pixels = sess.run(tf.decode_raw(parsed["raw"], tf.uint8))
    return [values, pixels, {k: v.shape.as_list() for k, v in parsed.items()},
            {k: v.dtype.name for k, v in parsed.items()}]


def parse_single_example_missing_required(tf):
    parsed = tf.io.parse_single_example(tf.constant(example(tf, 1).SerializeToString()),
                                        {"nope": tf.FixedLenFeature([], tf.int64)})
    with tf.Session() as sess:
        return sess.run(parsed)


def read_file_op(tf):
    path = _file("a.txt", b"line one\nline two\n")
    contents = tf.read_file(path)
    with tf.Session() as sess:
        return [sess.run(contents), sess.run(tf.io.read_file(tf.constant(path))),
                contents.dtype.name]


# -- queues ----------------------------------------------------------------------------------
def fifo_queue(tf):
    q = tf.FIFOQueue(5, [tf.int32, tf.float32], shapes=[[], [2]])
    enqueue = q.enqueue_many(([1, 2, 3], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    one = q.dequeue()
    two = q.dequeue_many(2)
    with tf.Session() as sess:
        sess.run(enqueue)
        sizes = [sess.run(q.size())]
        got = [sess.run(one)]
        sizes.append(sess.run(q.size()))
        got.append(sess.run(two))
        sess.run(q.enqueue((7, [0.5, 0.25])))
        sess.run(q.close())
        got.append(sess.run(one))
        try:
            sess.run(one)
        except tf.errors.OutOfRangeError:
            got.append("end")
        try:
            sess.run(enqueue)
        except tf.errors.CancelledError:
            got.append("closed")
    return [got, sizes, [t.shape.as_list() for t in two], q.dtypes[0].name]


def random_shuffle_queue(tf):
    q = tf.RandomShuffleQueue(10, min_after_dequeue=2, dtypes=[tf.int32], shapes=[[]], seed=1)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[0, 1, 2, 3, 4, 5]]))
        sess.run(q.close())
        return sorted(sess.run(q.dequeue_many(6)).tolist())


def coordinator(tf):
    coord = tf.train.Coordinator()
    seen = [coord.should_stop()]
    coord.request_stop()
    seen.append(coord.should_stop())
    coord.join([])
    failing = tf.train.Coordinator()
    try:
        raise ValueError("boom")
    except ValueError as e:
        failing.request_stop(e)
    try:
        failing.join([])
    except ValueError as e:
        seen.append(str(e))
    with_oor = tf.train.Coordinator()
    with with_oor.stop_on_exception():
        raise tf.errors.OutOfRangeError(None, None, "done")
    seen.append(with_oor.should_stop())
    with_oor.join([])
    waits = tf.train.Coordinator()
    seen += [waits.wait_for_stop(0.01), waits.request_stop(), waits.wait_for_stop(0.01)]
    return seen


# -- pipelines --------------------------------------------------------------------------------
def csv_pipeline_batches(tf):
    path = _file("data.csv", CSV)
    filenames = tf.train.string_input_producer([path], num_epochs=2, shuffle=False)
    key, value = tf.TextLineReader(skip_header_lines=1).read(filenames)
    a, b, label = tf.decode_csv(value, record_defaults=[[0], [-1.0], ["?"]])
    batch = tf.train.batch([a, b, label], batch_size=3)
    out = run_pipeline(tf, batch)
    return [out, [t.shape.as_list() for t in batch], key.dtype.name]


def csv_pipeline_smaller_final_batch(tf):
    path = _file("data.csv", CSV)
    filenames = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    key, value = tf.TextLineReader(skip_header_lines=1).read(filenames)
    a, b, label = tf.decode_csv(value, record_defaults=[[0], [-1.0], ["?"]])
    batch = tf.train.batch({"a": a, "key": key}, batch_size=3, allow_smaller_final_batch=True)
    out = run_pipeline(tf, batch)
    for item in out:
        if isinstance(item, dict):
            item["key"] = np.array([k.replace(path.encode(), b"F") for k in item["key"]],
                                   object)
    return [out, batch["a"].shape.as_list()]


def csv_pipeline_shuffle_batch(tf):
    path = _file("data.csv", CSV)
    filenames = tf.train.string_input_producer([path], num_epochs=3, shuffle=True, seed=3)
    _, value = tf.TextLineReader(skip_header_lines=1).read(filenames)
    a, b, _ = tf.decode_csv(value, record_defaults=[[0], [-1.0], ["?"]])
    batch = tf.train.shuffle_batch([a, b], batch_size=4, capacity=20, min_after_dequeue=5,
                                   seed=2, allow_smaller_final_batch=True)
    out = run_pipeline(tf, batch)
    values = sorted(int(v) for item in out if isinstance(item, list) for v in item[0])
    return [values, [t.shape.as_list() for t in batch], out[-2:]]


def tfrecord_pipeline(tf):
    path = os.path.join(tempfile.mkdtemp(prefix="kg_input_"), "r.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(5):
            writer.write(example(tf, i).SerializeToString())
    filenames = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    _, serialized = tf.TFRecordReader().read(filenames)
    f = tf.parse_single_example(serialized, features={
        "label": tf.FixedLenFeature([2], tf.int64), "x": tf.FixedLenFeature([2], tf.float32),
        "raw": tf.FixedLenFeature([], tf.string)})
    pixels = tf.reshape(tf.decode_raw(f["raw"], tf.uint8), [3])
    batch = tf.train.batch([f["label"], f["x"], pixels], batch_size=2)
    return [run_pipeline(tf, batch), [t.shape.as_list() for t in batch]]


def whole_file_and_fixed_length_readers(tf):
    folder = tempfile.mkdtemp(prefix="kg_input_")
    paths = [_file(n, t, folder) for n, t in (("a.bin", b"HHabcdefgh"), ("b.bin", b"HHijkl"))]
    filenames = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
    key, value = tf.WholeFileReader().read(filenames)
    records = tf.train.string_input_producer(paths, num_epochs=1, shuffle=False)
    _, record = tf.FixedLengthRecordReader(record_bytes=4, header_bytes=2).read(records)
    whole = run_pipeline(tf, [key, value])
    whole = [[os.path.basename(k), v] if isinstance(k, bytes) else k
             for k, v in (w if isinstance(w, list) else (w, None) for w in whole)]
    return [whole, run_pipeline(tf, record)]


def slice_input_producer_epochs(tf):
    x, y = tf.train.slice_input_producer([np.arange(4), np.arange(4) * 10.0], num_epochs=2,
                                         shuffle=False)
    return [run_pipeline(tf, [x, y]), x.shape.as_list()]


def batch_structures(tf):
    (row,) = tf.train.slice_input_producer([tf.constant([1, 2, 3, 4, 5, 6])], num_epochs=1,
                                           shuffle=False)
    one = tf.train.batch([row], batch_size=2)
    named = tf.train.batch({"v": row}, batch_size=2)
    many = tf.train.batch([tf.constant([[1, 2], [3, 4]])], batch_size=3, enqueue_many=True)
    return [isinstance(one, list | tuple), one.shape.as_list(), sorted(named),
            isinstance(named["v"], list | tuple), many.shape.as_list()]


def batch_needs_known_shapes(tf):
    return tf.train.batch([tf.placeholder(tf.float32, [None])], batch_size=2)


def missing_local_initializer(tf):
    path = _file("data.csv", CSV)
    filenames = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
    _, value = tf.TextLineReader().read(filenames)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            coord.join(threads)
        except Exception as e:  # noqa: BLE001 - the error the runner reported
            return type(e).__name__
    return "no error"


def match_filenames(tf):
    folder = tempfile.mkdtemp(prefix="kg_input_")
    for n in ("b.csv", "a.csv", "c.txt"):
        _file(n, CSV, folder)
    names = tf.train.match_filenames_once(os.path.join(folder, "*.csv"))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        return sorted(os.path.basename(n) for n in sess.run(names).tolist())


# -- tf.data over files ----------------------------------------------------------------------
def file_datasets(tf):
    folder = tempfile.mkdtemp(prefix="kg_input_")
    path = _file("data.csv", CSV, folder)
    records = os.path.join(folder, "r.tfrecord")
    with tf.python_io.TFRecordWriter(records) as writer:
        for i in range(3):
            writer.write(example(tf, i).SerializeToString(deterministic=True))
    lines = tf.data.TextLineDataset(path).skip(1).map(
        lambda line: tf.decode_csv(line, record_defaults=[[0], [-1.0], ["?"]])).batch(3)
    csv = tf.data.experimental.CsvDataset(path, [tf.int32, [-1.0], tf.string], header=True)
    tfr = tf.data.TFRecordDataset([records]).map(lambda s: tf.parse_single_example(
        s, {"x": tf.FixedLenFeature([2], tf.float32)})["x"])
    raw = tf.data.TFRecordDataset(records)
    out = []
    with tf.Session() as sess:
        for ds in (lines, csv, tfr, raw):
            nxt = ds.make_one_shot_iterator().get_next()
            got = []
            try:
                while True:
                    got.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                got.append("end")
            out.append(got)
    out[3] = [v.hex() if isinstance(v, bytes) else v for v in out[3]]
    return out + [str(raw.output_types), lines.output_shapes[0].as_list()]


def record_dataset_of_fed_file_names(tf):
    folder = tempfile.mkdtemp(prefix="kg_input_")
    paths = []
    for n in range(2):
        paths.append(os.path.join(folder, f"{n}.tfrecord"))
        with tf.python_io.TFRecordWriter(paths[-1]) as writer:
            for i in range(n + 1):
                writer.write(example(tf, 10 * n + i).SerializeToString())
    filenames = tf.placeholder(tf.string, shape=[None])
    dataset = tf.data.TFRecordDataset(filenames).map(lambda s: tf.parse_single_example(
        s, {"label": tf.FixedLenFeature([2], tf.int64)})["label"]).repeat(2)
    iterator = dataset.make_initializable_iterator()
    nxt = iterator.get_next()
    out = []
    with tf.Session() as sess:
        for names in (paths, paths[1:]):
            sess.run(iterator.initializer, feed_dict={filenames: names})
            try:
                while True:
                    out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                out.append("end")
    return out


CASES = [example_protobufs, record_file_round_trip, compat_text, decode_csv_defaults_and_dtypes,
         decode_csv_bad_record, decode_csv_required_field_missing, decode_raw_and_numbers,
         string_to_number_bad, parse_single_example_features,
         parse_single_example_missing_required, read_file_op, fifo_queue, random_shuffle_queue,
         coordinator, csv_pipeline_batches, csv_pipeline_smaller_final_batch,
         csv_pipeline_shuffle_batch, tfrecord_pipeline, whole_file_and_fixed_length_readers,
         slice_input_producer_epochs, batch_structures, batch_needs_known_shapes,
         missing_local_initializer, match_filenames,
         file_datasets, record_dataset_of_fed_file_names]


def write_record_file(tf) -> None:
    """``tf_input.tfrecord``: three Examples and two plain records, written by TF."""
    with tf.io.TFRecordWriter(str(RECORD_FILE)) as writer:
        for i in range(3):
            writer.write(example(tf, i).SerializeToString(deterministic=True))
        writer.write(b"")
        writer.write(b"x" * 300)


def main() -> None:
    import record_tf_control_flow21 as helpers

    helpers.encode = encode  # bytes arrays as text
    record(CASES, Path(__file__).with_name("tf_input.json"))
    import tensorflow.compat.v1 as tf

    write_record_file(tf)


if __name__ == "__main__":
    main()
