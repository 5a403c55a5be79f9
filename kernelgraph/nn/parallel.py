"""``kg.nn.parallel`` (``torch.nn.parallel``): :class:`DataParallel`, :func:`data_parallel`
and :class:`DistributedDataParallel`.

PyTorch's ``DataParallel`` splits each batch across the GPUs of one machine, runs a replica
of the module on each and gathers the outputs. kernelgraph drives at most one GPU per module
call, so ``DataParallel`` runs the whole batch on its first device: on a machine without
CUDA it just calls the module (as PyTorch does there, where ``device_ids`` is ``[]``); with
CUDA it copies the inputs to ``device_ids[0]`` first. What a program observes is PyTorch's:
the wrapped module is ``.module``, ``state_dict()`` keys start with ``'module.'``, the
outputs are those of the module.

>>> import kernelgraph as kg
>>> device = "cuda" if kg.cuda.is_available() else "cpu"
>>> net = kg.nn.DataParallel(kg.nn.Linear(2, 3).to(device))
>>> list(net.state_dict()), type(net.module).__name__
(['module.weight', 'module.bias'], 'Linear')
>>> net(kg.ones(4, 2)).shape
torch.Size([4, 3])
"""

from __future__ import annotations

from .. import devices
from ..eager.tensors import Tensor
from .ddp import DistributedDataParallel
from .module import Module

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


def _device_ids(device_ids) -> list[int]:
    if not devices.cuda_is_available():
        return []  # PyTorch without CUDA: the module is called as it is
    if device_ids is None:
        return list(range(devices.cuda_device_count()))
    ids = []
    for d in device_ids:
        d = devices.device(d) if isinstance(d, str) else d
        ids.append(d.index or 0 if isinstance(d, devices.Device) else int(d))
    return ids


def _to(value, dev):
    """``value`` with every tensor in it (tuples, lists, dicts) moved to ``dev``."""
    if isinstance(value, Tensor):
        return value.to(dev)
    if isinstance(value, tuple | list):
        return type(value)(_to(v, dev) for v in value)
    if isinstance(value, dict):
        return {k: _to(v, dev) for k, v in value.items()}
    return value


class DataParallel(Module):
    """``nn.DataParallel(module, device_ids=None, output_device=None, dim=0)``: calls
    ``module`` on the whole batch, on ``device_ids[0]`` when CUDA is available (see the
    module's docstring). ``output_device`` must be that device (the outputs stay there)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel expects an nn.Module, got {type(module).__name__}")
        self.module = module
        self.device_ids = _device_ids(device_ids)
        if self.device_ids:
            self.dim = dim
            self.output_device = self.device_ids[0] if output_device is None else \
                _device_ids([output_device])[0]
            if self.output_device != self.device_ids[0]:
                raise ValueError(f"kernelgraph's DataParallel runs the batch on one device, "
                                 f"cuda:{self.device_ids[0]}; output_device must be that "
                                 f"device, got cuda:{self.output_device}")
            self.src_device_obj = devices.device(f"cuda:{self.device_ids[0]}")

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        dev = self.src_device_obj
        for p in [*self.module.parameters(), *self.module.buffers()]:
            if p.device != dev:
                raise RuntimeError(f"module must have its parameters and buffers on device "
                                   f"{dev} (device_ids[0]) but found one of them on device: "
                                   f"{p.device}")
        return self.module(*_to(inputs, dev), **_to(kwargs, dev))


def data_parallel(module: Module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):
    """``nn.parallel.data_parallel``: ``module(*inputs, **module_kwargs)`` as
    :class:`DataParallel` would call it.

    >>> import kernelgraph as kg
    >>> device = "cuda" if kg.cuda.is_available() else "cpu"
    >>> data_parallel(kg.nn.Linear(2, 1).to(device), kg.ones(3, 2)).shape
    torch.Size([3, 1])
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return DataParallel(module, device_ids, output_device, dim)(*inputs,
                                                                **(module_kwargs or {}))
