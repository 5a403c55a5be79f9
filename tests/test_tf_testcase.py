"""``tf.test`` on kernelgraph: TF1-style kernel tests (``tf.test.TestCase`` subclasses, as
TF1's own ``*_op_test.py`` files write them) run under pytest with only the import changed,
and the assertions answer as TF's do (recorded in tests/recorded/testing.json)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import kernelgraph.compat.v1 as tf


class ReluTest(tf.test.TestCase):
    """In the manner of TF1's relu_op_test.py."""

    def _npRelu(self, np_features):  # noqa: N802 - TF's style
        return np.maximum(np_features, np.zeros(np_features.shape))

    def testNpRelu(self):  # noqa: N802
        self.assertAllClose(np.array([[0.0, 0.7, 0.0], [0.1, 0.0, 0.5]]),
                            self._npRelu(np.array([[-0.9, 0.7, -0.5], [0.1, -0.3, 0.5]])))

    def _testRelu(self, np_features):  # noqa: N802
        np_relu = self._npRelu(np_features)
        tf_relu = tf.nn.relu(np_features)
        self.assertAllClose(np_relu, self.evaluate(tf_relu))
        self.assertShapeEqual(np_relu, tf_relu)

    def testNumbers(self):  # noqa: N802
        for t in [np.float32, np.float64]:
            self._testRelu(np.array([[-9, 7, -5, 3, -1], [1, -3, 5, -7, 9]]).astype(t))

    def testGradientFloat64(self):  # noqa: N802
        with self.cached_session():
            x = tf.constant([-0.9, -0.7, 0.5, 0.3, 0.9], shape=[5], dtype=tf.float64)
            y = tf.nn.relu(x)
            err = tf.test.compute_gradient_error(x, [5], y, [5],
                                                 x_init_value=[-0.9, -0.7, 0.5, 0.3, 0.9])
        self.assertLess(err, 1e-10)


class ReduceTest(tf.test.TestCase):
    """In the manner of TF1's reduction_ops_test.py: sessions, feeds and nested evaluate."""

    def testSumWithFeed(self):  # noqa: N802
        with self.cached_session() as sess:
            x = tf.placeholder(tf.float32, [None, 3])
            s = tf.reduce_sum(x, axis=1)
            got = sess.run(s, {x: np.ones((2, 3), np.float32)})
        self.assertAllEqual(got, [3.0, 3.0])
        self.assertDTypeEqual(got, np.float32)

    def testEvaluateNested(self):  # noqa: N802
        a = tf.constant([1.0, 2.0])
        got = self.evaluate({"sum": tf.reduce_sum(a), "both": (a, a * 2.0)})
        self.assertAllClose(got, {"sum": 3.0, "both": ([1.0, 2.0], [2.0, 4.0])})

    def testSessionsPerTest(self):  # noqa: N802
        with self.cached_session() as s1:
            self.assertIs(tf.get_default_session(), s1)
            self.assertIs(s1.graph, tf.get_default_graph())
        with self.cached_session() as s2:
            self.assertIs(s1, s2)
        with self.session() as s3:
            self.assertIsNot(s3, s1)
        with self.test_session() as s4:
            self.assertIs(s4, s1)

    def testFreshGraph(self):  # noqa: N802
        self.assertEqual(len(tf.get_default_graph().get_operations()), 0)
        tf.constant(1.0)

    def testFreshGraphAgain(self):  # noqa: N802
        self.assertEqual(len(tf.get_default_graph().get_operations()), 0)

    def testRanges(self):  # noqa: N802
        x = tf.constant([0.5, 1.5])
        self.assertAllInRange(x, 0.0, 2.0)
        self.assertAllGreater(x, 0.0)
        self.assertAllLessEqual(x, 1.5)
        self.assertArrayNear([0.5, 1.5], [0.5, 1.5001], 1e-3)
        self.assertAllCloseAccordingToType(np.float16([1.0]), np.float16([1.0005]))

    def testOpError(self):  # noqa: N802
        x = tf.placeholder(tf.float32, [2])
        with self.assertRaisesOpError("shape"):
            self.evaluate(x + tf.constant([1.0, 2.0, 3.0]))

    def testTempDir(self):  # noqa: N802
        d = self.get_temp_dir()
        self.assertTrue(os.path.isdir(d))
        self.assertEqual(d, self.get_temp_dir())


def test_recorded_assertions(recorded):
    cases = recorded("testing")["tf"]

    class T(tf.test.TestCase):
        def runTest(self):  # noqa: N802
            pass

    wrong = {}
    for name, case in cases.items():
        tf.reset_default_graph()
        t = T()
        t.setUp()
        with t.cached_session():
            try:
                exec(case["code"], {"tf": tf, "np": np, "t": t})
                got = "OK"
            except Exception as e:  # noqa: BLE001 - compared with the recorded outcome
                got = [type(e).__name__, str(e)]
        t.tearDown()
        want = case["outcome"]
        if got == "OK" or want == "OK":
            same = got == want
        elif "Not equal to tolerance" in want[1] or "Arrays are not equal" in want[1]:
            same = got[0] == want[0]  # NumPy's own report: its wording varies by version
        else:
            same = got == want
        if not same:
            wrong[name] = (got, want)
    assert not wrong


def test_module_functions():
    assert tf.test.is_gpu_available() == tf.test.is_built_with_cuda()
    assert tf.test.gpu_device_name() in ("", "/device:GPU:0")
    assert os.path.isdir(tf.test.get_temp_dir())
    assert tf.test.mock.MagicMock is not None


def test_compute_gradient_jacobians():
    with tf.Graph().as_default(), tf.Session():
        x = tf.placeholder(tf.float64, [2, 2])
        y = tf.matmul(x, tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64))
        x0 = np.array([[1.0, -1.0], [0.5, 2.0]])
        theoretical, numeric = tf.test.compute_gradient(x, [2, 2], y, [2, 2], x_init_value=x0)
    assert theoretical.shape == (4, 4)
    np.testing.assert_allclose(theoretical, numeric, atol=1e-8)
    np.testing.assert_allclose(theoretical, np.kron(np.eye(2), [[1.0, 2.0], [3.0, 4.0]].copy()
                                                    ).reshape(4, 4).T.T[[0, 1, 2, 3]], atol=0)


def test_assert_all_close_is_strict_about_shapes():
    t = tf.test.TestCase()
    with pytest.raises(AssertionError, match="Shape mismatch"):
        t.assertAllClose(np.ones(3), 1.0)
