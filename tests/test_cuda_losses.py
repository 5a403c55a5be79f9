"""The losses of ``kg.nn.functional`` / ``kg.nn`` on CUDA tensors, eager mode, against the same
losses on the CPU: forward values, input gradients, the errors for bad targets, and a whole
PyTorch training step (``model.to('cuda')``, loss, ``backward()``, ``optimizer.step()``).

The losses look at class ids on the host (which targets are ignored, which are out of range)
before any kernel runs; on a GPU that look is one explicit copy, where ``numpy()`` would refuse
(``nn.CrossEntropyLoss()`` once failed on every CUDA tensor). Without an NVIDIA GPU the
kernels run on numba's simulator (the root conftest): shapes stay tiny.
"""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.nn as nn
import kernelgraph.nn.functional as F

RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((4, 3)).astype(np.float32)
IDS = np.array([0, 2, 1, 2])
IDS_IGNORED = np.array([0, 2, -100, 2])  # PyTorch's default ignore_index
WEIGHT = np.array([0.5, 1.0, 2.0], np.float32)

CASES = {
    "cross_entropy": (lambda x, t, w: F.cross_entropy(x, t), IDS),
    "CrossEntropyLoss": (lambda x, t, w: nn.CrossEntropyLoss()(x, t), IDS),
    "cross_entropy ignore_index": (lambda x, t, w: F.cross_entropy(x, t), IDS_IGNORED),
    "cross_entropy weight": (lambda x, t, w: F.cross_entropy(x, t, weight=w), IDS_IGNORED),
    "cross_entropy label_smoothing": (
        lambda x, t, w: F.cross_entropy(x, t, label_smoothing=0.1, reduction="sum"), IDS),
    "cross_entropy none": (lambda x, t, w: F.cross_entropy(x, t, reduction="none"), IDS),
    "cross_entropy probabilities": (
        lambda x, t, w: F.cross_entropy(x, F.one_hot(t, 3).float() * 0.9 + 0.1 / 3), IDS),
    "nll_loss": (lambda x, t, w: F.nll_loss(F.log_softmax(x, dim=1), t), IDS_IGNORED),
    "NLLLoss weight": (lambda x, t, w: nn.NLLLoss(weight=w)(F.log_softmax(x, dim=1), t), IDS),
    "binary_cross_entropy": (
        lambda x, t, w: F.binary_cross_entropy(F.sigmoid(x), F.one_hot(t, 3).float()), IDS),
    "one_hot num_classes=-1": (lambda x, t, w: (x * F.one_hot(t).float()).sum(), IDS),
}


def _run(case: str, device: str):
    f, ids = CASES[case]
    x = kg.tensor(LOGITS, device=device, requires_grad=True)
    loss = f(x, kg.tensor(ids, device=device), kg.tensor(WEIGHT, device=device))
    loss.sum().backward()
    assert loss.device == x.grad.device == kg.device(device)
    return loss.detach().cpu().numpy(), x.grad.cpu().numpy()


@pytest.mark.parametrize("case", list(CASES))
def test_loss_on_cuda_matches_cpu(case):
    want_loss, want_grad = _run(case, "cpu")
    got_loss, got_grad = _run(case, "cuda")
    np.testing.assert_allclose(got_loss, want_loss, rtol=1e-6, atol=1e-6, err_msg=case)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6, atol=1e-6, err_msg=case)


@pytest.mark.parametrize("call", [
    lambda x, t: F.cross_entropy(x, t, weight=kg.ones(3, device=x.device)),
    lambda x, t: F.nll_loss(x, t),
], ids=["cross_entropy", "nll_loss"])
def test_target_out_of_range_raises_the_cpu_error_on_cuda(call):
    ids = np.array([0, 3, 1, 2])
    with pytest.raises(IndexError) as cpu:
        call(kg.tensor(LOGITS), kg.tensor(ids))
    with pytest.raises(IndexError) as dev:
        call(kg.tensor(LOGITS, device="cuda"), kg.tensor(ids, device="cuda"))
    assert str(dev.value) == str(cpu.value) == "Target 3 is out of bounds."


def test_binary_cross_entropy_checks_its_range_on_cuda():
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(kg.tensor([0.5, 1.5], device="cuda"),
                               kg.tensor([0.0, 1.0], device="cuda"))


def _train(device: str):
    """Three SGD steps of a small classifier, PyTorch's loop, on ``device``."""
    kg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3)).to(device)
    opt = kg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    x = kg.tensor(np.random.default_rng(1).standard_normal((6, 4)).astype(np.float32))
    x = x.to(device)
    t = kg.tensor(np.array([0, 2, 1, 2, 0, 1])).to(device)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = criterion(model(x), t)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.device == kg.device(device) for p in model.parameters())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()]


def test_training_step_on_cuda_matches_cpu():
    want_losses, want_params = _train("cpu")
    got_losses, got_params = _train("cuda")
    assert want_losses[-1] < want_losses[0]  # it trains
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-6)
    for got, want in zip(got_params, want_params, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
