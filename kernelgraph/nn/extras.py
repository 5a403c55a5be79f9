"""Smaller PyTorch layers composed of public ops: ``PReLU`` (``F.prelu``), ``F.glu``,
``F.normalize``, ``EmbeddingBag``, ``LazyLinear`` and the deprecated ``NLLLoss2d``.

>>> import kernelgraph as kg
>>> import kernelgraph.nn.functional as F
>>> kg.nn.PReLU()(kg.tensor([-2.0, 3.0])).tolist()
[-0.5, 3.0]
>>> F.normalize(kg.tensor([[3.0, 4.0]])).tolist()
[[0.6000000238418579, 0.800000011920929]]
>>> bag = kg.nn.EmbeddingBag.from_pretrained(kg.tensor([[1.0], [2.0], [4.0]]), mode="sum")
>>> bag(kg.tensor([0, 1, 2, 2]), kg.tensor([0, 3])).tolist()
[[7.0], [4.0]]
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes as D
from .. import ops as O
from ..eager import Tensor
from ..errors import shown
from ..graph import Node, shape_str
from . import init
from .attention import _const
from .layers import Linear, as_input, empty, float_dtype, positive_int, shape_of
from .loss import NLLLoss
from .module import Module

__all__ = ["EmbeddingBag", "LazyLinear", "NLLLoss2d", "PReLU", "glu", "normalize", "prelu"]


def _dim(what: str, dim: int, rank: int) -> int:
    if not -rank <= dim < max(rank, 1):
        raise IndexError(f"{what}: Dimension out of range (expected to be in range of "
                         f"[{-rank}, {rank - 1}], but got {dim})")
    return dim % rank


def prelu(input, weight):  # noqa: A002 - torch's names
    """``x`` where positive, ``weight * x`` elsewhere; ``weight`` holds one slope or one per
    channel (dim 1) (``torch.nn.functional.prelu``).

    >>> import kernelgraph as kg
    >>> kg.nn.functional.prelu(kg.tensor([[-1.0, -1.0]]), kg.tensor([0.1, 0.2])).tolist()
    [[-0.10000000149011612, -0.20000000298023224]]
    """
    x, w = as_input("prelu", input), as_input("prelu", weight)
    shape, ws = shape_of(x), shape_of(w)
    n = 1 if not ws else ws[0]
    if n != 1:
        if shape is None or len(shape) < 2 or shape[1] != n:
            got = "unknown" if shape is None or len(shape) < 2 else shape[1]
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {got}.")
        w = O.reshape(w, shape=(n, *[1] * (len(shape) - 2)))
    elif ws:
        w = O.reshape(w, shape=())
    return O.where(O.greater(x, 0.0), x, w * x)


class PReLU(Module):
    """Leaky ReLU with learned slopes (``torch.nn.PReLU``): ``num_parameters`` slopes (1, or
    one per channel of dim 1), each starting at ``init`` (0.25).

    >>> import kernelgraph as kg
    >>> kg.nn.PReLU(3, init=0.1)
    PReLU(num_parameters=3)
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = positive_int("PReLU", "num_parameters", num_parameters)
        self.init = float(init)
        self.register_parameter("weight", empty(float_dtype("PReLU", dtype), num_parameters))
        self.reset_parameters()
        if device is not None:
            self.to(device)

    def reset_parameters(self) -> None:
        init.constant_(self._parameters["weight"], self.init)

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


def glu(input, dim: int = -1):  # noqa: A002
    """Gated linear unit: split ``input`` in halves a, b along ``dim``; ``a * sigmoid(b)``
    (``torch.nn.functional.glu``).

    >>> import kernelgraph as kg
    >>> kg.nn.functional.glu(kg.tensor([[2.0, 0.0]])).tolist()
    [[1.0]]
    """
    x = as_input("glu", input)
    shape = shape_of(x)
    if shape is None:
        raise ValueError("glu: the input's rank must be known")
    if not shape:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _dim("glu", dim, len(shape))
    if shape[d] is None or shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{shape[d]}")
    a, b = O.split(x, 2, axis=d)
    return a * O.sigmoid(b)


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None):  # noqa: A002
    """``input`` divided by its ``p``-norm along ``dim``, the norm held at least ``eps``
    (``torch.nn.functional.normalize``): unit rows by default.

    >>> import kernelgraph as kg
    >>> kg.nn.functional.normalize(kg.tensor([[1.0, -1.0]]), p=1).tolist()
    [[0.5, -0.5]]
    """
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported by kernelgraph")
    x = as_input("normalize", input)
    shape = shape_of(x)
    if shape is None:
        raise ValueError("normalize: the input's rank must be known")
    d = _dim("normalize", dim, len(shape)) if shape else None
    p = float(p)
    if math.isinf(p):
        norm = O.maximum(O.max(O.abs(x), axis=d, keepdims=True) if p > 0 else
                         -O.max(-O.abs(x), axis=d, keepdims=True), eps)
    else:
        # max(|x|_p, eps) as (max(sum |x|^p, eps^p))^(1/p): the same value, and at a zero
        # vector no gradient flows through the norm (as through PyTorch's clamp_min) rather
        # than 0 * inf = NaN; the gradient is then 1/eps, as PyTorch's
        powered = O.square(x) if p == 2.0 else O.pow(O.abs(x), p)
        total = O.maximum(O.sum(powered, axis=d, keepdims=True), eps ** p)
        norm = O.sqrt(total) if p == 2.0 else O.pow(total, 1.0 / p)
    return x / norm


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings (``torch.nn.EmbeddingBag``), without
    building the (bag, size, dim) tensor in the user's code: ``input`` (B, N) makes B bags of
    N ids; a 1-D ``input`` with ``offsets`` (B,) makes bag i of the ids from ``offsets[i]``
    to the next offset (``include_last_offset``: ``offsets`` holds B + 1 boundaries). An empty
    bag gives zeros. ``per_sample_weights`` scale each id's row (``mode="sum"`` only).
    ``weight`` (num_embeddings, embedding_dim) starts N(0, 1). The offsets must be values
    (an eager tensor or a list), also when ``input`` is a graph node; ``max_norm`` and
    ``padding_idx`` are not supported.

    >>> import kernelgraph as kg
    >>> kg.nn.EmbeddingBag(10, 3)(kg.tensor([[1, 2], [3, 4]])).shape
    torch.Size([2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm=None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx=None, device=None, dtype=None):
        super().__init__()
        if max_norm is not None or padding_idx is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError("EmbeddingBag: max_norm, padding_idx, scale_grad_by_freq "
                                      "and sparse are not supported by kernelgraph")
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"mode has to be one of sum, mean or max, got {shown(mode)}")
        self.num_embeddings = positive_int("EmbeddingBag", "num_embeddings", num_embeddings)
        self.embedding_dim = positive_int("EmbeddingBag", "embedding_dim", embedding_dim)
        self.mode, self.include_last_offset = mode, bool(include_last_offset)
        self.max_norm, self.norm_type, self.padding_idx = None, norm_type, None
        if _weight is None:
            dtype = float_dtype("EmbeddingBag", dtype)
            self.register_parameter("weight", empty(dtype, num_embeddings, embedding_dim))
            init.normal_(self._parameters["weight"])
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.register_parameter("weight", _weight.detach())
        if device is not None:
            self.to(device)

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, max_norm=None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False,
                        include_last_offset: bool = False, padding_idx=None) -> EmbeddingBag:
        """An EmbeddingBag whose weight is ``embeddings`` (2-D; sharing its storage), frozen
        (no gradient) unless ``freeze=False``."""
        embeddings = as_input("EmbeddingBag.from_pretrained", embeddings)
        if len(tuple(embeddings.shape)) != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = tuple(embeddings.shape)
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  _weight=embeddings, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag

    def _bags(self, n_ids: int, offsets) -> tuple[np.ndarray, np.ndarray]:
        """(positions (B, M) into the ids, valid (B, M)) for the bags the offsets cut."""
        if isinstance(offsets, Node) and not isinstance(offsets, Tensor):
            raise NotImplementedError("EmbeddingBag: offsets must be values (an eager tensor "
                                      "or a list), not a graph node")
        off = np.asarray(offsets.detach().cpu().numpy() if isinstance(offsets, Tensor)
                         else offsets)
        if off.ndim != 1 or off.dtype.kind not in "iu":
            raise ValueError(f"EmbeddingBag: offsets has to be a 1D integer tensor, got "
                             f"{off.dtype.name} of shape {shape_str(off.shape)}")
        if off.size and off[0] != 0:
            raise ValueError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                             f"mini-batch has to start from position 0. However, got {off[0]}")
        ends = np.append(off[1:], n_ids) if not self.include_last_offset else off[1:]
        starts = off if not self.include_last_offset else off[:-1]
        if (np.diff(off) < 0).any() or (ends > n_ids).any():
            raise ValueError(f"EmbeddingBag: offsets must be non-decreasing and at most the "
                             f"number of ids ({n_ids}), got {off.tolist()}")
        size = max(int((ends - starts).max()) if starts.size else 0, 1)
        pos = starts[:, None] + np.arange(size)[None, :]
        valid = pos < ends[:, None]
        return np.where(valid, pos, 0).astype(np.int64), valid

    def forward(self, input, offsets=None, per_sample_weights=None):  # noqa: A002
        ids = as_input("EmbeddingBag", input)
        if ids.dtype not in D.INTS:
            raise TypeError(f"EmbeddingBag: expected integer ids (int32 or int64), got "
                            f"{ids.dtype.name}")
        shape = shape_of(ids)
        if shape is None or len(shape) not in (1, 2):
            raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                             f"{'unknown' if shape is None else len(shape)}")
        if per_sample_weights is not None and self.mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                      f"per_sample_weights is only supported for mode='sum' "
                                      f"(got mode='{self.mode}'). Please open a feature request "
                                      f"on GitHub.")
        if isinstance(ids, Tensor) and ids.numel():
            host = ids.detach().cpu().numpy()
            bad = host[(host < 0) | (host >= self.num_embeddings)]
            if bad.size:
                raise IndexError(f"EmbeddingBag: ids must be in [0, {self.num_embeddings}), "
                                 f"got {int(bad[0])}")
        weights = None if per_sample_weights is None else as_input("EmbeddingBag",
                                                                   per_sample_weights)
        if len(shape) == 2:
            if offsets is not None:
                raise ValueError("if input is 2D, then offsets has to be None, as input is "
                                 "treated is a mini-batch of fixed length sequences.")
            valid = None
        else:
            if offsets is None:
                raise ValueError("offsets has to be a 1D Tensor but got None")
            if shape[0] is None:
                raise ValueError("EmbeddingBag: the number of ids must be known")
            pos, valid = self._bags(shape[0], offsets)
            ids = O.gather(ids, _const(self.weight, pos))
            if weights is not None:
                weights = O.gather(weights, _const(self.weight, pos))
        rows = O.embedding(self.weight, ids)                          # (B, M, D)
        return self._reduce(rows, valid, weights)

    def _reduce(self, rows, valid, weights):
        dtype = np.dtype(self.weight.dtype.name)
        if weights is not None:
            rows = rows * O.reshape(weights, shape=(*tuple(shape_of(weights)), 1))
        if self.mode == "max":
            if valid is None:
                return O.max(rows, axis=1)
            picked = O.where(_const(rows, valid[:, :, None]), rows,
                             _const(rows, np.array(-np.inf, dtype)))
            full = _const(rows, valid.any(axis=1)[:, None])
            return O.where(full, O.max(picked, axis=1), _const(rows, np.zeros((), dtype)))
        if valid is not None:
            rows = rows * _const(rows, valid[:, :, None].astype(dtype))
        total = O.sum(rows, axis=1)
        if self.mode == "sum":
            return total
        count = shape_of(rows)[1] if valid is None else \
            _const(rows, np.maximum(valid.sum(axis=1), 1)[:, None].astype(dtype))
        return total / count

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"


class LazyLinear(Linear):
    """A :class:`~kernelgraph.nn.Linear` whose ``in_features`` is the last dim of its first
    input (``torch.nn.LazyLinear``). Until then ``weight`` is an empty (out, 0) parameter
    (PyTorch's is an ``UninitializedParameter``); the first call gives it its shape in place
    (the same tensor objects, so an optimiser made before trains them, as in PyTorch) and
    initialises weight and bias from PyTorch's generator as ``Linear`` does; the module then
    *is* a ``Linear``.

    >>> import kernelgraph as kg
    >>> layer = kg.nn.LazyLinear(4)
    >>> layer(kg.ones(2, 7)).shape, layer
    (torch.Size([2, 4]), Linear(in_features=7, out_features=4, bias=True))
    """

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = positive_int("LazyLinear", "out_features", out_features)
        dtype = float_dtype("LazyLinear", dtype)
        self.register_parameter("weight", empty(dtype, self.out_features, 0))
        self.register_parameter("bias", empty(dtype, self.out_features) if bias else None)
        if device is not None:
            self.to(device)

    def forward(self, x):
        x = as_input("LazyLinear", x)
        shape = shape_of(x)
        if shape is None or not shape or shape[-1] is None:
            raise ValueError(f"LazyLinear: the input's last dim must be known to infer "
                             f"in_features, got {'unknown' if shape is None else shape_str(shape)}")
        self.in_features = int(shape[-1])
        weight = self._parameters["weight"]
        weight.data = empty(weight.dtype, self.out_features, self.in_features).to(weight.device)
        self.reset_parameters()
        self.__class__ = Linear  # PyTorch's cls_to_become
        return self.forward(x)


class NLLLoss2d(NLLLoss):
    """PyTorch's deprecated name of :class:`~kernelgraph.nn.NLLLoss` for log-probabilities
    (N, C, H, W) and class ids (N, H, W); it warns as PyTorch does.

    >>> import kernelgraph as kg, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     loss = kg.nn.NLLLoss2d()(kg.zeros(1, 2, 1, 1), kg.tensor([[[1]]]))
    >>> loss.item()
    0.0
    """

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see https://pytorch.org/docs/main/nn.html#torch.nn."
                      "NLLLoss for more details.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)

    def forward(self, input, target):  # noqa: A002
        x, t = as_input("NLLLoss2d", input), as_input("NLLLoss2d", target)
        xs, ts = shape_of(x), shape_of(t)
        if xs is None or len(xs) != 4 or ts is None or len(ts) != 3 or None in xs:
            return super().forward(x, t)
        n, c, h, w = xs
        if tuple(ts) != (n, h, w):
            raise ValueError(f"Expected target size {shape_str((n, h, w))}, got "
                             f"{shape_str(ts)}")
        flat = O.reshape(O.transpose(x, perm=(0, 2, 3, 1)), shape=(n * h * w, c))
        loss = super().forward(flat, O.reshape(t, shape=(n * h * w,)))
        return O.reshape(loss, shape=(n, h, w)) if self.reduction == "none" else loss

