"""``kg.fx`` (PyTorch's ``torch.fx``) and ``kg.jit.trace`` / ``kg.jit.script`` against
recorded PyTorch: the same cases (tests/recorded/record_torch_fx.py) run on kernelgraph give
the graph PyTorch prints, the code it generates (with ``kernelgraph`` where PyTorch writes
``torch``) and its outputs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph import fx, nn
from tests.recorded.record_torch_fx import CASES, namespaces

T = namespaces(kg, nn, fx)


def as_kernelgraph(text: str) -> str:
    """PyTorch's printed names with kernelgraph's package name (``torch.X`` is ``kg.X``)."""
    return text.replace("torch.", "kernelgraph.")


@pytest.mark.parametrize("name", [n for n in CASES if n != "control_flow"])
def test_case_matches_pytorch(recorded, name):
    want = recorded("torch_fx")[name]
    with warnings.catch_warnings():
        # kg.jit.script's trace reads a value (``if x.sum() > 0``) and says so
        warnings.simplefilter("ignore", kg.errors.TraceWarning)
        got = CASES[name](T)
    assert set(got) == set(want)
    for key, value in want.items():
        if key in ("out", "eager", "module", "function"):
            for g, w in zip(got[key], value, strict=True):
                np.testing.assert_allclose(np.array(g, dtype=np.float64),
                                           np.array(w, dtype=np.float64), rtol=1e-5,
                                           atol=1e-5, err_msg=key)
        elif key == "tabular":
            assert _columns(got[key]) == _columns(value)
        elif isinstance(value, str):
            assert got[key] == as_kernelgraph(value), key
        else:
            assert got[key] == value, key


def _columns(table: str) -> list:
    """print_tabular's rows split at the columns its dashed line marks; a call_function's
    target is the function's repr (an address in PyTorch), so only its presence is kept."""
    lines = table.rstrip("\n").split("\n")
    spans, start = [], 0
    for dashes in lines[1].split("  "):
        spans.append((start, start + len(dashes)))
        start += len(dashes) + 2
    rows = [[line[a:b].strip() for a, b in spans] for line in lines[2:]]
    widths = [b - a for a, b in spans]
    return [lines[0].split(), [r[:2] + [r[2] if r[0] != "call_function" else "<f>"] + r[3:]
                               for r in rows],
            [w for i, w in enumerate(widths) if i != 2]]


def test_control_flow_on_a_proxy_is_a_trace_error(recorded):
    want = recorded("torch_fx")["control_flow"]
    relu, call = kg.relu, nn.Module.__call__
    assert CASES["control_flow"](T) == want
    assert kg.relu is relu and nn.Module.__call__ is call  # put back after the error too
    assert issubclass(fx.proxy.TraceError, ValueError)


def test_tracing_changes_nothing_outside_the_trace():
    relu, call = kg.relu, nn.Module.__call__
    fx.symbolic_trace(lambda x: kg.relu(x) * 2)
    assert kg.relu is relu and nn.Module.__call__ is call
    assert kg.relu(kg.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]


def test_generated_code_holds_no_user_text_as_code():
    # a sub-module under a name that is no identifier is read with getattr and a literal
    evil = "x\n__import__('os')#"
    m = nn.Module()
    m.add_module(evil, nn.ReLU())
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_module(evil, (x,)))
    gm = fx.GraphModule(m, g)
    assert "\n__import__" not in gm.code
    assert 'getattr(self, "x\\n__import__' in gm.code
    assert gm(kg.tensor([-1.0, 3.0])).tolist() == [0.0, 3.0]
    # a method name that is no identifier is refused, never written
    g = fx.Graph()
    g.output(g.call_method("relu()\nimport os\nx.relu", (g.placeholder("x"),)))
    with pytest.raises(ValueError, match="no identifier"):
        fx.GraphModule(nn.Module(), g)


def test_wrap_records_a_function_instead_of_tracing_into_it():
    gm = fx.symbolic_trace(_uses_helper)
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_function", "output"]
    assert gm.graph.nodes[1].target is _helper
    assert gm(kg.tensor([1.0, 2.0])).tolist() == [3.0, 4.0]
    with pytest.raises(NotImplementedError, match="builtin"):
        fx.wrap("not_a_builtin_name")


def test_bad_graphs_are_refused_clearly():
    g = fx.Graph()
    x = g.placeholder("x")
    with pytest.raises(ValueError, match="must be one of"):
        g.create_node("call_everything", "f")
    y = g.call_function(kg.neg, (x,))
    g.output(y)
    with g.inserting_before(y):
        bad = g.call_function(kg.neg, (x,))
    bad.args = (y,)  # reads a node defined after it
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()
    with pytest.raises(TypeError, match="Module or a function"):
        fx.symbolic_trace(3)


def _helper(x):
    if x.sum() > 100:  # control flow: only traceable as one wrapped call
        return x
    return x + 2


fx.wrap(_helper)


def _uses_helper(x):
    return _helper(x)


def test_jit_trace_keeps_eager_results_where_pytorch_freezes_the_path():
    # PyTorch's trace would keep the branch the example took (x * 2) for every input
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kg.errors.TraceWarning)
        f = kg.jit.trace(_branchy, kg.tensor([1.0, 2.0]))
        assert f(kg.tensor([-1.0, -2.0])).tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="example_inputs"):
        kg.jit.trace(_branchy)


def _branchy(x):
    if bool(x.sum() > 0):
        return x * 2
    return -x
