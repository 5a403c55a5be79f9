"""Record PyTorch's in-place semantics and autograd.Function into ``inplace.json`` (read by
tests/test_inplace.py and tests/test_autograd_function.py).

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_inplace.py

Each case is a function of the ``torch`` module, written once against PyTorch's API; the
tests run the same function with ``kernelgraph`` as ``torch`` (only the import differs).
A case is recorded as ``["ok", value]`` (tensors as nested lists) or ``[error type name,
message]``.
"""

from __future__ import annotations

import json
from pathlib import Path

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# -- version counters and saved values --------------------------------------------------------
@case
def sigmoid_out_changed(torch):
    x = torch.ones(3, requires_grad=True)
    a = x.sigmoid()
    a.mul_(2)
    a.sum().backward()


@case
def tanh_out_changed_2d(torch):
    x = torch.ones(2, 3, requires_grad=True)
    a = x.tanh()
    a.add_(1)
    a.sum().backward()


@case
def exp_out_changed_float64(torch):
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    e = x.exp()
    e.add_(1)
    e.sum().backward()


@case
def input_of_mul_changed(torch):
    x = torch.ones(3, requires_grad=True)
    a = x * 1
    y = a * a
    a.add_(1)
    y.sum().backward()


@case
def input_of_cat_changed(torch):
    # cat's and stack's backward read only the inputs' sizes: a later change is no error
    x = torch.ones(2, requires_grad=True)
    a = x * 1
    y = torch.cat([a, a * 3])
    a.mul_(2)
    (y * torch.arange(1.0, 5.0)).sum().backward()
    return x.grad


@case
def input_of_stack_changed(torch):
    x = torch.ones(2, requires_grad=True)
    a = x * 1
    y = torch.stack([a, a * 3], 1)
    a.mul_(2)
    (y * torch.arange(1.0, 5.0).reshape(2, 2)).sum().backward()
    return x.grad


@case
def leaf_input_changed(torch):
    w = torch.ones(3, requires_grad=True)
    x = torch.ones(3)
    y = w * x
    x.add_(1)
    y.sum().backward()


@case
def div_numerator_changed(torch):
    x = torch.ones(3, requires_grad=True)
    y = torch.full((3,), 2.0, requires_grad=True)
    x2 = x * 1
    z = x2 / y
    x2.add_(1)
    z.sum().backward()


@case
def sin_output_may_change(torch):
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    s = (x * 1).sin()
    s.mul_(2)
    s.sum().backward()
    return x.grad


@case
def sin_input_changed(torch):
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    h = x * 1
    s = h.sin()
    h.add_(1)
    s.sum().backward()


@case
def unsaved_inputs_may_change(torch):
    x = torch.ones(3, requires_grad=True)
    a = x * 1
    b = a + 1
    s = a.sum()
    r = a.reshape(3)
    t = -a
    a.add_(5)
    (b.sum() + s + r.sum() + t.sum()).backward()
    return x.grad


@case
def mul_by_number_then_change_result(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.mul_(2)
    y.sum().backward()
    return x.grad


@case
def versions_shared_by_views(torch):
    x = torch.ones(3)
    v = x[1:]
    out = [x._version, v._version]
    v.add_(1)
    out += [x._version, v._version]
    d = x.detach()
    d.zero_()
    out.append(x._version)
    x += 1
    out.append(x._version)
    y = torch.ones(2, 3)
    r = y.reshape(6)
    r[0] = 1
    out.append(y._version)
    t = y.t()
    t.add_(1)
    out.append(y._version)
    return out


# -- leaves ------------------------------------------------------------------------------------
@case
def leaf_add_(torch):
    torch.ones(3, requires_grad=True).add_(1)


@case
def leaf_iadd(torch):
    w = torch.ones(3, requires_grad=True)
    w += 1


@case
def leaf_zero_(torch):
    torch.ones(3, requires_grad=True).zero_()


@case
def leaf_setitem(torch):
    w = torch.ones(3, requires_grad=True)
    w[0] = 2.0


@case
def view_of_leaf(torch):
    x = torch.ones(3, requires_grad=True)
    v = x[1:]
    v.add_(1)


@case
def sgd_step_under_no_grad(torch):
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (w * w).sum().backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    return w.detach(), w.is_leaf, w.requires_grad, w._version, w.grad_fn is None


@case
def sgd_loop(torch):
    x = torch.arange(20, dtype=torch.float32) / 10 - 1
    y = 3 * x + 0.5
    w = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for _ in range(50):
        loss = ((w * x + b - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
            w.grad = None
            b.grad.zero_()
    return w.detach(), b.detach(), loss.item()


@case
def grad_zero_(torch):
    w = torch.ones(2, requires_grad=True)
    (w * 3).sum().backward()
    w.grad.zero_()
    (w * 2).sum().backward()
    return w.grad


# -- recorded in-place ops ---------------------------------------------------------------------
@case
def mul_by_tensor_needing_grad(torch):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = torch.tensor([2.0, 3.0, 4.0], requires_grad=True)
    a = x * 1
    a.mul_(b)
    a.sum().backward()
    return x.grad, b.grad


@case
def exp_in_place(torch):
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    e = x * 2
    e.exp_()
    e.sum().backward()
    return x.grad


@case
def relu_in_place(torch):
    x = torch.tensor([-1.0, 2.0, 3.0], requires_grad=True)
    h = x * 2
    h.relu_()
    (h * h).sum().backward()
    return x.grad


@case
def consumer_before_change(torch):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 2
    y = a * 3
    a.mul_(5)
    (y.sum() + a.sum()).backward()
    return x.grad


@case
def setitem_records(torch):
    x = torch.zeros(3)
    w = torch.ones(1, requires_grad=True)
    x[0] = w[0] * 2
    x[1:] = w * 3
    x.sum().backward()
    return w.grad, x.is_leaf, x.detach()


@case
def setitem_on_nonleaf(torch):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y[1] = 0.0
    (y * y).sum().backward()
    return x.grad, y.detach()


@case
def mask_on_nonleaf(torch):
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * 2
    y[y < 0] = 0
    (y * y).sum().backward()
    return x.grad, y.detach()


@case
def view_changed_in_place(torch):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    v = y[1:]
    v.mul_(2)
    (y * y).sum().backward()
    return x.grad, y.detach()


@case
def fill_with_tensor(torch):
    x = torch.ones(3)
    v = torch.tensor(2.0, requires_grad=True)
    x.fill_(v)
    x.sum().backward()
    return v.grad, x.detach()


@case
def copy_broadcasts(torch):
    x = torch.ones(2, 3)
    v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.copy_(v)
    (x * x).sum().backward()
    return v.grad, x.detach()


@case
def zero_then_add(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.zero_()
    y.add_(x)
    y.sum().backward()
    return x.grad


@case
def clamp_in_place(torch):
    x = torch.tensor([-2.0, 0.5, 2.0], requires_grad=True)
    y = x * 1
    y.clamp_(-1, 1)
    y.sum().backward()
    return x.grad, y.detach()


@case
def detach_in_place(torch):
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    y.detach_()
    return y.requires_grad, y.is_leaf


@case
def detach_view_in_place(torch):
    x = torch.ones(3, requires_grad=True)
    y = (x * 2)[1:]
    y.detach_()


@case
def requires_grad_off_nonleaf(torch):
    (torch.ones(3, requires_grad=True) * 2).requires_grad_(False)


# -- values and their errors -------------------------------------------------------------------
@case
def alpha_and_operators(torch):
    x = torch.tensor([1.0, 2.0])
    x.add_(torch.tensor([1.0, 1.0]), alpha=3)
    x.sub_(torch.tensor([1.0, 1.0]), alpha=0.5)
    x *= 2
    x /= 4
    return x


@case
def operators_keep_identity(torch):
    x = torch.ones(2)
    y = x
    x += 1
    x *= 3
    return y is x, y


@case
def long_plus_float(torch):
    x = torch.ones(3, dtype=torch.int64)
    x += 1.5


@case
def long_add_float_tensor(torch):
    torch.ones(3, dtype=torch.int64).add_(torch.ones(3) * 1.5)


@case
def long_true_divide(torch):
    x = torch.tensor([1, 2])
    x /= 2


@case
def float32_add_float64(torch):
    x = torch.ones(2)
    x.add_(torch.tensor([0.5, 0.25], dtype=torch.float64))
    return x, x.dtype == torch.float32


@case
def broadcast_into_smaller(torch):
    x = torch.ones(3)
    x += torch.ones(2, 3)


@case
def setitem_mixed(torch):
    x = torch.zeros(2, 3)
    x[:, 1] = torch.tensor([5.0, 6.0])
    x[0] = 1
    x[1, 2] = 7
    x[[0, 1], [0, 0]] = torch.tensor([8.0, 9.0])
    return x


@case
def setitem_mask(torch):
    x = torch.tensor([1.0, -2.0, 3.0])
    x[x < 0] = 0
    return x


@case
def setitem_int_into_float(torch):
    x = torch.zeros(3, dtype=torch.int64)
    x[0] = 2.7
    x[1:] = torch.tensor([1.5, -1.5])
    return x


@case
def setitem_wrong_size(torch):
    torch.zeros(3)[0:3] = torch.ones(2)


@case
def random_fills(torch):
    torch.manual_seed(0)
    x = torch.empty(5)
    x.normal_()
    y = torch.zeros(3).uniform_(-1, 1)
    z = torch.zeros(20).normal_(2, 0.5)
    return x, y, z


@case
def fill_and_zero(torch):
    x = torch.ones(2, 2)
    x.fill_(3)
    y = torch.ones(3)
    y.zero_()
    return x, y


@case
def tensor_constructors(torch):
    return (torch.Tensor([1, 2]), torch.Tensor(2, 3).shape, torch.FloatTensor([1, 2]),
            torch.LongTensor([1.5, 2]), torch.DoubleTensor(2).shape, torch.Tensor(),
            torch.Tensor((2, 3)), isinstance(torch.ones(2), torch.FloatTensor),
            isinstance(torch.ones(2), torch.LongTensor), isinstance(torch.Tensor(1), torch.Tensor))


@case
def tensor_of_a_number(torch):
    torch.Tensor(2.5)


# -- autograd.Function -------------------------------------------------------------------------
def _legendre(torch):
    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    return LegendrePolynomial3


@case
def function_legendre_trains(torch):
    P3 = _legendre(torch).apply
    x = torch.arange(200, dtype=torch.float32) / 100 - 1
    y = x * x * x - 0.5 * x
    a = torch.full((), 0.0, requires_grad=True)
    b = torch.full((), -1.0, requires_grad=True)
    c = torch.full((), 0.0, requires_grad=True)
    d = torch.full((), 0.3, requires_grad=True)
    losses = []
    for t in range(300):
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        if t % 50 == 0:
            losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= 1e-3 * p.grad
                p.grad = None
    return losses, [p.item() for p in (b, d)], type(y_pred.grad_fn).__name__ != ""


@case
def function_needs_input_grad(torch):
    seen = []

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, y):
            seen.append(ctx.needs_input_grad)
            ctx.k = k
            return x * k + y

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None, g

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0])
    out = Scale.apply(x, 3.0, y)
    out.sum().backward()
    return seen[0], x.grad, out.requires_grad, out.is_leaf


@case
def function_wrong_number_of_grads(torch):
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    Bad.apply(torch.ones(2, requires_grad=True)).sum().backward()


@case
def function_saved_tensor_changed(torch):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = torch.ones(3, requires_grad=True)
    h = x * 1
    y = Square.apply(h)
    h.add_(1)
    y.sum().backward()


@case
def function_without_grad(torch):
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = Double.apply(x)
    return y.requires_grad, Double.apply(torch.ones(2)).requires_grad


@case
def function_two_outputs(torch):
    class SinCos(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, gs, gc):
            (x,) = ctx.saved_tensors
            return gs * x.cos() - gc * x.sin()

    x = torch.tensor([0.5, 1.0], requires_grad=True)
    s, c = SinCos.apply(x)
    (s * 2 + c * 3).sum().backward()
    return x.grad


@case
def function_non_differentiable_output(torch):
    class ArgMax(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            ctx.mark_non_differentiable(idx)
            return x * 1, idx

        @staticmethod
        def backward(ctx, g, gi):
            return g

    x = torch.tensor([0.5, 3.0], requires_grad=True)
    y, i = ArgMax.apply(x)
    y.sum().backward()
    return x.grad, i.requires_grad, i.item()


@case
def function_double_backward(torch):
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    x = torch.tensor([2.0], requires_grad=True)
    (dx,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (ddx,) = torch.autograd.grad(dx.sum(), x)
    return dx.detach(), ddx


# -- grad modes ---------------------------------------------------------------------------------
@case
def grad_mode_decorators(torch):
    class Model:
        @torch.no_grad()
        def predict(self, x):
            return (x * 2).requires_grad

        @torch.enable_grad()
        def train(self, x):
            return (x * 2).requires_grad

    @torch.no_grad
    def bare(x):
        return (x * 2).requires_grad

    @torch.inference_mode()
    def infer(x):
        return (x * 2).requires_grad

    x = torch.ones(2, requires_grad=True)
    m = Model()
    with torch.no_grad():
        inside = m.train(x)
    with torch.set_grad_enabled(False):
        off = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    called = torch.is_grad_enabled()
    torch.set_grad_enabled(True)
    return m.predict(x), inside, bare(x), infer(x), off, called, torch.is_grad_enabled()


def _plain(value):
    """A result as JSON: tensors as nested lists, tuples as lists."""
    if hasattr(value, "tolist") and hasattr(value, "shape"):
        return value.tolist()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def run(torch, name):
    """``["ok", value]`` or ``[error type name, message]`` of case ``name`` in ``torch``."""
    try:
        return ["ok", _plain(CASES[name](torch))]
    except Exception as e:  # noqa: BLE001 - an error is the recorded outcome
        return [type(e).__name__, str(e)]


def main():
    import torch

    results = {name: run(torch, name) for name in CASES}
    out = {"torch": torch.__version__, "cases": results}
    path = Path(__file__).with_name("inplace.json")
    path.write_text(json.dumps(out, indent=1, allow_nan=True) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(results)} cases)")


if __name__ == "__main__":
    main()
