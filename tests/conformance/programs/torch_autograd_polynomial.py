"""After PyTorch's "Learning PyTorch with Examples" (tensors and autograd): the polynomial fit
with requires_grad weights, loss.backward() and the manual SGD step every introduction
writes: `with torch.no_grad(): w -= lr * w.grad` then `w.grad.zero_()`."""
import math

import torch

torch.manual_seed(1)
x = torch.linspace(-math.pi, math.pi, 400)
y = torch.sin(x)

a = torch.randn((), requires_grad=True)
b = torch.randn((), requires_grad=True)
c = torch.randn((), requires_grad=True)
d = torch.randn((), requires_grad=True)

learning_rate = 3e-6
for t in range(100):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 25 == 0:
        print(t, loss.item())
    loss.backward()
    if t == 0:
        print("grads", a.grad, b.grad, c.grad, d.grad)
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad.zero_()
        b.grad.zero_()
        c.grad.zero_()
        d.grad.zero_()

print(a.requires_grad, a.is_leaf, a.grad)
print(f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")
