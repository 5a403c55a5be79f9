"""In the manner of PyTorch's "Quickstart" / "Build the Neural Network" tutorials and the
MNIST examples: MNIST-shaped data (N x 1 x 28 x 28 images, labels 0..9) from a seeded NumPy
generator, an MLP (Flatten, Linear, ReLU, Linear) inited by torch.manual_seed, CrossEntropyLoss,
SGD training, and accuracy by argmax in model.eval() under torch.no_grad()."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

rng = np.random.default_rng(42)
images = rng.random((64, 1, 28, 28), dtype=np.float32)
labels = rng.integers(0, 10, size=64)
X = torch.from_numpy(images)
y = torch.from_numpy(labels)
print(X.shape, X.dtype, y.dtype)


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 32),
            nn.ReLU(),
            nn.Linear(32, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        return self.linear_relu_stack(x)


torch.manual_seed(0)
model = NeuralNetwork()
print(model)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

model.train()
for step in range(8):
    batch = slice((step % 4) * 16, (step % 4) * 16 + 16)
    pred = model(X[batch])
    loss = loss_fn(pred, y[batch])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss: {loss.item():>7f}  [{step}]")

model.eval()
with torch.no_grad():
    logits = model(X)
    correct = (logits.argmax(1) == y).type(torch.float).sum().item()
    probs = F.softmax(logits[:2], dim=1)
print(correct, probs)
print(F.cross_entropy(logits, y).item(), F.relu(torch.tensor([-1.0, 2.0])))
