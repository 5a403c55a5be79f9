"""``kg.nn.utils`` (``torch.nn.utils``): gradient clipping and :mod:`.rnn` (packed
sequences).

``clip_grad_norm_`` and ``clip_grad_value_`` change the ``.grad`` of eager parameters in
place, with PyTorch's formulas: the total norm is the norm of the per-parameter norms, and
every gradient is scaled by ``min(1, max_norm / (total + 1e-6))``.

>>> import kernelgraph as kg
>>> w = kg.tensor([3.0, 4.0], requires_grad=True)
>>> (w * w / 2).sum().backward()                          # grad = w: norm 5
>>> round(kg.nn.utils.clip_grad_norm_([w], max_norm=1.0).item(), 4)
5.0
>>> [round(v, 4) for v in w.grad.tolist()]
[0.6, 0.8]
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ... import devices
from ...eager import Tensor, no_grad, tensor
from . import rnn

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "rnn"]


def _grads(parameters) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale the gradients of ``parameters`` (a tensor or an iterable of them) so that their
    total ``norm_type``-norm is at most ``max_norm``; returns the total norm before clipping
    (``torch.nn.utils.clip_grad_norm_``)."""
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return tensor(np.array(0.0, np.float32))
    arrays = [devices.to_numpy(g._array) for g in grads]
    dtype = arrays[0].dtype
    if math.isinf(norm_type):
        norms = np.array([np.abs(a).max() if a.size else 0 for a in arrays], dtype)
        total = norms.max()
    else:
        norms = np.array([np.sum(np.abs(a.astype(np.float64)) ** norm_type) ** (1 / norm_type)
                          for a in arrays], dtype)
        total = dtype.type(np.sum(norms.astype(np.float64) ** norm_type) ** (1 / norm_type))
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           f"`parameters` is non-finite, so it cannot be clipped. To disable "
                           f"this error and scale the gradients by the non-finite norm "
                           f"anyway, set `error_if_nonfinite=False`")
    coef = min(dtype.type(max_norm) / (total + dtype.type(1e-6)), dtype.type(1.0))
    with no_grad():
        for g in grads:
            g.mul_(float(coef))
    return tensor(np.asarray(total, dtype))


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """PyTorch's old spelling of :func:`clip_grad_norm_`, which it calls after PyTorch's
    FutureWarning (``torch.nn.utils.clip_grad_norm``)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient of ``parameters`` into [-clip_value, clip_value] in place
    (``torch.nn.utils.clip_grad_value_``).

    >>> import kernelgraph as kg
    >>> w = kg.tensor([3.0, -4.0], requires_grad=True)
    >>> (w * w / 2).sum().backward()
    >>> kg.nn.utils.clip_grad_value_(w, 1.0); w.grad.tolist()
    [1.0, -1.0]
    """
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
