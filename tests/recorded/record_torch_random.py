"""Record PyTorch's CPU random streams and its tensor factories: writes torch_random.json.

Each *program* seeds the default generator and makes a sequence of calls (``rand``,
``randn``, ``randint``, ``randperm``, ``normal``, ``nn.init`` fills, ``nn.Linear``...); each
*factory* case is one deterministic call (``linspace``, ``arange``, ``full``, ``eye`` ...).
:func:`run_call` is written once against PyTorch's API, and the tests run the same function
with ``kernelgraph`` in place of ``torch`` (the import swap of a learner's program).

    /work/refvenv/bin/python tests/recorded/record_torch_random.py
"""

from __future__ import annotations

import json
import pathlib

SEEDS = [0, 1, 7, 42, 1234, 2**31 - 1, 2**32 + 3, 2**40 + 5, -1, 67280421310721]
SIZES = [0, 1, 5, 15, 16, 17, 100]


def programs() -> list[dict]:
    out = []
    for s in SEEDS:
        calls = []
        for n in SIZES + ([1000] if s in (0, -1) else []):
            calls += [["randn", {"size": [n], "dtype": "float32"}],
                      ["randn", {"size": [n], "dtype": "float64"}],
                      ["rand", {"size": [n], "dtype": "float32"}],
                      ["rand", {"size": [n], "dtype": "float64"}],
                      ["randint", {"low": -3, "high": 10, "size": [n]}]]
        out.append({"seed": s, "calls": calls})
    mixed = [
        ["randn", {"size": [2, 3], "dtype": "float32"}],
        ["rand", {"size": [4], "dtype": "float32"}],
        ["randint", {"low": 0, "high": 2**40, "size": [3]}],
        ["randint", {"high": 5, "size": [2, 2]}],
        ["randperm", {"n": 10}],
        ["randperm", {"n": 1}],
        ["randperm", {"n": 0}],
        ["randn", {"size": [3], "dtype": "float64"}],
        ["randn", {"size": [3], "dtype": "float64"}],  # the cached second sample
        ["normal_", {"size": [33], "mean": 2.0, "std": 0.3, "dtype": "float32"}],
        ["normal_", {"size": [33], "mean": 2.0, "std": 0.3, "dtype": "float64"}],
        ["normal_", {"size": [5], "mean": -1.0, "std": 3.0, "dtype": "float32"}],
        ["uniform_", {"size": [7], "a": -2.5, "b": 3.1, "dtype": "float32"}],
        ["uniform_", {"size": [7], "a": -2.5, "b": 3.1, "dtype": "float64"}],
        ["normal_sized", {"mean": 2.0, "std": 3.0, "size": [20]}],
        ["normal_tensors", {"mean": [0.0, 1.0, 2.0], "std": [1.0, 0.5, 0.1]}],
        ["normal_tensors", {"mean": [0.0, 10.0], "std": 2.0}],
        ["normal_tensors", {"mean": 1.0, "std": [1.0, 2.0, 3.0]}],
        ["rand_like", {"size": [2, 2]}],
        ["randn_like", {"size": [20]}],
        ["randint_like", {"size": [6], "high": 4}],
        ["generator", {"gen_seed": 3, "size": [5]}],
        ["rand", {"size": [3], "dtype": "float32"}],
        ["rng_state", {}],
    ]
    init = [
        ["linear", {"in": 3, "out": 2}],
        ["linear", {"in": 20, "out": 10}],
        ["linear", {"in": 64, "out": 32}],
        ["linear_nobias", {"in": 5, "out": 4}],
        ["conv2d", {"in": 1, "out": 6, "k": 5}],
        ["conv2d", {"in": 3, "out": 4, "k": 3}],
        ["embedding", {"n": 10, "d": 3}],
        ["init", {"fn": "xavier_uniform_", "shape": [30, 20]}],
        ["init", {"fn": "xavier_normal_", "shape": [30, 20]}],
        ["init", {"fn": "kaiming_uniform_", "shape": [8, 12], "nonlinearity": "relu"}],
        ["init", {"fn": "kaiming_normal_", "shape": [8, 12], "mode": "fan_out"}],
        ["init", {"fn": "kaiming_normal_", "shape": [3, 4]}],
        ["init", {"fn": "uniform_", "shape": [4, 5]}],
        ["init", {"fn": "normal_", "shape": [4, 5]}],
        ["init", {"fn": "xavier_uniform_", "shape": [6, 2, 3, 3], "gain": 2.0}],
        ["init", {"fn": "trunc_normal_", "shape": [40, 25], "std": 0.02, "a": -0.04,
                  "b": 0.04}],
        ["init", {"fn": "trunc_normal_", "shape": [300], "a": 1.5, "b": 3.0}],
        ["init", {"fn": "trunc_normal_", "shape": [17], "mean": 1.0, "a": -3.0, "b": -1.0}],
        ["rand", {"size": [2], "dtype": "float32"}],
    ]
    for s in (0, 1, 42):
        out.append({"seed": s, "calls": mixed})
        out.append({"seed": s, "calls": init})
    return out


def factories() -> list[list]:
    return [
        ["linspace", [0, 1, 5], {}], ["linspace", [-3.3, 7.1, 37], {}],
        ["linspace", [0, 1, 100], {}], ["linspace", [1, 2, 1000], {}],
        ["linspace", [5, -5, 101], {}], ["linspace", [0.1, 0.9, 64], {}],
        ["linspace", [-1, 1, 33], {}], ["linspace", [3, 3, 7], {}],
        ["linspace", [0, 10, 1], {}], ["linspace", [0, 10, 0], {}],
        ["linspace", [-3.3, 7.1, 37], {"dtype": "float64"}],
        ["linspace", [0, 1, 100], {"dtype": "float64"}],
        ["linspace", [0, 10, 7], {"dtype": "int64"}],
        ["linspace", [-2 * 3.141592653589793, 2 * 3.141592653589793, 2000], {}],
        ["arange", [5], {}], ["arange", [1, 4], {}], ["arange", [1, 2.5, 0.5], {}],
        ["arange", [0, 1, 0.1], {}], ["arange", [0, 10, 0.3], {}], ["arange", [-1, 1, 0.01], {}],
        ["arange", [0, 5, 0.1], {"dtype": "float64"}], ["arange", [10, 0, -1.5], {}],
        ["arange", [0.0, 100.0, 0.37], {}], ["arange", [5], {"dtype": "float32"}],
        ["arange", [0, 1, 0.1], {"dtype": "float64"}], ["arange", [-5, 5, 3], {}],
        ["arange", [1.0, 2000.0, 0.75], {}],
        ["full", [[2, 3], 7], {}], ["full", [[2], 0.5], {}], ["full", [[2], True], {}],
        ["full", [[3], 2], {"dtype": "float32"}],
        ["eye", [3], {}], ["eye", [2, 4], {}], ["eye", [3], {"dtype": "int64"}],
        ["zeros", [2, 3], {}], ["ones", [[2, 2]], {"dtype": "int64"}], ["empty", [0, 3], {}],
        ["zeros_like", [[1, 2, 3]], {}], ["ones_like", [[1.5, 2.0]], {}],
        ["full_like", [[1, 2], 2.7], {}], ["full_like", [[1.0, 2.0], 3], {}],
        ["errors", "randint", [5, 5, [2]]], ["errors", "arange", [0, 1, 0]],
        ["errors", "arange", [1, 0, 1]], ["errors", "linspace", [0, 1, -1]],
        ["errors", "randperm", [-1]], ["errors", "rand", [-1]],
    ]


def _dtype(torch, name):
    return None if name is None else getattr(torch, name)


def _out(t) -> dict:
    return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
            "values": t.tolist()}


def run_call(torch, name: str, a: dict) -> dict:
    """One call of a program, written against PyTorch's API (``torch`` is the module)."""
    nn = torch.nn
    if name in ("rand", "randn"):
        return _out(getattr(torch, name)(*a["size"], dtype=_dtype(torch, a["dtype"])))
    if name == "randint":
        if "low" in a:
            return _out(torch.randint(a["low"], a["high"], tuple(a["size"])))
        return _out(torch.randint(a["high"], tuple(a["size"])))
    if name == "randperm":
        return _out(torch.randperm(a["n"]))
    if name in ("normal_", "uniform_"):
        t = torch.zeros(*a["size"], dtype=_dtype(torch, a["dtype"]))
        args = (a["mean"], a["std"]) if name == "normal_" else (a["a"], a["b"])
        return _out(getattr(nn.init, name)(t, *args))
    if name == "normal_sized":
        return _out(torch.normal(a["mean"], a["std"], size=tuple(a["size"])))
    if name == "normal_tensors":
        def as_t(v):
            return torch.tensor(v) if isinstance(v, list) else v
        return _out(torch.normal(as_t(a["mean"]), as_t(a["std"])))
    if name in ("rand_like", "randn_like"):
        return _out(getattr(torch, name)(torch.zeros(*a["size"])))
    if name == "randint_like":
        return _out(torch.randint_like(torch.zeros(*a["size"]), a["high"]))
    if name == "generator":
        g = torch.Generator().manual_seed(a["gen_seed"])
        first = torch.rand(*a["size"], generator=g).tolist()
        return {"values": [first, torch.randn(*a["size"], generator=g).tolist(),
                           torch.randint(0, 100, tuple(a["size"]), generator=g).tolist(),
                           g.initial_seed()]}
    if name == "rng_state":
        state = torch.get_rng_state()
        x = torch.rand(3).tolist()
        torch.set_rng_state(state)
        return {"values": [x, torch.rand(3).tolist(), torch.initial_seed(),
                           state.tolist()[:40]]}
    if name in ("linear", "linear_nobias"):
        m = nn.Linear(a["in"], a["out"], bias=name == "linear")
        return {"values": [m.weight.tolist(), None if m.bias is None else m.bias.tolist()]}
    if name == "conv2d":
        m = nn.Conv2d(a["in"], a["out"], a["k"])
        return {"values": [m.weight.tolist(), m.bias.tolist()]}
    if name == "embedding":
        return {"values": nn.Embedding(a["n"], a["d"]).weight.tolist()}
    if name == "init":
        kw = {k: v for k, v in a.items() if k not in ("fn", "shape")}
        t = torch.zeros(*a["shape"])
        with torch.no_grad():
            return _out(getattr(nn.init, a["fn"])(t, **kw))
    raise ValueError(f"unknown call {name}")


def run_factory(torch, case: list) -> dict:
    """One factory case (``[name, args, kwargs]``), or ``["errors", name, args]``."""
    if case[0] == "errors":
        _, name, args = case
        if name == "randint":
            args = [args[0], args[1], tuple(args[2])]
        try:
            getattr(torch, name)(*args)
        except Exception as e:  # noqa: BLE001 - the error is what is recorded
            return {"error": type(e).__name__, "message": str(e)}
        return {"error": None}
    name, args, kw = case
    kw = {k: (_dtype(torch, v) if k == "dtype" else v) for k, v in kw.items()}
    if name.endswith("_like"):
        args = [torch.tensor(args[0])] + list(args[1:])
    elif name == "full":
        args = [tuple(args[0])] + list(args[1:])
    return _out(getattr(torch, name)(*args, **kw))


def multinomial_program(torch) -> list:
    """makemore's sampling loop (a bigram table, then one multinomial draw per step), and
    the other forms of multinomial."""
    out = []
    g = torch.Generator().manual_seed(2147483647)
    p = torch.randn((27, 27), generator=g).exp()
    p = p / p.sum(1, keepdim=True)
    ix, chain = 0, []
    for _ in range(20):
        ix = torch.multinomial(p[ix], num_samples=1, replacement=True, generator=g).item()
        chain.append(ix)
    out.append(chain)
    torch.manual_seed(0)
    w = torch.tensor([0.1, 0.2, 0.3, 0.4])
    out.append(torch.multinomial(w, 3).tolist())
    out.append(torch.multinomial(w, 10, replacement=True).tolist())
    rows = [[1.0, 2.0, 3.0], [5.0, 0.0, 1.0]]
    out.append(torch.multinomial(torch.tensor(rows), 6, replacement=True).tolist())
    out.append(torch.multinomial(torch.tensor(rows, dtype=torch.float64), 2).tolist())
    out.append(torch.rand(2).tolist())
    return out


def main() -> None:
    import torch

    result = {"torch": torch.__version__, "programs": [], "factories": []}
    for prog in programs():
        torch.manual_seed(prog["seed"])
        result["programs"].append([run_call(torch, n, a) for n, a in prog["calls"]])
    for case in factories():
        result["factories"].append(run_factory(torch, case))
    torch.manual_seed(0)
    result["bernoulli"] = {"draws": [torch.bernoulli(torch.full((40,), 0.3)).tolist(),
                                     torch.bernoulli(torch.zeros(40), 0.3).tolist(),
                                     torch.bernoulli(torch.full((20,), 0.7,
                                                                dtype=torch.float64)).tolist(),
                                     torch.rand(3).tolist()]}
    torch.manual_seed(1)
    result["bernoulli"]["dropout"] = torch.nn.functional.dropout(torch.ones(5, 4), 0.5).tolist()
    result["multinomial"] = multinomial_program(torch)
    path = pathlib.Path(__file__).with_name("torch_random.json")
    path.write_text(json.dumps(result), encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
