"""PyTorch's activation-checkpoint wrapper and distributed checkpoint on kernelgraph, against
what torch 2.13 records (tests/recorded/record_torch_dcp.py)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.distributed.checkpoint as dcp
from kernelgraph.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    CheckpointImpl,
    CheckpointWrapper,
    apply_activation_checkpointing,
    checkpoint_wrapper,
)
from kernelgraph.distributed.checkpoint.default_planner import (
    DefaultLoadPlanner,
    DefaultSavePlanner,
)
from kernelgraph.distributed.checkpoint.state_dict import (
    StateDictOptions,
    _init_optim_state,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)

ROOT = Path(__file__).resolve().parents[1]
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


# -- torch.distributed.checkpoint ----------------------------------------------------------------
def test_load_fills_the_given_tensors_in_place(rec, tmp_path):
    saved = {"a": kg.tensor([1.0, 2.0]), "b": {"c": kg.zeros(3)}, "step": 5}
    dcp.save(saved, checkpoint_id=tmp_path)
    target = {"a": kg.zeros(2), "b": {"c": kg.ones(3)}, "step": 0}
    a_before = target["a"]
    dcp.load(target, checkpoint_id=tmp_path)
    want = rec["load"]
    assert target["a"].tolist() == want["a"]
    assert target["b"]["c"].tolist() == want["c"]
    assert target["step"] == want["step"]
    assert (a_before is target["a"]) == want["same_tensor"]
    partial = {"a": kg.zeros(2)}
    dcp.load_state_dict(partial, dcp.FileSystemReader(tmp_path))
    assert partial["a"].tolist() == want["partial"]


def test_a_key_the_checkpoint_lacks_raises_as_in_pytorch(rec, tmp_path):
    dcp.save_state_dict({"a": kg.ones(2)}, dcp.FileSystemWriter(tmp_path))
    with pytest.raises(BaseException) as info:
        dcp.load({"zz": kg.zeros(1)}, checkpoint_id=tmp_path)
    want = rec["missing"]
    assert type(info.value).__name__ == want["type"]
    assert [c.__name__ for c in type(info.value).__mro__[1:]] == want["bases"]
    assert want["cause"] in str(info.value)


def test_checkpoint_is_kernelgraphs_pickle_free_format(tmp_path):
    dcp.save({"w": kg.ones(2), "groups": [{"lr": 0.1, "betas": (0.9, 0.99), "x": None}]},
             storage_writer=dcp.FileSystemWriter(tmp_path),
             planner=DefaultSavePlanner())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.npz"]
    with np.load(tmp_path / "state.npz", allow_pickle=False) as z:
        assert "__kernelgraph__" in z.files
    target = {"w": kg.zeros(2), "groups": [{"lr": 0.0, "betas": (0.0, 0.0), "x": 1}]}
    dcp.load(target, checkpoint_id=tmp_path, planner=DefaultLoadPlanner())
    assert target["groups"] == [{"lr": 0.1, "betas": (0.9, 0.99), "x": None}]
    with pytest.raises(TypeError, match="never pickle"):
        dcp.save({"f": object()}, checkpoint_id=tmp_path / "other")
    with pytest.raises(BaseException, match="Size mismatch for w"):
        dcp.load({"w": kg.zeros(3)}, checkpoint_id=tmp_path)


def _trained(seed: int):
    kg.manual_seed(seed)
    model = kg.nn.Sequential(kg.nn.Linear(3, 4), kg.nn.ReLU(), kg.nn.Linear(4, 2))
    opt = kg.optim.Adam(model.parameters(), lr=0.1)
    model(kg.ones(2, 3)).sum().backward()
    opt.step()
    return model, opt


def test_state_dict_helpers_have_pytorchs_layout(rec):
    model, opt = _trained(0)
    want = rec["state_dict"]
    assert list(get_model_state_dict(model)) == want["model"]
    osd = get_optimizer_state_dict(model, opt)
    first = next(iter(osd["state"]))
    assert list(osd) == want["optim_keys"]
    assert list(osd["state"]) == want["optim_state"]
    assert list(osd["state"][first]) == want["optim_param_state"]
    assert isinstance(osd["state"][first]["step"], kg.Tensor) == want["step_is_tensor"]
    (group,), (torch_group,) = osd["param_groups"], want["param_groups"]
    assert group["params"] == torch_group["params"]
    for k, v in group.items():  # kernelgraph's hyperparameters are some of PyTorch's
        assert (list(v) if isinstance(v, tuple) else v) == torch_group[k], k
    assert {f: getattr(StateDictOptions(), f) for f in want["options"]} == want["options"]


def test_model_and_optimizer_round_trip_through_dcp(tmp_path):
    model, opt = _trained(0)
    dcp.save({"model": get_model_state_dict(model),
              "optim": get_optimizer_state_dict(model, opt)}, checkpoint_id=tmp_path)
    fresh, fresh_opt = _trained(3)
    fresh_opt = kg.optim.Adam(fresh.parameters(), lr=0.5)
    _init_optim_state(fresh_opt)
    sd = {"model": get_model_state_dict(fresh, options=StateDictOptions(full_state_dict=True)),
          "optim": get_optimizer_state_dict(fresh, fresh_opt)}
    dcp.load(sd, checkpoint_id=tmp_path)
    set_model_state_dict(fresh, sd["model"])
    set_optimizer_state_dict(fresh, fresh_opt, sd["optim"])
    for (k, a), b in zip(model.state_dict().items(), fresh.state_dict().values(), strict=True):
        np.testing.assert_array_equal(a, b, err_msg=k)
    assert fresh_opt.param_groups[0]["lr"] == 0.1
    # both optimizers now take the same next step
    for m, o in ((model, opt), (fresh, fresh_opt)):
        o.zero_grad()
        m(kg.ones(2, 3)).sum().backward()
        o.step()
    for (k, a), b in zip(model.state_dict().items(), fresh.state_dict().values(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=k)


def test_stateful_objects_save_and_load_through_their_state_dict(tmp_path):
    model, _ = _trained(0)
    dcp.save({"model": model}, checkpoint_id=tmp_path)
    fresh, _ = _trained(5)
    dcp.load({"model": fresh}, checkpoint_id=tmp_path)
    for (k, a), b in zip(model.state_dict().items(), fresh.state_dict().values(), strict=True):
        np.testing.assert_array_equal(a, b, err_msg=k)


def test_wrapped_model_names_in_optimizer_state():
    model, opt = _trained(0)
    apply_activation_checkpointing(model, check_fn=lambda m: isinstance(m, kg.nn.Linear))
    assert list(get_optimizer_state_dict(model, opt)["state"]) == \
        ["0.weight", "0.bias", "2.weight", "2.bias"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_WORKER = r"""
import json, sys
import kernelgraph as kg
import kernelgraph.distributed as dist
import kernelgraph.distributed.checkpoint as dcp
from kernelgraph.distributed.checkpoint.state_dict import get_model_state_dict

directory = sys.argv[1]
dist.init_process_group("gloo")
rank = dist.get_rank()
kg.manual_seed(rank)  # different weights: rank 0's must be the ones written
model = kg.nn.Linear(3, 2)
dcp.save({"model": get_model_state_dict(model), "rank": rank}, checkpoint_id=directory)
written = model.weight.tolist() if rank == 0 else None
kg.manual_seed(10 + rank)
fresh = kg.nn.Linear(3, 2)
sd = {"model": get_model_state_dict(fresh), "rank": -1}
dcp.load(sd, checkpoint_id=directory)  # fills fresh's own tensors
dist.destroy_process_group()
print("RESULT " + json.dumps({"rank": rank, "written": written, "saved_rank": sd["rank"],
                              "loaded": fresh.weight.tolist()}))
"""


def test_two_processes_rank_zero_writes_every_rank_loads(tmp_path):
    port = _free_port()
    procs = []
    for rank in range(2):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MASTER_ADDR": "127.0.0.1",
               "MASTER_PORT": str(port), "RANK": str(rank), "WORLD_SIZE": "2"}
        procs.append(subprocess.Popen([sys.executable, "-c", _WORKER, str(tmp_path / "ckpt")],
                                      cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:] + out[-2000:]
        line = [ln for ln in out.splitlines() if ln.startswith("RESULT ")][-1]
        results.append(json.loads(line.removeprefix("RESULT ")))
    zero, one = sorted(results, key=lambda r: r["rank"])
    assert zero["saved_rank"] == one["saved_rank"] == 0
    assert zero["loaded"] == one["loaded"] == zero["written"]
