"""Record PyTorch's activation-checkpoint wrapper
(``torch.distributed.algorithms._checkpoint.checkpoint_wrapper``) and distributed checkpoint
(``torch.distributed.checkpoint``: ``save``/``load`` into a directory, the ``state_dict``
helpers) into ``torch_dcp.json`` (read by tests/test_torch_dcp.py). One process, no process
group, CPU. Run with an environment that has torch (see README.md)::

    python tests/recorded/record_torch_dcp.py
"""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path


def main() -> None:
    import torch
    import torch.distributed.checkpoint as dcp
    from torch import nn
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
        CheckpointImpl,
        apply_activation_checkpointing,
        checkpoint_wrapper,
    )
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions,
        get_model_state_dict,
        get_optimizer_state_dict,
    )

    warnings.simplefilter("ignore")
    out: dict = {"torch": torch.__version__}
    out["impl"] = {m.name: m.value for m in CheckpointImpl}

    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    wrapped = checkpoint_wrapper(model[0], checkpoint_impl=CheckpointImpl.NO_REENTRANT)
    out["wrapper"] = {
        "type": type(wrapped).__name__,
        "state_dict": list(wrapped.state_dict()),
        "named_parameters": [n for n, _ in wrapped.named_parameters()],
        "named_modules": [n for n, _ in wrapped.named_modules()],
        "in_features": wrapped.in_features,  # attributes reach the wrapped module
    }
    apply_activation_checkpointing(model, checkpoint_wrapper_fn=checkpoint_wrapper,
                                   check_fn=lambda m: isinstance(m, nn.Linear))
    out["applied"] = {
        "state_dict": list(model.state_dict()),
        "named_parameters": [n for n, _ in model.named_parameters()],
        "children": [type(m).__name__ for m in model.children()],
    }

    plain = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = torch.optim.Adam(plain.parameters(), lr=0.1)
    plain(torch.ones(2, 3)).sum().backward()
    opt.step()
    osd = get_optimizer_state_dict(plain, opt)
    first = next(iter(osd["state"]))
    groups = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()}
              for g in osd["param_groups"]]
    out["state_dict"] = {
        "model": list(get_model_state_dict(plain)),
        "optim_keys": list(osd),
        "optim_state": list(osd["state"]),
        "optim_param_state": list(osd["state"][first]),
        "step_is_tensor": isinstance(osd["state"][first]["step"], torch.Tensor),
        "param_groups": groups,
        "options": {f: getattr(StateDictOptions(), f)
                    for f in ("full_state_dict", "cpu_offload", "strict")},
    }

    directory = tempfile.mkdtemp()
    saved = {"a": torch.tensor([1.0, 2.0]), "b": {"c": torch.zeros(3)}, "step": 5}
    dcp.save(saved, checkpoint_id=directory)
    target = {"a": torch.zeros(2), "b": {"c": torch.ones(3)}, "step": 0}
    a_before = target["a"]
    dcp.load(target, checkpoint_id=directory)
    out["load"] = {"a": target["a"].tolist(), "c": target["b"]["c"].tolist(),
                   "step": target["step"], "same_tensor": a_before is target["a"]}
    partial = {"a": torch.zeros(2)}
    dcp.load(partial, checkpoint_id=directory)
    out["load"]["partial"] = partial["a"].tolist()
    try:
        dcp.load({"zz": torch.zeros(1)}, checkpoint_id=directory)
    except BaseException as e:  # noqa: BLE001 - CheckpointException is a BaseException
        out["missing"] = {"type": type(e).__name__,
                          "bases": [c.__name__ for c in type(e).__mro__[1:]],
                          "cause": "Missing key in checkpoint state_dict: zz."
                          if "Missing key in checkpoint state_dict: zz." in str(e) else str(e)}
    Path(__file__).with_name("torch_dcp.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
