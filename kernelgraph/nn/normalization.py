"""Normalisation layers as PyTorch's: ``BatchNorm1d``, ``BatchNorm2d`` (batch statistics
in training, running statistics in ``eval()``, PyTorch's momentum update with the unbiased
variance) and ``LayerNorm``, plus ``F.batch_norm`` / ``F.layer_norm``-style helpers.

>>> import kernelgraph as kg
>>> bn = kg.nn.BatchNorm1d(2)
>>> y = bn(kg.tensor([[1.0, 2.0], [3.0, 6.0]]))
>>> [round(v, 4) for v in y.tolist()[0]], bn.running_mean.tolist()
([-1.0, -1.0], [0.20000000298023224, 0.4000000059604645])
>>> bn
BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
"""

from __future__ import annotations

import numpy as np

from .. import ops as O
from ..eager import Tensor, no_grad, tensor
from ..graph import Node, shape_str
from ..ops import batch_norm as BN
from . import functional as F
from .init import copy_into
from .layers import as_input, float_dtype, positive_int, shape_of
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm"]


def _normalize(x, mean, var, eps: float):
    return (x - mean) / O.sqrt(var + eps)


class _BatchNorm(Module):
    _ranks: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, bias: bool = True):
        super().__init__()
        what = type(self).__name__
        self.num_features = positive_int(what, "num_features", num_features)
        self.eps, self.momentum = eps, momentum
        self.affine, self.track_running_stats, self.use_bias = affine, track_running_stats, bias
        c, dt = self.num_features, float_dtype(what, dtype)
        self.register_parameter("weight", tensor(np.ones(c, dt)) if affine else None)
        self.register_parameter("bias", tensor(np.zeros(c, dt)) if affine and bias else None)
        if track_running_stats:
            self.register_buffer("running_mean", tensor(np.zeros(c, dt)))
            self.register_buffer("running_var", tensor(np.ones(c, dt)))
            self.register_buffer("num_batches_tracked", tensor(np.array(0, np.int64)))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            copy_into(self.running_mean, np.zeros(self.num_features))
            copy_into(self.running_var, np.ones(self.num_features))
            copy_into(self.num_batches_tracked, np.array(0))

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        what = type(self).__name__
        x = as_input(what, x)
        shape = shape_of(x)
        if shape is not None and (len(shape) not in self._ranks or
                                  shape[1] not in (None, self.num_features)):
            want = " or ".join(f"{r}D" for r in self._ranks)
            raise ValueError(f"{what}: expected {want} input with {self.num_features} "
                             f"channels (dim 1), got {shape_str(shape)}")
        rank = len(shape) if shape is not None else self._ranks[-1]
        axes = tuple(a for a in range(rank) if a != 1)
        view = (1, -1) + (1,) * (rank - 2)
        use_batch = self.training or not self.track_running_stats
        weight, bias = self._parameters["weight"], self._parameters["bias"]
        if shape is not None and shape[1] is not None and x.dtype in (np.float32, np.float64) \
                and all(p is None or p.dtype == x.dtype for p in (weight, bias)):
            return self._fused(x, shape, weight, bias, use_batch)
        if use_batch:
            mean = O.mean(x, axis=axes, keepdims=True)
            var = O.mean(O.square(x - mean), axis=axes, keepdims=True)
            if self.training and self.track_running_stats:
                self._update_running(x, mean, var, shape, axes)
        else:  # (in a graph: the running statistics when the graph is built, as constants)
            mean = O.reshape(F._as(x, self.running_mean), shape=view)
            var = O.reshape(F._as(x, self.running_var), shape=view)
        y = _normalize(x, mean, var, self.eps)
        if weight is not None:
            y = y * O.reshape(self.weight, shape=view)
        if bias is not None:
            y = y + O.reshape(self.bias, shape=view)
        return y

    def _fused(self, x, shape, weight, bias, use_batch: bool):
        """The fused ops (:mod:`kernelgraph.ops.batch_norm`): the statistics in one sweep,
        the normalisation in one more, and one sweep each way in the backward."""
        c, dtype = shape[1], np.dtype(x.dtype)
        # (self.weight, not the stored tensor: in a graph, the module's variable)
        weight = self.weight if weight is not None else F._as(x, tensor(np.ones(c, dtype)))
        bias = self.bias if bias is not None else F._as(x, tensor(np.zeros(c, dtype)))
        if use_batch:
            stats = BN.batch_norm_stats(x, eps=self.eps)
            if self.training and self.track_running_stats:
                axes = tuple(a for a in range(len(shape)) if a != 1)
                self._update_running(x, stats[0], stats[1], shape, axes)
        else:
            var = F._as(x, self.running_var)
            stats = O.stack([F._as(x, self.running_mean), var, O.rsqrt(var + self.eps)])
        return BN.batch_norm(x, stats, weight, bias, eps=self.eps, training=use_batch)

    def _update_running(self, x, mean, var, shape, axes) -> None:
        if not isinstance(x, Tensor):
            raise NotImplementedError(
                f"{type(self).__name__} in a graph in training mode: kernelgraph does not "
                "update the running statistics in static mode; call eval() before building "
                "the graph (running statistics), or train eagerly")
        n = int(np.prod([shape[a] for a in axes]))
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {shape_str(shape)}")
        with no_grad():
            self.num_batches_tracked._array = self.num_batches_tracked._array + 1
            m = self.momentum if self.momentum is not None else \
                1.0 / float(self.num_batches_tracked.item())
            unbiased = O.reshape(var.detach(), shape=(-1,)) * (n / (n - 1))
            copy_into(self.running_mean, (1 - m) * self.running_mean
                      + m * O.reshape(mean.detach(), shape=(-1,)))
            copy_into(self.running_var, (1 - m) * self.running_var + m * unbiased)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.affine and self.use_bias}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs over all but dim 1
    (``torch.nn.BatchNorm1d``)."""

    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs per channel (``torch.nn.BatchNorm2d``).

    >>> import kernelgraph as kg
    >>> kg.nn.BatchNorm2d(3)(kg.ones(2, 3, 4, 4)).shape
    torch.Size([2, 3, 4, 4])
    """

    _ranks = (4,)


class LayerNorm(Module):
    """Normalise over the last dims ``normalized_shape`` (``torch.nn.LayerNorm``), then scale
    and shift elementwise.

    >>> import kernelgraph as kg
    >>> [round(v, 4) for v in kg.nn.LayerNorm(2)(kg.tensor([[1.0, 3.0]])).tolist()[0]]
    [-1.0, 1.0]
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(d) for d in normalized_shape)
        self.eps, self.elementwise_affine, self.use_bias = eps, elementwise_affine, bias
        shape = self.normalized_shape
        self.register_parameter("weight", tensor(np.ones(shape, np.float32))
                                if elementwise_affine else None)
        self.register_parameter("bias", tensor(np.zeros(shape, np.float32))
                                if elementwise_affine and bias else None)

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        x = as_input("LayerNorm", x)
        shape = shape_of(x)
        k = len(self.normalized_shape)
        if shape is not None and tuple(shape[len(shape) - k:]) != self.normalized_shape:
            raise RuntimeError(f"Given normalized_shape={list(self.normalized_shape)}, expected "
                               f"input with shape [*, {', '.join(map(str, self.normalized_shape))}"
                               f"], but got input of size {shape_str(shape)}")
        axes = tuple(range(-k, 0))
        mean = O.mean(x, axis=axes, keepdims=True)
        var = O.mean(O.square(x - mean), axis=axes, keepdims=True)
        y = _normalize(x, mean, var, self.eps)
        if self._parameters["weight"] is not None:
            y = y * self.weight
        if self._parameters["bias"] is not None:
            y = y + self.bias
        return y

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.use_bias}")
