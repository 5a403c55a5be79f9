"""``kg.nn.Module``: a layer with parameters that works in both modes.

A module owns its parameters as eager leaf tensors (``requires_grad=True``), as PyTorch's
``nn.Module`` does. Called on eager tensors, ``forward`` reads those tensors. Called on graph
nodes, the very same ``forward`` reads ``kg.Variable`` nodes instead: one per parameter,
created in that graph the first time the module is used there, with the parameter's value
at that moment as its initial value, so both modes start from identical weights.

>>> import kernelgraph as kg
>>> import numpy as np
>>> class Scale(kg.nn.Module):
...     def __init__(self, n):
...         super().__init__()
...         self.register_parameter("weight", kg.ones(n))
...     def forward(self, x):
...         return x * self.weight
>>> m = Scale(2)
>>> m(kg.tensor([3.0, 4.0])).tolist()                       # eager: the tensor parameter
[3.0, 4.0]
>>> g = kg.Graph()
>>> with g.as_default():
...     x = kg.placeholder(kg.float32, shape=[2])
...     y = m(x)                                            # static: a kg.Variable
...     init = kg.global_variables_initializer()
>>> [v.name for v in m.variables(g)]
['scale/weight']
>>> with kg.Session(g) as sess:
...     _ = sess.run(init)
...     sess.run(y, {x: [3.0, 4.0]}).tolist()
[3.0, 4.0]
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Iterator

import numpy as np

from .. import dtypes as D
from ..devices import to_numpy
from ..eager import Tensor, no_grad, tensor
from ..errors import shown
from ..graph import Graph, Node, get_default_graph
from ..static.control_flow import root_graph
from ..static.variables import Variable
from .init import copy_into
from .module_devices import DeviceMethods
from .parameter import is_parameter


class _Calls(threading.local):
    """Which graph the module calls in progress run in (None: eager), innermost last."""

    def __init__(self):
        self.stack: list = []


_calls = _Calls()


def _static_graph(values) -> Graph | None:
    """The user's graph of the first graph node among ``values`` (nested lists, tuples and
    dicts looked into), or None when there is none (an eager call)."""
    stack = list(values)
    while stack:
        v = stack.pop(0)
        if isinstance(v, Node) and v.symbolic:
            return root_graph(v.graph)
        if isinstance(v, list | tuple):
            stack[:0] = list(v)
        elif isinstance(v, dict):
            stack[:0] = list(v.values())
    return None


# graph -> {id(parameter tensor): (weak reference to it, its Variable in that graph)}: how an
# optimiser given a module's parameters finds what to update in a graph.
_PARAMETER_VARIABLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def variable_of(parameter: Tensor, graph: Graph):
    """The ``kg.Variable`` a module made in ``graph`` for its ``parameter`` tensor, or None
    when no module used that parameter in that graph (yet).

    >>> import kernelgraph as kg
    >>> cell = kg.nn.RNNCell(2, 3)
    >>> with kg.Graph().as_default() as g:
    ...     _ = cell.variables()
    >>> variable_of(cell.weight_ih, g).name
    'rnn_cell/weight_ih'
    """
    ref, var = _PARAMETER_VARIABLES.get(root_graph(graph), {}).get(id(parameter), (None, None))
    return var if ref is not None and ref() is parameter else None


def _snake(name: str) -> str:
    """``RNNCell`` -> ``rnn_cell``, ``Linear`` -> ``linear``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _addindent(text: str, spaces: int) -> str:
    first, *rest = text.split("\n")
    return "\n".join([first, *[" " * spaces + line for line in rest]])


def zero_grads(params, set_to_none: bool = True) -> None:
    """Forget the gradients of ``params`` (``.grad = None``), or with ``set_to_none=False``
    zero them in place, as PyTorch does: a tensor taken earlier as ``g = p.grad`` sees the
    zeros, on any device."""
    for p in params:
        g = p.grad if isinstance(p, Tensor) else None
        if g is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        if g.grad_fn is not None:
            g.detach_()
        else:
            g.requires_grad_(False)
        with no_grad():
            g.zero_()


class Module(DeviceMethods):
    """Base class of layers: parameters, sub-modules, and a ``forward`` for both modes.

    Subclasses call ``super().__init__()`` first, register parameters with
    :meth:`register_parameter` (or assign sub-modules as attributes), and define
    ``forward``. Inside ``forward``, ``self.<parameter>`` is the eager tensor when the call
    is eager and this module's ``kg.Variable`` in the caller's graph when it is static.

    ``name`` names the module's variables in a graph (``'<name>/<parameter>'``); it defaults
    to the class name in snake case (``RNNCell`` -> ``rnn_cell``).
    """

    def __init__(self, name: str | None = None):
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_variables", weakref.WeakKeyDictionary())
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "name", name or _snake(type(self).__name__))

    # -- parameters and sub-modules ----------------------------------------------------------
    def register_parameter(self, name: str, value) -> Tensor | None:
        """Make ``value`` (a float tensor or array; None for an absent optional one, like a
        bias that is switched off) the parameter ``name``: a leaf tensor that requires grad.

        >>> import kernelgraph as kg
        >>> m = kg.nn.Module()
        >>> m.register_parameter("w", kg.zeros(2)).requires_grad
        True
        """
        params = self.__dict__.get("_parameters")
        if params is None:
            raise AttributeError("cannot register a parameter before Module.__init__() runs; "
                                 "call super().__init__() first")
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"parameter name can't contain \".\" or be empty, got {shown(name)}")
        if name in self.__dict__ or name in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if value is None:
            params[name] = None
            return None
        if isinstance(value, Node) and not isinstance(value, Tensor):
            raise TypeError(f"a parameter holds values; got the graph node '{value.name}'")
        t = value if isinstance(value, Tensor) else tensor(np.asarray(value))
        if t.dtype not in D.FLOATS:
            raise TypeError(f"parameter '{name}' must be float32 or float64, got "
                            f"{t.dtype.name}")
        if not t.is_leaf:
            t = t.detach()
        if not is_parameter(t):  # a plain tensor: requires grad, as a Parameter() does
            t.requires_grad_(True)
        t._param = True  # an nn.Parameter from now on (isinstance, "Parameter containing:")
        self.__dict__.get("_buffers", {}).pop(name, None)
        params[name] = t
        return t

    def register_buffer(self, name: str, tensor_, persistent: bool = True) -> None:
        """A tensor of the module's state that is not trained (running statistics ...):
        moved by :meth:`to` and saved by :meth:`state_dict` (unless not ``persistent``).

        >>> import kernelgraph as kg
        >>> m = kg.nn.Module(); m.register_buffer("count", kg.zeros(1))
        >>> [name for name, _ in m.named_buffers()], m.count.tolist()
        (['count'], [0.0])
        """
        buffers = self.__dict__.get("_buffers")
        if buffers is None:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str) or not name.isidentifier():
            raise KeyError(f"buffer name must be a Python identifier, got {shown(name)}")
        if name in self.__dict__ or name in self._modules or name in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor_ is not None and not isinstance(tensor_, Tensor):
            raise TypeError(f"cannot assign '{type(tensor_).__name__}' object to buffer "
                            f"'{name}' (torch Tensor or None required)")
        buffers[name] = tensor_
        (self._non_persistent.discard if persistent else self._non_persistent.add)(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add the sub-module ``name`` (as assigning ``self.<name> = module`` does)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str) or "." in name or not name:
            raise KeyError(f"module name can't contain \".\" or be empty, got {shown(name)}")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value):
        modules = self.__dict__.get("_modules")
        if is_parameter(value):  # self.w = nn.Parameter(...): registered, as in PyTorch
            if modules is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            modules.pop(name, None)
            self.__dict__.pop(name, None)
            self.register_parameter(name, value)
            return
        buffers = self.__dict__.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            buffers[name] = value
            return
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign a sub-module before Module.__init__() runs;"
                                     " call super().__init__() first")
            self._parameters.pop(name, None)
            modules[name] = value
            return
        params = self.__dict__.get("_parameters")
        if params is not None and name in params:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign {type(value).__name__} to parameter '{name}' "
                                "(a kg.Tensor or None)")
            params[name] = value
            return
        if modules is not None and name in modules:
            del modules[name]
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        # Called only when ordinary lookup fails: parameters and sub-modules live in dicts.
        params = self.__dict__.get("_parameters", {})
        if name in params:
            return self.current_parameters(name)[0]
        modules = self.__dict__.get("_modules", {})
        if name in modules:
            return modules[name]
        buffers = self.__dict__.get("_buffers", {})
        if name in buffers:
            return buffers[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str):
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, {}):
                del self.__dict__[store][name]
                return
        object.__delattr__(self, name)

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """``(name, tensor)`` for every parameter, sub-modules' as ``'child.weight'`` (a
        parameter shared by two modules once).

        >>> import kernelgraph as kg
        >>> [name for name, _ in kg.nn.RNNCell(2, 3, bias=False).named_parameters()]
        ['weight_ih', 'weight_hh']
        """
        seen: set = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mod_prefix, m in modules:
            for name, p in m._parameters.items():
                if p is None or (remove_duplicate and id(p) in seen):
                    continue
                seen.add(id(p))
                yield (mod_prefix + "." if mod_prefix else "") + name, p

    def parameters(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every parameter tensor (for an optimiser)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True
                      ) -> Iterator[tuple[str, Tensor]]:
        """``(name, tensor)`` for every buffer (see :meth:`register_buffer`)."""
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mod_prefix, m in modules:
            for name, b in m._buffers.items():
                if b is not None:
                    yield (mod_prefix + "." if mod_prefix else "") + name, b

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for this module (``''``) and every module inside it.

        >>> import kernelgraph as kg
        >>> [n for n, _ in kg.nn.Sequential(kg.nn.Linear(1, 1), kg.nn.ReLU()).named_modules()]
        ['', '0', '1']
        """
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, prefix + ("." if prefix else "") + name,
                                           remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This module and every module inside it."""
        for _, m in self.named_modules():
            yield m

    def apply(self, fn) -> Module:
        """Call ``fn(m)`` on every sub-module, then on this one (as PyTorch, children first,
        e.g. to initialise weights); returns self.

        >>> import kernelgraph as kg
        >>> net = kg.nn.Sequential(kg.nn.Linear(2, 2))
        >>> _ = net.apply(lambda m: kg.nn.init.zeros_(m.weight) if hasattr(m, "weight") else 0)
        >>> net[0].weight.tolist()
        [[0.0, 0.0], [0.0, 0.0]]
        """
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Switch gradient tracking of every parameter (freezing a model); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def get_submodule(self, target: str) -> Module:
        """The sub-module at the dotted path ``target`` (``'0.conv'``)."""
        m = self
        for part in target.split(".") if target else []:
            if part not in m._modules:
                raise AttributeError(f"{type(m).__name__} has no attribute `{part}`")
            m = m._modules[part]
        return m

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients ``backward()`` accumulated in every parameter."""
        zero_grads(self.parameters(), set_to_none)

    def train(self, mode: bool = True) -> Module:
        """Training mode (the default): layers such as dropout are active."""
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> Module:
        """Evaluation mode: ``train(False)``."""
        return self.train(False)

    # -- static mode -------------------------------------------------------------------------
    def variables(self, graph: Graph | None = None, recurse: bool = True) -> list:
        """This module's ``kg.Variable`` nodes in ``graph`` (the default graph if None),
        in parameter order; made now if the module was not used in that graph yet (their
        initial values are the parameters' values now).

        >>> import kernelgraph as kg
        >>> with kg.Graph().as_default() as g:
        ...     [v.name for v in kg.nn.RNNCell(2, 3, bias=False).variables()]
        ['rnn_cell/weight_ih', 'rnn_cell/weight_hh']
        """
        graph = root_graph(graph if graph is not None else get_default_graph())
        found = [v for name, v in self._graph_variables(graph).items()
                 if self._parameters[name] is not None]
        if recurse:
            for child in self._modules.values():
                found.extend(child.variables(graph, True))
        return found

    def state_dict(self) -> dict[str, np.ndarray]:
        """Every parameter's values, ``{'child.weight': array}`` (copies), in the order of
        :meth:`named_parameters`.

        >>> import kernelgraph as kg
        >>> {k: v.shape for k, v in kg.nn.RNNCell(2, 3, bias=False).state_dict().items()}
        {'weight_ih': (3, 2), 'weight_hh': (3, 3)}
        """
        return {name: np.array(to_numpy(p._array), copy=True)  # a GPU tensor: copied to host
                for name, p in self._state_items()}

    def _state_items(self) -> list:
        """``(name, tensor)`` of what :meth:`state_dict` saves, in PyTorch's order (per
        module: its parameters, then its persistent buffers; then its children)."""
        items, seen = [], set()
        for prefix, m in self.named_modules():
            dot = prefix + "." if prefix else ""
            # PyTorch's CheckpointWrapper keeps its module's state names unchanged.
            dot = dot.replace("_checkpoint_wrapped_module.", "")
            for name, p in m._parameters.items():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    items.append((dot + name, p))
            for name, b in m._buffers.items():
                if b is not None and name not in m._non_persistent:
                    items.append((dot + name, b))
        return items

    def load_state_dict(self, state_dict: dict, strict: bool = True) -> Module:
        """Copy ``state_dict``'s arrays into the parameters (in place). With ``strict``, its
        keys must be exactly the parameters' names; shapes must always match (a
        RuntimeError names the keys or the shapes otherwise, as in PyTorch).

        Graph variables already made for this module keep the initial values they were
        made with; load before building a graph (or assign the variables) to train on from
        the loaded values in static mode.

        >>> import kernelgraph as kg
        >>> a, b = kg.nn.RNNCell(2, 3), kg.nn.RNNCell(2, 3)
        >>> _ = b.load_state_dict(a.state_dict())
        >>> all((a.state_dict()[k] == v).all() for k, v in b.state_dict().items())
        True
        >>> b.load_state_dict({"weight_ih": a.state_dict()["weight_ih"]})
        Traceback (most recent call last):
        ...
        RuntimeError: RNNCell.load_state_dict: missing keys ['weight_hh', 'bias_ih', 'bias_hh']
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"load_state_dict expects a dict of name -> array, got "
                            f"{type(state_dict).__name__}")
        own = dict(self._state_items())
        what = f"{type(self).__name__}.load_state_dict"
        if strict:
            missing = [k for k in own if k not in state_dict]
            unexpected = [k for k in state_dict if k not in own]
            if missing or unexpected:
                parts = ([f"missing keys {missing}"] if missing else []) + \
                    ([f"unexpected keys {unexpected}"] if unexpected else [])
                raise RuntimeError(f"{what}: {'; '.join(parts)}")
        values = {}
        for name, value in state_dict.items():
            if name not in own:
                continue
            arr = to_numpy(value._array) if isinstance(value, Tensor) else np.asarray(value)
            if arr.shape != tuple(own[name].shape):
                raise RuntimeError(f"{what}: size mismatch for {name}: the checkpoint has shape "
                                 f"{arr.shape}, the parameter has shape {tuple(own[name].shape)}")
            if arr.dtype.kind not in "fiu":
                raise TypeError(f"{what}: {name} holds {arr.dtype.name} values, expected "
                                "numbers")
            values[name] = arr
        for name, arr in values.items():  # all checked first: no half-loaded module
            copy_into(own[name], arr)
        return self

    def _graph_variables(self, graph: Graph) -> dict:
        made = self._variables.get(graph)
        if made is None:
            made = {}
            # Made in the user's graph even while a loop body or branch is being traced
            # there (then the body reads them as captured inputs, like any outer node).
            # One name scope per module and graph, uniquified as TF does ('dense_1/...').
            with graph.as_default(), graph.name_scope(self.name):
                for name, p in self._parameters.items():
                    if p is not None:
                        made[name] = Variable(np.array(to_numpy(p._array), copy=True),
                                              name=name)
                        _PARAMETER_VARIABLES.setdefault(graph, {})[id(p)] = \
                            (weakref.ref(p), made[name])
            self._variables[graph] = made
        return made

    def current_parameters(self, *names: str) -> list:
        """The parameters ``names`` as ``forward`` sees them in the call in progress: eager
        tensors, or this module's variables in the caller's graph. ``self.weight`` reads one
        the same way; a forward run once per step reads all of its own in one call, which
        saves the failed ordinary lookup that each ``__getattr__`` pays for.

        >>> import kernelgraph as kg
        >>> layer = kg.nn.Linear(2, 3)
        >>> [p.shape for p in layer.current_parameters("weight", "bias")]   # eager: tensors
        [torch.Size([3, 2]), torch.Size([3])]
        """
        params = self._parameters
        stack = _calls.stack
        graph = stack[-1] if stack else None
        if graph is None:  # (map: no comprehension frame, once per step of an eager RNN)
            return list(map(params.__getitem__, names))
        made = self._graph_variables(graph)
        return [None if params[n] is None else made[n] for n in names]

    # -- calling -----------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        """``forward(*args, **kwargs)``, with parameters read in the mode of the arguments."""
        stack = _calls.stack
        values = [*args, *kwargs.values()] if kwargs else args
        for v in values:  # the eager hot path (an RNN's step): every argument a tensor
            if not isinstance(v, Tensor):
                graph = _static_graph(values)
                break
        else:
            graph = None
        if graph is None and not stack:  # an eager call outside any graph call: nothing to
            # mark (current_parameters reads None)
            return self.forward(*args, **kwargs) if kwargs else self.forward(*args)
        stack.append(graph)
        try:
            return self.forward(*args, **kwargs)
        finally:
            stack.pop()

    def extra_repr(self) -> str:
        """What ``repr`` shows between the parentheses (subclasses: their arguments)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        # PyTorch's layout: one line when there is only an extra_repr, else one line each
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _addindent(repr(child), 2)
                       for name, child in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._modules)
                      | set(self._buffers))
