"""In the manner of PyTorch's optim tutorial material ("Learning PyTorch with Examples":
optim; the optimizer and lr_scheduler docs' loops): the same small regression trained with
RMSprop, Adam and Adagrad from one torch.manual_seed init, with StepLR and ExponentialLR."""
import torch
from torch import nn, optim
from torch.optim.lr_scheduler import ExponentialLR, StepLR

torch.manual_seed(7)
X = torch.randn(32, 4)
true_w = torch.tensor([[1.0], [-2.0], [0.5], [3.0]])
Y = X @ true_w + 0.1


def run(make_opt, make_sched, steps=12):
    torch.manual_seed(11)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
    opt = make_opt(model.parameters())
    sched = make_sched(opt) if make_sched else None
    loss_fn = nn.MSELoss()
    for step in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(X), Y)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        if step % 4 == 3:
            lr = sched.get_last_lr()[0] if sched is not None else opt.param_groups[0]["lr"]
            print(f"  step {step} loss {loss.item():.6f} lr {lr:.6f}")
    return model


print("RMSprop + StepLR")
run(lambda p: optim.RMSprop(p, lr=0.01), lambda o: StepLR(o, step_size=4, gamma=0.5))
print("Adam + ExponentialLR")
m = run(lambda p: optim.Adam(p, lr=0.05), lambda o: ExponentialLR(o, gamma=0.9))
print(m[2].bias)
print("Adagrad")
run(lambda p: optim.Adagrad(p, lr=0.1), None)
print("SGD weight_decay + StepLR")
run(lambda p: optim.SGD(p, lr=0.1, momentum=0.5, weight_decay=1e-3),
    lambda o: StepLR(o, step_size=5, gamma=0.1))
