"""Input signatures: what a call's arguments look like, as the key of its trace.

A signature is a flat tuple with one entry per argument leaf, containers included, so it
hashes fast and two calls share a trace exactly when their entries are equal:

- a tensor: ``("T", shape, dtype, device, requires_grad)`` -- its values are not part of it;
- the same tensor object again: ``("A", i)`` (the trace read one placeholder for both);
- a list / tuple / dict: ``("L", type, length)`` / ``("D", keys)``, then its items;
- anything else: ``("V", type, value)`` -- Python numbers, strings, None, objects (by their
  hash), so ``f(x, 2)`` and ``f(x, 3)`` are two traces, as with ``tf.function``.

>>> import kernelgraph as kg
>>> key, tensors = signature((kg.ones(2, 3), 2.0), {})
>>> key[0][:3], key[1]
(('T', (2, 3), dtype('float32')), ('V', <class 'float'>, 2.0))
"""

from __future__ import annotations

import numpy as np

from .. import devices
from ..eager import Tensor
from ..graph import Node, shape_str

ndarray = np.ndarray


class ArgumentError(TypeError):
    """An argument kg.function cannot key a trace by; ``template`` has a ``{path}`` slot
    for the argument's name (the caller knows the parameter names)."""

    def __init__(self, template: str, path: str):
        super().__init__(template.format(path=path))
        self.template, self.path = template, path


def signature(args: tuple, kwargs: dict, names: list | None = None) -> tuple[tuple, list]:
    """``(key, tensors)`` for a call: the hashable key and its distinct tensors in order.
    With ``names`` (a list), also appends each entry's argument path ("x", "batch[0]")."""
    specs: list = []
    tensors: list = []
    seen: dict = {}
    for i, a in enumerate(args):
        _flatten(a, specs, tensors, seen, names, f"<{i}>")
    if kwargs:
        for k in sorted(kwargs):
            specs.append(("K", k))
            if names is not None:
                names.append(k)
            _flatten(kwargs[k], specs, tensors, seen, names, k)
    return tuple(specs), tensors


def _flatten(obj, specs, tensors, seen, names, path):
    t = type(obj)
    if t is Tensor:
        first = seen.get(id(obj))
        if first is not None:
            specs.append(("A", first))
        else:
            seen[id(obj)] = len(tensors)
            tensors.append(obj)
            d = obj._array
            if type(d) is ndarray:
                specs.append(("T", d.shape, d.dtype, "cpu", obj.requires_grad))
            else:  # a device array (whose shape may not be a plain tuple)
                specs.append(("T", tuple(d.shape), d.dtype, str(devices.device_of(d)),
                              obj.requires_grad))
        if names is not None:
            names.append(path)
        return
    if t is list or isinstance(obj, tuple):
        specs.append(("L", t, len(obj)))
        if names is not None:
            names.append(path)
        for i, x in enumerate(obj):
            _flatten(x, specs, tensors, seen, names, f"{path}[{i}]")
        return
    if t is dict:
        try:
            keys = tuple(obj)
            hash(keys)
        except TypeError:
            raise ArgumentError("kg.function: argument '{path}' is a dict with unhashable "
                                "keys; use string or number keys", path) from None
        specs.append(("D", keys))
        if names is not None:
            names.append(path)
        for k, v in obj.items():
            _flatten(v, specs, tensors, seen, names, f"{path}[{k!r}]")
        return
    if isinstance(obj, Node):
        raise ArgumentError(f"kg.function takes eager tensors, got the graph node "
                            f"'{obj.name}' as argument '{{path}}'; in a static graph, call the "
                            "Python function itself (its ops add nodes)", path)
    if t is ndarray or devices.is_cuda_array(obj):
        raise ArgumentError("kg.function: argument '{path}' is an array; pass a tensor "
                            "(kg.tensor(array)) so the trace reads it as an input -- an array "
                            "would be frozen into the trace as a constant", path)
    try:
        hash(obj)
    except TypeError:
        raise ArgumentError(f"kg.function: argument '{{path}}' of type {t.__name__} is not "
                            "hashable. kg.function keys its traces by tensor shapes and by the "
                            "values of other arguments; pass a tuple, a tensor, or a hashable "
                            "object", path) from None
    specs.append(("V", t, obj))
    if names is not None:
        names.append(path)


def readable(names: list, params: list) -> list:
    """Argument paths with positions replaced by parameter names: ``<0>[1]`` -> ``xs[1]``."""
    out = []
    for name in names:
        if name.startswith("<"):
            end = name.index(">")
            i = int(name[1:end])
            base = params[i] if i < len(params) else f"args[{i}]"
            name = base + name[end + 1:]
        out.append(name)
    return out


def describe(spec) -> str:
    """One entry of a signature in words."""
    kind = spec[0]
    if kind == "T":
        _, shape, dtype, dev, rg = spec
        text = f"{dtype.name} tensor of shape {shape_str(shape)}"
        if dev != "cpu":
            text += f" on {dev}"
        return text + (" requiring grad" if rg else "")
    if kind == "A":
        return f"the same tensor as argument #{spec[1]}"
    if kind == "L":
        return f"{spec[1].__name__} of length {spec[2]}"
    if kind == "D":
        return f"dict with keys {list(spec[1])}"
    if kind == "K":
        return f"keyword {spec[1]}"
    text = repr(spec[2])
    return text if len(text) <= 40 else text[:37] + "..."


def _tensor_change(a, b) -> str:
    parts = []
    if a[1] != b[1]:
        parts.append(f"shape {shape_str(a[1])} -> {shape_str(b[1])}")
    if a[2] != b[2]:
        parts.append(f"dtype {a[2].name} -> {b[2].name}")
    if a[3] != b[3]:
        parts.append(f"device {a[3]} -> {b[3]}")
    if a[4] != b[4]:
        parts.append(f"requires_grad {a[4]} -> {b[4]}")
    return ", ".join(parts)


def changes(old: tuple, old_names: list, new: tuple, new_names: list) -> list[str]:
    """What differs between two signatures, per argument: ``["x: shape (3,) -> (4,)"]``."""
    if len(old) != len(new) or old_names != new_names:
        return [f"the arguments changed from ({', '.join(dict.fromkeys(old_names))}) to "
                f"({', '.join(dict.fromkeys(new_names))})"]
    out = []
    for name, a, b in zip(new_names, old, new):
        if a == b:
            continue
        if a[0] == b[0] == "T":
            out.append(f"{name}: {_tensor_change(a, b)}")
        else:
            out.append(f"{name}: {describe(a)} -> {describe(b)}")
    return out


def relax(old: tuple, new: tuple) -> tuple | None:
    """The signature that accepts both: tensor dims that differ become None. None when the
    two differ in anything but tensor dims (or do not differ at all)."""
    if len(old) != len(new):
        return None
    out, relaxed = [], False
    for a, b in zip(old, new):
        if a == b:
            out.append(a)
        elif a[0] == b[0] == "T" and a[2:] == b[2:] and len(a[1]) == len(b[1]):
            shape = tuple(d if d == e else None for d, e in zip(a[1], b[1]))
            out.append(("T", shape, *a[2:]))
            relaxed = True
        else:
            return None
    return tuple(out) if relaxed else None


def accepts(relaxed: tuple, key: tuple) -> bool:
    """Does the relaxed signature ``relaxed`` (None dims) accept the exact ``key``?"""
    if len(relaxed) != len(key):
        return False
    for a, b in zip(relaxed, key):
        if a == b:
            continue
        if not (a[0] == b[0] == "T" and a[2:] == b[2:] and len(a[1]) == len(b[1])
                and all(d is None or d == e for d, e in zip(a[1], b[1]))):
            return False
    return True
