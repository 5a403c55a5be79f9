"""After PyTorch's "Learning PyTorch with Examples" (defining new autograd functions): the
Legendre polynomial P3 as a torch.autograd.Function with ctx.save_for_backward,
ctx.needs_input_grad and .apply, fitted to sin(x) from torch.full initial values."""
import math

import torch


class LegendreP3(torch.autograd.Function):
    """P3(x) = (5x^3 - 3x) / 2, with its derivative written by hand."""

    @staticmethod
    def forward(ctx, inp):
        ctx.save_for_backward(inp)
        return 0.5 * (5 * inp ** 3 - 3 * inp)

    @staticmethod
    def backward(ctx, grad_output):
        (inp,) = ctx.saved_tensors
        if not ctx.needs_input_grad[0]:
            return None
        return grad_output * 1.5 * (5 * inp ** 2 - 1)


dtype = torch.float
x = torch.linspace(-math.pi, math.pi, 300, dtype=dtype)
y = torch.sin(x)

a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, dtype=dtype, requires_grad=True)

P3 = LegendreP3.apply
learning_rate = 5e-6
for t in range(150):
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 50 == 49:
        print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f"Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)")

# the function on a vector, its gradient, and a constant input that needs no gradient
v = torch.tensor([-1.0, 0.25, 0.5, 2.0], requires_grad=True)
out = P3(v)
out.sum().backward()
print(out.detach(), v.grad)
print(P3(torch.tensor([0.5])).requires_grad)
