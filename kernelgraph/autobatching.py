"""Autobatching (DyNet's idea): write per-sample eager code, run it as batched kernels.

>>> import kernelgraph as kg
>>> w = kg.tensor([[1.0], [2.0]], requires_grad=True)
>>> with kg.autobatch() as ab:
...     losses = [(kg.tensor([[float(i), 1.0]]) @ w).tanh().sum() for i in range(4)]
...     total = losses[0] + losses[1] + losses[2] + losses[3]
>>> total.backward()
>>> ab.stats.nodes, ab.stats.launches, ab.stats.batch_sizes["matmul"]
(15, 5, [4])
>>> round(total.item(), 4), [round(g, 4) for g in w.grad.numpy().ravel().tolist()]
(3.9583, [0.0131, 0.082])
>>> ab.stats
<autobatch: 15 nodes ran as 5 kernel launches (4 batched, 1 single, 2 gathers) in 1 flush(es)>

Inside the block an op on tensors does not compute: it checks shapes (so a bad shape fails
at once, naming your line) and returns a *pending* tensor (a ``kg.Tensor`` whose shape and
dtype are known). When a value is needed -- ``.item()``, ``.numpy()``, ``print``, ``bool``,
``backward()``, leaving the block -- everything pending runs. (An ``RNNCell`` step, the
op an RNN records a thousand times a block, is recorded by :func:`record_cell`, which reads
the cell's weights once per block instead of once per step.)

1. each pending node gets a **signature**: op, attributes, whether it records gradients, and
   per input its shape and dtype, or a number's value (a float going into an elementwise
   op counts by its type: ``prediction - target`` with a different target per sample is
   one group, the targets a per-sample operand). A call whose inputs are all
   *parameters* (leaves that require grad, numbers, or results of such calls: ``W.T``) is
   the same for every sample: it is recorded once and handed to every caller;
2. nodes are grouped by signature, by one of DyNet's two strategies. The default,
   **agenda**, keeps the nodes whose inputs have all run on an agenda and each time runs
   all of one signature's: a signature whose nodes are all there, else the one whose nodes
   lie shallowest on average (**depth**: 1 + the deepest pending input), so deeper kinds
   wait and gather company. ``kg.autobatch("depth")`` groups by (depth, signature)
   instead and runs the groups in depth order. Either way a group's members never depend
   on each other. They differ where samples differ in length: the loss after each of 32
   sequences of 5..50 steps is one group by agenda, one per length by depth. The agenda
   also runs two kinds of chain as one node each, where depth batching runs a call per
   link: a **recurrence** of RNN cells (``rnn_tanh_cell`` calls whose state is the last
   step's output, same weights: one ``rnn_tanh_scan``, kernelgraph/ops/rnn_scan.py) and a
   **running total** (``loss = loss + term``: one ``running_sum``,
   kernelgraph/ops/running_sum.py), each with the step-by-step calls' bits;
3. each group runs as ONE call of the op on batched operands, taken straight from the
   producing groups' batched results (the whole result, a slice or a gather: no copy per
   sample; a node that ran alone counts as a batch of one); a column that repeats an
   earlier one (``h * h``) is batched once; inputs that every member shares go in as they
   are (broadcasting). Row-wise ops -- a cell step, ``x_i @ W`` with a shared 2-D
   ``W``, elementwise ops, ``concat`` and ``split`` along a later axis, embedding lookups,
   the per-row loss ``softmax_cross_entropy``, ``argmax`` and ``one_hot``, ``conv2d`` and
   the pools on (N, C, H, W) images -- run on the members' rows joined end to end
   (``x_i`` of shape (rows, k) become one (n*rows, k) operand), so the batched graph has
   no reshapes around them; other ops get the members stacked along a new leading axis,
   with axis-like attributes shifted by one. A group whose members use different
   parameters in one input (``W_plus`` and ``W_times``) runs once per parameter. Ops that
   cannot be batched (``pad``, ``argmax`` of a whole tensor ...) run one by one.

Each pending tensor that someone still holds then gets its row of the batched result (a
view) and a recorded node that selects that row; one that only other pending ops used is
never built (its consumers read the batched result). So the recorded graph is an ordinary
eager graph *over the batched values*, and ``backward()`` runs each group's gradient rule
once, on the whole batch.

Results equal the unbatched eager run: elementwise ops compute the same bits; matmuls and
reductions over a batch can round differently in the last bits (BLAS blocking), and a
shared parameter's gradient is summed over the batch in one go rather than sample by
sample, so gradients agree to float tolerance, not bit for bit. Random ops (dropout ...),
device transfers, control flow and GPU tensors are not deferred: they run at once, after
running whatever they read. As in DyNet, a pending op reads its inputs when it runs: an
in-place change to an input's ``.data`` before then changes its result. Hooks and
``retain_grad()`` on a per-sample tensor see only gradients that flow through its row, not
through the batched ops that consumed it in the same run. An error that only a kernel can
detect (an index out of range) surfaces when the pending ops run, naming the op. A block
defers the ops of the thread that opened it: meanwhile other threads' ops run at once, and a
block opened in another thread is refused with an error.
"""

from __future__ import annotations

import gc
import sys
import threading
from operator import attrgetter, itemgetter

import numpy as np

from . import dtypes as D
from . import eager, trace
from . import ops as O
from .eager import EagerNode, Tensor
from .errors import ShapeError, shown
from .graph import _sequence, describe_location, user_location
from .kernels import cpu
from .ops import registry
from .ops.rnn_scan import rnn_tanh_scan as _SCAN
from .ops.running_sum import running_sum as _RUNNING_SUM

ndarray = np.ndarray
_local = eager._local  # this thread's grad mode, and whether its ops are deferred
_DATA = Tensor.__dict__["data"]  # the slots themselves: LazyTensor overrides the attributes
_NODE = Tensor.__dict__["_node"]
_GETITEM = O.getitem
_new_tensor = Tensor.__new__
_CELL = O.rnn_tanh_cell
_ADD = O.add
# C-level getters for the per-member loops of a flush (map(...) instead of a Python loop)
_ARGS, _REQUIRES_GRAD = attrgetter("args"), attrgetter("requires_grad")
_BATCH, _ROW = itemgetter(0), itemgetter(1)
_DATA_OF = attrgetter("data")  # (on plain Tensors only: a LazyTensor's data runs the flush)

# Ops that are never deferred: they draw random numbers (deferring would change the order of
# the draws), move data between devices, or run control flow.
_RUN_NOW = frozenset({"dropout_mask", "random_normal", "random_uniform", "to_device", "cond",
                      "while_loop", "while_grad", "output", "dim_size"})


class _Pending:
    """A deferred op call, kept in the ``data`` slot of its LazyTensor until it runs.
    ``sig`` numbers its signature (the same number for the same signature in one block):
    grouping hashes that, not the signature's nested tuples."""

    __slots__ = ("op", "args", "attrs", "shape", "dtype", "key", "depth", "sig", "need",
                 "out", "error", "cse", "row", "consumers", "waiting")

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))


class LazyTensor(Tensor):
    """A tensor whose op is deferred by :class:`autobatch`: shape, dtype and requires_grad
    are known; reading its values (or its ``grad_fn``) runs everything pending, after which
    it is an ordinary :class:`~kernelgraph.eager.Tensor` (its class changes)."""

    __slots__ = ()

    @property
    def data(self):
        _force(self)
        return _DATA.__get__(self)

    @property
    def _node(self):
        _force(self)
        return _NODE.__get__(self)

    @property
    def shape(self) -> tuple:
        return _DATA.__get__(self).shape

    @property
    def dtype(self):
        return _DATA.__get__(self).dtype

    @property
    def ndim(self) -> int:
        return len(_DATA.__get__(self).shape)

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return _DATA.__get__(self).size

    def __len__(self):
        shape = _DATA.__get__(self).shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    @property
    def device(self):
        from .devices import CPU

        return CPU

    @property
    def is_cuda(self) -> bool:
        return False


def _force(t):
    p = _DATA.__get__(t)
    if type(p) is _Pending and p.row is None:
        flush()
    p = _DATA.__get__(t)
    if type(p) is _Pending and p.row is not None:  # ran, but its row was not handed out
        _materialize_row(t, *p.row)
        return
    if type(p) is _Pending:
        why = f"the batched run failed earlier ({p.error})" if p.error else \
            "kg.autobatch lost its result (a bug: please report it)"
        raise RuntimeError(f"this tensor's deferred {p.op.name} did not run: {why}")


registry.FRONTENDS[LazyTensor] = eager.apply


# -- statistics ------------------------------------------------------------------------------
class AutobatchStats:
    """What an :class:`autobatch` block did: ``nodes`` deferred op calls (``merged`` of them
    were duplicates of an earlier call on the same parameters), ``flushes`` runs of the
    pending graph, ``launches`` op calls that ran them (``batched`` of which ran a whole
    group, ``single`` ran one node), ``helpers`` gathers/stacks/reshapes that assembled
    batched operands, ``batch_sizes``: op name -> the size of each batched call, and
    ``recurrences``: for each recurrence run as one ``rnn_tanh_scan``, how many cell calls
    each of its steps ran (``[32, 32, ..., 2, 1]``: 32 sequences, fewer as they end)."""

    def __init__(self):
        self.nodes = self.merged = self.flushes = 0
        self.launches = self.batched = self.single = self.helpers = 0
        self.batch_sizes: dict[str, list[int]] = {}
        self.recurrences: list[list[int]] = []

    def as_dict(self) -> dict:
        return {"nodes": self.nodes, "merged": self.merged, "flushes": self.flushes,
                "launches": self.launches, "batched": self.batched, "single": self.single,
                "helpers": self.helpers,
                "batch_sizes": {k: list(v) for k, v in self.batch_sizes.items()},
                "recurrences": [list(r) for r in self.recurrences]}

    def __repr__(self):
        return (f"<autobatch: {self.nodes:,} nodes ran as {self.launches:,} kernel launches "
                f"({self.batched:,} batched, {self.single:,} single, {self.helpers:,} "
                f"gathers) in {self.flushes} flush(es)>")


# -- recording -------------------------------------------------------------------------------
_active: list = []  # the autobatch blocks we are inside, innermost last
_collector_was_on = [True]  # whether gc ran when the outermost block began
_pending: list = []  # _Pending records in creation order
_merged: dict = {}  # identity of a parameter-only call -> its pending tensor (reuse)
_infer_cache: dict = {}  # signature -> ((shape, dtype), its number)
_cell_weights: dict = {}  # id(RNN cell) -> (the cell, its weights' arrays, their keys)
# What an elementwise op's signature sees of a Python float: its type, not its value, so
# ``prediction - target`` of every sample is one group, the targets one per-sample operand.
_PER_SAMPLE_FLOAT = (float, None)


_owner = [None]  # the thread whose blocks are open (threading.get_ident())
_owner_lock = threading.Lock()
_totals = [0, 0]  # ops recorded (those pending not yet), of which merged: every block
# counts from its start


def _sync_counts():
    for block in _active:
        block._stats.nodes = _totals[0] + len(_pending) - block._start[0]
        block._stats.merged = _totals[1] - block._start[1]


def _count(field, k=1):
    for block in _active:
        setattr(block._stats, field, getattr(block._stats, field) + k)


def _run_now(op, args, attrs):
    """Run ``op`` eagerly (running what is pending first if it reads a pending tensor)."""
    if any(type(a) is LazyTensor for a in args):
        flush()
    saved, _local.batching = _local.batching, False
    try:
        return eager.apply(op, args, attrs)
    finally:
        _local.batching = saved


def _frozen(value):
    if isinstance(value, dict):
        return tuple((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    hash(value)
    return value


def _defer(op, args, attrs):
    """The eager front-end inside ``kg.autobatch()``: record ``op`` instead of running it.
    (The op registry calls it for tensors directly while a block is open, and eager.apply
    for the rest, so it also sees calls made while the pending work runs.)"""
    if not _local.batching:  # running the pending ops, a gradient, or another thread's op
        return eager.apply(op, args, attrs)
    if attrs and "name" in attrs:
        attrs = {k: v for k, v in attrs.items() if k != "name"}
    if op.name in _RUN_NOW or trace.active or eager._tracer is not None:
        return _run_now(op, args, attrs)
    # keys: what the signature sees of each input (shape and dtype, or a number's value:
    # a float's type only, for an elementwise op).
    # params: every input is a parameter (a leaf that requires grad), a number, or computed
    # from those only -- then the call is the same for every sample, and runs once.
    # (This runs once per op the user's code calls: plain Tensors, the common case, first,
    # read through their slots.)
    keys = []
    depth, need, params, lazy, tensors = 0, False, True, None, False
    for a in args:
        ta = type(a)
        if ta is Tensor:
            d = a.data
            if type(d) is not ndarray:
                return _run_now(op, args, attrs)  # a GPU tensor: not batched here
            keys.append((d.shape, d.dtype))
            if a.requires_grad:
                need = True
                if a._node is not None:
                    params = False
            else:
                params = False
            tensors = True
        elif ta is LazyTensor:
            p = _DATA.__get__(a)
            if p.depth >= depth:
                depth = p.depth + 1
            if p.cse is None:
                params = False
            keys.append(p.key)
            if a.requires_grad:
                need = True
            if lazy is None:
                lazy = [p]
            else:
                lazy.append(p)
        elif ta is float and op.elementwise:
            keys.append(_PER_SAMPLE_FLOAT)  # its value goes in per member (see _numbers)
        elif ta is float or ta is int or ta is bool:
            keys.append((ta, a))
        elif ta is ndarray:
            keys.append((a.shape, a.dtype))
            params = False
        else:
            return _run_now(op, args, attrs)  # lists, NumPy scalars ...: eager decides
    if lazy is None and not tensors:
        return _run_now(op, args, attrs)  # no tensor at all
    need = need and _local.grad_enabled and op.grad is not None
    keys = tuple(keys)
    try:
        sig = (op, tuple(attrs.items()) if attrs else (), keys, need)
        known = _infer_cache.get(sig)
    except TypeError:  # a list-valued attribute (pad's paddings ...): a tuple in the key
        try:
            sig = (op, _frozen(attrs), keys, need)
            known = _infer_cache.get(sig)
        except TypeError:
            return _run_now(op, args, attrs)
    cse = None
    if params:  # (the signature itself names the op, so it keys the merge)
        cse = (sig, tuple([_DATA.__get__(a).cse if type(a) is LazyTensor else
                           id(a) if type(a) is Tensor else (type(a), a) for a in args]))
        same = _merged.get(cse)
        if same is not None:
            _totals[0] += 1
            _totals[1] += 1
            return same
    if known is None:
        shape_dtype = _infer(op, keys, attrs)
        if shape_dtype is None:
            return _run_now(op, args, attrs)
        known = _infer_cache[sig] = (shape_dtype, len(_infer_cache))
    t = _record(op, args, attrs, need, depth, known, cse, lazy)
    if cse is not None:
        _merged[cse] = t
    return t


def _record(op, args, attrs, need, depth, known, cse, lazy):
    """The record of one deferred call (signature ``known``; ``lazy``: the records of its
    pending inputs, or None) and its lazy tensor, returned."""
    p = _Pending()
    p.op, p.args, p.attrs, p.need, p.depth = op, args, attrs, need, depth
    p.key, p.sig = known
    p.shape, p.dtype = known[0]
    p.cse, p.row, p.error, p.consumers = cse, None, None, None
    t = _new_tensor(Tensor)  # filled as a Tensor, then made lazy: its slots' plain stores
    t.data = p  # are cheaper than LazyTensor's descriptors (a tenth of a record)
    t._node = None
    t.requires_grad = need
    t.__class__ = LazyTensor
    p.out = t
    _pending.append(p)
    waiting = 0
    if lazy is not None:
        for q in lazy:  # (one that ran in an earlier flush, or failed there, is no edge)
            if q.row is None and q.out is not None:
                waiting += 1
                if q.consumers is None:
                    q.consumers = [p]
                else:
                    q.consumers.append(p)
    p.waiting = waiting
    return t


def record_cell(cell, x, h, weights):
    """An RNN step inside a block -- ``kg.nn.RNNCell`` ``cell`` on a data tensor ``x`` and a
    state ``h`` that a pending op computes, ``weights`` its (w_ih, w_hh, b_ih, b_hh) --
    recorded as :func:`_defer` records ``rnn_tanh_cell(x, h, *weights)``, but with the
    weights read as one: their arrays, compared by identity, are kept per block with the
    signatures of the steps seen so far. (An RNN reads the same weights at every step of
    every sample; reading each of them the way any input is read cost 0.8 µs of a 1.9 µs
    step.) A weight given a new array (``w.data = ...``) is seen; one whose array is
    reshaped in place during a block is not. None in any other case (a step whose
    signature no step of the block had yet, a 1-D x among them), for the caller to record
    the op the general way, which checks it."""
    if type(x) is not Tensor or type(h) is not LazyTensor or x.requires_grad or \
            trace.active or eager._tracer is not None or not _local.batching:
        return None
    d = x.data
    if type(d) is not ndarray:
        return None
    w_ih, w_hh, b_ih, b_hh = weights
    seen = _cell_weights.get(id(cell))
    if seen is not None:
        arrays = seen[1]
        if not (w_ih.data is arrays[0] and w_hh.data is arrays[1] and b_ih.data is arrays[2]
                and b_hh.data is arrays[3]):
            seen = None
    if seen is None:
        if any(type(w) is not Tensor or type(w.data) is not ndarray for w in weights):
            return None
        arrays = tuple(w.data for w in weights)
        seen = _cell_weights[id(cell)] = (cell, arrays, tuple((a.shape, a.dtype) for a in arrays),
                                          {})
    q = _DATA.__get__(h)
    need = (h.requires_grad or w_ih.requires_grad or w_hh.requires_grad or b_ih.requires_grad
            or b_hh.requires_grad) and _local.grad_enabled
    # The step's signature from x's key, h's signature number (which fixes h's key) and
    # need, given the weights': one small lookup, not the whole signature's hash.
    step = (d.shape, d.dtype, q.sig, need)
    known = seen[3].get(step)
    if known is None:
        known = _infer_cache.get((_CELL, (), ((d.shape, d.dtype), q.key, *seen[2]), need))
        if known is None:  # (not recorded yet in this block: the general way infers it)
            return None
        seen[3][step] = known
    return _record(_CELL, (x, h, w_ih, w_hh, b_ih, b_hh), {}, need, q.depth + 1, known, None,
                   (q,))


def _infer(op, keys, attrs):
    """The op's shape rule on the inputs' shapes: (shape, dtype), None when the shape is not
    fully known, or the rule's error naming the user's line."""
    shapes = [k[0] if type(k[0]) is tuple else () for k in keys]
    dts = [k[1] if type(k[0]) is tuple else D.scalar_dtype(k[0]()) for k in keys]
    try:
        shape, dtype = op.infer(shapes, dts, attrs)
    except (ShapeError, TypeError, ValueError, IndexError) as e:
        loc = user_location(3)
        where = f"\n{describe_location(loc)}" if loc is not None else ""
        msg = str(e) if str(e).startswith(op.name) else f"{op.name}: {e}"
        raise type(e)(f"{msg}{where}") from None
    if shape is None or None in shape:
        return None
    return tuple(shape), D.as_dtype(dtype)


# -- running ---------------------------------------------------------------------------------
def flush() -> None:
    """Run every pending op now (batched); a no-op when nothing is pending."""
    global _pending
    _sync_counts()
    if not _pending:
        return
    pending, _pending = _pending, []
    _totals[0] += len(pending)
    _merged.clear()
    saved_defer, saved_grad = _local.batching, _local.grad_enabled
    _local.batching = False
    # The run allocates a node and a view per pending op and frees no cycles: a garbage
    # collection in the middle would walk every object the process holds (numba's are many),
    # which cost more than the whole run.
    collecting = gc.isenabled()
    gc.disable()
    try:
        _execute(pending, _active[-1].strategy if _active else "agenda")
    except BaseException as e:
        for p in pending:  # the ones that did not run (see _done)
            if p.out is not None:
                if type(_DATA.__get__(p.out)) is _Pending:
                    p.error = f"{type(e).__name__}: {e}"
                p.out = p.args = None
        raise
    finally:
        _local.batching, _local.grad_enabled = saved_defer, saved_grad
        if collecting:
            gc.enable()
    _count("flushes")


def _execute(pending, strategy):
    rowof: dict = {}  # id(tensor) -> (batched result, row, needs a node) for batched rows
    _alias.clear()
    _derived.clear()
    _derived.update(id(p.out) for p in pending if p.cse is not None)
    try:
        (_by_depth if strategy == "depth" else _by_agenda)(pending, rowof)
    finally:
        _alias.clear()
        _derived.clear()


def _by_depth(pending, rowof):
    """DyNet's depth-based batching: one group per (depth, signature), in depth order."""
    groups: dict = {}
    for p in pending:
        key = (p.depth, p.sig)
        g = groups.get(key)
        if g is None:
            groups[key] = [p]
        else:
            g.append(p)
    for g in sorted(groups.values(), key=lambda g: g[0].depth):
        _run(g, rowof)


def _by_agenda(pending, rowof):
    """DyNet's agenda-based batching: the nodes whose inputs have all run wait on an agenda,
    by signature; each launch runs every waiting node of one signature -- one whose nodes
    are all waiting (waiting longer gains nothing), else the one of lowest average depth
    over the whole graph, so the later signatures wait to gather more nodes. Per-sample
    tails at different depths (sequences of different lengths) become one group, where
    depth-based batching runs one per depth."""
    ready: dict = {}  # signature -> the nodes on the agenda
    left: dict = {}  # signature -> its nodes not run yet
    depths: dict = {}  # signature -> the sum of its nodes' depths
    for p in pending:
        s = p.sig
        n = left.get(s)
        if n is None:
            left[s], depths[s] = 1, p.depth
        else:
            left[s], depths[s] = n + 1, depths[s] + p.depth
        if not p.waiting:
            r = ready.get(s)
            if r is None:
                ready[s] = [p]
            else:
                r.append(p)
    average = {s: depths[s] / n for s, n in left.items()}
    while ready:
        for s, r in ready.items():
            if len(r) == left[s]:
                break
        else:
            s = min(ready, key=average.__getitem__)
        g = ready.pop(s)
        op = g[0].op
        done = _recurrence(g, rowof) if op is _CELL else \
            _running_sum(g[0], rowof) if op is _ADD and len(g) == 1 else None
        if done is None:
            _run(g, rowof)
            done = {s: len(g)}, g
        ran, released = done
        for s, n in ran.items():
            left[s] -= n
        for p in released:  # their consumers are one input closer to the agenda
            cs = p.consumers
            if cs is not None:
                p.consumers = None
                for c in cs:
                    if c.out is None:
                        continue  # ran already: the next step of a recurrence
                    c.waiting -= 1
                    if not c.waiting:
                        r = ready.get(c.sig)
                        if r is None:
                            ready[c.sig] = [c]
                        else:
                            r.append(c)
    if any(left.values()):
        raise RuntimeError("kg.autobatch left deferred ops unrun (a bug: please report it)")


def _recurrence(g, rowof):
    """Run the cell calls ``g`` and every cell call that continues them -- same weights,
    the state the previous step's output, nothing else pending -- step after step, as one
    ``rnn_tanh_scan`` (see kernelgraph/ops/rnn_scan.py). Returns how many calls of each
    signature ran, and those whose results something outside the scan reads; None when
    nothing continues ``g`` (or its dtypes are not one BLAS float), which then runs as a
    group."""
    p0 = g[0]
    args = p0.args
    dt = p0.dtype
    if dt not in cpu.BLAS_DTYPES or not all(a.dtype == dt for a in args) or \
            not (p0.shape[0] and args[0].shape[1] and p0.shape[1]):
        return None
    parts: dict = {}  # the cells of each set of weights (two RNNs: two recurrences)
    for p in g:
        parts.setdefault(tuple(map(id, p.args[2:])), []).append(p)
    if len(parts) == 1:
        return _scan(g, rowof)
    if len(parts) == len(g):  # no two share their weights: not recurrences, a group
        return None
    ran, released = 0, []
    for part in parts.values():
        done = _scan(part, rowof)
        if done is None:
            _run(part, rowof)
            done = {p0.sig: len(part)}, part
        ran += done[0][p0.sig]
        released += done[1]
    return {p0.sig: ran}, released


def _scan(g, rowof):
    """:func:`_recurrence` for cells of one set of weights."""
    p0 = g[0]
    weights = p0.args[2:]
    w_ih, w_hh, b_ih, b_hh = weights
    sig, steps, prev, step, base = p0.sig, [g], [], g, 0
    while True:
        following = []
        for i, p in enumerate(step):
            t = p.out
            for c in p.consumers or ():
                a = c.args
                if c.sig == sig and c.waiting == 1 and a[1] is t and a[2] is w_ih and \
                        a[3] is w_hh and a[4] is b_ih and a[5] is b_hh:
                    following.append(c)
                    prev.append(base + i)
                    break
        if not following:
            break
        base += len(step)
        steps.append(following)
        step = following
    if len(steps) == 1:
        return None
    members = [p for step in steps for p in step]
    n, r = len(members), p0.shape[0]
    _local.grad_enabled = p0.need
    helpers = [0]
    states = [p.args[1] for p in g]
    if _alias:
        states = [_alias.get(id(c), c) for c in states]
    if len(set(map(id, states))) == 1:  # every sequence starts from one state (zeros)
        _ready(states[:1], rowof)
        h0 = _repeated(states[0], len(g))
    else:
        h0 = _stacked(states, len(g), rowof, helpers, True)
    x = _stacked([p.args[0] for p in members], n, rowof, helpers, True)
    _ready(weights, rowof)
    out = eager.apply(_SCAN, (x, h0, *weights, _row_index(prev, r)),
                      {"steps": tuple(len(step) * r for step in steps)})
    continued = [False] * n
    for i in prev:
        continued[i] = True
    released = _hand_out(members, continued, out, r, rowof)
    _record_launch(_SCAN.name, n)
    _count("helpers", helpers[0])
    for block in _active:
        block._stats.recurrences.append([len(step) for step in steps])
    return {p0.sig: n}, released


def _hand_out(members, continued, out, r, rowof) -> list:
    """After a chain (a scan, a running sum) ran as ``out``, member i being its member i
    (``r`` rows each, 0: STACKED), as :func:`_run_group` does for a group: rows for the
    members something outside the chain reads (returned, for the agenda) or holds (built
    now). A member read only by the next link (``continued``) is never built."""
    need_node = out.requires_grad
    refs = sys.getrefcount
    released = []
    for i, p in enumerate(members):
        t = p.out
        uses = 0 if p.consumers is None else len(p.consumers)
        if uses > continued[i]:
            rowof[id(t)] = p.row = (out, i, need_node, r)
            released.append(p)
        if refs(t) > 3 + uses:  # more than its record, its uses, t and the argument: held
            rowof[id(t)] = p.row = (out, i, need_node, r)
            _materialize_row(t, out, i, need_node, r)
        p.out = p.args = None
    return released


def _running_sum(p, rowof):
    """Run the addition ``p`` and the additions that continue it -- each adding a ready
    tensor of the same shape and dtype to the one before, as ``loss = loss + term`` does
    over the samples -- as one ``running_sum`` (see kernelgraph/ops/running_sum.py).
    Returns what :func:`_recurrence` returns; None when nothing continues ``p``."""
    chain, terms, link = [], [], p
    shape, dtype, need = p.shape, p.dtype, p.need
    while True:
        t, following = link.out, None
        for c in link.consumers or ():
            a = c.args
            if c.op is _ADD and c.waiting == 1 and c.need == need and (a[0] is t) != \
                    (a[1] is t) and c.shape == shape and c.dtype == dtype:
                term = a[1] if a[0] is t else a[0]
                if isinstance(term, Tensor) and term.shape == shape and term.dtype == dtype:
                    following = c
                    break
        if following is None:
            break
        chain.append(following)
        terms.append(term)
        link = following
    if not chain:
        return None
    start = p.out
    _run([p], rowof)  # the first addition as it is (it may add a Python number)
    helpers = [0]
    _local.grad_enabled = need
    out = eager.apply(_RUNNING_SUM, (start, _stacked(terms, len(terms), rowof, helpers, False)),
                      {})
    continued = [True] * len(chain)
    continued[-1] = False
    released = [p, *_hand_out(chain, continued, out, 0, rowof)]
    _record_launch(_RUNNING_SUM.name, len(chain))
    _count("helpers", helpers[0])
    ran = {p.sig: 1}
    for c in chain:
        ran[c.sig] = ran.get(c.sig, 0) + 1
    return ran, released


_alias: dict = {}  # during a run: id(tensor) -> the one tensor a merged group computed
_derived: set = set()  # during a run: ids of results computed from parameters only


def _is_parameter(x) -> bool:
    """A leaf that requires grad, or a result computed from such leaves only (``W.T``)."""
    t = type(x)
    if t is Tensor:
        return (x.requires_grad and _NODE.__get__(x) is None) or id(x) in _derived
    return t is LazyTensor and id(x) in _derived


def _run(g, rowof):
    p0 = g[0]
    _local.grad_enabled = p0.need
    batcher = _BATCHERS.get(p0.op.name)
    if len(g) > 1 and batcher is not None and _run_group(g, batcher, rowof):
        return
    for p in g:
        _ready(p.args, rowof)
        r = eager.apply(p.op, p.args, p.attrs)
        t = p.out
        _materialize(t, _DATA.__get__(r), _NODE.__get__(r))
        if p.shape:  # a batch of one for the groups it feeds (FLAT: all its rows)
            rowof[id(t)] = (t, 0, t.requires_grad, p.shape[0])
        _done(p)
    _count("launches", len(g))
    _count("single", len(g))


def _done(p):
    """Drop a record's links once it ran. A tensor left pending (its row not handed out:
    only other records used it) and its record point at each other; cutting that cycle lets
    both go, with the batched values they hold, without waiting for a garbage collection."""
    p.out = p.args = None


def _materialize(t, data, node):
    _DATA.__set__(t, data)
    _NODE.__set__(t, node)
    t.__class__ = Tensor


# How a group's batched result holds its members (a batcher picks one per group):
# STACKED: member i is ``out[i]`` -- the members stacked along a new leading axis;
# FLAT: member i, of shape (r, ...), is rows ``i*r`` to ``(i+1)*r`` of ``out`` -- the members
# joined along their own first axis. Row-wise ops (a cell step, ``x @ W``, elementwise ops on
# whole rows) run on FLAT operands as they are, with no reshape in the graph.
STACKED, FLAT = "stacked", "flat"


def _run_group(group, batcher, rowof) -> bool:
    """Run ``group`` as one batched call; False (nothing done) when it cannot be batched."""
    n, p0 = len(group), group[0]
    columns = list(zip(*map(_ARGS, group)))
    operands, all_shared = [], True
    for j, col in enumerate(columns):
        first = col[0]
        tf = type(first)
        if tf is float or tf is int or tf is bool:
            if tf is float and p0.op.elementwise and len(set(col)) > 1:
                all_shared = False
                operands.append((False, None))  # a number per member (see _numbers)
            else:
                operands.append((True, first))  # equal numbers
            continue
        same = [_alias.get(id(c), c) for c in col] if _alias else col
        if same[0] is not same[-1] and not _is_parameter(first):
            all_shared = False  # per-sample values (the first and last differ)
            operands.append((False, None))
            continue
        # (tensors hash by identity; arrays do not hash)
        distinct = len(set(map(id, same) if type(first) is ndarray else same))
        if distinct == 1:
            operands.append((True, same[0]))  # one tensor for everyone: shared
            continue
        if 2 * distinct <= n and _is_parameter(first):
            # A column of a few parameters (W_plus for some nodes, W_times for others):
            # one call per parameter, not a stack of weight copies.
            parts: dict = {}
            for p in group:
                parts.setdefault(id(p.args[j]), []).append(p)
            for part in parts.values():
                _run(part, rowof)
            return True
        all_shared = False
        operands.append((False, None))
    if all_shared:  # n identical calls: compute once, everyone gets the result
        _ready(p0.args, rowof)
        r = eager.apply(p0.op, p0.args, p0.attrs)
        data, node = _DATA.__get__(r), _NODE.__get__(r)
        # Later groups see one shared input, not n copies; where it meets other values in
        # a column it is a one-member batch.
        one = ((O.reshape(r, shape=(1,)), 0, r.requires_grad, 0) if not p0.shape else
               (r, 0, r.requires_grad, p0.shape[0]))
        for p in group:
            _materialize(p.out, data, node)
            _alias[id(p.out)] = r
            rowof[id(p.out)] = one
            _done(p)
        _record_launch(p0.op.name, n)
        return True
    layout = batcher(p0, operands, n, None)
    if not layout:
        return False
    flat = layout is FLAT
    helpers = [0]
    _ready([v for s, v in operands if s], rowof)
    batched = []  # the operands with the per-sample columns batched
    for (s, v), col in zip(operands, columns):
        if not s:
            v = _numbers(col, p0, flat) if type(col[0]) is float else \
                _stacked_once(col, n, rowof, helpers, flat, columns, batched)
        batched.append((s, v))
    operands = batched
    out = batcher(p0, operands, n, layout)
    if out is None:
        return False
    data = out if type(out) is ndarray else _DATA.__get__(out)
    # The result's layout shows in its rank: FLAT keeps the members' rank (a FLAT input
    # may give a STACKED result: a whole (1, k) row summed is a number per member).
    r = p0.shape[0] if p0.shape and data.ndim == len(p0.shape) else 0
    if data.shape != ((n * r, *p0.shape[1:]) if r else (n, *p0.shape)) or \
            data.dtype != p0.dtype:
        return False  # a case the batcher does not cover: run the nodes one by one
    # Each pending tensor's row. One that only pending ops of this run still reference
    # (refcount: its record, each use, and the two here) is left as it is: its consumers
    # read the batched result, and it goes away with the records. Rows someone else holds
    # (the user's variables, lists ...) become ordinary tensors now.
    need_node = type(out) is Tensor and out.requires_grad
    refs = sys.getrefcount
    for i, p in enumerate(group):
        t = p.out
        rowof[id(t)] = p.row = (out, i, need_node, r)
        if refs(t) > (3 if p.consumers is None else 3 + len(p.consumers)):
            _materialize_row(t, out, i, need_node, r)
        p.out = p.args = None  # _done(p), inline: once per member of every group
    _record_launch(p0.op.name, n)
    _count("helpers", helpers[0])
    return True


def _materialize_row(t, batched, i, need_node, r):
    """Make ``t`` the ordinary tensor ``batched``'s member ``i`` (layout: ``r`` rows per
    member, 0 for STACKED)."""
    data = batched if type(batched) is ndarray else _DATA.__get__(batched)
    if r:
        index = (i * r, (i + 1) * r, None)
        row = data[i * r:(i + 1) * r]
    else:
        index = i
        row = data[i] if data.ndim > 1 else data[i:i + 1].reshape(())
    _DATA.__set__(t, row)
    _NODE.__set__(t, _row_node(batched, index, row) if need_node else None)
    t.__class__ = Tensor


def _ready(args, rowof):
    """Give rows not yet handed out (see :func:`_run_group`) to ``args`` about to be used
    as tensors."""
    for a in args:
        if type(a) is LazyTensor:
            info = rowof.get(id(a))
            if info is not None:
                _materialize_row(a, *info)


def _record_launch(name, n):
    for block in _active:
        s = block._stats
        s.launches += 1
        s.batched += 1
        s.batch_sizes.setdefault(name, []).append(n)


_ROW_ATTRS: dict = {}  # index -> the attrs {"index": (index,)}, shared and never changed


def _row_node(batched, index, row):
    """The recorded node ``batched[index]``: how a per-sample tensor's gradient reaches the
    batched node (only used when the user's own code reads the row later)."""
    attrs = _ROW_ATTRS.get(index)
    if attrs is None:
        attrs = {"index": (index,)}
        if len(_ROW_ATTRS) < 8192:
            _ROW_ATTRS[index] = attrs
    node = EagerNode.__new__(EagerNode)
    node.op = _GETITEM
    node.inputs = (batched,)
    node.attrs = attrs
    node.value = row
    node.seq = next(_sequence)
    node.freed = False
    node.hooks = None
    node.retained = None
    node.location = None
    return node


def _arr(x):
    return x if type(x) is ndarray else _DATA.__get__(x)


def _in_layout(batched, r, flat, shape):
    """``batched`` (a group's result in the layout ``r`` rows per member, 0 for STACKED)
    in the layout the consumer wants: the same array, or a reshape of it (a view)."""
    if bool(r) == flat:
        return batched
    if flat:  # (m, r, ...) -> (m*r, ...)
        return O.reshape(batched, shape=(-1, *shape[1:]))
    return O.reshape(batched, shape=(-1, *shape))


def _stacked_once(col, n, rowof, helpers, flat, columns, done):
    """:func:`_stacked`, or the batched operand of an earlier per-sample column of the same
    tensors (``h * h``: one gather, one gradient path). ``done``: the operands batched so
    far, for ``columns``' first ones."""
    for other, (shared, v) in zip(columns, done):
        if not shared and other[0] is col[0] and other[-1] is col[-1] and \
                list(map(id, other)) == list(map(id, col)):
            return v
    return _stacked(col, n, rowof, helpers, flat)


def _stacked(col, n, rowof, helpers, flat):
    """The per-sample operands ``col`` as one batched operand in the FLAT or STACKED
    layout, from the producing groups' batched results where possible (a view or one
    gather), else stacked (or joined)."""
    shape = col[0].shape
    r = shape[0] if flat else 1  # rows of the wanted layout per member
    # (A first member that no group produced -- the user's input rows, the common case --
    # means some row must be joined anyway: no lookup for the others.)
    infos = list(map(rowof.get, map(id, col))) if id(col[0]) in rowof else (None,)
    if None not in infos:
        first, _, _, r_first = infos[0]
        if len(set(map(id, map(_BATCH, infos)))) == 1:  # all rows of one batched result
            whole = _in_layout(first, r_first, flat, shape)
            rows = list(map(_ROW, infos))
            total = _arr(whole).shape[0] // r
            start = rows[0]
            if rows == list(range(start, start + n)):
                if start == 0 and n == total:
                    return whole
                helpers[0] += 1
                return O.getitem(whole, index=((start * r, (start + n) * r, None),))
            helpers[0] += 1
            return O.gather(whole, _row_index(rows, r), axis=0)
        sources, offsets, index, joined = [], {}, [], 0
        for b, i, _, r_b in infos:
            off = offsets.get(id(b))
            if off is None:
                off = offsets[id(b)] = joined // r
                sources.append(_in_layout(b, r_b, flat, shape))
                joined += _arr(sources[-1]).shape[0]
            index.append(off + i)
        helpers[0] += 2
        return O.gather(O.concat(sources, axis=0), _row_index(index, r), axis=0)
    helpers[0] += 1
    plain = set(map(type, col)) == {Tensor}  # the common case: the user's input tensors
    if not plain:
        _ready(col, rowof)  # rows not handed out yet become tensors; arrays stay arrays
    if not (any(map(_REQUIRES_GRAD, col)) if plain else
            any(type(c) is Tensor and c.requires_grad for c in col)):
        # Per-sample data (inputs, no gradient): the rows copied into one array.
        arrays = (list(map(_DATA_OF, col)) if plain else
                  [_DATA.__get__(c) if type(c) is Tensor else c for c in col])
        return np.concatenate(arrays) if flat else np.stack(arrays)
    return O.concat(list(col), axis=0) if flat else O.stack(list(col), axis=0)


def _numbers(col, p0, flat):
    """A column of Python floats (one per member of an elementwise group) as an array in
    the dtype the op computes in -- a Python float is weak: the tensors' dtype -- so each
    member computes the same bits as with its own number: (n,), or in the FLAT layout
    each number repeated for its member's rows, (n*r, 1, ...)."""
    dts = [a.dtype for a in p0.args if isinstance(a, Tensor | ndarray)]
    dt = dts[0]
    for d in dts[1:]:
        dt = D.promote(dt, d)
    values = np.array(col, D.promote_with_scalar(dt, 0.0))
    if not flat:
        return values
    rows = p0.shape[0]
    return np.repeat(values, rows).reshape(len(col) * rows, *(1,) * (len(p0.shape) - 1))


def _row_index(members, r):
    """The rows of ``members`` in a layout with ``r`` rows per member."""
    members = np.array(members, np.int64)
    if r == 1:
        return members
    return (members[:, None] * r + np.arange(r)).ravel()


# -- how each kind of op runs on a batch -----------------------------------------------------
# batcher(p0, operands, n, layout): with layout None, the layout the group can run in
# (STACKED or FLAT; False: it cannot be batched), operands being (shared, None) pairs; given
# that layout, the batched result, operands being (shared, value) with the per-sample values
# batched in it. Every member has p0's shapes (the signature says so).
def _rank(operand_value) -> int:
    return len(operand_value.shape) - 1


def _rows_alike(p0, operands) -> bool:
    """Whether a row-wise op can run FLAT: every per-sample input has the result's whole
    shape (rank >= 1), and every shared one broadcasts the same along all rows of all
    members (its rank is lower, or its first of those dims is 1)."""
    shape = p0.shape
    if not shape:
        return False
    for (shared, _), a in zip(operands, p0.args):
        s = getattr(a, "shape", ())
        if shared:
            if len(s) == len(shape) and s[0] != 1:
                return False
        elif s != shape and type(a) is not float:  # (a number per member: see _numbers)
            return False
    return True


def _elementwise(p0, operands, n, layout):
    if layout is None:
        return FLAT if _rows_alike(p0, operands) else STACKED
    if layout is FLAT:
        return p0.op(*[v for _, v in operands], **p0.attrs)
    rank = len(p0.shape)
    args = []
    for shared, v in operands:
        if not shared and _rank(v) < rank:  # align per-sample dims to the right
            s = tuple(v.shape[1:])
            v = O.reshape(v, shape=(n,) + (1,) * (rank - len(s)) + s)
        args.append(v)
    return p0.op(*args, **p0.attrs)


def _matmul(p0, operands, n, layout):
    (sa, a), (sb, b) = operands
    if layout is None:  # a shared operand of rank > 2 would broadcast against the batch axis
        if not all(len(x.shape) <= 2 for (s, _), x in zip(operands, p0.args) if s):
            return False
        rows = not sa and sb and len(p0.args[0].shape) == 2 and len(p0.args[1].shape) == 2
        return FLAT if rows else STACKED  # x_i @ W: one (n*rows, k) @ W product
    if layout is STACKED and not sa and sb and len(b.shape) == 2:  # (n, ..., k) @ W
        k = a.shape[-1]
        out = O.matmul(O.reshape(a, shape=(-1, k)), b)
        return O.reshape(out, shape=(n, *p0.shape))
    return O.matmul(a, b)


def _axis_shift(axis, rank):
    return axis % rank + 1


def _reduce(p0, operands, n, layout):
    (shared, x), = operands
    shape = p0.args[0].shape
    rank = len(shape)
    axis = p0.attrs.get("axis")
    axes = (tuple(range(rank)) if axis is None else
            (axis % rank,) if isinstance(axis, int | np.integer) else
            tuple(a % rank for a in axis)) if rank else ()
    if layout is None:
        if not rank:
            return False
        # FLAT when the members' rows stay apart: axis 0 is kept, or has one row (a (1, k)
        # state summed whole: the rows' sums are then one number per member).
        return FLAT if 0 not in axes or (shape[0] == 1 and len(axes) > 1) else STACKED
    if layout is FLAT:
        return p0.op(x, **dict(p0.attrs, axis=tuple(a for a in axes if a != 0)))
    return p0.op(x, **dict(p0.attrs, axis=tuple(a + 1 for a in axes)))


def _softmax(p0, operands, n, layout):
    (shared, x), = operands
    rank = len(p0.shape)
    if layout is None:
        return rank > 0 and STACKED
    axis = p0.attrs.get("axis", -1)
    return p0.op(x, **dict(p0.attrs, axis=_axis_shift(-1 if axis is None else axis, rank)))


def _transpose(p0, operands, n, layout):
    if layout is None:
        return STACKED
    (shared, x), = operands
    rank = len(p0.shape)
    perm = p0.attrs.get("perm")
    perm = range(rank - 1, -1, -1) if perm is None else (p % rank for p in perm)
    return O.transpose(x, perm=(0, *(p + 1 for p in perm)))


def _reshape(p0, operands, n, layout):
    if layout is None:
        return STACKED
    return O.reshape(operands[0][1], shape=(n, *p0.shape))


def _getitem(p0, operands, n, layout):
    if layout is None:
        return STACKED
    return O.getitem(operands[0][1], index=((None, None, None), *p0.attrs["index"]))


def _join(p0, operands, n, layout):  # concat and stack: every input per-sample
    axis = p0.attrs.get("axis", 0) % len(p0.shape)
    if layout is None:
        if any(s for s, _ in operands):
            return False
        # concat along a member's later axis: the FLAT rows line up (one row per row)
        return FLAT if p0.op.name == "concat" and axis > 0 else STACKED
    return p0.op(*[v for _, v in operands], axis=axis if layout is FLAT else axis + 1)


def _gather(p0, operands, n, layout):  # embedding: shared table, per-sample ids, axis 0
    (sp, params), (si, ids) = operands
    if layout is None:
        if not (sp and not si and p0.attrs.get("axis", 0) % len(p0.args[0].shape) == 0):
            return False
        # ids of rank >= 1 join FLAT: (n*r,) ids pick (n*r, ...) rows
        return FLAT if len(p0.args[1].shape) >= 1 else STACKED
    return O.gather(params, ids, axis=0)


def _broadcast_to(p0, operands, n, layout):
    if layout is None:
        return STACKED
    (shared, x), = operands
    target = tuple(p0.shape)
    s = tuple(x.shape[1:])
    if len(s) < len(target):
        x = O.reshape(x, shape=(n,) + (1,) * (len(target) - len(s)) + s)
    return O.broadcast_to(x, shape=(n, *target))


def _split_piece(p0, operands, n, layout):  # an LSTM's gates: one piece of each member
    axis = p0.attrs.get("axis", 0) % len(p0.shape)
    if layout is None:
        return FLAT if axis > 0 else STACKED  # pieces along a later axis keep the rows
    return p0.op(operands[0][1], **dict(p0.attrs, axis=axis if layout is FLAT else axis + 1))


def _argmax(p0, operands, n, layout):
    axis = p0.attrs.get("axis")
    if layout is None:  # (axis None: an index into each member flattened, not batched)
        return axis is not None and (FLAT if axis % len(p0.args[0].shape) > 0 else STACKED)
    axis %= len(p0.args[0].shape)
    return p0.op(operands[0][1], **dict(p0.attrs, axis=axis if layout is FLAT else axis + 1))


def _one_hot(p0, operands, n, layout):  # per-sample ids; the classes along a new last axis
    if layout is None:
        return FLAT if len(p0.args[0].shape) >= 1 else STACKED
    return p0.op(operands[0][1], **p0.attrs)


def _images(p0, operands, n, layout):
    """conv2d and the pools: each member's images (N, C, H, W) along axis 0, joined FLAT;
    the filters shared."""
    if layout is None:
        return not operands[0][0] and all(s for s, _ in operands[1:]) and FLAT
    return p0.op(*[v for _, v in operands], **p0.attrs)


def _row_by_row(p0, operands, n, layout):
    """softmax_cross_entropy: logits (rows, classes) and labels (rows,), a loss per row;
    an input every member shares is repeated for each."""
    if layout is None:
        return FLAT
    return p0.op(*[_repeated(v, n) if s else v for s, v in operands], **p0.attrs)


def _cell(p0, operands, n, layout):
    """rnn_tanh_cell and lstm_cell: x and the state(s) FLAT, the four weights shared."""
    rows, weights = operands[:-4], operands[-4:]
    if layout is None:
        return all(s for s, _ in weights) and FLAT
    # A shared x or state (the first step's zero state) is repeated for every member.
    return p0.op(*[_repeated(v, n) if s else v for s, v in rows], *[w for _, w in weights])


def _repeated(v, n):
    """The shared operand ``v`` (shape (r, ...)) once per member, FLAT: (n*r, ...)."""
    shape = tuple(v.shape)
    if not (isinstance(v, Tensor) and v.requires_grad):
        # a real copy: a broadcast view is read-only with zero strides, which numba
        # compiles a second version of the cell's kernel for
        return np.tile(_arr(v), (n,) + (1,) * (len(shape) - 1))
    v = O.broadcast_to(O.reshape(v, shape=(1, *shape)), shape=(n, *shape))
    return O.reshape(v, shape=(n * shape[0], *shape[1:]))


# (clip and the *_like ops are elementwise in all but name: one input, its shape kept)
_BATCHERS = {name: _elementwise for name, op in registry.OPS.items() if op.elementwise or
             name in ("clip", "identity", "zeros_like", "ones_like")}
_BATCHERS.update({"matmul": _matmul, "sum": _reduce, "mean": _reduce, "max": _reduce,
                  "softmax": _softmax, "log_softmax": _softmax, "transpose": _transpose,
                  "matrix_transpose": _elementwise, "reshape": _reshape,
                  "getitem": _getitem, "concat": _join, "stack": _join, "gather": _gather,
                  "broadcast_to": _broadcast_to, "rnn_tanh_cell": _cell, "lstm_cell": _cell,
                  "split_piece": _split_piece, "argmax": _argmax, "one_hot": _one_hot,
                  "conv2d": _images, "max_pool2d": _images, "avg_pool2d": _images,
                  "global_avg_pool2d": _images, "softmax_cross_entropy": _row_by_row})


# -- the public face -------------------------------------------------------------------------
class autobatch:  # noqa: N801 - used like kg.no_grad
    """``with kg.autobatch() as ab:`` defers eager ops and runs them batched (see the module
    docstring); ``ab.stats`` counts what happened, ``ab.flush()`` runs what is pending.

    >>> import kernelgraph as kg
    >>> with kg.autobatch() as ab:
    ...     ys = [kg.tensor([float(i)]) * 2.0 for i in range(3)]
    ...     pending = ys[0].shape                 # shapes are known without running
    >>> pending, [y.item() for y in ys], ab.stats.launches
    ((1,), [0.0, 2.0, 4.0], 1)

    ``strategy`` picks how pending nodes become launches (DyNet's two): ``"agenda"`` (the
    default) runs, each time, every ready node of one signature, choosing the signature so
    that nodes of the same kind wait for each other; ``"depth"`` runs one group per
    (depth, signature). They differ where samples differ in length: the per-sequence loss
    after sequences of 5 and of 50 steps is one launch by agenda, two by depth.

    >>> w = kg.tensor([[0.5]], requires_grad=True)
    >>> def run(strategy):
    ...     with kg.autobatch(strategy) as ab:
    ...         losses = []
    ...         for steps in (1, 2, 3):   # three sequences of 1, 2 and 3 steps
    ...             h = kg.ones(1, 1)
    ...             for _ in range(steps):
    ...                 h = (h @ w).tanh()
    ...             losses.append((h * h).sum())
    ...         total = losses[0] + losses[1] + losses[2]
    ...     return ab.stats.launches, ab.stats.batch_sizes.get("mul"), round(total.item(), 6)
    >>> run("agenda")   # the three sequences' (h * h).sum() in one launch each
    (10, [3], 0.277872)
    >>> run("depth")    # ... in one launch per length
    (14, None, 0.277872)

    Blocks nest (the innermost block's strategy runs a flush); leaving any block runs what
    is pending, as does reading a value. An exception inside the block still runs (or, if
    that fails, discards) the pending work, so the engine stays usable.
    """

    STRATEGIES = ("agenda", "depth")

    def __init__(self, strategy: str = "agenda"):
        if strategy not in self.STRATEGIES:
            raise ValueError(f"kg.autobatch: strategy must be one of "
                             f"{', '.join(map(repr, self.STRATEGIES))}, got {shown(strategy)}")
        self.strategy = strategy
        self._stats = AutobatchStats()

    @property
    def stats(self) -> AutobatchStats:
        """What this block did so far (see :class:`AutobatchStats`)."""
        if self in _active:
            _sync_counts()
        return self._stats

    def __enter__(self) -> autobatch:
        # The pending graph is one per process: blocks open in one thread at a time. The ops
        # of other threads run at once meanwhile (eager.apply asks _local.batching).
        with _owner_lock:
            if _active and _owner[0] != threading.get_ident():
                raise RuntimeError("kg.autobatch: a block is already open in another thread; "
                                   "blocks batch one thread's ops at a time (open this one "
                                   "after that block ends, or run this thread unbatched)")
            _owner[0] = threading.get_ident()
            self._open()
        return self

    def _open(self):
        # Counting from here, on top of what earlier uses of this block counted.
        self._start = (_totals[0] + len(_pending) - self._stats.nodes,
                       _totals[1] - self._stats.merged)
        if not _active:
            # The outermost block pauses the garbage collector until it ends. Recording keeps
            # every record alive until the flush, so a collection finds nothing of ours to
            # free, yet walks all of them each time: 3 ms of bench row 13b's 19 ms. Cycles
            # the user's code leaves inside the block are collected once it ends.
            _collector_was_on[0] = gc.isenabled()
            gc.disable()
        _active.append(self)
        _local.batching = True
        eager._deferred = registry.FRONTENDS[Tensor] = registry.FRONTENDS[LazyTensor] = _defer

    def __exit__(self, exc_type, exc, tb) -> bool:
        global _pending
        try:
            flush()
        except Exception:
            if exc_type is None:
                raise
        finally:
            with _owner_lock:
                _active.remove(self)
                if not _active:
                    _local.batching = False
                    eager._deferred = None
                    registry.FRONTENDS[Tensor] = registry.FRONTENDS[LazyTensor] = eager.apply
                    _pending = []
                    _merged.clear()
                    _infer_cache.clear()
                    _cell_weights.clear()
                    if _collector_was_on[0]:
                        gc.enable()
        return False

    def flush(self) -> None:
        """Run everything pending now."""
        flush()

    def __repr__(self):
        return repr(self.stats)


def pending_count() -> int:
    """How many deferred ops wait to run (0 outside ``kg.autobatch``)."""
    return len(_pending)
