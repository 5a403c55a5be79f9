"""In-place operations on eager tensors (kernelgraph/eager/inplace.py): PyTorch's values,
version counters and errors, recorded from real PyTorch (tests/recorded/record_inplace.py),
and gradients through recorded in-place ops against finite differences."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.widgets.document import eager_document

_spec = importlib.util.spec_from_file_location(
    "record_inplace", Path(__file__).parent / "recorded" / "record_inplace.py")
R = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(R)

OWN = [n for n in R.CASES if not n.startswith(("function_", "grad_mode"))]


def same(want, got) -> bool:
    """Recorded ``want`` and kernelgraph's ``got`` agree (numbers within 1e-5 relative)."""
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(same(a, b) for a, b in zip(want, got))
    if isinstance(want, float) and isinstance(got, float | int) and not isinstance(got, bool):
        return math.isclose(want, got, rel_tol=1e-5, abs_tol=1e-7)
    return want == got


def check_case(recorded, name):
    want = recorded("inplace")["cases"][name]
    if want[0] == "ok":
        got = R.run(kg, name)
        assert got[0] == "ok", f"{name}: PyTorch computed {want[1]}, kernelgraph raised {got}"
        assert same(want[1], got[1]), f"{name}: PyTorch {want[1]}, kernelgraph {got[1]}"
        return
    error = getattr(__builtins__, want[0], None) if not isinstance(__builtins__, dict) else \
        __builtins__.get(want[0])
    assert error is not None, want
    with pytest.raises(error) as info:
        R.CASES[name](kg)
    assert str(info.value) == want[1]


@pytest.mark.parametrize("name", OWN)
def test_as_pytorch(recorded, name):
    check_case(recorded, name)


# -- the central case: an SGD step under no_grad -------------------------------------------------
def test_no_grad_step_writes_into_the_same_array():
    w = kg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    array = w._array
    (w * w).sum().backward()
    with kg.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
    assert w._array is array and w.is_leaf and w.requires_grad and w.grad_fn is None
    np.testing.assert_allclose(array, [0.8, 1.6, 2.4], rtol=1e-6)
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0, 0.0])


def test_operators_return_the_same_tensor():
    x = kg.ones(3)
    alias = x
    for step in (lambda t: t.__iadd__(1.0), lambda t: t.__isub__(0.5),
                 lambda t: t.__imul__(4.0), lambda t: t.__itruediv__(2.0)):
        assert step(x) is alias
    np.testing.assert_array_equal(x.numpy(), [3.0, 3.0, 3.0])
    assert x._version == 4


# -- values against NumPy ------------------------------------------------------------------------
@pytest.mark.parametrize("method, args, reference", [
    ("add_", (np.array([1.0, -1.0, 2.0]),), lambda a, b: a + b),
    ("sub_", (np.array([[1.0], [2.0]]),), lambda a, b: a - b),
    ("mul_", (2.5,), lambda a, b: a * b),
    ("div_", (np.array([2.0, 4.0, 8.0]),), lambda a, b: a / b),
    ("clamp_", (-0.5, 0.5), lambda a, lo, hi: np.clip(a, lo, hi)),
    ("fill_", (7.0,), lambda a, v: np.full_like(a, v)),
    ("copy_", (np.array([1.0, 2.0, 3.0]),), lambda a, b: np.broadcast_to(b, a.shape)),
    ("zero_", (), lambda a: np.zeros_like(a)),
    ("exp_", (), np.exp), ("tanh_", (), np.tanh), ("relu_", (), lambda a: np.maximum(a, 0)),
])
def test_values(method, args, reference):
    start = np.random.default_rng(1).normal(size=(2, 3)).astype(np.float32)
    x = kg.tensor(start.copy())
    array = x._array
    targs = [kg.tensor(a.astype(np.float32)) if isinstance(a, np.ndarray) else a for a in args]
    assert getattr(x, method)(*targs) is x
    assert x._array is array
    np.testing.assert_allclose(array, reference(start, *args), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("index, value", [
    ((0,), 5.0), ((slice(None), 1), np.array([1.0, 2.0])), ((Ellipsis, -1), 3.0),
    ((slice(0, 2), slice(None, None, 2)), np.array([[1.0, 2.0], [3.0, 4.0]])),
    ((np.array([True, False]),), 9.0), (([0, 1], [2, 0]), np.array([6.0, 7.0])),
    ((None, 1), np.array([1.0, 2.0, 3.0])),
])
def test_setitem_values(index, value):
    start = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = start.copy()
    want[index] = value
    x = kg.tensor(start)
    kindex = tuple(kg.tensor(i) if isinstance(i, np.ndarray) else i for i in index)
    x[kindex] = kg.tensor(value.astype(np.float32)) if isinstance(value, np.ndarray) else value
    np.testing.assert_array_equal(x.numpy(), want)
    assert x._version == 1


def test_setitem_errors():
    x = kg.zeros(2, 3)
    with pytest.raises(IndexError, match="out of range"):
        x[2] = 1.0
    with pytest.raises(RuntimeError, match="shape mismatch|expanded size"):
        x[0] = kg.ones(4)
    with pytest.raises(TypeError, match="slice start must be an int"):
        x[0.5:] = 1.0
    np.testing.assert_array_equal(x.numpy(), np.zeros((2, 3)))  # nothing was written


def test_normal_and_uniform_draw_pytorchs_stream():
    kg.manual_seed(3)
    a = kg.empty(40).normal_(1.0, 2.0)
    kg.manual_seed(3)
    b = kg.randn(40) * 2.0 + 1.0
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    u = kg.zeros(1000).uniform_(-2, 3)
    assert -2 <= u.numpy().min() and u.numpy().max() < 3
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        kg.zeros(3, dtype=kg.int64).normal_()


# -- gradients through recorded in-place ops ------------------------------------------------------
def _program(lib, x, w):
    """The same computation with in-place steps, for kernelgraph tensors or NumPy arrays."""
    y = x * 2.0
    if lib is np:
        y = y + w
        y = y * x
        y[0] = x[1] * 3.0
        y[1:] = np.clip(y[1:], -0.5, 0.5)
        return float(np.sum(y * y * w))
    y.add_(w)
    y *= x
    y[0] = x[1] * 3.0
    y[1:].clamp_(-0.5, 0.5)
    return (y * y * w).sum()


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(7)
    x0, w0 = rng.normal(size=4) * 0.5, rng.normal(size=4) * 0.5
    x = kg.tensor(x0, requires_grad=True)
    w = kg.tensor(w0, requires_grad=True)
    out = _program(kg, x, w)
    out.backward()
    np.testing.assert_allclose(out.item(), _program(np, x0.copy(), w0.copy()), rtol=1e-12)
    eps = 1e-6
    for leaf, start, other in ((x, x0, w0), (w, w0, x0)):
        numeric = []
        for k in range(4):
            hi, lo = start.copy(), start.copy()
            hi[k] += eps
            lo[k] -= eps
            pair = ((hi, other), (lo, other)) if leaf is x else ((other, hi), (other, lo))
            numeric.append((_program(np, *pair[0]) - _program(np, *pair[1])) / (2 * eps))
        np.testing.assert_allclose(leaf.grad.numpy(), numeric, rtol=1e-5, atol=1e-8)


def test_nodes_recorded_before_a_change_keep_the_old_tensor():
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    before = a * 3            # uses a as it was: d/dx = 6
    a.mul_(5)                 # a is now 10 x: d/dx = 10
    (before.sum() + a.sum()).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [16.0, 16.0])
    assert before.grad_fn.next_functions[0][0].op.name == "mul"


# -- what the graph and the views show ------------------------------------------------------------
def test_graph_shows_in_place_ops():
    x = kg.tensor([1.0, -2.0], requires_grad=True)
    y = x * 2
    y.add_(1)
    y[0] = 0.0
    y.relu_()
    nodes = kg.graph_of(y)["nodes"]
    assert [n["op"] for n in nodes] == ["leaf", "mul", "add_", "setitem_", "relu_"]
    assert [n["inplace"] for n in nodes] == [False, False, True, True, True]
    assert repr(y).endswith("grad_fn=<ReluBackward0>)")
    y2 = x * 1
    y2[1] = 3.0
    assert "grad_fn=<CopySlices>" in repr(y2)
    doc = eager_document(y)
    ops = [n["op"] for n in doc["nodes"]]
    assert {"add_", "setitem_", "relu_"} <= set(ops)


def test_detach_and_requires_grad_in_place():
    x = kg.tensor([1.0], requires_grad=True)
    y = x * 2
    z = y * 3
    y.detach_()
    assert y.is_leaf and not y.requires_grad
    z.backward()  # z was recorded before: its gradient still reaches x
    np.testing.assert_array_equal(x.grad.numpy(), [6.0])
    t = kg.zeros(2)
    assert t.requires_grad_() is t and t.requires_grad


# -- nn.Parameter -------------------------------------------------------------------------------
def test_parameter():
    from kernelgraph.nn.parameter import Parameter

    base = kg.tensor([1.0, 2.0])
    p = Parameter(base)
    assert isinstance(p, Parameter) and isinstance(p, kg.Tensor)
    assert p.requires_grad and p.is_leaf and p._array is base._array
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert not isinstance(p * 2, Parameter) and not isinstance(base, Parameter)
    q = Parameter(kg.ones(2), requires_grad=False)
    assert not q.requires_grad and str(q).startswith("Parameter containing:\n")
    with pytest.raises(RuntimeError, match=R"a leaf Variable"):
        p.add_(1)
    (p * p).sum().backward()
    with kg.no_grad():
        p -= 0.5 * p.grad
    np.testing.assert_array_equal(base.numpy(), [0.0, 0.0])  # shares base's values
    assert Parameter().shape == (0,)


# -- where kernelgraph says it differs ------------------------------------------------------------
def test_refused_where_a_graph_cannot_follow():
    f = kg.function(lambda x: (x * 2).add_(1))
    with pytest.raises(RuntimeError, match="kg.function cannot trace in-place ops"):
        f(kg.ones(2))
    with pytest.raises(RuntimeError, match="not supported inside kg.autobatch"):
        with kg.autobatch():
            y = kg.ones(2) * 2
            y.add_(1)
    x = kg.tensor([[1.0, 2.0]], requires_grad=True)
    y = x * 1
    with pytest.raises(RuntimeError, match="transpose view of a tensor that requires grad"):
        y.t().mul_(2)
    with pytest.raises(RuntimeError, match="use kg.where|for a mask"):
        z = x * 1
        z[z > 1] = x[0, 0] * 2
    with kg.no_grad():  # without autograd any view may be written
        y.t().mul_(2)
    np.testing.assert_array_equal(y.detach().numpy(), [[2.0, 4.0]])


def test_out_writes_the_result_into_a_tensor_you_own():
    """PyTorch's ``out=``: the result is copied into ``out`` (which is returned), without
    autograd; a shape kernelgraph would have to resize is refused by name."""
    x, y = kg.ones(2, 3), kg.full((2, 3), 2.0)
    r = kg.empty(2, 3)
    assert kg.add(x, y, out=r) is r and r.tolist() == [[3.0] * 3] * 2
    kg.exp(x, out=r)
    np.testing.assert_allclose(r.numpy(), np.exp(np.ones((2, 3), np.float32)))
    w = kg.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        kg.mul(w, x, out=r)
    with kg.no_grad():
        assert kg.mul(w, y, out=r).tolist() == [[2.0] * 3] * 2
    with pytest.raises(RuntimeError, match="does not resize out="):
        kg.add(x, y, out=kg.empty(3))
