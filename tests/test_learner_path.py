"""The path a learner reads: what an eager ``c = a * b; c.backward()`` runs, and
the shape of the eager front-end around it: Tensor's methods set in one place, hooks for
the floors above set by explicit functions."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import kernelgraph as kg
from kernelgraph import eager

REPO = Path(__file__).resolve().parent.parent

# About 300 lines in at most 8 modules (it was 572 lines in 38
# functions across 14 modules before). Optimisations and in-place bookkeeping stay off it.
MAX_LINES = 310
MAX_MODULES = 8
OFF_THE_PATH = ("kernelgraph.ops.products", "kernelgraph.eager.sinks",
                "kernelgraph.eager.inplace", "kernelgraph.eager.versions",
                "kernelgraph.eager.grad_mode", "kernelgraph.dtypes")


def test_the_learners_path_is_short():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    run = subprocess.run([sys.executable, str(REPO / "tests" / "learner_path.py"), "--json"],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout)
    listing = "\n".join(f"{n:4d}  {name}" for name, n in sorted(found["functions"].items()))
    summary = (f"{found['lines']} lines in {len(found['functions'])} functions across "
               f"{len(found['modules'])} modules:\n{listing}")
    assert found["lines"] <= MAX_LINES and len(found["modules"]) <= MAX_MODULES, summary
    assert not set(OFF_THE_PATH) & set(found["modules"]), summary


def _sets_tensor_attribute(node) -> bool:
    """``Tensor.name = ...`` (but ``__module__``) or ``setattr(Tensor, ...)``."""
    if isinstance(node, ast.Assign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                   and t.value.id == "Tensor" and t.attr != "__module__" for t in targets)
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "setattr" and node.args
            and isinstance(node.args[0], ast.Name) and node.args[0].id == "Tensor")


def test_tensor_methods_are_set_in_one_place():
    # eager/methods.py's install() is where Tensor gets every method its class body lacks;
    # no other module patches the class (nn.Parameter's print included).
    elsewhere = []
    for path in sorted((REPO / "kernelgraph").rglob("*.py")):
        if path == REPO / "kernelgraph" / "eager" / "methods.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        elsewhere += [f"{path.relative_to(REPO)}:{n.lineno}" for n in ast.walk(tree)
                      if _sets_tensor_attribute(n)]
    assert not elsewhere, "Tensor attributes set outside eager/methods.py:\n" + \
        "\n".join(elsewhere)


def test_a_parameter_prints_as_in_pytorch():
    p = kg.nn.Parameter(kg.tensor([1.0, 2.0]))
    assert repr(p) == str(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert repr(p * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert type(p) is kg.Tensor


def test_the_floors_above_hook_in_through_functions():
    # No module-class swap: the package is a plain module, and the hooks are set by calls.
    assert type(sys.modules["kernelgraph.eager"]) is types.ModuleType
    seen = []
    t = kg.tensor([1.5])
    eager.set_tracer(lambda kind, tensor, value: seen.append((kind, value)))
    try:
        t.item()
        kg.tensor(2.0)
    finally:
        eager.set_tracer(None)
    assert seen == [("item()", 1.5), ("new", None)]
    assert eager._tracer is None
    t.item()  # nobody told any more
    assert len(seen) == 2


@pytest.mark.parametrize("written", [False, True], ids=["plain", "after an in-place op"])
def test_an_rnn_backward_still_sums_its_weight_gradients_in_one_product(written):
    # The sink mode (eager/sinks.py) is taken for a graph that holds an RNN cell, also with
    # an in-place op in it: the same gradients as the cell's rule computes step by step
    # (create_graph: no sinks).
    kg.manual_seed(0)
    cell = kg.nn.RNNCell(3, 4)
    xs = [kg.randn(2, 3) for _ in range(5)]

    def loss():
        h = kg.zeros(2, 4)
        for x in xs:
            h = cell(x, h)
        if written:
            h = h * 1.0
            h[0] = h[0] * 2.0
        return (h * h).sum()

    loss().backward()
    summed = [p.grad.numpy().copy() for p in cell.parameters()]
    stepwise = kg.autograd.grad(loss(), list(cell.parameters()), create_graph=True)
    for a, b in zip(summed, stepwise):
        assert abs(a - b.detach().numpy()).max() < 1e-5
