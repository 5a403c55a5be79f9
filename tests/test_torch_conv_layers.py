"""PyTorch's 1-D and transposed convolutions, 1-D and adaptive pooling, ``interpolate``,
the padding modes, channel dropout, pixel shuffling and instance normalisation, against
torch 2.13 (tests/recorded/record_torch_conv_layers.py): outputs, gradients and ``grad_fn``
names in eager mode, the same bits in a graph, the layers' parameter shapes, PyTorch's
seeded initialisation, reprs, and seeded dropout masks. The engine ops under them
(``conv_transpose2d`` and the resampling ops) are also checked as op cards, on CPU and
CUDA, in tests/test_op_cards.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.nn.functional as F
from kernelgraph import nn
from kernelgraph.errors import ShapeError

# Where kernelgraph composes a name from other ops (the 1-D forms from the 2-D ops, conv3d
# from conv2d over depth planes, adaptive max pooling from max_pool2d, pixel shuffling from
# reshapes, affine_grid from a matmul, a conv1d/conv3d bias as an add), its final op's
# grad_fn is printed instead of PyTorch's (documented in docs/compatibility.md).
OTHER_GRAD_FN = {
    "conv1d": "AddBackward0", "conv1d_same_dilated": "ViewBackward0",
    "conv1d_unbatched": "ViewBackward0", "conv3d": "AddBackward0",
    "conv3d_dilated": "TransposeBackward0", "conv3d_same": "TransposeBackward0",
    "conv3d_unbatched": "ViewBackward0", "conv_transpose2d_unbatched": "ViewBackward0",
    "conv_transpose1d": "ViewBackward0", "max_pool1d": "ViewBackward0",
    "max_pool1d_default_stride": "ViewBackward0", "avg_pool1d": "ViewBackward0",
    "adaptive_avg_pool1d": "ViewBackward0", "adaptive_max_pool2d":
    "MaxPool2DWithIndicesBackward0", "adaptive_max_pool2d_one": "MaxPool2DWithIndicesBackward0",
    "adaptive_max_pool2d_overlap": "CatBackward0", "adaptive_max_pool2d_up": "CatBackward0",
    "linear_1d": "ViewBackward0", "nearest_1d": "ViewBackward0",
    "pad_reflect_1d": "ViewBackward0", "pad_reflect_unbatched": "ViewBackward0",
    "pad_replicate_1d": "ViewBackward0", "pixel_shuffle": "ViewBackward0",
    "pixel_unshuffle": "ViewBackward0", "affine_grid": "ViewBackward0",
    "affine_grid_corners": "ViewBackward0",
}


@pytest.fixture(scope="module")
def rec():
    return _load()


def _case(rec, name):
    return next(c for c in rec["functional"] if c["name"] == name)


def _call(case, xs):
    """F.<fn> of the case's inputs (some of them by keyword, as the recording passed them)."""
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
    by_name = case.get("inputs_by_name", {})
    for key, i in by_name.items():
        kwargs[key] = xs[i]
    positional = [x for i, x in enumerate(xs) if i not in by_name.values()]
    return getattr(F, case["fn"])(*positional, **kwargs)


def _load():
    import json
    from pathlib import Path
    path = Path(__file__).parent / "recorded" / "torch_conv_layers.json"
    return json.loads(path.read_text(encoding="utf-8"))


NAMES = [c["name"] for c in _load()["functional"]]
LAYERS = [i for i, m in enumerate(_load()["modules"]) if "input" in m]  # not the dropouts


@pytest.mark.parametrize("name", NAMES)
def test_functional_matches_torch(rec, name):
    case = _case(rec, name)
    xs = [kg.tensor(np.array(v, np.float64), requires_grad=i in case["diff"])
          for i, v in enumerate(case["inputs"])]
    y = _call(case, xs)
    assert list(y.shape) == case["out_shape"]
    np.testing.assert_allclose(y.detach().numpy(), np.array(case["out"]), rtol=1e-12,
                               atol=1e-12)
    assert repr(y.grad_fn).split()[0] == "<" + OTHER_GRAD_FN.get(name, case["grad_fn"])
    (y * kg.tensor(np.array(case["w"]))).sum().backward()
    for i, want in case["grads"].items():
        np.testing.assert_allclose(xs[int(i)].grad.numpy(), np.array(want), rtol=1e-12,
                                   atol=1e-12, err_msg=f"{name}: gradient of input {i}")


@pytest.mark.skipif(not kg.cuda.is_available(), reason="no CUDA (or NUMBA_ENABLE_CUDASIM=1)")
@pytest.mark.parametrize("name", NAMES)
def test_functional_on_cuda(rec, name):
    """The same call on CUDA tensors: results and gradients stay on the device and are
    PyTorch's (a constant the function adds, a zero bias or affine_grid's base grid, goes
    to the inputs' device)."""
    case = _case(rec, name)
    xs = [kg.tensor(np.array(v, np.float64), device="cuda").requires_grad_(i in case["diff"])
          for i, v in enumerate(case["inputs"])]
    y = _call(case, xs)
    assert y.device.type == "cuda"
    np.testing.assert_allclose(y.detach().cpu().numpy(), np.array(case["out"]), rtol=1e-12,
                               atol=1e-12)
    (y * kg.tensor(np.array(case["w"]), device="cuda")).sum().backward()
    for i, want in case["grads"].items():
        grad = xs[int(i)].grad
        assert grad.device.type == "cuda"
        np.testing.assert_allclose(grad.cpu().numpy(), np.array(want), rtol=1e-12,
                                   atol=1e-12, err_msg=f"{name}: gradient of input {i}")


@pytest.mark.parametrize("name", NAMES)
def test_functional_in_a_graph(rec, name):
    """The same call on placeholders: the eager values and gradients, from a Session."""
    case = _case(rec, name)
    arrays = [np.array(v, np.float64) for v in case["inputs"]]
    g = kg.Graph()
    with g.as_default():
        xs = [kg.placeholder(kg.float64, shape=a.shape) for a in arrays]
        y = _call(case, xs)
        loss = kg.reduce_sum(y * np.array(case["w"]))
        grads = kg.gradients(loss, [xs[i] for i in case["diff"]])
    with kg.Session(g) as sess:
        got = sess.run([y, *grads], dict(zip(xs, arrays)))
    np.testing.assert_allclose(got[0], np.array(case["out"]), rtol=1e-12, atol=1e-12)
    for k, i in enumerate(case["diff"]):
        np.testing.assert_allclose(got[1 + k], np.array(case["grads"][str(i)]), rtol=1e-12,
                                   atol=1e-12, err_msg=f"{name}: gradient of input {i}")


def _layer(entry, dtype=None):
    """The recorded layer, its arguments as given to torch (lists stay lists: the repr shows
    them)."""
    args, kwargs = list(entry["args"]), dict(entry["kwargs"])
    if entry["params"] and dtype is not None:
        kwargs["dtype"] = dtype
    return getattr(nn, entry["name"])(*args, **kwargs)


@pytest.mark.parametrize("index", LAYERS)
def test_modules_match_torch(rec, index):
    entry = rec["modules"][index]
    layer = _layer(entry, kg.float64)
    assert repr(layer) == entry["repr"]
    assert {k: list(v.shape) for k, v in layer.named_parameters()} == entry["param_shapes"]
    if entry["params"]:  # torch's float64 draws, loaded: the forward and backward are checked
        layer.load_state_dict({k: kg.tensor(np.array(v)) for k, v in entry["params"].items()})
    x = kg.tensor(np.array(entry["input"]), requires_grad=True)
    y = layer(x)
    np.testing.assert_allclose(y.detach().numpy(), np.array(entry["out"]), rtol=1e-12,
                               atol=1e-12)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.array(entry["x_grad"]), rtol=1e-12,
                               atol=1e-12)


def test_every_module_case_is_run(rec):
    assert len(rec["modules"]) == len(LAYERS) + 2  # and the two dropout layers


@pytest.mark.parametrize("index", [0, 1, 2])
def test_seeded_initialisation_matches_torch(rec, index):
    """After manual_seed(0) a default (float32) layer draws PyTorch's parameters:
    kaiming_uniform_(a=sqrt(5)), and a bias bound from the weight's fan_in as laid out
    ((in, out, kh, kw) for a transposed convolution: fan_in = out * kh * kw)."""
    entry = rec["float32_init"][index]
    kg.manual_seed(0)
    layer = _layer(entry)
    params = dict(layer.named_parameters())
    assert set(params) == set(entry["params"])
    for k, want in entry["params"].items():
        np.testing.assert_allclose(params[k].detach().numpy(), np.array(want, np.float32),
                                   rtol=1e-6, atol=1e-7, err_msg=k)


@pytest.mark.parametrize("name", ["Dropout2d", "Dropout1d"])
def test_dropout_masks_match_torch(rec, name):
    entry = next(e for e in rec["modules"] if e["name"] == name)
    kg.manual_seed(0)
    layer = getattr(nn, name)(*entry["args"])
    assert repr(layer) == entry["repr"]
    x = kg.ones(*entry["input_shape"], dtype=kg.float64)
    for want in entry["outs"]:  # two calls: the generator moves on between them
        np.testing.assert_array_equal(layer(x).numpy(), np.array(want))
    np.testing.assert_array_equal(layer.eval()(x).numpy(), np.array(entry["eval"]))


def test_dropout2d_in_a_graph_drops_whole_channels():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=(None, 8, 3, 3))
        y = nn.Dropout2d(0.5)(x)
    with kg.Session(g) as sess:
        out = sess.run(y, {x: np.ones((4, 8, 3, 3), np.float32)})
    per_channel = out.reshape(4, 8, 9)
    assert (per_channel == per_channel[:, :, :1]).all()  # one draw per (sample, channel)
    assert set(np.unique(out)) <= {0.0, 2.0} and 0 < out.mean() < 2


def test_layers_in_a_graph_share_their_parameters():
    """``kg.nn`` layers in a graph: the transposed convolution's output equals its eager
    output with the same parameters."""
    layer = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)
    x = np.arange(2 * 2 * 3 * 3, dtype=np.float32).reshape(2, 2, 3, 3) / 10
    eager = layer(kg.tensor(x)).detach().numpy()
    g = kg.Graph()
    with g.as_default():
        p = kg.placeholder(kg.float32, shape=(None, 2, 3, 3))
        y = layer(p)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        np.testing.assert_array_equal(sess.run(y, {p: x}), eager)
    assert tuple(y.shape) == (None, 3, 6, 6)


def test_upsample_is_deprecated_as_in_torch():
    x = kg.ones(1, 1, 2, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert F.upsample(x, scale_factor=2).shape == (1, 1, 4, 4)
    assert "deprecated" in str(caught[0].message)


@pytest.mark.parametrize("call, error, words", [
    (lambda: F.pad(kg.ones(1, 1, 3, 3), (3, 0, 0, 0), mode="reflect"), RuntimeError,
     "Padding size should be less than the corresponding input dimension"),
    (lambda: nn.ConvTranspose2d(2, 2, 3, padding="same"), ValueError,
     "padding must be an int or a tuple of ints"),
    (lambda: F.pad(kg.ones(1, 1, 3, 3), (1, 1), mode="circular"), NotImplementedError,
     "'circular'"),
    (lambda: F.interpolate(kg.ones(1, 1, 3), size=4, mode="bilinear"), NotImplementedError,
     "needs 4D input"),
    (lambda: F.interpolate(kg.ones(1, 1, 3, 3), size=4, align_corners=True), ValueError,
     "align_corners option can only be set"),
    (lambda: F.interpolate(kg.ones(1, 1, 3, 3)), ValueError, "only one of size or"),
    (lambda: F.interpolate(kg.ones(1, 1, 3, 3), size=4, mode="bicubic"),
     NotImplementedError, "'bicubic'"),
    (lambda: F.conv_transpose2d(kg.ones(1, 2, 3, 3), kg.ones(3, 1, 2, 2)), ShapeError,
     "has 2 channels but the weights"),
    (lambda: F.conv_transpose2d(kg.ones(1, 1, 3, 3), kg.ones(1, 1, 2, 2), stride=2,
                                output_padding=2), ValueError,
     "output padding must be smaller than either stride or dilation"),
    (lambda: nn.ConvTranspose2d(4, 4, 3, groups=2), NotImplementedError, "groups"),
    (lambda: F.pixel_shuffle(kg.ones(1, 3, 2, 2), 2), ValueError, "divisible"),
    (lambda: nn.InstanceNorm2d(3, track_running_stats=True), NotImplementedError,
     "track_running_stats"),
    (lambda: F.interpolate(kg.ones(1, 1, 3, 3, dtype=kg.int64), size=4), TypeError,
     "floating-point"),
])
def test_bad_input_is_refused_clearly(call, error, words):
    with pytest.raises(error, match=words):
        call()
