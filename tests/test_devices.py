"""Devices: names, eager transfers and errors, static placement with visible transfer nodes.

Runs on numba's CUDA simulator when this machine has no GPU (see ../conftest.py); the op
by op checks on CUDA live in test_ops.py (:func:`tests.test_ops.check_on_cuda`).
"""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.devices import DeviceError

CUDA = kg.device("cuda")


# -- names -----------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, name", [
    ("cpu", "cpu"), ("CPU:0", "cpu"), ("cuda", "cuda:0"), ("cuda:1", "cuda:1"),
    ("gpu", "cuda:0"), ("/gpu:0", "cuda:0"), ("/device:GPU:0", "cuda:0"),
    ("/cpu:0", "cpu"), ("worker:1/cuda:0", "worker:1/cuda:0"),
    ("/job:worker/task:1/device:GPU:0", "worker:1/cuda:0"), ("ps:0/cpu", "ps:0/cpu"),
])
def test_device_names(spec, name):
    d = kg.device(spec)
    assert d.name == name and str(d) == name and d == name and d == kg.device(name)
    assert repr(d) == f"device('{name}')"
    assert d.is_local == ("/" not in name)


@pytest.mark.parametrize("spec", ["tpu", "cuda:x", "", "cuda:0:1", "a b/cuda"])
def test_bad_device_names(spec):
    with pytest.raises(ValueError, match="unknown device"):
        kg.device(spec)
    with pytest.raises(TypeError, match="device name"):
        kg.device(3)


def test_device_scope_nests_and_restores():
    assert kg.devices.current() is None
    with kg.device("cuda") as outer:
        assert kg.devices.current() is outer
        with kg.device("cpu"):
            assert kg.devices.current() == "cpu"
        assert kg.devices.current() is outer
    assert kg.devices.current() is None


def test_cuda_namespace():
    assert kg.cuda.is_available() is True
    assert kg.cuda.device_count() >= 1
    kg.cuda.synchronize()


# -- eager -----------------------------------------------------------------------------------
def test_to_cuda_and_back_keeps_values_and_records_the_copy():
    x = kg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert x.device == "cpu" and not x.is_cuda
    y = x.to("cuda")
    assert y.device == CUDA and y.is_cuda and kg.devices.is_cuda_array(y._array)
    assert y.grad_fn.op.name == "to_device" and y.shape == (2, 2) and y.dtype == kg.float32
    z = (y * y).sum()
    assert z.device == CUDA
    z.backward()
    # The gradient came back through the transfer to the CPU leaf.
    assert type(x.grad._array) is np.ndarray
    np.testing.assert_array_equal(x.grad.numpy(), 2 * x.detach().numpy())
    back = y.cpu()
    assert back.device == "cpu"
    np.testing.assert_array_equal(back.detach().numpy(), x.detach().numpy())
    assert x.to("cpu") is x and y.cuda() is y  # no copy when already there


def test_to_takes_device_and_dtype_like_pytorch():
    x = kg.tensor([1, 2, 3])
    y = x.to("cuda", kg.float64)
    assert y.device == CUDA and y.dtype == kg.float64
    assert x.to(kg.float32).device == "cpu"
    assert x.to(device="cuda").device == CUDA
    assert x.cuda(0).device == CUDA
    assert x.to("float64").dtype == kg.float64
    with pytest.raises(TypeError, match=r"a device \('cpu', 'cuda', 'cuda:0'\) or a dtype"):
        x.to("tpu")


def test_gradients_of_cuda_leaves_stay_on_cuda_and_accumulate():
    grads = {}
    for where in ("cpu", "cuda"):
        w = kg.tensor(np.arange(6.0).reshape(2, 3) - 2, requires_grad=True, device=where)
        x = kg.tensor(np.ones((4, 2)), device=where)
        kg.relu(x @ w).mean().backward()
        kg.relu(x @ w).mean().backward()  # accumulates into .grad on the same device
        assert w.grad.device == where
        grads[where] = w.grad.cpu().numpy()
    np.testing.assert_allclose(grads["cuda"], grads["cpu"], rtol=1e-12)
    assert grads["cpu"][0, 2] == pytest.approx(2 * 4 / 12)


def test_mixing_devices_names_both():
    a = kg.tensor([1.0, 2.0])
    b = kg.tensor([1.0, 2.0], device="cuda")
    with pytest.raises(DeviceError, match=r"two devices, cuda:0 and cpu.*'add'"):
        b + a
    with pytest.raises(DeviceError, match=r"cpu and cuda:0.*'matmul'"):
        kg.matmul(a.reshape(1, 2), b.reshape(2, 1))
    with pytest.raises(DeviceError, match="two devices"):
        b * np.ones(2, np.float32)  # a NumPy array is a CPU value
    assert (b * 2.0).device == CUDA  # Python numbers go anywhere


def test_cuda_tensor_refuses_silent_host_copies():
    b = kg.tensor([1.0, 2.0], device="cuda")
    with pytest.raises(TypeError, match=r"cuda:0 device type tensor to numpy.*\.cpu\(\)"):
        b.numpy()
    with pytest.raises(TypeError, match="to numpy"):
        np.asarray(b)
    assert b.sum().item() == 3.0 and b.tolist() == [1.0, 2.0]  # explicit reads are fine
    assert repr(b) == "tensor([1., 2.], device='cuda:0')"


def test_factories_follow_the_device_scope():
    with kg.device("cuda"):
        made = [kg.tensor([1.0]), kg.zeros(2), kg.ones(2, 2), kg.arange(3),
                kg.random.normal((2, 2), seed=1), kg.random.uniform(3, seed=2)]
    assert all(t.device == CUDA for t in made)
    assert kg.tensor([1.0]).device == "cpu"
    assert kg.zeros(2, device="cuda").device == CUDA
    assert kg.tensor(kg.ones(2, device="cuda")).device == CUDA  # a copy stays put


def test_random_streams_match_across_devices():
    kg.random.seed(7)
    cpu = [kg.random.normal((3, 4)).numpy(), kg.dropout(kg.ones(8), 0.5).numpy()]
    kg.random.seed(7)
    gpu = [kg.random.normal((3, 4), device="cuda"),
           kg.dropout(kg.ones(8, device="cuda"), 0.5)]
    for c, g in zip(cpu, gpu):
        assert g.device == CUDA
        np.testing.assert_array_equal(g.cpu().numpy(), c)


def test_remote_workers_are_named_but_not_run():
    x = kg.tensor([1.0])
    with pytest.raises(DeviceError, match="remote worker"):
        x.to("worker:1/cuda:0")
    with pytest.raises(DeviceError, match="does not exist"):
        x.to("cuda:7")


# -- static ----------------------------------------------------------------------------------
def _mlp_graph():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, [None, 3], name="x")
        with kg.device("cuda"):
            w = kg.Variable(np.full((3, 2), 0.5, np.float32), name="w")
            h = kg.relu(kg.matmul(x, w))
        loss = kg.reduce_mean(h * h)  # no scope: follows its input onto the GPU
        (gw,) = kg.gradients(loss, [w])
        step = w.assign_sub(gw * 0.1)
    return g, x, w, h, loss, gw, step


def test_static_placement_inserts_one_visible_transfer():
    g, x, w, h, loss, gw, step = _mlp_graph()
    assert x.device == "cpu" and w.device == CUDA and h.device == CUDA
    assert loss.device == CUDA and gw.device == CUDA and step.device == CUDA
    transfers = [n for n in g.nodes if n.op.name == "to_device"]
    assert [(t.inputs[0].name, t.attrs["device"], t.name) for t in transfers] == [
        ("x", "cuda:0", "x/to_cuda")]
    # Both readers of x on the GPU (the matmul and its gradient) share the one copy.
    readers = [n for n in g.nodes if transfers[0] in n.inputs]
    assert len(readers) == 2
    assert all(n.device == CUDA for n in g.nodes if n.name.startswith("gradients/"))


def test_static_training_on_cuda_matches_cpu():
    feed = np.array([[1.0, -2.0, 3.0], [0.5, 0.5, 0.5]], np.float32)
    results = {}
    for where in ("cuda", "cpu"):
        g = kg.Graph()
        with g.as_default(), kg.device(where):
            x = kg.placeholder(kg.float32, [None, 3])
            w = kg.Variable(np.full((3, 2), 0.5, np.float32))
            loss = kg.reduce_mean(kg.relu(kg.matmul(x, w)) ** 2)
            (gw,) = kg.gradients(loss, [w])
            step = w.assign_sub(gw * 0.1)
            with kg.Session(g) as sess:
                sess.run(kg.global_variables_initializer())
                for _ in range(3):
                    sess.run(step, {x: feed})
                out = sess.run([loss, w], {x: feed})
        assert all(isinstance(v, np.ndarray | np.generic) for v in out)  # on the host
        results[where] = out
    np.testing.assert_allclose(results["cuda"][0], results["cpu"][0], rtol=1e-6)
    np.testing.assert_allclose(results["cuda"][1], results["cpu"][1], rtol=1e-6)


def test_plan_names_the_cuda_kernels_and_transfers():
    g, x, w, h, loss, gw, step = _mlp_graph()
    with g.as_default(), kg.Session(g) as sess:
        sess.run(kg.global_variables_initializer())
        source = sess.plan(h, {x: None}).source
        value = sess.run(h, {x: np.ones((2, 3), np.float32)})
    assert "_to_device_cuda(f0, device='cuda:0')" in source
    assert "_matmul_cuda(" in source and "_relu_cuda(" in source and "_host(" in source
    np.testing.assert_allclose(value, np.full((2, 2), 1.5))


def test_explicit_to_device_and_cpu_reader():
    g = kg.Graph()
    with g.as_default():
        a = kg.constant([1.0, 2.0])
        b = kg.to_device(a, "cuda")
        c = b * 3.0  # follows b onto the GPU
        with kg.device("cpu"):
            d = c + 1.0  # reads c through a transfer back
    assert b.device == CUDA and c.device == CUDA and d.device == "cpu"
    assert d.inputs[0].op.name == "to_device" and d.inputs[0].attrs["device"] == "cpu"
    with kg.Session(g) as sess:
        np.testing.assert_array_equal(sess.run(d), [4.0, 7.0])


def test_static_remote_placement_fails_at_run_naming_the_node():
    g = kg.Graph()
    with g.as_default():
        with kg.device("worker:1/cuda:0"):
            y = kg.constant(2.0) * 3.0
    assert y.device == "worker:1/cuda:0"
    with kg.Session(g) as sess, pytest.raises(DeviceError, match=r"node '.*'.*remote worker"):
        sess.run(y)


def test_every_op_has_a_cuda_kernel():
    from kernelgraph.ops import CUDA_KERNELS as FORWARDS
    from kernelgraph.static.variables import STATEFUL

    run_by_the_session = {op.name for op in STATEFUL} | {"const"}
    from kernelgraph.ops.control import HOST_OPS  # control flow: always placed on the host

    run_by_the_session |= HOST_OPS
    missing = [name for name, op in kg.ops.OPS.items() if name not in FORWARDS
               and name not in run_by_the_session and "host_only" not in op.traits]
    assert missing == []
    assert set(FORWARDS) <= set(kg.ops.OPS)
