"""Record ``torch.fx`` (symbolic tracing, the printed graph, the generated code, graph
editing, ``replace_pattern``, rewriting with proxies) into ``torch_fx.json`` (read by
tests/test_fx.py).

Each case is written once against PyTorch's API and takes the framework's namespace ``T``
(``T.torch``, ``T.nn``, ``T.fx``), so the tests run the very same code on kernelgraph, where
``torch.X`` is ``kernelgraph.X``: the printed graph and code name ``kernelgraph.relu`` where
PyTorch's name ``torch.relu``. Run with an environment that has torch (see README.md)::

    python tests/recorded/record_torch_fx.py
"""

from __future__ import annotations

import contextlib
import io
import json
import operator
import types
from pathlib import Path

import numpy as np


def namespaces(torch, nn, fx):
    return types.SimpleNamespace(torch=torch, nn=nn, fx=fx)


def data(seed: int, *shape) -> np.ndarray:
    """Inputs and weights from NumPy (not from either framework's generator)."""
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def set_linear(T, layer, seed: int) -> None:
    with T.torch.no_grad():
        layer.weight.copy_(T.torch.tensor(data(seed, *layer.weight.shape)))
        layer.bias.copy_(T.torch.tensor(data(seed + 100, *layer.bias.shape)))


def tabular(gm) -> str:
    """What ``gm.graph.print_tabular()`` prints."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        gm.graph.print_tabular()
    return buf.getvalue()


def traced(gm, *inputs) -> dict:
    out = gm(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    return {"graph": str(gm.graph), "code": gm.code, "str": str(gm),
            "readable": gm.print_readable(print_output=False), "tabular": tabular(gm),
            "out": [o.detach().tolist() for o in outs],
            "nodes": [[n.name, n.op, len(n.users)] for n in gm.graph.nodes]}


def case_mlp(T) -> dict:
    """An MLP with a function call, a method call, an operator and a parameter read."""
    class MLP(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = T.nn.Linear(3, 4)
            self.fc2 = T.nn.Linear(4, 2)

        def forward(self, x):
            h = T.torch.relu(self.fc1(x))
            h = h.view(-1, 4) + 1
            return self.fc2(h) * self.fc2.bias

    m = MLP()
    set_linear(T, m.fc1, 1)
    set_linear(T, m.fc2, 2)
    gm = T.fx.symbolic_trace(m)
    x = T.torch.tensor(data(3, 2, 3))
    rec = traced(gm, x)
    rec["eager"] = m(x).detach().tolist()
    rec["retraced"] = T.fx.symbolic_trace(gm).code
    rec["repr"] = repr(gm).splitlines()[0]
    return rec


def case_sequential(T) -> dict:
    """Containers are traced into: ``layers.0`` is a node ``layers_0``; kwargs, getitem,
    functional calls and a tuple result."""
    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = T.nn.Sequential(T.nn.Linear(3, 3), T.nn.ReLU(), T.nn.Linear(3, 2))

        def forward(self, x, y):
            h = self.layers(x)
            s = T.torch.sum(h, dim=1)
            return T.nn.functional.relu(h, inplace=False)[:, 0] - s, y * 2

    m = Net()
    set_linear(T, m.layers[0], 4)
    set_linear(T, m.layers[2], 5)
    gm = T.fx.symbolic_trace(m)
    return traced(gm, T.torch.tensor(data(6, 2, 3)), T.torch.tensor(data(7, 2)))


def case_add_to_mul(T) -> dict:
    """The FX tutorial's transform: every add becomes a mul."""
    class M(T.nn.Module):
        def forward(self, x, y):
            return T.torch.add(x, y) + x

    gm = T.fx.symbolic_trace(M())
    before = str(gm.graph)
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in (T.torch.add, operator.add):
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(T.torch.mul, node.args, node.kwargs)
                node.replace_all_uses_with(new)
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    rec = traced(gm, T.torch.tensor([2.0, -1.0]), T.torch.tensor([3.0, 4.0]))
    rec["before"] = before
    return rec


def case_decompose_relu(T) -> dict:
    """The FX tutorial's rewrite with proxies: relu(x) becomes (x > 0) * x."""
    class M(T.nn.Module):
        def forward(self, x):
            return T.torch.relu(x) + 1

    gm = T.fx.symbolic_trace(M())
    graph = gm.graph
    for node in graph.nodes:
        if node.op == "call_function" and node.target is T.torch.relu:
            with graph.inserting_before(node):
                tracer = T.fx.proxy.GraphAppendingTracer(graph)
                x = T.fx.Proxy(node.args[0], tracer)
                out = (x > 0) * x
                node.replace_all_uses_with(out.node)
            graph.erase_node(node)
    gm.recompile()
    return traced(gm, T.torch.tensor([-2.0, 0.5, 3.0]))


def case_replace_pattern(T) -> dict:
    class M(T.nn.Module):
        def forward(self, x, y):
            a = T.torch.neg(T.torch.relu(x))
            return T.torch.neg(T.torch.relu(a + y)) * 3

    def pattern(x):
        return T.torch.neg(T.torch.relu(x))

    def replacement(x):
        return T.torch.mul(x, 2)

    gm = T.fx.symbolic_trace(M())
    matches = T.fx.replace_pattern(gm, pattern, replacement)
    rec = traced(gm, T.torch.tensor([1.0, -2.0]), T.torch.tensor([0.5, 0.5]))
    rec["matches"] = len(matches)
    return rec


def case_tensor_constant(T) -> dict:
    """A tensor that is no parameter, used twice and on the left of an operator."""
    c = T.torch.tensor([1.0, 2.0])

    def f(x):
        return c + x, c @ x, T.torch.mul(x, c)

    return traced(T.fx.symbolic_trace(f), T.torch.tensor([3.0, -1.0]))


def case_builtin_argument_name(T) -> dict:
    """An argument named as a Python builtin (``Sequential.forward(self, input)``)."""
    class Net(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.act = T.nn.Tanh()

        def forward(self, input):  # noqa: A002 - the case is this name
            return self.act(input) * 2

    gm = T.fx.symbolic_trace(Net())
    rec = traced(gm, T.torch.tensor([-1.0, 0.5]))
    rec["keyword"] = gm(input=T.torch.tensor([2.0])).tolist()
    return rec


def case_insertion(T) -> dict:
    """Where new nodes go: ``inserting_after(n)`` puts each just after ``n`` (the last made
    comes first), ``inserting_before`` keeps their order, ``append``/``prepend`` move."""
    g = T.fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(T.torch.neg, (x,))
    g.output(y)
    with g.inserting_after(x):
        a = g.call_function(T.torch.relu, (x,))
        b = g.call_function(T.torch.exp, (a,))
    with g.inserting_before(y):
        c = g.call_function(T.torch.sin, (b,))
        d = g.call_function(T.torch.cos, (c,))
    with g.inserting_after():
        e = g.call_function(T.torch.tanh, (1,))
    rec = {"made": [n.name for n in g.nodes]}
    y.prepend(d)
    x.append(e)
    rec["moved"] = [n.name for n in g.nodes]
    rec["next_prev"] = [y.next.name, y.prev.name]
    return rec


def case_dict_root(T) -> dict:
    """A GraphModule made from a dict of dotted names: the modules are put at those paths."""
    lin = T.nn.Linear(2, 2)
    set_linear(T, lin, 12)
    g = T.fx.Graph()
    x = g.placeholder("x")
    h = g.call_module("block.lin", (x,))
    g.output(g.call_method("relu", (h,)))
    gm = T.fx.GraphModule({"block.lin": lin}, g, "Built")
    rec = traced(gm, T.torch.tensor(data(13, 3, 2)))
    rec["modules"] = [name for name, _ in gm.named_modules()]
    return rec


def case_graph_api(T) -> dict:
    """A graph built by hand, dead-code elimination and the errors of bad edits."""
    g = T.fx.Graph()
    x = g.placeholder("x")
    y = g.call_function(T.torch.neg, (x,))
    unused = g.call_method("sum", (x,))
    z = g.call_function(operator.mul, (y, 2.5), {})
    g.output((z, y))
    rec = {"built": str(g)}
    try:
        g.erase_node(x)
    except RuntimeError as e:
        rec["erase_used"] = str(e).split(" users")[0]
    rec["dead"] = g.eliminate_dead_code()
    rec["after_dce"] = str(g)
    rec["unused_erased"] = unused not in list(g.nodes)
    rec["map_arg"] = repr(T.fx.node.map_arg((x, [y, 1], {"k": z}), lambda n: n.name))
    gm = T.fx.GraphModule(T.nn.Module(), g)
    rec["code"] = gm.code
    rec["out"] = [t.tolist() for t in gm(T.torch.tensor([1.0, -3.0]))]
    return rec


def case_control_flow(T) -> dict:
    class M(T.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x

    try:
        T.fx.symbolic_trace(M())
    except Exception as e:  # noqa: BLE001 - the type is recorded
        return {"type": type(e).__name__, "message": str(e)}
    return {}


def case_jit_trace(T) -> dict:
    """``torch.jit.trace`` of a module and of a function of two tensors: outputs on the
    example and on other inputs."""
    m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.ReLU(), T.nn.Linear(4, 2))
    set_linear(T, m[0], 8)
    set_linear(T, m[2], 9)
    x, x2 = T.torch.tensor(data(10, 2, 3)), T.torch.tensor(data(11, 5, 3))
    traced = T.torch.jit.trace(m, x)
    f = T.torch.jit.trace(lambda a, b: a * b + 1, (x, x))
    return {"module": [traced(x).tolist(), traced(x2).tolist()],
            "params": len(list(traced.parameters())),
            "function": f(x2, x2).tolist()}


def script_me(x):
    if bool(x.sum() > 0):
        return x * 2
    return -x


def case_jit_script(T) -> dict:
    """``torch.jit.script`` keeps data-dependent control flow."""
    f = T.torch.jit.script(script_me)
    return {"out": [f(T.torch.tensor([1.0, 2.0])).tolist(),
                    f(T.torch.tensor([-1.0, -2.0])).tolist()]}


CASES = {"mlp": case_mlp, "sequential": case_sequential, "add_to_mul": case_add_to_mul,
         "decompose_relu": case_decompose_relu, "replace_pattern": case_replace_pattern,
         "tensor_constant": case_tensor_constant, "graph_api": case_graph_api,
         "control_flow": case_control_flow, "builtin_argument_name": case_builtin_argument_name,
         "insertion": case_insertion, "dict_root": case_dict_root,
         "jit_trace": case_jit_trace, "jit_script": case_jit_script}


def main() -> None:
    import torch  # noqa: PLC0415 - only the recording environment has torch
    import torch.fx  # noqa: PLC0415

    T = namespaces(torch, torch.nn, torch.fx)
    out = {"versions": {"torch": torch.__version__}}
    for name, case in CASES.items():
        out[name] = case(T)
    path = Path(__file__).with_name("torch_fx.json")
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
