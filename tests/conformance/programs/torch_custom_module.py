"""After PyTorch's "Learning PyTorch with Examples" (custom nn Modules): a Polynomial3 module
holding four nn.Parameter scalars drawn with torch.randn after torch.manual_seed, a string()
method, trained with optim.SGD and a criterion, plus a two-layer custom module."""
import math

import torch
from torch import nn


class Polynomial3(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.randn(()))
        self.b = nn.Parameter(torch.randn(()))
        self.c = nn.Parameter(torch.randn(()))
        self.d = nn.Parameter(torch.randn(()))

    def forward(self, x):
        return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

    def string(self):
        return (f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2"
                f" + {self.d.item()} x^3")


class TwoLayerNet(nn.Module):
    def __init__(self, d_in, h, d_out):
        super().__init__()
        self.linear1 = nn.Linear(d_in, h)
        self.linear2 = nn.Linear(h, d_out)

    def forward(self, x):
        h_relu = self.linear1(x).clamp(min=0)
        return self.linear2(h_relu)


torch.manual_seed(3)
x = torch.linspace(-math.pi, math.pi, 300)
y = torch.sin(x)
model = Polynomial3()
print([name for name, _ in model.named_parameters()])
print(isinstance(model.a, torch.Tensor), model.a.requires_grad)
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=5e-6)
for t in range(80):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 20 == 19:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"Result: {model.string()}")

torch.manual_seed(4)
N, D_in, H, D_out = 16, 10, 8, 3
xb = torch.randn(N, D_in)
yb = torch.randn(N, D_out)
net = TwoLayerNet(D_in, H, D_out)
opt = torch.optim.SGD(net.parameters(), lr=1e-2)
for t in range(30):
    loss = criterion(net(xb), yb)
    if t % 10 == 0:
        print(t, loss.item())
    opt.zero_grad()
    loss.backward()
    opt.step()
print(sum(p.numel() for p in net.parameters()))
print(net.linear2.bias)
