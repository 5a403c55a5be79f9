"""PyTorch's runtime namespaces on kernelgraph: ``torch.cuda``, ``torch.accelerator`` and
``torch.set_default_tensor_type`` with and without a CUDA device, the ``torch.backends``
flags, ``nn.DataParallel`` and the samplers, against PyTorch's recorded behaviour
(tests/recorded/record_torch_runtime.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.utils.data import DistributedSampler, WeightedRandomSampler

ROOT = Path(__file__).resolve().parents[1]

# The same calls as record_torch_runtime.py's cuda_cases, in kernelgraph.
_NO_CUDA = r"""
import json, kernelgraph as kg
c, a = kg.cuda, kg.accelerator

def outcome(fn):
    try:
        value = fn()
    except Exception as e:
        return {"error": type(e).__name__}
    return {"value": value if isinstance(value, bool | int | float | str | None | list)
            else repr(value)}

def enter(cm):
    def run():
        with cm:
            return "entered"
    return run

cases = {
    "is_available": lambda: c.is_available(), "device_count": lambda: c.device_count(),
    "manual_seed": lambda: c.manual_seed(0), "manual_seed_all": lambda: c.manual_seed_all(0),
    "current_device": lambda: c.current_device(), "set_device(0)": lambda: c.set_device(0),
    "set_device(-1)": lambda: c.set_device(-1), "set_device('cpu')": lambda: c.set_device("cpu"),
    "with device(0)": enter(c.device(0)), "with device(-1)": enter(c.device(-1)),
    "FloatTensor([1.0])": lambda: c.FloatTensor([1.0]), "LongTensor(2)": lambda: c.LongTensor(2),
    "get_device_name()": lambda: c.get_device_name(),
    "get_device_capability()": lambda: c.get_device_capability(),
    "is_bf16_supported()": lambda: c.is_bf16_supported(),
    "memory_allocated()": lambda: c.memory_allocated(),
    "memory_reserved()": lambda: c.memory_reserved(), "mem_get_info()": lambda: c.mem_get_info(),
    "accelerator.set_device_index(0)": lambda: a.set_device_index(0),
    "with accelerator.device_index(0)": enter(a.device_index(0)),
    "with accelerator.device_index(None)": enter(a.device_index(None)),
    "set_default_tensor_type(FloatTensor)": lambda: kg.set_default_tensor_type(kg.FloatTensor),
    "set_default_tensor_type(cuda.FloatTensor)":
        lambda: kg.set_default_tensor_type(kg.cuda.FloatTensor),
    "set_default_tensor_type('torch.cuda.FloatTensor')":
        lambda: kg.set_default_tensor_type("torch.cuda.FloatTensor"),
    "set_default_tensor_type(LongTensor)": lambda: kg.set_default_tensor_type(kg.LongTensor),
}
kg.manual_seed(0)
inner = kg.nn.Sequential(kg.nn.Linear(3, 4), kg.nn.ReLU(), kg.nn.Linear(4, 2))
net = kg.nn.DataParallel(inner)
x = kg.arange(6.0).reshape(2, 3)
dp = {"repr": repr(net), "state_dict_keys": list(net.state_dict()),
      "device_ids": net.device_ids, "module_is_inner": net.module is inner,
      "same_output": bool(kg.equal(net(x), inner(x))),
      "has_output_device": hasattr(net, "output_device"),
      "parameter_names": [n for n, _ in net.named_parameters()]}
print(json.dumps({"available": c.is_available(), "data_parallel": dp,
                  "cases": {k: outcome(f) for k, f in cases.items()}}))
"""


@pytest.fixture(scope="module")
def without_cuda():
    """The no-CUDA cases run in a process with numba's simulator off (the test run turns it
    on); None on a machine with a GPU."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0", "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", _NO_CUDA], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    if got["available"]:
        pytest.skip("this machine has a CUDA GPU")
    return got


def test_cuda_without_a_device_behaves_as_pytorch_without_one(recorded, without_cuda):
    assert without_cuda["cases"] == recorded("torch_runtime")["cuda"]


def test_data_parallel_without_a_device_is_pytorchs(recorded, without_cuda):
    assert without_cuda["data_parallel"] == recorded("torch_runtime")["data_parallel"]


def test_cuda_on_a_device():
    # the test run has a GPU or numba's simulator (conftest.py)
    assert kg.cuda.is_available()
    assert kg.cuda.current_device() == 0
    kg.cuda.set_device(0)
    kg.cuda.set_device("cuda:0")
    with kg.cuda.device(0):
        assert kg.cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        kg.cuda.set_device(kg.cuda.device_count())
    with pytest.raises(ValueError, match="Expected a cuda device"):
        kg.cuda.set_device("cpu")
    t = kg.cuda.FloatTensor([1.0, 2.0])
    assert t.is_cuda and t.dtype == kg.float32 and t.tolist() == [1.0, 2.0]
    assert isinstance(t, kg.cuda.FloatTensor) and not isinstance(t, kg.FloatTensor)
    assert not isinstance(kg.ones(2), kg.cuda.FloatTensor)
    assert kg.cuda.LongTensor(3).shape == (3,)
    assert isinstance(kg.cuda.get_device_name(), str) and kg.cuda.get_device_name()
    major, minor = kg.cuda.get_device_capability()
    assert major >= 1 and minor >= 0
    free, total = kg.cuda.mem_get_info()
    assert 0 < free <= total
    assert kg.cuda.memory_allocated() >= 0 and kg.cuda.memory_reserved() >= 0
    assert kg.accelerator.current_device_index() == 0
    kg.accelerator.set_device_index(0)
    with kg.accelerator.device_index(0):
        pass


def test_cuda_seed_is_recorded_and_draws_follow_the_cpu_generator():
    kg.cuda.manual_seed(123)
    assert kg.cuda.initial_seed() == 123
    kg.cuda.manual_seed_all(7)
    assert kg.cuda.initial_seed() == 7
    kg.manual_seed(0)
    a = kg.randn(4, device="cuda").tolist()
    kg.manual_seed(0)
    kg.cuda.manual_seed(999)  # the CUDA tensor's numbers come from the CPU generator
    assert kg.randn(4, device="cuda").tolist() == a
    with pytest.raises(TypeError):
        kg.cuda.manual_seed("x")


def test_set_default_tensor_type_moves_new_tensors_to_the_gpu_and_back():
    try:
        kg.set_default_tensor_type(kg.cuda.FloatTensor)
        assert kg.zeros(2).is_cuda and kg.tensor([1.5]).is_cuda
        kg.set_default_tensor_type("torch.FloatTensor")
        assert not kg.zeros(2).is_cuda and kg.zeros(2).dtype == kg.float32
    finally:
        kg.set_default_device("cpu")
    with pytest.raises(TypeError, match="float32 and cannot be changed"):
        kg.set_default_tensor_type(kg.DoubleTensor)
    with pytest.raises(TypeError, match="only floating-point types"):
        kg.set_default_tensor_type(kg.LongTensor)
    with pytest.raises(TypeError, match="unknown tensor type"):
        kg.set_default_tensor_type("torch.Nonsense")


def test_backends_flags_have_pytorchs_defaults_and_can_be_set(recorded):
    want = recorded("torch_runtime")["backends"]
    b = kg.backends
    got = {"cudnn.deterministic": b.cudnn.deterministic, "cudnn.benchmark": b.cudnn.benchmark,
           "cudnn.enabled": b.cudnn.enabled, "cudnn.allow_tf32": b.cudnn.allow_tf32,
           "cudnn.is_available()": b.cudnn.is_available(),
           "cuda.matmul.allow_tf32": b.cuda.matmul.allow_tf32,
           "mps.is_available()": b.mps.is_available(), "mps.is_built()": b.mps.is_built()}
    assert got == want
    try:
        b.cudnn.deterministic, b.cudnn.benchmark = True, True
        assert b.cudnn.deterministic is True and b.cudnn.benchmark is True
    finally:
        b.cudnn.deterministic, b.cudnn.benchmark = False, False
    with pytest.raises(AttributeError, match="no flag 'determinstic'"):
        b.cudnn.determinstic = True


def test_data_parallel_state_dict_round_trips():
    def make():
        return kg.nn.DataParallel(kg.nn.Sequential(kg.nn.Linear(3, 4), kg.nn.ReLU(),
                                                   kg.nn.Linear(4, 2)).cuda())
    net, other = make(), make()
    x = kg.arange(6.0).reshape(2, 3)
    other.load_state_dict(net.state_dict())
    assert kg.equal(other(x), net(x))
    assert kg.equal(kg.nn.parallel.data_parallel(net.module, x), net(x))
    with pytest.raises(TypeError, match="expects an nn.Module"):
        kg.nn.DataParallel(lambda v: v)


def test_data_parallel_on_a_device_moves_the_inputs():
    inner = kg.nn.Linear(3, 2)
    net = kg.nn.DataParallel(inner)  # the test run has a (simulated) CUDA device
    assert net.device_ids == list(range(kg.cuda.device_count()))
    with pytest.raises(RuntimeError, match="parameters and buffers on device cuda:0"):
        net(kg.ones(2, 3))
    inner.cuda()
    out = net(kg.ones(2, 3))
    assert out.is_cuda
    np.testing.assert_allclose(out.detach().cpu().numpy(),
                               inner.cpu()(kg.ones(2, 3)).detach().numpy(),
                               rtol=1e-6)


def test_distributed_sampler_deals_pytorchs_indices(recorded):
    for case in recorded("torch_runtime")["samplers"]["distributed"]:
        s = DistributedSampler(range(case["n"]), num_replicas=case["replicas"],
                               rank=case["rank"], shuffle=case["shuffle"], seed=case["seed"],
                               drop_last=case["drop_last"])
        s.set_epoch(case["epoch"])
        assert (list(s), len(s)) == (case["indices"], case["len"]), case
    with pytest.raises(ValueError, match="Invalid rank 3"):
        DistributedSampler(range(4), num_replicas=3, rank=3)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(4))


def test_weighted_random_sampler_draws_pytorchs_indices(recorded):
    for case in recorded("torch_runtime")["samplers"]["weighted"]:
        g = kg.Generator().manual_seed(123)
        s = WeightedRandomSampler(case["weights"], case["num_samples"], case["replacement"],
                                  generator=g)
        assert list(s) == case["indices"] and len(s) == case["num_samples"]
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        WeightedRandomSampler([1.0], 0)


def test_sampler_modules_resolve_as_in_pytorch():
    from kernelgraph.utils.data import dataloader, sampler
    assert sampler.SubsetRandomSampler is kg.utils.data.SubsetRandomSampler
    assert dataloader.default_collate is kg.utils.data.default_collate
    assert kg.utils.data.distributed.DistributedSampler is DistributedSampler
