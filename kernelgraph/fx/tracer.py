"""``kg.fx.symbolic_trace``: run a module's ``forward`` on proxies and keep what it did.

While :meth:`Tracer.trace` runs, calls of kernelgraph's public functions
(``kernelgraph.relu``, ``kernelgraph.nn.functional.relu``: looked up on those modules at
call time, as ``torch.relu`` is) and of functions given to :func:`wrap` record a
``call_function`` node when a :class:`~kernelgraph.fx.Proxy` is among their arguments;
calling a sub-module records a ``call_module`` node when it is a leaf (kernelgraph's own
layers), else its ``forward`` is traced into; reading a parameter or buffer records a
``get_attr`` node. Outside a trace nothing is changed. A name imported with
``from kernelgraph import relu`` before tracing is not seen (torch.fx sees it through
``__torch_function__``, which kernelgraph has not): call it through the module.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import threading

import kernelgraph as _kg

from ..eager import Tensor
from ..nn import functional as _F
from ..nn.containers import ModuleDict, ModuleList, Sequential
from ..nn.module import Module
from ..ops.registry import Op
from .graph import Graph, public_names
from .graph_module import GraphModule
from .node import map_aggregate
from .proxy import Proxy, TracerBase

_lock = threading.RLock()
_wrapped: list = []  # (namespace dict, name) pairs from wrap()


def wrap(fn_or_name):
    """Record calls of a function as ``call_function`` nodes instead of tracing into it.

    Give the function itself (``kg.fx.wrap(my_fn)``, or as a decorator): its calls through
    its module's globals are recorded. A name (``wrap('len')``) is accepted for Python's
    builtins only: torch.fx finds other names in the caller's globals by reading stack
    frames, which kernelgraph does not do.
    """
    if callable(fn_or_name):
        name = getattr(fn_or_name, "__name__", None)
        space = getattr(fn_or_name, "__globals__", None)
        if space is None or space.get(name) is not fn_or_name:
            raise NotImplementedError("kg.fx.wrap needs a function defined at module level "
                                      "(a def at the top of a module)")
        _wrapped.append((space, name))
        return fn_or_name
    if isinstance(fn_or_name, str) and hasattr(builtins, fn_or_name):
        _wrapped.append((vars(builtins), fn_or_name))
        return fn_or_name
    raise NotImplementedError(f"kg.fx.wrap: give the function itself, or the name of a "
                              f"Python builtin; got {fn_or_name!r}")


# tensor <op> proxy: PyTorch's tracer sees these as calls of the tensor's methods
_TENSOR_OPERATORS = {"__add__": "add", "__sub__": "sub", "__mul__": "mul",
                     "__truediv__": "div", "__floordiv__": "__floordiv__",
                     "__mod__": "remainder", "__pow__": "pow", "__matmul__": "matmul",
                     "__and__": "__and__", "__or__": "__or__", "__xor__": "__xor__"}


def _deferring(method, name: str):
    """A tensor operator that records ``tensor.<name>(proxy)`` when its operand is a proxy."""
    @functools.wraps(method)
    def call(self, other):
        if isinstance(other, Proxy):
            return other.tracer.create_proxy("call_method", name, (self, other), {})
        return method(self, other)
    return call


def _tracer_of(values):
    found = []
    map_aggregate(values, lambda x: found.append(x.tracer) if isinstance(x, Proxy) else None)
    return found[0] if found else None


def _recording(fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        tracer = _tracer_of((args, kwargs))
        if tracer is None:
            return fn(*args, **kwargs)
        return tracer.create_proxy("call_function", fn, args, kwargs)
    call.__wrapped_target__ = fn
    return call


class Tracer(TracerBase):
    """Symbolic tracer: :meth:`trace` gives the :class:`~kernelgraph.fx.Graph` of a module
    or function. Subclass and override :meth:`is_leaf_module` to keep more modules whole."""

    def __init__(self, autowrap_functions=()):
        self.autowrap_functions = tuple(autowrap_functions)

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """kernelgraph's own layers are leaves; containers and the user's modules are not."""
        return type(m).__module__.startswith("kernelgraph.nn") and \
            not isinstance(m, Sequential | ModuleList | ModuleDict)

    def path_of_module(self, mod: Module) -> str:
        for name, m in self.root.named_modules():
            if m is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: Module, forward, args, kwargs):
        path = self.path_of_module(m)
        if not self.is_leaf_module(m, path):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", path, args, kwargs)

    def getattr(self, attr: str, attr_val, parameter_proxy_cache: dict):
        for name, value in [*self.root.named_parameters(), *self.root.named_buffers()]:
            if value is attr_val:
                if name not in parameter_proxy_cache:
                    parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
                return parameter_proxy_cache[name]
        return attr_val

    def create_arg(self, a):
        def leaf(x):
            if isinstance(x, Tensor):
                for name, value in [*self.root.named_parameters(),
                                    *self.root.named_buffers()]:
                    if value is x:
                        return self.create_node("get_attr", name, (), {})
                name = self._constants.get(id(x), (None, None))[0]
                if name is None:  # one attribute per tensor, read by a node at each use
                    name = f"_tensor_constant{len(self._constants)}"
                    self._constants[id(x)] = (name, x)
                    setattr(self.root, name, x)
                return self.create_node("get_attr", name, (), {})
            if isinstance(x, Module):
                raise NotImplementedError("a module passed as a value to a traced call")
            return x
        return super().create_arg(map_aggregate(a, leaf))

    def trace(self, root, concrete_args=None) -> Graph:
        """Run ``root`` (a module, or a function) on proxies and return its graph."""
        if concrete_args:
            raise NotImplementedError("kg.fx: concrete_args is not supported")
        if isinstance(root, Module):  # its bound forward: a GraphModule's is its own
            self.root, fn = root, root.forward
        elif callable(root):
            self.root, fn = Module(), root
        else:
            raise TypeError(f"symbolic_trace expects a kg.nn.Module or a function, got "
                            f"{type(root).__name__}")
        self.graph, self._constants = Graph(), {}
        params = list(inspect.signature(fn).parameters.values())
        args = []
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise NotImplementedError("kg.fx: tracing *args / **kwargs is not supported")
            default = () if p.default is p.empty else (p.default,)
            args.append(self.create_proxy("placeholder", p.name, default, {}))
        with _lock, _Patched(self):
            out = fn(*args)
        self.create_node("output", "output", (self.create_arg(out),), {})
        return self.graph


class _Patched:
    """While a trace runs: module calls, parameter reads and kernelgraph's functions go
    through the tracer; everything is put back afterwards."""

    def __init__(self, tracer: Tracer):
        self.tracer, self.saved = tracer, []

    def _set(self, space: dict, name: str, value) -> None:
        self.saved.append((space, name, space[name]))
        space[name] = value

    def __enter__(self):
        tracer, cache = self.tracer, {}
        public_names()  # known before the namespaces hold the recording wrappers
        call, getattr_ = Module.__call__, Module.__getattr__

        def module_call(mod, *args, **kwargs):
            if _tracer_of((args, kwargs)) is not tracer:
                return call(mod, *args, **kwargs)
            return tracer.call_module(mod, mod.forward, args, kwargs)

        def module_getattr(mod, name):
            value = getattr_(mod, name)
            if isinstance(value, Tensor):
                return tracer.getattr(name, value, cache)
            return value

        self._set(_ClassDict(Module), "__call__", module_call)
        self._set(_ClassDict(Module), "__getattr__", module_getattr)
        for name, method in _TENSOR_OPERATORS.items():
            if name in vars(Tensor):
                self._set(_ClassDict(Tensor), name, _deferring(vars(Tensor)[name], method))
        for space in (vars(_kg), vars(_F)):
            for name, value in list(space.items()):
                if not name.startswith("_") and (isinstance(value, Op)
                                                 or inspect.isfunction(value)):
                    self._set(space, name, _recording(value))
        for space, name in [*_wrapped, *((f.__globals__, f.__name__)
                                          for f in tracer.autowrap_functions)]:
            self._set(space, name, _recording(space[name]))
        return self

    def __exit__(self, *exc):
        for space, name, value in reversed(self.saved):
            space[name] = value
        self.saved.clear()


class _ClassDict:
    """A class's attributes set and read like a dict (``vars(cls)`` is read-only)."""

    def __init__(self, cls):
        self.cls = cls

    def __getitem__(self, name):
        return self.cls.__dict__[name]

    def __setitem__(self, name, value):
        setattr(self.cls, name, value)


def symbolic_trace(root, concrete_args=None) -> GraphModule:
    """The :class:`~kernelgraph.fx.GraphModule` of ``root`` (a module or a function)."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
