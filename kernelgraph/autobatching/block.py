"""The public face: the ``kg.autobatch()`` block, which switches the eager front-end to
deferring (.defer) while it is open and runs what is pending (.schedule) when it ends; one
pending graph per process, so blocks are open in one thread at a time."""

from __future__ import annotations

import gc
import threading

from .. import eager
from ..eager import Tensor
from ..errors import shown
from ..ops import registry
from .defer import _cell_weights, _defer, _infer_cache, _merged, _pending, _sync_counts, _totals
from .lazy import LazyTensor
from .schedule import flush
from .stats import AutobatchStats, _active

_local = eager._local  # this thread's grad mode, and whether its ops are deferred
_collector_was_on = [True]  # whether gc ran when the outermost block began
_owner = [None]  # the thread whose blocks are open (threading.get_ident())
_owner_lock = threading.Lock()


class autobatch:  # noqa: N801 - used like kg.no_grad
    """``with kg.autobatch() as ab:`` defers eager ops and runs them batched (see the
    docstring of kernelgraph.autobatching); ``ab.stats`` counts what happened, ``ab.flush()``
    runs what is pending.

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
        eager.set_deferred(_defer)
        registry.FRONTENDS[Tensor] = registry.FRONTENDS[LazyTensor] = _defer

    def __exit__(self, exc_type, exc, tb) -> bool:
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
                    eager.set_deferred(None)
                    registry.FRONTENDS[Tensor] = registry.FRONTENDS[LazyTensor] = eager.apply
                    _pending.clear()
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
