"""In the manner of the DCGAN example of PyTorch's examples and tutorials: a generator of
nn.ConvTranspose2d + nn.BatchNorm2d + nn.ReLU layers ending in nn.Tanh, a discriminator of
nn.Conv2d + nn.LeakyReLU(0.2, inplace=True) ending in nn.Sigmoid, the weights_init that
draws conv weights from N(0, 0.02) and BatchNorm weights from N(1, 0.02), BCELoss, two Adam
optimizers with betas=(0.5, 0.999), and the alternating D / G update with detach(). Small
sizes (16 x 16 images) and a few iterations on "real" images from a seeded NumPy generator;
weights and noise from torch.manual_seed."""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(999)
nz, ngf, ndf, nc = 8, 4, 4, 1
rng = np.random.RandomState(0)
real_images = torch.from_numpy(rng.rand(6, nc, 16, 16).astype(np.float32) * 2 - 1)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input)


netG = Generator()
netG.apply(weights_init)
print(netG)
netD = Discriminator()
netD.apply(weights_init)

criterion = nn.BCELoss()
fixed_noise = torch.randn(2, nz, 1, 1)
real_label, fake_label = 1.0, 0.0
optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))

for i in range(3):
    netD.zero_grad()
    b_size = real_images.size(0)
    label = torch.full((b_size,), real_label, dtype=torch.float)
    output = netD(real_images).view(-1)
    errD_real = criterion(output, label)
    errD_real.backward()
    D_x = output.mean().item()
    noise = torch.randn(b_size, nz, 1, 1)
    fake = netG(noise)
    label.fill_(fake_label)
    output = netD(fake.detach()).view(-1)
    errD_fake = criterion(output, label)
    errD_fake.backward()
    D_G_z1 = output.mean().item()
    errD = errD_real + errD_fake
    optimizerD.step()

    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake).view(-1)
    errG = criterion(output, label)
    errG.backward()
    D_G_z2 = output.mean().item()
    optimizerG.step()
    print("[%d/3] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f"
          % (i, errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))

with torch.no_grad():
    fake = netG(fixed_noise).detach()
print(fake.shape, round(fake.mean().item(), 6), round(fake.std().item(), 6))
