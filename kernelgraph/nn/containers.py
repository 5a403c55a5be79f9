"""Containers of modules and parameters, as PyTorch's: ``Sequential`` (also from an
``OrderedDict`` of named layers), ``ModuleList``, ``ModuleDict``, ``ParameterList`` and
``ParameterDict``. Their contents are registered, so ``parameters()``, ``state_dict()``,
``to()`` and ``repr`` see them.

>>> import kernelgraph as kg
>>> from collections import OrderedDict
>>> net = kg.nn.Sequential(OrderedDict([("fc", kg.nn.Linear(2, 3)), ("act", kg.nn.ReLU())]))
>>> net
Sequential(
  (fc): Linear(in_features=2, out_features=3, bias=True)
  (act): ReLU()
)
>>> [name for name, _ in net.named_parameters()]
['fc.weight', 'fc.bias']
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator

from ..eager import Tensor
from ..errors import shown
from ..graph import Node
from .module import Module, _addindent
from .parameter import Parameter, is_parameter

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


def _module(owner: str, k, m) -> Module:
    if not isinstance(m, Module):
        raise TypeError(f"{owner}: argument {k} is a {type(m).__name__}, expected a "
                        "kg.nn.Module")
    return m


def _index(owner: str, n: int, index) -> int:
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"{owner} indices must be integers or slices, not "
                        f"{type(index).__name__}")
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of range")
    return index + n if index < 0 else index


class Sequential(Module):
    """Modules called one after another (``torch.nn.Sequential``); children are named
    ``'0'``, ``'1'`` ... (or by the keys of an ``OrderedDict``) in ``named_parameters``
    and ``state_dict``.

    >>> import kernelgraph as kg
    >>> net = kg.nn.Sequential(kg.nn.Linear(2, 3), kg.nn.Tanh())
    >>> [name for name, _ in net.named_parameters()], len(net), type(net[1]).__name__
    (['0.weight', '0.bias'], 2, 'Tanh')
    """

    def __init__(self, *modules: Module):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict | dict):
            for name, m in modules[0].items():
                self.add_module(str(name), _module("Sequential", name, m))
            return
        for k, m in enumerate(modules):
            self._modules[str(k)] = _module("Sequential", k, m)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, index):
        items = list(self._modules.items())
        if isinstance(index, slice):
            return Sequential(OrderedDict(items[index]))
        return items[_index("Sequential", len(items), index)][1]

    def __setitem__(self, index: int, module: Module) -> None:
        key = list(self._modules)[_index("Sequential", len(self._modules), index)]
        self._modules[key] = _module("Sequential", index, module)

    def __delitem__(self, index) -> None:
        keys = list(self._modules)
        for key in (keys[index] if isinstance(index, slice)
                    else [keys[_index("Sequential", len(keys), index)]]):
            del self._modules[key]

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end.

        >>> import kernelgraph as kg
        >>> len(kg.nn.Sequential(kg.nn.ReLU()).append(kg.nn.Tanh()))
        2
        """
        self._modules[str(len(self._modules))] = _module("Sequential", len(self), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        items = list(self._modules.values())
        items.insert(index, _module("Sequential", index, module))
        self._modules.clear()
        self._modules.update((str(k), m) for k, m in enumerate(items))
        return self

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        for m in self._modules.values():
            x = m(x)
        return x


class ModuleList(Module):
    """A list of modules, registered (``torch.nn.ModuleList``): index, iterate, append.

    >>> import kernelgraph as kg
    >>> layers = kg.nn.ModuleList([kg.nn.Linear(2, 2) for _ in range(3)])
    >>> len(layers), len(list(layers.parameters()))
    (3, 6)
    >>> layers
    ModuleList(
      (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)
    )
    """

    def __init__(self, modules: Iterable[Module] | None = None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, index):
        items = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(items[index])
        return items[_index("ModuleList", len(items), index)]

    def __setitem__(self, index: int, module: Module) -> None:
        k = _index("ModuleList", len(self), index)
        self._modules[str(k)] = _module("ModuleList", index, module)

    def __delitem__(self, index) -> None:
        items = list(self._modules.values())
        del items[index if isinstance(index, slice) else _index("ModuleList", len(items),
                                                                 index)]
        self._modules.clear()
        self._modules.update((str(k), m) for k, m in enumerate(items))

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        self._modules[str(len(self))] = _module("ModuleList", len(self), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = list(self._modules.values())
        items.insert(index, _module("ModuleList", index, module))
        self._modules.clear()
        self._modules.update((str(k), m) for k, m in enumerate(items))

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList is a container: call its modules, not the list")

    def __repr__(self):
        # PyTorch folds runs of equal entries: "(0-2): 3 x Linear(...)"
        reprs = [repr(m) for m in self]
        if not reprs:
            return "ModuleList()"
        runs: list = []
        for k, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = k
            else:
                runs.append([k, k, r])
        lines = [_addindent(f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}", 2)
                 for a, b, r in runs]
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules, registered (``torch.nn.ModuleDict``).

    >>> import kernelgraph as kg
    >>> acts = kg.nn.ModuleDict({"relu": kg.nn.ReLU(), "tanh": kg.nn.Tanh()})
    >>> acts["tanh"](kg.zeros(1)).tolist(), list(acts.keys())
    ([0.0], ['relu', 'tanh'])
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, _module("ModuleDict", key, module))

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules) -> None:
        pairs = modules.items() if hasattr(modules, "items") else modules
        for key, m in pairs:
            self[key] = m

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleDict is a container: call its modules, not the dict")


def _as_parameter(value):
    return value if is_parameter(value) or value is None else Parameter(value)


def _parameter_line(p) -> str:
    dtype = str(p.dtype)
    size = "x".join(str(d) for d in p.shape)
    where = "" if p.device == "cpu" else f" ({p.device})"
    return f"Parameter containing: [torch.{dtype} of size {size}{where}]"


class ParameterList(Module):
    """A list of parameters, registered as ``'0'``, ``'1'`` ... (``torch.nn.ParameterList``).

    >>> import kernelgraph as kg
    >>> ps = kg.nn.ParameterList([kg.nn.Parameter(kg.ones(2)) for _ in range(2)])
    >>> [name for name, _ in ps.named_parameters()]
    ['0', '1']
    """

    def __init__(self, values=None):
        super().__init__()
        for v in values or ():
            self.append(v)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __getitem__(self, index):
        items = list(self._parameters.values())
        if isinstance(index, slice):
            return ParameterList(items[index])
        return items[_index("ParameterList", len(items), index)]

    def __setitem__(self, index: int, value) -> None:
        self.register_parameter(str(_index("ParameterList", len(self), index)),
                                _as_parameter(value))

    def append(self, value) -> ParameterList:
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values) -> ParameterList:
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_parameter_line(p)}" for k, p in self._parameters.items())


class ParameterDict(Module):
    """A dict of parameters, registered under their keys (``torch.nn.ParameterDict``).

    >>> import kernelgraph as kg
    >>> pd = kg.nn.ParameterDict({"a": kg.nn.Parameter(kg.ones(1))})
    >>> list(pd.keys()), pd["a"].tolist()
    (['a'], [1.0])
    """

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        return self._parameters[key]

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, got {shown(key)}")
        self.register_parameter(key, _as_parameter(value))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key) -> bool:
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def values(self):
        return self._parameters.values()

    def items(self):
        return self._parameters.items()

    def update(self, parameters) -> None:
        pairs = parameters.items() if hasattr(parameters, "items") else parameters
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_parameter_line(p)}" for k, p in self._parameters.items())
