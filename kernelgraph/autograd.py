"""``kg.autograd.backward`` and ``kg.autograd.grad``, as in ``torch.autograd``."""

from .eager import backward, grad

__all__ = ["backward", "grad"]
