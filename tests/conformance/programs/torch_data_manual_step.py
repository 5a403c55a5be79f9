"""In the manner of the 2017-era autograd examples (jcjohnson's pytorch-examples
two_layer_net_autograd, yunjey's pytorch-tutorial basics) and of the many course notebooks
written after them: a two-layer network trained with the manual step on ``.data``
(``w.data -= lr * w.grad.data``, ``w.grad.data.zero_()``), values printed through
``loss.data``, ``x.data.numpy()`` and a gradient taken as ``g = w.grad`` before the next
backward."""
import torch

torch.manual_seed(0)
N, D_in, H, D_out = 16, 8, 6, 3

x = torch.randn(N, D_in)
y = torch.randn(N, D_out)
w1 = torch.randn(D_in, H, requires_grad=True)
w2 = torch.randn(H, D_out, requires_grad=True)

learning_rate = 1e-3
for t in range(30):
    y_pred = x.mm(w1).clamp(min=0).mm(w2)
    loss = (y_pred - y).pow(2).sum()
    loss.backward()
    if t % 10 == 0:
        print(t, round(loss.data.item(), 3))
    w1.data -= learning_rate * w1.grad.data
    w2.data -= learning_rate * w2.grad.data
    w1.grad.data.zero_()
    w2.grad.data.zero_()

print("w2 row 0", [round(v, 4) for v in w2.data.numpy()[0].tolist()])
print("grad after zero", w1.grad.data.abs().sum().item())

# The gradient a learner kept is the one .grad goes on accumulating into.
g = w2.grad
loss = x.mm(w1).clamp(min=0).mm(w2).sum()
loss.backward()
print("kept gradient sees the sum", g is w2.grad, round(g.sum().item(), 3))
loss = x.mm(w1).clamp(min=0).mm(w2).sum()
loss.backward()
print("twice", round(g.sum().item(), 3))

# The manual step never bumps the version autograd checks: forward, step, backward works.
out = x.mm(w1).clamp(min=0).mm(w2).pow(2).sum()
w2.data.mul_(0.5)
out.backward()
print("backward after a .data step", w2.grad.shape, w1.data.requires_grad, w1.data.is_leaf)
print(type(w1.data).__name__, w1.requires_grad)
