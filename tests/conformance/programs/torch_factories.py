"""In the manner of PyTorch's "Tensors" beginner tutorial and its creation-op tests:
linspace, arange, zeros, ones, full, eye, empty (shape only), zeros_like / ones_like /
full_like / rand_like, torch.tensor dtypes, the dtype methods and item / tolist."""
import numpy as np
import torch

print(torch.linspace(0, 1, steps=5))
print(torch.linspace(-2, 2, 7, dtype=torch.float64))
print(torch.arange(5))
print(torch.arange(1, 4))
print(torch.arange(0, 1, 0.25))
print(torch.arange(10, 0, -3))
print(torch.zeros(2, 3))
print(torch.ones((2, 2), dtype=torch.int64))
print(torch.full((2, 3), 3.5))
print(torch.full((2,), 7))
print(torch.eye(3))
print(torch.eye(2, 3))
e = torch.empty(3, 4)
print(e.shape, e.dtype, e.size(1), e.dim(), e.numel())

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
print(x_data, x_data.dtype)
np_array = np.array(data)
x_np = torch.from_numpy(np_array)
print(x_np)
x_ones = torch.ones_like(x_data)
print(x_ones)
x_zeros = torch.zeros_like(x_data, dtype=torch.float)
print(x_zeros)
print(torch.full_like(x_data, 9))
torch.manual_seed(0)
x_rand = torch.rand_like(x_data, dtype=torch.float)
print(x_rand)
print(torch.randn_like(x_rand))

t = torch.tensor([1.7, -2.2, 3.0])
print(t.long(), t.int(), t.double(), t.bool(), t.float())
print(t.tolist(), t[0].item(), type(t[0].item()).__name__)
print(torch.tensor(3).item(), torch.tensor([[1, 2]]).tolist())
print(torch.tensor([True, False]).dtype, torch.tensor(2.5).dtype, torch.tensor(1).dtype)
print(torch.zeros(3).to(torch.float64).dtype)
