"""Record PyTorch's result dtype (or its refusal) for every op the fuzz suite draws, over
kernelgraph's five dtypes and Python scalars, into ``fuzz.json`` (read by tests/fuzzing.py).

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_fuzz.py

A case is keyed ``op(dtype, ...)``: ``add(int32,float32)``, ``add(int32,scalar:float)``,
``add(scalar:int,int32)``. Its entry is ``{"dtype": name}``, or ``{"error": type, "message":
text}`` when PyTorch refuses. A ``NotImplementedError`` (``"abs_cpu" not implemented for
'Bool'``) is a gap in PyTorch's kernels rather than a rule, and the fuzz oracle reads it so.
"""

from __future__ import annotations

import json
from pathlib import Path

DTYPES = ["bool", "int32", "int64", "float32", "float64"]
UNARY = ["neg", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs", "square", "sign"]
BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "equal", "not_equal",
          "less", "less_equal", "greater", "greater_equal"]
SCALARS = {"bool": True, "int": 2, "float": 2.5}


def _torch_ops(torch):
    t = torch
    return {
        "neg": t.neg, "exp": t.exp, "log": t.log, "sqrt": t.sqrt, "tanh": t.tanh,
        "sigmoid": t.sigmoid, "relu": t.relu, "abs": t.abs, "square": t.square,
        "sign": t.sign, "add": t.add, "sub": t.sub, "mul": t.mul, "div": t.div,
        "pow": t.pow, "maximum": t.maximum, "minimum": t.minimum, "equal": t.eq,
        "not_equal": t.ne, "less": t.lt, "less_equal": t.le, "greater": t.gt,
        "greater_equal": t.ge,
    }


def _outcome(fn, *args, **kwargs):
    try:
        out = fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - a refusal is what we record
        return {"error": type(e).__name__, "message": str(e).splitlines()[0][:200]}
    return {"dtype": str(out.dtype).replace("torch.", "")}


def _values(torch, dtype, shape=(3,)):
    base = torch.tensor([1.0, 0.0, 2.0, 3.0] * 64)[:int(torch.tensor(shape).prod())]
    return base.reshape(shape).to(getattr(torch, dtype))


def main() -> None:
    import torch
    import torch.nn.functional as F  # noqa: N812 - PyTorch's own spelling

    ops = _torch_ops(torch)
    # torch.maximum and the comparisons take no number on the left: a 0-d tensor stands in
    # (a "wrapped number" in PyTorch's promotion, as a Python number is).
    left_tensor = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                   "maximum", "minimum")
    cases = {}
    for name in UNARY:
        for d in DTYPES:
            cases[f"{name}({d})"] = _outcome(ops[name], _values(torch, d))
    for name in BINARY:
        for a in DTYPES:
            for b in DTYPES:
                cases[f"{name}({a},{b})"] = _outcome(ops[name], _values(torch, a),
                                                     _values(torch, b))
            for kind, s in SCALARS.items():
                cases[f"{name}({a},scalar:{kind})"] = _outcome(ops[name], _values(torch, a), s)
                left = torch.tensor(s) if name in left_tensor else s
                cases[f"{name}(scalar:{kind},{a})"] = _outcome(ops[name], left,
                                                               _values(torch, a))
    for d in DTYPES:
        x = _values(torch, d, (2, 3))
        img = _values(torch, d, (1, 1, 2, 2))
        cases[f"sum({d})"] = _outcome(torch.sum, x, dim=0)
        cases[f"mean({d})"] = _outcome(torch.mean, x, dim=0)
        cases[f"max({d})"] = _outcome(torch.amax, x, dim=0)
        cases[f"argmax({d})"] = _outcome(torch.argmax, x, dim=0)
        cases[f"softmax({d})"] = _outcome(torch.softmax, x, dim=-1)
        cases[f"log_softmax({d})"] = _outcome(torch.log_softmax, x, dim=-1)
        cases[f"clip({d},scalar:int)"] = _outcome(torch.clamp, x, 0, 2)
        cases[f"clip({d},scalar:float)"] = _outcome(torch.clamp, x, 0.5, 1.5)
        cases[f"max_pool2d({d})"] = _outcome(F.max_pool2d, img, 2)
        cases[f"avg_pool2d({d})"] = _outcome(F.avg_pool2d, img, 2)
        cases[f"global_avg_pool2d({d})"] = _outcome(torch.mean, img, dim=(2, 3))
        cases[f"softmax_cross_entropy({d},int64)"] = _outcome(
            F.cross_entropy, x, torch.tensor([0, 2]), reduction="none")
        for e in DTYPES:
            cases[f"matmul({d},{e})"] = _outcome(torch.matmul, x, _values(torch, e, (3, 2)))
            cases[f"where(bool,{d},{e})"] = _outcome(
                torch.where, torch.tensor([True, False, True]), _values(torch, d),
                _values(torch, e))
            cases[f"conv2d({d},{e})"] = _outcome(F.conv2d, img, _values(torch, e, (1, 1, 1, 1)))
    record = {"versions": {"torch": torch.__version__}, "dtypes": cases}
    path = Path(__file__).with_name("fuzz.json")
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
