"""The op cards behind TF1's math functions: the random ops of kernelgraph/ops/sampling.py
(``truncated_normal``, ``multinomial``, ``log_uniform_candidates``: shapes, dtypes,
distributions, seeding in both modes), the selection ops of ops/selection.py (``top_k``,
``unique`` in both modes) and the Cholesky gradient of ops/matrix.py by finite differences
(through a symmetric input, as TF programs build one).
The op-card test (tests/test_op_cards.py) checks the other cards' numbers, gradients and
CUDA kernels."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.compat.v1 as tf
from kernelgraph.ops import OPS, matrix, sampling, selection
from tests.test_ops import finite_difference_grad

SAMPLING_OPS = ("truncated_normal", "multinomial", "log_uniform_candidates")


def check_sampling_ops(device):
    """The behavioural check of the sampling ops (tests/test_op_cards.py BEHAVIOURS): each
    is random, on the device asked for, and its first static draw is the eager one with the
    same seeds."""
    for name in SAMPLING_OPS:
        assert "random" in OPS[name].traits
    dev = kg.device(device)
    logits = np.log(np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]]))
    kg.random.seed(0)
    with dev:
        eager = [sampling.truncated_normal((500,), mean=1.0, std=2.0, seed=3),
                 sampling.multinomial(kg.tensor(logits), 400, seed=4),
                 sampling.log_uniform_candidates(6, 20, seed=5)]
    kg.random.seed(0)
    with kg.Graph().as_default() as g, dev:
        static = [sampling.truncated_normal((500,), mean=1.0, std=2.0, seed=3, static=True),
                  sampling.multinomial(kg.constant(logits), 400, seed=4),
                  sampling.log_uniform_candidates(6, 20, seed=5, static=True)]
    with kg.Session(g) as sess:
        values = sess.run(static)
    for t, v in zip(eager, values):
        assert t.device == dev
        np.testing.assert_array_equal(t.cpu().numpy(), v)
    normal, draws, candidates = values
    assert normal.dtype == np.float32 and (np.abs(normal - 1.0) <= 4.0).all()
    assert draws.shape == (2, 400) and draws.dtype == np.int64
    # the class frequencies follow softmax(logits) (400 draws a row: within 0.1)
    freq = np.stack([np.bincount(row, minlength=3) / 400 for row in draws])
    np.testing.assert_allclose(freq, np.exp(logits), atol=0.1)
    ids, tries = candidates[:6], candidates[6]
    assert len(set(ids.tolist())) == 6 and ((0 <= ids) & (ids < 20)).all() and tries >= 6


def test_sampling_ops_cpu():
    check_sampling_ops("cpu")


def test_truncated_normal_is_a_truncated_normal():
    """Every value within two standard deviations; the mean and the variance of a normal
    truncated at +-2 (variance 1 - 4 phi(2) / (2 Phi(2) - 1) = 0.7737 for a unit normal)."""
    kg.random.seed(1)
    with tf.Graph().as_default():
        t = tf.truncated_normal([20000], mean=3.0, stddev=0.5, seed=2)
        d = tf.truncated_normal([2, 2], dtype=tf.float64)
        with tf.Session() as sess:
            a, b = sess.run(t), sess.run(t)
    assert t.dtype == tf.float32 and d.dtype == tf.float64 and t.shape.as_list() == [20000]
    assert not np.array_equal(a, b)  # a new draw each run
    assert (np.abs(a - 3.0) <= 1.0).all()
    assert abs(a.mean() - 3.0) < 0.01 and abs(a.var() / 0.25 - 0.7737) < 0.03


def test_tf_random_seeds_repeat_draws():
    """tf.set_random_seed and an op seed give the same draws in a new graph."""
    def draw():
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            t = tf.truncated_normal([5], seed=1)
            m = tf.multinomial([[0.0, 0.0, 0.0]], 6, seed=2)
            with tf.Session() as sess:
                return sess.run([t, m])
    a, b = draw(), draw()
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_default_sampler_nce_loss_trains():
    """nce_loss with its own log-uniform sampler: a loss per row, finite, with gradients
    for the weights, a new draw each run."""
    kg.random.seed(0)
    with tf.Graph().as_default():
        x = tf.constant(np.ones((4, 3), np.float32))
        w = tf.Variable(np.full((50, 3), 0.1, np.float32))
        b = tf.Variable(np.zeros(50, np.float32))
        labels = tf.constant([[1], [2], [3], [4]], dtype=tf.int64)
        loss = tf.nn.nce_loss(w, b, labels, x, num_sampled=5, num_classes=50)
        soft = tf.nn.sampled_softmax_loss(w, b, labels, x, num_sampled=5, num_classes=50)
        grad = tf.gradients(tf.reduce_sum(loss), [w])[0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            l1, s1, g = sess.run([loss, soft, grad])
            l2 = sess.run(loss)
    assert l1.shape == (4,) and s1.shape == (4,) and np.isfinite(l1).all()
    assert np.isfinite(s1).all() and np.asarray(g).shape == (50, 3)
    assert not np.array_equal(l1, l2)


@pytest.mark.parametrize("static", [False, True])
def test_top_k_and_unique_both_modes(static):
    x = np.array([[1.0, 5.0, 3.0, 5.0, -2.0], [np.nan, 0.1, 0.9, 0.3, 0.7]])
    v = np.array([3, 1, 3, 2, 1, 9])
    if static:
        with kg.Graph().as_default() as g:
            px, pv = kg.placeholder(kg.float64, (None, 5)), kg.placeholder(kg.int64, (None,))
            out = [*selection.top_k(px, 3), *selection.unique(pv),
                   *selection.unique(pv, sorted=True)]
        with kg.Session(g) as sess:
            got = sess.run(out, {px: x, pv: v})
    else:
        got = [t.numpy() for t in (*selection.top_k(kg.tensor(x), 3),
                                   *selection.unique(kg.tensor(v)),
                                   *selection.unique(kg.tensor(v), sorted=True))]
    values, indices, uniq, inverse, suniq, sinverse = got
    # NaN sorts above every number (TF's order); equal values keep the earlier index first
    np.testing.assert_array_equal(indices, [[1, 3, 2], [0, 2, 4]])
    np.testing.assert_array_equal(values, [[5.0, 5.0, 3.0], [np.nan, 0.9, 0.7]])
    np.testing.assert_array_equal(uniq, [3, 1, 2, 9])
    np.testing.assert_array_equal(inverse, [0, 1, 0, 2, 1, 3])
    np.testing.assert_array_equal(suniq, [1, 2, 3, 9])
    np.testing.assert_array_equal(sinverse, [2, 0, 2, 1, 0, 3])
    assert indices.dtype == np.int64 and inverse.dtype == np.int64


def test_top_k_refuses_k_beyond_the_row():
    with pytest.raises(kg.errors.ShapeError, match="at least k=4"):
        selection.top_k(np.zeros((2, 3)), 4)
    with pytest.raises(ValueError, match="non-negative int"):
        selection.top_k(np.zeros((2, 3)), -1)


def test_cholesky_gradient_by_finite_differences():
    """TF's Cholesky gradient is symmetric: d/dS of cholesky((S + S^T) / 2)."""
    rng = np.random.default_rng(3)
    m = rng.normal(size=(2, 3, 3))
    s0 = m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3)
    w = rng.normal(size=(2, 3, 3))

    def f(s):
        return float((matrix.cholesky.reference((s + np.swapaxes(s, -1, -2)) / 2) * w).sum())

    s = kg.tensor(s0, requires_grad=True)
    sym = (s + s.transpose(-1, -2)) * 0.5
    (matrix.cholesky(sym) * kg.tensor(w)).sum().backward()
    np.testing.assert_allclose(s.grad.numpy(), finite_difference_grad(f, [s0], 0), rtol=1e-5,
                               atol=1e-7)


def test_singular_and_indefinite_matrices_are_refused():
    with pytest.raises(np.linalg.LinAlgError):
        matrix.matrix_inverse(np.zeros((2, 2)))
    with pytest.raises(np.linalg.LinAlgError):
        matrix.cholesky(-np.eye(2))
    with pytest.raises(kg.errors.ShapeError, match="square"):
        matrix.matrix_determinant(np.zeros((2, 3)))


def test_tf_linalg_and_tf_random_spell_the_same_functions():
    a = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        got = [tf.linalg.det(a), tf.linalg.inv(a), tf.linalg.solve(a, a), tf.linalg.cholesky(a),
               tf.linalg.eigvalsh(a), tf.linalg.eigh(a)[0], tf.linalg.diag_part(a),
               tf.linalg.tensordot(a, a, 1), tf.random.truncated_normal([3], seed=1)]
        with tf.Session() as sess:
            got = sess.run(got)
    np.testing.assert_allclose(got[0], np.linalg.det(a), rtol=1e-6)
    np.testing.assert_allclose(got[1], np.linalg.inv(a), rtol=1e-6)
    np.testing.assert_allclose(got[2], np.eye(2), atol=1e-6)
    np.testing.assert_allclose(got[3], np.linalg.cholesky(a), rtol=1e-6)
    np.testing.assert_allclose(got[4], np.linalg.eigvalsh(a), rtol=1e-6)
    np.testing.assert_allclose(got[5], got[4])
    np.testing.assert_array_equal(got[6], [4.0, 3.0])
    np.testing.assert_allclose(got[7], a @ a, rtol=1e-6)
    assert got[8].shape == (3,) and (np.abs(got[8]) <= 2.0).all()


@pytest.mark.parametrize("loss_name", ["nce_loss", "sampled_softmax_loss"])
def test_sampled_losses_gradients_by_finite_differences(loss_name):
    """d loss / d (inputs, weights, biases) of the sampled losses with fixed sampled values
    (two true classes, accidental hits removed) against central finite differences."""
    rng = np.random.default_rng(4)
    x0, w0, b0 = rng.normal(size=(3, 4)), rng.normal(size=(7, 4)), rng.normal(size=7)
    row_weights = np.array([0.5, -1.0, 2.0])
    with tf.Graph().as_default():
        x, w, b = (tf.placeholder(tf.float64, v.shape) for v in (x0, w0, b0))
        labels = tf.constant([[1, 2], [4, 0], [2, 6]], dtype=tf.int64)
        sampled = (tf.constant([2, 0, 5, 3], dtype=tf.int64),
                   tf.constant([[0.3, 0.1], [0.2, 0.5], [0.4, 0.2]]),
                   tf.constant([0.4, 0.6, 0.1, 0.2]))
        loss = getattr(tf.nn, loss_name)(w, b, labels, x, num_sampled=4, num_classes=7,
                                         num_true=2, sampled_values=sampled,
                                         remove_accidental_hits=True)
        total = tf.reduce_sum(loss * row_weights)
        grads = tf.gradients(total, [x, w, b])
        with tf.Session() as sess:
            def f(*values):
                return float(sess.run(total, dict(zip((x, w, b), values))))
            got = sess.run(grads, {x: x0, w: w0, b: b0})
            for i, g in enumerate(got):
                np.testing.assert_allclose(g, finite_difference_grad(f, [x0, w0, b0], i),
                                           rtol=1e-5, atol=1e-7)
