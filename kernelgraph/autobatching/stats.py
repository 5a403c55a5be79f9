"""What an autobatch block counts: :class:`AutobatchStats`, and the counters that every open
block sees (a nested block counts what its outer blocks count, from its own start)."""

from __future__ import annotations

_active: list = []  # the autobatch blocks we are inside, innermost last


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


def _count(field, k=1):
    for block in _active:
        setattr(block._stats, field, getattr(block._stats, field) + k)


def _record_launch(name, n):
    for block in _active:
        s = block._stats
        s.launches += 1
        s.batched += 1
        s.batch_sizes.setdefault(name, []).append(n)
