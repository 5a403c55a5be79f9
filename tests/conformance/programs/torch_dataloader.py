"""In the manner of PyTorch's "Datasets & DataLoaders" and "Build the Neural Network"
tutorials: a TensorDataset over tensors from a seeded NumPy generator, a DataLoader
(batch_size, no shuffle, drop_last), len(), indexing, and an epoch loop training a Linear
model with optim.SGD."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)
features = torch.tensor(rng.normal(size=(22, 3)), dtype=torch.float32)
targets = torch.tensor(rng.integers(0, 2, size=22), dtype=torch.float32).unsqueeze(1)
dataset = TensorDataset(features, targets)
print(len(dataset))
f0, t0 = dataset[0]
print(f0, t0)

loader = DataLoader(dataset, batch_size=8, shuffle=False)
print(len(loader))
for i, (xb, yb) in enumerate(loader):
    print(i, xb.shape, yb.shape, yb.sum().item())

torch.manual_seed(2)
model = nn.Linear(3, 1)
loss_fn = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
train = DataLoader(dataset, batch_size=5, drop_last=True)
print(len(train))
for epoch in range(3):
    total = 0.0
    for xb, yb in train:
        pred = model(xb)
        loss = loss_fn(pred, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch}: {total / len(train):.6f}")
print(model.weight, model.bias)
