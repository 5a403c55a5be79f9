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

The modules, one idea each, from the bottom: :mod:`.stats` (:class:`AutobatchStats`, what
every open block counts), :mod:`.lazy` (:class:`LazyTensor` and its record, forcing),
:mod:`.defer` (recording op calls and their signatures, :func:`record_cell`),
:mod:`.batchers` (how each kind of op runs on a batch), :mod:`.group` (one group as one
call), :mod:`.rewrites` (recurrences and running totals as one node each), :mod:`.schedule`
(:func:`flush`: the agenda and depth strategies) and :mod:`.block` (:class:`autobatch`).
"""

from __future__ import annotations

from .batchers import _BATCHERS as _BATCHERS
from .batchers import FLAT, STACKED
from .block import autobatch, pending_count
from .defer import _RUN_NOW as _RUN_NOW
from .defer import _cell_weights as _cell_weights  # not public: a test sees it emptied
from .defer import record_cell
from .lazy import LazyTensor
from .schedule import flush
from .stats import AutobatchStats

# The classes' public home, as before the split: what type(t) and error messages name.
LazyTensor.__module__ = AutobatchStats.__module__ = autobatch.__module__ = __name__

__all__ = ["FLAT", "STACKED", "AutobatchStats", "LazyTensor", "autobatch", "flush",
           "pending_count", "record_cell"]
