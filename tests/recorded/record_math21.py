"""Record PyTorch's math, reductions and products (issue 21) into ``math21.json``, read by
tests/test_math21.py.

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_math21.py

Each case is one Python expression over the module name ``torch`` (and ``x``, ``i``, ``b``
... defined by :data:`SETUP`); the test evaluates the same text with ``torch`` bound to
``kernelgraph``, so a case is written once for both. A result is recorded as its kind
(tensor, named tuple, tuple, number, error), dtype, shape and values; an error as its type
and first line.
"""

from __future__ import annotations

import json
from pathlib import Path

SETUP = """
x = torch.tensor([[1.0, 3.0, 3.0], [2.0, -0.5, 2.0]])
v = torch.tensor([0.3, -0.7, 1.5, -2.5, 0.5, 2.5, -0.4, 1.49])
p = torch.tensor([0.25, 0.5, 1.0, 2.0, 7.5])
i = torch.tensor([[1, 5, -3], [5, 2, 0]])
b = torch.tensor([[True, False], [True, True]])
d = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
n = torch.tensor([[1.0, float("nan"), 0.0], [4.0, 2.0, 4.0]])
"""


def _grad(expr: str, data: str = "[[1.0, 3.0, 3.0], [2.0, -0.5, 2.0]]") -> str:
    """A case computing the gradient of ``sum(f * f + f)``, ``f = expr(t)``, with respect to
    ``t`` (an upstream gradient ``2f + 1`` that differs from element to element)."""
    return (f"(lambda t: torch.autograd.grad(((lambda f: (f * f + f).sum())({expr})), t)[0])"
            f"(torch.tensor({data}, requires_grad=True))")


CASES: dict[str, str] = {
    # elementwise math: values and dtypes (integers compute in float32, rounding keeps them)
    **{f"{f}_float": f"torch.{f}(v)" for f in (
        "sin", "cos", "tan", "atan", "sinh", "cosh", "floor", "ceil", "round", "trunc",
        "reciprocal", "expm1", "abs", "sign", "square", "erf")},
    **{f"{f}_pos": f"torch.{f}(p)" for f in ("rsqrt", "log2", "log10", "log1p", "sqrt")},
    "asin": "torch.asin(torch.tensor([-1.0, -0.5, 0.0, 0.7, 1.0, 1.5]))",
    "acos": "torch.acos(torch.tensor([-1.0, -0.5, 0.0, 0.7, 1.0, 1.5]))",
    **{f"{f}_int": f"torch.{f}(i)" for f in (
        "sin", "floor", "ceil", "round", "trunc", "reciprocal", "abs", "sign", "square",
        "log2")},
    **{f"{f}_bool": f"torch.{f}(b)" for f in ("floor", "round", "sin", "sign", "square")},
    "round_decimals": "torch.round(v * 3.7, decimals=2)",
    "round_decimals_neg": "torch.round(v * 1000, decimals=-2)",
    "round_decimals_int": "torch.round(i, decimals=1)",
    "floor_divide": "torch.floor_divide(v, torch.tensor(0.3))",
    "floordiv_int": "torch.floor_divide(i, 2)",
    "floordiv_neg": "torch.floor_divide(torch.tensor([7, -7]), torch.tensor([2, 2]))",
    "floordiv_zero": "torch.floor_divide(torch.tensor([1.0, -1.0, 0.0]), 0)",
    "floordiv_int_zero": "torch.floor_divide(torch.tensor([7]), 0)",
    "floordiv_bool": "torch.floor_divide(b, b)",
    "remainder": "torch.remainder(v, -0.75)", "mod_int": "torch.remainder(i, 3)",
    "mod_neg": "torch.remainder(i, -4)",
    "remainder_float_int": "torch.remainder(torch.tensor([5, 7]), 2.5)",
    "grad_remainder": _grad("torch.remainder(t, 1.25)"),
    "grad_remainder_y": _grad("torch.remainder(torch.tensor([4.0, -5.0, 7.0]), t)"),
    "round_halves": "torch.round(torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.4]))",
    "atan2": ("torch.atan2(torch.tensor([1.0, -1.0, 0.0, 2.0]), "
              "torch.tensor([0.0, -2.0, -1.0, 3.0]))"),
    "atan2_int": "torch.atan2(torch.tensor([1, 2]), torch.tensor([1, 1]))",
    "pow_tensors": "torch.pow(p, torch.tensor([2.0, 0.5, 3.0, -1.0, 0.0]))",
    "pow_number_base": "torch.pow(2, torch.tensor([3.0, -1.0, 0.5]))",
    "clamp_min": "torch.clamp(v, min=0.0)", "clamp_max": "torch.clamp(i, max=2)",
    "clip_both": "torch.clip(v, -0.5, 0.5)",
    "clamp_tensor": ("torch.clamp(torch.tensor([1.0, 5.0, -3.0]), "
                     "min=torch.tensor([2.0, 2.0, 0.0]))"),
    # gradients
    **{f"grad_{f}": _grad(f"torch.{f}(t)") for f in (
        "sin", "cos", "tan", "atan", "sinh", "cosh", "floor", "round", "expm1", "sign",
        "abs", "erf")},
    "grad_asin": _grad("torch.asin(t / 4)"), "grad_acos": _grad("torch.acos(t / 4)"),
    "grad_rsqrt": _grad("torch.rsqrt(t + 1)"), "grad_log2": _grad("torch.log2(t + 1)"),
    "grad_log10": _grad("torch.log10(t + 1)"), "grad_log1p": _grad("torch.log1p(t)"),
    "grad_reciprocal": _grad("torch.reciprocal(t)"),
    "grad_pow_base": _grad("torch.pow(t + 1, torch.tensor([2.0, 0.5, 3.0]))"),
    "grad_pow_exponent": _grad("torch.pow(torch.tensor([2.0, 0.5, 3.0]), t)"),
    "grad_atan2_y": _grad("torch.atan2(t, torch.tensor([1.0, -2.0, 0.5]))"),
    "grad_atan2_x": _grad("torch.atan2(torch.tensor([1.0, -2.0, 0.5]), t)"),
    "grad_clamp": _grad("torch.clamp(t, min=0.0, max=2.5)"),
    # max and min: a tensor, a named tuple with dim, elementwise with a tensor
    "max_all": "torch.max(x)", "min_all": "torch.min(x)", "max_int": "torch.max(i)",
    "max_dim": "torch.max(x, 1)", "max_dim_kw": "torch.max(x, dim=0, keepdim=True)",
    "min_dim": "torch.min(x, 1)", "min_dim_neg": "torch.min(i, -2)",
    "max_dim_nan": "torch.max(n, 1)", "min_dim_nan": "torch.min(n, 1)",
    "max_other": "torch.max(x, torch.tensor([2.0, 2.0, 2.0]))",
    "min_other": "torch.min(x, torch.tensor([[0.0], [5.0]]))",
    "max_bool": "torch.max(b)", "amax": "torch.amax(x, (0, 1))", "amin": "torch.amin(x, 1)",
    "grad_max_all": _grad("torch.max(t)"), "grad_min_all": _grad("torch.min(t)"),
    "grad_max_dim": _grad("torch.max(t, 1).values"),
    "grad_max_dim0": _grad("torch.max(t, 0, keepdim=True)[0]"),
    "grad_max_tie": _grad("torch.max(t)", "[2.0, 2.0, 1.0]"),
    "grad_min_dim": _grad("torch.min(t, dim=1).values"),
    "grad_amax": _grad("torch.amax(t, 1)"),
    "argmax": "torch.argmax(x)", "argmax_dim": "torch.argmax(x, dim=1)",
    "argmax_keepdim": "torch.argmax(x, 1, keepdim=True)",
    "argmax_keepdim_all": "torch.argmax(x, keepdim=True)",
    "argmin": "torch.argmin(x)", "argmin_dim": "torch.argmin(i, 0)",
    "argmin_nan": "torch.argmin(n, 1)", "argmax_nan": "torch.argmax(n, 1)",
    # sum, mean, prod, std, var, all, any
    "sum_all": "torch.sum(x)", "sum_int": "torch.sum(i)", "sum_bool": "torch.sum(b)",
    "sum_dims": "torch.sum(torch.ones(2, 3, 4), (0, 2))",
    "sum_list": "torch.sum(torch.ones(2, 3, 4), dim=[2, 0], keepdim=True)",
    "sum_dtype": "torch.sum(i, dtype=torch.float32)",
    "sum_dtype64": "torch.sum(x, 1, dtype=torch.float64)",
    "mean_all": "torch.mean(x)", "mean_dims": "torch.mean(x, (0, 1), keepdim=True)",
    "mean_int": "torch.mean(i)", "mean_int_dtype": "torch.mean(i, dtype=torch.float64)",
    "mean_float64": "torch.mean(d, 0)",
    "prod_all": "torch.prod(x)", "prod_dim": "torch.prod(x, 1)", "prod_int": "torch.prod(i)",
    "prod_bool": "torch.prod(b)",
    "grad_prod": _grad("torch.prod(t)"),
    "grad_prod_zero": _grad("torch.prod(t)", "[2.0, 0.0, 3.0]"),
    "grad_prod_zeros": _grad("torch.prod(t)", "[0.0, 2.0, 0.0]"),
    "grad_prod_dim": _grad("torch.prod(t, 1)", "[[1.0, 0.0, 3.0], [2.0, 4.0, -1.0]]"),
    "std": "torch.std(x)", "std_dim": "torch.std(x, 1)",
    "std_biased": "torch.std(x, unbiased=False)", "std_legacy": "torch.std(x, 0, True, True)",
    "std_correction": "torch.std(x, 1, correction=0)",
    "var": "torch.var(x)", "var_dim": "torch.var(x, dim=1, keepdim=True)",
    "var_biased": "torch.var(x, 0, unbiased=False)",
    "var_one": "torch.var(torch.tensor([3.0]))",
    "std_ints_as_floats": "torch.std(torch.tensor([1.0, 5.0, -3.0]))",
    "std_int_refused": "torch.std(i)",
    "var_mean": "torch.var_mean(x, 1)", "std_mean": "torch.std_mean(x)",
    "grad_std": _grad("torch.std(t)"), "grad_var_dim": _grad("torch.var(t, 1)"),
    "grad_std_biased": _grad("torch.std(t, 0, unbiased=False)"),
    "all": "torch.all(x)", "all_dim": "torch.all(i, 1)", "any": "torch.any(b)",
    "any_dim": "torch.any(b, dim=0)", "all_bool": "torch.all(b, 1, keepdim=True)",
    "all_nan": "torch.all(n)",
    "cumsum": "torch.cumsum(x, 1)", "cumsum_int": "torch.cumsum(i, dim=0)",
    "cumsum_bool": "torch.cumsum(b, -1)", "cumsum_dtype": "torch.cumsum(i, 1, dtype=torch.float64)",
    "grad_cumsum": _grad("torch.cumsum(t, 1)"),
    "norm": "torch.norm(x)", "norm_dim": "torch.norm(x, dim=1)",
    "norm_p1": "torch.norm(x, p=1)",
    "grad_norm": _grad("torch.norm(t)"),
    # products
    "mm": "torch.mm(x, torch.ones(3, 2))",
    "mm_vector": "torch.mm(torch.ones(3), torch.ones(3, 2))",
    "mm_dtypes": "torch.mm(x, torch.ones(3, 2, dtype=torch.float64))",
    "bmm": "torch.bmm(torch.ones(4, 2, 3), torch.ones(4, 3, 5))",
    "bmm_rank": "torch.bmm(torch.ones(2, 3), torch.ones(3, 2))",
    "dot": "torch.dot(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0, -5.0, 6.0]))",
    "dot_int": "torch.dot(torch.tensor([1, 2]), torch.tensor([3, 4]))",
    "dot_dtypes": "torch.dot(torch.ones(3), torch.ones(3, dtype=torch.float64))",
    "outer": "torch.outer(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0, 5.0]))",
    "outer_mixed": "torch.outer(torch.tensor([1, 2]), torch.tensor([0.5, 4.0]))",
    "ger": "torch.ger(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))",
    "addmm": "torch.addmm(torch.tensor([1.0, -1.0]), x, torch.ones(3, 2), beta=0.5, alpha=2)",
    "addmm_plain": "torch.addmm(torch.ones(2, 2), x, torch.ones(3, 2))",
    "matmul_vm": "torch.matmul(torch.tensor([1.0, 2.0]), x)",
    "matmul_mv": "torch.matmul(x, torch.tensor([1.0, 2.0, 3.0]))",
    "matmul_vv": "torch.matmul(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))",
    "matmul_bv": "torch.matmul(torch.ones(4, 2, 3), torch.tensor([1.0, 2.0, 3.0]))",
    "matmul_vb": "torch.matmul(torch.tensor([1.0, 2.0]), torch.ones(4, 2, 3))",
    "mv": "torch.mv(x, torch.tensor([1.0, 2.0, 3.0]))",
    "mv_rank": "torch.mv(x, x)",
    # PyTorch's other names, logical ops, NaN tests, logsumexp
    **{f: f"torch.{f}(x, 2.0)" for f in ("eq", "ne", "lt", "le", "gt", "ge", "true_divide")},
    "isnan": "torch.isnan(n)", "isinf": "torch.isinf(torch.tensor([1.0, -float('inf')]))",
    "isfinite": "torch.isfinite(torch.tensor([1.0, float('inf'), float('nan')]))",
    "isnan_int": "torch.isnan(i)",
    "logical_not": "torch.logical_not(i)", "logical_and": "torch.logical_and(i, x)",
    "logical_or": "torch.logical_or(b, torch.tensor([0, 0]))",
    "logical_xor": "torch.logical_xor(i, torch.tensor([[0], [1]]))",
    "logsumexp": "torch.logsumexp(x, 1)", "logsumexp_dims": "torch.logsumexp(x, (0, 1), True)",
    "logsumexp_big": "torch.logsumexp(torch.tensor([1000.0, 1000.0, -float('inf')]), 0)",
    "grad_logsumexp": _grad("torch.logsumexp(t, 1)"),
    "grad_mm": _grad("torch.mm(t, torch.tensor([[1.0], [2.0], [-1.0]]))"),
    "grad_dot": _grad("torch.dot(t, torch.tensor([1.0, 2.0, -1.0]))", "[0.5, 1.5, 2.0]"),
    "grad_outer": _grad("torch.outer(t, torch.tensor([1.0, 2.0]))", "[0.5, 1.5, 2.0]"),
    "grad_matmul_vm": _grad("torch.matmul(t, torch.ones(3, 2))", "[0.5, 1.5, 2.0]"),
}


def encode(value, torch) -> dict:
    """A result as JSON: its kind, and for tensors dtype, shape and values."""
    if isinstance(value, torch.Tensor):
        return {"kind": "tensor", "dtype": str(value.dtype).replace("torch.", ""),
                "shape": list(value.shape), "values": value.detach().tolist()}
    if type(value).__module__ == "torch.return_types":
        return {"kind": "named", "type": type(value).__name__, "repr": repr(value),
                "values": encode(value.values, torch), "indices": encode(value.indices, torch)}
    if isinstance(value, tuple):
        return {"kind": "tuple", "items": [encode(v, torch) for v in value]}
    return {"kind": "number", "value": value}


def run(torch) -> dict:
    scope: dict = {"torch": torch}
    exec(SETUP, scope)  # noqa: S102 - the fixed text above
    out = {}
    for name, expr in CASES.items():
        try:
            value = eval(expr, dict(scope))  # noqa: S307 - the fixed cases above
        except Exception as e:  # noqa: BLE001 - recorded as what the framework raised
            out[name] = {"kind": "error", "type": type(e).__name__,
                         "message": str(e).splitlines()[0]}
            continue
        out[name] = encode(value, torch)
    return out


def main() -> None:
    import torch

    result = {"torch": torch.__version__, "setup": SETUP, "cases": CASES, "results": run(torch)}
    path = Path(__file__).with_name("math21.json")
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(CASES)} cases)")


if __name__ == "__main__":
    main()
