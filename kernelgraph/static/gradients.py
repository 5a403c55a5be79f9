"""``kg.gradients(ys, xs)``: symbolic reverse mode, adding gradient nodes to the graph."""

from __future__ import annotations

from .. import autodiff, devices
from ..graph import Node, ancestors
from ..kernels import reference_grads as RG
from ..ops import ones_like, zeros_like
from ..ops.registry import define

# TF1's tf.stop_gradient: x itself forward, and no gradient flows back through it.
stop_gradient = define("stop_gradient", lambda x: x, lambda s, d, attrs: (s[0], d[0]), None,
                       traits=("view",), reference=RG.identity,
                       cuda=lambda k: k.elementwise.identity,
                       doc="x itself, as a constant to gradients (TF1's tf.stop_gradient).")
UNCONNECTED = ("none", "zero")


class _StaticMode(autodiff.Mode):
    """Graph nodes as autodiff sees them: a node is its own value, and only nodes on a path
    from an x to a y need gradients."""

    def __init__(self, between):
        self.between = between

    def value(self, node):
        return node

    def inputs(self, node):
        ins = node.inputs
        needs = [id(x) in self.between for x in ins]
        return needs, list(ins), [x if need else None for x, need in zip(ins, needs)]

    same_shape = staticmethod(autodiff.static_same_shape)


def _as_list(v):
    return list(v) if isinstance(v, list | tuple) else [v]


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients="none"):
    """Symbolic d(sum of ys)/d(x) for each x in ``xs``: a list of nodes (``None`` where an x
    does not reach any y), as TF1's ``tf.gradients``. Each is the total derivative, along
    every path, also where one x is computed from another (``t = 2 * x; z = 3 * t``:
    ``gradients(z, [x, t])`` is ``[6, 3]``); a y that is itself an x gets its ``grad_ys``
    (1 by default); ``grad_ys`` weights each y's gradient; repeated ys add up.

    >>> import kernelgraph as kg
    >>> g = kg.Graph()
    >>> with g.as_default():
    ...     a = kg.placeholder(kg.float32); b = kg.placeholder(kg.float32)
    ...     c = a * b
    ...     da, db = kg.gradients(c, [a, b])
    ...     with kg.Session() as s:
    ...         s.run([da, db], feed_dict={a: 15.0, b: 20.0})
    [np.float32(20.0), np.float32(15.0)]

    TF1's other arguments: ``stop_gradients`` (nodes held constant: no gradient flows
    through them, so with ``gradients(z, [x, t], stop_gradients=[x, t])`` each is the
    partial derivative), ``unconnected_gradients='zero'`` (zeros instead of None for an x that
    no y depends on); ``aggregation_method``, ``gate_gradients`` and
    ``colocate_gradients_with_ops`` are accepted and change nothing (gradients are summed
    exactly, placed with the nodes they differentiate).
    """
    mode = getattr(unconnected_gradients, "value", unconnected_gradients)
    if mode not in UNCONNECTED:
        raise ValueError(f"Unknown value for unconnected_gradients: '{unconnected_gradients}'")
    ys, xs = _as_list(ys), _as_list(xs)
    stops = {id(s) for s in _as_list(stop_gradients)} if stop_gradients is not None else set()
    grad_ys = [None] * len(ys) if grad_ys is None else _as_list(grad_ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    for t in ys + xs:
        if not isinstance(t, Node):
            raise TypeError(f"gradients() takes graph nodes, got {type(t).__name__}")
    graph = ys[0].graph
    for t in ys + xs:
        if t.graph is not graph:
            raise ValueError(f"Tensor {t!r} must be from the same graph as {ys[0]!r}.")

    # Nodes that are ancestors of some y ...
    above = ancestors(ys, controls=False)
    # ... and descendants of some x: the nodes gradients must flow through.
    x_ids = {id(x) for x in xs}
    between = set()
    for n in above:
        if id(n) in stops and id(n) not in x_ids:
            continue  # held constant: nothing flows through it
        if id(n) in x_ids or any(id(i) in between for i in n.inputs):
            between.add(id(n))
    # Gradient nodes are placed with the nodes they differentiate (they follow their
    # inputs), whatever device scope kg.gradients is called in.
    with graph.as_default(), graph.name_scope(name), devices.unplaced():
        grads = {}
        for y, gy in zip(ys, grad_ys):
            if id(y) not in between:
                continue
            gy = ones_like(y) if gy is None else gy
            prev = grads.get(id(y))
            grads[id(y)] = (y, gy if prev is None else prev[1] + gy)
        # An x is walked through too when an earlier x reaches it (t = 2 * x and xs = [x, t]:
        # dz/dx flows on through t), while t's own gradient is kept as the answer for t;
        # unless t is in stop_gradients: then dz/dx is the partial, along paths avoiding t.
        order = [n for n in reversed(above)
                 if id(n) in between and id(n) not in stops
                 and (id(n) not in x_ids or any(id(i) in between for i in n.inputs))]
        autodiff.propagate(order, grads, _StaticMode(between), keep=x_ids)
        out = [grads[id(x)][1] if id(x) in grads else None for x in xs]
        if mode == "zero":
            out = [zeros_like(x) if g is None else g for x, g in zip(xs, out)]
    return out
