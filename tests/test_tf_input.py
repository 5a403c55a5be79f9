"""TF1's queue-based input pipeline and record files through ``kernelgraph.compat.v1``:
the cases of tests/recorded/record_tf_input.py compared with what TF1 gave, the TFRecord
file TF wrote (``tests/recorded/tf_input.tfrecord``) read and rewritten byte for byte, what
cannot be recorded (a queue that nothing fills, threads), and the behavioural check of the
host ops behind it (tests/test_op_cards.py BEHAVIOURS)."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.compat.v1 as tf
from kernelgraph.compat.v1 import queues
from kernelgraph.compat.v1.input_names import TOP_LEVEL
from kernelgraph.compat.v1.parsing import INPUT_OPS
from kernelgraph.compat.v1.readers import READER_OPS
from kernelgraph.ops import OPS
from tests.tf_recorded_cases import RECORDED, assert_matches, load_cases, run_case

CASES = load_cases("tf_input")
HOST_OPS = INPUT_OPS + READER_OPS + queues.QUEUE_OPS


@pytest.mark.parametrize("case", CASES.CASES, ids=lambda c: c.__name__)
def test_like_tf1(case, recorded):
    want = recorded("tf_input")["cases"][case.__name__]
    got = run_case(case)
    got = got if isinstance(got, dict) and "error" in got else CASES.encode(got)
    assert_matches(got, want, case.__name__)


def test_record_file_written_by_tf_is_read_and_rewritten_byte_for_byte(tmp_path):
    tf_file = RECORDED / "tf_input.tfrecord"
    records = list(tf.python_io.tf_record_iterator(str(tf_file)))
    assert len(records) == 5 and records[3] == b"" and records[4] == b"x" * 300
    for i, record in enumerate(records[:3]):
        ex = tf.train.Example.FromString(record)
        assert list(ex.features.feature["label"].int64_list.value) == [i, -i]
        assert ex.SerializeToString(deterministic=True) == record
    mine = tmp_path / "mine.tfrecord"
    with tf.io.TFRecordWriter(str(mine)) as writer:
        for i in range(3):
            writer.write(CASES.example(tf, i).SerializeToString(deterministic=True))
        writer.write(b"")
        writer.write("x" * 300)
    assert mine.read_bytes() == tf_file.read_bytes()


def test_a_corrupted_record_file_is_refused(tmp_path):
    data = bytearray((RECORDED / "tf_input.tfrecord").read_bytes())
    data[20] ^= 0xFF  # a byte of the first record's data
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(data))
    with pytest.raises(tf.errors.DataLossError, match="checksum"):
        list(tf.python_io.tf_record_iterator(str(bad)))
    with pytest.raises(tf.errors.NotFoundError):
        list(tf.python_io.tf_record_iterator(str(tmp_path / "none.tfrecord")))


def test_a_queue_nothing_fills_raises_deadline_exceeded(monkeypatch):
    monkeypatch.setattr(queues, "STALLED_AFTER", 0.2)
    with tf.Graph().as_default():
        q = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
        with tf.Session() as sess, pytest.raises(tf.errors.DeadlineExceededError,
                                                 match="start_queue_runners"):
            sess.run(q.dequeue())


def test_a_dequeue_waits_for_another_thread():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
        enqueue = q.enqueue([4.5])
        out = q.dequeue()
        with tf.Session() as sess:
            timer = threading.Timer(0.3, lambda: sess.run(enqueue))
            timer.start()
            assert sess.run(out) == 4.5
            timer.join()


def test_runner_threads_end_when_their_session_closes():
    """Without a Coordinator (a common tutorial slip) the runners' threads end with the
    Session, even one waiting to enqueue into a full queue."""
    with tf.Graph().as_default():
        (x,) = tf.train.slice_input_producer([np.arange(100)], shuffle=False)
        batch = tf.train.batch([x], batch_size=2, capacity=4)
        with tf.Session() as sess:
            threads = tf.train.start_queue_runners()  # the default session
            assert sess.run(batch).tolist() == [0, 1]
        for t in threads:
            t.join(5.0)
        assert not any(t.is_alive() for t in threads)


def test_each_session_has_its_own_queue():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(3, [tf.int32], shapes=[[]])
        enqueue = q.enqueue_many([[1, 2]])
        with tf.Session() as a, tf.Session() as b:
            a.run(enqueue)
            assert (a.run(q.size()), b.run(q.size())) == (2, 0)


def test_shuffle_batch_is_a_seeded_shuffle():
    def draw():
        with tf.Graph().as_default():
            x, = tf.train.slice_input_producer([np.arange(20)], num_epochs=1, shuffle=False)
            batch = tf.train.shuffle_batch([x], batch_size=20, capacity=30,
                                           min_after_dequeue=5, seed=7)
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                coord = tf.train.Coordinator()
                threads = tf.train.start_queue_runners(sess, coord)
                got = sess.run(batch)
                coord.request_stop()
                coord.join(threads)
        return got.tolist()

    first = draw()
    assert sorted(first) == list(range(20)) and first != list(range(20))
    assert draw() == first


def test_errors_say_what_was_expected(tmp_path):
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="string tensor"):
            tf.decode_csv(tf.constant([1.0]), [[0.0]])
        with pytest.raises(TypeError, match="numeric dtype"):
            tf.decode_raw(tf.constant(b"ab"), tf.string)
        with pytest.raises(NotImplementedError, match="FixedLenFeature"):
            tf.parse_single_example(tf.constant(b""), {"a": object()})
        with pytest.raises(ValueError, match="min_after_dequeue"):
            tf.train.shuffle_batch([tf.constant(1.0)], 2, capacity=3, min_after_dequeue=3)
        with pytest.raises(TypeError, match="queue of file names"):
            tf.TextLineReader().read("files.csv")
        with pytest.raises(ValueError, match="2 components"):
            tf.FIFOQueue(2, [tf.int32, tf.int32]).enqueue([1])
        with pytest.raises(NotImplementedError, match="compressed"):
            tf.python_io.TFRecordWriter(str(tmp_path / "a"), options="GZIP")
        missing = tf.read_file(str(tmp_path / "nope.txt"))
        with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError, match="nope.txt"):
            sess.run(missing)


def test_the_names_are_tf1s_types():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(2, [tf.string], shapes=[[]])
        key, value = tf.TextLineReader().read(q)
        assert isinstance(q.enqueue(["a"]), tf.Operation)
        assert isinstance(q.close(), tf.Operation)
        assert value.name.endswith(":0") and value.dtype == tf.string
        assert isinstance(q.size(), tf.Tensor) and q.size().dtype == tf.int32
    assert set(TOP_LEVEL) <= set(dir(tf))


def check_input_ops(device):
    """The behavioural check of the input pipeline's host ops (tests/test_op_cards.py
    BEHAVIOURS): under a device scope and with the compiler's passes on, each is made on the
    host, never folded (a constant's parse runs at each run), and computes from the values
    of that run."""
    for name in HOST_OPS:
        assert {"stateful", "host_only"} <= OPS[name].traits, name
    folder = os.path.join(os.path.dirname(__file__), "recorded")
    with tf.Graph().as_default(), kg.device(device):
        line = tf.placeholder(tf.string, [])
        a, b = tf.decode_csv(line, [[0], [0.0]])
        raw = tf.decode_raw(tf.constant(np.float32([1.5, 2.0]).tobytes()), tf.float32)
        number = tf.string_to_number(tf.constant("2.5"))
        contents = tf.read_file(tf.constant(os.path.join(folder, "tf_input.tfrecord")))
        parsed = tf.parse_single_example(
            tf.constant(CASES.example(tf, 2).SerializeToString()),
            {"x": tf.FixedLenFeature([2], tf.float32)})
        names = tf.matching_files(os.path.join(folder, "tf_input.*"))
        files = tf.train.string_input_producer([os.path.join(folder, "tf_input.tfrecord")],
                                               num_epochs=1, shuffle=False)
        _, record = tf.TFRecordReader().read(files)
        q = tf.FIFOQueue(4, [tf.float32], shapes=[[]])
        size = q.size()
        for node in (a, raw, number, contents, parsed["x"], names, record, size):
            assert node.kg_node.device == kg.device("cpu"), node
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run([a, b], {line: "3,4.5"}) == [3, 4.5]
            assert sess.run([a, b], {line: "5,"}) == [5, 0.0]
            assert sess.run(raw).tolist() == [1.5, 2.0] and sess.run(number) == 2.5
            assert sess.run(parsed["x"]).tolist() == [1.0, 1.25]
            assert len(sess.run(contents)) == 560
            assert [os.path.basename(n) for n in sess.run(names)] == [
                b"tf_input.json", b"tf_input.tfrecord"]
            sess.run(q.enqueue_many([[1.0, 2.0]]))
            assert sess.run(size) == 2 and sess.run(q.dequeue()) == 1.0
            sess.run(q.close())
            assert sess.run(size) == 1
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            assert tf.train.Example.FromString(sess.run(record)).features.feature[
                "label"].int64_list.value[:] == [0, 0]
            coord.request_stop()
            coord.join(threads)


@pytest.mark.parametrize("device", ["cpu"])
def test_host_ops(device):
    check_input_ops(device)
