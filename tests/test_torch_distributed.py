"""``torch.distributed``'s process group and ``nn.parallel.DistributedDataParallel`` on
kernelgraph: real processes meeting over TCP on this machine."""

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
import kernelgraph.distributed as dist

ROOT = Path(__file__).resolve().parents[1]

X = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(8, 3)
Y = (X @ np.array([[0.5], [-1.0], [2.0]], np.float32) + 0.25).astype(np.float32)

_WORKER = r"""
import json, os, sys
import numpy as np
import kernelgraph as kg
import kernelgraph.distributed as dist

X = np.array(json.loads(sys.argv[1]), np.float32)
Y = np.array(json.loads(sys.argv[2]), np.float32)
mode = sys.argv[3]
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
out = {"rank": rank, "world": world, "backend": dist.get_backend(),
       "initialized": dist.is_initialized()}
if mode == "collectives":
    t = kg.tensor([1.0, 2.0, 3.0]) * (rank + 1)
    dist.all_reduce(t)
    out["sum"] = t.tolist()
    t = kg.tensor([float(rank), -float(rank)])
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    out["max"] = t.tolist()
    t = kg.tensor([float(rank + 1)])
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    out["avg"] = t.tolist()
    t = kg.tensor([rank, rank * 10])
    dist.all_reduce(t, op=dist.ReduceOp.PRODUCT)
    out["product"] = [t.tolist(), str(t.dtype)]
    t = kg.full((2, 2), float(rank))
    w = dist.broadcast(t, src=world - 1, async_op=True)
    out["broadcast"] = [t.tolist(), w.wait()]
    parts = [kg.zeros(2) for _ in range(world)]
    dist.all_gather(parts, kg.tensor([rank, rank + 0.5]))
    out["gather"] = [p.tolist() for p in parts]
    dist.barrier()
    if mode == "collectives" and os.environ.get("KG_TEST_MISMATCH"):
        try:
            if rank == 0:
                dist.all_reduce(kg.zeros(3))
            else:
                dist.broadcast(kg.zeros(2), 0)
        except RuntimeError as e:
            out["mismatch"] = str(e)
else:
    kg.manual_seed(rank)  # different starting weights: DDP must broadcast rank 0's
    model = kg.nn.Linear(3, 1)
    ddp = kg.nn.parallel.DistributedDataParallel(model)
    opt = kg.optim.SGD(ddp.parameters(), lr=0.1)
    n = len(X) // world
    x, y = kg.tensor(X[rank * n:(rank + 1) * n]), kg.tensor(Y[rank * n:(rank + 1) * n])
    for step in range(5):
        opt.zero_grad()
        if mode == "no_sync" and step == 2:
            with ddp.no_sync():
                kg.nn.functional.mse_loss(ddp(x), y).backward()
        kg.nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()
    out["keys"] = list(ddp.state_dict())
    out["weight"] = model.weight.tolist()
    out["bias"] = model.bias.tolist()
dist.destroy_process_group()
out["after"] = dist.is_initialized()
print("RESULT " + json.dumps(out))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(world: int, mode: str, extra_env=None) -> list[dict]:
    port = _free_port()
    procs = []
    for rank in range(world):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MASTER_ADDR": "127.0.0.1",
               "MASTER_PORT": str(port), "RANK": str(rank), "WORLD_SIZE": str(world),
               **(extra_env or {})}
        procs.append(subprocess.Popen(
            [sys.executable, "-c", _WORKER, json.dumps(X.tolist()), json.dumps(Y.tolist()),
             mode], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True))
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:] + out[-2000:]
        line = [ln for ln in out.splitlines() if ln.startswith("RESULT ")][-1]
        results.append(json.loads(line.removeprefix("RESULT ")))
    return sorted(results, key=lambda r: r["rank"])


def test_collectives_between_three_processes():
    r = _run(3, "collectives", {"KG_TEST_MISMATCH": "1"})
    assert [x["rank"] for x in r] == [0, 1, 2] and all(x["world"] == 3 for x in r)
    for x in r:
        assert x["backend"] == "gloo" and x["initialized"] and not x["after"]
        assert x["sum"] == [6.0, 12.0, 18.0]
        assert x["max"] == [2.0, 0.0]
        assert x["avg"] == [2.0]
        assert x["product"] == [[0, 0], "int64"]
        assert x["broadcast"] == [[[2.0, 2.0], [2.0, 2.0]], True]
        assert x["gather"] == [[0.0, 0.5], [1.0, 1.5], [2.0, 2.5]]
        assert "collectives out of step" in x["mismatch"]


def _single_process(steps: int, no_sync_step: int | None = None):
    kg.manual_seed(0)
    model = kg.nn.Linear(3, 1)
    opt = kg.optim.SGD(model.parameters(), lr=0.1)
    x, y = kg.tensor(X), kg.tensor(Y)
    for step in range(steps):
        opt.zero_grad()
        if step == no_sync_step:  # the no_sync() backward: each half's gradient, summed
            for half in (slice(0, 4), slice(4, 8)):
                (kg.nn.functional.mse_loss(model(x[half]), y[half]) / 2).backward()
        kg.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return model.weight.tolist(), model.bias.tolist()


def test_ddp_on_two_processes_trains_as_one_process_on_the_whole_batch():
    r = _run(2, "train")
    weight, bias = _single_process(5)
    for x in r:
        assert x["keys"] == ["module.weight", "module.bias"]
        np.testing.assert_allclose(x["weight"], weight, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(x["bias"], bias, rtol=1e-5, atol=1e-6)
    assert r[0]["weight"] == r[1]["weight"] and r[0]["bias"] == r[1]["bias"]


def test_ddp_no_sync_gradients_are_averaged_by_the_next_backward():
    r = _run(2, "no_sync")
    weight, bias = _single_process(5, no_sync_step=2)
    for x in r:
        np.testing.assert_allclose(x["weight"], weight, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(x["bias"], bias, rtol=1e-5, atol=1e-6)


def _tutorial_worker(rank, world_size, port, out):
    # PyTorch's "Writing Distributed Applications" tutorial: spawn, env://, all_reduce
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "localhost", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    t = kg.ones(1) * (rank + 1)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    with open(f"{out}.{rank}", "w") as f:
        json.dump({"rank": dist.get_rank(), "value": t.tolist()}, f)
    dist.destroy_process_group()


def test_spawned_processes_meet_as_in_pytorchs_tutorial(tmp_path):
    import kernelgraph.multiprocessing as mp
    out = str(tmp_path / "r")
    mp.spawn(_tutorial_worker, args=(2, _free_port(), out), nprocs=2, join=True)
    got = [json.loads(Path(f"{out}.{r}").read_text()) for r in range(2)]
    assert got == [{"rank": 0, "value": [3.0]}, {"rank": 1, "value": [3.0]}]


def test_a_single_process_group_and_its_errors(monkeypatch):
    assert dist.is_available() and not dist.is_initialized()
    assert dist.get_default_backend_for_device("cpu") == "gloo"
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        kg.nn.parallel.DistributedDataParallel(kg.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="'gloo'"):
        dist.init_process_group("nccl")
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    with pytest.raises(ValueError, match="MASTER_ADDR expected"):
        dist.init_process_group("gloo")
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{_free_port()}",
                            rank=0, world_size=1)
    try:
        assert (dist.get_rank(), dist.get_world_size()) == (0, 1)
        t = kg.tensor([1.0, 2.0])
        dist.all_reduce(t)
        assert t.tolist() == [1.0, 2.0]
        with pytest.raises(ValueError, match="twice"):
            dist.init_process_group("gloo")
    finally:
        dist.destroy_process_group()


def test_a_missing_rank_times_out_with_a_clear_error():
    import datetime
    address = f"tcp://127.0.0.1:{_free_port()}"
    with pytest.raises(TimeoutError, match="waiting for 1 more rank"):
        dist.init_process_group("gloo", init_method=address, rank=0, world_size=2,
                                timeout=datetime.timedelta(seconds=1))
    assert not dist.is_initialized()
    dist.init_process_group("gloo", init_method=address, rank=0, world_size=1)  # port freed
    dist.destroy_process_group()
