"""``torch.utils.checkpoint``: trade compute for memory. ``checkpoint(fn, *args)`` runs ``fn``
without recording its graph (its intermediate values are not kept), and runs it again during
``backward()``, this time recording, to get the gradients. The gradients are the ones
``fn(*args)`` would have given: for ``args`` and for every tensor ``fn`` reads (a module's
parameters get theirs added into ``.grad``).

The random generator's state is saved before the first run and restored for the second
(``preserve_rng_state=True``, PyTorch's default), so dropout inside ``fn`` drops the same
units both times.

How: the segment is one :class:`kernelgraph.autograd.Function` whose backward reruns ``fn``
on detached copies of the inputs and calls ``backward`` through it (PyTorch's reentrant
variant). So that the parameters get gradients even when no input requires one (the first
layer's input), the Function always has one extra input that requires grad, an empty tensor:
``use_reentrant=True`` and ``False`` give the same gradients here.

>>> import kernelgraph as kg
>>> layer = kg.nn.Linear(3, 2)
>>> y = checkpoint(layer, kg.ones(4, 3), use_reentrant=False)
>>> y.sum().backward()
>>> layer.weight.grad.tolist()[0]
[4.0, 4.0, 4.0]
"""

from __future__ import annotations

from ..autograd import Function
from ..autograd import backward as _backward
from ..eager.creation import zeros
from ..eager.grad_mode import enable_grad
from ..eager.random_creation import get_rng_state, set_rng_state
from ..eager.tensors import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, kwargs, _anchor, *args):
        ctx.run_function, ctx.kwargs = run_function, kwargs
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.tensor_at = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        return run_function(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        args = list(ctx.others)
        inputs = []
        for i, t in zip(ctx.tensor_at, ctx.saved_tensors, strict=True):
            d = t.detach()
            d.requires_grad = t.requires_grad
            args[i] = d
            inputs.append(d)
        if ctx.rng_state is not None:
            now = get_rng_state()
            set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                outputs = ctx.run_function(*args, **ctx.kwargs)
        finally:
            if ctx.rng_state is not None:
                set_rng_state(now)
        outs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
        pairs = [(o, g) for o, g in zip(outs, grad_outputs, strict=False)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            _backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = iter([d.grad if d.requires_grad else None for d in inputs])
        at = set(ctx.tensor_at)
        return (None, None, None, None,
                *(next(grads) if i in at else None for i in range(len(args))))


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=None,
               determinism_check: str = "default", debug: bool = False,
               preserve_rng_state: bool = True, **kwargs):
    """``function(*args, **kwargs)``, its graph recomputed in ``backward()`` instead of kept
    (see the module's docstring). ``context_fn``, ``determinism_check`` and ``debug`` are
    PyTorch's options for its non-reentrant variant: only their defaults are accepted."""
    if context_fn is not None or determinism_check != "default" or debug:
        raise ValueError("kernelgraph's checkpoint takes context_fn, determinism_check and "
                         "debug at their defaults only")
    anchor = zeros(0, requires_grad=True)  # makes the segment record even without grad inputs
    return _Checkpoint.apply(function, preserve_rng_state, kwargs, anchor, *args)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run ``functions`` (an ``nn.Sequential`` or a list of modules) on ``input`` in
    ``segments`` checkpointed pieces; the last piece runs normally, as in PyTorch.

    >>> import kernelgraph as kg
    >>> net = kg.nn.Sequential(kg.nn.Linear(2, 4), kg.nn.Tanh(), kg.nn.Linear(4, 1))
    >>> checkpoint_sequential(net, 2, kg.ones(3, 2)).shape
    torch.Size([3, 1])
    """
    functions = list(functions.children()) if hasattr(functions, "children") else \
        list(functions)
    if segments < 1:
        raise ValueError(f"segments must be at least 1, got {segments}")

    def run(start, end):
        def forward(x):
            for f in functions[start:end + 1]:
                x = f(x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)
