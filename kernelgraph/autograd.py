"""``kg.autograd``, as ``torch.autograd``: :func:`backward`, :func:`grad`, and
:class:`Function`, an op whose gradient the user writes.

>>> import kernelgraph as kg
>>> class Cube(Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x ** 3
...     @staticmethod
...     def backward(ctx, grad_output):
...         (x,) = ctx.saved_tensors
...         return grad_output * 3 * x ** 2
>>> x = kg.tensor([1.0, 2.0], requires_grad=True)
>>> y = Cube.apply(x)
>>> y.sum().backward()
>>> x.grad.tolist(), y.grad_fn.op.name
([3.0, 12.0], 'Cube')
"""

from __future__ import annotations

import sys
import time
import types

import numpy as np

from . import trace
from .eager import Tensor, backward, grad, no_grad
from .eager import dispatch as _dispatch
from .eager import versions as _versions
from .eager.backprop import modified_message
from .eager.grad_mode import _local
from .eager.tensors import _wrap
from .ops.registry import DerivedOp

__all__ = ["Function", "FunctionCtx", "Variable", "backward", "grad", "gradcheck"]


class FunctionCtx:
    """The ``ctx`` a :class:`Function`'s ``forward`` and ``backward`` share: tensors saved
    for backward, which inputs need a gradient, and any attribute the user sets on it."""

    def __init__(self):
        self.needs_input_grad: tuple = ()
        self._saved: tuple = ()
        self._non_differentiable: set = set()
        self.materialize_grads = True

    def save_for_backward(self, *tensors) -> None:
        """Keep ``tensors`` (or None) for ``backward``, which reads them as
        ``ctx.saved_tensors``; changing one in place afterwards makes that read fail."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._saved = tuple((t, None if t is None else _versions.version(t._array))
                            for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors ``forward`` saved, refused if one was changed in place since."""
        out = []
        for t, then in self._saved:
            if t is not None:
                now = _versions.version(t._array)
                if now != then:
                    raise RuntimeError(modified_message(t._array, t._node, now, then))
            out.append(t)
        return tuple(out)

    def mark_non_differentiable(self, *tensors) -> None:
        """Outputs of ``forward`` that get no gradient (indices, masks ...)."""
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors) -> None:
        """Accepted for PyTorch's sake: inputs ``forward`` changed in place."""

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` gets zeros (True, the default) or None for the gradients of
        outputs that received none."""
        self.materialize_grads = bool(value)


class Function:
    """An operation with a hand-written gradient, as ``torch.autograd.Function``: subclass
    it with static ``forward(ctx, *inputs)`` and ``backward(ctx, *grad_outputs)`` (one
    gradient, or None, per input of forward), and call ``MyFunction.apply(*inputs)``.

    ``forward`` runs without recording; its result records one node (its op named after the
    class, PyTorch's ``<MyFunctionBackward>``), whose gradient calls ``backward``. With
    several outputs, each records a node and ``backward`` receives zeros (or None, after
    ``ctx.set_materialize_grads(False)``) for the others.
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError  # PyTorch 2's other style: forward(*inputs) without ctx

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` on ``args`` and record its gradient, ``backward``."""
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        record = _local.grad_enabled and any(ctx.needs_input_grad)
        own_setup = "setup_context" in _defined(cls)
        with no_grad():
            if own_setup:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        if not record:
            return out
        single = isinstance(out, Tensor)
        outs = (out,) if single else tuple(out)
        op = _card(cls)
        meta = tuple((o._array.shape, o._array.dtype) if isinstance(o, Tensor) else None
                     for o in outs)
        start = time.perf_counter() if trace.active else 0.0
        results = []
        for k, o in enumerate(outs):
            if not isinstance(o, Tensor) or id(o) in ctx._non_differentiable or \
                    o.dtype.kind != "f":
                results.append(o)
                continue
            result = _wrap(o._array)
            attrs = {"ctx": ctx, "output": k, "outputs": meta}
            _dispatch._record(op, args, attrs, result)
            result.requires_grad = True
            if trace.active:
                _dispatch._trace(op, args, attrs, result, start)
            results.append(result)
        return results[0] if single else type(out)(results) if isinstance(out, tuple | list) \
            else tuple(results)


def _defined(cls) -> set:
    """The names a subclass of Function (not Function itself) defines."""
    names = set()
    for klass in cls.__mro__:
        if klass is Function:
            break
        names.update(vars(klass))
    return names


def _card(cls) -> DerivedOp:
    """The (unregistered) op card of Function subclass ``cls``, made once."""
    op = cls.__dict__.get("_kg_card")
    if op is None:
        def forward(*args, **attrs):
            raise RuntimeError(f"autograd.Function {cls.__name__} runs only through "
                               f"{cls.__name__}.apply on eager tensors")

        def infer(shapes_, dtypes, attrs):
            raise TypeError(f"autograd.Function {cls.__name__} cannot be added to a graph "
                            "(static mode); write it with ops")

        op = DerivedOp(cls.__name__, forward, infer, _gradient(cls),
                       doc=f"The user's autograd.Function {cls.__qualname__}.",
                       module=cls.__module__)
        op.base, op.inplace, op.grad_fn_name = None, False, f"{cls.__name__}Backward"
        type.__setattr__(cls, "_kg_card", op)
    return op


def _gradient(cls):
    def rule(g, out, needs, attrs, *inputs):
        ctx, k, meta = attrs["ctx"], attrs["output"], attrs["outputs"]
        as_tensor = isinstance(g, Tensor)  # create_graph: gradients are tensors of a graph
        grads = []
        for j, m in enumerate(meta):
            if j == k:
                grads.append(g if as_tensor else _wrap(g))
            elif m is None or not ctx.materialize_grads:
                grads.append(None)
            else:
                grads.append(_wrap(np.zeros(m[0], m[1])))
        result = cls.backward(ctx, *grads)
        if not isinstance(result, tuple | list):
            result = (result,)
        result = tuple(result)
        while len(result) > len(inputs) and result[-1] is None:
            result = result[:-1]
        if len(result) != len(inputs):
            raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number "
                               f"of gradients (expected {len(inputs)}, got {len(result)})")
        out_grads = []
        for i, r in enumerate(result):
            if r is None or not needs[i]:
                out_grads.append(None)
            elif not isinstance(r, Tensor):
                raise TypeError(f"function {cls.__name__}Backward returned a gradient of type "
                                f"{type(r).__name__} at index {i}; expected a Tensor or None")
            else:
                out_grads.append(r if as_tensor else r._array)
        return tuple(out_grads)
    return rule


def Variable(data, requires_grad: bool = False, volatile: bool = False):  # noqa: N802
    """PyTorch's old ``torch.autograd.Variable``: today a tensor (``data`` itself, or a leaf
    sharing its values when ``requires_grad`` is asked for)."""
    if not isinstance(data, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
    if requires_grad and not data.requires_grad:
        return data.detach().requires_grad_(True)
    return data


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, **options) -> bool:
    """``torch.autograd.gradcheck``: compare the gradients autograd computes for ``func`` at
    ``inputs`` with central finite differences (step ``eps``), for every input that requires
    grad and every output element; True if all agree within ``atol + rtol * |numerical|``,
    else a RuntimeError naming the output and input (or False, without
    ``raise_exception``). Use float64 inputs, as PyTorch asks.

    >>> import kernelgraph as kg
    >>> x = kg.tensor([0.5, -1.0], dtype=kg.float64, requires_grad=True)
    >>> gradcheck(lambda t: (t * t).sin(), (x,))
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def outputs():
        out = func(*inputs)
        return [o for o in ((out,) if isinstance(out, Tensor) else out)
                if isinstance(o, Tensor)]

    for k, out in enumerate(outputs()):
        if out.dtype.kind != "f":
            continue
        n = out._array.size
        analytical = {i: np.zeros((inputs[i]._array.size, n)) for i in wrt}
        for j in range(n):
            if not out.requires_grad:
                break
            seed = np.zeros(n, out.dtype)
            seed[j] = 1
            got = grad(out, [inputs[i] for i in wrt], seed.reshape(out.shape),
                       retain_graph=True, allow_unused=True)
            for i, g in zip(wrt, got):
                if g is not None:
                    analytical[i][:, j] = np.asarray(g._array, np.float64).ravel()
        for i in wrt:
            flat = inputs[i]._array.reshape(-1)
            numerical = np.zeros_like(analytical[i])
            with no_grad():
                for m in range(flat.size):
                    keep = flat[m].item()
                    flat[m] = keep + eps
                    hi = np.asarray(outputs()[k]._array, np.float64).ravel()
                    flat[m] = keep - eps
                    lo = np.asarray(outputs()[k]._array, np.float64).ravel()
                    flat[m] = keep
                    numerical[m] = (hi - lo) / (2 * eps)
            if not np.all(np.abs(analytical[i] - numerical) <= atol + rtol * np.abs(numerical)):
                if not raise_exception:
                    return False
                raise RuntimeError(f"Jacobian mismatch for output {k} with respect to input "
                                   f"{i},\nnumerical:{numerical}\nanalytical:{analytical[i]}\n")
    return True


# PyTorch's module path torch.autograd.function (``from torch.autograd.function import
# Function``): a module of this module's two classes, importable by that name
function = types.ModuleType(f"{__name__}.function", "``torch.autograd.function``: "
                            ":class:`Function` and :class:`FunctionCtx`.")
function.Function, function.FunctionCtx = Function, FunctionCtx
sys.modules[function.__name__] = function
