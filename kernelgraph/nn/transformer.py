"""PyTorch's transformer modules: ``TransformerEncoderLayer``, ``TransformerDecoderLayer``,
``TransformerEncoder``, ``TransformerDecoder`` and ``Transformer``, built from
:class:`~kernelgraph.nn.MultiheadAttention`, ``Linear``, ``Dropout`` and ``LayerNorm`` in
PyTorch's order, so parameter names, initial values (from PyTorch's generator) and outputs
are PyTorch's.

>>> import kernelgraph as kg
>>> layer = kg.nn.TransformerEncoderLayer(d_model=8, nhead=2, batch_first=True)
>>> encoder = kg.nn.TransformerEncoder(layer, num_layers=2)
>>> encoder(kg.randn(3, 5, 8)).shape
torch.Size([3, 5, 8])
>>> kg.nn.Transformer.generate_square_subsequent_mask(3).tolist()
[[0.0, -inf, -inf], [0.0, 0.0, -inf], [0.0, 0.0, 0.0]]
"""

from __future__ import annotations

import copy
import warnings

import numpy as np

from .. import dtypes as D
from .. import ops as O
from ..eager import Tensor, is_grad_enabled, tensor
from ..graph import shape_str
from . import functional as F
from . import init
from .attention import MultiheadAttention
from .containers import ModuleList
from .layers import Dropout, Linear, as_input, shape_of
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerEncoderLayer"]


def _activation(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual connection and a
    LayerNorm (after it, or before it with ``norm_first``) (``torch.nn.TransformerEncoderLayer``;
    ``dim_feedforward`` 2048 and ``dropout`` 0.1 by default, ``activation`` "relu", "gelu" or
    a callable).

    >>> import kernelgraph as kg
    >>> layer = kg.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    >>> [k for k in layer.state_dict() if k.startswith("self_attn")]
    ['self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight', \
'self_attn.out_proj.bias']
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation_relu_or_gelu = activation in ("relu", "gelu")
        self.activation = _activation(activation)
        if device is not None:
            self.to(device)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        x = as_input("TransformerEncoderLayer", src)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's output (``memory``), then a
    feed-forward block, each with a residual connection and a LayerNorm
    (``torch.nn.TransformerDecoderLayer``).

    >>> import kernelgraph as kg
    >>> layer = kg.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
    >>> layer(kg.randn(4, 2, 8), kg.randn(6, 2, 8)).shape
    torch.Size([4, 2, 8])
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)
        if device is not None:
            self.to(device)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False):
        x = as_input("TransformerDecoderLayer", tgt)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                           memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _nested_reason(layer) -> str:
    """Why PyTorch's encoder would not use nested tensors with this layer ("" if it would)."""
    if not isinstance(layer, TransformerEncoderLayer):
        return "encoder_layer was not TransformerEncoderLayer"
    if layer.norm_first:
        return "encoder_layer.norm_first was True"
    attn = layer.self_attn
    if not attn.batch_first:
        return ("encoder_layer.self_attn.batch_first was not True(use batch_first for better "
                "inference performance)")
    if not attn._qkv_same_embed_dim:
        return "encoder_layer.self_attn._qkv_same_embed_dim was not True"
    if attn._parameters["in_proj_bias"] is None:
        return "encoder_layer.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return "encoder_layer.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return "encoder_layer.norm1.eps was not equal to encoder_layer.norm2.eps"
    if attn.num_heads % 2 == 1:
        return "encoder_layer.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` and an optional final ``norm``
    (``torch.nn.TransformerEncoder``).

    In ``eval()`` mode, with no gradient recorded, a ``src_key_padding_mask`` that pads at
    the end of each sequence and no ``mask``, PyTorch packs the batch into a nested tensor
    and its output holds zeros (then the final norm of zeros) at the padded positions;
    kernelgraph gives those same values there, so evaluation code sees PyTorch's numbers.

    >>> import kernelgraph as kg
    >>> layer = kg.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True)
    >>> encoder = kg.nn.TransformerEncoder(layer, 2).eval()
    >>> pad = kg.tensor([[False, False, True]])                 # the last position is padding
    >>> with kg.no_grad():
    ...     out = encoder(kg.randn(1, 3, 4), src_key_padding_mask=pad)
    >>> out[0, 2].tolist()
    [0.0, 0.0, 0.0, 0.0]
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = int(num_layers)
        self.norm = norm
        self.enable_nested_tensor = self.use_nested_tensor = bool(enable_nested_tensor)
        self.mask_check = mask_check
        why = _nested_reason(encoder_layer)
        if enable_nested_tensor and why:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why}", stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = as_input("TransformerEncoder", src)
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        keep = self._nested_keep(x, mask, src_key_padding_mask)
        if keep is not None:  # +0.0 at padded positions, as PyTorch's padded nested tensor
            x = O.where(keep, x, tensor(np.zeros((), np.dtype(x.dtype.name)), device=x.device))
        return x if self.norm is None else self.norm(x)

    def _nested_keep(self, x, mask, pad):
        """Where PyTorch's nested-tensor path would run: True at real positions, False at
        padded ones (an eager (N, S, 1) tensor); else None."""
        if not (self.use_nested_tensor and not self.training and mask is None
                and pad is not None and isinstance(x, Tensor) and isinstance(pad, Tensor)):
            return None
        if is_grad_enabled() and (x.requires_grad or any(p.requires_grad
                                                         for p in self.parameters())):
            return None
        padded = pad.detach().cpu().numpy()
        if padded.dtype != np.bool_ or padded.ndim != 2:
            return None
        real = ~padded
        if (np.diff(real.astype(np.int8), axis=1) > 0).any():  # padding before a real token
            return None
        return tensor(real[:, :, None], device=x.device)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` and an optional final ``norm``
    (``torch.nn.TransformerDecoder``).

    >>> import kernelgraph as kg
    >>> decoder = kg.nn.TransformerDecoder(kg.nn.TransformerDecoderLayer(4, 2, 8), 2)
    >>> tgt, memory = kg.randn(3, 1, 4), kg.randn(5, 1, 4)
    >>> decoder(tgt, memory, tgt_mask=kg.nn.Transformer.generate_square_subsequent_mask(3)).shape
    torch.Size([3, 1, 4])
    """

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = int(num_layers)
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None,
                memory_is_causal: bool = False):
        x = as_input("TransformerDecoder", tgt)
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """An encoder and a decoder (``torch.nn.Transformer``: ``d_model`` 512, ``nhead`` 8, 6 and
    6 layers, ``dim_feedforward`` 2048, ``dropout`` 0.1 by default); every weight matrix is
    drawn Glorot-uniform, in ``parameters()`` order, as PyTorch draws them.

    >>> import kernelgraph as kg
    >>> model = kg.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
    ...                           num_decoder_layers=1, dim_feedforward=16)
    >>> src, tgt = kg.randn(5, 2, 8), kg.randn(4, 2, 8)
    >>> model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(4)).shape
    torch.Size([4, 2, 8])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", custom_encoder=None, custom_decoder=None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None):
        super().__init__()
        args = dict(dropout=dropout, activation=activation, layer_norm_eps=layer_norm_eps,
                    batch_first=batch_first, norm_first=norm_first, bias=bias, dtype=dtype)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, **args)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, **args)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        for p in self.parameters():
            if len(tuple(p.shape)) > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        if device is not None:
            self.to(device)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal: bool = False):
        src, tgt = as_input("Transformer", src), as_input("Transformer", tgt)
        s, t = shape_of(src), shape_of(tgt)
        if s is not None and t is not None:
            if len(s) == 3 and len(t) == 3:
                b = 0 if self.batch_first else 1
                if None not in (s[b], t[b]) and s[b] != t[b]:
                    raise RuntimeError("the batch number of src and tgt must be equal")
            if self.d_model not in (s[-1], None) or self.d_model not in (t[-1], None):
                raise RuntimeError(f"the feature number of src and tgt must be equal to "
                                   f"d_model, got {shape_str(s)} and {shape_str(t)}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """A float (sz, sz) mask: 0 on and below the diagonal, -inf above it (each position
        may attend to itself and the ones before it)."""
        mask = np.triu(np.full((int(sz), int(sz)), -np.inf, np.float32), 1)
        out = tensor(mask if dtype is None else mask.astype(np.dtype(D.as_dtype(dtype).name)))
        return out if device is None else out.to(device)

