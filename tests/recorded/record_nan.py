"""Record how PyTorch propagates NaN, +-Inf and -0.0 through the ops kernelgraph shares with
it, into ``nan.json`` (read by tests/test_nan.py): forward values and gradients.

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_nan.py

Every case is computed in float64 on the CPU. Gradients are of ``sum(op(x) * w)`` with a
weight ``w`` of distinct values, so a test can tell which input a gradient was routed to.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

NAN, INF = math.nan, math.inf
# The scalars every elementwise case is built from.
SPECIALS = [NAN, INF, -INF, -0.0, 0.0, 1.0, -1.0, 2.0]

# Rows for the reductions and the softmax family: NaN at the front, middle and end, two
# NaNs, all NaN, infinities of both signs, signed zeros, ties, and a plain row.
ROWS = [
    [NAN, 1.0, 3.0, -2.0, 0.5],
    [1.0, 3.0, NAN, -2.0, 0.5],
    [1.0, 3.0, -2.0, 0.5, NAN],
    [1.0, NAN, 3.0, NAN, 0.5],
    [NAN, NAN, NAN, NAN, NAN],
    [1.0, INF, 3.0, -2.0, 0.5],
    [1.0, -INF, 3.0, -2.0, 0.5],
    [INF, 1.0, -INF, 2.0, 0.0],
    [-INF, -INF, -INF, -INF, -INF],
    [INF, INF, 1.0, -1.0, 0.0],
    [-0.0, 0.0, -0.0, -1.0, -2.0],
    [0.0, -0.0, -1.0, -3.0, -2.0],
    [3.0, 1.0, 3.0, 2.0, 3.0],
    [1.0, NAN, INF, -INF, 2.0],
    [-INF, NAN, 2.0, 1.0, 0.0],
    [0.25, -1.5, 2.0, 0.75, -0.5],
]
# A label per row for the cross-entropy (the NaN itself, a number beside it, an infinity).
LABELS = [0, 2, 3, 1, 2, 1, 1, 0, 3, 4, 1, 0, 2, 2, 1, 2]
# Pooling windows (2x2, stride 2, on a 4x4 plane: four windows per plane). Each plane puts
# its specials at different places of its windows.
POOL_PLANES = [
    [[NAN, 1.0, 2.0, NAN], [3.0, 4.0, 5.0, 6.0],
     [7.0, 8.0, 9.0, 1.0], [NAN, 2.0, 3.0, NAN]],
    [[1.0, 2.0, NAN, NAN], [NAN, 4.0, NAN, NAN],
     [INF, 1.0, -INF, -INF], [2.0, NAN, -INF, -INF]],
    [[-0.0, 0.0, 5.0, 5.0], [0.0, -0.0, 5.0, 1.0],
     [-1.0, -INF, INF, INF], [-INF, -1.0, 1.0, INF]],
    [[2.0, 2.0, NAN, 1.0], [2.0, 1.0, 3.0, NAN],
     [-5.0, -5.0, 1.0, 2.0], [-5.0, -5.0, 3.0, 4.0]],
]


def _weights(n: int, shape=None):
    import torch

    # Distinct, both signs, none zero.
    w = torch.tensor([(k + 1) * (1 if k % 2 == 0 else -1) * 0.5 for k in range(n)],
                     dtype=torch.float64)
    return w if shape is None else w.reshape(shape)


def _json(t):
    return t.detach().tolist()


def _unary(op, xs):
    import torch

    x = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
    w = _weights(len(xs))
    out = op(x)
    (out * w).sum().backward()
    return {"x": xs, "w": _json(w), "out": _json(out), "grad": _json(x.grad)}


def _binary(op, xs, ys):
    import torch

    x = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
    y = torch.tensor(ys, dtype=torch.float64, requires_grad=True)
    w = _weights(len(xs))
    out = op(x, y)
    (out * w).sum().backward()
    return {"x": xs, "y": ys, "w": _json(w), "out": _json(out), "grad_x": _json(x.grad),
            "grad_y": _json(y.grad)}


def _rows(op, rows, dim=1, **kw):
    """op over each row, with the gradient of sum(out * w) when op is differentiable."""
    import torch

    x = torch.tensor(rows, dtype=torch.float64, requires_grad=True)
    out = op(x, dim, **kw)
    rec = {"out": _json(out)}
    if out.dtype == torch.float64:
        w = _weights(out.numel(), out.shape)
        (out * w).sum().backward()
        rec.update(w=_json(w), grad=_json(x.grad))
    return rec


def _each_row(op, rows):
    """op over each row as a 1-D tensor, reduced whole: {"out": [...], "grad": [[...]]}."""
    import torch

    outs, grads = [], []
    for k, row in enumerate(rows):
        x = torch.tensor(row, dtype=torch.float64, requires_grad=True)
        out = op(x)
        outs.append(out.item())
        if out.dtype == torch.float64:
            (out * (k + 1) * 0.5).backward()
            grads.append(_json(x.grad))
    return {"out": outs, "grad": grads} if grads else {"out": outs}


def _pool(op, planes, **kw):
    import torch

    x = torch.tensor([planes], dtype=torch.float64, requires_grad=True)
    out = op(x, **kw)
    w = _weights(out.numel(), out.shape)
    (out * w).sum().backward()
    return {"attrs": kw, "out": _json(out), "w": _json(w), "grad": _json(x.grad)}


def main() -> None:
    import numpy as np
    import torch
    import torch.nn.functional as F

    pairs = [(a, b) for a in SPECIALS for b in SPECIALS]
    xs, ys = [a for a, _ in pairs], [b for _, b in pairs]
    clip_bounds = [(0.0, None), (None, 1.0), (-1.0, 1.0), (1.0, -1.0), (NAN, None),
                   (None, NAN), (0.0, NAN), (NAN, 1.0), (-INF, INF), (INF, None)]
    clip = []
    for lo, hi in clip_bounds:
        rec = _unary(lambda t, lo=lo, hi=hi: torch.clamp(t, min=lo, max=hi), SPECIALS)
        clip.append({"min": lo, "max": hi, **rec})

    rec = {
        "versions": {"torch": torch.__version__, "numpy": np.__version__},
        "specials": SPECIALS,
        "relu": _unary(torch.relu, SPECIALS),
        "maximum": _binary(torch.maximum, xs, ys),
        "minimum": _binary(torch.minimum, xs, ys),
        "clip": clip,
        "rows": ROWS,
        "labels": LABELS,
        "sum": _rows(lambda x, d: x.sum(d), ROWS),
        "mean": _rows(lambda x, d: x.mean(d), ROWS),
        # kg.max(x, axis) is torch.amax: every maximum shares the gradient.
        "amax": _rows(lambda x, d: torch.amax(x, d), ROWS),
        # Each row alone, reduced whole (no dim): amax shares the gradient as with a dim;
        # torch.max(x) without a dim (recorded for comparison) gives it to every NaN.
        "amax_whole": _each_row(torch.amax, ROWS),
        "max_whole": _each_row(torch.max, ROWS),
        "argmax": _rows(lambda x, d: torch.argmax(x, d), ROWS),
        "argmax_whole": _each_row(torch.argmax, ROWS),
        # torch.max(x, dim).indices, for comparison with argmax.
        "max_dim_indices": _rows(lambda x, d: torch.max(x, d).indices, ROWS),
        "softmax": _rows(torch.softmax, ROWS),
        "log_softmax": _rows(torch.log_softmax, ROWS),
        "cross_entropy": _rows(
            lambda x, d: F.cross_entropy(x, torch.tensor(LABELS), reduction="none"), ROWS),
        "pool_planes": POOL_PLANES,
        "max_pool2d": [_pool(F.max_pool2d, POOL_PLANES, kernel_size=2),
                       _pool(F.max_pool2d, POOL_PLANES, kernel_size=2, stride=1),
                       _pool(F.max_pool2d, POOL_PLANES, kernel_size=3, stride=2, padding=1)],
        "avg_pool2d": [_pool(F.avg_pool2d, POOL_PLANES, kernel_size=2),
                       _pool(F.avg_pool2d, POOL_PLANES, kernel_size=3, stride=2, padding=1)],
        "global_avg_pool2d": _pool(lambda t: F.adaptive_avg_pool2d(t, 1).flatten(1),
                                   POOL_PLANES),
    }
    path = Path(__file__).with_name("nan.json")
    path.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
