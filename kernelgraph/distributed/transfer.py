"""Cross-worker transfers: what a :class:`~kernelgraph.distributed.partition.Partition`
moves between workers, how many bytes, and the text ``sess.explain`` shows for it.

A value crosses workers as a host NumPy array (a stage's plan returns host arrays, and a
receiving ``to_device`` node uploads to the worker's GPU): :func:`to_wire` makes any value
one, :func:`nbytes` counts what a list of values moves.

>>> import kernelgraph as kg
>>> from kernelgraph.distributed.partition import partition
>>> g = kg.Graph()
>>> with g.as_default():
...     x = kg.placeholder(kg.float32, shape=[None, 3], name="x")
...     with kg.device("worker:1"):
...         y = kg.exp(x, name="y")
...     with kg.device("worker:0"):
...         z = kg.reduce_sum(y, name="z")
>>> print(describe(partition([z], [x]), {"x": (2, 3)}))
stage 0 on worker:1 (level 0): 3 nodes; in: x; out: y
stage 1 on worker:0 (level 1): 3 nodes; in: y; out: z (fetched)
transfers: y worker:1 -> worker:0 24 B (stage 0 -> 1, read by y/to_cpu)
"""

from __future__ import annotations

import numpy as np

from .. import devices


def to_wire(value):
    """``value`` as it crosses workers: a host NumPy array (a number or None as it is)."""
    if value is None or isinstance(value, int | float | bool | np.ndarray | np.generic):
        return value
    return devices.to_numpy(value)


def nbytes(values) -> int:
    """The bytes ``values`` (arrays, numbers, None) move across the network."""
    return int(sum(getattr(v, "nbytes", 0) for v in values))


def transfer_label(node) -> str | None:
    """For a ``to_device`` node that moves a value between workers, the line the graph view
    shows (``'worker:0 → worker:1 · 160 B'``; the bytes once the shape is known); None for
    any other node. A node with no worker runs on ``'worker:0'`` in a cluster session.

    >>> import kernelgraph as kg
    >>> g = kg.Graph()
    >>> with g.as_default():
    ...     a = kg.constant([1.0, 2.0])
    ...     with kg.device("worker:1"):
    ...         b = a * 2.0
    >>> transfer_label(b.inputs[0]), transfer_label(b)
    ('worker:0 → worker:1 · 8 B', None)
    """
    if node.op.name != "to_device" or not node.inputs:
        return None
    src = node.inputs[0].device.worker or "worker:0"
    dst = node.device.worker or "worker:0"
    if src == dst:
        return None
    shape = node.shape
    if shape is None or None in shape:
        return f"{src} \u2192 {dst}"
    size = int(np.prod(shape, dtype=np.int64)) * np.dtype(node.dtype).itemsize
    return f"{src} \u2192 {dst} \u00b7 {_size(size)}"


def shapes_for(part, feed_shapes: dict) -> dict:
    """The shape of every value of ``part`` (key -> shape) once the fed values' shapes
    (``feed_shapes``: key -> shape) are known, by each op's shape rule; a node whose rule
    cannot tell keeps its static shape."""
    known = {k: tuple(v) for k, v in feed_shapes.items()}
    nodes = sorted({id(n): n for s in part.stages for n in s.nodes}.values(),
                   key=lambda n: n.seq)

    def shape_of(n):
        return known.get(n.name, n.shape)

    for n in nodes:
        if n.name in known or not n.inputs or n.op.infer is None:
            continue
        try:
            shape, _ = n.op.infer([shape_of(i) for i in n.inputs],
                                  [i.dtype for i in n.inputs], n.attrs or {})
        except Exception:  # noqa: BLE001 - a shape the rule refuses: the static one stands
            continue
        if shape is not None:
            known[n.name] = tuple(shape)
    return {n.name: known.get(n.name, n.shape) for n in nodes} | known


def _size(nbytes_: int | None) -> str:
    if nbytes_ is None:
        return "? B (shape unknown until fed)"
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if nbytes_ >= scale:
            return f"{nbytes_ / scale:.1f} {unit}"
    return f"{nbytes_} B"


def describe(part, feed_shapes: dict) -> str:
    """The text of :meth:`Partition.explain`: one line per stage, then the transfers with
    the bytes each moves (known for ``feed_shapes``, key -> shape)."""
    fetched = set(part.fetches)
    lines = []
    for s in part.stages:
        outs = ", ".join(k + (" (fetched)" if k in fetched else "") for k in s.outputs)
        count = f"{len(s.program)} node{'s' if len(s.program) != 1 else ''}"
        text = (f"stage {s.index} on {s.worker} (level {s.level}): {count}; "
                f"in: {', '.join(s.inputs) or '-'}; out: {outs or '-'}")
        if s.targets:
            text += f"; runs: {', '.join(t.name for t in s.targets)}"
        if s.after and not s.inputs:
            text += f"; after stage {', '.join(map(str, s.after))}"
        lines.append(text)
    sizes = part.transfer_bytes(feed_shapes)
    for t in part.transfers:
        lines.append(f"{'transfers:' if t is part.transfers[0] else ' ' * 10} {t.key} {t.src} "
                     f"-> {t.dst} {_size(sizes[t.key])} (stage {t.src_stage} -> "
                     f"{', '.join(map(str, t.dst_stages))}, read by {', '.join(t.receivers)})")
    if not part.transfers:
        lines.append("transfers: none")
    total = [v for v in sizes.values()]
    if len(part.transfers) > 1 and None not in total:
        lines.append(f"{' ' * 10} total {_size(sum(total))} per run")
    return "\n".join(lines)
