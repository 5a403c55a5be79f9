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

from . import cuda, devices

__all__ = ["current_accelerator", "current_device_index", "device_count", "device_index",
           "is_available", "set_device_index", "synchronize"]


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


_NONE = "Cannot access accelerator device when none is available."


def current_device_index() -> int:
    """The current CUDA device's index; raises ``RuntimeError`` without one, as PyTorch."""
    if not is_available():
        raise RuntimeError(_NONE)
    return cuda.current_device()


def set_device_index(device) -> None:
    """Make CUDA device ``device`` current; raises ``RuntimeError`` without one, as PyTorch
    (``torch.accelerator.set_device_index``)."""
    if not is_available():
        raise RuntimeError(_NONE)
    cuda.set_device(device)


class device_index:
    """``with torch.accelerator.device_index(i):`` makes device ``i`` current in the block;
    ``None`` does nothing; any index raises ``RuntimeError`` without an accelerator.

    >>> with device_index(None):
    ...     pass
    """

    def __init__(self, device, /):
        self.idx = device
        self._cm = None

    def __enter__(self):
        if self.idx is None:
            return None
        if not is_available():
            raise RuntimeError(_NONE)
        self._cm = cuda.device(self.idx)
        self._cm.__enter__()
        return None

    def __exit__(self, *exc):
        if self._cm is not None:
            self._cm.__exit__(*exc)
        return False
