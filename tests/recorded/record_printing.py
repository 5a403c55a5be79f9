"""Record how PyTorch prints tensors into ``printing.json`` (read by tests/test_printing.py).

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_printing.py

Each case is a few lines of PyTorch code (``torch`` and ``np`` in scope) that leave the text
to compare in ``out``; the test runs the same lines with ``torch`` bound to kernelgraph.
Print options are reset to PyTorch's defaults before each case.
"""

from __future__ import annotations

import json
from pathlib import Path

R = "np.random.RandomState(0)"
CASES = {
    # 0-d tensors
    "scalar_float": "out = repr(torch.tensor(3.0))",
    "scalar_frac": "out = repr(torch.tensor(0.123456))",
    "scalar_small": "out = repr(torch.tensor(-1.5e-5))",
    "scalar_big": "out = repr(torch.tensor(1e10))",
    "scalar_int": "out = repr(torch.tensor(3))",
    "scalar_bool": "out = repr(torch.tensor(True))",
    "scalar_nan": "out = repr(torch.tensor(float('nan')))",
    "scalar_inf": "out = repr(torch.tensor(float('-inf')))",
    "scalar_double": "out = repr(torch.tensor(2.5, dtype=torch.float64))",
    "scalar_zero": "out = repr(torch.tensor(0.0))",
    "scalar_negzero": "out = repr(torch.tensor(-0.0))",
    # vectors
    "vec_int_mode": "out = repr(torch.tensor([1.0, 2.0, -3.0]))",
    "vec_frac": "out = repr(torch.tensor([0.12345, 2.0]))",
    "vec_mixed": "out = repr(torch.tensor([1.0, 2.5, -3.25, 100.0]))",
    "vec_sci_small": "out = repr(torch.tensor([1e-5, 1.0]))",
    "vec_sci_ratio": "out = repr(torch.tensor([0.5, 600.0]))",
    "vec_sci_ratio2": "out = repr(torch.tensor([0.5, 501.0]))",
    "vec_sci_big": "out = repr(torch.tensor([1e9, 2e9]))",
    "vec_sci_int": "out = repr(torch.tensor([1.0, 1e9]))",
    "vec_zeros": "out = repr(torch.tensor([0.0, 0.0, -0.0]))",
    "vec_nonfinite": "out = repr(torch.tensor([float('nan'), 1.0, float('inf')]))",
    "vec_nonfinite_frac": "out = repr(torch.tensor([float('nan'), 1.5, float('-inf')]))",
    "vec_only_nan": "out = repr(torch.tensor([float('nan'), float('inf')]))",
    "vec_int": "out = repr(torch.tensor([1, -20, 300]))",
    "vec_int32": "out = repr(torch.tensor([1, -20, 300], dtype=torch.int32))",
    "vec_bool": "out = repr(torch.tensor([True, False, True]))",
    "vec_double": "out = repr(torch.tensor([0.1, 0.2], dtype=torch.float64))",
    "vec_round": "out = repr(torch.tensor([0.00005, 0.99995, 1.23455]))",
    "vec_wrap": f"out = repr(torch.tensor({R}.randn(30).astype(np.float32)))",
    "vec_wrap_int": "out = repr(torch.tensor(np.arange(100) * 37))",
    "vec_summary": "out = repr(torch.tensor(np.arange(2000.0).astype(np.float32) / 7))",
    "vec_summary_int": "out = repr(torch.tensor(np.arange(1001)))",
    # empty
    "empty_float": "out = repr(torch.tensor([]))",
    "empty_int": "out = repr(torch.tensor(np.zeros(0, np.int64)))",
    "empty_2d": "out = repr(torch.zeros(0, 3))",
    "empty_2d_double": "out = repr(torch.tensor(np.zeros((2, 0))))",
    # matrices and more
    "mat": f"out = repr(torch.tensor({R}.randn(3, 4).astype(np.float32)))",
    "mat_int_mode": "out = repr(torch.tensor([[1.0, -2.0], [30.0, 4.0]]))",
    "mat_sci": f"out = repr(torch.tensor({R}.randn(2, 3).astype(np.float32) * 1e-6))",
    "mat_double": f"out = repr(torch.tensor({R}.randn(2, 3)))",
    "mat_int": "out = repr(torch.tensor([[1, 2], [3, 40]]))",
    "mat_wide": f"out = repr(torch.tensor({R}.randn(3, 12).astype(np.float32)))",
    "cube": f"out = repr(torch.tensor({R}.randn(2, 3, 4).astype(np.float32)))",
    "four_d": "out = repr(torch.tensor(np.arange(24.0).reshape(1, 2, 3, 4).astype(np.float32)))",
    "mat_summary": "out = repr(torch.tensor(np.arange(1600.0).reshape(40, 40).astype(np.float32)))",
    "cube_summary": "out = repr(torch.tensor(np.arange(3000).reshape(10, 10, 30)))",
    "ones": "out = repr(torch.ones(2, 3))",
    "str_is_repr": f"out = str(torch.tensor({R}.randn(2, 2).astype(np.float32)))",
    # autograd suffixes
    "requires_grad": "out = repr(torch.tensor([1.0, 2.0], requires_grad=True))",
    "requires_grad_double": "out = repr(torch.tensor([1.5], dtype=torch.float64, "
                            "requires_grad=True))",
    "grad_add": "a = torch.tensor([1.0, 2.0], requires_grad=True)\nout = repr(a + a)",
    "grad_mul": "a = torch.tensor([1.0, 2.0], requires_grad=True)\nout = repr(a * 2)",
    "grad_sub": "a = torch.tensor([1.0, 2.0], requires_grad=True)\nout = repr(a - 1)",
    "grad_div": "a = torch.tensor([1.0, 2.0], requires_grad=True)\nout = repr(a / 3)",
    "grad_pow": "a = torch.tensor([1.0, 2.0], requires_grad=True)\nout = repr(a ** 2)",
    "grad_neg": "a = torch.tensor([1.0, 2.0], requires_grad=True)\nout = repr(-a)",
    "grad_sum": "a = torch.tensor([1.0, 2.0], requires_grad=True)\nout = repr(a.sum())",
    "grad_sum_dim": "a = torch.ones(2, 2, requires_grad=True)\nout = repr(a.sum(0))",
    "grad_mean": "a = torch.tensor([1.0, 2.0], requires_grad=True)\nout = repr(a.mean())",
    "grad_mm": "a = torch.ones(2, 2, requires_grad=True)\nout = repr(a @ a)",
    "grad_relu": "a = torch.tensor([-1.0, 2.0], requires_grad=True)\nout = repr(a.relu())",
    "grad_tanh": "a = torch.tensor([-1.0, 2.0], requires_grad=True)\nout = repr(a.tanh())",
    "grad_exp": "a = torch.tensor([-1.0, 2.0], requires_grad=True)\nout = repr(a.exp())",
    "grad_sigmoid": "a = torch.tensor([-1.0, 2.0], requires_grad=True)\n"
                    "out = repr(a.sigmoid())",
    "grad_view": "a = torch.ones(2, 2, requires_grad=True)\nout = repr(a.view(4))",
    "grad_wrap": "a = torch.tensor(np.linspace(-1, 1, 12).astype(np.float32), "
                 "requires_grad=True)\nout = repr(a * 3)",
    "grad_wrap_line": "a = torch.tensor(np.linspace(-1, 1, 9).astype(np.float32), "
                      "requires_grad=True)\nout = repr(a * 3)",
    "grad_double_mat": "a = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)\n"
                       "out = repr(a * 0.5)",
    "grad_fn_repr": "a = torch.tensor([1.0], requires_grad=True)\nout = repr((a + a).grad_fn)",
    # formatting a number
    "format_scalar": "out = f'{torch.tensor(2.0 / 3):.3f}'",
    "format_empty_spec": "out = f'{torch.tensor([1.0, 2.0])}'",
    # print options
    "opt_precision": "torch.set_printoptions(precision=2)\nout = repr(torch.tensor([1.12345]))",
    "opt_precision_sci": "torch.set_printoptions(precision=2)\n"
                         "out = repr(torch.tensor([1e-6, 1.0]))",
    "opt_sci_off": "torch.set_printoptions(sci_mode=False)\n"
                   "out = repr(torch.tensor([1e-6, 1.0]))",
    "opt_sci_on": "torch.set_printoptions(sci_mode=True)\nout = repr(torch.tensor([2.0, 1.0]))",
    "opt_threshold": "torch.set_printoptions(threshold=5)\nout = repr(torch.tensor(np.arange(10)))",
    "opt_linewidth": "torch.set_printoptions(linewidth=40)\n"
                     "out = repr(torch.tensor(np.arange(20.0).astype(np.float32) / 3))",
    "opt_edgeitems": "torch.set_printoptions(threshold=5, edgeitems=1)\n"
                     "out = repr(torch.tensor(np.arange(20.0).reshape(4, 5).astype(np.float32)))",
    "opt_profile_short": "torch.set_printoptions(profile='short')\n"
                         "out = repr(torch.tensor([1.12345, 2.0]))",
    "opt_profile_full": "torch.set_printoptions(profile='full')\n"
                        "out = repr(torch.tensor(np.arange(1200))[-3:])",
}


def main() -> None:
    import numpy as np
    import torch

    out: dict = {"torch": torch.__version__, "cases": {}}
    for name, code in CASES.items():
        torch.set_printoptions(profile="default")
        scope = {"torch": torch, "np": np}
        exec(code, scope)  # noqa: S102 - our own case text
        out["cases"][name] = {"code": code, "out": scope["out"]}
    torch.set_printoptions(profile="default")
    path = Path(__file__).with_name("printing.json")
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
