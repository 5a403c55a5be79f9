"""PyTorch's ``out=`` (kernelgraph/ops/casting.py, used by every eager op and by
``kg.matmul``): the casting rule (``kg.can_cast``), the values written, and autograd's refusal,
each compared with what PyTorch 2.13 did (tests/recorded/record_out.py)."""

import importlib.util
from pathlib import Path

import pytest

import kernelgraph as kg

_spec = importlib.util.spec_from_file_location(
    "record_out", Path(__file__).parent / "recorded" / "record_out.py")
R = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(R)


@pytest.mark.parametrize("name", list(R.CASES))
def test_out_as_pytorch(recorded, name):
    want = recorded("out")["cases"][name]
    got = R.run(kg, name)
    assert got == want, f"{name}: PyTorch {want}, kernelgraph {got}"


def test_can_cast_as_pytorch(recorded):
    table = recorded("out")["can_cast"]
    got = {a: {b: kg.can_cast(getattr(kg, a if a != "bool" else "bool_"),
                              getattr(kg, b if b != "bool" else "bool_")) for b in table[a]}
           for a in table}
    assert got == table


def test_out_takes_a_tensor_of_the_result_shape():
    x = kg.ones(2, 3)
    with pytest.raises(TypeError, match="argument 'out' must be Tensor, not list"):
        kg.add(x, x, out=[0.0])
    with pytest.raises(RuntimeError, match="does not resize out="):
        kg.add(x, x, out=kg.empty(3))
    with pytest.raises(RuntimeError, match="does not resize out="):
        kg.matmul(x, kg.ones(3, 2), out=kg.empty(3))


def test_an_out_write_is_not_recorded_and_bumps_nothing_that_requires_grad():
    """Under no_grad an ``out`` that requires grad is written and stays a leaf (PyTorch)."""
    w = kg.zeros(2, requires_grad=True)
    with kg.no_grad():
        assert kg.matmul(kg.ones(2, 3), kg.ones(3), out=w) is w
    assert w.tolist() == [3.0, 3.0] and w.is_leaf and w.grad_fn is None
