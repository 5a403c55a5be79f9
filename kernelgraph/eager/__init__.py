"""Eager mode: tensors that compute at once and record their graph, with PyTorch's names.

>>> import kernelgraph as kg
>>> a = kg.tensor(15.0, requires_grad=True)
>>> b = kg.tensor(20.0, requires_grad=True)
>>> c = a * b
>>> c.backward()
>>> c.item(), a.grad.item(), b.grad.item()
(300.0, 20.0, 15.0)

Every op on a tensor that requires grad records an :class:`EagerNode` (op, inputs, value),
reachable from the result as ``c.grad_fn``; :func:`graph_of` lists the recorded nodes and
edges. While a trace listener is attached every op is recorded, so widgets can draw the
whole computation.

The modules, one idea each: :mod:`.tensors` (:class:`Tensor`, :class:`EagerNode`),
:mod:`.creation` (:func:`tensor`, :func:`zeros`, :func:`ones`, :func:`arange`),
:mod:`.grad_mode` (:class:`no_grad` and its kin, per thread), :mod:`.dispatch` (:func:`apply`,
the operators' hot path, recording, :func:`graph_of`), :mod:`.backprop` (:func:`backward`,
:func:`grad`, hooks) and :mod:`.methods` (the Tensor methods that run ops).
"""

from __future__ import annotations

import sys
import types

# (.inplace, .legacy and .methods install Tensor methods)
from . import creation, dispatch, inplace, legacy, methods, tensors  # noqa: F401
from .backprop import backward, grad
from .creation import arange, ones, tensor, zeros
from .dispatch import _record as _record  # not public: for kernelgraph.jit
from .dispatch import apply, graph_of
from .grad_mode import _local as _local  # not public: for kernelgraph.jit and autobatching
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .tensors import EagerNode, Tensor
from .tensors import _wrap as _wrap  # not public: for kernelgraph.jit

# The classes' public home, as before the split: what type(t), error messages and pickles name.
Tensor.__module__ = EagerNode.__module__ = __name__

# -- slots for the floor above --------------------------------------------------------------------
# kg.function (kernelgraph/jit) sets ``_tracer`` and kg.autobatch (kernelgraph/autobatching/)
# sets ``_deferred`` on this package; eager imports neither. The modules that read a slot keep
# it as a module global, so the check on the hot path stays one global lookup: setting the slot
# here passes it on to them (see ``_tracer`` in .tensors, ``_deferred`` in .dispatch).
_tracer = None
_deferred = None
_SLOT_READERS = {"_tracer": (tensors, creation), "_deferred": (dispatch,)}


class _Package(types.ModuleType):
    """This package's module type: assigning a slot also sets it where it is read."""

    def __setattr__(self, name, value):
        for module in _SLOT_READERS.get(name, ()):
            setattr(module, name, value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = ["EagerNode", "Tensor", "apply", "arange", "backward", "enable_grad", "grad",
           "graph_of", "is_grad_enabled", "no_grad", "ones", "set_grad_enabled", "tensor",
           "zeros"]
