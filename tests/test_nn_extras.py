"""nn.init.orthogonal_ and the deprecated init names, nn.PReLU, F.glu, F.normalize,
nn.EmbeddingBag, nn.Embedding.from_pretrained, nn.LazyLinear, nn.NLLLoss2d,
nn.utils.clip_grad_norm and the nn.modules paths, against PyTorch 2.13's recorded numbers
(the case code in tests/recorded/record_torch_layers.py runs on both frameworks)."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.nn.functional as F
from kernelgraph import nn
from tests.recorded.record_torch_layers import (
    clip_norm_case,
    embedding_bag_case,
    from_pretrained_case,
    functional_case,
    init_case,
    lazy_linear_case,
    namespaces,
    nll2d_case,
    prelu_case,
)
from tests.test_nn_attention import assert_same

T = namespaces(kg, nn, F)


@pytest.fixture
def torch_layers(recorded):
    return recorded("torch_layers")["cases"]


@pytest.mark.parametrize("case", [init_case, prelu_case, functional_case, embedding_bag_case,
                                  from_pretrained_case, lazy_linear_case, nll2d_case,
                                  clip_norm_case], ids=lambda f: f.__name__)
def test_matches_torch(case, torch_layers):
    """Values, gradients, reprs and the deprecation warnings PyTorch gives."""
    assert_same(case(T), torch_layers[case.__name__.removesuffix("_case").replace(
        "clip_norm", "clip_grad_norm")], case.__name__)


def test_deprecated_init_names_warn_and_fill_as_the_new_ones(torch_layers):
    rec = torch_layers["init"]
    for old in ("normal", "constant", "uniform", "xavier_uniform", "kaiming_normal"):
        assert rec[old]["same"] is True
        assert rec[old]["warnings"] == [["FutureWarning", f"`nn.init.{old}` is now deprecated "
                                                          f"in favor of `nn.init.{old}_`."]]
    for old in ("xavier_normal", "kaiming_uniform", "orthogonal", "eye"):
        with pytest.warns(FutureWarning, match=f"`nn.init.{old}_`"):
            getattr(nn.init, old)(kg.zeros(3, 3))


@pytest.mark.parametrize("shape,gain", [((3, 5), 1.0), ((5, 3), 2.0), ((4, 2, 3), 0.5)])
def test_orthogonal_is_orthogonal(shape, gain):
    w = nn.init.orthogonal_(kg.zeros(*shape), gain=gain).numpy().reshape(shape[0], -1)
    small = w if w.shape[0] <= w.shape[1] else w.T
    np.testing.assert_allclose(small @ small.T, gain ** 2 * np.eye(small.shape[0]), atol=1e-5)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
        nn.init.orthogonal_(kg.zeros(3))


def test_prelu_glu_normalize_errors():
    with pytest.raises(RuntimeError, match="parameter numbers = 3 and channel size = 4"):
        nn.PReLU(3)(kg.ones(2, 4))
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 "
                                           "is size 3"):
        F.glu(kg.ones(2, 3))
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.normalize(kg.ones(2, 3), dim=2)


def test_prelu_in_a_graph_matches_eager():
    m = nn.PReLU(3)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    want = m(kg.tensor(x)).detach().numpy()
    g = kg.Graph()
    with g.as_default():
        p = kg.placeholder(kg.float32, [None, 3, 4])
        out = m(p)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        np.testing.assert_array_equal(sess.run(out, {p: x}), want)


def test_embedding_bag_errors_and_graph_ids():
    bag = nn.EmbeddingBag(10, 3, mode="sum")
    with pytest.raises(ValueError, match="offsets has to be None"):
        bag(kg.tensor([[1, 2]]), kg.tensor([0]))
    with pytest.raises(ValueError, match="offsets\\[0\\] has to be 0"):
        bag(kg.tensor([1, 2]), kg.tensor([1]))
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for "
                                                  "mode='sum'"):
        nn.EmbeddingBag(10, 3)(kg.tensor([1, 2]), kg.tensor([0]), kg.ones(2))
    with pytest.raises(IndexError, match=r"ids must be in \[0, 10\), got 12"):
        bag(kg.tensor([1, 12]), kg.tensor([0]))
    ids, offsets = np.array([1, 2, 4, 5, 3]), kg.tensor([0, 2])
    weights = kg.tensor([1.0, 2.0, 0.5, 1.0, 3.0])
    want = bag(kg.tensor(ids), offsets, weights).detach().numpy()
    w = bag.weight.detach().numpy()
    np.testing.assert_allclose(want, [w[1] + 2 * w[2], 0.5 * w[4] + w[5] + 3 * w[3]],
                               rtol=1e-6)
    g = kg.Graph()
    with g.as_default():
        p = kg.placeholder(kg.int64, [5])
        out = bag(p, offsets)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        np.testing.assert_allclose(sess.run(out, {p: ids}),
                                   bag(kg.tensor(ids), offsets).detach().numpy(), rtol=1e-6)


def test_from_pretrained_shares_the_storage_and_leaves_the_generator_alone():
    w = kg.tensor([[1.0, 2.0], [3.0, 4.0]])
    kg.manual_seed(0)
    emb = nn.Embedding.from_pretrained(w)
    after = kg.rand(1).item()
    kg.manual_seed(0)
    assert kg.rand(1).item() == after                      # no draw for the weight
    w[0, 0] = 9.0
    assert emb.weight[0, 0].item() == 9.0 and not w.requires_grad
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(kg.ones(3))


def test_lazy_linear_materialises_its_parameters_in_place():
    m = nn.LazyLinear(4, bias=False)
    weight = m.weight
    assert tuple(weight.shape) == (4, 0)
    m(kg.ones(2, 3))
    assert type(m) is nn.Linear and m.weight is weight and tuple(weight.shape) == (4, 3)
    assert m.bias is None
    with pytest.raises(ValueError, match="last dim must be known"):
        nn.LazyLinear(2)(kg.tensor(1.0))


def test_nll_loss_2d_reductions():
    logp = F.log_softmax(kg.tensor(np.random.default_rng(0).standard_normal((2, 3, 2, 2))),
                         dim=1)
    target = kg.tensor([[[0, 1], [2, 1]], [[2, 2], [0, 1]]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        none = nn.NLLLoss2d(reduction="none")(logp, target)
        total = nn.NLLLoss2d(reduction="sum")(logp, target)
    lp, t = logp.numpy(), target.numpy()
    want = -np.take_along_axis(lp, t[:, None], axis=1)[:, 0]
    np.testing.assert_allclose(none.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(total.item(), want.sum(), rtol=1e-6)


PATHS = {
    "activation": ["ReLU", "MultiheadAttention", "PReLU", "GELU"],
    "batchnorm": ["BatchNorm1d", "BatchNorm2d"],
    "container": ["ModuleList", "Sequential"],
    "conv": ["Conv2d"],
    "dropout": ["Dropout"],
    "flatten": ["Flatten"],
    "linear": ["Linear", "NonDynamicallyQuantizableLinear", "LazyLinear", "Identity"],
    "loss": ["NLLLoss", "NLLLoss2d", "CrossEntropyLoss"],
    "module": ["Module"],
    "normalization": ["LayerNorm"],
    "pooling": ["MaxPool2d", "AvgPool2d"],
    "rnn": ["GRU", "LSTM", "RNN", "LSTMCell"],
    "sparse": ["Embedding", "EmbeddingBag"],
    "transformer": ["TransformerEncoder", "TransformerEncoderLayer", "Transformer"],
}


@pytest.mark.parametrize("module", list(PATHS))
def test_module_paths_hold_the_same_classes(module):
    mod = importlib.import_module(f"kernelgraph.nn.modules.{module}")
    for name in PATHS[module]:
        assert getattr(mod, name) is getattr(nn, name), f"{module}.{name}"
    assert isinstance(nn.MultiheadAttention(4, 2).out_proj, mod.Linear if module == "linear"
                      else nn.Linear)
