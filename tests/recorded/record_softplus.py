"""Record softplus in PyTorch (``torch.nn.functional.softplus``, eager mode's model) and TF1
(``tf.nn.softplus``, static mode's) into ``softplus.json`` (read by tests/test_softplus.py).

Run with an environment that has torch and tensorflow-cpu (see README.md here)::

    python tests/recorded/record_softplus.py

For each dtype: the inputs, PyTorch's output and its gradient for an upstream gradient of
ones, and TF1's output and gradient; plus PyTorch's ``beta``/``threshold`` variants and the
dtypes each framework refuses.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# Around both of PyTorch's branches (x > 20 returns x), large negatives (exp underflows),
# signed zeros, infinities and NaN.
VALUES = [-1000.0, -100.0, -30.0, -20.0, -5.0, -1.0, -0.5, -0.0, 0.0, 0.25, 1.0, 3.0, 15.0,
          19.99, 20.0, 20.01, 25.0, 40.0, 100.0, 1000.0, float("inf"), float("-inf"),
          float("nan")]
VARIANTS = [{"beta": 2.0, "threshold": 20.0}, {"beta": 0.5, "threshold": 5.0},
            {"beta": 1.0, "threshold": 1.0}]


def _error(e: Exception) -> dict:
    return {"type": type(e).__name__, "message": str(e).splitlines()[0]}


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np
    import tensorflow.compat.v1 as tf
    import torch
    import torch.nn.functional as F

    tf.disable_eager_execution()
    out: dict = {"torch": torch.__version__, "tensorflow": tf.__version__, "values": VALUES,
                 "torch_cases": {}, "tf1_cases": {}, "variants": [], "refused": {}}
    for dtype in ("float32", "float64"):
        x = torch.tensor(VALUES, dtype=getattr(torch, dtype), requires_grad=True)
        y = F.softplus(x)
        y.backward(torch.ones_like(y))
        out["torch_cases"][dtype] = {"out": y.detach().tolist(), "grad": x.grad.tolist()}
        with tf.Graph().as_default():
            p = tf.placeholder(dtype, [len(VALUES)])
            ty = tf.nn.softplus(p)
            (tg,) = tf.gradients(ty, [p])
            with tf.Session() as sess:
                yv, gv = sess.run([ty, tg], {p: np.array(VALUES, dtype)})
        out["tf1_cases"][dtype] = {"out": yv.tolist(), "grad": gv.tolist()}
    for v in VARIANTS:
        x = torch.tensor(VALUES, dtype=torch.float64, requires_grad=True)
        y = F.softplus(x, **v)
        y.backward(torch.ones_like(y))
        out["variants"].append({**v, "out": y.detach().tolist(), "grad": x.grad.tolist()})
    for dtype in ("int32", "int64", "bool"):
        try:
            F.softplus(torch.tensor([1, 0], dtype=getattr(torch, dtype)))
            out["refused"][dtype] = None
        except Exception as e:  # noqa: BLE001 - recorded as the framework raised it
            out["refused"][dtype] = _error(e)
    path = Path(__file__).with_name("softplus.json")
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
