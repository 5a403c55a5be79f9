"""Record engine trace events, so a drawing can show per-op seconds and the backward pass.

>>> import kernelgraph as kg
>>> with kg.widgets.record() as rec:
...     a = kg.tensor(15.0, requires_grad=True); b = kg.tensor(20.0, requires_grad=True)
...     c = a * b
...     c.backward()
>>> [kind for kind, _ in rec.events]
['node_added', 'node_executed', 'gradient', 'gradient', 'gradient']
>>> doc = kg.widgets.document_of(c, events=rec.events)
>>> [s["phase"] for s in doc["steps"]]
['build', 'forward', 'build', 'forward', 'build', 'forward', 'backward', 'backward', 'backward']
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .. import trace


class Recorder:
    """A trace listener keeping every event as ``(kind, info)`` in :attr:`events`."""

    def __init__(self):
        self.events: list[tuple[str, dict]] = []

    def __call__(self, kind: str, **info) -> None:
        self.events.append((kind, info))

    def of(self, kind: str) -> list[dict]:
        """The ``info`` dicts of the events of one kind."""
        return [info for k, info in self.events if k == kind]


@contextlib.contextmanager
def record() -> Iterator[Recorder]:
    """Collect trace events inside a ``with`` block (``with kg.widgets.record() as rec:``)."""
    rec = Recorder()
    with trace.listening(rec):
        yield rec
