"""In the manner of PyTorch's "Tensors" and "autograd" beginner tutorials: elementwise math
(sin, cos, exp, log, sqrt, tanh, sigmoid, abs, pow with tensors on both sides, clamp) and
printing tensors as a learner sees them: dtypes, grad_fn names, requires_grad, 0-d tensors."""
import math

import torch

x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
print(x)
y = x * 2
print(y)
print(x + 1, x - 1, x / 3, -x)
print(torch.sin(x), torch.cos(x))
print(x.exp(), x.log(), x.sqrt())
print(torch.tanh(x), torch.sigmoid(x))
print(torch.abs(torch.tensor([-1.5, 2.0])))
print(x.pow(2), x ** torch.tensor([1.0, 2.0, 3.0]), 2 ** x)
print(torch.pow(torch.tensor([2.0, 3.0]), torch.tensor([3.0, 2.0])))
print(x.clamp(min=0.8), torch.clamp(x, 0.6, 1.5))
print(x.sum(), x.mean(), (x @ x))
z = (x.sin() * x).sum()
z.backward()
print(z, x.grad)
print(torch.tensor(math.pi), torch.tensor([1e-5, 1.0]), torch.tensor([1, 2, 3]))
print(torch.tensor([0.1, 0.2], dtype=torch.float64))
print(torch.tensor([[1.5, -2.25], [3.0, 4.125]]))
print(x.detach(), x.detach().clone())  # x.data is NumPy's array here: compatibility.md
print(x.detach().numpy())
print(f"{x.sum().item():.4f}", str(torch.tensor([2.0, 3.0])))
