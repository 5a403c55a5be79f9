"""Record what real TF1 (``tensorflow.compat.v1``, graph mode) computes for its math and
``tf.nn`` functions (``tf.div``, ``tf.clip_by_global_norm``, ``tf.nn.nce_loss`` with fixed
sampled values, ``tf.nn.conv2d_transpose``, ``tf.nn.top_k`` ...) and their gradients, into
``tf_mathops.json`` (read by tests/test_tf_mathops.py).

Each case is a function of the ``tf`` module, written once against TF1's API, on fixed
inputs; a case's gradients are ``tf.gradients`` of ``sum(out * W)`` for a fixed ``W``. Run::

    /tmp/ref/bin/python tests/recorded/record_tf_mathops.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # the recording helpers, next to this file
from record_tf_control_flow21 import encode, record  # noqa: E402, F401 - encode: for the test

CASES: list = []


def case(fn):
    CASES.append(fn)
    return fn


def _arr(*shape, scale=1.0, shift=0.0):
    n = int(np.prod(shape))
    return (np.cos(np.arange(n) * 1.3 + shift) * scale).reshape(shape).astype(np.float32)


def _run_with_grads(tf, out, xs):
    """[out, d sum(out * W) / d x for x in xs], one run."""
    outs = out if isinstance(out, list | tuple) else [out]
    loss = tf.add_n([tf.reduce_sum(o * _arr(*o.shape.as_list(), shift=0.5)) for o in outs])
    # dense gradients: a gathered table's gradient is TF's IndexedSlices until converted
    grads = [tf.convert_to_tensor(g) for g in tf.gradients(loss, xs)]
    with tf.Session() as sess:
        return sess.run([list(outs), grads])


# -- arithmetic ------------------------------------------------------------------------------
@case
def div_ints_floor_and_floats_true(tf):
    a, b = tf.constant([7, -7, 6, -1]), tf.constant([2, 2, -4, 3])
    fa, fb = tf.constant([7.0, -7.0]), tf.constant([2.0, 2.0])
    with tf.Session() as sess:
        return sess.run([tf.div(a, b), tf.div(fa, fb), tf.floor_div(a, b), tf.truncatediv(a, b),
                         tf.div(a, 2)])


@case
def clip_by_norm_and_gradient(tf):
    x = tf.constant(_arr(2, 3, scale=3.0))
    return _run_with_grads(tf, [tf.clip_by_norm(x, 1.5), tf.clip_by_norm(x, 2.0, axes=[1]),
                                tf.clip_by_norm(x, 100.0)], [x])


@case
def clip_by_global_norm_with_none(tf):
    a, b = tf.constant(_arr(2, 2, scale=2.0)), tf.constant(_arr(3, scale=3.0, shift=1.0))
    clipped, norm = tf.clip_by_global_norm([a, None, b], 1.0)
    with tf.Session() as sess:
        got = sess.run([clipped[0], clipped[2], norm])
    big, same = tf.clip_by_global_norm([a, b], 100.0)
    grads = tf.gradients(tf.reduce_sum(tf.clip_by_global_norm([a, b], 1.0)[0][0] * 2.0), [a, b])
    with tf.Session() as sess:
        return [clipped[1] is None, got, sess.run([big, same]), sess.run(grads)]


@case
def clip_by_global_norm_given_norm(tf):
    a = tf.constant(_arr(2, 2, scale=2.0))
    clipped, norm = tf.clip_by_global_norm([a], 1.0, use_norm=tf.constant(4.0))
    with tf.Session() as sess:
        return sess.run([clipped, norm])


# -- matrices --------------------------------------------------------------------------------
@case
def diag_and_diag_part(tf):
    v = tf.constant([1.0, 2.0, 3.0])
    m = tf.constant(_arr(2, 3, 3))
    return _run_with_grads(tf, [tf.diag(v), tf.matrix_diag_part(m), tf.diag(tf.constant(
        _arr(2, 2)))], [v, m])


@case
def cross_product(tf):
    a, b = tf.constant(_arr(2, 3)), tf.constant(_arr(2, 3, shift=2.0))
    return _run_with_grads(tf, tf.cross(a, b), [a, b])


@case
def tensordot_axes(tf):
    a, b = tf.constant(_arr(2, 3, 4)), tf.constant(_arr(4, 3, 5, shift=1.0))
    c = tf.constant(_arr(3, 2, shift=2.0))
    return _run_with_grads(tf, [tf.tensordot(a, b, axes=[[1, 2], [1, 0]]),
                                tf.tensordot(a, tf.constant(_arr(4, 2)), axes=1),
                                tf.tensordot(c, c, axes=0)], [a, b, c])


@case
def matrix_functions(tf):
    m = _arr(2, 3, 3) + 3.0 * np.eye(3, dtype=np.float32)
    a = tf.constant(m)
    spd = tf.constant(m @ m.transpose(0, 2, 1) + np.eye(3, dtype=np.float32))
    rhs = tf.constant(_arr(2, 3, 2, shift=1.0))
    return _run_with_grads(tf, [tf.matrix_determinant(a), tf.matrix_inverse(a),
                                tf.cholesky(spd), tf.matrix_solve(a, rhs)], [a, spd, rhs])


@case
def self_adjoint_eig_values(tf):
    m = _arr(3, 3)
    sym = tf.constant(m + m.T)
    e, v = tf.self_adjoint_eig(sym)
    with tf.Session() as sess:
        e, v = sess.run([e, v])
    return [e, np.abs(v)]  # each vector's sign is the solver's choice


# -- nn --------------------------------------------------------------------------------------
@case
def xw_plus_b_and_selu(tf):
    x, w, b = tf.constant(_arr(2, 3)), tf.constant(_arr(3, 4, shift=1.0)), tf.constant(
        _arr(4, shift=2.0))
    return _run_with_grads(tf, [tf.nn.xw_plus_b(x, w, b), tf.nn.selu(x * 2.0)], [x, w, b])


@case
def zero_fraction(tf):
    with tf.Session() as sess:
        return sess.run([tf.nn.zero_fraction(tf.constant([0.0, 1.0, 0.0, 2.0])),
                         tf.nn.zero_fraction(tf.constant([[0, 3], [1, 0], [0, 0]]))])


@case
def batch_normalization_formula(tf):
    x = tf.constant(_arr(4, 3, scale=2.0))
    mean, var = tf.nn.moments(x, [0])
    off, scale = tf.constant(_arr(3, shift=1.0)), tf.constant(_arr(3, shift=2.0) + 2.0)
    return _run_with_grads(tf, [tf.nn.batch_normalization(x, mean, var, off, scale, 1e-3),
                                tf.nn.batch_normalization(x, mean, var, None, None, 1e-3),
                                tf.nn.batch_norm_with_global_normalization(
                                    x, mean, var, off, scale, 1e-3, True)],
                           [x, off, scale])


@case
def lrn_window(tf):
    x = tf.constant(_arr(1, 2, 2, 7))
    return _run_with_grads(tf, [tf.nn.lrn(x), tf.nn.lrn(x, depth_radius=2, bias=2.0, alpha=0.5,
                                                         beta=0.75)], [x])


@case
def conv2d_transpose_same_and_valid(tf):
    x = tf.constant(_arr(1, 3, 3, 2))
    f = tf.constant(_arr(3, 3, 4, 2, shift=1.0))  # [h, w, out_channels, in_channels]
    same = tf.nn.conv2d_transpose(x, f, [1, 6, 6, 4], [1, 2, 2, 1], padding="SAME")
    valid = tf.nn.conv2d_transpose(x, f, [1, 7, 7, 4], [1, 2, 2, 1], padding="VALID")
    return _run_with_grads(tf, [same, valid], [x, f])


@case
def top_k_sorted(tf):
    x = tf.constant([[1.0, 5.0, 3.0, 5.0, -2.0], [0.5, 0.1, 0.9, 0.3, 0.7]])
    v, i = tf.nn.top_k(x, k=3)
    g = tf.gradients(tf.reduce_sum(v * [[1.0, 2.0, 3.0]]), x)
    with tf.Session() as sess:
        return sess.run([v, i, tf.nn.top_k(tf.constant([3, 1, 2])).values, g])


def _nce_inputs(tf):
    inputs = tf.constant(_arr(3, 4))
    weights = tf.constant(_arr(6, 4, shift=1.0))
    biases = tf.constant(_arr(6, shift=2.0))
    labels = tf.constant([[1], [4], [2]], dtype=tf.int64)
    sampled = (tf.constant([2, 0, 5], dtype=tf.int64), tf.constant([[0.3], [0.2], [0.4]]),
               tf.constant([0.4, 0.6, 0.1]))
    return inputs, weights, biases, labels, sampled


@case
def nce_loss_with_fixed_samples(tf):
    inputs, weights, biases, labels, sampled = _nce_inputs(tf)
    loss = tf.nn.nce_loss(weights, biases, labels, inputs, num_sampled=3, num_classes=6,
                          sampled_values=sampled)
    hits = tf.nn.nce_loss(weights, biases, labels, inputs, num_sampled=3, num_classes=6,
                          sampled_values=sampled, remove_accidental_hits=True)
    return _run_with_grads(tf, [loss, hits], [inputs, weights, biases])


@case
def sampled_softmax_loss_with_fixed_samples(tf):
    inputs, weights, biases, labels, sampled = _nce_inputs(tf)
    loss = tf.nn.sampled_softmax_loss(weights, biases, labels, inputs, num_sampled=3,
                                      num_classes=6, sampled_values=sampled)
    keep = tf.nn.sampled_softmax_loss(weights, biases, labels, inputs, num_sampled=3,
                                      num_classes=6, sampled_values=sampled,
                                      remove_accidental_hits=False)
    return _run_with_grads(tf, [loss, keep], [inputs, weights, biases])


@case
def nce_loss_two_true_classes(tf):
    inputs, weights, biases, _, sampled = _nce_inputs(tf)
    labels = tf.constant([[1, 2], [4, 0], [2, 3]], dtype=tf.int64)
    sampled = (sampled[0], tf.constant([[0.3, 0.1], [0.2, 0.5], [0.4, 0.2]]), sampled[2])
    loss = tf.nn.nce_loss(weights, biases, labels, inputs, num_sampled=3, num_classes=6,
                          num_true=2, sampled_values=sampled)
    return _run_with_grads(tf, loss, [inputs, weights])


@case
def log_uniform_candidate_sampler_expected_counts(tf):
    """The expected counts depend on the draw only through the number of tries: for 2
    classes of 2 the sampler (unique) must take both."""
    labels = tf.constant([[0], [1]], dtype=tf.int64)
    s, t, e = tf.nn.log_uniform_candidate_sampler(labels, 1, 2, True, 2, seed=3)
    with tf.Session() as sess:
        s, t, e = sess.run([s, t, e])
    return [sorted(s.tolist()), t.dtype.name, t.shape, e.shape]


# -- indexing and shapes ---------------------------------------------------------------------
@case
def reverse_and_strided_slice(tf):
    x = tf.constant(_arr(2, 3, 4))
    return _run_with_grads(tf, [tf.reverse(x, [1]), tf.reverse(x, axis=[0, -1]),
                                tf.strided_slice(x, [0, 2, 1], [2, 0, 4], [1, -1, 2]),
                                tf.strided_slice(x, [1], [2], shrink_axis_mask=1)], [x])


@case
def gather_nd_rows_and_elements(tf):
    x = tf.constant(_arr(3, 4))
    return _run_with_grads(tf, [tf.gather_nd(x, [[0, 1], [2, 3], [0, 1]]),
                                tf.gather_nd(x, [[2], [0]]),
                                tf.gather_nd(tf.reshape(x, [3, 2, 2]), [[[1, 0]], [[2, 1]]])],
                           [x])


@case
def sequence_mask_lengths(tf):
    with tf.Session() as sess:
        return sess.run([tf.sequence_mask([1, 3, 2], 5), tf.sequence_mask([[1, 0], [2, 3]]),
                         tf.sequence_mask([2, 1], 3, dtype=tf.float32)])


@case
def unsorted_segment_sum_ids(tf):
    x = tf.constant(_arr(5, 2))
    return _run_with_grads(tf, [tf.unsorted_segment_sum(x, [0, 2, 0, 3, 2], 4),
                                tf.unsorted_segment_sum(tf.constant(_arr(5)), [1, 1, 0, 0, 1],
                                                        2)], [x])


@case
def unique_first_occurrence(tf):
    y, idx = tf.unique(tf.constant([4, 1, 4, 7, 1, 1, 9]))
    yf, idxf = tf.unique(tf.constant([2.5, -1.0, 2.5]))
    with tf.Session() as sess:
        return sess.run([y, idx, yf, idxf])


@case
def assert_rank_checks(tf):
    x = tf.constant(_arr(2, 3))
    op = tf.assert_rank(x, 2)
    out = [op is None or op.type]
    try:
        tf.assert_rank(x, 3)
    except ValueError as e:
        out.append(type(e).__name__)
    return out


@case
def random_crop_shape(tf):
    x = tf.constant(np.arange(48, dtype=np.float32).reshape(6, 8))
    crop = tf.random_crop(x, [3, 4], seed=1)
    with tf.Session() as sess:
        c = sess.run(crop)
    # a crop is a contiguous block: each row steps by 1, each column by 8
    return [c.shape, np.diff(c, axis=1).tolist(), np.diff(c, axis=0).tolist()]


@case
def truncated_normal_facts(tf):
    t = tf.truncated_normal([4000], mean=1.0, stddev=2.0, seed=5)
    d = tf.truncated_normal([2, 3], dtype=tf.float64)
    with tf.Session() as sess:
        v = sess.run(t)
        return [bool(np.all(np.abs(v - 1.0) <= 4.0)), d.dtype.name, d.shape.as_list()]


@case
def multinomial_facts(tf):
    logits = tf.constant([[0.0, -50.0, -50.0], [-50.0, -50.0, 0.0]])
    draw = tf.multinomial(logits, 5, seed=2)
    with tf.Session() as sess:
        return [sess.run(draw), draw.dtype.name,
                tf.multinomial(logits, 2, output_dtype=tf.int32).dtype.name]


# -- sparse tensors --------------------------------------------------------------------------
@case
def sparse_to_dense_forms(tf):
    with tf.Session() as sess:
        return sess.run([
            tf.sparse_to_dense([[0, 1], [2, 0]], [3, 4], [5.0, 7.0]),
            tf.sparse_to_dense([1, 3], [5], 2, default_value=-1),
            tf.sparse_to_dense(2, [4], 9.5),
            tf.sparse_to_dense(tf.constant([[1, 1]], dtype=tf.int64), [2, 2], [3.0], 0.5)])


@case
def sparse_placeholder_feed_and_fetch(tf):
    sp = tf.sparse_placeholder(tf.float32)
    known = tf.sparse_placeholder(tf.float32, shape=[2, 3])
    doubled = tf.SparseTensor(sp.indices, sp.values * 2.0, sp.dense_shape)
    dense = tf.sparse_tensor_to_dense(known)
    value = tf.SparseTensorValue([[0, 1], [1, 2]], [1.5, -2.0], [2, 3])
    with tf.Session() as sess:
        got = sess.run(doubled, {sp: value})
        return [type(got).__name__, got.indices, got.values, got.dense_shape,
                sess.run(dense, {known: value}), sp.dtype.name, known.shape.as_list()]


@case
def edit_distance_of_sequences(tf):
    hyp = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 0, 1], [1, 0, 2]],
                          [1, 2, 4, 4, 5], [2, 1, 3])
    truth = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [0, 0, 2], [1, 0, 0]], [1, 3, 2, 4],
                            [2, 1, 3])
    fed_h, fed_t = tf.sparse_placeholder(tf.int32), tf.sparse_placeholder(tf.int32)
    feed = {fed_h: tf.SparseTensorValue([[0, 0], [0, 1], [2, 0]], [7, 8, 9], [3, 2]),
            fed_t: tf.SparseTensorValue([[0, 0], [1, 0]], [7, 3], [3, 2])}
    with tf.Session() as sess:
        return sess.run([tf.edit_distance(hyp, truth), tf.edit_distance(hyp, truth, False),
                         tf.edit_distance(fed_h, fed_t), tf.edit_distance(fed_h, fed_t, False)],
                        feed)


@case
def edit_distance_of_strings(tf):
    hyp = tf.SparseTensor([[0, 0], [0, 1], [0, 2]], ["c", "a", "t"], [1, 3])
    truth = tf.SparseTensor([[0, 0], [0, 1], [0, 2]], ["c", "u", "t"], [1, 3])
    with tf.Session() as sess:
        return sess.run(tf.edit_distance(hyp, truth))


def main() -> None:
    record(CASES, Path(__file__).with_name("tf_mathops.json"))


if __name__ == "__main__":
    main()
