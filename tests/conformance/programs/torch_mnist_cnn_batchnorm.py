"""In the manner of the classic PyTorch "convolutional neural network" tutorial programs
(a ConvNet of two nn.Sequential blocks, Conv2d + BatchNorm2d + ReLU + MaxPool2d, then an
nn.Linear; a DataLoader over the training set; CrossEntropyLoss and Adam; "Epoch [e/E], Step
[s/S], Loss" lines; model.eval() and torch.no_grad() for the accuracy). MNIST-shaped images
from a seeded NumPy generator, each its digit's pattern plus noise, so there is something
to learn; weights from torch.manual_seed."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
rng = np.random.RandomState(7)
labels = rng.randint(0, 10, size=256)
strokes = rng.rand(10, 1, 28, 28).astype(np.float32)
images = (0.8 * strokes[labels] + 0.2 * rng.rand(256, 1, 28, 28)).astype(np.float32)

num_epochs = 3
num_classes = 10
batch_size = 64
learning_rate = 0.001

train_dataset = TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))
train_loader = DataLoader(dataset=train_dataset, batch_size=batch_size, shuffle=False)


class ConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super(ConvNet, self).__init__()
        self.layer1 = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=5, stride=1, padding=2),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2))
        self.layer2 = nn.Sequential(
            nn.Conv2d(8, 16, kernel_size=5, stride=1, padding=2),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2))
        self.fc = nn.Linear(7 * 7 * 16, num_classes)

    def forward(self, x):
        out = self.layer1(x)
        out = self.layer2(out)
        out = out.reshape(out.size(0), -1)
        out = self.fc(out)
        return out


model = ConvNet(num_classes)
print(model)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

total_step = len(train_loader)
for epoch in range(num_epochs):
    for i, (images_batch, labels_batch) in enumerate(train_loader):
        outputs = model(images_batch)
        loss = criterion(outputs, labels_batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (i + 1) % 2 == 0:
            print("Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}"
                  .format(epoch + 1, num_epochs, i + 1, total_step, loss.item()))

model.eval()
with torch.no_grad():
    correct = 0
    total = 0
    for images_batch, labels_batch in train_loader:
        outputs = model(images_batch)
        _, predicted = torch.max(outputs.data, 1)
        total += labels_batch.size(0)
        correct += (predicted == labels_batch).sum().item()
    print("Accuracy of the model on the {} images: {} %".format(total, 100 * correct / total))
