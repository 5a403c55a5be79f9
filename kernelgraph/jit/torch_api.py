"""``kg.jit.trace`` and ``kg.jit.script``: PyTorch's TorchScript entry points, answered by
kernelgraph's own tracing compiler (:func:`kernelgraph.jit.function`).

Both return a :class:`Function` compiled per input signature; calling it gives the
outputs the eager code gives. What differs from PyTorch:

- ``trace(fn, example_inputs)`` traces at once on ``example_inputs`` (as PyTorch does) but,
  where PyTorch's trace freezes the path Python's control flow took for the example (and
  warns), kernelgraph re-checks the values that path read and traces again when they
  change, so the results stay those of eager mode;
- ``script(fn)`` does not compile Python source into TorchScript (kernelgraph has no
  TorchScript language): it compiles by tracing, per input signature, in the same way, so
  data-dependent ``if`` / ``for`` still give eager mode's results;
- neither result can be saved with ``torch.jit.save``: a TorchScript file holds the
  program's code, and kernelgraph never stores or loads code (save the ``state_dict``).

>>> import kernelgraph as kg
>>> f = kg.jit.trace(lambda x: kg.relu(x) * 2.0, kg.tensor([1.0, -1.0]))
>>> f(kg.tensor([3.0, -2.0])), f.trace_count
(tensor([6., 0.]), 1)
"""

from __future__ import annotations

from . import Function


class TracedFunction(Function):
    """A :class:`~kernelgraph.jit.Function` made by :func:`trace` or :func:`script`; for a
    module it also answers the module's attributes (``parameters()``, ``eval()`` ...)."""

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_fn":
            raise AttributeError(name)
        return getattr(self.__dict__["_fn"], name)

    def forward(self, *args, **kwargs):
        return self(*args, **kwargs)


def trace(func, example_inputs=None, *args, example_kwarg_inputs=None, **kwargs):
    """Compile ``func`` (a function or a module) and trace it now on ``example_inputs`` (a
    tensor or a tuple of them) or ``example_kwarg_inputs`` (a dict)."""
    if not callable(func):
        raise TypeError(f"kg.jit.trace expects a function or a module, got "
                        f"{type(func).__name__}")
    if example_inputs is None and example_kwarg_inputs is None:
        raise ValueError("kg.jit.trace needs example_inputs (a tensor or a tuple of tensors) "
                         "or example_kwarg_inputs (a dict)")
    traced = TracedFunction(func)
    if example_kwarg_inputs is not None:
        traced(**dict(example_kwarg_inputs))
    else:
        traced(*(example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)))
    return traced


def script(obj, *args, **kwargs):
    """Compile ``obj`` (a function or a module) with kernelgraph's tracing compiler; it is
    traced on its first call with each input signature. Used as a decorator too."""
    if not callable(obj):
        raise TypeError(f"kg.jit.script expects a function or a module, got "
                        f"{type(obj).__name__}")
    return TracedFunction(obj)
