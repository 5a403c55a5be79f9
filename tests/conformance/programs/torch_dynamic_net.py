"""After PyTorch's "Learning PyTorch with Examples" (control flow and weight sharing): a module
whose forward reuses one parameter set a random number of times (Python's random, seeded),
trained with SGD and momentum; the graph is rebuilt on every forward pass."""
import math
import random

import torch


class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y


random.seed(0)
torch.manual_seed(5)
x = torch.linspace(-math.pi, math.pi, 200)
y = torch.sin(x)
model = DynamicNet()
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(60):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 15 == 14:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print([round(p.item(), 6) for p in model.parameters()])
