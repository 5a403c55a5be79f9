"""After PyTorch's "Learning PyTorch with Examples" (nn module, then optim): the polynomial as
nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1)) with nn.MSELoss(reduction='sum'), trained
first by hand over model.parameters(), then with optim.SGD. Init by torch.manual_seed."""
import math

import torch

torch.manual_seed(0)
x = torch.linspace(-math.pi, math.pi, 200)
y = torch.sin(x)
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
print(xx.shape, xx.dtype)

model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1),
)
loss_fn = torch.nn.MSELoss(reduction="sum")
print(model)
print([tuple(q.shape) for q in model.parameters()])

learning_rate = 1e-5
for t in range(60):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 20 == 19:
        print(t, loss.item())
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad

linear_layer = model[0]
print(linear_layer.bias.item(), linear_layer.weight[:, 0].item(),
      linear_layer.weight[:, 1].item(), linear_layer.weight[:, 2].item())

optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate, momentum=0.9)
for t in range(40):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 10 == 9:
        print("sgd", t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(linear_layer.weight, linear_layer.bias)
