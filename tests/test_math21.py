"""PyTorch's math, reductions and products on kernelgraph, against real PyTorch.

Every case of tests/recorded/record_math21.py is one expression over ``torch``; here it runs
with ``torch`` bound to ``kernelgraph`` and must give what PyTorch 2.13 gave: the same kind
of result (a tensor, the named tuple of ``torch.max(x, dim)``, a tuple), dtype, shape and
values (NaN where PyTorch has NaN, the sign of a zero included), or an error of PyTorch's
type whose message holds PyTorch's. The same functions on graph nodes build graphs that
compute the eager numbers (:func:`test_static_mode_gives_the_eager_numbers`).
"""

from __future__ import annotations

import builtins

import numpy as np
import pytest

import kernelgraph as kg
from tests.recorded.record_math21 import CASES, SETUP

RTOL = {"float32": 2e-6, "float64": 1e-12}


@pytest.fixture(scope="module")
def torch_results(recorded):
    data = recorded("math21")
    assert data["cases"] == CASES, "math21.json is stale: run tests/recorded/record_math21.py"
    return data["results"]


def _scope() -> dict:
    scope = {"torch": kg}
    exec(SETUP, scope)  # noqa: S102 - the fixed text of the record script
    return scope


def _check(got, want, where: str) -> None:
    kind = want["kind"]
    if kind == "tensor":
        assert isinstance(got, kg.Tensor), f"{where}: {type(got).__name__}, not a tensor"
        assert got.dtype.name == want["dtype"], f"{where}: dtype {got.dtype.name}"
        assert list(got.shape) == want["shape"], f"{where}: shape {got.shape}"
        values = np.asarray(got.detach().numpy())
        expected = np.asarray(want["values"], dtype=values.dtype)
        if values.dtype.kind == "f":
            np.testing.assert_allclose(values, expected, rtol=RTOL[want["dtype"]], atol=1e-7,
                                       err_msg=where)
            zeros = expected == 0
            assert np.array_equal(np.signbit(values[zeros]), np.signbit(expected[zeros])), (
                f"{where}: the sign of a zero differs")
        else:
            assert np.array_equal(values, expected), f"{where}: {values} != {expected}"
    elif kind == "named":
        assert type(got).__name__ == want["type"], f"{where}: {type(got).__name__}"
        _check(got.values, want["values"], f"{where}.values")
        _check(got.indices, want["indices"], f"{where}.indices")
        values, indices = got  # unpacks as PyTorch's does
        assert values is got[0] and indices is got[1]
    elif kind == "tuple":
        assert isinstance(got, tuple) and len(got) == len(want["items"]), where
        for k, (g, w) in enumerate(zip(got, want["items"])):
            _check(g, w, f"{where}[{k}]")
    else:
        assert got == want["value"], where


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_as_pytorch(name, torch_results):
    want = torch_results[name]
    if want["kind"] == "error":
        with pytest.raises(getattr(builtins, want["type"])) as e:
            eval(CASES[name], _scope())  # noqa: S307 - the fixed cases
        assert want["message"] in str(e.value), (str(e.value), want["message"])
        return
    got = eval(CASES[name], _scope())  # noqa: S307 - the fixed cases
    _check(got, want, name)


def test_named_tuple_prints_as_pytorch(torch_results):
    got = kg.max(kg.tensor([[1, 5], [5, 1]]), 0)
    assert repr(got).startswith("torch.return_types.max(\nvalues=")
    assert repr(got).endswith(")") and "\nindices=" in repr(got)
    assert isinstance(got, kg.return_types.max) and got._name == "max"


def test_tf_style_axis_keeps_the_values_alone():
    x = kg.tensor([[1.0, 3.0], [4.0, 2.0]])
    assert kg.max(x, axis=1).tolist() == [3.0, 4.0]
    assert kg.min(x, axis=(0, 1), keepdims=True).tolist() == [[1.0]]
    assert kg.reduce_max is kg.ops.max and kg.reduce_sum is kg.ops.sum  # TF's: the cards
    assert kg.sum(x, axis=0, keepdims=True).tolist() == [[5.0, 5.0]]


def test_static_mode_gives_the_eager_numbers():
    """The same functions on graph nodes: named tuples of nodes, dim tuples, std, products."""
    x0 = np.array([[1.0, 3.0, 3.0], [2.0, -0.5, 2.0]], np.float32)

    def program(torch, x, ones3, ones32):
        values, indices = torch.max(x, 1)
        return [values, indices, torch.min(x, 0).values, torch.sum(x, (0, 1)),
                torch.mean(x, 1, keepdim=True), torch.std(x, 1), torch.var(x, correction=0),
                torch.prod(x, 0), torch.argmin(x, 1), torch.all(x), torch.any(x, 0),
                torch.norm(x), torch.round(x * 1.5), torch.sin(x),
                torch.matmul(x, ones3), torch.mm(x, ones32), torch.dot(ones3, ones3),
                torch.clamp(x, min=0.0), torch.max(x)]

    ones3, ones32 = np.ones(3, np.float32), np.ones((3, 2), np.float32)
    eager = [t.numpy() for t in program(kg, kg.tensor(x0), kg.tensor(ones3),
                                        kg.tensor(ones32))]
    with kg.Graph().as_default() as g:
        ph = kg.placeholder(kg.float32, shape=[2, 3])
        nodes = program(kg, ph, kg.constant(ones3), kg.constant(ones32))
    with kg.Session(g) as sess:
        static = sess.run(nodes, {ph: x0})
    for k, (a, b) in enumerate(zip(eager, static)):
        assert a.dtype == b.dtype and a.shape == b.shape, k
        np.testing.assert_array_equal(a, b, err_msg=str(k))


def test_static_gradient_of_max_dim_goes_to_the_chosen_index():
    x0 = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]])
    with kg.Graph().as_default() as g:
        x = kg.placeholder(kg.float64, shape=[2, 3])
        (dx,) = kg.gradients(kg.sum(kg.max(x, 1).values), [x])
        (dall,) = kg.gradients(kg.max(x), [x])
    with kg.Session(g) as sess:
        got, tie = sess.run([dx, dall], {x: x0})
    np.testing.assert_array_equal(got, [[0, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(tie, [[0, 0.5, 0.5], [0, 0, 0]])


def test_second_derivatives_of_the_new_math():
    """The gradient rules are written with the public ops, so they differentiate again."""
    x = kg.tensor([0.3, -0.6, 1.1], dtype=kg.float64, requires_grad=True)
    (g,) = kg.autograd.grad(kg.sin(x).sum(), x, create_graph=True)
    (gg,) = kg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), -np.sin([0.3, -0.6, 1.1]), rtol=1e-14)
    (g,) = kg.autograd.grad(kg.max(x, 0).values * x.sum(), x, create_graph=True)
    (gg,) = kg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [1.0, 1.0, 4.0], rtol=1e-14)


def test_bad_arguments_are_refused_by_name():
    x = kg.tensor([[1.0, 2.0]])
    with pytest.raises(TypeError, match="dim"):
        kg.max(x, (0, 1))
    with pytest.raises(TypeError, match="dim or axis|axis"):
        kg.sum(x, 0, axis=1)
    with pytest.raises(ValueError, match="norm"):
        kg.norm(x, p="nuc")
    with pytest.raises(ValueError, match="at least one of 'min' or 'max'"):
        kg.clamp(x)
    with pytest.raises(RuntimeError, match="at least 1D"):
        kg.matmul(kg.tensor(1.0), x)
    with pytest.raises(IndexError, match="out of range"):
        kg.ops.OPS["max_dim"](np.ones((2, 3)), np.array([0, 3]), axis=1)
