"""Record what PyTorch does with empty tensors in the reductions and the ops that reduce
(``amax``, ``argmax``, ``mean``, ``sum``, ``max_pool2d``, ``avg_pool2d``, ``cross_entropy``),
into ``empty.json`` (read by tests/test_empty.py): the result's shape and values, or the
error, and the gradient of ``sum(result)`` where there is a result.

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_empty.py

A reduction of an empty tensor has a value wherever no output element reduces over nothing
(``amax`` of a (0, 3) tensor over axis 1 is empty); it is refused where a reduced dimension
is empty (``amax`` over axis 0, or over all axes). A case is ``[op, shape, kwargs]``;
``kwargs`` use kernelgraph's names (``axis``, ``keepdims``), turned into PyTorch's here.
Each entry names its ``input`` shape (and ``input_dtype``), then the result's ``shape``,
``dtype`` and ``value`` and the ``grad`` of a float input, or the ``error``.
"""

from __future__ import annotations

import json
from pathlib import Path

REDUCTIONS = {
    "max": [
        [(0, 3), {"axis": 1}], [(0, 3), {"axis": 0}], [(0, 3), {}],
        [(2, 0, 3), {"axis": (0, 2)}], [(2, 0, 3), {"axis": (0, 2), "keepdims": True}],
        [(2, 0, 3), {"axis": (0, 1)}], [(0, 3, 0), {"axis": (2, 0)}],
        [(3, 0), {"axis": -1}], [(0, 0), {"axis": 1}], [(0,), {"axis": 0}],
        [(4, 0, 2), {"axis": -1}],
    ],
    "argmax": [
        [(0, 3), {"axis": 1}], [(0, 3), {"axis": 1, "keepdims": True}],
        [(0, 3), {"axis": 0}], [(0, 3), {}], [(3, 0), {"axis": -1}], [(0, 0), {"axis": 1}],
    ],
    "mean": [
        [(0, 3), {"axis": 0}], [(0, 3), {"axis": 1}], [(0, 3), {}],
        [(2, 0, 3), {"axis": (0, 2)}], [(2, 0, 3), {"axis": 1, "keepdims": True}],
    ],
    "sum": [
        [(0, 3), {"axis": 0}], [(0, 3), {"axis": 1}], [(0, 3), {}],
        [(2, 0, 3), {"axis": (0, 2)}],
    ],
}
# (shape, kernel_size, padding): no batch, no channel, and no rows or columns (windows of
# nothing but padding).
POOLS = [
    [(0, 1, 2, 2), 2, 0], [(0, 1, 2, 2), 2, 1], [(1, 1, 0, 2), 2, 1], [(2, 1, 2, 0), 2, 1],
    [(0, 1, 0, 2), 2, 1], [(1, 0, 2, 2), 2, 0],
]
# (logits shape, reduction): a batch of no rows, with and without classes.
CROSS_ENTROPY = [
    [(0, 0), "none"], [(0, 0), "mean"], [(0, 3), "none"], [(0, 3), "mean"],
    [(2, 0), "none"],
]


def _error(e: Exception) -> dict:
    return {"error": {"type": type(e).__name__, "message": " ".join(str(e).split())}}


def _result(fn, x) -> dict:
    """``fn(x)``'s shape, dtype and values, and the gradient of its sum (float ``x``)."""
    try:
        y = fn(x)
    except Exception as e:  # noqa: BLE001 - recorded: the tests compare it
        return _error(e)
    out = {"shape": list(y.shape), "dtype": str(y.dtype).replace("torch.", ""),
           "value": y.detach().tolist()}
    if x.requires_grad and y.requires_grad:
        y.sum().backward()
        out["grad_shape"] = list(x.grad.shape)
        out["grad"] = x.grad.tolist()
    return out


def _record_torch() -> tuple[dict, str]:
    import torch
    import torch.nn.functional as F

    def reduce(op, kwargs):
        dim, keep = kwargs.get("axis"), kwargs.get("keepdims", False)
        torch_op = {"max": torch.amax, "argmax": torch.argmax, "mean": torch.mean,
                    "sum": torch.sum}[op]
        return lambda x: torch_op(x) if dim is None else torch_op(x, dim=dim, keepdim=keep)

    out: dict = {}
    for op, cases in REDUCTIONS.items():
        for shape, kwargs in cases:
            for dtype in ("float32", "int64"):
                if op == "mean" and dtype == "int64":
                    continue  # PyTorch's mean refuses integers whatever the shape
                x = torch.zeros(shape, dtype=getattr(torch, dtype),
                                requires_grad=dtype == "float32" and op != "argmax")
                out.setdefault(op, []).append(
                    {"input": list(shape), "kwargs": kwargs, "input_dtype": dtype,
                     **_result(reduce(op, kwargs), x)})
    for name, pool in (("max_pool2d", F.max_pool2d), ("avg_pool2d", F.avg_pool2d)):
        for shape, kernel, padding in POOLS:
            x = torch.zeros(shape, requires_grad=True)
            out.setdefault(name, []).append(
                {"input": list(shape), "kernel_size": kernel, "padding": padding,
                 **_result(lambda x, f=pool, k=kernel, p=padding: f(x, k, padding=p), x)})
    for shape, reduction in CROSS_ENTROPY:
        x = torch.zeros(shape, requires_grad=True)
        labels = torch.zeros(shape[:1], dtype=torch.long)
        out.setdefault("cross_entropy", []).append(
            {"input": list(shape), "reduction": reduction,
             **_result(lambda x, y=labels, r=reduction: F.cross_entropy(x, y, reduction=r),
                       x)})
    return out, torch.__version__


def main() -> None:
    import numpy as np

    cases, version = _record_torch()
    rec = {"versions": {"torch": version, "numpy": np.__version__}, "torch": cases}
    path = Path(__file__).with_name("empty.json")
    path.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
