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

The modules, one idea each: :mod:`.tensors` (:class:`Tensor`, :func:`tensor`,
:class:`EagerNode`), :mod:`.creation` (:func:`zeros`, :func:`ones`, :func:`arange` ...),
:mod:`.grad_mode` (:class:`no_grad` and its kin, per thread), :mod:`.dispatch` (:func:`apply`,
the operators' hot path, recording, :func:`graph_of`), :mod:`.backprop` (:func:`backward`,
:func:`grad`, hooks), :mod:`.methods` (:func:`~.methods.install`: where Tensor gets every
method its class body does not define), :mod:`.inplace` (in-place ops) and :mod:`.sinks`
(an RNN's weight gradients as one product, registered with :mod:`.backprop`).
"""

from __future__ import annotations

from . import creation, dispatch, legacy, methods, sinks, tensors  # noqa: F401
from .backprop import backward, grad
from .creation import arange, ones, zeros
from .dispatch import _record as _record  # not public: for kernelgraph.jit
from .dispatch import apply, graph_of
from .grad_mode import _local as _local  # not public: for kernelgraph.jit and autobatching
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .tensors import EagerNode, Tensor, tensor
from .tensors import _wrap as _wrap  # not public: for kernelgraph.jit

methods.install()  # every Tensor method the class body does not define, set in one place

# The classes' public home, as before the split: what type(t), error messages and pickles name.
Tensor.__module__ = EagerNode.__module__ = __name__

# -- hooks for the floor above ----------------------------------------------------------------
# kg.function (kernelgraph/jit) and kg.autobatch (kernelgraph/autobatching/) hook into eager
# mode through these two functions; eager imports neither. The modules that call a hook keep
# it as a module global, so the check on the hot path stays one global lookup; the package
# keeps a copy (``_tracer``, ``_deferred``) for the floor above to read.
_tracer = None
_deferred = None


def set_tracer(tracer) -> None:
    """While kg.function traces Python code: ``tracer(kind, tensor, value)`` is told when the
    code reads a tensor's value or shape, makes a tensor from data or detaches one (see
    ``_tracer`` in :mod:`.tensors`); None when no trace is open."""
    global _tracer
    _tracer = tensors._tracer = tracer


def set_deferred(deferred) -> None:
    """While a ``kg.autobatch()`` block is open: ``deferred(op, args, attrs)`` records an op
    of the blocks' threads for batched execution instead of running it (see ``_deferred``
    in :mod:`.dispatch`); None when no block is open."""
    global _deferred
    _deferred = dispatch._deferred = deferred


__all__ = ["EagerNode", "Tensor", "apply", "arange", "backward", "enable_grad", "grad",
           "graph_of", "is_grad_enabled", "no_grad", "ones", "set_grad_enabled", "tensor",
           "zeros"]
