"""Record TF1's ``tf.data`` input pipelines as the low-level API guide uses them
(``from_tensor_slices`` of arrays, tuples and dicts, ``from_tensors``, ``range``, ``map``,
``filter``, ``batch``, ``repeat``, ``take``, ``skip``, ``zip``, ``shuffle(1)``, one-shot,
initializable and reinitializable iterators, ``OutOfRangeError`` at the end) into
``tf_data.json`` (read by tests/test_tf_data.py).

Each case is a function of the ``tf`` module, written once against TF1's API: this script
runs it with ``tensorflow.compat.v1``, the test with ``kernelgraph.compat.v1``. Run::

    TF_USE_LEGACY_KERAS=1 /work/refvenv/bin/python tests/recorded/record_tf_data.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # the recording helpers, next to this file
from record_tf_control_flow21 import encode, record  # noqa: E402, F401 - encode: for the test

FEATURES = np.arange(20, dtype=np.float32).reshape(10, 2) / 4.0
LABELS = np.arange(10) % 3


def drain(tf, sess, element, feed=None, limit=50):
    """Every element an iterator gives until OutOfRangeError (at most ``limit``)."""
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(element, feed))
        except tf.errors.OutOfRangeError:
            out.append("end")
            break
    return out


def range_one_shot(tf):
    dataset = tf.data.Dataset.range(5)
    nxt = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return [drain(tf, sess, nxt), dataset.output_types.name, list(dataset.output_shapes)]


def slices_of_an_array_batched(tf):
    dataset = tf.data.Dataset.from_tensor_slices(FEATURES).batch(4)
    nxt = tf.data.make_one_shot_iterator(dataset).get_next()
    with tf.Session() as sess:
        return [drain(tf, sess, nxt), dataset.output_shapes.as_list()
                if hasattr(dataset.output_shapes, "as_list") else list(dataset.output_shapes)]


def slices_of_python_lists(tf):
    dataset = tf.data.Dataset.from_tensor_slices([1.5, 2.5, 3.5]).map(lambda x: x * 2)
    ints = tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]])
    a = dataset.make_one_shot_iterator().get_next()
    b = ints.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return [drain(tf, sess, a), drain(tf, sess, b)]


def tuples_map_batch_drop_remainder(tf):
    dataset = tf.data.Dataset.from_tensor_slices((FEATURES, LABELS))
    dataset = dataset.map(lambda x, y: (x * 2.0 + 1.0, tf.one_hot(y, 3)))
    dataset = dataset.batch(3, drop_remainder=True)
    x, y = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return [drain(tf, sess, (x, y)), [x.get_shape().as_list(), y.get_shape().as_list()]]


def dicts_of_features(tf):
    dataset = tf.data.Dataset.from_tensor_slices({"a": FEATURES[:4], "b": LABELS[:4]})
    dataset = dataset.map(lambda d: {"sum": tf.reduce_sum(d["a"]), "b": d["b"] + 1})
    nxt = dataset.batch(2).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return drain(tf, sess, nxt)


def repeat_take_skip_shuffle_one(tf):
    dataset = tf.data.Dataset.range(4).shuffle(1).repeat(3).skip(2).take(7).batch(3)
    nxt = dataset.make_one_shot_iterator().get_next()
    forever = tf.data.Dataset.range(2).repeat().make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return [drain(tf, sess, nxt), [sess.run(forever) for _ in range(5)]]


def filter_and_zip(tf):
    small = tf.data.Dataset.range(10).filter(lambda x: tf.less(x, 5))
    pairs = tf.data.Dataset.zip((small, tf.data.Dataset.range(100, 200, 7)))
    nxt = pairs.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return drain(tf, sess, nxt)


def from_tensors_and_concatenate(tf):
    a = tf.data.Dataset.from_tensors(np.array([1.0, 2.0], np.float32))
    b = tf.data.Dataset.from_tensor_slices(np.array([[3.0, 4.0], [5.0, 6.0]], np.float32))
    nxt = a.concatenate(b).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return drain(tf, sess, nxt)


def initializable_with_placeholders(tf):
    features = tf.placeholder(FEATURES.dtype, FEATURES.shape)
    labels = tf.placeholder(tf.int64, [None])
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(4)
    iterator = dataset.make_initializable_iterator()
    nxt = iterator.get_next()
    out = []
    with tf.Session() as sess:
        for scale in (1.0, 10.0):
            init = sess.run(iterator.initializer, {features: FEATURES * scale, labels: LABELS})
            out.append([init, drain(tf, sess, nxt)])
    return out


def epochs_with_reinitialization(tf):
    max_value = tf.placeholder(tf.int64, shape=[])
    dataset = tf.data.Dataset.range(max_value)
    iterator = dataset.make_initializable_iterator()
    nxt = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer, feed_dict={max_value: 3})
        first = drain(tf, sess, nxt)
        sess.run(iterator.initializer, feed_dict={max_value: 5})
        return [first, drain(tf, sess, nxt)]


def reinitializable_iterator(tf):
    training = tf.data.Dataset.range(6).map(lambda x: x * 2)
    validation = tf.data.Dataset.range(3)
    iterator = tf.data.Iterator.from_structure(training.output_types, training.output_shapes)
    nxt = iterator.get_next()
    train_init = iterator.make_initializer(training)
    valid_init = iterator.make_initializer(validation)
    with tf.Session() as sess:
        sess.run(train_init)
        a = drain(tf, sess, nxt)
        sess.run(valid_init)
        return [a, drain(tf, sess, nxt)]


def one_run_fetching_every_component_advances_once(tf):
    dataset = tf.data.Dataset.from_tensor_slices((FEATURES[:3], LABELS[:3]))
    x, y = dataset.make_one_shot_iterator().get_next()
    doubled = x * 2.0
    with tf.Session() as sess:
        return [sess.run([x, y, doubled]), sess.run(y), sess.run(x)]


def training_loop_on_batches(tf):
    dataset = tf.data.Dataset.from_tensor_slices((FEATURES, LABELS.astype(np.float32)))
    x, y = dataset.batch(5).repeat(4).make_one_shot_iterator().get_next()
    w = tf.Variable(tf.zeros([2, 1]))
    b = tf.Variable(0.0)
    pred = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.square(tf.reshape(pred, [-1]) - y))
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        while True:
            try:
                losses.append(sess.run([train, loss])[1])
            except tf.errors.OutOfRangeError:
                break
        return [losses, sess.run(w), sess.run(b)]


def errors_uninitialized_and_one_shot_placeholder(tf):
    out = []
    p = tf.placeholder(tf.float32, [None])
    it = tf.data.Dataset.from_tensor_slices(p).make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        try:
            sess.run(nxt)
        except tf.errors.FailedPreconditionError:
            out.append("FailedPreconditionError")
    try:
        tf.data.Dataset.from_tensor_slices(p).make_one_shot_iterator()
        out.append("no error")
    except ValueError:
        out.append("ValueError")
    return out


def from_generator_padded_batch(tf):
    def gen():
        for n in [1, 3, 2]:
            yield np.arange(n), n

    dataset = tf.data.Dataset.from_generator(gen, (tf.int64, tf.int64), ([None], []))
    padded = dataset.padded_batch(2, padded_shapes=([None], []),
                                  padding_values=(np.int64(-1), np.int64(0)))
    fixed = dataset.padded_batch(3, padded_shapes=([4], []))
    a = padded.make_one_shot_iterator().get_next()
    b = fixed.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return [drain(tf, sess, a), drain(tf, sess, b)]


def each_session_has_its_own_position(tf):
    nxt = tf.data.Dataset.range(3).make_one_shot_iterator().get_next()
    with tf.Session() as a:
        first = [a.run(nxt), a.run(nxt)]
        with tf.Session() as b:
            return [first, b.run(nxt), a.run(nxt), drain(tf, b, nxt)]


CASES = [range_one_shot, slices_of_an_array_batched, slices_of_python_lists,
         tuples_map_batch_drop_remainder, dicts_of_features, repeat_take_skip_shuffle_one,
         filter_and_zip, from_tensors_and_concatenate, initializable_with_placeholders,
         epochs_with_reinitialization, reinitializable_iterator,
         one_run_fetching_every_component_advances_once, training_loop_on_batches,
         errors_uninitialized_and_one_shot_placeholder, from_generator_padded_batch,
         each_session_has_its_own_position]


def main() -> None:
    record(CASES, Path(__file__).with_name("tf_data.json"))


if __name__ == "__main__":
    main()
