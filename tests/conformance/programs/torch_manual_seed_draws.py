"""In the manner of PyTorch's "Tensors" tutorial and the reproducibility notes: after
torch.manual_seed(n), torch.rand / randn (short and >= 16 long) / randint / randperm /
normal_ / uniform_ and nn.Linear / nn.Conv2d default inits give the same numbers every run."""
import torch
from torch import nn

torch.manual_seed(0)
print(torch.rand(3))
print(torch.randn(2, 3))
print(torch.randn(20))
print(torch.randint(0, 10, (6,)))
print(torch.randint(5, (2, 2)))
print(torch.randperm(8))
print(torch.initial_seed())

torch.manual_seed(42)
lin = nn.Linear(4, 3)
print(lin.weight)
print(lin.bias)
conv = nn.Conv2d(1, 2, kernel_size=2)
print(conv.weight.shape, conv.bias)

torch.manual_seed(1)
w = torch.empty(2, 5)
w.normal_()
print(w)
w.uniform_(-1, 1)
print(w)
nn.init.xavier_uniform_(w)
print(w)
g = torch.Generator().manual_seed(3)
print(torch.rand(4, generator=g))
torch.manual_seed(0)
a = torch.randn(3)
torch.manual_seed(0)
b = torch.randn(3)
print(torch.equal(a, b))
