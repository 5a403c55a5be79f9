"""In the manner of PyTorch's "Tensors" tutorial (operations on tensors) and the shape-op
tests in its suite: cat, stack, chunk, view, reshape, permute, transpose, unsqueeze, squeeze,
flatten, expand, clone, indexing and slicing, torch.Size."""
import torch

t = torch.arange(24.0).view(2, 3, 4)
print(t.shape, t.size(), t.size(-1))
print(torch.cat([t, t], dim=1).shape)
print(torch.cat((t[0], t[1]), 0))
print(torch.stack([t[0, 0], t[1, 0]]))
parts = torch.chunk(torch.arange(10), 3)
print(len(parts), [p.tolist() for p in parts])
print(t.chunk(2, dim=2)[1])
print(t.view(6, 4)[2], t.view(-1).shape)
print(t.reshape(4, -1).shape)
print(t.permute(2, 0, 1).shape, t.permute(2, 0, 1)[1])
print(t.transpose(0, 1).shape)
u = torch.tensor([1.0, 2.0, 3.0])
print(u.unsqueeze(0), u.unsqueeze(1).shape, torch.unsqueeze(u, -1).shape)
s = torch.zeros(1, 3, 1, 2)
print(s.squeeze().shape, s.squeeze(0).shape, s.squeeze(2).shape)
print(torch.flatten(t).shape, t.flatten(1).shape, t.flatten(0, 1).shape)
print(u.view(3, 1).expand(3, 4))
print(u.expand(2, -1))
c = u.clone()
c[0] = 100.0
print(u, c)
print(t[1, :, 2], t[:, 1:, ::2])
print(t[..., -1])
m = torch.tensor([[1, 2], [3, 4]])
print(m.t(), m.T)
print(m.contiguous().view(4))
