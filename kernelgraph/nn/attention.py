"""Attention as PyTorch computes it: ``F.scaled_dot_product_attention`` and
``nn.MultiheadAttention`` (with its ``out_proj``, a ``NonDynamicallyQuantizableLinear``).

Both are compositions of public ops (linear maps, batched matmul, softmax, dropout, masks
turned into additive -inf terms), so they run in both modes and have gradients without a
kernel of their own.

>>> import kernelgraph as kg
>>> _ = kg.manual_seed(0)
>>> mha = kg.nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True)
>>> x = kg.randn(2, 5, 8)                      # (batch, sequence, embedding)
>>> out, weights = mha(x, x, x)
>>> out.shape, weights.shape                   # weights averaged over the heads
(torch.Size([2, 5, 8]), torch.Size([2, 5, 5]))
>>> sorted(mha.state_dict())
['in_proj_bias', 'in_proj_weight', 'out_proj.bias', 'out_proj.weight']
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from .. import ops as O
from ..eager import Tensor, tensor
from ..graph import Node, shape_str
from ..static.variables import constant
from . import functional as F
from . import init
from .layers import Linear, as_input, empty, positive_int, shape_of
from .module import Module

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear",
           "scaled_dot_product_attention"]


def _const(ref, array: np.ndarray):
    """A constant beside ``ref``: an eager tensor on ``ref``'s device, or a constant of
    ``ref``'s graph."""
    if isinstance(ref, Node) and not isinstance(ref, Tensor):
        with ref.graph.as_default():
            return constant(array)
    return tensor(array, device=ref.device)


def _is_bool(mask) -> bool:
    return mask.dtype == D.bool_


def additive_mask(mask, ref, allowed_when_true: bool):
    """``mask`` as a float term added to attention scores: a bool mask gives -inf where
    attending is not allowed (PyTorch: True means *allowed* for scaled_dot_product_attention,
    *not allowed* for MultiheadAttention's masks); a float mask is added as it is."""
    if mask is None:
        return None
    mask = as_input("attention mask", mask)
    if isinstance(mask, Tensor) and isinstance(ref, Node) and not isinstance(ref, Tensor):
        mask = _const(ref, mask.detach().cpu().numpy())  # a mask given as values
    if not _is_bool(mask):
        return mask
    blocked = O.logical_not(mask) if allowed_when_true else mask
    return O.where(blocked, _const(ref, np.array(-np.inf, np.dtype(ref.dtype.name))),
                   _const(ref, np.array(0.0, np.dtype(ref.dtype.name))))


def _causal(ref, n_q: int, n_k: int):
    lower = np.tril(np.ones((n_q, n_k), bool))
    return _const(ref, np.where(lower, 0.0, -np.inf).astype(np.dtype(ref.dtype.name)))


def _swap_last(x):
    n = len(shape_of(x))
    return O.transpose(x, perm=(*range(n - 2), n - 1, n - 2))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False):
    """``softmax(q k^T * scale + mask) v`` over the last two dims
    (``torch.nn.functional.scaled_dot_product_attention``): query (..., L, E), key (..., S, E),
    value (..., S, Ev) -> (..., L, Ev). ``scale`` defaults to 1/sqrt(E); a bool ``attn_mask``
    says where attending is *allowed*, a float one is added to the scores; ``is_causal``
    masks the upper triangle; ``dropout_p`` drops attention weights (always, as PyTorch's
    function does: pass 0 in evaluation).

    >>> import kernelgraph as kg
    >>> import kernelgraph.nn.functional as F
    >>> q = k = kg.ones(1, 2, 4); v = kg.tensor([[[1.0], [3.0]]])
    >>> F.scaled_dot_product_attention(q, k, v).tolist()
    [[[2.0], [2.0]]]
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).tolist()
    [[[1.0], [2.0]]]
    """
    query, key, value = (as_input("scaled_dot_product_attention", t)
                         for t in (query, key, value))
    if enable_gqa:
        raise NotImplementedError("scaled_dot_product_attention: enable_gqa is not supported "
                                  "by kernelgraph")
    shapes = [shape_of(t) for t in (query, key, value)]
    if any(s is None or len(s) < 2 for s in shapes):
        raise ValueError("scaled_dot_product_attention: query, key and value need at least 2 "
                         f"dims, got {', '.join(map(shape_str, shapes))}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    scale = 1.0 / math.sqrt(shapes[0][-1]) if scale is None else float(scale)
    scores = O.matmul(query, _swap_last(key)) * scale
    if is_causal:
        scores = scores + _causal(query, shapes[0][-2], shapes[1][-2])
    mask = additive_mask(attn_mask, query, allowed_when_true=True)
    if mask is not None:
        scores = scores + mask
    weights = O.softmax(scores, axis=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p, training=True)
    return O.matmul(weights, value)


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for ``MultiheadAttention.out_proj``: a :class:`~kernelgraph.nn.Linear`
    (``torch.nn.modules.linear.NonDynamicallyQuantizableLinear``; the name only tells
    PyTorch's quantisation to leave it alone).

    >>> import kernelgraph as kg
    >>> kg.nn.MultiheadAttention(4, 2).out_proj
    NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)
    """


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads (``torch.nn.MultiheadAttention``), PyTorch's
    parameters and numbers: ``in_proj_weight`` (3E, E) and ``in_proj_bias`` (3E) (or
    ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight`` when ``kdim``/``vdim`` differ from
    ``embed_dim``), and ``out_proj``; ``in_proj_weight`` starts Glorot-uniform, the biases 0.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` -> ``(output, weights)``: inputs
    (L, N, E) (``(N, L, E)`` with ``batch_first``, or unbatched (L, E)); a bool mask is True
    where attending is *not* allowed, a float one is added to the scores; ``weights`` are
    (N, L, S) averaged over the heads, (N, H, L, S) with ``average_attn_weights=False``, None
    with ``need_weights=False``. ``add_bias_kv`` and ``add_zero_attn`` are not supported.

    >>> import kernelgraph as kg
    >>> mha = kg.nn.MultiheadAttention(4, 2, kdim=3, vdim=5)
    >>> q, k, v = kg.ones(6, 2, 4), kg.ones(7, 2, 3), kg.ones(7, 2, 5)   # (length, batch, dim)
    >>> out, w = mha(q, k, v, average_attn_weights=False)
    >>> out.shape, w.shape, mha.k_proj_weight.shape
    (torch.Size([6, 2, 4]), torch.Size([2, 2, 6, 7]), torch.Size([4, 3]))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are "
                                      "not supported by kernelgraph")
        self.embed_dim = positive_int("MultiheadAttention", "embed_dim", embed_dim)
        self.num_heads = positive_int("MultiheadAttention", "num_heads", num_heads)
        self.kdim = self.embed_dim if kdim is None else positive_int(
            "MultiheadAttention", "kdim", kdim)
        self.vdim = self.embed_dim if vdim is None else positive_int(
            "MultiheadAttention", "vdim", vdim)
        self._qkv_same_embed_dim = self.kdim == self.embed_dim and self.vdim == self.embed_dim
        self.dropout, self.batch_first = float(dropout), bool(batch_first)
        self.head_dim = self.embed_dim // self.num_heads
        if self.head_dim * self.num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.add_zero_attn = False
        e = self.embed_dim
        dtype = D.as_dtype(dtype) if dtype is not None else D.float32
        if self._qkv_same_embed_dim:
            self.register_parameter("in_proj_weight", empty(dtype, 3 * e, e))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.register_parameter("q_proj_weight", empty(dtype, e, e))
            self.register_parameter("k_proj_weight", empty(dtype, e, self.kdim))
            self.register_parameter("v_proj_weight", empty(dtype, e, self.vdim))
            self.register_parameter("in_proj_weight", None)
        self.register_parameter("in_proj_bias", empty(dtype, 3 * e) if bias else None)
        self.out_proj = NonDynamicallyQuantizableLinear(e, e, bias=bias, dtype=dtype)
        self.bias_k = self.bias_v = None
        self._reset_parameters()
        if device is not None:
            self.to(device)

    def _reset_parameters(self) -> None:
        p = self._parameters
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(p["in_proj_weight"])
        else:
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                init.xavier_uniform_(p[name])
        if p["in_proj_bias"] is not None:
            init.constant_(p["in_proj_bias"], 0.0)
            init.constant_(self.out_proj._parameters["bias"], 0.0)

    def _projections(self):
        if self._qkv_same_embed_dim:
            ws = O.split(self.in_proj_weight, 3, axis=0)
        else:
            ws = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        bs = [None] * 3 if self._parameters["in_proj_bias"] is None else \
            O.split(self.in_proj_bias, 3, axis=0)
        return ws, bs

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True,
                attn_mask=None, average_attn_weights: bool = True, is_causal: bool = False):
        what = "MultiheadAttention"
        query, key, value = (as_input(what, t) for t in (query, key, value))
        shapes = [shape_of(t) for t in (query, key, value)]
        rank = None if shapes[0] is None else len(shapes[0])
        if rank not in (2, 3) or any(s is None or len(s) != rank for s in shapes):
            raise ValueError(f"{what}: query, key and value must all be 3-D (batched) or 2-D "
                             f"(unbatched), got {', '.join(map(shape_str, shapes))}")
        for s, d, name in zip(shapes, (self.embed_dim, self.kdim, self.vdim),
                              ("query", "key", "value"), strict=True):
            if s[-1] is not None and s[-1] != d:
                raise AssertionError(f"{what}: expected {name} of last dim {d}, got "
                                     f"{shape_str(s)}")
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                               "the Transformer module method `generate_square_subsequent_mask` "
                               "to create this mask.")
        if rank == 2:  # unbatched: a batch of one, removed again at the end
            query, key, value = (O.reshape(t, shape=(-1, 1, s[1]))
                                 for t, s in zip((query, key, value), shapes, strict=True))
            if key_padding_mask is not None:
                key_padding_mask = O.reshape(as_input(what, key_padding_mask), shape=(1, -1))
        elif self.batch_first:
            query, key, value = (O.transpose(t, perm=(1, 0, 2)) for t in (query, key, value))
        out, weights = self._attend(query, key, value, key_padding_mask, need_weights,
                                    attn_mask, average_attn_weights)
        if rank == 2:
            out = O.reshape(out, shape=(-1, self.embed_dim))
            if weights is not None:
                weights = O.reshape(weights, shape=tuple(shape_of(weights)[1:]))
        elif self.batch_first:
            out = O.transpose(out, perm=(1, 0, 2))
        return out, weights

    def _attend(self, query, key, value, key_padding_mask, need_weights, attn_mask, average):
        """Sequence-first inputs (L, N, E), (S, N, kdim), (S, N, vdim)."""
        lq, n, _ = shape_of(query)
        s = shape_of(key)[0]
        if lq is None or s is None:
            raise ValueError("MultiheadAttention: the sequence lengths must be known (a graph "
                             "node's batch dim may be unknown)")
        n = -1 if n is None else n
        h, hd = self.num_heads, self.head_dim
        (wq, wk, wv), (bq, bk, bv) = self._projections()

        def heads(x, w, b, length):  # (len, N, E) -> (N, H, len, hd)
            x = F.linear(x, w, b)
            return O.transpose(O.reshape(x, shape=(length, n, h, hd)), perm=(1, 2, 0, 3))

        q, k, v = heads(query, wq, bq, lq), heads(key, wk, bk, s), heads(value, wv, bv, s)
        mask = additive_mask(attn_mask, q, allowed_when_true=False)
        if mask is not None and len(shape_of(mask)) == 3:  # (N * H, L, S)
            mask = O.reshape(mask, shape=(n, h, lq, s))
        pad = additive_mask(key_padding_mask, q, allowed_when_true=False)
        if pad is not None:
            pad = O.reshape(pad, shape=(n, 1, 1, s))
            mask = pad if mask is None else mask + pad
        scores = O.matmul(q * (1.0 / math.sqrt(hd)), _swap_last(k))
        if mask is not None:
            scores = scores + mask
        weights = O.softmax(scores, axis=-1)
        if self.dropout > 0.0:
            weights = F.dropout(weights, self.dropout, training=self.training)
        out = O.matmul(weights, v)                                   # (N, H, L, hd)
        out = O.reshape(O.transpose(out, perm=(2, 0, 1, 3)), shape=(lq, n, self.embed_dim))
        out = self.out_proj(out)
        if not need_weights:
            return out, None
        return out, (O.mean(weights, axis=1) if average else weights)
