"""Tensors print as PyTorch prints them (kernelgraph/eager/printing.py): each recorded case
(tests/recorded/record_printing.py runs it in real PyTorch) runs here with ``torch`` bound to
kernelgraph and must give PyTorch's text, character for character."""

from __future__ import annotations

import re

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.eager import printing

CASES = sorted(__import__("json").loads(
    (__import__("pathlib").Path(__file__).parent / "recorded" / "printing.json")
    .read_text(encoding="utf-8"))["cases"])


@pytest.fixture(autouse=True)
def _default_options():
    printing.set_printoptions(profile="default")
    yield
    printing.set_printoptions(profile="default")


@pytest.mark.parametrize("name", CASES)
def test_prints_as_pytorch(recorded, name):
    case = recorded("printing")["cases"][name]
    scope = {"torch": kg, "np": np}
    exec(case["code"], scope)  # noqa: S102 - the recorded case's own text
    got, want = scope["out"], case["out"]
    if name == "grad_fn_repr":  # an address differs run to run
        assert re.fullmatch(r"<AddBackward0 object at 0x[0-9a-f]+>", got), got
        assert re.fullmatch(r"<AddBackward0 object at 0x[0-9a-f]+>", want), want
        return
    assert got == want, f"\n{case['code']}\n--- kernelgraph\n{got}\n--- PyTorch\n{want}"


def test_print_options_round_trip():
    printing.set_printoptions(precision=2, linewidth=50)
    assert kg.get_printoptions()["precision"] == 2
    with kg.printoptions(precision=6):
        assert repr(kg.tensor([1 / 3])) == "tensor([0.333333])"
    assert repr(kg.tensor([1 / 3])) == "tensor([0.33])"
    with pytest.raises(ValueError, match="profile"):
        kg.set_printoptions(profile="long")


def test_integer_tensor_never_shows_grad_fn():
    # PyTorch's integer results never require grad, so never print a grad_fn.
    a = kg.tensor([1.5, 2.5], requires_grad=True)
    assert repr(a.long()) == "tensor([1, 2])"


def test_format_spec_needs_one_element():
    assert f"{kg.tensor(2.0 / 3):.2f}" == "0.67"
    with pytest.raises(TypeError):
        f"{kg.tensor([1.0, 2.0]):.2f}"


def test_dot_of_vectors_is_named_dot_backward():
    # PyTorch: torch.dot(a, b) and a @ b of two vectors print grad_fn=<DotBackward0>; a view
    # of another 0-d result stays <ViewBackward0>.
    a = kg.tensor([1.0, 2.0], requires_grad=True)
    b = kg.tensor([3.0, 4.0])
    assert repr(kg.dot(a, b)) == "tensor(11., grad_fn=<DotBackward0>)"
    assert repr(b @ a) == "tensor(11., grad_fn=<DotBackward0>)"
    assert repr(a.sum().reshape(())) == "tensor(3., grad_fn=<ViewBackward0>)"
    assert repr(a.view(1, 2) @ b.view(2, 1)) == "tensor([[11.]], grad_fn=<MmBackward0>)"


def test_grad_fn_names_are_on_the_cards():
    """PyTorch's name of each op's backward is a fact of its card (``op.grad_fn``: a name, or
    a function of the recorded node), which printing reads; no table of op names elsewhere."""
    from kernelgraph.eager import printing
    from kernelgraph.ops import OPS

    assert OPS["mul"].grad_fn == "MulBackward0" and OPS["concat"].grad_fn == "CatBackward0"
    assert OPS["sin"].grad_fn == "SinBackward0"  # the default: the name in CamelCase
    assert not hasattr(printing, "GRAD_FN_NAMES")
    for name, op in OPS.items():
        assert type(op.grad_fn) is str or callable(op.grad_fn), name
    x = kg.ones(2, 3, requires_grad=True)
    assert repr(x.sum().grad_fn).startswith("<SumBackward0 ")
    assert repr(x.sum(1).grad_fn).startswith("<SumBackward1 ")
    assert repr((x ** 2).grad_fn).startswith("<PowBackward0 ")
    assert repr((2 ** x).grad_fn).startswith("<PowBackward2 ")
    assert repr(x.t().grad_fn).startswith("<TBackward0 ")
    assert repr(x[0].grad_fn).startswith("<SelectBackward0 ")
