"""Scheduling: :func:`flush` runs the pending graph, its nodes grouped by signature by one of
DyNet's two strategies -- the **agenda** (the default: each launch runs every ready node of
one signature, so that nodes of a kind wait for each other) or **depth** (one group per
depth and signature, in depth order) -- each group run as one call (.group), each chain the
agenda finds as one node (.rewrites)."""

from __future__ import annotations

import gc

from .. import eager
from .defer import _CELL, _merged, _pending, _sync_counts, _totals
from .group import _alias, _derived, _run
from .lazy import _DATA, _flush, _Pending
from .rewrites import _ADD, _recurrence, _running_sum
from .stats import _active, _count

_local = eager._local  # this thread's grad mode, and whether its ops are deferred


def flush() -> None:
    """Run every pending op now (batched); a no-op when nothing is pending."""
    _sync_counts()
    if not _pending:
        return
    pending = _pending.copy()  # (the list stays the one that recording appends to)
    _pending.clear()
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


_flush[0] = flush  # forcing a LazyTensor, or running an op at once, runs what is pending
