"""``nn.parallel.DistributedDataParallel``: one replica of a module per process of a process
group (:mod:`kernelgraph.distributed.process_group`), kept identical by averaging gradients.

As in PyTorch: at construction rank 0's parameters and buffers are broadcast to every rank;
during each ``backward()`` every parameter's gradient is replaced, before it is added into
``.grad``, by its average over the ranks (an ``all_reduce``); so each rank's optimizer takes
the same step, the one a single process would take on the union of the ranks' batches
(with a loss that averages over the batch). ``no_sync()`` skips the averaging (gradient
accumulation); the first backward after it averages the accumulated
gradients, as PyTorch. PyTorch groups the gradients into buckets and overlaps their reduction
with the backward pass; kernelgraph reduces each parameter's gradient when it is ready, one
``all_reduce`` each, giving the same values.
"""

from __future__ import annotations

import contextlib

from ..distributed import process_group as pg
from ..eager.grad_mode import no_grad
from .module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """``DistributedDataParallel(module)``: call it as the module; ``.module`` is the
    wrapped module (``state_dict()`` keys start with ``'module.'``). Needs
    ``init_process_group`` first. ``device_ids``: None, or on a CUDA module the one device
    it lives on."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters: bool = False, **kwargs):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel expects an nn.Module, got "
                            f"{type(module).__name__}")
        if not pg.is_initialized():
            raise ValueError(pg._NOT_INIT)
        self.module = module
        self.device_ids = device_ids
        self.broadcast_buffers = broadcast_buffers
        self.require_backward_grad_sync = True
        with no_grad():
            for t in [*module.parameters(), *module.buffers()]:
                pg.broadcast(t, 0)
        self._unsynced: set = set()  # ids of parameters with gradients left by no_sync()
        for p in module.parameters():
            if p.requires_grad:
                p.register_hook(self._averager(p))

    def _averager(self, p):
        def average(grad):
            if not self.require_backward_grad_sync:
                self._unsynced.add(id(p))
                return None
            g = grad.detach().clone()
            if id(p) in self._unsynced:  # what no_sync() left in .grad is averaged too
                self._unsynced.discard(id(p))
                if p.grad is not None:
                    g = g + p.grad
                    p.grad.zero_()  # the average is then added to zeros: stored exactly
            pg.all_reduce(g, pg.ReduceOp.SUM)
            return g / pg.get_world_size()
        return average

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers:
            with no_grad():
                for b in self.module.buffers():
                    pg.broadcast(b, 0)
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Inside the block, backward passes leave each rank's gradients its own (they are
        averaged by the first backward outside it, as in PyTorch)."""
        was, self.require_backward_grad_sync = self.require_backward_grad_sync, False
        try:
            yield
        finally:
            self.require_backward_grad_sync = was
