"""``kg.utils.checkpoint``: recomputing a segment in backward gives the gradients of the
plain run (and PyTorch's, recorded with the same seeds: dropout inside the segment drops
the same units in the recomputation)."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.utils.checkpoint import checkpoint, checkpoint_sequential


def close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


def _run(ckpt: bool):
    kg.manual_seed(0)
    net = kg.nn.Sequential(kg.nn.Linear(3, 5), kg.nn.Tanh(), kg.nn.Dropout(0.3),
                           kg.nn.Linear(5, 2))
    x = kg.linspace(-1.0, 1.0, 12).reshape(4, 3).requires_grad_()
    y = checkpoint(net, x, use_reentrant=False) if ckpt else net(x)
    (y ** 2).sum().backward()
    return {"y": y.tolist(), "x_grad": x.grad.tolist(),
            "grads": [p.grad.tolist() for p in net.parameters()]}


def test_checkpoint_gives_the_plain_runs_gradients(recorded):
    want = recorded("torch_runtime")["checkpoint"]
    plain, ckpt = _run(False), _run(True)
    assert plain == ckpt  # the same ops on the same values, dropout's mask included
    for got, w in ((plain, want["plain"]), (ckpt, want["checkpoint"])):
        close(got["y"], w["y"])
        close(got["x_grad"], w["x_grad"])
        for g, wg in zip(got["grads"], w["grads"], strict=True):
            close(g, wg)


def test_checkpoint_runs_the_function_again_in_backward():
    calls = []
    layer = kg.nn.Linear(2, 2)

    def segment(x):
        calls.append(kg.is_grad_enabled())
        return layer(x).relu()
    y = checkpoint(segment, kg.ones(3, 2), use_reentrant=True)  # input needs no grad
    assert calls == [False] and y.requires_grad
    y.sum().backward()
    assert calls == [False, True]
    assert layer.weight.grad is not None and layer.bias.grad is not None


def test_checkpoint_sequential_matches_pytorch(recorded):
    want = recorded("torch_runtime")["checkpoint"]["sequential"]
    net = kg.nn.Sequential(*[kg.nn.Linear(3, 3) for _ in range(4)])
    net.load_state_dict({k: np.array(v, np.float32) for k, v in want["state"].items()})
    x = kg.linspace(-1.0, 1.0, 6).reshape(2, 3)
    y = checkpoint_sequential(net, 2, x, use_reentrant=False)
    y.sum().backward()
    close(y.tolist(), want["y"])
    for p, wg in zip(net.parameters(), want["grads"], strict=True):
        close(p.grad.tolist(), wg)


def test_checkpoint_options_it_does_not_have():
    with pytest.raises(ValueError, match="at their defaults only"):
        checkpoint(lambda v: v, kg.ones(1), use_reentrant=False, debug=True)
