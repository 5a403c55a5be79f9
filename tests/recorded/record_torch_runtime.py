"""Record PyTorch's runtime namespaces on a CPU-only machine into ``torch_runtime.json``
(read by tests/test_torch_runtime.py): what ``torch.cuda`` / ``torch.accelerator`` /
``torch.set_default_tensor_type`` do without a GPU, the ``torch.backends`` flags' defaults,
``nn.DataParallel`` around a module, the samplers' indices, ``optim.LBFGS``'s steps, the
distributions' ``log_prob``/``entropy`` and ``utils.checkpoint``'s gradients.

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_torch_runtime.py
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path


def outcome(fn):
    """``{"value": ...}`` or ``{"error": type name}``."""
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001 - recording what PyTorch raises
        return {"error": type(e).__name__}
    return {"value": value if isinstance(value, bool | int | float | str | None | list)
            else repr(value)}


def enter(cm):
    def run():
        with cm:
            return "entered"
    return run


def cuda_cases(torch):
    c, a = torch.cuda, torch.accelerator
    return {
        "is_available": outcome(c.is_available),
        "device_count": outcome(c.device_count),
        "manual_seed": outcome(lambda: c.manual_seed(0)),
        "manual_seed_all": outcome(lambda: c.manual_seed_all(0)),
        "current_device": outcome(c.current_device),
        "set_device(0)": outcome(lambda: c.set_device(0)),
        "set_device(-1)": outcome(lambda: c.set_device(-1)),
        "set_device('cpu')": outcome(lambda: c.set_device("cpu")),
        "with device(0)": outcome(enter(c.device(0))),
        "with device(-1)": outcome(enter(c.device(-1))),
        "FloatTensor([1.0])": outcome(lambda: c.FloatTensor([1.0])),
        "LongTensor(2)": outcome(lambda: c.LongTensor(2)),
        "get_device_name()": outcome(c.get_device_name),
        "get_device_capability()": outcome(c.get_device_capability),
        "is_bf16_supported()": outcome(c.is_bf16_supported),
        "memory_allocated()": outcome(c.memory_allocated),
        "memory_reserved()": outcome(c.memory_reserved),
        "mem_get_info()": outcome(c.mem_get_info),
        "accelerator.set_device_index(0)": outcome(lambda: a.set_device_index(0)),
        "with accelerator.device_index(0)": outcome(enter(a.device_index(0))),
        "with accelerator.device_index(None)": outcome(enter(a.device_index(None))),
        "set_default_tensor_type(FloatTensor)": outcome(
            lambda: torch.set_default_tensor_type(torch.FloatTensor)),
        "set_default_tensor_type(cuda.FloatTensor)": outcome(
            lambda: torch.set_default_tensor_type(torch.cuda.FloatTensor)),
        "set_default_tensor_type('torch.cuda.FloatTensor')": outcome(
            lambda: torch.set_default_tensor_type("torch.cuda.FloatTensor")),
        "set_default_tensor_type(LongTensor)": outcome(
            lambda: torch.set_default_tensor_type(torch.LongTensor)),
    }


def backends_cases(torch):
    b = torch.backends
    return {"cudnn.deterministic": b.cudnn.deterministic, "cudnn.benchmark": b.cudnn.benchmark,
            "cudnn.enabled": b.cudnn.enabled, "cudnn.allow_tf32": b.cudnn.allow_tf32,
            "cudnn.is_available()": b.cudnn.is_available(),
            "cuda.matmul.allow_tf32": b.cuda.matmul.allow_tf32,
            "mps.is_available()": b.mps.is_available(), "mps.is_built()": b.mps.is_built()}


def data_parallel_cases(torch):
    torch.manual_seed(0)
    inner = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    net = torch.nn.DataParallel(inner)
    x = torch.arange(6.0).reshape(2, 3)
    return {"repr": repr(net), "state_dict_keys": list(net.state_dict()),
            "device_ids": net.device_ids, "module_is_inner": net.module is inner,
            "same_output": bool(torch.equal(net(x), inner(x))),
            "has_output_device": hasattr(net, "output_device"),
            "parameter_names": [n for n, _ in net.named_parameters()]}


def sampler_cases(torch):
    from torch.utils.data import DistributedSampler, WeightedRandomSampler
    out = {"distributed": []}
    for n, replicas, shuffle, drop_last, seed, epoch in [
            (10, 3, False, False, 0, 0), (10, 3, True, False, 0, 0), (10, 3, True, False, 0, 1),
            (10, 3, True, True, 5, 2), (2, 4, False, False, 0, 0), (7, 2, True, False, 3, 0)]:
        for rank in range(replicas):
            s = DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=shuffle,
                                   seed=seed, drop_last=drop_last)
            s.set_epoch(epoch)
            out["distributed"].append({"n": n, "replicas": replicas, "rank": rank,
                                       "shuffle": shuffle, "drop_last": drop_last,
                                       "seed": seed, "epoch": epoch, "indices": list(s),
                                       "len": len(s)})
    out["weighted"] = []
    for weights, num, replacement in [([0.1, 0.5, 0.4], 8, True), ([1, 2, 3, 4, 5], 3, False),
                                      ([0.3, 0.7], 1, True)]:
        g = torch.Generator().manual_seed(123)
        out["weighted"].append({"weights": weights, "num_samples": num,
                                "replacement": replacement,
                                "indices": list(WeightedRandomSampler(weights, num, replacement,
                                                                      generator=g))})
    return out


def lbfgs_problem(torch, kind):
    """The parameters and a loss function for an LBFGS case (the test builds the same)."""
    if kind == "rosenbrock":
        x = torch.tensor([-1.5, 2.0], requires_grad=True)
        return [x], lambda: (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    w = torch.tensor([[0.1, -0.2, 0.3]], requires_grad=True)
    b = torch.tensor([0.05], requires_grad=True)
    xs = torch.linspace(-1.0, 1.0, 24).reshape(8, 3)
    ys = torch.sin(xs @ torch.tensor([[0.5], [-1.0], [2.0]])) + 0.25
    return [w, b], lambda: (((xs @ w.t() + b) - ys) ** 2).mean()


LBFGS_CASES = [
    {"problem": "rosenbrock", "steps": 4, "kwargs": {"lr": 1.0, "max_iter": 5, "history_size": 3}},
    {"problem": "rosenbrock", "steps": 4,
     "kwargs": {"lr": 1.0, "max_iter": 6, "history_size": 3, "line_search_fn": "strong_wolfe"}},
    {"problem": "regression", "steps": 3, "kwargs": {"lr": 0.5, "max_iter": 4}},
    {"problem": "regression", "steps": 2,
     "kwargs": {"max_iter": 20, "line_search_fn": "strong_wolfe"}},
]


def lbfgs_cases(torch):
    out = []
    for case in LBFGS_CASES:
        params, loss_fn = lbfgs_problem(torch, case["problem"])
        opt = torch.optim.LBFGS(params, **case["kwargs"])

        def closure(opt=opt, loss_fn=loss_fn):
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        steps = []
        for _ in range(case["steps"]):
            loss = opt.step(closure)
            st = opt.state[params[0]]
            steps.append({"loss": float(loss), "params": [p.tolist() for p in params],
                          "func_evals": st["func_evals"], "n_iter": st["n_iter"]})
        out.append({**case, "trajectory": steps})
    return out


PROBS = [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]
LOGITS = [[1.0, -0.5, 0.25, 2.0], [0.0, 0.0, 0.0, 0.0], [-3.0, 1.0, 4.0, 0.5]]


def distribution_cases(torch):
    from torch import distributions as D
    out = {}
    probs = torch.tensor(PROBS, requires_grad=True)
    c = D.Categorical(probs=probs)
    lp = c.log_prob(torch.tensor([2, 0]))
    ent = c.entropy()
    (lp.sum() + ent.sum()).backward()
    torch.manual_seed(0)
    out["categorical_probs"] = {"log_prob": lp.tolist(), "entropy": ent.tolist(),
                                "grad": probs.grad.tolist(), "probs": c.probs.tolist(),
                                "sample": c.sample((5,)).tolist(),
                                "batch_shape": list(c.batch_shape)}
    logits = torch.tensor(LOGITS, requires_grad=True)
    c = D.Categorical(logits=logits)
    lp = c.log_prob(torch.tensor([[3, 0, 2], [1, 1, 1]]))
    ent = c.entropy()
    (lp.sum() * 2 + ent.sum()).backward()
    torch.manual_seed(1)
    out["categorical_logits"] = {"log_prob": lp.tolist(), "entropy": ent.tolist(),
                                 "grad": logits.grad.tolist(), "logits": c.logits.tolist(),
                                 "sample": c.sample().tolist()}
    loc = torch.tensor([0.0, 1.0, -2.0], requires_grad=True)
    scale = torch.tensor([1.0, 0.5, 2.0], requires_grad=True)
    n = D.Normal(loc, scale)
    value = torch.tensor([0.3, 1.5, -1.0])
    lp, ent = n.log_prob(value), n.entropy()
    torch.manual_seed(2)
    sample = n.sample((2,))
    r = n.rsample((4,))
    (lp.sum() + ent.sum() + (r ** 2).sum()).backward()
    out["normal"] = {"log_prob": lp.tolist(), "entropy": ent.tolist(),
                     "cdf": n.cdf(value).tolist(), "sample": sample.tolist(),
                     "rsample": r.tolist(), "grad_loc": loc.grad.tolist(),
                     "grad_scale": scale.grad.tolist()}
    probs = torch.tensor([0.2, 0.0, 0.3, 0.5], requires_grad=True)
    m = D.multinomial.Multinomial(6, probs=probs)
    lp = m.log_prob(torch.tensor([[1.0, 0.0, 2.0, 3.0], [0.0, 0.0, 6.0, 0.0]]))
    lp.sum().backward()
    torch.manual_seed(3)
    out["multinomial"] = {"log_prob": lp.tolist(), "grad": probs.grad.tolist(),
                          "sample": m.sample((3,)).tolist(), "mean": m.mean.tolist()}
    return out


def checkpoint_cases(torch):
    from torch.utils.checkpoint import checkpoint, checkpoint_sequential
    out = {}
    for ckpt in (False, True):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Dropout(0.3),
                                  torch.nn.Linear(5, 2))
        x = torch.linspace(-1.0, 1.0, 12).reshape(4, 3).requires_grad_()
        y = checkpoint(net, x, use_reentrant=False) if ckpt else net(x)
        (y ** 2).sum().backward()
        out["checkpoint" if ckpt else "plain"] = {
            "y": y.tolist(), "x_grad": x.grad.tolist(),
            "grads": [p.grad.tolist() for p in net.parameters()]}
    torch.manual_seed(0)
    net = torch.nn.Sequential(*[torch.nn.Linear(3, 3) for _ in range(4)])
    x = torch.linspace(-1.0, 1.0, 6).reshape(2, 3)
    y = checkpoint_sequential(net, 2, x, use_reentrant=False)
    y.sum().backward()
    out["sequential"] = {"y": y.tolist(), "grads": [p.grad.tolist() for p in net.parameters()],
                         "state": {k: v.tolist() for k, v in net.state_dict().items()}}
    return out


def amp_compile_cases(torch):
    out = {}
    s = torch.amp.GradScaler("cpu", enabled=False)
    out["disabled"] = {"scale": s.get_scale(), "state_dict": s.state_dict(),
                       "scaled": s.scale(torch.tensor(3.0)).item(), "enabled": s.is_enabled()}
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    s = torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    steps = []
    for k in range(4):
        opt.zero_grad()
        loss = (w * w).sum() * (float("inf") if k == 1 else 1.0)
        s.scale(loss).backward()
        s.step(opt)
        s.update()
        steps.append({"w": w.tolist(), "scale": s.get_scale()})
    out["enabled"] = steps
    out["autocast_disabled"] = outcome(enter(torch.autocast("cpu", enabled=False)))
    out["autocast_float32"] = outcome(enter(torch.autocast("cpu", dtype=torch.float32)))
    net = torch.compile(torch.nn.Linear(3, 2))
    out["compile"] = {"state_dict_keys": list(net.state_dict()),
                      "orig_is_module": isinstance(net._orig_mod, torch.nn.Linear),
                      "in_features": net.in_features}
    return out


def main() -> None:
    warnings.filterwarnings("ignore")
    import torch

    data = {"torch": torch.__version__, "cuda": cuda_cases(torch),
            "backends": backends_cases(torch), "data_parallel": data_parallel_cases(torch),
            "samplers": sampler_cases(torch)}
    for name in ("lbfgs_cases", "distribution_cases", "checkpoint_cases", "amp_compile_cases"):
        if name in globals():
            data[name.removesuffix("_cases")] = globals()[name](torch)
    path = Path(__file__).with_name("torch_runtime.json")
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
