"""``torch.compile``: kernelgraph's own tracing compiler, :func:`kernelgraph.function`.

``torch.compile(model)`` returns a module that runs ``model`` through ``kg.function``: the
first call with a new input signature runs the module eagerly while recording it, later calls
run the compiled static plan (compiler passes, fused kernels), and gradients flow back to the
module's parameters through the plan's gradient. The outputs are eager mode's (the plan
computes the same ops). One compiled function is kept per ``train()``/``eval()`` state of
the module, since a trace freezes what dropout and batch norm did.

As PyTorch's ``OptimizedModule``, the result holds the module as ``_orig_mod`` (so its
``state_dict()`` keys start with ``'_orig_mod.'``). Code that reads a tensor's value
(``if x.sum() > 0:``) is traced once per outcome, with a ``TraceWarning`` (kg.function's
guards), so results stay eager mode's; with ``fullgraph=True`` such a read raises
``kg.errors.TraceError``, as a graph break does in PyTorch. Code no trace can hold (a
``backward()`` inside ``forward``) raises ``TraceError`` naming the line, where PyTorch would
run that part eagerly: kernelgraph's trace has already run the code once by then, and
running it again would repeat its side effects. ``backend``, ``mode``,
``dynamic`` and ``options`` choose among PyTorch's compilers and are accepted and ignored:
kernelgraph has one. Random ops in a compiled plan draw from ``kg.random``'s streams, not
from PyTorch's generator (as PyTorch's compiled code uses its own generator, Philox).

>>> import kernelgraph as kg
>>> net = kg.nn.Linear(3, 2)
>>> fast = compile(net)
>>> x = kg.ones(4, 3)
>>> bool(kg.allclose(fast(x), net(x))), bool(kg.allclose(fast(x), net(x)))
(True, True)
>>> list(fast.state_dict())
['_orig_mod.weight', '_orig_mod.bias']
"""

from __future__ import annotations

from .jit import function
from .nn.module import Module

__all__ = ["OptimizedModule", "compile"]


class OptimizedModule(Module):
    """``torch.compile(module)``: ``module`` run through ``kg.function`` (see the module's
    docstring)."""

    def __init__(self, mod: Module, fullgraph: bool = False):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_fullgraph"] = fullgraph
        self.__dict__["_compiled"] = {}  # the modules' training flags -> kg.function

    def forward(self, *args, **kwargs):
        mode = tuple(m.training for m in self._orig_mod.modules())
        fn = self._compiled.get(mode)
        if fn is None:
            mod = self._orig_mod
            fn = self._compiled[mode] = function(lambda *a, **k: mod(*a, **k),
                                                 strict=self._fullgraph)
        return fn(*args, **kwargs)

    def __getattr__(self, name):
        # as PyTorch's OptimizedModule: what the wrapper lacks, the module answers
        try:
            return super().__getattr__(name)
        except AttributeError:
            orig = self.__dict__.get("_modules", {}).get("_orig_mod")
            if orig is None:
                raise
            return getattr(orig, name)


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor",  # noqa: A001
            mode=None, options=None, disable: bool = False):
    """``torch.compile(model)``: an :class:`OptimizedModule` for a module, ``kg.function(f)``
    for a function; ``@torch.compile`` and ``@torch.compile(...)`` decorate. With
    ``disable=True`` the model is returned unchanged."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph)
    if not callable(model):
        raise RuntimeError(f"torch.compile expects a module or a function, got "
                           f"{type(model).__name__}")
    return function(model, reduce_retracing=bool(dynamic), strict=fullgraph)
