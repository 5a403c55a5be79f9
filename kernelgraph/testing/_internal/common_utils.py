"""PyTorch's ``torch.testing._internal.common_utils``: the :class:`TestCase` of PyTorch's own
test suite (its ``assertEqual`` compares tensors, numbers and sequences with PyTorch's
tolerances per dtype) and :func:`run_tests`, so a test written against them runs on
kernelgraph with only its import changed.

>>> import kernelgraph as torch
>>> class T(TestCase):
...     def test_add(self):
...         self.assertEqual(torch.tensor([1.0, 2.0]) + 1, [2.0, 3.0])
>>> import unittest
>>> unittest.TextTestRunner(stream=open("/dev/null", "w")).run(T("test_add")).wasSuccessful()
True
"""

from __future__ import annotations

import contextlib
import sys
import unittest

from ... import devices
from ...eager import random_creation as _random
from .._comparison import _compare, _Mismatch

__all__ = [
    "IS_LINUX", "IS_MACOS", "IS_WINDOWS", "TEST_CUDA", "TEST_NUMPY", "TEST_WITH_ROCM",
    "TestCase", "freeze_rng_state", "instantiate_parametrized_tests", "parametrize",
    "run_tests", "skipIfTorchDynamo", "slowTest", "subtest",
]

IS_WINDOWS = sys.platform == "win32"
IS_MACOS = sys.platform == "darwin"
IS_LINUX = sys.platform.startswith("linux")
TEST_NUMPY = True
TEST_WITH_ROCM = False
TEST_CUDA = devices.cuda_is_available()


class TestCase(unittest.TestCase):
    """PyTorch's test ``TestCase``: ``assertEqual`` compares tensors, NumPy arrays, numbers,
    sequences and mappings as PyTorch's does (a number or list against a tensor is read in
    the tensor's dtype; NaNs equal by default; PyTorch's tolerances per dtype unless
    ``atol``/``rtol`` are given); other values compare as unittest compares them."""

    precision = 0.0
    rel_tol = 0.0

    def assertEqual(self, x, y, msg=None, *, atol=None, rtol=None, equal_nan=True,  # noqa: N802
                    exact_dtype=True, exact_device=False, exact_layout=False,
                    exact_stride=False, exact_is_coalesced=False):
        """Fail unless ``x`` and ``y`` are equal (within PyTorch's tolerances for tensors)."""
        if isinstance(x, str) and isinstance(y, str):
            try:
                super().assertEqual(x, y, msg=msg)
            except AssertionError as e:
                raise self.failureException(f"String comparison failed: {e}") from None
            return
        if (rtol is None) != (atol is None):  # PyTorch's rule: both or neither
            raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, "
                             f"but got no {'atol' if atol is None else 'rtol'}.")
        kw = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=exact_dtype,
                  check_device=exact_device)
        try:
            _compare(x, y, (), kw, relaxed=True)
        except _Mismatch as e:
            text = str(e) if not msg else f"{e}\n{msg}"
            raise self.failureException(text) from None

    def assertNotEqual(self, x, y, msg=None, *, atol=None, rtol=None, **kwargs):  # noqa: N802
        """Fail if ``x`` and ``y`` are equal as :meth:`assertEqual` sees them."""
        try:
            self.assertEqual(x, y, msg, atol=atol, rtol=rtol, **kwargs)
        except AssertionError:
            return
        raise self.failureException(msg or "AssertionError not raised")

    def assertEqualIgnoreType(self, *args, **kwargs) -> None:  # noqa: N802
        """:meth:`assertEqual` without comparing dtypes."""
        self.assertEqual(*args, exact_dtype=False, **kwargs)

    def assertExpectedInline(self, actual, expect, skip=0):  # noqa: N802
        """The text ``actual`` equals ``expect`` (no rewriting of the test file here)."""
        super().assertEqual(str(actual), expect)


def run_tests(argv=None) -> None:
    """PyTorch's ``run_tests()``: run the module's tests (unittest's main)."""
    unittest.main(argv=argv if argv is not None else sys.argv)


def slowTest(fn):  # noqa: N802 - PyTorch's name
    """PyTorch marks slow tests; here they run as any other."""
    return fn


def skipIfTorchDynamo(msg="test doesn't currently work with dynamo"):  # noqa: N802
    """PyTorch skips these under TorchDynamo, which kernelgraph does not have: they run."""
    if callable(msg):
        return msg
    return lambda fn: fn


class subtest:  # noqa: N801 - PyTorch's name
    """One argument set of :func:`parametrize` with its own name."""

    def __init__(self, arg_values, name=None, decorators=None):
        self.arg_values, self.name, self.decorators = arg_values, name, decorators or []


def parametrize(arg_str: str, arg_values, name_fn=None):
    """PyTorch's ``@parametrize("x", [1, 2])``: the test runs once per value once its class
    goes through :func:`instantiate_parametrized_tests`."""
    names = [a.strip() for a in arg_str.split(",")]

    def wrap(fn):
        fn._kg_params = (names, list(arg_values), name_fn)
        return fn
    return wrap


def _case_name(values, sub, name_fn) -> str:
    if sub is not None and sub.name:
        return sub.name
    if name_fn is not None:
        return str(name_fn(*values))
    return "_".join(str(v).replace(".", "_").replace(" ", "") for v in values)


def _bound_case(fn, kwargs: dict):
    def case(self):
        return fn(self, **kwargs)
    case.__name__ = fn.__name__
    return case


def instantiate_parametrized_tests(cls):
    """Replace every ``@parametrize`` test of ``cls`` by one test per argument set, named
    ``test_name_<values>`` as PyTorch names them."""
    for attr, fn in list(vars(cls).items()):
        params = getattr(fn, "_kg_params", None)
        if params is None:
            continue
        names, values, name_fn = params
        delattr(cls, attr)
        for value in values:
            sub = value if isinstance(value, subtest) else None
            value = sub.arg_values if sub is not None else value
            args = tuple(value) if len(names) > 1 else (value,)
            case = _bound_case(fn, dict(zip(names, args, strict=True)))
            setattr(cls, f"{attr}_{_case_name(args, sub, name_fn)}", case)
    return cls


@contextlib.contextmanager
def freeze_rng_state():
    """Restore PyTorch's random state after the block."""
    state = _random.get_rng_state()
    try:
        yield
    finally:
        _random.set_rng_state(state)
