"""``torch.amp``, ``torch.compile``, ``torch.profiler``, ``torch.multiprocessing`` and
``torch.futures`` on kernelgraph (PyTorch's recorded behaviour where it defines one:
tests/recorded/record_torch_runtime.py)."""

from __future__ import annotations

import json
import threading
import time
import warnings

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.multiprocessing as mp
from kernelgraph.futures import Future, collect_all, wait_all


@pytest.fixture(scope="module")
def want(recorded):
    return recorded("torch_runtime")["amp_compile"]


# -- amp ---------------------------------------------------------------------------------------
def test_grad_scaler_disabled_is_the_identity(want):
    s = kg.amp.GradScaler("cpu", enabled=False)
    got = {"scale": s.get_scale(), "state_dict": s.state_dict(),
           "scaled": s.scale(kg.tensor(3.0)).item(), "enabled": s.is_enabled()}
    assert got == want["disabled"]
    w = kg.tensor([1.0, -2.0], requires_grad=True)
    opt = kg.optim.SGD([w], lr=0.1)
    loss = (w * w).sum()
    assert s.scale(loss) is loss
    loss.backward()
    s.step(opt)
    s.update()
    assert w.tolist() == pytest.approx([0.8, -1.6])


def test_grad_scaler_scales_skips_and_adjusts_as_pytorch(want):
    w = kg.tensor([1.0, -2.0], requires_grad=True)
    opt = kg.optim.SGD([w], lr=0.1)
    s = kg.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    for k, expect in enumerate(want["enabled"]):
        opt.zero_grad()
        loss = (w * w).sum() * (float("inf") if k == 1 else 1.0)
        s.scale(loss).backward()
        s.step(opt)
        s.update()
        np.testing.assert_allclose(w.tolist(), expect["w"], rtol=1e-6)
        assert s.get_scale() == expect["scale"]


def test_autocast_is_honest_about_what_it_can_compute(want):
    def enter(cm):
        with cm:
            return "entered"
    assert {"value": enter(kg.autocast("cpu", enabled=False))} == want["autocast_disabled"]
    assert {"value": enter(kg.amp.autocast("cpu", dtype=kg.float32))} == \
        want["autocast_float32"]
    with kg.autocast("cuda", enabled=False):
        y = kg.ones(2, 2) @ kg.ones(2, 2)
    assert y.dtype == kg.float32
    with pytest.raises(RuntimeError, match="cannot run ops in bfloat16"):
        kg.autocast("cpu")
    with pytest.raises(RuntimeError, match="cannot run ops in float16"):
        kg.amp.autocast("cuda", dtype=kg.float16)
    with pytest.raises(RuntimeError, match="unsupported autocast device_type"):
        kg.autocast("mps")


# -- compile -----------------------------------------------------------------------------------
def test_compile_runs_the_module_through_kg_function(want):
    kg.manual_seed(0)
    net = kg.nn.Sequential(kg.nn.Linear(3, 4), kg.nn.Tanh(), kg.nn.Linear(4, 1))
    fast = kg.compile(net)
    assert list(kg.compile(kg.nn.Linear(3, 2)).state_dict()) == \
        want["compile"]["state_dict_keys"]
    assert isinstance(fast._orig_mod, kg.nn.Sequential) and fast._orig_mod is net
    x = kg.linspace(-1.0, 1.0, 6).reshape(2, 3)
    for _ in range(3):  # the first call traces, the others run the compiled plan
        assert kg.allclose(fast(x), net(x), rtol=1e-6, atol=1e-7)
    fn = next(iter(fast._compiled.values()))
    assert fn.trace_count == 1
    fast(x).sum().backward()
    compiled_grads = [p.grad.tolist() for p in net.parameters()]
    net.zero_grad()
    net(x).sum().backward()
    for g, e in zip(compiled_grads, [p.grad.tolist() for p in net.parameters()], strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)


def test_compile_keeps_train_and_eval_apart():
    kg.manual_seed(0)
    net = kg.nn.Sequential(kg.nn.Linear(3, 3), kg.nn.Dropout(0.5))
    fast = kg.compile(net)
    x = kg.ones(4, 3)
    fast.train()
    fast(x)
    fast.eval()
    assert not net.training
    assert kg.allclose(fast(x), net(x))  # eval: no dropout, whatever the training trace did
    assert len(fast._compiled) == 2


def test_compile_forwards_attributes_and_decorates():
    lin = kg.nn.Linear(3, 2)
    assert kg.compile(lin).in_features == 3
    assert kg.compile(lin, disable=True) is lin

    @kg.compile
    def f(x):
        return kg.relu(x) * 2.0
    assert f(kg.tensor([-1.0, 2.0])).tolist() == [0.0, 4.0]

    @kg.compile(fullgraph=False)
    def g(x):
        return x + 1.0
    assert g(kg.tensor([1.0])).tolist() == [2.0]


def test_compile_with_python_branches_on_values():
    class Branchy(kg.nn.Module):
        def forward(self, x):
            return x * 2 if float(x.sum()) > 0 else x * 3

    m = kg.compile(Branchy(), fullgraph=True)
    with pytest.raises(kg.errors.TraceError):
        m(kg.ones(2))
    m = kg.compile(Branchy())
    with pytest.warns(kg.errors.TraceWarning):
        assert m(kg.ones(2)).tolist() == [2.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert m(-kg.ones(2)).tolist() == [-3.0, -3.0]
        assert m(kg.ones(2)).tolist() == [2.0, 2.0]


def test_compile_refuses_what_no_trace_can_hold():
    class StepsInside(kg.nn.Module):  # calls backward() inside forward
        def __init__(self):
            super().__init__()
            self.w = kg.nn.Parameter(kg.ones(2))

        def forward(self, x):
            (self.w * x).sum().backward()
            return self.w.grad * 1.0

    with pytest.raises(kg.errors.TraceError, match="backward"):
        kg.compile(StepsInside())(kg.tensor([3.0, 4.0]))


# -- profiler ----------------------------------------------------------------------------------
def test_profiler_records_measured_op_times():
    net = kg.nn.Linear(8, 4)
    x = kg.ones(16, 8)
    seen = []
    with kg.trace.listening(lambda kind, node=None, seconds=None, **i: seen.append(
            (node.op.name, seconds)) if kind == "node_executed" else None):
        with kg.profiler.profile(activities=[kg.profiler.ProfilerActivity.CPU],
                                 record_shapes=True) as prof:
            with kg.profiler.record_function("model_inference"):
                for _ in range(3):
                    net(x).relu()
    rows = {r.key: r for r in prof.key_averages()}
    assert "model_inference" in rows and rows["model_inference"].count == 1
    ops = [name for name, _ in seen]
    for name in set(ops):
        assert rows[name].count == ops.count(name)
        total = sum(s for n, s in seen if n == name) * 1e6
        assert rows[name].cpu_time_total == pytest.approx(total)
    r = rows["model_inference"]
    assert r.cpu_time_total >= sum(s for _, s in seen) * 1e6
    assert r.self_cpu_time_total == pytest.approx(r.cpu_time_total - sum(s for _, s in seen)
                                                  * 1e6)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=3)
    lines = table.splitlines()
    assert "Name" in lines[1] and "Self CPU %" in lines[1] and "# of Calls" in lines[1]
    assert lines[3].split()[0] == "model_inference"  # the largest total comes first
    assert len(lines) == 3 + 3 + 2 and lines[-1].startswith("Self CPU time total:")
    shaped = prof.key_averages(group_by_input_shape=True)
    assert any(r.input_shapes for r in shaped)
    assert not kg.trace._listeners or kg.trace._listeners == []  # the listener is gone


def test_autograd_profiler_is_the_same_profiler(tmp_path):
    from kernelgraph.autograd.profiler import profile, record_function
    with profile(use_cuda=False) as prof, record_function("step"):
        kg.ones(3) + kg.ones(3)
    keys = [r.key for r in prof.key_averages()]
    assert keys[0] == "step" and "add" in keys

    @record_function("helper")
    def helper():
        return kg.ones(2) * 2.0
    with profile() as prof2:
        helper()
        helper()
    assert {r.key: r.count for r in prof2.key_averages()} == {"helper": 2, "mul": 2}
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert {e["name"] for e in events} == set(keys)
    assert "step" in prof.table()
    with kg.profiler.profile(on_trace_ready=kg.profiler.tensorboard_trace_handler(
            str(tmp_path / "tb"), worker_name="w0")):
        kg.ones(2) * 3.0
    (written,) = (tmp_path / "tb").iterdir()
    assert written.name.startswith("w0.") and written.name.endswith(".pt.trace.json")
    assert [e["name"] for e in json.loads(written.read_text())["traceEvents"]] == ["mul"]


# -- multiprocessing and futures ---------------------------------------------------------------
def _child(i, path, fail_at):
    if i == fail_at:
        raise ValueError(f"child {i} failed on purpose")
    with open(f"{path}.{i}", "w") as f:
        f.write(str(i * i))


def test_spawn_runs_every_process_and_reports_a_failure(tmp_path):
    base = str(tmp_path / "out")
    mp.spawn(_child, args=(base, -1), nprocs=2)
    assert [open(f"{base}.{i}").read() for i in range(2)] == ["0", "1"]
    with pytest.raises(mp.ProcessRaisedException, match="child 1 failed on purpose"):
        mp.spawn(_child, args=(base, 1), nprocs=2)
    ctx = mp.spawn(_child, args=(base + "b", -1), nprocs=1, join=False)
    assert ctx.join() and len(ctx.pids()) == 1
    assert mp.Process is __import__("multiprocessing").Process


def test_futures():
    f = Future()
    doubled = f.then(lambda fut: fut.value() * 2)
    threading.Thread(target=lambda: (time.sleep(0.05), f.set_result(5))).start()
    assert doubled.wait() == 10 and f.done()
    assert wait_all([f, doubled]) == [5, 10]
    assert collect_all([f, doubled]).wait() == [f, doubled]
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        f.set_result(1)
    bad = Future()
    after = bad.then(lambda fut: fut.value())
    bad.set_exception(KeyError("x"))
    with pytest.raises(KeyError):
        after.wait()
