"""The NumPy oracles the tests compare the ops with: ``REFERENCE`` maps each registered op's
name to its card's reference, and every function of :mod:`kernelgraph.kernels.reference`
(``relu``, ``conv2d``, ``scatter_add`` ...) reads here too.

>>> from kernelgraph.ops import reference
>>> reference.REFERENCE["exp"] is reference.np.exp
True
"""

from __future__ import annotations

from ..kernels import reference as _oracles
from .registry import REFERENCE

__all__ = ["REFERENCE"]


def __getattr__(name: str):
    return getattr(_oracles, name)
