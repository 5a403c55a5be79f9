"""Which gradient reached which node: replaying the engine's own gradient rules on values.

``kg.gradients`` adds anonymous nodes (``gradients/mul``, ``gradients/sum_to_like`` ...) and
does not record which forward node each one is the gradient of. To draw gradients reaching
the inputs, we replay :func:`kernelgraph.autodiff.propagate` on the *values* a traced
``Session.run`` produced (plain arrays: the rules compute, they add no nodes) and then match
each forward node's replayed gradient with the gradient node whose run value equals it. Only
nodes whose gradient the session really computed get one.

In eager mode the same replay gives the gradient that reached intermediate nodes, which
``backward()`` frees and does not keep.

>>> import kernelgraph as kg
>>> g = kg.Graph()
>>> with g.as_default():
...     a = kg.placeholder(kg.float32, name="a"); b = kg.placeholder(kg.float32, name="b")
...     c = a * b
...     da, db = kg.gradients(c, [a, b])
>>> values = {id(a): np.float32(15), id(b): np.float32(20), id(c): np.float32(300)}
>>> sorted(float(v) for _, v in replay([(c, np.float32(1))], values).values())
[1.0, 15.0, 20.0]
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable

import numpy as np

from .. import autodiff, trace
from ..dtypes import FLOATS

GRADIENT_SCOPE = re.compile(r"(?:^|/)(gradients(?:_\d+)?)/")


def gradient_scope(name: str) -> str | None:
    """The ``gradients`` scope a node name lies in (``'gradients_1'``), or None."""
    m = GRADIENT_SCOPE.search(name)
    return name[:m.end(1)] if m else None


@contextlib.contextmanager
def _quiet():
    """Replaying must not look like a real backward pass to other trace listeners."""
    saved = trace.active
    trace.active = False
    try:
        yield
    finally:
        trace.active = saved and bool(trace._listeners)


class _Replay(autodiff.Mode):
    def __init__(self, values: dict, inputs_of: Callable):
        self.values = values
        self.inputs_of = inputs_of
        self.seen: dict = {}

    def value(self, node):
        return self.values[id(node)]

    def inputs(self, node):
        needs, vals, keys = [], [], []
        for key, val in self.inputs_of(node):
            needs.append(key is not None)
            vals.append(val)
            keys.append(key)
        return needs, vals, keys

    def same_shape(self, g, x):
        return np.shape(g) == np.shape(x)

    def on_gradient(self, node, g):
        self.seen[id(node)] = (node, g)
        return g


def _static_inputs(values, wanted):
    def inputs_of(node):
        return [(x if id(x) in wanted else None, values.get(id(x))) for x in node.inputs]
    return inputs_of


def replay(seeds: Iterable, values: dict, inputs_of: Callable | None = None,
           order: list | None = None) -> dict:
    """Gradients ``{id(key): (key, array)}`` reaching every node from ``seeds`` ((node,
    gradient) pairs), by the engine's rules on ``values`` (``{id(node): array}``).

    Without ``inputs_of``/``order`` the nodes are static graph nodes: every float ancestor
    of a seed with a value takes part. Returns ``{}`` if a rule fails on these values.
    """
    seeds = list(seeds)
    if order is None:
        wanted, stack = {}, [n for n, _ in seeds]
        while stack:
            n = stack.pop()
            if id(n) in wanted or id(n) not in values or n.op.name == "const":
                continue
            if getattr(n.dtype, "name", None) not in {d.name for d in FLOATS}:
                continue
            wanted[id(n)] = n
            stack.extend(n.inputs)
        order = sorted((n for n in wanted.values()
                        if n.op.grad is not None and all(id(x) in values for x in n.inputs)),
                       key=lambda n: n.seq, reverse=True)
        inputs_of = _static_inputs(values, wanted)
    grads = {}
    for node, g in seeds:
        grads[id(node)] = (node, np.asarray(g))
    mode = _Replay(values, inputs_of)
    try:
        with _quiet(), np.errstate(all="ignore"):
            rest = autodiff.propagate(order, grads, mode)
    except Exception:  # noqa: BLE001 - a picture must never fail because a replay did
        return {}
    out = dict(mode.seen)
    out.update(rest)
    return {k: (n, np.asarray(g)) for k, (n, g) in out.items()}


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    try:
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            return bool(np.allclose(a, b, rtol=1e-5, atol=1e-7, equal_nan=True))
        return bool(np.array_equal(a, b))
    except TypeError:
        return False


def static_gradient_map(nodes: Iterable, values: dict) -> list[tuple]:
    """``[(forward_node, gradient_node, value)]`` for the forward nodes whose gradient a run
    computed, in the order the gradient nodes ran (creation order).

    ``nodes`` are the graph nodes drawn; ``values`` their run values ``{id(node): array}``.
    A gradient node is matched to a forward node when its value equals the replayed
    gradient; among equal candidates the one that takes the forward node as an input
    (``sum_to_like(g, x)``, ``ones_like(y)``) wins, then the one created last.
    """
    nodes = list(nodes)
    scopes: dict[str, list] = {}
    for n in nodes:
        s = gradient_scope(n.name)
        if s is not None:
            scopes.setdefault(s, []).append(n)
    found: dict[int, tuple] = {}
    for members in scopes.values():
        seeds = [(g.inputs[0], values[id(g)]) for g in members
                 if g.op.name == "ones_like" and g.inputs and id(g) in values
                 and gradient_scope(g.inputs[0].name) is None]
        if not seeds:
            continue
        by_shape: dict[tuple, list] = {}
        for g in members:
            if id(g) in values:
                arr = np.asarray(values[id(g)])
                by_shape.setdefault(arr.shape, []).append((g, arr))
        for fid, (f, garr) in replay(seeds, values).items():
            if fid in found:
                continue
            best, best_key = None, None
            for g, arr in by_shape.get(garr.shape, ()):
                if _same(arr, garr):
                    key = (any(x is f for x in g.inputs), g.seq)
                    if best_key is None or key > best_key:
                        best, best_key = (g, arr), key
            if best is not None:
                found[fid] = (f, best[0], best[1])
    return sorted(found.values(), key=lambda t: t[1].seq)
