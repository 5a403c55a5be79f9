"""Record PyTorch's type promotion, into ``promotion.json`` (read by
tests/test_shapes_dtypes.py): the dtype and values of add, sub, mul, div, pow and maximum for
every pair of bool, int32, int64, float32 and float64 operands, each a tensor or a Python
scalar, or the error PyTorch raises; and the cases around bools that the table does not
hold (unary ops, reductions, ``where``, ``matmul``, comparisons).

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_promotion.py

``torch.maximum`` takes no Python scalar: a scalar operand is passed as a 0-d tensor of
PyTorch's dtype for it (``torch.tensor(3)``), which promotes exactly as the scalar would
(a 0-d tensor never widens a dimensioned tensor of its own kind).
"""

from __future__ import annotations

import json
from pathlib import Path

DTYPES = ["bool", "int32", "int64", "float32", "float64"]
OPS = ["add", "sub", "mul", "div", "pow", "maximum"]
# Tensor values by kind: x (left operand) and y (right operand). The ints of y are positive,
# so an integer power has an integer answer.
X = {"bool": [True, False, True, False], "int": [3, -2, 0, 5],
     "float": [1.5, -2.0, 0.0, 3.25]}
Y = {"bool": [True, True, False, False], "int": [2, 3, 1, 2],
     "float": [0.5, 2.0, -1.5, 4.0]}
# Python scalars by kind, as the left or the right operand.
SX = {"bool": True, "int": 3, "float": 1.5}
SY = {"bool": True, "int": 3, "float": 2.5}
# Cases beside the table, each computed by the same expression in both frameworks (the
# test holds kernelgraph's): name -> what it computes.
EXTRA = {
    "neg_bool": "-b",
    "abs_bool": "abs(b)",
    "relu_bool": "relu(b)",
    "sign_bool": "sign(b)",
    "exp_bool": "exp(b)",
    "sum_bool": "b.sum()",
    "sum_bool_axis": "b2.sum(0)",
    "mean_bool": "b.mean()",
    "mean_int": "i.mean()",
    "max_bool": "b.max() (torch.amax)",
    "where_bool_bool": "where(b, b, c)",
    "where_bool_int_scalar": "where(b, b, 1)",
    "where_scalars": "where(b, 1.5, 2)",
    "where_int32_scalar": "where(b, i32, 2)",
    "where_bool_scalars": "where(b, True, 2)",
    "matmul_bool": "b2 @ b2",
    "matmul_int32": "i2 @ i2",
    "less_bool": "b < c",
    "equal_bool_int": "b == 1",
    "greater_bool_float": "b > 0.5",
    "pow_int_negative": "i ** -1",
    "pow_bool_scalar_true": "b ** True",
    "add_int32_big_scalar": "i32 + 2**40",
    "add_bool_bool_then_float": "(b + c) * 2.5",
    "square_bool": "square(b)",
    "clip_bool_int": "clamp(b, 0, 1)",
    "clip_int_float": "clamp(i, 0.5, 2.5)",
    "clip_int32_int": "clamp(i32, -1, 2)",
}


def kind(dtype: str) -> str:
    return "bool" if dtype == "bool" else dtype.rstrip("0123456789")


def _result(fn) -> dict:
    import torch

    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - recorded: the tests compare it
        return {"error": {"type": type(e).__name__, "message": str(e).splitlines()[0]}}
    return {"dtype": str(out.dtype).replace("torch.", ""),
            "shape": list(out.shape), "value": out.tolist() if out.dim() else [out.item()]} \
        if isinstance(out, torch.Tensor) else {"value": out}


def main() -> None:
    import numpy as np
    import torch

    dt = {name: getattr(torch, name) for name in DTYPES}

    def tensor(values, dtype):
        return torch.tensor(values, dtype=dt[dtype])

    def apply(op, x, y):
        if op == "maximum":
            x = x if isinstance(x, torch.Tensor) else torch.tensor(x)
            y = y if isinstance(y, torch.Tensor) else torch.tensor(y)
            return torch.maximum(x, y)
        return {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y,
                "div": lambda: x / y, "pow": lambda: x ** y}[op]()

    table = []
    for op in OPS:
        for a in DTYPES:
            for b in DTYPES:
                for form in ("tensor", "scalar", "scalar_left"):
                    if form == "tensor":
                        x, y = tensor(X[kind(a)], a), tensor(Y[kind(b)], b)
                    elif form == "scalar":
                        if b not in ("bool", "int64", "float32"):
                            continue  # a Python scalar has one dtype per kind
                        x, y = tensor(X[kind(a)], a), SY[kind(b)]
                    else:
                        if a not in ("bool", "int64", "float32"):
                            continue
                        x, y = SX[kind(a)], tensor(Y[kind(b)], b)
                    table.append({"op": op, "x": a, "y": b, "form": form,
                                  "torch": _result(lambda op=op, x=x, y=y: apply(op, x, y))})

    b = torch.tensor(X["bool"])
    c = torch.tensor(Y["bool"])
    i = torch.tensor(X["int"])
    i32 = i.to(torch.int32)
    b2 = torch.tensor([[True, False], [True, True]])
    i2 = torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)
    computed = {
        "neg_bool": lambda: -b,
        "abs_bool": lambda: torch.abs(b),
        "relu_bool": lambda: torch.relu(b),
        "sign_bool": lambda: torch.sign(b),
        "exp_bool": lambda: torch.exp(b),
        "sum_bool": lambda: b.sum(),
        "sum_bool_axis": lambda: b2.sum(0),
        "mean_bool": lambda: b.mean(),
        "mean_int": lambda: i.mean(),
        "max_bool": lambda: torch.amax(b),
        "where_bool_bool": lambda: torch.where(b, b, c),
        "where_bool_int_scalar": lambda: torch.where(b, b, 1),
        "where_scalars": lambda: torch.where(b, 1.5, 2),
        "where_int32_scalar": lambda: torch.where(b, i32, 2),
        "where_bool_scalars": lambda: torch.where(b, True, 2),
        "matmul_bool": lambda: b2 @ b2,
        "matmul_int32": lambda: i2 @ i2,
        "less_bool": lambda: b < c,
        "equal_bool_int": lambda: b == 1,
        "greater_bool_float": lambda: b > 0.5,
        "pow_int_negative": lambda: i ** -1,
        "pow_bool_scalar_true": lambda: b ** True,
        "add_int32_big_scalar": lambda: i32 + 2 ** 40,
        "add_bool_bool_then_float": lambda: (b + c) * 2.5,
        "square_bool": lambda: torch.square(b),
        "clip_bool_int": lambda: torch.clamp(b, 0, 1),
        "clip_int_float": lambda: torch.clamp(i, 0.5, 2.5),
        "clip_int32_int": lambda: torch.clamp(i32, -1, 2),
    }
    assert computed.keys() == EXTRA.keys()
    extra = {name: {"computes": EXTRA[name], "torch": _result(fn)}
             for name, fn in computed.items()}
    rec = {"versions": {"torch": torch.__version__, "numpy": np.__version__},
           "x": X, "y": Y, "scalar_x": SX, "scalar_y": SY,
           "table": table, "extra": extra}
    path = Path(__file__).with_name("promotion.json")
    path.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
