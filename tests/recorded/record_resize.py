"""Record PyTorch's ``F.interpolate`` (nearest, nearest-exact, bilinear with and without
``align_corners``, by ``size`` and by ``scale_factor``) into ``resize.json`` (read by
tests/test_resize.py): the sampling rules the ``resize`` op shares with PyTorch, in NCHW.

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_resize.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

#: (mode, keyword arguments of F.interpolate)
CASES = [
    ("nearest", {"size": [7, 3]}),
    ("nearest", {"scale_factor": 1.7}),
    ("nearest-exact", {"size": [7, 3]}),
    ("bilinear", {"size": [7, 3]}),
    ("bilinear", {"size": [7, 3], "align_corners": True}),
    ("bilinear", {"scale_factor": [1.5, 0.6]}),
]


def main():
    import torch
    import torch.nn.functional as F  # noqa: N812 - PyTorch's spelling

    x = np.random.default_rng(0).uniform(size=(2, 3, 5, 4)).astype(np.float32)
    cases = []
    for mode, kw in CASES:
        t = torch.tensor(x, requires_grad=True)
        y = F.interpolate(t, mode=mode, **kw)
        w = torch.linspace(-1, 1, y.numel()).reshape(y.shape)
        (y * w).sum().backward()
        cases.append({"mode": mode, "kwargs": kw, "y": y.detach().numpy().tolist(),
                      "dx": t.grad.numpy().tolist(), "grad_fn": type(y.grad_fn).__name__})
    out = {"torch": torch.__version__, "x": x.tolist(), "cases": cases}
    (Path(__file__).parent / "resize.json").write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    main()
