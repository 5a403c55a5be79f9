"""PyTorch's nn, optim, nn.functional and utils.data as learners' code uses them, against
numbers recorded from torch 2.13 (tests/recorded/record_torch_nn.py: the same case code runs
on both), plus the static mode of the functional API and the module/optimizer/loader APIs."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.nn.functional as F
import kernelgraph.optim.lr_scheduler as sched
import kernelgraph.utils.data as data
from kernelgraph import nn
from tests.recorded.record_torch_nn import (
    ACTIVATIONS,
    CASES,
    LOGITS,
    LOSSES,
    OPTIMIZERS,
    W0,
    X0,
    namespaces,
)

T = namespaces(kg, nn, F, kg.optim, sched, data)


def assert_same(got, want, path="value"):
    """Recorded values: equal strings/bools/keys, numbers within float32 rounding."""
    if isinstance(want, dict):
        assert set(got) == set(want), path
        for k in want:
            assert_same(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, str | bool) or want is None:
        assert got == want, path
    elif isinstance(want, list) and want and not isinstance(want[0], int | float | list):
        assert got == want, path
    else:
        try:
            a, b = np.array(got, dtype=np.float64), np.array(want, dtype=np.float64)
        except ValueError:  # ragged (batches of different sizes)
            assert len(got) == len(want), path
            for k, (g, w) in enumerate(zip(got, want)):
                assert_same(g, w, f"{path}[{k}]")
            return
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=path)


@pytest.mark.parametrize("name", [n for n in CASES if not n.startswith("sched_")])
def test_matches_recorded_torch(name, recorded):
    assert_same(CASES[name](T), recorded("torch_nn")["cases"][name], name)


# -- nn.functional in static mode ---------------------------------------------------------------
def static_value(fn, *arrays):
    """``fn`` of placeholders fed with ``arrays``, run in a Session."""
    g = kg.Graph()
    with g.as_default():
        xs = [kg.placeholder(kg.dtypes.as_dtype(a.dtype), shape=a.shape) for a in arrays]
        y = fn(*xs)
        init = kg.global_variables_initializer()  # a module's parameters, if any
    with kg.Session(g) as sess:
        sess.run(init)
        return sess.run(y, dict(zip(xs, arrays)))


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations_in_both_modes(name):
    x = np.array(X0, np.float32)
    eager = ACTIVATIONS[name](F, kg.tensor(x)).numpy()
    np.testing.assert_allclose(static_value(lambda t: ACTIVATIONS[name](F, t), x), eager,
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["ce_mean", "ce_sum", "ce_weight", "ce_ignore_1", "ce_smooth",
                                  "ce_probs", "nll", "mse", "mse_none", "l1", "smooth_l1",
                                  "bce_logits", "bce_logits_pos"])
def test_losses_in_both_modes(name):
    x = np.array(LOGITS, np.float32)
    eager = LOSSES[name](T, kg.tensor(x)).numpy()
    np.testing.assert_allclose(static_value(lambda t: LOSSES[name](T, t), x), eager,
                               rtol=1e-6, atol=1e-7)


def test_conv_and_pool_in_both_modes():
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype(np.float32)

    def net(a, b):
        y = F.conv2d(a, b, padding="same")
        return F.avg_pool2d(F.max_pool2d(F.relu(y), 2), 3, stride=1, padding=1)

    eager = net(kg.tensor(x), kg.tensor(w)).numpy()
    np.testing.assert_allclose(static_value(net, x, w), eager, rtol=1e-5, atol=1e-6)


def test_normalization_in_a_graph():
    x = np.random.default_rng(0).standard_normal((4, 3, 5, 5)).astype(np.float32)
    bn = nn.BatchNorm2d(3)
    bn(kg.tensor(x))  # a training step: the running statistics move
    bn.eval()
    np.testing.assert_allclose(static_value(bn, x), bn(kg.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    bn.train()
    with pytest.raises(NotImplementedError, match="running statistics"):
        static_value(bn, x)
    ln = nn.LayerNorm(5)
    np.testing.assert_allclose(static_value(ln, x), ln(kg.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_functional_errors():
    with pytest.raises(TypeError, match="reduction='sum' by keyword"):
        nn.MSELoss("sum")
    with pytest.raises(ValueError, match="max is not a valid value for reduction"):
        F.mse_loss(kg.ones(2), kg.ones(2), reduction="max")
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.nll_loss(kg.zeros(2, 3), kg.tensor([0, 7]))
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(kg.tensor([1.5]), kg.tensor([1.0]))
    with pytest.raises(NotImplementedError, match="groups"):
        F.conv2d(kg.ones(1, 2, 3, 3), kg.ones(2, 1, 1, 1), groups=2)
    with pytest.raises(NotImplementedError, match="mode 'circular'"):
        F.pad(kg.ones(2, 2), (1, 1), mode="circular")
    with pytest.raises(ValueError, match="Expected input batch_size \\(2\\) to match target"):
        F.cross_entropy(kg.zeros(2, 3), kg.tensor([0, 1, 2]))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = F.softmax(kg.zeros(2, 4))
    assert y.tolist()[0] == [0.25] * 4
    with pytest.warns(UserWarning, match="different to the input size"):
        got = F.mse_loss(kg.zeros(3, 1), kg.tensor([1.0, 2.0, 3.0]))
    assert got.item() == pytest.approx(14 / 3)  # broadcast to (3, 3), as torch does


# -- Module ----------------------------------------------------------------------------------------
class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(kg.tensor([1.0, 2.0]))
        self.b = nn.Parameter(kg.zeros(2), requires_grad=False)
        self.plain = kg.ones(2)  # a tensor attribute: not a parameter
        self.register_buffer("count", kg.zeros(1))

    def forward(self, x):
        return x * self.w + self.b


def test_parameters_assigned_as_attributes_are_registered():
    m = Affine()
    assert [n for n, _ in m.named_parameters()] == ["w", "b"]
    assert isinstance(m.w, nn.Parameter) and not isinstance(m.plain, nn.Parameter)
    assert m.w.requires_grad and not m.b.requires_grad
    assert list(m.state_dict()) == ["w", "b", "count"]
    assert repr(m.w).startswith("Parameter containing:\ntensor([1., 2.]")
    m.w = nn.Parameter(kg.tensor([3.0, 4.0]))  # replaced
    assert m(kg.ones(2)).tolist() == [3.0, 4.0]
    del m.w
    assert [n for n, _ in m.named_parameters()] == ["b"]
    sd = m.state_dict()
    sd["count"] = np.array([5.0], np.float32)
    m.load_state_dict(sd)
    assert m.count.tolist() == [5.0]


def test_to_double_float_convert_in_place():
    net = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    net.register_buffer("steps", kg.zeros(1, dtype=kg.int64))
    weight = net[0].weight
    opt = kg.optim.SGD(net.parameters(), lr=0.1)
    assert net.double() is net and net[0].weight is weight
    assert weight.dtype == kg.float64 and net.steps.dtype == kg.int64  # ints keep their dtype
    before = weight.detach().numpy().copy()
    net(kg.ones(4, 3, dtype=kg.float64)).sum().backward()
    opt.step()  # the optimiser made before the cast updates the same tensor
    assert not np.array_equal(weight.detach().numpy(), before)
    assert net.to(kg.float32)[0].bias.dtype == kg.float32
    assert net.to("cpu") is net and net.cpu()[0].weight.device == kg.device("cpu")
    assert net.to(kg.zeros(1, dtype=kg.float64))[0].weight.dtype == kg.float64
    assert net.float()[0].weight.dtype == kg.float32
    with pytest.raises(TypeError, match="floating point dtypes"):
        net.to(kg.int64)
    if not kg.cuda.is_available():
        with pytest.raises(kg.DeviceError, match="not available"):
            net.cuda()
    else:
        assert net.cuda()[0].weight.device == kg.device("cuda:0") and net[0].weight is weight


def test_modules_children_apply_and_requires_grad():
    net = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Sequential(nn.Linear(2, 1)))
    assert [n for n, _ in net.named_modules()] == ["", "0", "1", "2", "2.0"]
    assert [n for n, _ in net.named_children()] == ["0", "1", "2"]
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Sequential", "Sequential"]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    shared = nn.Linear(2, 2)
    twice = nn.Sequential(shared, shared)
    assert len(list(twice.parameters())) == 2  # a shared layer's parameters once
    assert net.get_submodule("2.0") is net[2][0]


def test_containers():
    layers = nn.ModuleList([nn.Linear(2, 2)])
    layers.append(nn.ReLU())
    layers += [nn.Tanh()]
    layers.insert(0, nn.Identity())
    assert [type(m).__name__ for m in layers] == ["Identity", "Linear", "ReLU", "Tanh"]
    assert type(layers[-1]).__name__ == "Tanh" and len(layers[1:]) == 3
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq[:2]) == 2 and type(seq[-1]).__name__ == "Linear"
    del seq[1]
    assert len(seq) == 2 and [n for n, _ in seq.named_parameters()][2] == "2.weight"
    d = nn.ModuleDict({"a": nn.ReLU()})
    d["b"] = nn.Tanh()
    assert list(d) == ["a", "b"] and "b" in d
    params = nn.ParameterList([kg.ones(2)])
    assert isinstance(params[0], nn.Parameter)
    with pytest.raises(TypeError, match="expected a kg.nn.Module"):
        nn.Sequential(nn.ReLU(), 3)
    with pytest.raises(IndexError):
        seq[5]


def test_static_mode_module_with_registered_parameters():
    kg.manual_seed(0)
    m = Affine()
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[2])
        y = m(x)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        assert sess.run(y, {x: [1.0, 1.0]}).tolist() == [1.0, 2.0]


# -- optimizers ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sgd_dampening", "adam_wd_amsgrad", "adamw", "rmsprop_all",
                                  "adagrad_all", "adadelta_all"])
def test_optimizers_in_static_mode_match_torch(name, recorded):
    cls, kwargs = OPTIMIZERS[name]
    g = kg.Graph()
    with g.as_default():
        w = kg.Variable(np.array(W0, np.float32))
        c = kg.constant(np.array([[1.0, -0.5, 0.25], [0.0, 2.0, -1.0]], np.float32))
        loss = kg.sum(w * w * w) / 3 + kg.sum(w * c)
        train = getattr(kg.optim, cls)([w], **kwargs).minimize(loss)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        got = []
        for _ in range(6):
            sess.run(train)
            got.append(sess.run(w).tolist())
    assert_same(got, recorded("torch_nn")["cases"][f"optim_{name}"])


def test_optimizer_param_groups_and_state():
    a, b = kg.zeros(2).requires_grad_(), kg.ones(1).requires_grad_()
    opt = kg.optim.Adam([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["betas"] == (0.9, 0.999)
    ((a + 1) ** 2).sum().backward()
    (b * 3).sum().backward()
    opt.step()
    assert opt.state[a]["step"].item() == 1 and b in opt.state
    assert a.tolist() == pytest.approx([-0.1, -0.1]) and b.tolist() == pytest.approx([0.5])
    sd = opt.state_dict()
    assert sd["param_groups"][1]["params"] == [1] and set(sd["state"]) == {0, 1}
    with pytest.raises(ValueError, match="more than one parameter group"):
        kg.optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)
    with pytest.raises(TypeError, match="unknown hyperparameter"):
        kg.optim.SGD([{"params": [a], "lrr": 1.0}], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        kg.optim.RMSprop([a], lr=-1.0)


def test_optimizer_accepts_a_parameters_generator():
    net = nn.Linear(2, 1)
    opt = kg.optim.RMSprop(net.parameters(), lr=0.01)
    assert len(opt.param_groups[0]["params"]) == 2
    assert "RMSprop (" in repr(opt) and "lr: 0.01" in repr(opt)


# -- devices ---------------------------------------------------------------------------------------
def test_devices_as_torch_names_them():
    cpu = kg.device("cpu")
    assert str(cpu) == "cpu" and cpu.type == "cpu" and cpu == "cpu"
    assert str(kg.device("cuda", 0)) == "cuda:0" and kg.device("cuda:1").index == 1
    with pytest.raises(RuntimeError, match="must not include an index"):
        kg.device("cuda:0", 1)
    with kg.device("cpu") as dev:
        assert dev == cpu and kg.zeros(2).device == cpu
    assert kg.get_default_device() == cpu
    kg.set_default_device("cpu")
    kg.set_default_device(None)
    assert kg.get_default_device() == cpu and isinstance(kg.cuda.is_available(), bool)
    assert kg.nn.Linear(2, 1).to(cpu).weight.device == cpu


# -- utils.data ------------------------------------------------------------------------------------
def test_default_collate_and_loaders():
    class Pairs(data.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return {"x": np.full(2, i, np.float32), "y": i}, float(i)

    batches = list(data.DataLoader(Pairs(), batch_size=2))
    (first, scores), (last, _) = batches
    assert first["x"].tolist() == [[0.0, 0.0], [1.0, 1.0]] and first["y"].dtype == kg.int64
    assert scores.dtype == kg.float64 and last["y"].tolist() == [2]

    class Stream(data.IterableDataset):
        def __iter__(self):
            return iter(range(5))

    assert [b.tolist() for b in data.DataLoader(Stream(), batch_size=2)] == [[0, 1], [2, 3],
                                                                               [4]]
    loader = data.DataLoader(data.TensorDataset(kg.arange(6)), batch_size=4, drop_last=True)
    assert len(loader) == 1 and [b.tolist() for (b,) in loader] == [[0, 1, 2, 3]]
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        data.DataLoader(Pairs(), sampler=data.SequentialSampler(Pairs()), shuffle=True)
    with pytest.raises(ValueError, match="Sum of input lengths"):
        data.random_split(range(4), [2, 3])
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        list(data.DataLoader(Pairs(), batch_size=0))
    assert len(data.ConcatDataset([Pairs(), Pairs()])) == 6 and (Pairs() + Pairs())[4][1] == 1.0


def test_training_loop_labels_match_a_tensor_batch():
    kg.manual_seed(0)
    ds = data.TensorDataset(kg.randn(10, 3, requires_grad=False), kg.arange(10))
    for xb, yb in data.DataLoader(ds, batch_size=4, shuffle=True):
        np.testing.assert_array_equal(xb.numpy(), ds.tensors[0].numpy()[yb.numpy()])

