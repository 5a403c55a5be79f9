"""TF1's ``tf.test``: the ``TestCase`` TF1's own kernel tests subclass (``cached_session``,
``evaluate``, ``assertAllClose``, ``assertAllEqual`` ...), so tests written in that manner
run on kernelgraph with only their import changed.

>>> import kernelgraph.compat.v1 as tf
>>> class T(tf.test.TestCase):
...     def testAdd(self):
...         with self.cached_session():
...             self.assertAllClose(self.evaluate(tf.add(1.0, 2.0)), 3.0)
>>> import unittest
>>> unittest.TextTestRunner(stream=open("/dev/null", "w")).run(T("testAdd")).wasSuccessful()
True
"""

from __future__ import annotations

import contextlib
import types
import unittest

import numpy as np

from ... import nest
from ...graph import Node, _default, get_default_graph, reset_default_graph
from ...static.session import Session, get_default_session


class TestCase(unittest.TestCase):
    """TF1's ``tf.test.TestCase``: each test starts with an empty default graph;
    ``cached_session()`` is one Session per test on it, entered as the default session."""

    def setUp(self):
        super().setUp()
        if not _default.stack:
            reset_default_graph()
        self._cached = None

    def tearDown(self):
        if self._cached is not None:
            self._cached.close()
            self._cached = None
        super().tearDown()

    # -- sessions ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """The test's Session (made once) on ``graph`` or the default graph, as default."""
        graph = graph if graph is not None else get_default_graph()
        if self._cached is None or self._cached.graph is not graph:
            self._cached = Session(graph)
        with graph.as_default(), self._cached.as_default():
            yield self._cached

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """A new Session for the block, as default (closed after it)."""
        graph = graph if graph is not None else get_default_graph()
        sess = Session(graph)
        try:
            with graph.as_default(), sess.as_default():
                yield sess
        finally:
            sess.close()

    def evaluate(self, tensors):
        """The values of ``tensors`` (a tensor or a structure of them) in the default
        session, or the test's own."""
        sess = get_default_session()
        if sess is None:
            with self.cached_session() as cached:
                return cached.run(tensors)
        return sess.run(tensors)

    # -- assertions ----------------------------------------------------------------------------
    def _value(self, a):
        if isinstance(a, Node):
            return np.asarray(self.evaluate(a))
        return np.asarray(a)

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """Equal shapes and values within ``rtol``/``atol`` (nested structures too)."""
        if nest.is_nested(a) and not isinstance(a, np.ndarray) and any(
                isinstance(x, Node | list | tuple | dict) for x in nest.flatten(a)):
            for x, y in zip(nest.flatten(a), nest.flatten(b), strict=True):
                self.assertAllClose(x, y, rtol=rtol, atol=atol, msg=msg)
            return
        a, b = self._value(a), self._value(b)
        np.testing.assert_allclose(a, np.broadcast_to(b, a.shape) if b.ndim == 0 else b,
                                   rtol=rtol, atol=atol, err_msg=msg or "")

    assertAllCloseAccordingToType = assertAllClose  # noqa: N815

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        """Equal shapes and equal values."""
        a, b = self._value(a), self._value(b)
        if b.ndim and a.shape != b.shape:
            raise self.failureException(msg or f"shapes differ: {a.shape} != {b.shape}")
        np.testing.assert_array_equal(a, b, err_msg=msg or "")

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol)
        except AssertionError:
            return
        raise self.failureException(msg or "the values are close")

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        """``tf_tensor``'s static shape is ``np_array``'s shape."""
        self.assertEqual(list(np.shape(np_array)), tf_tensor.get_shape().as_list(), msg)

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(self._value(a) < comparison_target))

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(self._value(a) > comparison_target))

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(self._value(a) <= comparison_target))

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(self._value(a) >= comparison_target))

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        v = self._value(target)
        low = v > lower_bound if open_lower_bound else v >= lower_bound
        high = v < upper_bound if open_upper_bound else v <= upper_bound
        self.assertTrue(np.all(low & high))

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        return self.assertRaisesRegex(Exception, expected_err_re_or_predicate)


def main(argv=None) -> None:
    """TF1's ``tf.test.main()``: run this module's tests (unittest's main)."""
    unittest.main(argv=argv)


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None) -> bool:
    """Whether TF1 would use a GPU: kernelgraph's tests run on the CPU (False)."""
    return False


def gpu_device_name() -> str:
    return ""


test = types.SimpleNamespace(TestCase=TestCase, main=main, is_gpu_available=is_gpu_available,
                             gpu_device_name=gpu_device_name)

__all__ = ["test"]
