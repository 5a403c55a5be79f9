"""Record PyTorch's singular value decomposition (``torch.svd``, ``Tensor.svd``,
``torch.linalg.svd``, ``torch.linalg.svdvals``), the error ``torch.eig`` raises since its
removal, and what ``torch.ops.profiler._record_function_enter`` / ``_record_function_exit``
put into a profile, into ``torch_svd.json`` (read by tests/test_svd.py). The signs of
singular vectors depend on the solver, so the tests compare ``U diag(S) V^T``, ``|U|``,
``|V|`` and ``S``. Run with an environment that has torch (see README.md)::

    python tests/recorded/record_torch_svd.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).with_name("torch_svd.json")


def data(seed: int, *shape) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def main() -> None:
    import torch

    cases = {}
    for name, a in {"tall": data(1, 4, 3), "wide": data(2, 2, 4), "square": data(3, 3, 3),
                    "batch": data(4, 2, 3, 2)}.items():
        t = torch.tensor(a, requires_grad=True)
        u, s, v = torch.svd(t)
        w_u, w_s, w_v = data(10, *u.shape), data(11, *s.shape), data(12, *v.shape)
        # a loss that does not depend on the signs of the singular vectors
        loss = (s * torch.tensor(w_s)).sum() + ((u @ u.mT) * torch.tensor(
            data(13, *(u @ u.mT).shape))).sum() + ((v @ v.mT) * torch.tensor(
                data(14, *(v @ v.mT).shape))).sum() + (torch.abs(u) * torch.tensor(w_u)).sum() \
            + (torch.abs(v) * torch.tensor(w_v)).sum()
        loss.backward()
        cases[name] = {"a": a.tolist(), "u": u.tolist(), "s": s.tolist(), "v": v.tolist(),
                       "grad_fn": type(u.grad_fn).__name__, "w_u": w_u.tolist(),
                       "w_s": w_s.tolist(), "w_v": w_v.tolist(),
                       "w_uu": data(13, *(u @ u.mT).shape).tolist(),
                       "w_vv": data(14, *(v @ v.mT).shape).tolist(),
                       "grad": t.grad.tolist()}
    a32 = torch.tensor(data(5, 3, 2), dtype=torch.float32)
    m = a32.svd()
    method = {"a": a32.tolist(), "dtypes": [str(x.dtype) for x in m],
              "shapes": [list(x.shape) for x in m]}
    nouv = torch.svd(torch.tensor(data(6, 3, 2)), compute_uv=False)
    no_uv = {"a": data(6, 3, 2).tolist(), "u": nouv[0].tolist(), "s": nouv[1].tolist(),
             "v": nouv[2].tolist()}
    full = torch.svd(torch.tensor(data(7, 3, 2)), some=False)
    full_shapes = [list(x.shape) for x in full]
    tall = torch.tensor(data(8, 4, 3), requires_grad=True)
    lu, ls, lvh = torch.linalg.svd(tall, full_matrices=False)
    (ls * torch.tensor(data(15, 3))).sum().backward()
    square = torch.tensor(data(9, 3, 3))
    su, ss, svh = torch.linalg.svd(square)
    vals = torch.linalg.svdvals(tall)
    linalg = {"tall": data(8, 4, 3).tolist(), "u": lu.tolist(), "s": ls.tolist(),
              "vh": lvh.tolist(), "w_s": data(15, 3).tolist(), "grad": tall.grad.tolist(),
              "grad_fn": type(lvh.grad_fn).__name__, "square": square.tolist(),
              "square_u": su.tolist(), "square_s": ss.tolist(), "square_vh": svh.tolist(),
              "svdvals": vals.tolist(), "svdvals_grad_fn": type(vals.grad_fn).__name__,
              "fields": list(type(torch.linalg.svd(square)).__match_args__)
              if hasattr(type(torch.linalg.svd(square)), "__match_args__") else None}
    try:
        torch.eig(torch.eye(2))
        eig = None
    except Exception as e:  # noqa: BLE001 - recorded as type and message
        eig = {"type": type(e).__name__, "message": str(e)}
    with torch.profiler.profile() as prof:
        handle = torch.ops.profiler._record_function_enter("my_range")
        torch.ones(3) + 1
        torch.ops.profiler._record_function_exit(handle)
    names = [e.key for e in prof.key_averages()]
    profiler = {"names_has_range": "my_range" in names, "handle_type": type(handle).__name__,
                "count": [e.count for e in prof.key_averages() if e.key == "my_range"][0]}
    OUT.write_text(json.dumps({"torch": torch.__version__, "cases": cases, "method": method,
                               "no_uv": no_uv, "full_shapes": full_shapes, "eig": eig,
                               "linalg": linalg,
                               "profiler": profiler}, indent=1) + "\n")


if __name__ == "__main__":
    main()
