"""``kg.backends`` (``torch.backends``): the flags tutorials set for repeatable GPU runs.

``torch.backends.cudnn.deterministic = True`` and ``benchmark = False`` ask PyTorch to pick
deterministic cuDNN algorithms and not to time several. kernelgraph uses no cuDNN: each op has
one kernel per device, and each kernel gives the same bits on the same inputs every run, so
kernelgraph is deterministic whatever these flags say. They are kept as settable flags with
PyTorch's defaults, so that code which sets and reads them behaves as in PyTorch.
``cudnn.is_available()`` answers False (there is no cuDNN here), ``mps.is_available()``
False (kernelgraph has no Metal backend), and ``backends.cuda.matmul.allow_tf32`` (default
False, as PyTorch) changes nothing: kernelgraph's CUDA matrix products compute in float32.

>>> import kernelgraph as kg
>>> kg.backends.cudnn.deterministic, kg.backends.cudnn.benchmark
(False, False)
>>> kg.backends.cudnn.deterministic = True
>>> kg.backends.cudnn.deterministic
True
>>> kg.backends.cudnn.deterministic = False
>>> kg.backends.mps.is_available()
False
"""

from __future__ import annotations

import types

__all__ = ["cuda", "cudnn", "mps"]


class _Flags(types.SimpleNamespace):
    """A namespace of flags that rejects names PyTorch does not have (a typo such as
    ``cudnn.determinstic = True`` would otherwise pass silently)."""

    def __setattr__(self, name, value):
        if name not in self.__dict__:
            raise AttributeError(f"{self._name} has no flag {name!r}; it has "
                                 f"{sorted(k for k in self.__dict__ if not k.startswith('_'))}")
        super().__setattr__(name, value)


def _false() -> bool:
    return False


cudnn = _Flags(_name="torch.backends.cudnn", enabled=True, benchmark=False,
               deterministic=False, allow_tf32=True, is_available=_false,
               version=lambda: None)
mps = _Flags(_name="torch.backends.mps", is_available=_false, is_built=_false)
cuda = _Flags(_name="torch.backends.cuda",
              matmul=_Flags(_name="torch.backends.cuda.matmul", allow_tf32=False,
                            allow_fp16_reduced_precision_reduction=True,
                            allow_bf16_reduced_precision_reduction=True),
              is_built=lambda: True)
