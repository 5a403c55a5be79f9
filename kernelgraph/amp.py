"""``torch.amp`` / ``torch.autocast``: mixed precision, as far as kernelgraph can compute it.

PyTorch's autocast runs chosen ops (matrix products, convolutions) in float16 or bfloat16
inside the block. kernelgraph's kernels compute in float32 and float64 only (it has no
bfloat16 dtype and no float16 arithmetic), so:

- ``autocast(device_type, enabled=False)`` is an honest no-op, as in PyTorch;
- ``autocast(...)`` enabled with ``dtype=torch.float32`` (or float64) runs the block
  unchanged: the ops already compute in that precision;
- enabled with float16 or bfloat16 (the defaults of ``'cuda'`` and ``'cpu'``) raises
  ``RuntimeError`` saying that kernelgraph cannot compute in that dtype, rather than
  silently computing in float32 and pretending otherwise.

:class:`GradScaler` scales the loss to keep float16 gradients from underflowing. With
``enabled=False`` it is the identity, as PyTorch's: ``scale(loss)`` is ``loss``,
``step(opt)`` is ``opt.step()``, ``update()`` does nothing; enabled, it scales by
``init_scale``, unscales before stepping, skips steps with inf/NaN gradients and adjusts the
scale as PyTorch's does (without float16 gradients, it never needs to).

>>> import kernelgraph as kg
>>> with kg.autocast("cpu", enabled=False):
...     y = kg.ones(2) * 2
>>> scaler = GradScaler(enabled=False)
>>> scaler.scale(kg.tensor(3.0)).item(), scaler.get_scale()
(3.0, 1.0)
"""

from __future__ import annotations

import math

import numpy as np

from . import devices
from .eager.grad_mode import no_grad

__all__ = ["GradScaler", "autocast", "is_autocast_available"]

_DEFAULT_DTYPE = {"cuda": "float16", "cpu": "bfloat16"}


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` can lower precision on ``device_type``: never, in kernelgraph."""
    return False


class autocast:  # noqa: N801 - PyTorch's name
    """``with torch.autocast(device_type, dtype=None, enabled=True):`` (see the module's
    docstring: a no-op when disabled or at float32/float64, an error for float16/bfloat16).
    Also usable as a decorator."""

    def __init__(self, device_type: str = "cuda", dtype=None, enabled: bool = True,
                 cache_enabled=None):
        if not isinstance(device_type, str) or device_type not in ("cpu", "cuda"):
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}' (expected 'cpu' or 'cuda')")
        self.device_type, self.enabled = device_type, bool(enabled)
        name = _DEFAULT_DTYPE[device_type] if dtype is None else \
            getattr(dtype, "name", None) or str(dtype).removeprefix("torch.")
        self.fast_dtype = name
        if self.enabled and name not in ("float32", "float64"):
            raise RuntimeError(f"autocast to {name}: kernelgraph computes in float32 and "
                               f"float64 only, so it cannot run ops in {name}; use "
                               f"autocast(..., enabled=False) (or dtype=torch.float32)")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        wrapped.__wrapped__ = fn
        return wrapped


class GradScaler:
    """``torch.amp.GradScaler(device='cuda', init_scale=2.**16, growth_factor=2.,
    backoff_factor=.5, growth_interval=2000, enabled=True)`` (see the module's docstring)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        self._enabled = bool(enabled)
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = growth_factor, backoff_factor
        self._growth_interval, self._growth_tracker = growth_interval, 0
        self._unscaled: set = set()
        self._found_inf: dict = {}

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled, as PyTorch)."""
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        """``outputs * scale`` (a tensor or nested lists/tuples of them); unchanged when
        disabled."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, list | tuple):
            return type(outputs)(self.scale(o) for o in outputs)
        return outputs * self._scale

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale (once per step), noting inf/NaN."""
        if not self._enabled:
            return
        if id(optimizer) in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        inv, found = 1.0 / self._scale, False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    values = devices.to_numpy(p.grad._array)
                    found = found or not bool(np.isfinite(values).all())
                    p.grad.mul_(inv)
        self._unscaled.add(id(optimizer))
        self._found_inf[id(optimizer)] = found

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` after unscaling, skipped when a gradient is inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if self._found_inf.get(id(optimizer)):
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        """Back the scale off after a step with inf/NaN gradients, grow it after
        ``growth_interval`` clean steps (or set ``new_scale``)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if hasattr(new_scale, "item") else new_scale)
        elif any(self._found_inf.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                grown = self._scale * self._growth_factor
                self._scale = grown if math.isfinite(grown) else self._scale
                self._growth_tracker = 0
        self._unscaled.clear()
        self._found_inf.clear()

    def state_dict(self) -> dict:
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker} if self._enabled else {}

    def load_state_dict(self, state: dict) -> None:
        if not self._enabled:
            return
        self._scale = float(state["scale"])
        self._growth_factor, self._backoff_factor = state["growth_factor"], \
            state["backoff_factor"]
        self._growth_interval = state["growth_interval"]
        self._growth_tracker = state["_growth_tracker"]
