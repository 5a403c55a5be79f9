"""In the manner of PyTorch's reduction-op tests and its beginner material: max and min
with dim (the values/indices named tuple), without dim, and elementwise with a tensor;
argmax/argmin; sum and mean with dim tuples and keepdim; prod; std and var (unbiased)."""
import torch

x = torch.tensor([[1.0, 5.0, 2.0], [7.0, 0.5, 3.0]])
print(torch.max(x))
values, indices = torch.max(x, dim=1)
print(values, indices)
r = x.max(0)
print(r.values, r.indices)
print(torch.max(x, 1, keepdim=True))
print(torch.min(x, dim=0))
print(torch.max(x, torch.full((2, 3), 2.5)))
print(torch.argmax(x), torch.argmax(x, dim=1), x.argmin(dim=0))
print(x.sum(), x.sum(dim=0), x.sum(dim=(0, 1)), x.sum(1, keepdim=True))
print(x.mean(), x.mean(dim=1), torch.mean(x, dim=0, keepdim=True))
print(x.prod(), x.prod(dim=1))
print(x.std(), x.std(dim=0), x.var(dim=1))
print(torch.std(x, dim=1, unbiased=False))
print((x > 2).all(), (x > 2).any(dim=1), (x > 2).sum())
print(x.abs().sum().item(), x.norm())

w = torch.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
w.max().backward()
print(w.grad)
w2 = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
w2.std().backward()
print(w2.grad)
