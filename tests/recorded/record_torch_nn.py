"""Record PyTorch's nn, optim, lr_scheduler, nn.functional and utils.data numbers into
``torch_nn.json`` (read by tests/test_torch_nn.py and tests/test_lr_scheduler.py).

Each case below is written once against PyTorch's API and takes the framework's namespaces
(``T``: ``torch``, ``nn``, ``F``, ``optim``, ``sched``, ``data``), so the tests run the very
same code on kernelgraph. Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_torch_nn.py
"""

from __future__ import annotations

import json
import types
from pathlib import Path

W0 = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
X0 = [[1.0, -2.0, 0.5, 3.0], [-0.25, 0.0, 4.0, -1.5], [2.5, -3.5, -0.1, 0.7]]


def L(t):  # noqa: N802 - a short name for "as a list"
    return t.detach().tolist()


# -- optimisers ----------------------------------------------------------------------------------
OPTIMIZERS = {
    "sgd": ("SGD", {"lr": 0.1}),
    "sgd_momentum": ("SGD", {"lr": 0.1, "momentum": 0.9}),
    "sgd_nesterov_wd": ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True,
                                "weight_decay": 0.1}),
    "sgd_dampening": ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5}),
    "sgd_maximize": ("SGD", {"lr": 0.01, "momentum": 0.5, "maximize": True}),
    "adam": ("Adam", {"lr": 0.1}),
    "adam_wd_amsgrad": ("Adam", {"lr": 0.05, "betas": (0.8, 0.99), "weight_decay": 0.1,
                                 "amsgrad": True}),
    "adamw": ("AdamW", {"lr": 0.1}),
    "rmsprop": ("RMSprop", {}),
    "rmsprop_all": ("RMSprop", {"lr": 0.01, "alpha": 0.9, "momentum": 0.5, "centered": True,
                                "weight_decay": 0.1}),
    "adagrad": ("Adagrad", {"lr": 0.1}),
    "adadelta": ("Adadelta", {}),
    "adadelta_all": ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-4, "weight_decay": 0.1}),
    "adagrad_all": ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1,
                                "initial_accumulator_value": 0.5}),
}


def optimizer_trajectory(T, name: str, steps: int = 6) -> list:
    """``steps`` updates of w on sum(w**3)/3 + sum(w * c) (gradient w**2 + c)."""
    cls, kwargs = OPTIMIZERS[name]
    w = T.torch.tensor(W0, requires_grad=True)
    c = T.torch.tensor([[1.0, -0.5, 0.25], [0.0, 2.0, -1.0]])
    opt = getattr(T.optim, cls)([w], **kwargs)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = (w * w * w).sum() / 3 + (w * c).sum()
        loss.backward()
        opt.step()
        out.append(L(w))
    return out


def case_param_groups(T):
    torch, nn = T.torch, T.nn
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1))
    opt = T.optim.SGD([{"params": net[0].parameters()},
                       {"params": net[2].parameters(), "lr": 0.5, "momentum": 0.9}], lr=0.1)
    x = torch.tensor(X0)[:, :3]
    losses = []
    for _ in range(4):
        opt.zero_grad()
        loss = (net(x) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "weight": L(net[2].weight),
            "lrs": [g["lr"] for g in opt.param_groups]}


# -- schedulers ----------------------------------------------------------------------------------
SCHEDULERS = {
    "step": ("StepLR", {"step_size": 3, "gamma": 0.5}),
    "step_default": ("StepLR", {"step_size": 2}),
    "exponential": ("ExponentialLR", {"gamma": 0.9}),
    "multistep": ("MultiStepLR", {"milestones": [2, 5, 5], "gamma": 0.1}),
    "lambda": ("LambdaLR", {"lr_lambda": "inverse"}),
    "multiplicative": ("MultiplicativeLR", {"lr_lambda": "constant"}),
    "cosine": ("CosineAnnealingLR", {"T_max": 4, "eta_min": 0.001}),
}
LAMBDAS = {"inverse": lambda epoch: 1.0 / (epoch + 1), "constant": lambda epoch: 0.95}


def scheduler_run(T, name: str, epochs: int = 10) -> dict:
    cls, kwargs = SCHEDULERS[name]
    kwargs = {k: LAMBDAS[v] if k == "lr_lambda" else v for k, v in kwargs.items()}
    w = T.torch.tensor([1.0, -2.0], requires_grad=True)
    opt = T.optim.SGD([w], lr=0.3)
    sched = getattr(T.sched, cls)(opt, **kwargs)
    lrs, group_lrs, ws = [], [], []
    for _ in range(epochs):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
        lrs.append(sched.get_last_lr())
        sched.step()
        group_lrs.append(opt.param_groups[0]["lr"])
        ws.append(L(w))
    return {"last_lr": lrs, "group_lr": group_lrs, "w": ws, "last_epoch": sched.last_epoch}


# -- nn.functional -------------------------------------------------------------------------------
ACTIVATIONS = {
    "relu": lambda F, x: F.relu(x), "sigmoid": lambda F, x: F.sigmoid(x),
    "tanh": lambda F, x: F.tanh(x), "softmax1": lambda F, x: F.softmax(x, dim=1),
    "softmax0": lambda F, x: F.softmax(x, dim=0), "log_softmax": lambda F, x: F.log_softmax(x, 1),
    "leaky_relu": lambda F, x: F.leaky_relu(x), "leaky_relu_02": lambda F, x: F.leaky_relu(x, 0.2),
    "gelu": lambda F, x: F.gelu(x), "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "elu": lambda F, x: F.elu(x), "silu": lambda F, x: F.silu(x),
    "softplus": lambda F, x: F.softplus(x), "softplus_b2": lambda F, x: F.softplus(x, beta=2.0,
                                                                                   threshold=3.0),
    "hardtanh": lambda F, x: F.hardtanh(x), "relu6": lambda F, x: F.relu6(x * 3),
    "softsign": lambda F, x: F.softsign(x), "logsigmoid": lambda F, x: F.logsigmoid(x),
    "softmin": lambda F, x: F.softmin(x, dim=1),
}


def activation(T, name: str) -> dict:
    x = T.torch.tensor(X0, requires_grad=True)
    y = ACTIVATIONS[name](T.F, x)
    (y * T.torch.tensor(X0[::-1])).sum().backward()
    return {"y": L(y), "grad": L(x.grad)}


LOGITS = [[1.0, -2.0, 0.5, 3.0], [-0.25, 0.0, 4.0, -1.5], [2.5, -3.5, -0.1, 0.7],
          [0.3, 0.3, 0.3, 0.3]]
LABELS = [3, 2, 0, 1]
PROBS = [[0.5, 0.5, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 0.0, 0.0],
         [0.25, 0.25, 0.25, 0.25]]
LOSSES = {
    "ce_mean": lambda T, x: T.F.cross_entropy(x, T.torch.tensor(LABELS)),
    "ce_sum": lambda T, x: T.F.cross_entropy(x, T.torch.tensor(LABELS), reduction="sum"),
    "ce_none": lambda T, x: T.F.cross_entropy(x, T.torch.tensor(LABELS), reduction="none"),
    "ce_weight": lambda T, x: T.F.cross_entropy(x, T.torch.tensor(LABELS),
                                                weight=T.torch.tensor([1.0, 2.0, 0.5, 3.0])),
    "ce_ignore": lambda T, x: T.F.cross_entropy(x, T.torch.tensor([3, -100, 0, 1])),
    "ce_ignore_1": lambda T, x: T.F.cross_entropy(x, T.torch.tensor(LABELS), ignore_index=1),
    "ce_smooth": lambda T, x: T.F.cross_entropy(x, T.torch.tensor(LABELS),
                                                label_smoothing=0.1),
    "ce_probs": lambda T, x: T.F.cross_entropy(x, T.torch.tensor(PROBS)),
    "ce_module": lambda T, x: T.nn.CrossEntropyLoss(weight=T.torch.tensor(
        [1.0, 2.0, 0.5, 3.0]), reduction="sum")(x, T.torch.tensor(LABELS)),
    "ce_unbatched": lambda T, x: T.F.cross_entropy(x[0], T.torch.tensor(3)),
    "nll": lambda T, x: T.F.nll_loss(T.F.log_softmax(x, dim=1), T.torch.tensor(LABELS)),
    "nll_module_sum": lambda T, x: T.nn.NLLLoss(reduction="sum")(
        T.nn.LogSoftmax(dim=1)(x), T.torch.tensor(LABELS)),
    "mse": lambda T, x: T.F.mse_loss(x, T.torch.tensor(PROBS)),
    "mse_sum": lambda T, x: T.nn.MSELoss(reduction="sum")(x, T.torch.tensor(PROBS)),
    "mse_none": lambda T, x: T.nn.MSELoss(reduction="none")(x, T.torch.tensor(PROBS)),
    "mse_size_average": lambda T, x: T.nn.MSELoss(size_average=False)(x, T.torch.tensor(PROBS)),
    "l1": lambda T, x: T.nn.L1Loss()(x, T.torch.tensor(PROBS)),
    "smooth_l1": lambda T, x: T.nn.SmoothL1Loss(beta=0.5)(x, T.torch.tensor(PROBS)),
    "bce": lambda T, x: T.nn.BCELoss()(T.torch.sigmoid(x), T.torch.tensor(PROBS)),
    "bce_weight": lambda T, x: T.F.binary_cross_entropy(T.torch.sigmoid(x),
                                                        T.torch.tensor(PROBS),
                                                        weight=T.torch.tensor(PROBS[1])),
    "bce_logits": lambda T, x: T.nn.BCEWithLogitsLoss()(x * 10, T.torch.tensor(PROBS)),
    "bce_logits_pos": lambda T, x: T.nn.BCEWithLogitsLoss(pos_weight=T.torch.tensor(
        [1.0, 2.0, 3.0, 0.5]))(x, T.torch.tensor(PROBS)),
}


def loss_case(T, name: str) -> dict:
    x = T.torch.tensor(LOGITS, requires_grad=True)
    loss = LOSSES[name](T, x)
    loss.sum().backward()
    return {"loss": L(loss), "grad": L(x.grad)}


def case_conv_pool(T):
    torch, F = T.torch, T.F
    torch.manual_seed(0)
    x = torch.randn(2, 3, 6, 6, requires_grad=True)
    w = torch.randn(4, 3, 3, 3, requires_grad=True)
    b = torch.randn(4, requires_grad=True)
    y = F.conv2d(x, w, b, stride=1, padding="same")
    y2 = F.conv2d(x[0], w, None, stride=2, padding=1)
    m = F.max_pool2d(F.relu(y), 2)
    a = F.avg_pool2d(y, kernel_size=3, stride=1, padding=1)
    (m.sum() + a.mean() + y2.sum()).backward()
    return {"y": L(y), "y2": L(y2), "m": L(m), "a": L(a), "gx": L(x.grad), "gw": L(w.grad),
            "gb": L(b.grad)}


def case_misc_functional(T):
    torch, F = T.torch, T.F
    x = torch.tensor(X0, requires_grad=True)
    w = torch.tensor(W0[0] + [1.0], requires_grad=True)
    lin = F.linear(x, torch.tensor([W0[0] + [1.0], W0[1] + [-1.0]]), torch.tensor([0.5, -0.5]))
    padded = F.pad(x, (1, 2), value=-1.0)
    padded2 = F.pad(x, (0, 1, 1, 0))
    (lin.sum() + (padded * padded).sum() + (w * x).sum()).backward()
    hot = F.one_hot(torch.tensor([0, 3, 1]))
    hot5 = F.one_hot(torch.tensor([[0], [2]]), num_classes=5)
    drop_eval = F.dropout(x, p=0.5, training=False)
    return {"lin": L(lin), "padded": L(padded), "padded2": L(padded2), "grad": L(x.grad),
            "hot": L(hot), "hot5": L(hot5), "drop_eval": L(drop_eval)}


# -- modules -------------------------------------------------------------------------------------
def case_default_init(T):
    torch, nn = T.torch, T.nn
    torch.manual_seed(0)
    lin = nn.Linear(3, 2)
    conv = nn.Conv2d(2, 3, kernel_size=3)
    lin_nb = nn.Linear(4, 2, bias=False)
    after = torch.rand(3)
    return {"lin_w": L(lin.weight), "lin_b": L(lin.bias), "conv_w": L(conv.weight),
            "conv_b": L(conv.bias), "lin_nb": L(lin_nb.weight), "after": L(after)}


def make_net(T):
    torch, nn = T.torch, T.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 5)
            self.scale = nn.Parameter(torch.ones(5) * 0.5)
            self.register_buffer("shift", torch.zeros(5))
            self.blocks = nn.ModuleList([nn.Linear(5, 5) for _ in range(2)])
            self.acts = nn.ModuleDict({"relu": nn.ReLU(), "tanh": nn.Tanh()})
            self.head = nn.Sequential(nn.Linear(5, 3), nn.Dropout(0.1))

        def forward(self, x):
            h = self.acts["relu"](self.fc1(x)) * self.scale + self.shift
            for block in self.blocks:
                h = self.acts["tanh"](block(h))
            return self.head(h)

    return Net()


def case_module_api(T):
    torch = T.torch
    torch.manual_seed(0)
    net = make_net(T)
    net.eval()
    x = torch.tensor(X0)
    y = net(x)
    y.sum().backward()
    grads = {n: L(p.grad) for n, p in net.named_parameters()}
    net.zero_grad()
    return {"repr": repr(net), "params": [n for n, _ in net.named_parameters()],
            "modules": [n for n, _ in net.named_modules()],
            "children": [type(m).__name__ for m in net.children()],
            "state_keys": list(net.state_dict()), "y": L(y), "grads": grads,
            "zeroed": [p.grad is None for p in net.parameters()],
            "training": [m.training for m in net.modules()],
            "count": sum(p.numel() for p in net.parameters() if p.requires_grad)}


def case_training_loop(T):
    """PyTorch's beginner pattern: seeded data and model, DataLoader with shuffle, a loss,
    an optimiser with momentum and a StepLR."""
    torch, nn = T.torch, T.nn
    torch.manual_seed(0)
    x = torch.randn(24, 4)
    y = torch.randint(0, 3, (24,))
    loader = T.data.DataLoader(T.data.TensorDataset(x, y), batch_size=8, shuffle=True)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    criterion = nn.CrossEntropyLoss()
    opt = T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = T.sched.StepLR(opt, step_size=2, gamma=0.5)
    losses = []
    for _ in range(4):
        for xb, yb in loader:
            opt.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        sched.step()
    with torch.no_grad():
        acc = (model(x).argmax(dim=1) == y).float().mean().item()
    return {"losses": losses, "acc": acc, "after": L(torch.rand(2))}


def case_data(T):
    torch, data = T.torch, T.data
    torch.manual_seed(1)
    ds = data.TensorDataset(torch.arange(14.0).reshape(7, 2), torch.arange(7))
    epochs = [[L(yb) for _, yb in data.DataLoader(ds, batch_size=3, shuffle=True)]
              for _ in range(2)]
    ordered = [L(xb) for xb, _ in data.DataLoader(ds, batch_size=4, drop_last=True)]
    a, b = data.random_split(ds, [5, 2])
    c, d = data.random_split(range(10), [0.5, 0.5])
    return {"epochs": epochs, "ordered": ordered, "split": [list(a.indices), list(b.indices)],
            "split_frac": [list(c.indices), list(d.indices)], "after": L(torch.rand(3)),
            "len": len(data.DataLoader(ds, batch_size=3))}


def case_dropout(T):
    """Dropout's masks come from PyTorch's generator: the same units dropped as in torch."""
    torch, nn, F = T.torch, T.nn, T.F
    torch.manual_seed(0)
    x = torch.randn(5, 7, requires_grad=True)
    drop = nn.Dropout(0.3)
    y = drop(x)
    y.sum().backward()
    z = F.dropout(x, 0.1)
    drop.eval()
    return {"y": L(y), "grad": L(x.grad), "z": L(z), "eval": L(drop(x)),
            "after": L(torch.rand(3))}


def case_mnist_like(T):
    """pytorch/examples' MNIST program on random 1x12x12 images: conv, dropout, log_softmax
    and nll_loss, Adadelta with StepLR(gamma=0.7)."""
    torch, nn, F = T.torch, T.nn, T.F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(128, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = nn.Flatten()(x)
            x = F.relu(self.fc1(x))
            x = self.dropout2(x)
            return F.log_softmax(self.fc2(x), dim=1)

    torch.manual_seed(1)
    data = T.data.TensorDataset(torch.rand(32, 1, 12, 12), torch.randint(0, 10, (32,)))
    loader = T.data.DataLoader(data, batch_size=8, shuffle=True)
    model = Net()
    optimizer = T.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = T.sched.StepLR(optimizer, step_size=1, gamma=0.7)
    losses = []
    for _ in range(2):
        model.train()
        for x, target in loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(x), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
    model.eval()
    with torch.no_grad():
        out = model(data.tensors[0])
        test_loss = F.nll_loss(out, data.tensors[1], reduction="sum").item()
    return {"losses": losses, "test_loss": test_loss, "lr": scheduler.get_last_lr()}


def case_normalization(T):
    """BatchNorm (training: batch statistics and the running update; eval: the running
    statistics) and LayerNorm, with gradients."""
    torch, nn = T.torch, T.nn
    torch.manual_seed(2)
    x = torch.randn(4, 3, 5, 5, requires_grad=True)
    bn = nn.BatchNorm2d(3)
    y = bn(x)
    y2 = bn(x * 2 + 1)
    (y * y2 + y * x).sum().backward()
    bn.eval()
    e = bn(x)
    bn1 = nn.BatchNorm1d(5, momentum=None, affine=False)
    z = bn1(torch.randn(6, 5))
    z = bn1(torch.randn(6, 5) + 3)
    ln = nn.LayerNorm([5, 5])
    h = torch.randn(2, 3, 5, 5, requires_grad=True)
    o = ln(h)
    (o * o * h).sum().backward()
    return {"y": L(y), "grad": L(x.grad), "eval": L(e), "rm": L(bn.running_mean),
            "rv": L(bn.running_var), "nbt": bn.num_batches_tracked.item(),
            "gw": L(bn.weight.grad), "gb": L(bn.bias.grad), "z": L(z),
            "rv1": L(bn1.running_var), "o": L(o), "gh": L(h.grad), "lgw": L(ln.weight.grad),
            "repr": repr(bn) + repr(bn1) + repr(ln), "keys": list(bn.state_dict())}


def case_plateau(T):
    """ReduceLROnPlateau on a loss sequence with plateaus (patience, cooldown, min_lr)."""
    w = T.torch.tensor([1.0], requires_grad=True)
    opt = T.optim.SGD([w], lr=0.5)
    s = T.sched.ReduceLROnPlateau(opt, factor=0.5, patience=1, cooldown=1, min_lr=0.05)
    lrs = []
    for loss in [5.0, 4.0, 4.0, 3.9999, 4.1, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 2.0]:
        s.step(T.torch.tensor(loss))
        lrs.append(s.get_last_lr()[0])
    m = T.sched.ReduceLROnPlateau(T.optim.SGD([w], lr=1.0), mode="max", threshold=0.1,
                                  threshold_mode="abs", patience=0)
    for acc in [0.5, 0.55, 0.7, 0.75, 0.9]:
        m.step(acc)
        lrs.append(m.get_last_lr()[0])
    return {"lrs": lrs, "best": s.best, "bad": s.num_bad_epochs}


CASES = {
    "param_groups": case_param_groups, "conv_pool": case_conv_pool,
    "misc_functional": case_misc_functional, "default_init": case_default_init,
    "module_api": case_module_api, "training_loop": case_training_loop, "data": case_data,
    "dropout": case_dropout, "mnist_like": case_mnist_like,
    "normalization": case_normalization, "sched_plateau": case_plateau,
}
CASES.update({f"optim_{n}": (lambda T, n=n: optimizer_trajectory(T, n)) for n in OPTIMIZERS})
CASES.update({f"sched_{n}": (lambda T, n=n: scheduler_run(T, n)) for n in SCHEDULERS})
CASES.update({f"act_{n}": (lambda T, n=n: activation(T, n)) for n in ACTIVATIONS})
CASES.update({f"loss_{n}": (lambda T, n=n: loss_case(T, n)) for n in LOSSES})


def namespaces(torch, nn, F, optim, sched, data) -> types.SimpleNamespace:
    """The framework as the cases see it."""
    return types.SimpleNamespace(torch=torch, nn=nn, F=F, optim=optim, sched=sched, data=data)


def main() -> None:
    import torch
    import torch.nn.functional as F
    import torch.optim.lr_scheduler as sched
    import torch.utils.data as data
    from torch import nn, optim

    T = namespaces(torch, nn, F, optim, sched, data)
    out = {"torch": torch.__version__, "cases": {}}
    for name, case in CASES.items():
        out["cases"][name] = case(T)
    path = Path(__file__).with_name("torch_nn.json")
    path.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(out['cases'])} cases)")



if __name__ == "__main__":
    main()
