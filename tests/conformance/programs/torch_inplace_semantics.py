"""In the manner of PyTorch's test/test_autograd.py in-place tests: in-place methods and
operators on tensors, x[idx] = value, the version counter, the two in-place errors
(leaf that requires grad; a saved tensor modified), detach_, requires_grad_, and no_grad /
enable_grad as decorators."""
import torch

# in-place arithmetic keeps identity
x = torch.zeros(4)
ident = id(x)
x += 1
x *= 3
x -= torch.tensor([0.0, 1.0, 2.0, 3.0])
x /= 2
print(x, id(x) == ident)
x.add_(1).mul_(2)
x.sub_(torch.ones(4))
x.div_(4)
print(x)
x.clamp_(min=0.5, max=1.25)
print(x)
x.fill_(7)
print(x)
x.zero_()
x.copy_(torch.tensor([1.0, -2.0, 3.0, -4.0]))
print(x)
x[1] = 10.0
x[2:] = torch.tensor([5.0, 6.0])
x[x > 5.5] = 0.0
print(x)
m = torch.zeros(2, 3)
m[0, 1] = 1.0
m[:, 2] = 2.0
m[1] = torch.tensor([3.0, 4.0, 5.0])
print(m)

# the version counter
v = torch.ones(3)
print(v._version)
v.add_(1)
v[0] = 5.0
print(v._version)

# a leaf that requires grad cannot be changed in place
w = torch.ones(3, requires_grad=True)
try:
    w.add_(1)
except RuntimeError as e:
    print("RuntimeError", "a leaf Variable that requires grad" in str(e))
try:
    w += 1
except RuntimeError as e:
    print("RuntimeError", "a leaf Variable that requires grad" in str(e))

# modifying a tensor saved for backward
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a * 2
c = b.exp()
b.mul_(3)
try:
    c.sum().backward()
except RuntimeError as e:
    print("RuntimeError", "modified by an inplace operation" in str(e))

# in-place on a non-leaf whose value is not needed is fine, and the gradient flows
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a * 2
b.add_(1)
b.mul_(a)
b.sum().backward()
print(b, a.grad)

# detach_ and requires_grad_
p = torch.tensor([1.0, 2.0], requires_grad=True)
q = p * 3
q.detach_()
print(q.requires_grad, q.grad_fn is None, q.is_leaf)
r = torch.tensor([0.5, 1.5]).requires_grad_()
(r ** 2).sum().backward()
print(r.requires_grad, r.grad)


@torch.no_grad()
def scaled(t):
    return t * 2


@torch.enable_grad()
def doubled(t):
    return t * 2


s = torch.ones(2, requires_grad=True)
print(scaled(s).requires_grad)
with torch.no_grad():
    print(doubled(s).requires_grad, (s * 2).requires_grad)
print(torch.is_grad_enabled())
