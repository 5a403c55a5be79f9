"""``tf.data`` through ``kernelgraph.compat.v1``: input pipelines compared with TF1's
recorded results (the cases: tests/recorded/record_tf_data.py, written once against TF1's
API), plus what cannot be recorded (shuffled orders) and the host ops behind the iterators
(``iterator_get_next``, ``iterator_init``, ``random_uniform_like``)."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.compat.v1 as tf
from kernelgraph.ops import OPS
from tests.tf_recorded_cases import assert_matches, load_cases, run_case

CASES = load_cases("tf_data")


@pytest.mark.parametrize("case", CASES.CASES, ids=lambda c: c.__name__)
def test_like_tf1(case, recorded):
    want = recorded("tf_data")["cases"][case.__name__]
    got = run_case(case)
    got = got if isinstance(got, dict) and "error" in got else CASES.encode(got)
    assert_matches(got, want, case.__name__)


def _drain(sess, element):
    out = []
    while True:
        try:
            out.append(sess.run(element))
        except tf.errors.OutOfRangeError:
            return out


def test_shuffle_is_a_seeded_permutation_reshuffled_each_epoch():
    def orders(seed):
        with tf.Graph().as_default():
            ds = tf.data.Dataset.range(20).shuffle(8, seed=seed).repeat(2)
            nxt = ds.make_one_shot_iterator().get_next()
            with tf.Session() as sess:
                values = [int(v) for v in _drain(sess, nxt)]
        return values[:20], values[20:]

    first, second = orders(5)
    assert sorted(first) == sorted(second) == list(range(20))
    assert first != second  # reshuffled for the second epoch
    assert orders(5) == (first, second)  # the same seed, the same orders
    # A buffer of 8: element k is handed out once k - 7 others were.
    assert all(first.index(k) >= k - 7 for k in range(20))


def test_two_get_next_nodes_each_advance_the_iterator():
    with tf.Graph().as_default():
        it = tf.data.Dataset.range(4).make_one_shot_iterator()
        a, b = it.get_next(), it.get_next()
        with tf.Session() as sess:
            assert [int(v) for v in sess.run([a, b])] == [0, 1]
            assert [int(v) for v in sess.run([a, b])] == [2, 3]


def test_map_reads_outer_tensors_and_errors_name_the_map():
    with tf.Graph().as_default():
        scale = tf.constant(3.0)
        ds = tf.data.Dataset.from_tensor_slices(np.arange(3, dtype=np.float32))
        nxt = ds.map(lambda x: x * scale).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert [float(v) for v in _drain(sess, nxt)] == [0.0, 3.0, 6.0]
        bad = tf.data.Dataset.from_tensor_slices(np.arange(3)).map(
            lambda i: tf.gather(tf.constant([1.0, 2.0]), i))
        nxt = bad.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert float(sess.run(nxt)) == 1.0
            sess.run(nxt)
            with pytest.raises(tf.errors.InvalidArgumentError, match="tf.data"):
                sess.run(nxt)


def test_dataset_errors_say_what_was_expected():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="not compatible"):
            tf.data.Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))
        with pytest.raises(ValueError, match="batch_size must be greater than zero"):
            tf.data.Dataset.range(3).batch(0)
        with pytest.raises(TypeError, match="Expected output types"):
            it = tf.data.Iterator.from_structure(tf.int64, [])
            it.make_initializer(tf.data.Dataset.from_tensor_slices(np.zeros(2, np.float32)))
        with pytest.raises(RuntimeError, match="get_next"):
            iter(tf.data.Dataset.range(3))


def check_host_ops(device):
    """The behavioural check of the host ops (tests/test_op_cards.py BEHAVIOURS): each run
    of ``iterator_get_next`` is the next element, also under a device scope and with the
    compiler's passes on; ``iterator_init`` restarts it; ``random_uniform_like`` draws in
    its input's run-time shape, a new draw each run, never folded."""
    for name in ("iterator_get_next", "iterator_init"):
        assert {"stateful", "host_only"} <= OPS[name].traits
    assert "random" in OPS["random_uniform_like"].traits
    with tf.Graph().as_default(), kg.device(device):
        n = tf.placeholder(tf.int64, [])
        it = tf.data.Dataset.range(n).map(lambda x: x * 10).make_initializable_iterator()
        nxt = it.get_next()
        x = tf.placeholder(tf.float32, [None, 3])
        u = kg.static.control_flow.random_uniform_like(x)
        with tf.Session() as sess:
            sess.run(it.initializer, {n: 2})
            assert [int(sess.run(nxt)), int(sess.run(nxt))] == [0, 10]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(nxt)
            sess.run(it.initializer, {n: 1})
            assert int(sess.run(nxt)) == 0
            a = sess.run(u, {x: np.zeros((4, 3))})
            b = sess.run(u, {x: np.zeros((4, 3))})
    assert a.shape == (4, 3) and a.dtype == np.float32 and ((0 <= a) & (a < 1)).all()
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("device", ["cpu"])
def test_host_ops(device):
    check_host_ops(device)


def test_output_types_and_shapes_print_as_tf1():
    # Printed by TF 2.21 compat.v1 for the same dataset (checked by hand).
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices(
            (np.zeros((4, 2), np.float32), np.arange(4))).batch(2)
        assert str(ds.output_types) == "(tf.float32, tf.int64)"
        assert str(ds.output_shapes) == ("(TensorShape([Dimension(None), Dimension(2)]), "
                                         "TensorShape([Dimension(None)]))")
