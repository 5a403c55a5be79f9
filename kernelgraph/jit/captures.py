"""Captured tensors: tensors a traced function reads that are not its arguments.

A model's parameters are the usual example (``x @ w + b`` with ``w``, ``b`` globals or
attributes of ``self``). They are *fed* to the plan on every call with their current value,
so training updates are seen. Because Python code often *rebinds* a parameter rather than
changing it in place (``w = w - lr * w.grad``), the trace remembers where it found each one
-- a global, a closure variable, an attribute path such as ``self.layer1.w`` -- and looks it
up there again on every call. A tensor found on no such path is held by a weak reference:
when it is gone (replaced), the trace is stale and is made again.

>>> import kernelgraph as kg
>>> class Model:
...     def __init__(self):
...         self.w = kg.ones(2)
>>> m = Model()
>>> found = find_paths({id(m.w): m.w}, [(("arg", 0), "self", m)])
>>> cap = Capture(m.w, *found[id(m.w)])
>>> cap.name, cap.get((m,), {}) is m.w
('self.w', True)
>>> m.w = kg.zeros(2)                     # rebound: the capture follows the path
>>> cap.get((m,), {}) is m.w
True
"""

from __future__ import annotations

import collections
import types
import weakref

from ..eager import Tensor

_MAX_VISITS = 5000  # objects looked at per trace when searching where captures live
_MAX_DEPTH = 4  # attribute / item steps from a root: self.encoder.layers[0].w
_MAX_ITEMS = 256  # longer lists and dicts are not searched item by item
_SKIP = (types.ModuleType, type, types.BuiltinFunctionType, str, bytes, int, float, bool,
         type(None))


def _code_names(code) -> set:
    """The global names a code object (and the functions defined in it) can read."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


def _function_children(fn):
    """(step, value) pairs for a function: the globals it reads and its closure cells."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    glob = getattr(fn, "__globals__", {})
    for name in sorted(_code_names(code)):
        if name in glob:
            yield ("global", name), glob[name]
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            yield ("cell", name), cell.cell_contents
        except ValueError:  # an empty cell: the variable is not assigned yet
            continue


def _children(obj):
    if isinstance(obj, list | tuple):
        if len(obj) <= _MAX_ITEMS:
            yield from ((("item", i), x) for i, x in enumerate(obj))
        return
    if isinstance(obj, dict):
        if len(obj) <= _MAX_ITEMS:
            yield from ((("item", k), v) for k, v in obj.items()
                        if isinstance(k, str | int))
        return
    if isinstance(obj, types.FunctionType):
        yield from _function_children(obj)
        return
    if isinstance(obj, types.MethodType):
        yield ("attr", "__self__"), obj.__self__
        yield ("attr", "__func__"), obj.__func__
        return
    attrs = getattr(obj, "__dict__", None)
    if isinstance(attrs, dict) and len(attrs) <= _MAX_ITEMS:
        yield from ((("attr", k), v) for k, v in attrs.items() if isinstance(k, str))


def find_paths(targets: dict, roots: list) -> dict:
    """Breadth-first search from ``roots`` (``(root, name, object)``) for the tensors in
    ``targets`` (``{id: tensor}``); returns ``{id: (root, name, steps)}`` for those found."""
    found: dict = {}
    seen: set = set()
    queue = collections.deque((root, name, (), obj) for root, name, obj in roots)
    visits = 0
    while queue and len(found) < len(targets) and visits < _MAX_VISITS:
        root, name, steps, obj = queue.popleft()
        if id(obj) in seen or isinstance(obj, _SKIP):
            continue
        seen.add(id(obj))
        visits += 1
        if type(obj) is Tensor:
            if id(obj) in targets and id(obj) not in found:
                found[id(obj)] = (root, name, steps)
            continue
        if len(steps) >= _MAX_DEPTH:
            continue
        for step, child in _children(obj):
            queue.append((root, name, (*steps, step), child))
    return found


def roots_of(fn, args: tuple, kwargs: dict, params: list) -> list:
    """Where a function's captures may live: its globals and closure cells, the object a
    bound method belongs to, and its non-tensor arguments."""
    roots = []
    target = fn
    if isinstance(fn, types.MethodType):
        roots.append((("self", fn.__self__), "self", fn.__self__))
        target = fn.__func__
    for step, value in _function_children(target):
        roots.append(((step[0], step[1], target), step[1], value))
    for i, a in enumerate(args):
        if type(a) is not Tensor:
            roots.append((("arg", i), params[i] if i < len(params) else f"args[{i}]", a))
    for k, v in kwargs.items():
        if type(v) is not Tensor:
            roots.append((("kwarg", k), k, v))
    return roots


def _step(obj, step):
    kind, key = step
    if kind == "attr":
        return getattr(obj, key)
    if kind == "item":
        return obj[key]
    if kind == "global":
        return obj.__globals__[key]
    # a closure cell of a function reached on the way
    return obj.__closure__[obj.__code__.co_freevars.index(key)].cell_contents


def _base_getter(root):
    """A fast ``(args, kwargs) -> object`` for a root (looked up on every call)."""
    kind = root[0]
    if kind == "arg":
        i = root[1]
        return lambda args, kwargs: args[i]
    if kind == "kwarg":
        k = root[1]
        return lambda args, kwargs: kwargs[k]
    if kind == "self":
        obj = root[1]
        return lambda args, kwargs: obj
    fn = root[2]
    if kind == "global":
        glob, name = fn.__globals__, root[1]
        return lambda args, kwargs: glob[name]
    cell = fn.__closure__[fn.__code__.co_freevars.index(root[1])]  # the cell is fixed
    return lambda args, kwargs: cell.cell_contents


def _path_name(name: str, steps: tuple) -> str:
    text = name
    for kind, key in steps:
        text += f".{key}" if kind in ("attr", "global", "cell") else f"[{key!r}]"
    return text


class Capture:
    """One captured tensor: how to find it on each call, and what it looked like."""

    __slots__ = ("root", "steps", "ref", "name", "spec", "node", "_base")

    def __init__(self, tensor: Tensor, root=None, name: str | None = None, steps=()):
        self.root = root  # None: held by weak reference only
        self.steps = steps
        self.ref = weakref.ref(tensor) if root is None else None
        self.name = _path_name(name, steps) if root is not None else None
        d = tensor._array
        self.spec = (tuple(d.shape), d.dtype, type(d), tensor.requires_grad)
        self.node = None  # the placeholder that feeds it (set by the converter)
        self._base = None if root is None else _base_getter(root)

    def get(self, args: tuple, kwargs: dict):
        """The tensor this capture stands for now (None when it cannot be found)."""
        if self._base is None:
            return self.ref()
        try:
            obj = self._base(args, kwargs)
            for step in self.steps:
                obj = _step(obj, step)
        except Exception:  # noqa: BLE001 - a path that no longer works: the trace is stale
            return None
        return obj

    def __repr__(self):
        return f"<captured tensor {self.name or '(by reference)'}>"
