"""``Module.to``, ``.cuda()``, ``.cpu()``, ``.float()``, ``.double()``: a module's
parameters and buffers moved or cast in place (the same tensor objects, as PyTorch keeps
its ``Parameter`` s), so an optimiser made before the move still updates them.

>>> import kernelgraph as kg
>>> net = kg.nn.Linear(2, 1).double()
>>> net.weight.dtype, net(kg.ones(1, 2, dtype=kg.float64)).dtype
(dtype('float64'), dtype('float64'))
"""

from __future__ import annotations

from .. import devices
from .. import dtypes as D
from ..eager import Tensor, no_grad
from ..errors import shown

__all__ = ["DeviceMethods"]


def _to_args(args, kwargs) -> tuple:
    """``(device or None, dtype or None)`` from ``Module.to``'s arguments."""
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    unknown = set(kwargs) - {"device", "dtype", "non_blocking", "copy", "memory_format"}
    if unknown:
        raise TypeError(f"to() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, devices.Device):
            device = a
        elif isinstance(a, int) and not isinstance(a, bool):
            device = f"cuda:{a}"
        elif isinstance(a, str):
            try:
                device = devices.device(a)
            except ValueError:
                dtype = a
        elif a is not None and not isinstance(a, bool):
            dtype = a
    if dtype is not None:
        try:
            dtype = D.as_dtype(dtype)
        except TypeError:
            raise TypeError(f"to() received an invalid combination of arguments: expected a "
                            f"device or a dtype, got {shown(dtype)}") from None
    return (None if device is None else devices.device(device)), dtype



class DeviceMethods:
    """The device and dtype methods of :class:`~kernelgraph.nn.Module` (a mixin: it reads
    ``parameters()`` and ``buffers()``)."""

    def to(self, *args, **kwargs) -> DeviceMethods:
        """Move and/or cast every parameter and buffer in place (the same tensor objects,
        so an optimiser made before still updates them); returns self, as PyTorch:
        ``model.to('cuda')``, ``model.to(kg.float64)``, ``model.to(device, dtype)``,
        ``model.to(other_tensor)``. A dtype applies to floating-point tensors only.

        >>> import kernelgraph as kg
        >>> net = kg.nn.Linear(2, 1)
        >>> net.to(kg.float64) is net, net.weight.dtype, net.to("cpu").weight.device
        (True, dtype('float64'), device('cpu'))
        """
        device, dtype = _to_args(args, kwargs)
        if device is not None:
            devices.require(device)
        if dtype is not None and dtype not in D.FLOATS:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired "
                            f"dtype={dtype}")
        return self._apply(lambda t: t.to(device=device,
                                          dtype=dtype if t.dtype in D.FLOATS else None))

    def _apply(self, convert) -> DeviceMethods:
        with no_grad():
            for t in [*self.parameters(), *self.buffers()]:
                new = convert(t.detach())
                if new._array is not t._array:
                    t._array = new._array
                    grad = t.grad
                    if grad is not None:
                        t._grad = convert(grad)
        return self

    def cuda(self, device=None) -> DeviceMethods:
        """Every parameter and buffer on the GPU (in place); returns self."""
        return self.to(devices.device("cuda" if device is None else device
                                      if isinstance(device, str | devices.Device)
                                      else f"cuda:{device}"))

    def cpu(self) -> DeviceMethods:
        """Every parameter and buffer on the host (in place); returns self."""
        return self.to(devices.CPU)

    def float(self) -> DeviceMethods:
        """Floating-point parameters and buffers as float32 (in place); returns self."""
        return self.to(D.float32)

    def double(self) -> DeviceMethods:
        """Floating-point parameters and buffers as float64 (in place); returns self."""
        return self.to(D.float64)

    def half(self) -> DeviceMethods:
        raise TypeError("kernelgraph's modules hold float32 or float64 parameters; half "
                        "precision (float16) parameters are not supported")

    def type(self, dst_type) -> DeviceMethods:
        return self.to(dst_type)
