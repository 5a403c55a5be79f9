"""PyTorch's activation-checkpoint wrapper and distributed checkpoint on kernelgraph, against
what torch 2.13 records (tests/recorded/record_torch_dcp.py)."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    CheckpointImpl,
    CheckpointWrapper,
    apply_activation_checkpointing,
    checkpoint_wrapper,
)

X = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)


@pytest.fixture
def rec(recorded):
    return recorded("torch_dcp")


def _net(seed: int = 0):
    kg.manual_seed(seed)
    return kg.nn.Sequential(kg.nn.Linear(3, 4), kg.nn.Tanh(), kg.nn.Dropout(0.5),
                            kg.nn.Linear(4, 2))


def test_checkpoint_impl_values_are_pytorchs(rec):
    assert {m.name: m.value for m in CheckpointImpl} == rec["impl"]


def test_wrapper_names_its_child_but_not_its_state(rec):
    kg.manual_seed(0)
    w = checkpoint_wrapper(kg.nn.Linear(3, 4), checkpoint_impl=CheckpointImpl.NO_REENTRANT)
    want = rec["wrapper"]
    assert type(w).__name__ == want["type"]
    assert list(w.state_dict()) == want["state_dict"]
    assert [n for n, _ in w.named_parameters()] == want["named_parameters"]
    assert [n for n, _ in w.named_modules()] == want["named_modules"]
    assert w.in_features == want["in_features"]


def test_apply_activation_checkpointing_replaces_in_place(rec):
    model = kg.nn.Sequential(kg.nn.Linear(3, 4), kg.nn.ReLU(), kg.nn.Linear(4, 2))
    apply_activation_checkpointing(model, checkpoint_wrapper_fn=checkpoint_wrapper,
                                   check_fn=lambda m: isinstance(m, kg.nn.Linear))
    want = rec["applied"]
    assert list(model.state_dict()) == want["state_dict"]
    assert [n for n, _ in model.named_parameters()] == want["named_parameters"]
    assert [type(m).__name__ for m in model.children()] == want["children"]


@pytest.mark.parametrize("impl", list(CheckpointImpl))
def test_wrapped_model_gives_the_unwrapped_outputs_and_gradients(impl):
    plain, wrapped = _net(), _net()
    apply_activation_checkpointing(
        wrapped, checkpoint_wrapper_fn=lambda m: checkpoint_wrapper(m, checkpoint_impl=impl),
        check_fn=lambda m: isinstance(m, kg.nn.Linear | kg.nn.Dropout))
    assert isinstance(wrapped[2], CheckpointWrapper)
    outs = []
    for net in (plain, wrapped):
        kg.manual_seed(7)  # the same dropout mask; recomputation must draw it again
        x = kg.tensor(X, requires_grad=True)
        y = net(x)
        (y * y).sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy(),
                     [p.grad.numpy() for p in net.parameters()]))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-6)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-5, atol=1e-7)
    for a, b in zip(outs[1][2], outs[0][2], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_wrapped_state_loads_into_the_unwrapped_model():
    plain, wrapped = _net(1), _net(2)
    apply_activation_checkpointing(wrapped, check_fn=lambda m: isinstance(m, kg.nn.Linear))
    plain.load_state_dict(wrapped.state_dict())
    for (k, a), b in zip(plain.state_dict().items(), wrapped.state_dict().values(), strict=True):
        np.testing.assert_array_equal(a, b, err_msg=k)


def test_wrapper_bad_input():
    with pytest.raises(TypeError, match="nn.Module"):
        checkpoint_wrapper(lambda x: x)
    with pytest.raises(ValueError, match="offload_to_cpu"):
        checkpoint_wrapper(kg.nn.Linear(1, 1), offload_to_cpu=True)
