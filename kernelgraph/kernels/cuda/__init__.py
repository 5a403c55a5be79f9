"""numba CUDA kernels, one module per family as on the CPU: :mod:`.elementwise` (maps of the
scalar bodies), :mod:`.reduce`, :mod:`.shape`, :mod:`.linalg`, :mod:`.nn`, :mod:`.conv`,
:mod:`.indexing`, :mod:`.random`, :mod:`.rnn`, and :mod:`.fused` for the compiler's fused
groups; :mod:`.core` holds what they share.

They are leaves, like the CPU kernels: they take C-contiguous device arrays (and Python
numbers where the CPU forward does), arguments the op has already checked and dtypes it
has already promoted, and return a new device array, so values stay on the GPU from op to
op. Each op's card says how to build its CUDA forward from this package (its ``cuda``
field); :meth:`kernelgraph.ops.registry.Op.kernel` imports the package on first CUDA use
(importing it imports ``numba.cuda``).
"""

from __future__ import annotations

from . import conv, core, elementwise, fused, indexing, linalg, nn, random, reduce, rnn, shape
from . import matrix as matrix  # det, inv, solve, cholesky, eigh (ops/matrix.py)
from . import resize as resize  # nearest / bilinear image resizing (ops/resize.py)
from . import selection as selection  # top_k and unique (ops/selection.py)
from . import torch_select as torch_select  # PyTorch's gather, scatter, topk
from .core import SIMULATOR, is_device_array

__all__ = ["SIMULATOR", "conv", "core", "elementwise", "fused", "indexing", "is_device_array",
           "linalg", "matrix", "nn", "random", "reduce", "resize", "rnn", "selection", "shape",
           "torch_select"]
