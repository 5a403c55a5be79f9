"""Chains run as one node (the agenda asks for them): a **recurrence** of RNN cells -- each
step's state the last step's output, same weights -- as one ``rnn_tanh_scan``
(kernelgraph/ops/rnn_scan.py), and a **running total** (``loss = loss + term``) as one
``running_sum`` (kernelgraph/ops/running_sum.py), each computing the step-by-step calls'
bits. Depth batching would run a call per link."""

from __future__ import annotations

import sys

from .. import eager
from .. import ops as O
from ..eager import Tensor
from ..kernels.linalg import BLAS_DTYPES
from ..ops.rnn_scan import rnn_tanh_scan as _SCAN
from ..ops.running_sum import running_sum as _RUNNING_SUM
from .batchers import _repeated
from .group import _alias, _ready, _row_index, _run, _stacked
from .lazy import _materialize_row
from .stats import _active, _count, _record_launch

_local = eager._local  # this thread's grad mode, and whether its ops are deferred
_ADD = O.add


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
    if dt not in BLAS_DTYPES or not all(a.dtype == dt for a in args) or \
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
