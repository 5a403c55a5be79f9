"""Record PyTorch's attention and transformer modules (``nn.MultiheadAttention``,
``nn.Transformer*``, ``F.scaled_dot_product_attention``), ``torch.einsum``, the
``nn.init`` additions (``orthogonal_``, the deprecated names), ``nn.PReLU``, ``F.glu``,
``F.normalize``, ``nn.EmbeddingBag``, ``nn.Embedding.from_pretrained``, ``nn.LazyLinear``,
``nn.NLLLoss2d`` and ``nn.utils.clip_grad_norm`` into ``torch_layers.json`` (read by
tests/test_nn_attention.py and tests/test_nn_extras.py).

Each case is written once against PyTorch's API and takes the framework's namespace ``T``
(``T.torch``, ``T.nn``, ``T.F``), so the tests run the very same code on kernelgraph.
Weights are loaded through ``load_state_dict`` from NumPy draws, so both frameworks compute
with the same numbers; where the case says so, the initial values (PyTorch's generator after
``manual_seed(0)``) are recorded too. Run with an environment that has torch::

    python tests/recorded/record_torch_layers.py
"""

from __future__ import annotations

import json
import math
import types
import warnings
from pathlib import Path

import numpy as np


def L(t):  # noqa: N802 - a short name for "as a list"
    return np.asarray(t.detach() if hasattr(t, "detach") else t).tolist()


def namespaces(torch, nn, F):  # noqa: N803 - torch's spelling
    return types.SimpleNamespace(torch=torch, nn=nn, F=F)


def data(seed: int, *shape, scale: float = 1.0) -> np.ndarray:
    """Inputs from NumPy (not from either framework's generator)."""
    return (scale * np.random.default_rng(seed).standard_normal(shape)).astype(np.float32)


def load(T, m, seed: int) -> dict:
    """Every parameter of ``m`` from NumPy draws, through ``load_state_dict``; returns the
    state dict's names and shapes as PyTorch lists them."""
    state = m.state_dict()
    new = {k: T.torch.tensor(data(seed + i, *tuple(v.shape), scale=0.5))
           for i, (k, v) in enumerate(state.items())}
    m.load_state_dict(new)
    return {k: list(v.shape) for k, v in state.items()}


def seeded_state(T, make) -> dict:
    """The module ``make()`` builds after ``manual_seed(0)``: its initial state dict."""
    T.torch.manual_seed(0)
    return {k: L(v) for k, v in make().state_dict().items()}


def caught(fn):
    """``fn()``'s result and the warnings it raised, as (category, message) pairs."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = fn()
    return out, [[w.category.__name__, str(w.message)] for w in seen]


def backprop(T, out, *leaves) -> list:
    """sum(out * fixed weights) backpropagated: the gradient of each leaf."""
    w = T.torch.tensor(data(99, *tuple(out.shape)))
    (out * w).sum().backward()
    return [None if t.grad is None else L(t.grad) for t in leaves]


# -- attention ----------------------------------------------------------------------------------
def mha_case(T, kwargs: dict, shapes: tuple, call: dict, masks: str = "") -> dict:
    """``nn.MultiheadAttention(**kwargs)``: initial values, state-dict layout, the output and
    weights with loaded weights, and the gradients."""
    rec = {"init": seeded_state(T, lambda: T.nn.MultiheadAttention(**kwargs))}
    m = T.nn.MultiheadAttention(**kwargs)
    rec["layout"] = load(T, m, 10)
    q, k, v = (T.torch.tensor(data(1 + i, *s), requires_grad=True) for i, s in enumerate(shapes))
    extra = {}
    bf = kwargs.get("batch_first", False)
    lq, lk = (shapes[0][1], shapes[1][1]) if bf else (shapes[0][0], shapes[1][0])
    n = shapes[0][0] if bf else shapes[0][1]
    if "bool" in masks:
        extra["attn_mask"] = T.torch.tensor(np.triu(np.ones((lq, lk), bool), 1))
    if "float" in masks:
        extra["attn_mask"] = T.torch.tensor(data(5, lq, lk))
    if "per_head" in masks:  # (N * heads, L, S)
        extra["attn_mask"] = T.torch.tensor(data(6, n * kwargs["num_heads"], lq, lk))
    if "pad" in masks:
        pad = np.zeros((n, lk), bool)
        pad[0, -1] = True
        extra["key_padding_mask"] = T.torch.tensor(pad)
    if "float_pad" in masks:
        extra["key_padding_mask"] = T.torch.tensor(np.where(pad, -2.0, 0.0).astype(np.float32))
    out, weights = m(q, k, v, **extra, **call)
    rec["out"] = L(out)
    rec["weights"] = None if weights is None else L(weights)
    rec["grads"] = backprop(T, out, q, k, v, *m.parameters())
    return rec


MHA_CASES = {
    "plain": ({"embed_dim": 8, "num_heads": 2}, ((3, 2, 8), (4, 2, 8), (4, 2, 8)), {}, ""),
    "batch_first_bool_mask": ({"embed_dim": 8, "num_heads": 2, "batch_first": True},
                              ((2, 3, 8), (2, 4, 8), (2, 4, 8)),
                              {"average_attn_weights": False}, "bool,pad"),
    "float_mask_no_weights": ({"embed_dim": 8, "num_heads": 4}, ((3, 2, 8), (4, 2, 8),
                                                                 (4, 2, 8)),
                              {"need_weights": False}, "float,float_pad"),
    "per_head_mask": ({"embed_dim": 8, "num_heads": 2, "batch_first": True},
                      ((2, 3, 8), (2, 4, 8), (2, 4, 8)), {"average_attn_weights": False},
                      "per_head"),
    "kdim_vdim": ({"embed_dim": 8, "num_heads": 2, "kdim": 5, "vdim": 6},
                  ((3, 2, 8), (4, 2, 5), (4, 2, 6)), {}, "pad"),
    "no_bias_unbatched": ({"embed_dim": 6, "num_heads": 3, "bias": False},
                          ((3, 6), (4, 6), (4, 6)), {}, "bool"),
}


def sdpa_case(T) -> dict:
    F = T.F
    q, k, v = (T.torch.tensor(data(20 + i, 2, 2, s, 4), requires_grad=True)
               for i, s in enumerate((3, 5, 5)))
    rec = {}
    rec["plain"] = L(F.scaled_dot_product_attention(q, k, v))
    rec["bool"] = L(F.scaled_dot_product_attention(
        q, k, v, attn_mask=T.torch.tensor(np.tril(np.ones((3, 5), bool)))))
    rec["float_scale"] = L(F.scaled_dot_product_attention(
        q, k, v, attn_mask=T.torch.tensor(data(24, 3, 5)), scale=0.3))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    rec["causal"] = L(out)
    rec["grads"] = backprop(T, out, q, k, v)
    return rec


# -- transformer --------------------------------------------------------------------------------
def causal(T, n: int):
    return T.nn.Transformer.generate_square_subsequent_mask(n)


def encoder_layer_case(T, kwargs: dict, padded: bool = False) -> dict:
    make = lambda: T.nn.TransformerEncoderLayer(**kwargs)  # noqa: E731
    rec = {"init": seeded_state(T, make)}
    m = make()
    rec["layout"] = load(T, m, 30)
    bf = kwargs.get("batch_first", False)
    x = T.torch.tensor(data(2, *((2, 5, 8) if bf else (5, 2, 8))), requires_grad=True)
    extra = {"src_mask": causal(T, 5)}
    if padded:
        pad = np.zeros((2, 5), bool)
        pad[1, 3:] = True
        extra["src_key_padding_mask"] = T.torch.tensor(pad)
    out = m(x, **extra)
    rec["out"] = L(out)
    rec["grads"] = backprop(T, out, x, *m.parameters())
    m.eval()
    with T.torch.no_grad():
        rec["eval"] = L(m(x, **extra))
    return rec


ENCODER_LAYER_CASES = {
    "default": ({"d_model": 8, "nhead": 2, "dim_feedforward": 16, "dropout": 0.0}, False),
    "batch_first_padded": ({"d_model": 8, "nhead": 2, "dim_feedforward": 16, "dropout": 0.0,
                            "batch_first": True}, True),
    "norm_first_gelu": ({"d_model": 8, "nhead": 4, "dim_feedforward": 12, "dropout": 0.0,
                         "norm_first": True, "activation": "gelu"}, False),
}


def encoder_case(T) -> dict:
    """A 2-layer encoder with a final norm, batch first, a padding mask: in training mode
    and in eval mode under no_grad (where PyTorch runs its fast path)."""
    T.torch.manual_seed(0)
    layer = T.nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)
    m = T.nn.TransformerEncoder(layer, num_layers=2, norm=T.nn.LayerNorm(8))
    rec = {"layout": load(T, m, 40)}
    x = T.torch.tensor(data(3, 2, 5, 8), requires_grad=True)
    pad = np.zeros((2, 5), bool)
    pad[1, 3:] = True
    mask = T.torch.tensor(pad)
    out = m(x, src_key_padding_mask=mask)
    rec["out"] = L(out)
    rec["grads"] = backprop(T, out, x)
    m.eval()
    rec["eval_grad_enabled"] = L(m(x, src_key_padding_mask=mask))
    with T.torch.no_grad():
        rec["eval_no_grad"] = L(m(x, src_key_padding_mask=mask))
        rec["eval_no_grad_causal"] = L(m(x, mask=causal(T, 5)))
    return rec


def fast_path_case(T) -> dict:
    """Self-attention and one encoder layer (batch first, a padding mask, no other mask) in
    eval mode under no_grad, where PyTorch runs its fused fast path."""
    rec = {}
    x = T.torch.tensor(data(8, 2, 4, 8))
    pad = np.zeros((2, 4), bool)
    pad[0, 2:] = True
    mask = T.torch.tensor(pad)
    mha = T.nn.MultiheadAttention(8, 2, batch_first=True)
    load(T, mha, 45)
    layer = T.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    load(T, layer, 47)
    mha.eval()
    layer.eval()
    with T.torch.no_grad():
        out, weights = mha(x, x, x, key_padding_mask=mask)
        rec["mha"], rec["mha_weights"] = L(out), L(weights)
        rec["layer"] = L(layer(x, src_key_padding_mask=mask))
    return rec


def dropout_case(T) -> dict:
    """Training with dropout: PyTorch's masks, drawn in PyTorch's order (a batch-first
    attention output is a transposed view, whose mask ATen draws in memory order)."""
    x = T.torch.tensor(data(9, 2, 5, 8))
    layer = T.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3, batch_first=True)
    load(T, layer, 48)
    mha = T.nn.MultiheadAttention(8, 2, dropout=0.3)
    load(T, mha, 49)
    T.torch.manual_seed(1)
    rec = {"layer": L(layer(x))}
    out, weights = mha(x, x, x)
    rec["mha"], rec["mha_weights"] = L(out), L(weights)
    rec["transposed"] = L(T.F.dropout(T.torch.ones(3, 4).t(), 0.5))
    return rec


def decoder_case(T, norm_first: bool) -> dict:
    kwargs = {"d_model": 8, "nhead": 2, "dim_feedforward": 16, "dropout": 0.0,
              "norm_first": norm_first}
    rec = {"init": seeded_state(T, lambda: T.nn.TransformerDecoderLayer(**kwargs))}
    layer = T.nn.TransformerDecoderLayer(**kwargs)
    m = T.nn.TransformerDecoder(layer, num_layers=2)
    rec["layout"] = load(T, m, 50)
    tgt = T.torch.tensor(data(4, 4, 2, 8), requires_grad=True)
    memory = T.torch.tensor(data(5, 6, 2, 8), requires_grad=True)
    pad = np.zeros((2, 6), bool)
    pad[0, 4:] = True
    out = m(tgt, memory, tgt_mask=causal(T, 4), memory_key_padding_mask=T.torch.tensor(pad))
    rec["out"] = L(out)
    rec["grads"] = backprop(T, out, tgt, memory)
    return rec


def transformer_case(T) -> dict:
    T.torch.manual_seed(0)
    big = T.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1)
    rec = {"default_layout": {k: list(v.shape) for k, v in big.state_dict().items()},
           "repr": repr(big.encoder.layers[0].self_attn)}
    make = lambda: T.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2,  # noqa: E731
                                    num_decoder_layers=1, dim_feedforward=16, dropout=0.0)
    rec["init"] = seeded_state(T, make)
    m = make()
    rec["layout"] = load(T, m, 60)
    src = T.torch.tensor(data(6, 5, 2, 8), requires_grad=True)
    tgt = T.torch.tensor(data(7, 4, 2, 8), requires_grad=True)
    out = m(src, tgt, tgt_mask=m.generate_square_subsequent_mask(4))
    rec["out"] = L(out)
    rec["grads"] = backprop(T, out, src, tgt)
    rec["mask"] = L(causal(T, 3))
    return rec


def training_case(T) -> dict:
    """PyTorch's "language modeling with nn.Transformer" tutorial in small: embedding,
    sinusoidal positions (a buffer), a causal TransformerEncoder, a decoder Linear, Adam,
    gradient clipping; the loss of each step."""
    torch, nn = T.torch, T.nn

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model: int, max_len: int = 16):
            super().__init__()
            position = np.arange(max_len)[:, None]
            div_term = np.exp(np.arange(0, d_model, 2) * (-np.log(10000.0) / d_model))
            pe = np.zeros((max_len, 1, d_model), np.float32)
            pe[:, 0, 0::2] = np.sin(position * div_term)
            pe[:, 0, 1::2] = np.cos(position * div_term)
            self.register_buffer("pe", torch.tensor(pe))

        def forward(self, x):
            return x + self.pe[:x.size(0)]

    class TransformerModel(nn.Module):
        def __init__(self, ntoken: int, d_model: int, nhead: int, d_hid: int, nlayers: int):
            super().__init__()
            self.pos_encoder = PositionalEncoding(d_model)
            layers = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout=0.0)
            self.transformer_encoder = nn.TransformerEncoder(layers, nlayers)
            self.embedding = nn.Embedding(ntoken, d_model)
            self.d_model = d_model
            self.linear = nn.Linear(d_model, ntoken)

        def forward(self, src, src_mask):
            src = self.embedding(src) * math.sqrt(self.d_model)
            src = self.pos_encoder(src)
            output = self.transformer_encoder(src, src_mask)
            return self.linear(output)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = TransformerModel(ntoken=11, d_model=8, nhead=2, d_hid=16, nlayers=2)
    load(T, model, 100)
    rng = np.random.default_rng(5)
    data = torch.tensor(rng.integers(0, 11, size=(7, 3)))
    inputs, targets = data[:-1], data[1:].reshape(-1)
    mask = nn.Transformer.generate_square_subsequent_mask(6)
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses, norms = [], []
    model.train()
    for _ in range(5):
        out = model(inputs, mask)
        loss = criterion(out.view(-1, 11), targets)
        opt.zero_grad()
        loss.backward()
        norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), 0.5)))
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        final = model(inputs, mask)
    return {"losses": losses, "norms": norms, "final": L(final)}


# -- einsum -------------------------------------------------------------------------------------
EINSUM_CASES = {
    "matmul": ("ij,jk->ik", [(2, 3), (3, 4)]),
    "batched": ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    "attention": ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    "implicit": ("ij,jk", [(2, 3), (3, 4)]),
    "trace": ("ii", [(3, 3)]),
    "diagonal": ("ii->i", [(3, 3)]),
    "outer": ("i,j->ij", [(3,), (4,)]),
    "dot": ("i,i->", [(5,), (5,)]),
    "sum_all": ("ij->", [(2, 3)]),
    "transpose_ellipsis": ("...ij->...ji", [(2, 3, 4)]),
    "broadcast_ellipsis": ("...ij,...jk->...ik", [(2, 1, 3, 4), (3, 4, 2)]),
    "three": ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    "bilinear": ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    "repeated_output_sum": ("i i j -> j", [(3, 3, 2)]),
}


def einsum_case(T, eq: str, shapes: list, list_form: bool = False) -> dict:
    xs = [T.torch.tensor(data(70 + i, *s), requires_grad=True) for i, s in enumerate(shapes)]
    out = T.torch.einsum(eq, xs) if list_form else T.torch.einsum(eq, *xs)
    return {"out": L(out), "grads": backprop(T, out, *xs)}


def einsum_errors(T) -> dict:
    rec = {}
    for name, eq, shapes in (("mismatch", "ij,jk->ik", [(2, 3), (4, 4)]),
                             ("operands", "ij,jk->ik", [(2, 3)]),
                             ("rank", "ijk->i", [(2, 3)]),
                             ("output_unknown", "ij->k", [(2, 3)])):
        try:
            T.torch.einsum(eq, *[T.torch.tensor(data(1, *s)) for s in shapes])
            rec[name] = None
        except (RuntimeError, ValueError) as e:
            rec[name] = type(e).__name__
    return rec


# -- init, small layers -------------------------------------------------------------------------
def init_case(T) -> dict:
    init = T.nn.init
    rec = {}
    for old, args in (("normal", (0.0, 0.5)), ("constant", (0.3,)), ("uniform", (-1.0, 1.0)),
                      ("xavier_uniform", ()), ("kaiming_normal", ())):
        T.torch.manual_seed(0)
        got, seen = caught(lambda old=old, args=args: getattr(init, old)(T.torch.zeros(3, 4),
                                                                           *args))
        T.torch.manual_seed(0)
        want = getattr(init, old + "_")(T.torch.zeros(3, 4), *args)
        rec[old] = {"values": L(got), "same": bool((got == want).all()), "warnings": seen}
    for shape, gain in (((3, 5), 1.0), ((5, 3), 1.0), ((4, 2, 3), 2.0), ((4, 4), 0.5)):
        T.torch.manual_seed(0)
        w = init.orthogonal_(T.torch.zeros(*shape), gain=gain)
        rec[f"orthogonal_{shape}_{gain}"] = L(w)
    return rec


def prelu_case(T) -> dict:
    rec = {}
    for n in (1, 3):
        m = T.nn.PReLU(n)
        rec[f"init{n}"] = L(m.weight)
        m.load_state_dict({"weight": T.torch.tensor(data(80 + n, n))})
        x = T.torch.tensor(data(81, 2, 3, 4), requires_grad=True)
        out = m(x)
        rec[f"out{n}"] = L(out)
        rec[f"grads{n}"] = backprop(T, out, x, m.weight)
    rec["repr"] = repr(T.nn.PReLU(3, init=0.1))
    return rec


def functional_case(T) -> dict:
    F = T.F
    x = T.torch.tensor(data(90, 2, 4, 3), requires_grad=True)
    rec = {"glu": L(F.glu(x, dim=1)), "glu_last": L(F.glu(T.torch.tensor(data(91, 3, 6))))}
    rec["glu_grads"] = backprop(T, F.glu(x, dim=1), x)
    x.grad = None
    rec["normalize"] = L(F.normalize(x))
    rec["normalize_p1_dim0"] = L(F.normalize(x, p=1.0, dim=0))
    rec["normalize_last"] = L(F.normalize(x, dim=-1))
    zero = T.torch.tensor(np.zeros((2, 3), np.float32))
    rec["normalize_zero"] = L(F.normalize(zero, dim=1))
    mixed = T.torch.tensor(np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 3.0]], np.float32),
                           requires_grad=True)
    rec["normalize_zero_grads"] = [backprop(T, F.normalize(mixed, p=p, dim=1), mixed)
                                   for p in (2.0, 1.0)]
    mixed.grad = None
    rec["normalize_grads"] = backprop(T, F.normalize(x, p=2.0, dim=1), x)
    return rec


def embedding_bag_case(T) -> dict:
    rec = {}
    ids = T.torch.tensor(np.array([1, 2, 4, 5, 4, 3, 2, 9]))
    offsets = T.torch.tensor(np.array([0, 4]))
    for mode in ("sum", "mean", "max"):
        T.torch.manual_seed(0)
        m = T.nn.EmbeddingBag(10, 3, mode=mode)
        rec[f"init_{mode}"] = L(m.weight)
        load(T, m, 85)
        out = m(ids, offsets)
        rec[mode] = L(out)
        rec[f"{mode}_grads"] = backprop(T, out, m.weight)
        rec[f"{mode}_2d"] = L(m(T.torch.tensor(np.array([[1, 2, 4], [4, 3, 9]]))))
    m = T.nn.EmbeddingBag(10, 3, mode="sum", include_last_offset=True)
    load(T, m, 85)
    rec["last_offset"] = L(m(ids, T.torch.tensor(np.array([0, 3, 8]))))
    rec["empty_bag"] = L(m(ids, T.torch.tensor(np.array([0, 3, 3, 8]))))
    rec["repr"] = repr(T.nn.EmbeddingBag(10, 3, mode="max"))
    return rec


def from_pretrained_case(T) -> dict:
    w = T.torch.tensor(data(86, 4, 3))
    rec = {}
    for freeze in (True, False):
        e = T.nn.Embedding.from_pretrained(w, freeze=freeze)
        rec[f"freeze_{freeze}"] = {"requires_grad": e.weight.requires_grad,
                                   "out": L(e(T.torch.tensor(np.array([[0, 3], [2, 2]])))),
                                   "repr": repr(e)}
    bag = T.nn.EmbeddingBag.from_pretrained(w, mode="mean")
    rec["bag"] = L(bag(T.torch.tensor(np.array([[0, 3], [2, 1]]))))
    rec["bag_requires_grad"] = bag.weight.requires_grad
    return rec


def lazy_linear_case(T) -> dict:
    """Its first call infers in_features and draws the weights; an optimiser made before
    that call trains them."""
    T.torch.manual_seed(0)
    m = T.nn.LazyLinear(4)
    rec = {"repr_before": repr(m), "n_parameters_before": len(list(m.parameters()))}
    opt = T.torch.optim.SGD(m.parameters(), lr=0.1)
    x = T.torch.tensor(data(87, 2, 5))
    out = m(x)
    rec.update({"in_features": m.in_features, "weight": L(m.weight), "bias": L(m.bias),
                "out": L(out), "repr": repr(m), "type": type(m).__name__})
    (out * out).sum().backward()
    opt.step()
    rec["stepped"] = [L(m.weight), L(m.bias)]
    return rec


def nll2d_case(T) -> dict:
    logp = T.F.log_softmax(T.torch.tensor(data(88, 2, 3, 2, 2)), dim=1)
    target = T.torch.tensor(np.array([[[0, 1], [2, 1]], [[2, 2], [0, 1]]]))
    loss, seen = caught(lambda: T.nn.NLLLoss2d()(logp, target))
    return {"loss": L(loss), "warnings": seen}


def clip_norm_case(T) -> dict:
    p = T.torch.tensor(data(89, 4), requires_grad=True)
    (p * T.torch.tensor(data(90, 4))).sum().backward()
    total, seen = caught(lambda: T.nn.utils.clip_grad_norm([p], 0.5))
    return {"total": L(total), "grad": L(p.grad), "warnings": seen}


def all_cases(T) -> dict:
    cases = {f"mha_{name}": mha_case(T, *args) for name, args in MHA_CASES.items()}
    cases["sdpa"] = sdpa_case(T)
    cases.update({f"encoder_layer_{name}": encoder_layer_case(T, *args)
                  for name, args in ENCODER_LAYER_CASES.items()})
    cases["encoder"] = encoder_case(T)
    cases["fast_path"] = fast_path_case(T)
    cases["dropout"] = dropout_case(T)
    cases["decoder"] = decoder_case(T, False)
    cases["decoder_norm_first"] = decoder_case(T, True)
    cases["transformer"] = transformer_case(T)
    cases["training"] = training_case(T)
    cases.update({f"einsum_{name}": einsum_case(T, *args) for name, args in EINSUM_CASES.items()})
    cases["einsum_list_form"] = einsum_case(T, "ij,jk->ik", [(2, 3), (3, 4)], list_form=True)
    cases["einsum_errors"] = einsum_errors(T)
    cases["init"] = init_case(T)
    cases["prelu"] = prelu_case(T)
    cases["functional"] = functional_case(T)
    cases["embedding_bag"] = embedding_bag_case(T)
    cases["from_pretrained"] = from_pretrained_case(T)
    cases["lazy_linear"] = lazy_linear_case(T)
    cases["nll2d"] = nll2d_case(T)
    cases["clip_grad_norm"] = clip_norm_case(T)
    return cases


def main() -> None:
    import torch
    import torch.nn.functional as F  # noqa: N812 - torch's spelling
    from torch import nn

    T = namespaces(torch, nn, F)
    out = {"torch": torch.__version__, "cases": all_cases(T)}
    path = Path(__file__).with_name("torch_layers.json")
    path.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(out['cases'])} cases)")


if __name__ == "__main__":
    main()
