"""``torch.testing`` on kernelgraph: ``assert_close`` and PyTorch's test ``TestCase`` answer as
PyTorch's do (recorded in tests/recorded/testing.json), ``torch.allclose``/``isclose``, and a
test in the manner of PyTorch's own suite run with only its import changed."""

from __future__ import annotations

import re
import unittest

import numpy as np
import pytest

import kernelgraph as torch
from kernelgraph.testing import assert_close
from kernelgraph.testing._internal.common_device_type import dtypes, instantiate_device_type_tests
from kernelgraph.testing._internal.common_utils import (
    TestCase,
    instantiate_parametrized_tests,
    parametrize,
    run_tests,
)


def _norm(outcome):
    if outcome == "OK":
        return outcome
    kind, message = outcome
    return [kind, re.sub(r"<class '[^']*'>", "<class>", message)]


def _outcome(code: str, scope: dict):
    try:
        exec(code, dict(scope))
        return "OK"
    except Exception as e:  # noqa: BLE001 - compared with the recorded outcome
        return [type(e).__name__, str(e)]


def test_recorded_outcomes(recorded):
    scope = {"torch": torch, "np": np, "assert_close": assert_close, "tc": TestCase()}
    cases = recorded("testing")["torch"]
    wrong = {name: (_norm(_outcome(case["code"], scope)), _norm(case["outcome"]))
             for name, case in cases.items()}
    wrong = {k: v for k, v in wrong.items() if v[0] != v[1]}
    assert not wrong


def test_default_tolerances_per_dtype():
    assert_close(torch.tensor([1.0]), torch.tensor([1.0 + 1e-6]))      # float32: atol 1e-5
    with pytest.raises(AssertionError, match="up to 1e-07 allowed"):
        assert_close(torch.tensor([1.0], dtype=torch.float64),
                     torch.tensor([1.0 + 1e-6], dtype=torch.float64))
    with pytest.raises(AssertionError, match="Tensor-likes are not equal!"):
        assert_close(torch.tensor([True]), torch.tensor([False]))


def test_assert_allclose_old_name():
    with pytest.warns(FutureWarning):
        torch.testing.assert_allclose(torch.tensor([1.0, float("nan")]), [1.0, float("nan")])


def test_isclose_in_a_graph():
    x = torch.placeholder(torch.float32, [3])
    close = torch.isclose(x, torch.constant([1.0, 2.0, 3.5]))
    with torch.Session() as sess:
        got = sess.run(close, {x: [1.0, 2.0000001, 3.0]})
    assert got.tolist() == [True, True, False]
    with pytest.raises(TypeError, match="needs values"):
        torch.allclose(x, x)


def test_isclose_matches_numpy():
    rng = np.random.RandomState(0)
    a = rng.randn(50).astype(np.float32)
    b = a + rng.choice([0.0, 1e-6, 1e-3], 50).astype(np.float32)
    got = torch.isclose(torch.tensor(a), torch.tensor(b), rtol=1e-4, atol=1e-7).numpy()
    np.testing.assert_array_equal(got, np.isclose(a, b, rtol=1e-4, atol=1e-7))


# -- a test in the manner of PyTorch's own suite (test/test_torch.py), import swapped ------------
@instantiate_parametrized_tests
class TestTensorOps(TestCase):
    def test_add_broadcast(self):
        x = torch.ones(2, 3)
        self.assertEqual(x + torch.tensor([1.0, 2.0, 3.0]), [[2.0, 3.0, 4.0]] * 2)
        self.assertEqual((x + 1).shape, torch.Size([2, 3]))

    def test_sum_dtype(self):
        x = torch.arange(6).reshape(2, 3)
        self.assertEqual(x.sum(), 15)
        self.assertEqual(x.sum(0), torch.tensor([3, 5, 7]))
        self.assertEqual(x.float().mean(), torch.tensor(2.5))

    def test_errors(self):
        with self.assertRaisesRegex(RuntimeError, r"shape '\[4\]' is invalid for input of size 6"):
            torch.ones(2, 3).view(4)

    @parametrize("n", [1, 4])
    def test_ones_numel(self, n):
        self.assertEqual(torch.ones(n, 2).numel(), 2 * n)

    def test_not_equal(self):
        self.assertNotEqual(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5]))
        with self.assertRaisesRegex(AssertionError, "Tensor-likes are not close!"):
            self.assertEqual(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5]))


def test_parametrized_names():
    names = sorted(n for n in dir(TestTensorOps) if n.startswith("test_ones_numel"))
    assert names == ["test_ones_numel_1", "test_ones_numel_4"]


def test_run_tests_is_unittest_main():
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(TestTensorOps)
    result = unittest.TextTestRunner(stream=open("/dev/null", "w")).run(suite)
    assert result.wasSuccessful() and result.testsRun == 6
    assert callable(run_tests)


# -- device-generic tests, as PyTorch's suite writes them (common_device_type) ---------------------
class TestDeviceGeneric(TestCase):
    @dtypes(torch.float32, torch.float64)
    def test_zeros_sum(self, device, dtype):
        x = torch.zeros(3, device=device, dtype=dtype)
        self.assertEqual(x.sum(), torch.tensor(0.0, dtype=dtype, device=device))

    def test_arange(self, device):
        self.assertEqual(torch.arange(3, device=device), [0, 1, 2])


instantiate_device_type_tests(TestDeviceGeneric, globals(), only_for="cpu")


def test_device_classes():
    assert "TestDeviceGeneric" not in globals()
    names = unittest.defaultTestLoader.getTestCaseNames(TestDeviceGenericCPU)  # noqa: F821
    assert names == ["test_arange_cpu", "test_zeros_sum_cpu_float32", "test_zeros_sum_cpu_float64"]


def test_closeness_methods():
    a, b = torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.1])
    assert not a.allclose(b) and a.allclose(b, atol=0.2) and a.isclose(b).tolist() == [True, False]
