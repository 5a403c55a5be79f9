"""In the manner of TF1's kernel tests (math_ops_test.py, cwise_ops_test.py, array_ops_test.py,
all tf.test.TestCase subclasses): test methods that build ops in a cached session and check
them with self.evaluate / assertAllClose / assertAllEqual / assertEqual, run through a
TestResult so that only the outcome is printed."""
import unittest

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


class MathOpsTest(tf.test.TestCase):
    def testReduceSumReductionIndices(self):
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        with self.cached_session():
            self.assertAllClose(self.evaluate(tf.reduce_sum(x, reduction_indices=[0])),
                                [3.0, 5.0, 7.0])
            self.assertAllEqual(tf.reduce_sum(x, 1, keep_dims=True).eval(), [[3.0], [12.0]])

    def testSquaredDifference(self):
        x = tf.constant([1.0, 2.0, 4.0])
        y = tf.constant([3.0, 2.0, 1.0])
        with self.cached_session() as sess:
            out = sess.run(tf.squared_difference(x, y))
        self.assertAllClose(out, [4.0, 0.0, 9.0])

    def testCwiseOpsMatchNumpy(self):
        x = np.array([0.25, 0.5, 1.5], dtype=np.float32)
        with self.cached_session():
            for tf_fn, np_fn in ((tf.sqrt, np.sqrt), (tf.exp, np.exp), (tf.tanh, np.tanh),
                                 (tf.sigmoid, lambda v: 1 / (1 + np.exp(-v))),
                                 (tf.square, np.square), (tf.log1p, np.log1p)):
                self.assertAllClose(self.evaluate(tf_fn(x)), np_fn(x), rtol=1e-6)

    def testConcatAndStack(self):
        a = tf.constant([[1, 2]])
        b = tf.constant([[3, 4]])
        self.assertEqual(tf.concat([a, b], 0).shape.as_list(), [2, 2])
        with self.cached_session():
            self.assertAllEqual(self.evaluate(tf.concat([a, b], axis=1)), [[1, 2, 3, 4]])
            self.assertAllEqual(self.evaluate(tf.stack([a, b])).shape, (2, 1, 2))
            self.assertAllEqual(tf.transpose(tf.concat([a, b], 0)).eval(), [[1, 3], [2, 4]])

    def testMatMulGradient(self):
        a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        b = tf.constant([[0.5], [-1.0]])
        y = tf.reduce_sum(tf.matmul(a, b))
        ga, gb = tf.gradients(y, [a, b])
        with self.cached_session():
            self.assertAllClose(self.evaluate(ga), [[0.5, -1.0], [0.5, -1.0]])
            self.assertAllClose(self.evaluate(gb), [[4.0], [6.0]])
            print("matmul grads", self.evaluate([ga, gb]))

    def testInvalidShapeRaises(self):
        with self.assertRaises(ValueError):
            tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))


suite = unittest.defaultTestLoader.loadTestsFromTestCase(MathOpsTest)
result = unittest.TestResult()
suite.run(result)
for test, trace in result.failures + result.errors:
    print("FAILED", test.id().split(".")[-1], trace.strip().splitlines()[-1])
ran = result.testsRun - len(result.skipped)
print("ran", ran, "failures", len(result.failures), "errors", len(result.errors))
