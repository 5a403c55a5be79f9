"""kg.nn.MultiheadAttention, the Transformer modules, F.scaled_dot_product_attention and
kg.einsum against PyTorch 2.13's recorded numbers (the case code in
tests/recorded/record_torch_layers.py runs on both frameworks: initial values, state-dict
layout, outputs, attention weights and gradients), einsum against NumPy, and the modules in
static mode against eager mode."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelgraph as kg
import kernelgraph.nn.functional as F
from kernelgraph import nn
from tests.recorded.record_torch_layers import (
    EINSUM_CASES,
    ENCODER_LAYER_CASES,
    MHA_CASES,
    data,
    decoder_case,
    dropout_case,
    einsum_case,
    einsum_errors,
    encoder_case,
    encoder_layer_case,
    fast_path_case,
    mha_case,
    namespaces,
    sdpa_case,
    training_case,
    transformer_case,
)

T = namespaces(kg, nn, F)


def assert_same(got, want, path="value", rtol=1e-5, atol=2e-6):
    if isinstance(want, dict):
        assert set(got) == set(want), path
        for k in want:
            assert_same(got[k], want[k], f"{path}.{k}", rtol, atol)
        return
    if isinstance(want, str | bool) or want is None:
        assert got == want, path
        return
    try:
        w = np.array(want, np.float64)
    except ValueError:  # a list of arrays of different shapes (gradients)
        assert len(got) == len(want), path
        for i, (g, x) in enumerate(zip(got, want, strict=True)):
            assert_same(g, x, f"{path}[{i}]", rtol, atol)
        return
    np.testing.assert_allclose(np.array(got, np.float64), w, rtol=rtol, atol=atol,
                               err_msg=path)


@pytest.fixture
def torch_layers(recorded):
    return recorded("torch_layers")["cases"]


@pytest.mark.parametrize("name", list(MHA_CASES))
def test_multihead_attention_matches_torch(name, torch_layers):
    assert_same(mha_case(T, *MHA_CASES[name]), torch_layers[f"mha_{name}"], name)


def test_scaled_dot_product_attention_matches_torch(torch_layers):
    assert_same(sdpa_case(T), torch_layers["sdpa"])


@pytest.mark.parametrize("name", list(ENCODER_LAYER_CASES))
def test_encoder_layer_matches_torch(name, torch_layers):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = encoder_layer_case(T, *ENCODER_LAYER_CASES[name])
    assert_same(got, torch_layers[f"encoder_layer_{name}"], name)


def test_encoder_matches_torch_also_on_its_nested_tensor_path(torch_layers):
    """In eval mode under no_grad with a padding mask, PyTorch's output holds the final
    norm of zeros at the padded positions; with gradients on, the computed values."""
    want = torch_layers["encoder"]
    assert_same(encoder_case(T), want)
    padded = np.array(want["eval_no_grad"])[1, 3:]
    computed = np.array(want["eval_grad_enabled"])[1, 3:]
    assert not np.allclose(padded, computed)  # the two paths really differ there


def test_fast_path_numbers_are_the_ordinary_ones(torch_layers):
    """A single attention or encoder layer in eval mode under no_grad (PyTorch's fused path)
    computes the padded positions as usual: only the encoder's nested tensors zero them."""
    assert_same(fast_path_case(T), torch_layers["fast_path"])


def test_dropout_in_training_draws_torch_masks(torch_layers):
    """With dropout in training mode, the same dropped units as PyTorch after the same seed:
    in the attention weights, after the (transposed) batch-first attention output and in
    the feed-forward block."""
    assert_same(dropout_case(T), torch_layers["dropout"])


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_matches_torch(norm_first, torch_layers):
    name = "decoder_norm_first" if norm_first else "decoder"
    assert_same(decoder_case(T, norm_first), torch_layers[name], name)


def test_transformer_matches_torch(torch_layers):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = transformer_case(T)
    assert_same(got, torch_layers["transformer"])


def test_transformer_language_model_trains_as_torch(torch_layers):
    """The tutorial's model in small, five Adam steps with clipping: every loss, every
    gradient norm and the final outputs (float32 steps: 1e-5 relative)."""
    assert_same(training_case(T), torch_layers["training"], rtol=1e-5, atol=1e-5)


def test_encoder_warns_as_torch_when_nested_tensors_cannot_be_used():
    layer = nn.TransformerEncoderLayer(8, 2, 16)  # not batch_first
    with pytest.warns(UserWarning, match="self.use_nested_tensor is False because "
                                         "encoder_layer.self_attn.batch_first was not True"):
        enc = nn.TransformerEncoder(layer, 2)
    assert enc.use_nested_tensor is False and len(enc.layers) == 2
    assert enc.layers[0].self_attn.in_proj_weight is not layer.self_attn.in_proj_weight


def test_attention_errors():
    mha = nn.MultiheadAttention(8, 2)
    with pytest.raises(AssertionError, match="divisible"):
        nn.MultiheadAttention(8, 3)
    with pytest.raises(AssertionError, match="expected query of last dim 8"):
        mha(kg.ones(3, 2, 5), kg.ones(3, 2, 8), kg.ones(3, 2, 8))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal"):
        mha(kg.ones(3, 2, 8), kg.ones(3, 2, 8), kg.ones(3, 2, 8), is_causal=True)
    with pytest.raises(NotImplementedError, match="add_bias_kv"):
        nn.MultiheadAttention(8, 2, add_bias_kv=True)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        F.scaled_dot_product_attention(kg.ones(2, 4), kg.ones(2, 4), kg.ones(2, 4),
                                       attn_mask=kg.ones(2, 2), is_causal=True)


def test_transformer_defaults_are_torch_defaults(torch_layers):
    want = torch_layers["transformer"]["default_layout"]
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1)
    assert {k: list(v.shape) for k, v in model.state_dict().items()} == want
    assert want["encoder.layers.0.linear1.weight"] == [2048, 8]   # dim_feedforward 2048
    layer = model.encoder.layers[0]
    assert layer.dropout.p == 0.1 and layer.norm1.eps == 1e-5


# -- static mode -----------------------------------------------------------------------------
def _static_vs_eager(make, shapes, call):
    """The module on placeholders of unknown batch equals eager mode, gradients included."""
    kg.manual_seed(0)
    m = make()
    xs = [data(10 + i, *s) for i, s in enumerate(shapes)]
    out_e = call(m, *[kg.tensor(x) for x in xs])
    (out_e * out_e).sum().backward()
    grads_e = [p.grad.numpy() for p in m.parameters()]
    g = kg.Graph()
    with g.as_default():
        ps = [kg.placeholder(kg.float32, shape=[None, *s[1:]]) for s in shapes]
        out_s = call(m, *ps)
        grads_s = kg.gradients((out_s * out_s).sum(), m.variables(g))
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        out, grads = sess.run([out_s, grads_s], dict(zip(ps, xs, strict=True)))
    np.testing.assert_allclose(out, out_e.detach().numpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(grads, grads_e, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_multihead_attention_in_a_graph_matches_eager():
    mask = kg.tensor(np.triu(np.ones((4, 4), bool), 1))
    _static_vs_eager(lambda: nn.MultiheadAttention(8, 2, batch_first=True),
                     [(3, 4, 8), (3, 4, 8)],
                     lambda m, q, kv: m(q, kv, kv, attn_mask=mask)[0])


def test_encoder_layer_in_a_graph_matches_eager():
    _static_vs_eager(lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                        batch_first=True),
                     [(3, 5, 8)],
                     lambda m, x: m(x, src_mask=nn.Transformer.generate_square_subsequent_mask(5)))


@pytest.mark.skipif(not kg.cuda.is_available(), reason="needs CUDA or its simulator")
def test_encoder_on_cuda_matches_the_cpu():
    """``model.cuda()`` with masks moved too: the same outputs and gradients, the
    nested-tensor path included (tiny shapes: the simulator is slow)."""
    kg.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True)
    m = nn.TransformerEncoder(layer, 1, norm=nn.LayerNorm(4))
    x = data(1, 2, 3, 4)
    pad = np.array([[False, False, True], [False, False, False]])

    def run(device):
        xt = kg.tensor(x, device=device)
        mask = nn.Transformer.generate_square_subsequent_mask(3, device=device)
        out = m(xt, mask=mask, src_key_padding_mask=kg.tensor(pad, device=device))
        m.zero_grad()
        (out * out).sum().backward()
        m.eval()
        with kg.no_grad():
            nested = m(xt, src_key_padding_mask=kg.tensor(pad, device=device))
        m.train()
        return [t.cpu().detach().numpy() for t in (out, nested)] + \
            [p.grad.cpu().numpy() for p in m.parameters()], out.device

    want, _ = run(None)
    m.cuda()
    got, device = run("cuda")
    assert device.type == "cuda"
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# -- einsum ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(EINSUM_CASES))
def test_einsum_matches_torch(name, torch_layers):
    assert_same(einsum_case(T, *EINSUM_CASES[name]), torch_layers[f"einsum_{name}"], name)


def test_einsum_list_and_sublist_forms(torch_layers):
    assert_same(einsum_case(T, "ij,jk->ik", [(2, 3), (3, 4)], list_form=True),
                torch_layers["einsum_list_form"])
    a, b = data(1, 2, 3), data(2, 3, 4)
    got = kg.einsum(kg.tensor(a), [0, 1], kg.tensor(b), [1, 2], [0, 2])
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-6)
    got = kg.einsum(kg.tensor(a), [Ellipsis, 1], kg.tensor(b), [1, 2])
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-6)


def test_einsum_errors_as_torch(torch_layers):
    assert einsum_errors(T) == torch_layers["einsum_errors"]
    for eq, msg in (("ij->ji->", "invalid subscript given at index 6"),
                    ("i.j", "found '.' for operand 0 that is not part of any ellipsis"),
                    ("i0", "invalid subscript given at index 1"),
                    ("ii->ii", "output subscript i appears more than once"),
                    ("ij,jk->ik,", "fewer operands were provided"),
                    ("ij->k", "output subscript k does not appear")):
        with pytest.raises(RuntimeError, match=msg.replace("(", r"\(")):
            kg.einsum(eq, kg.ones(3, 3))
    with pytest.raises(RuntimeError, match="more operands were provided"):
        kg.einsum("ij", kg.ones(3, 3), kg.ones(3, 3))
    with pytest.raises(RuntimeError, match="subscript j has size 4 for operand 1"):
        kg.einsum("ij,jk->ik", kg.ones(2, 3), kg.ones(4, 4))
    with pytest.raises(RuntimeError, match="subscript k has size 5 for operand 2"):
        kg.einsum("ij,jk,kl->il", kg.ones(2, 3), kg.ones(3, 4), kg.ones(5, 2))
    with pytest.raises(RuntimeError, match="the ellipsis dims of operand 1"):
        kg.einsum("...i,...i->...", kg.ones(2, 3), kg.ones(4, 3))
    with pytest.raises(RuntimeError, match="subscript i is repeated for operand 0 but the "
                                           "sizes don't match, 3 != 2"):
        kg.einsum("ii->i", kg.ones(2, 3))
    assert kg.einsum("ij,jk->ik", kg.ones(2, 1), kg.ones(3, 4)).tolist() == [[3.0] * 4] * 2
    with pytest.raises(TypeError, match="'equation' \\(position 1\\) must be str, not int"):
        kg.einsum(3, [kg.ones(2)])
    with pytest.raises(ValueError, match="not within the valid range"):
        kg.einsum(kg.ones(2), [60])


_EQUATIONS = ["ij,jk->ik", "ij,ij->ij", "ij,ij->", "bij,bjk->bik", "ij->ji", "ii->i", "iij->j",
              "i,j,k->ijk", "ij,j->i", "...i,...i->...", "abc,cd->abd", "ij,kj->ik"]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(_EQUATIONS), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3),
       st.integers(0, 1000))
def test_einsum_matches_numpy(eq, n1, n2, n3, seed):
    """Any equation of the list, sizes drawn: NumPy's einsum, float64."""
    sizes = dict(zip("ijkabcd", (n1, n2, n3, n2, n3, n1, n2), strict=True))
    terms = eq.split("->")[0].split(",")
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal([sizes[c] for c in t.replace("...", "")] if "..." not in t
                                  else [2, *[sizes[c] for c in t.replace("...", "")]])
              for t in terms]
    got = kg.einsum(eq, *[kg.tensor(a) for a in arrays]).numpy()
    np.testing.assert_allclose(got, np.einsum(eq, *arrays), rtol=1e-10, atol=1e-12)


def test_einsum_in_a_graph_matches_eager_with_gradients():
    a, b = data(1, 2, 3, 4), data(2, 2, 4, 5)
    ta, tb = kg.tensor(a, requires_grad=True), kg.tensor(b, requires_grad=True)
    out = kg.einsum("bij,bjk->bik", ta, tb)
    (out * out).sum().backward()
    g = kg.Graph()
    with g.as_default():
        pa, pb = kg.placeholder(kg.float32, (2, 3, 4)), kg.placeholder(kg.float32, (2, 4, 5))
        out_s = kg.einsum("bij,bjk->bik", pa, pb)
        grads = kg.gradients((out_s * out_s).sum(), [pa, pb])
    with kg.Session(g) as sess:
        got, (ga, gb) = sess.run([out_s, grads], {pa: a, pb: b})
    np.testing.assert_allclose(got, out.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(ga, ta.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(gb, tb.grad.numpy(), rtol=1e-5)


def test_einsum_gradient_by_finite_differences():
    """A diagonal, a broadcast and a contraction in float64 against central differences."""
    a, b = np.random.default_rng(0).standard_normal((2, 3, 3)), \
        np.random.default_rng(1).standard_normal((3, 2))
    f = lambda x, y: kg.einsum("bii,ik->bk", x, y)  # noqa: E731
    ta, tb = kg.tensor(a, requires_grad=True), kg.tensor(b, requires_grad=True)
    f(ta, tb).sum().backward()
    for k, t in enumerate((ta, tb)):
        arrays = [a, b]
        num = np.zeros_like(arrays[k])
        for idx in np.ndindex(num.shape):
            moved = []
            for step in (1e-6, -1e-6):
                shifted = [x.copy() for x in arrays]
                shifted[k][idx] += step
                moved.append(f(*map(kg.tensor, shifted)).sum().item())
            num[idx] = (moved[0] - moved[1]) / 2e-6
        np.testing.assert_allclose(t.grad.numpy(), num, rtol=1e-6, atol=1e-8)
