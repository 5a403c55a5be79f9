"""TF1's ``tf.test``: the ``TestCase`` TF1's own kernel tests subclass (``cached_session``,
``evaluate``, ``assertAllClose``, ``assertAllEqual`` ...), ``tf.test.main()`` and
``compute_gradient_error``, so tests written in that manner run on kernelgraph with only
their import changed.

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
import math
import re
import tempfile
import types
import unittest
import unittest.mock

import numpy as np

from ... import devices
from ...graph import Node, _default, get_default_graph, reset_default_graph
from ...static.session import Session, get_default_session
from .gradient_check import compute_gradient, compute_gradient_error


class _InstanceOnly:
    """A method seen only on instances: ``test_session`` starts with "test", and unittest's
    loader (pytest's too) would run it as a test (TF skips it at run time instead)."""

    def __init__(self, fn):
        self.fn = fn

    def __get__(self, obj, cls=None):
        return self if obj is None else types.MethodType(self.fn, obj)


class TestCase(unittest.TestCase):
    """TF1's ``tf.test.TestCase``: each test starts with an empty default graph;
    ``cached_session()`` is one Session per test on it, entered as the default session;
    ``evaluate`` runs tensors (any nested structure) in the default session."""

    def setUp(self):
        super().setUp()
        if not _default.stack:  # as TF: a fresh default graph per test
            reset_default_graph()
        self._cached = None

    def tearDown(self):
        if getattr(self, "_cached", None) is not None:
            self._cached.close()
            self._cached = None
        super().tearDown()

    # -- sessions ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """The test's Session (made once) on ``graph`` or the default graph, as default."""
        graph = graph if graph is not None else get_default_graph()
        cached = getattr(self, "_cached", None)
        if cached is None or cached.graph is not graph:
            cached = self._cached = Session(graph)
        with graph.as_default(), cached.as_default():
            yield cached

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """A new Session for the block, as default (closed after it)."""
        graph = graph if graph is not None else get_default_graph()
        sess = Session(graph)
        try:
            with graph.as_default(), sess.as_default():
                yield sess
        finally:
            sess.close()

    def _test_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """TF1's older name: the cached session on the default graph, else a new one."""
        if graph is None:
            return self.cached_session(None, config, use_gpu, force_gpu)
        return self.session(graph, config, use_gpu, force_gpu)

    test_session = _InstanceOnly(_test_session)

    def evaluate(self, tensors):
        """The values of ``tensors`` (a tensor or a structure of them) in the default
        session, or the test's own."""
        sess = get_default_session()
        if sess is None:
            with self.cached_session() as cached:
                return cached.run(tensors)
        return sess.run(tensors)

    def get_temp_dir(self) -> str:
        """A temporary directory for this test (the same one each call)."""
        if not getattr(self, "_tempdir", None):
            self._tempdir = tempfile.mkdtemp(prefix="kg-test-")
        return self._tempdir

    # -- assertions ----------------------------------------------------------------------------
    def _GetNdArray(self, a) -> np.ndarray:  # noqa: N802 - TF's name
        if isinstance(a, Node):
            a = self.evaluate(a)
        return a if isinstance(a, np.ndarray) else np.array(a)

    _value = _GetNdArray

    def _assertArrayLikeAllClose(self, a, b, rtol, atol, msg):  # noqa: N802
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        contents = f" with contents {b}" if b.ndim <= 3 or b.size < 500 else ""
        self.assertEqual(a.shape, b.shape,
                         f"Shape mismatch: expected {a.shape}, got {b.shape}{contents}.")
        if a.dtype.kind in "biufc" and b.dtype.kind in "biufc" and \
                np.allclose(a, b, rtol=rtol, atol=atol):
            return
        msgs = [msg] if msg else []
        with np.errstate(invalid="ignore"):
            cond = np.logical_or(np.abs(a - b) > atol + rtol * np.abs(b),
                                 np.isnan(a) != np.isnan(b))
        x, y = (a[np.where(cond)], b[np.where(cond)]) if a.ndim else (a, b)
        if a.ndim:
            msgs.append(f"not close where = {np.where(cond)}")
        msgs += [f"not close lhs = {x}", f"not close rhs = {y}",
                 f"not close dif = {np.abs(x - y)}",
                 f"not close tol = {atol + rtol * np.abs(y)}",
                 f"dtype = {a.dtype}, shape = {a.shape}"]
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg="\n".join(msgs),
                                   equal_nan=True)

    def _assertAllCloseRecursive(self, a, b, rtol, atol, path, msg):  # noqa: N802
        where = f"At {'/'.join(map(str, path))}: " if path else ""
        if isinstance(a, dict) or isinstance(b, dict):
            if not (isinstance(a, dict) and isinstance(b, dict)):
                raise self.failureException(f"{where}{a!r} and {b!r} are not both dicts")
            self.assertCountEqual(a.keys(), b.keys(),
                                  f"mismatched keys: a has keys {a.keys()}, but b has "
                                  f"keys {b.keys()}. {msg or ''}")
            for k in a:
                self._assertAllCloseRecursive(a[k], b[k], rtol, atol, [*path, k], msg)
            return
        if isinstance(a, list | tuple) and not any(isinstance(x, Node) for x in a):
            try:  # as TF: whole sequences first, item by item if they are not arrays
                a_arr, b_arr = np.array(a), self._GetNdArray(b)
                if a_arr.dtype == object:
                    raise ValueError
            except (ValueError, TypeError):
                pass
            else:
                self._assertArrayLikeAllClose(a_arr, b_arr, rtol, atol, f"{where}{msg or ''}")
                return
        if isinstance(a, list | tuple):
            if not isinstance(b, list | tuple | np.ndarray):
                raise self.failureException(f"{where}{a!r} and {b!r} differ in structure")
            self.assertEqual(len(a), len(b), f"{where}Length of a {len(a)} != b {len(b)}")
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                self._assertAllCloseRecursive(x, y, rtol, atol, [*path, i], msg)
            return
        self._assertArrayLikeAllClose(a, b, rtol, atol, f"{where}{msg or ''}")

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """Equal shapes (no broadcasting, as TF) and values within ``atol + rtol * |b|``;
        NaNs are equal; dicts, lists and tuples are compared item by item."""
        self._assertAllCloseRecursive(a, b, rtol, atol, [], msg)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6,  # noqa: N802
                                      float_rtol=1e-6, float_atol=1e-6, half_rtol=1e-3,
                                      half_atol=1e-3, bfloat16_rtol=1e-2, bfloat16_atol=1e-2,
                                      msg=None):
        """:meth:`assertAllClose` with the looser tolerance of float32 or float16 values."""
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        kinds = {a.dtype, b.dtype}
        if kinds & {np.dtype(np.float32), np.dtype(np.complex64)}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.dtype(np.float16) in kinds:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """Fail if :meth:`assertAllClose` would pass."""
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol)
        except AssertionError:
            return
        raise self.failureException(f"The two values are close at all elements. {msg or ''}")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        """Equal shapes and equal values (NaNs of floats equal)."""
        a, b = self._GetNdArray(a), self._GetNdArray(b)
        self.assertEqual(a.shape, b.shape, f"Shape mismatch: expected {a.shape}, got "
                         f"{b.shape}. Contents: {b!r}. \n{msg or ''}.")
        same = a == b
        if a.dtype.kind == "f":
            same = np.logical_or(same, np.logical_and(np.isnan(a), np.isnan(b)))
        if not np.all(same):
            where = np.where(~same) if a.ndim else ()
            np.testing.assert_array_equal(
                a, b, err_msg="\n".join(filter(None, [msg, f"not equal where = {where}"])))

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        """Fail if :meth:`assertAllEqual` would pass."""
        try:
            self.assertAllEqual(a, b)
        except AssertionError:
            return
        raise self.failureException(msg or "The two values are equal at all elements")

    def assertShapeEqual(self, input_a, input_b, msg=None):  # noqa: N802
        """``input_b``'s static shape (a graph tensor) is ``input_a``'s (a NumPy array)."""
        if not isinstance(input_a, np.ndarray | np.generic):
            raise TypeError(f"input_a must be a np.ndarray, not {type(input_a).__name__}")
        if not isinstance(input_b, Node):
            raise TypeError(f"input_b must be a Tensor, not {type(input_b).__name__}")
        self.assertAllEqual(input_a.shape, list(input_b.shape), msg=msg)

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        """``|f1 - f2| <= err``."""
        self.assertTrue(f1 == f2 or math.fabs(f1 - f2) <= err,
                        f"{f1:f} != {f2:f} +/- {err:f} (difference: {math.fabs(f1 - f2):g})"
                        + (f" ({msg})" if msg else ""))

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        """Equal lengths and every pair within ``err``."""
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2, strict=True):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):  # noqa: N802
        """The norm of the difference is below ``err``."""
        self.assertTrue(np.linalg.norm(np.asarray(ndarray1) - np.asarray(ndarray2)) < err,
                        msg=msg)

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self.assertGreater(np.min(self._GetNdArray(a)), comparison_target)

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self.assertLess(np.max(self._GetNdArray(a)), comparison_target)

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self.assertGreaterEqual(np.min(self._GetNdArray(a)), comparison_target)

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self.assertLessEqual(np.max(self._GetNdArray(a)), comparison_target)

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        """Every value lies in the range (bounds closed unless told)."""
        v = self._GetNdArray(target)
        low = v > lower_bound if open_lower_bound else v >= lower_bound
        high = v < upper_bound if open_upper_bound else v <= upper_bound
        bad = ~(low & high)
        if np.any(bad):
            where = "\n".join(f"  {[int(k) for k in i]} : {v[i]}" for i in zip(*np.nonzero(bad)))
            raise self.failureException(
                f"{np.sum(bad)} of the {v.size} element(s) are outside the range "
                f"{'(' if open_lower_bound else '['}{lower_bound}, {upper_bound}"
                f"{')' if open_upper_bound else ']'}. Subscript(s) and value(s) of the "
                f"offending elements:\n{where}")

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        """Every value is one of ``expected_set``."""
        diff = set(np.unique(self._GetNdArray(target)).tolist()) - set(expected_set)
        if diff:
            raise self.failureException(f"{diff} unexpected values not in {expected_set}.")

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        """``target``'s values have dtype ``expected_dtype``."""
        self.assertEqual(self._GetNdArray(target).dtype, np.dtype(expected_dtype))

    def assertStartsWith(self, actual, expected_start, msg=None):  # noqa: N802
        if not actual.startswith(expected_start):
            raise self.failureException(msg or f"{actual!r} does not start with "
                                                f"{expected_start!r}")

    def assertItemsEqual(self, first, second, msg=None):  # noqa: N802
        self.assertCountEqual(first, second, msg)

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type,  # noqa: N802
                                       expected_err_re_or_predicate):
        """The block raises ``exception_type`` whose message matches the regex (searched)
        or satisfies the predicate."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(e):
                return re.search(expected_err_re_or_predicate, str(e)) is not None
        try:
            yield
        except exception_type as e:
            if not predicate(e):
                raise AssertionError(f"Exception of type {type(e)}: {e}") from e
        else:
            raise AssertionError(f"{exception_type} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        """The block raises an error whose message matches (kernelgraph's run-time errors
        are not all TF's ``OpError`` classes, so any exception is accepted)."""
        return self.assertRaisesWithPredicateMatch(Exception, expected_err_re_or_predicate)

    def assertRaisesIncompatibleShapesError(self, exception_type=ValueError):  # noqa: N802
        return self.assertRaisesWithPredicateMatch(
            Exception, r"Incompatible shapes|Dimensions must be equal|broadcast|shape")


def main(argv=None) -> None:
    """TF1's ``tf.test.main()``: run this module's tests (unittest's main)."""
    unittest.main(argv=argv)


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None) -> bool:
    """Whether a CUDA GPU is here for kernelgraph to use."""
    return devices.cuda_is_available()


def is_built_with_cuda() -> bool:
    """Whether kernelgraph can run CUDA kernels here (a GPU and numba's CUDA)."""
    return devices.cuda_is_available()


def gpu_device_name() -> str:
    """``'/device:GPU:0'`` when a GPU is here, else ``''`` (as TF)."""
    return "/device:GPU:0" if devices.cuda_is_available() else ""


def get_temp_dir() -> str:
    """A temporary directory for tests."""
    return tempfile.gettempdir()


test = types.SimpleNamespace(
    TestCase=TestCase, main=main, is_gpu_available=is_gpu_available,
    is_built_with_cuda=is_built_with_cuda, gpu_device_name=gpu_device_name,
    get_temp_dir=get_temp_dir, compute_gradient=compute_gradient,
    compute_gradient_error=compute_gradient_error, mock=unittest.mock)

__all__ = ["test"]
