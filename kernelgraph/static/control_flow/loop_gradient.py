"""The gradient of a static ``kg.while_loop``: a ``while_grad`` node.

``kg.gradients`` inside the body's graph (with placeholders for the incoming gradients)
gives the body's gradient graph. The ``while_grad`` node runs it backwards over the loop
variables the forward run recorded, summing the gradients of the captured tensors (weights)
over the iterations. The activations that gradient graph reads (an RNN cell's output, a
dropout mask) are kept by the forward loop each iteration, as TF's stacks keep them, and fed
to it: the body's forward is not computed twice, and a random draw in the body is the same
draw in its gradient. A weight's gradient that is a sum over rows is computed once, after
the loop, over all the iterations' rows (:func:`_summed_once`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ... import dtypes as D
from ...graph import Node
from ...ops import matmul, matrix_transpose, sum_to_like
from ...ops import sum as reduce_sum
from ...ops.control import OBJECT, Results, while_grad_op
from ..build import placed
from .subgraph import FedValues, Subgraph, TupleSpec, gradient_graph, prune
from .tracing import CPU, made_at, tuple_outputs

if TYPE_CHECKING:  # (loop.py imports this module: the loop's kernel calls its gradient rule)
    from .loop import WhileSpec


class WhileGradSpec(TupleSpec):
    """The kernel of a ``while_grad`` node: the body's gradient graph, run from the last
    iteration to the first on the loop variables the forward run recorded."""

    def __init__(self, sub: Subgraph, saved_at: list, n_vars: int, floats: list,
                 stacked: list, present: list, caps: list, n_rest: int, name: str, location,
                 summed=None):
        self.sub = sub  # inputs: the body inputs it reads, the saved activations, gradients
        # Per capture, how its gradient over the iterations comes from sub's outputs after
        # the loop gradients: (None, [k]) adds output k up iteration by iteration; (node,
        # [value, ...]) runs node once on values joined over the iterations, each value
        # ("out", k), sub's output k, or ("in", k), what sub is fed at position k (see
        # _summed_once). None: every capture's is output len(floats) + c, added up.
        self.summed = summed or [(None, [len(floats) + c]) for c in range(len(caps))]
        self._rows = sorted({v for node, at in self.summed if node is not None for v in at})
        self.saved_at = saved_at  # where each saved activation it reads is in Results.saved
        self.n_vars = n_vars
        self.floats = floats    # loop variables that carry gradients
        self.stacked = stacked  # float per-iteration outputs (their index among those)
        self.present = present  # outputs of the forward node whose gradient is an input here
        self.caps = caps        # forward-node inputs (captures) whose gradient is summed
        self.n_rest = n_rest
        self.name, self.location = name, location

    def run(self, results: Results, inputs) -> Results:
        n = self.n_vars
        rest, given = list(inputs[:self.n_rest]), dict(zip(self.present, inputs[self.n_rest:]))
        final, history = results.values, results.history
        grads = [given[k] if k in given else np.zeros_like(final[k]) for k in self.floats]
        per_step = [given.get(n + s) for s in self.stacked]
        sums = [None] * len(self.caps)
        saved = results.saved
        # One zero gradient per per-iteration output that received none, fed to every
        # iteration (a plan never writes into what it is fed).
        zeros = [np.zeros_like(final[n + s][0]) if g is None and len(history) > 1 else None
                 for g, s in zip(per_step, self.stacked)]
        fed = FedValues()
        rows = {v: [] for v in self._rows}  # a value of _rows -> its value at each iteration
        for i in reversed(range(len(history) - 1)):
            full, kept = list(history[i]) + rest, saved[i]
            step_grads = [g[i] if g is not None else z for g, z in zip(per_step, zeros)]
            ins = ([full[j] for j in self.sub.index] + [kept[j] for j in self.saved_at] +
                   grads + step_grads)
            out = self.sub.run(ins, lambda i=i: f"in the body's gradient at iteration {i}, " +
                               made_at("gradient of kg.while_loop", self.name,
                                       self.location), fed)
            grads = out[:len(self.floats)]
            for v, seen in rows.items():
                seen.append((out if v[0] == "out" else ins)[v[1]])
            for c, (node, at) in enumerate(self.summed):
                if node is not None:
                    continue
                if sums[c] is None:
                    sums[c] = np.array(out[at[0]], copy=True)  # owned: summed into in place
                else:
                    np.add(sums[c], out[at[0]], out=sums[c])
        if rows and len(history) > 1:  # one call over all the iterations' rows (oldest first)
            joined = {v: np.concatenate(seen[::-1]) for v, seen in rows.items()}
            done: dict = {}  # a node's sum, computed once (a cell's two biases share one)
            for c, (node, at) in enumerate(self.summed):
                if node is None:
                    continue
                if id(node) in done:
                    sums[c] = done[id(node)].copy()  # (each capture owns its gradient)
                else:
                    sums[c] = done[id(node)] = _run_on_rows(node, [joined[v] for v in at])
        if len(history) == 1:  # no iteration: the incoming gradients pass through, copied
            grads = [np.array(g, copy=True) for g in grads]  # (they may be constants)
        sums = [s if s is not None else np.zeros(np.shape(rest[c]), np.asarray(rest[c]).dtype)
                for s, c in zip(sums, self.caps)]
        return Results(list(grads) + sums)


def _fed_kept_activations(spec: WhileSpec, grad: Subgraph, n_grads: int):
    """``grad`` (the body's gradient graph, inputs ``body.inputs + n_grads gradients``) fed
    each iteration the forward activations it reads, which the forward loop then keeps,
    instead of computing the body's forward again; and fed only the body inputs it still
    reads. Returns (that Subgraph, with ``index`` for those body inputs; the positions of
    its activations in ``Results.saved``)."""
    body = spec.body
    forward = {id(m) for m in prune(body.outputs[:spec.n_outputs], body.inputs)}
    grad_ys = grad.inputs[len(grad.inputs) - n_grads:]
    kept, seen = [], set()

    def keep(m):
        # A value the forward made on the host: not a constant, nor a cond or loop's tuple,
        # nor a GPU value (a run hands those back on the host: the gradient recomputes them).
        if id(m) in forward and m.inputs and m.dtype != OBJECT and m.device is CPU and \
                id(m) not in seen:
            seen.add(id(m))
            kept.append(m)

    for m in prune(grad.outputs, body.inputs + grad_ys):
        if id(m) not in forward:
            for x in m.inputs:
                keep(x)
    for m in grad.outputs:
        keep(m)
    reads = {id(m) for m in prune(grad.outputs, body.inputs + kept + grad_ys)}
    used = [k for k, p in enumerate(body.inputs) if id(p) in reads]
    sub = Subgraph(grad.graph, [body.inputs[k] for k in used] + kept + grad_ys, grad.outputs,
                   [body.index[k] for k in used], grad.what)
    return sub, spec.keep_for_gradient(kept)


def _row_sum(m: Node):
    """When the capture gradient ``m`` is a sum over the rows of per-iteration values, those
    values; else None. A weight's ``matmul(matrix_transpose(a), b)`` ([a, b]: a^T b adds up
    one outer product per row) and a bias's ``sum(a, axis=0)`` or ``sum_to_like(a, bias)``
    to a vector or number of known shape ([a]), for 2-D ``a`` and ``b`` whose number of
    columns is known (the same at every iteration, so their rows join)."""
    def rank2(x):
        return x.shape is not None and len(x.shape) == 2 and x.shape[1] is not None

    if m.device is not CPU:
        return None
    if m.op is matmul and len(m.inputs) == 2:
        t, b = m.inputs
        if t.op is matrix_transpose and rank2(t.inputs[0]) and rank2(b):
            return [t.inputs[0], b]
    elif m.op is reduce_sum:
        attrs = m.attrs or {}
        if rank2(m.inputs[0]) and attrs.get("axis") in (0, (0,)) and not attrs.get("keepdims"):
            return [m.inputs[0]]
    elif m.op is sum_to_like:
        a, like = m.inputs
        if rank2(a) and like.shape is not None and len(like.shape) <= 1 and \
                None not in like.shape:
            return [a]
    return None


def _run_on_rows(m: Node, joined: list):
    """``m`` (see :func:`_row_sum`) on its values' rows joined over the iterations: the sum
    of its per-iteration values, in one call."""
    if m.op is matmul:
        a, b = joined
        return matmul.forward(matrix_transpose.forward(a), b)
    if m.op is sum_to_like:  # (its forward reads only the shape of what it sums to)
        return sum_to_like.forward(joined[0], np.broadcast_to(np.zeros((), m.dtype),
                                                              m.inputs[1].shape))
    return reduce_sum.forward(joined[0], **m.attrs)


def _summed_once(sub: Subgraph, n_grads: int):
    """``sub`` (the body's gradient: ``n_grads`` loop-variable gradients, then a gradient
    per capture) with each capture gradient that is a sum over rows (:func:`_row_sum`)
    replaced by the values it sums, and how :class:`WhileGradSpec` adds each up. A weight
    read at every iteration then gets its gradient as ONE product over all the iterations'
    rows after the loop, not a product and an addition per iteration (TF1's way, and ours
    before: two small matrix products and four additions an iteration of an RNN). A value
    that sub is fed (an RNN's input and state) is taken from what it is fed, not returned
    by its plan (which would copy it)."""
    outputs, at = list(sub.outputs[:n_grads]), {}
    fed = {id(m): k for k, m in enumerate(sub.inputs)}

    def output(m):
        if id(m) not in at:
            at[id(m)] = len(outputs)
            outputs.append(m)
        return at[id(m)]

    def value(m):
        return ("in", fed[id(m)]) if id(m) in fed else ("out", output(m))

    summed = []
    for m in sub.outputs[n_grads:]:
        values = _row_sum(m)
        summed.append((None, [output(m)]) if values is None else
                      (m, [value(v) for v in values]))
    if all(node is None for node, _ in summed):
        return sub, None
    once = Subgraph(sub.graph, sub.inputs, outputs, sub.index, sub.what)
    once.replays = sub.replays
    return once, summed


def while_gradient(node, g, needs, spec: WhileSpec, inputs):
    """The gradient rule of a ``while_loop`` node: a ``while_grad`` node (see
    :class:`WhileGradSpec`) and one ``output`` per gradient asked for."""
    n = spec.n_vars
    none = (None,) * len(inputs)
    if not spec.back_prop:
        return none
    outs = spec.body.outputs[:n + len(spec.stacked_shapes)]
    floats = [k for k in range(n) if outs[k].dtype in D.FLOATS]
    stacked = [s for s in range(len(outs) - n) if outs[n + s].dtype in D.FLOATS]
    present = [k for k in floats + [n + s for s in stacked] if g.items[k] is not None]
    body_caps = [i for i in spec.body.index if i >= n]
    caps = [i for i in body_caps if needs[i] and inputs[i].dtype in D.FLOATS]
    wanted = [k for k in floats if needs[k] and inputs[k].dtype in D.FLOATS]
    if not present or not (caps or wanted):
        return none
    key = tuple(caps)
    hit = spec.body.gradients.get(key)
    if hit is None:
        position = dict(zip(spec.body.index, spec.body.inputs))
        full = gradient_graph(spec.body, [outs[k] for k in floats] +
                              [outs[n + s] for s in stacked],
                              [position[k] for k in floats] + [position[i] for i in caps],
                              "gradient of the body of kg.while_loop")
        sub, saved_at = _fed_kept_activations(spec, full, len(floats) + len(stacked))
        hit = spec.body.gradients[key] = (*_summed_once(sub, len(floats)), saved_at)
    sub, summed, saved_at = hit
    grads = [placed(g.items[k], CPU, node.location) for k in present]
    grad_spec = WhileGradSpec(sub, saved_at, n, floats, stacked, present,
                              [i - n for i in caps], len(inputs) - n, spec.name, spec.location,
                              summed)
    made = node.graph.add_node(while_grad_op, (node, *inputs[n:], *grads), {"spec": grad_spec},
                               None, OBJECT, "while_grad", node.location, device=CPU)
    shapes = [spec.invariants[k] for k in floats] + [inputs[i].shape for i in caps]
    dtypes = [inputs[k].dtype for k in floats] + [inputs[i].dtype for i in caps]
    picks = [floats.index(k) for k in wanted] + [len(floats) + c for c in range(len(caps))]
    selected = tuple_outputs(made, shapes, dtypes, node.location, picks)
    result = list(none)
    for target, out in zip(wanted + caps, selected):
        result[target] = out
    return tuple(result)
