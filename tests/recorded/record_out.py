"""Record PyTorch's ``out=`` rules into ``out.json`` (read by tests/test_out.py): which result
dtypes may be written into which ``out`` dtypes (``torch.can_cast``), the values written,
and when autograd refuses ``out=``.

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_out.py

Each case is a function of the ``torch`` module, written once against PyTorch's API; the
tests run the same function with ``kernelgraph`` as ``torch``. A case is recorded as
``["ok", report]`` or ``[error type name, message]``; ``report`` holds the values in ``out``,
its dtype, whether the call returned ``out`` itself, and ``out``'s autograd state.
"""

from __future__ import annotations

import json
from pathlib import Path

CASES = {}
#: The dtypes whose ``can_cast`` table is recorded (by their name in both frameworks).
DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def report(torch, returned, out) -> dict:
    """What a caller can see of an ``out=`` call: the values and dtype of ``out``, whether the
    call returned ``out`` itself, and whether autograd now tracks ``out``."""
    return {"values": out.tolist(), "dtype": str(out.dtype).replace("torch.", ""),
            "returned_out": returned is out, "requires_grad": out.requires_grad,
            "grad_fn": out.grad_fn is not None}


def _binary(op, a_dtype, a_values, out_dtype, b_values=None):
    """A case: ``torch.<op>(a, b, out=o)`` with ``a`` and ``b`` of ``a_dtype``."""
    def run(torch):
        a = torch.tensor(a_values, dtype=getattr(torch, a_dtype))
        b = torch.tensor(b_values if b_values is not None else a_values,
                         dtype=getattr(torch, a_dtype))
        out = torch.zeros(len(a_values), dtype=getattr(torch, out_dtype))
        return report(torch, getattr(torch, op)(a, b, out=out), out)
    return run


# -- the casting rule: result dtype -> out dtype (PyTorch: torch.can_cast decides) ------------
for _name, _args in {
    "add_float32_into_int64": ("add", "float32", [1.5, 2.5], "int64"),
    "add_float32_into_int32": ("add", "float32", [1.5, 2.5], "int32"),
    "add_float32_into_bool": ("add", "float32", [1.5, 0.0], "bool"),
    "add_float32_into_float64": ("add", "float32", [1.5, 2.5], "float64"),
    "add_float64_into_float32": ("add", "float64", [1.5, 2.5], "float32"),
    "add_int64_into_float32": ("add", "int64", [1, 2], "float32"),
    "add_int64_into_float64": ("add", "int64", [1, 2], "float64"),
    "add_int64_into_int32": ("add", "int64", [1, 2], "int32"),
    "add_int32_into_int64": ("add", "int32", [1, 2], "int64"),
    "add_int64_into_bool": ("add", "int64", [1, 0], "bool"),
    "add_bool_into_float32": ("add", "bool", [True, False], "float32"),
    "add_bool_into_int64": ("add", "bool", [True, False], "int64"),
    "add_bool_into_bool": ("add", "bool", [True, False], "bool"),
    "mul_float32_into_int64": ("mul", "float32", [1.5, 2.5], "int64"),
    "sub_float64_into_int32": ("sub", "float64", [1.5, 2.5], "int32", [0.5, 0.5]),
    "eq_float32_into_float32": ("eq", "float32", [1.5, 2.5], "float32", [1.5, 0.0]),
    "eq_float32_into_int64": ("eq", "float32", [1.5, 2.5], "int64", [1.5, 0.0]),
}.items():
    CASES[_name] = _binary(*_args)


@case
def add_int64_python_float_into_int64(torch):
    x = torch.tensor([1, 2])
    out = torch.zeros(2, dtype=torch.int64)
    return report(torch, torch.add(x, 0.5, out=out), out)


@case
def exp_int64_into_int64(torch):
    out = torch.zeros(2, dtype=torch.int64)
    return report(torch, torch.exp(torch.tensor([0, 1]), out=out), out)


@case
def exp_float32_into_float64(torch):
    out = torch.zeros(2, dtype=torch.float64)
    return report(torch, torch.exp(torch.tensor([0.0, 1.0]), out=out), out)


@case
def add_int64_wraps_into_int32(torch):
    # int64 -> int32 is a cast PyTorch allows (same kind): the value wraps as C++ casts it.
    out = torch.zeros(1, dtype=torch.int32)
    return report(torch, torch.add(torch.tensor([2 ** 31]), torch.tensor([5]), out=out), out)


# -- autograd: out= is never recorded ---------------------------------------------------------
@case
def add_input_requires_grad(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = torch.zeros(2)
    return report(torch, torch.add(x, x, out=out), out)


@case
def mul_input_requires_grad(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = torch.zeros(2)
    return report(torch, torch.mul(x, 2.0, out=out), out)


@case
def add_input_requires_grad_no_grad(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = torch.zeros(2)
    with torch.no_grad():
        returned = torch.add(x, x, out=out)
    return report(torch, returned, out)


@case
def add_out_requires_grad(torch):
    out = torch.zeros(2, requires_grad=True)
    return report(torch, torch.add(torch.ones(2), torch.ones(2), out=out), out)


@case
def add_out_requires_grad_no_grad(torch):
    out = torch.zeros(2, requires_grad=True)
    with torch.no_grad():
        returned = torch.add(torch.ones(2), torch.ones(2), out=out)
    return report(torch, returned, out)


@case
def add_out_nonleaf_requires_grad(torch):
    w = torch.ones(2, requires_grad=True)
    out = w * 1
    return report(torch, torch.add(torch.ones(2), torch.ones(2), out=out), out)


@case
def eq_input_requires_grad(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    out = torch.zeros(2, dtype=torch.bool)
    return report(torch, torch.eq(x, x, out=out), out)


@case
def add_casting_checked_before_autograd(torch):
    x = torch.tensor([1.5, 2.5], requires_grad=True)
    out = torch.zeros(2, dtype=torch.int64)
    return report(torch, torch.add(x, x, out=out), out)


# -- matmul (written by kernelgraph's linalg, a composite of ops) ----------------------------
@case
def matmul_float32_into_float32(torch):
    out = torch.zeros(2, 2)
    return report(torch, torch.matmul(torch.ones(2, 3), torch.ones(3, 2), out=out), out)


@case
def matmul_vector_into_float32(torch):
    out = torch.zeros(2)
    return report(torch, torch.matmul(torch.ones(2, 3), torch.ones(3), out=out), out)


@case
def matmul_input_requires_grad(torch):
    x = torch.ones(2, 3, requires_grad=True)
    out = torch.zeros(2, 2)
    return report(torch, torch.matmul(x, torch.ones(3, 2), out=out), out)


@case
def matmul_input_requires_grad_no_grad(torch):
    x = torch.ones(2, 3, requires_grad=True)
    out = torch.zeros(2, 2)
    with torch.no_grad():
        returned = torch.matmul(x, torch.ones(3, 2), out=out)
    return report(torch, returned, out)


@case
def matmul_out_requires_grad(torch):
    out = torch.zeros(2, 2, requires_grad=True)
    return report(torch, torch.matmul(torch.ones(2, 3), torch.ones(3, 2), out=out), out)


@case
def matmul_float32_into_int64(torch):
    out = torch.zeros(2, 2, dtype=torch.int64)
    return report(torch, torch.matmul(torch.ones(2, 3), torch.ones(3, 2), out=out), out)


@case
def matmul_float32_into_float64(torch):
    out = torch.zeros(2, 2, dtype=torch.float64)
    return report(torch, torch.matmul(torch.ones(2, 3), torch.ones(3, 2), out=out), out)


def run(torch, name):
    """``["ok", report]`` or ``[error type name, message]`` of case ``name`` in ``torch``."""
    try:
        return ["ok", CASES[name](torch)]
    except Exception as e:  # noqa: BLE001 - an error is the recorded outcome
        return [type(e).__name__, str(e)]


def main():
    import torch

    can_cast = {a: {b: torch.can_cast(getattr(torch, a), getattr(torch, b)) for b in DTYPES}
                for a in DTYPES}
    results = {name: run(torch, name) for name in CASES}
    out = {"torch": torch.__version__, "can_cast": can_cast, "cases": results}
    path = Path(__file__).with_name("out.json")
    path.write_text(json.dumps(out, indent=1, allow_nan=True) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(results)} cases)")


if __name__ == "__main__":
    main()
