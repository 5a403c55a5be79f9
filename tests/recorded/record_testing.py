"""Record what PyTorch's ``torch.testing`` / its test ``TestCase`` and TF1's ``tf.test.TestCase``
answer into ``testing.json`` (read by tests/test_torch_testing.py and
tests/test_tf_testcase.py).

Run with an environment that has torch and tensorflow (see README.md here)::

    python tests/recorded/record_testing.py

Each case is one statement (``torch``, ``np``, ``assert_close``, ``tc`` -- a PyTorch test
``TestCase`` -- in scope for the torch cases; ``tf``, ``np``, ``t`` -- a TF1 ``TestCase`` --
for the TF cases). Its outcome is recorded as ``"OK"`` or ``[error type, message]``; the tests
run the same statements with kernelgraph in place of the framework.
"""

from __future__ import annotations

import json
import sys
import types
import unittest
from pathlib import Path

TORCH_CASES = {
    "close_vec": "assert_close(torch.tensor([1., 2., 3.]), torch.tensor([1., 2.1, 3.]))",
    "close_mat": "assert_close(torch.tensor([[1., 2.], [3., 4.]]), "
                 "torch.tensor([[1., 2.], [3.5, 4.]]))",
    "close_int": "assert_close(torch.tensor([1, 2, 3]), torch.tensor([1, 5, 4]))",
    "close_py_float": "assert_close(1.0, 1.1)",
    "close_py_int": "assert_close(1, 2)",
    "close_dtype": "assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.], "
                   "dtype=torch.float64))",
    "close_dtype_off": "assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.], "
                       "dtype=torch.float64), check_dtype=False)",
    "close_shape": "assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2., 3.]))",
    "close_nan": "assert_close(torch.tensor([1., float('nan')]), torch.tensor([1., float('nan')]))",
    "close_nan_eq": "assert_close(torch.tensor([1., float('nan')]), "
                    "torch.tensor([1., float('nan')]), equal_nan=True)",
    "close_list": "assert_close([torch.tensor(1.), torch.tensor(2.)], "
                  "[torch.tensor(1.), torch.tensor(2.5)])",
    "close_dict": "assert_close({'a': torch.tensor(1.)}, {'a': torch.tensor(2.)})",
    "close_tensor_list": "assert_close(torch.tensor([1., 2.]), [1., 2.])",
    "close_rtol_only": "assert_close(torch.tensor([1.]), torch.tensor([1.]), rtol=1e-3)",
    "close_0d": "assert_close(torch.tensor(1.), torch.tensor(1.5))",
    "close_numpy": "assert_close(np.array([1., 2.]), np.array([1., 2.5]))",
    "close_msg": "assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.5]), msg='custom')",
    "close_zero_expected": "assert_close(torch.tensor([0., 2.]), torch.tensor([1., 0.]))",
    "close_within": "assert_close(torch.tensor([1., 2.]), torch.tensor([1., 2.000001]))",
    "close_tol": "assert_close(torch.tensor([1.]), torch.tensor([1.1]), rtol=0.2, atol=0.0)",
    "eq_tensor_intlist": "tc.assertEqual(torch.tensor([1, 2]), [1, 2])",
    "eq_float_intlist": "tc.assertEqual(torch.tensor([1., 2.]), [1, 2])",
    "eq_dtype": "tc.assertEqual(torch.tensor([1., 2.]), torch.tensor([1., 2.], "
                "dtype=torch.float64))",
    "eq_dtype_off": "tc.assertEqual(torch.tensor([1., 2.]), torch.tensor([1., 2.], "
                    "dtype=torch.float64), exact_dtype=False)",
    "eq_tensor_number": "tc.assertEqual(torch.tensor(3.), 3)",
    "eq_near": "tc.assertEqual(torch.tensor([1., 2.]), torch.tensor([1., 2.001]))",
    "eq_atol": "tc.assertEqual(torch.tensor([1., 2.]), torch.tensor([1., 2.001]), "
               "atol=1e-2, rtol=0)",
    "eq_msg": "tc.assertEqual(torch.tensor([1., 2.]), torch.tensor([1., 2.001]), msg='hello')",
    "eq_numbers": "tc.assertEqual(1, 1.0)",
    "eq_ints": "tc.assertEqual(3, 4)",
    "eq_strings": "tc.assertEqual('a', 'b')",
    "eq_list_tuple": "tc.assertEqual([1, 2], (1, 2))",
    "eq_size": "tc.assertEqual(torch.Size([2, 3]), (2, 3))",
    "eq_nan": "tc.assertEqual(torch.tensor([1., float('nan')]), torch.tensor([1., float('nan')]))",
    "eq_numpy64": "tc.assertEqual(torch.tensor([1., 2.]), np.array([1., 2.]))",
    "eq_numpy32": "tc.assertEqual(torch.tensor([1., 2.]), np.array([1., 2.], dtype=np.float32))",
    "eq_seq_tensors": "tc.assertEqual([torch.tensor(1.), torch.tensor(2.)], "
                      "[torch.tensor(1.), torch.tensor(2.)])",
    "ne_differ": "tc.assertNotEqual(torch.tensor([1., 2.]), torch.tensor([1., 2.1]))",
    "ne_same": "tc.assertNotEqual(torch.tensor([1., 2.]), torch.tensor([1., 2.]))",
    "allclose": "assert torch.allclose(torch.tensor([1., 2.]), torch.tensor([1., 2.00001]))",
    "allclose_not": "assert not torch.allclose(torch.tensor([1., 2.]), torch.tensor([1., 2.1]))",
    "allclose_atol": "assert torch.allclose(torch.tensor([1., 2.]), torch.tensor([1., 2.1]), "
                     "atol=0.2)",
    "allclose_dtype": "torch.allclose(torch.tensor([1., 2.]), torch.tensor([1., 2.], "
                      "dtype=torch.float64))",
    "allclose_broadcast": "assert not torch.allclose(torch.tensor([1., 2.]), torch.tensor([1.]))",
    "isclose_nan": "assert torch.isclose(torch.tensor([1., float('nan')]), "
                   "torch.tensor([1.1, float('nan')]), equal_nan=True).tolist() == [False, True]",
    "isclose_inf": "assert torch.isclose(torch.tensor([float('inf'), 1.]), "
                   "torch.tensor([float('inf'), float('inf')])).tolist() == [True, False]",
    "isclose_int": "assert torch.isclose(torch.tensor([1, 2]), "
                   "torch.tensor([1, 3])).tolist() == [True, False]",
    "isclose_dtype": "torch.isclose(torch.tensor([1, 2]), torch.tensor([1., 2.]))",
}

TF_CASES = {
    "close_broadcast": "t.assertAllClose(np.ones(3), 1.0)",
    "close_list": "t.assertAllClose([1.0, 2.0], [1.0, 2.1])",
    "close_dict": "t.assertAllClose({'a': 1.0, 'b': [1., 2.]}, {'a': 1.0, 'b': [1., 2.]})",
    "close_dict_keys": "t.assertAllClose({'a': 1.0}, {'b': 1.0})",
    "close_ragged": "t.assertAllClose([np.ones(2), np.ones(3)], [np.ones(2), np.ones(3)])",
    "close_nan": "t.assertAllClose(np.nan, np.nan)",
    "close_tensor": "t.assertAllClose(tf.constant([1.0, 2.0]) * 2.0, [2.0, 4.0])",
    "close_tensor_tol": "t.assertAllClose(tf.constant([1.0]), [1.0000005])",
    "equal_differ": "t.assertAllEqual([1, 2], [1, 3])",
    "equal_broadcast": "t.assertAllEqual(np.ones(3), 1)",
    "equal_tensor": "t.assertAllEqual(tf.constant([1, 2]) + 1, [2, 3])",
    "near": "t.assertNear(1.0, 1.1, 0.01)",
    "array_near": "t.assertArrayNear([1.0, 2.0], [1.0, 2.001], 0.01)",
    "greater": "t.assertAllGreater([1, 2], 1)",
    "less": "t.assertAllLess([1, 2], 3)",
    "by_type_half": "t.assertAllCloseAccordingToType(np.float16([1.0]), np.float16([1.0005]))",
    "by_type_double": "t.assertAllCloseAccordingToType(np.float64([1.0]), np.float64([1.0005]))",
    "in_set": "t.assertAllInSet([1, 2], [1, 2, 3])",
    "in_range_open": "t.assertAllInRange([1, 2], 1, 2, open_lower_bound=True)",
    "shape_equal": "t.assertShapeEqual(np.ones((2, 3)), tf.zeros([2, 3]))",
    "shape_differ": "t.assertShapeEqual(np.ones((2, 3)), tf.zeros([3, 2]))",
    "not_all_close": "t.assertNotAllClose([1.0, 2.0], [1.0, 2.0])",
    "dtype_equal": "t.assertDTypeEqual(np.ones(2, np.float32), np.float32)",
}


def _outcome(code: str, scope: dict):
    try:
        exec(code, dict(scope))  # noqa: S102 - the recorded cases above
        return "OK"
    except Exception as e:  # noqa: BLE001 - every outcome is recorded
        return [type(e).__name__, str(e)]


def main() -> None:
    import numpy as np
    import torch
    from torch.testing import assert_close

    expecttest = types.ModuleType("expecttest")  # PyTorch's test utils want it; unused here
    expecttest.TestCase = unittest.TestCase
    sys.modules.setdefault("expecttest", expecttest)
    import tensorflow.compat.v1 as tf
    from torch.testing._internal.common_utils import TestCase as TorchCase
    tf.disable_eager_execution()

    class T(tf.test.TestCase):
        def runTest(self):  # noqa: N802
            pass

    torch_scope = {"torch": torch, "np": np, "assert_close": assert_close, "tc": TorchCase()}
    out = {"versions": {"torch": torch.__version__, "tensorflow": tf.__version__},
           "torch": {}, "tf": {}}
    for name, code in TORCH_CASES.items():
        out["torch"][name] = {"code": code, "outcome": _outcome(code, torch_scope)}
    for name, code in TF_CASES.items():
        tf.reset_default_graph()
        t = T()
        t.setUp()
        with t.cached_session():
            out["tf"][name] = {"code": code,
                               "outcome": _outcome(code, {"tf": tf, "np": np, "t": t})}
        t.tearDown()
    path = Path(__file__).with_name("testing.json")
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
