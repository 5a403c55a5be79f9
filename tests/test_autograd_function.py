"""``kg.autograd.Function`` (kernelgraph/autograd.py) and the grad-mode switches as
decorators: PyTorch's behaviour recorded from real PyTorch (tests/recorded/
record_inplace.py), gradients against finite differences, and what the views show."""

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph import trace
from kernelgraph.autograd import Function
from kernelgraph.widgets.document import eager_document
from tests.test_inplace import R, check_case

CASES = [n for n in R.CASES if n.startswith(("function_", "grad_mode"))]


@pytest.mark.parametrize("name", CASES)
def test_as_pytorch(recorded, name):
    check_case(recorded, name)


class Softsign(Function):
    """x / (1 + |x|), with its gradient written by hand."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * x / (1 + x.abs())

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * ctx.scale / (1 + x.abs()) ** 2, None


def test_gradient_matches_finite_differences():
    x0 = np.array([-1.5, -0.2, 0.3, 2.0])
    x = kg.tensor(x0, requires_grad=True)
    y = Softsign.apply(x, 2.0)
    np.testing.assert_allclose(y.detach().numpy(), 2 * x0 / (1 + np.abs(x0)), rtol=1e-12)
    (y * y).sum().backward()

    def f(v):
        return np.sum((2 * v / (1 + np.abs(v))) ** 2)

    eps = 1e-6
    numeric = [(f(x0 + eps * e) - f(x0 - eps * e)) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6)


def test_the_node_is_named_after_the_class():
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    y = Softsign.apply(x, 1.0)
    assert y.grad_fn.op.name == "Softsign" and "grad_fn=<SoftsignBackward>" in repr(y)
    assert [n["op"] for n in kg.graph_of(y)["nodes"]] == ["leaf", "Softsign"]
    doc = eager_document(y * 2)
    assert "Softsign" in [n["op"] for n in doc["nodes"]]
    with pytest.raises(RuntimeError, match="runs only through Softsign.apply"):
        y.grad_fn.op.forward(x._array)


def test_a_watcher_sees_the_node():
    seen = []
    with trace.listening(lambda kind, **info: seen.append((kind, info.get("node")))):
        y = Softsign.apply(kg.tensor([1.0], requires_grad=True), 1.0)
    assert ("node_added", y.grad_fn) in seen


def test_no_record_without_grad():
    x = kg.tensor([1.0, -1.0])
    y = Softsign.apply(x, 1.0)
    assert not y.requires_grad and y.grad_fn is None
    np.testing.assert_allclose(y.numpy(), [0.5, -0.5])


def test_variable_is_a_tensor():
    from kernelgraph.autograd import Variable

    t = kg.tensor([1.0])
    assert Variable(t) is t
    v = Variable(t, requires_grad=True)
    assert v.requires_grad and v.is_leaf and v._array is t._array


def test_gradcheck():
    from kernelgraph.autograd import gradcheck

    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # should be 2 x

    x = kg.tensor([0.5, 2.0, -1.0], dtype=kg.float64, requires_grad=True)
    assert gradcheck(lambda t: Softsign.apply(t, 3.0), (x,))
    assert not gradcheck(Wrong.apply, (x,), raise_exception=False)
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to "
                                           "input 0"):
        gradcheck(Wrong.apply, (x,))
    np.testing.assert_array_equal(x.detach().numpy(), [0.5, 2.0, -1.0])  # left as it was
