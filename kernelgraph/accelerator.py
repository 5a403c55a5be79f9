"""``kg.accelerator`` (``torch.accelerator``): is there a GPU, and which kind, as PyTorch's
quickstart asks (``device = torch.accelerator.current_accelerator().type if
torch.accelerator.is_available() else "cpu"``).

>>> import kernelgraph as kg
>>> device = kg.accelerator.current_accelerator().type if kg.accelerator.is_available() \\
...     else "cpu"
>>> device in ("cpu", "cuda")
True
"""

from __future__ import annotations

from . import devices

__all__ = ["current_accelerator", "device_count", "is_available", "synchronize"]


def is_available() -> bool:
    """True when a CUDA device (or numba's simulator) can run kernels here."""
    return devices.cuda_is_available()


def current_accelerator(check_available: bool = False) -> devices.Device | None:
    """``device('cuda:0')`` when CUDA is available, else None (PyTorch's answer on a
    machine without an accelerator)."""
    return devices.device("cuda") if is_available() else None


def device_count() -> int:
    """How many CUDA devices there are (0 without one)."""
    return devices.cuda_device_count()


def synchronize(device=None) -> None:
    """Wait for the queued GPU work to finish."""
    devices.cuda_synchronize()
