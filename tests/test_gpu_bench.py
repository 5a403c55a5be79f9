"""Issue 22, eager side and benchmarks: the GPU rows of ``python -m kernelgraph.bench``
(one line without a GPU; their code checked against NumPy on tiny sizes on numba's CUDA
simulator), the lean eager dispatch on CUDA tensors, and optimiser state kept on the
parameters' device. Speed is never asserted here."""

import json

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.kernels.cuda.core  # noqa: F401 - for SIMULATOR
from kernelgraph import bench, devices
from kernelgraph.bench import gpu
from kernelgraph.eager import dispatch

CUDA = kg.cuda.is_available()
REAL_GPU = CUDA and not kg.kernels.cuda.core.SIMULATOR
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs CUDA or its simulator")


# -- the benchmark rows -------------------------------------------------------------------------
@pytest.mark.skipif(REAL_GPU, reason="on a GPU the rows run instead")
def test_without_a_gpu_the_rows_print_one_line(tmp_path, capsys):
    path = tmp_path / "bench.json"
    status = bench.main(["--rows", "gpu", "--quick", "--quiet", "--json", str(path),
                         "--frameworks", "kernelgraph"])
    assert status == 0
    doc = json.loads(path.read_text())
    assert doc["rows"] == [] and doc["gpu"]["rows"] == []
    reason = doc["gpu"]["skipped"]
    assert "GPU" in reason or "simulator" in reason
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "GPU rows" in line]
    assert lines == [gpu.skipped_line(reason)]
    assert "G1-G8b: not run, they need an NVIDIA GPU" in lines[0]


def test_row_selection_and_failure_flags():
    assert gpu.selected("gpu") == ("", True)
    assert gpu.selected("GPU, 11") == ("11", True)
    assert gpu.selected("11") == ("11", False)
    ok = {"us": 1.0, "check": "ok"}
    section = {"rows": [{"results": {"kernelgraph": ok, "torch": dict(ok, check="MISMATCH")}}]}
    assert gpu.failed(section) and not gpu.failed({"skipped": "x", "rows": []})
    assert not gpu.failed(None)
    text = gpu.describe({"skipped": None, "device": "a GPU", "rows": [
        {"id": "G9", "title": "t", "unit": "us", "results": {"kernelgraph": ok, "torch": ok},
         "ratios": {"torch": 1.0}, "target": "<= 1x torch", "pass": True}]})
    assert text[0].startswith("GPU rows on a GPU") and "1.00x" in text[1] and "pass" in text[1]


def _loss64(params, x, labels, logits_of):
    z = logits_of(params, x)
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -logp[np.arange(len(labels)), labels].mean()


def _cnn_logits64(params, x):
    w1, b1, w2, b2, w3, b3 = params
    h = x
    for w, b in ((w1, b1), (w2, b2)):
        h, _ = gpu._conv64(h, w, b)
        h, _ = gpu._pool64(np.maximum(h, 0.0))
    return h.reshape(h.shape[0], -1) @ w3 + b3


def _mlp_logits64(params, x):
    return gpu._mlp_logits(np.matmul, lambda v: np.maximum(v, 0.0), x, params)


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_the_numpy_steps_follow_finite_differences(model):
    """The float64 references the rows are checked against: their SGD step is
    params - lr * gradient, the gradient checked here by central differences."""
    sizes = gpu.TINY
    if model == "mlp":
        x, labels, params = gpu.mlp_data(sizes, 3)
        loss, after = gpu.mlp_reference(sizes, 3)
        lr, logits_of = gpu.LR_MLP, _mlp_logits64
    else:
        x, labels, params = gpu.cnn_data(sizes)
        loss, after = gpu.cnn_reference(sizes)
        lr, logits_of = gpu.LR_CNN, _cnn_logits64
    params = [p.astype(np.float64) for p in params]
    x = x.astype(np.float64)
    assert np.isclose(loss, _loss64(params, x, labels, logits_of))
    rng = np.random.default_rng(0)
    eps = 1e-6
    for k, p in enumerate(params):
        grad = (p - after[k]) / lr
        for index in map(tuple, rng.integers(0, p.shape, size=(3, p.ndim))):
            bumped = [q.copy() for q in params]
            bumped[k][index] += eps
            up = _loss64(bumped, x, labels, logits_of)
            bumped[k][index] -= 2 * eps
            down = _loss64(bumped, x, labels, logits_of)
            assert np.isclose(grad[index], (up - down) / (2 * eps), rtol=1e-4, atol=1e-7), \
                (k, index)


def test_the_rows_code_matches_numpy_on_the_cpu():
    assert gpu.check_rows(kg, device="cpu") == {row.id: None for row in gpu.ROWS}


@needs_cuda
def test_the_rows_code_matches_numpy_on_cuda():
    # G3 and G4 run G1 and G2's code at the other batch size: skipped for the simulator's sake.
    ids = ("G1", "G2", "G5", "G6", "G7", "G8a", "G8b")
    assert gpu.check_rows(kg, gpu.TINY, "cuda", ids) == dict.fromkeys(ids)


# -- eager dispatch on the GPU ------------------------------------------------------------------
@needs_cuda
def test_gpu_ops_skip_the_device_lookup_once_warm(monkeypatch):
    x0 = np.arange(6, dtype=np.float32).reshape(2, 3)
    a, b = kg.tensor(x0, device="cuda"), kg.tensor(x0 + 1, device="cuda")
    expected = np.exp(x0) * (x0 + 1) + 2.0
    assert np.allclose((kg.exp(a) * b + 2.0).cpu().numpy(), expected)  # warms the kernels

    def no_lookup(op, values):
        raise AssertionError(f"device looked up again for '{op.name}'")

    monkeypatch.setattr(devices, "device_of_values", no_lookup)
    y = kg.exp(a) * b + 2.0
    assert y.device == "cuda:0"
    assert np.array_equal(y.cpu().numpy(), (kg.exp(a) * b + 2.0).cpu().numpy())
    # a CPU operand leaves the fast path: the checked path names both devices
    monkeypatch.undo()
    with pytest.raises(kg.DeviceError, match="cpu and cuda:0|cuda:0 and cpu"):
        kg.mul(a, kg.tensor(x0))
    with pytest.raises(kg.DeviceError, match="two devices"):
        kg.add(kg.tensor(x0), b)


@needs_cuda
def test_gpu_ops_record_gradients_as_before():
    w0 = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
    results = {}
    for device in ("cpu", "cuda"):
        w = kg.tensor(w0, device=device, requires_grad=True)
        (kg.tanh(w) * w).sum().backward()
        results[device] = w.grad.cpu().numpy()
    assert np.allclose(results["cuda"], results["cpu"], rtol=1e-6)
    assert np.allclose(results["cpu"], np.tanh(w0) + w0 * (1 - np.tanh(w0) ** 2), rtol=1e-6)


def test_cpu_ops_take_the_checked_path_unchanged():
    a = kg.tensor([1.0, 2.0], requires_grad=True)
    y = kg.mul(a, [3.0, 4.0])
    assert y.tolist() == [3.0, 8.0] and y.requires_grad
    assert dispatch.apply(kg.ops.add, (1.0, 2.0), {}).tolist() == 3.0


# -- optimiser state where the parameters are ----------------------------------------------------
def _train(device, optimizer, steps=3, move_to=None):
    kg.random.seed(0)
    model = kg.nn.Linear(3, 2).to(device)
    opt = optimizer(model.parameters())
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    for step in range(steps):
        if move_to is not None and step == 1:
            model.to(move_to)
            device = move_to
        opt.zero_grad()
        loss = kg.nn.MSELoss()(model(kg.tensor(x, device=device)), kg.zeros(4, 2, device=device))
        loss.backward()
        opt.step()
    return model, opt


OPTIMIZERS = {
    "sgd_momentum": lambda p: kg.optim.SGD(p, lr=0.1, momentum=0.9),
    "adam": lambda p: kg.optim.Adam(p, lr=0.1),
}


@needs_cuda
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_state_lives_on_the_gpu(name):
    cpu_model, _ = _train("cpu", OPTIMIZERS[name])
    model, opt = _train("cuda", OPTIMIZERS[name])
    for p in model.parameters():
        state = opt.state[p]
        assert state and all(v.device == "cuda:0" for v in state.values()), state
    for k, v in cpu_model.state_dict().items():
        np.testing.assert_allclose(model.state_dict()[k], v, rtol=1e-5, atol=1e-6)
    saved = opt.state_dict()  # the state comes back to the host as NumPy arrays
    assert all(isinstance(a, np.ndarray) for s in saved["state"].values() for a in s.values())
    opt.load_state_dict(saved)
    assert all(v.device == "cuda:0" for s in opt.state.values() for v in s.values())


@needs_cuda
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_gpu_step_never_copies_through_the_host(name, monkeypatch):
    model, opt = _train("cuda", OPTIMIZERS[name], steps=1)
    loss = model(kg.ones(2, 3, device="cuda")).sum()
    loss.backward()
    before = [p.detach().cpu().numpy() for p in model.parameters()]

    def no_host_copy(x):
        raise AssertionError("a GPU parameter's update went through the host")

    monkeypatch.setattr(devices, "to_numpy", no_host_copy)
    opt.step()
    monkeypatch.undo()
    after = [p.detach().cpu().numpy() for p in model.parameters()]
    assert all(p.device == "cuda:0" for p in model.parameters())
    assert not any(np.array_equal(a, b) for a, b in zip(before, after))


@needs_cuda
def test_optimizer_state_follows_a_moved_model():
    cpu_model, _ = _train("cpu", OPTIMIZERS["sgd_momentum"])
    model, opt = _train("cuda", OPTIMIZERS["sgd_momentum"], move_to="cpu")
    buffers = [opt.state[p]["momentum_buffer"] for p in model.parameters()]
    assert all(b.device == "cpu" for b in buffers)
    for k, v in cpu_model.state_dict().items():
        np.testing.assert_allclose(model.state_dict()[k], v, rtol=1e-5, atol=1e-6)


@needs_cuda
def test_static_slots_and_updates_sit_with_their_variable():
    w0 = np.array([1.0, -2.0, 0.5], np.float32)
    results = {}
    for device in ("cpu", "cuda"):
        g = kg.Graph()
        with g.as_default():
            with kg.device(device):
                w = kg.Variable(w0, name="w")
                loss = kg.reduce_sum(w * w)
            opt = kg.optim.Adam([w], lr=0.1)
            train = opt.minimize(loss)  # outside the device scope: the slots follow w
            init = kg.global_variables_initializer()
        for slot in ("step", "exp_avg", "exp_avg_sq"):
            assert opt.get_slot(w, slot).device == device
        assigns = [n for n in g.nodes if n.op.name in ("assign", "assign_sub")]
        assert assigns and all(n.device == device for n in assigns)
        with kg.Session(g) as sess:
            sess.run(init)
            for _ in range(3):
                sess.run(train)
            results[device] = sess.run(w)
    np.testing.assert_allclose(results["cuda"], results["cpu"], rtol=1e-6)
