"""Memory planning: which values a plan may overwrite, and where each one lives.

A plan is straight-line code, so the compiler knows when each value is read for the last
time (its *liveness*). It uses that three ways:

- **slots**: values whose lives do not overlap share one local variable of the generated
  function, so an array is released as soon as its last reader has run (plain locals would
  keep every intermediate alive until the run returns);
- **in place**: an elementwise node whose input dies at that node writes its result into
  that input's array (``ufunc(a, b, out=a)``) instead of allocating, when shape and dtype
  match and nothing else can see the array;
- **variable updates in place**: ``w.assign_sub(lr * g)`` subtracts into the variable's own
  array when nothing later in the run reads the old value (TensorFlow's variables are
  updated in place too).

Only arrays the plan itself made are ever overwritten: never a fed value (the caller's), a
constant, a fetched value, or anything that may share memory with one (views such as
``transpose`` keep the array they look into alive). :class:`MemoryPlan` reports the result:
the bytes every intermediate would take with nothing freed, the peak that is really live at
once, and which nodes were computed in place.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from .variables import ASSIGNS, assign_op, no_op, placeholder_op, variable_op, writes_variable

NEVER = 1 << 60  # the lifetime of a value that outlives the run (fetched, stored)


@dataclass
class MemoryPlan:
    """What :func:`plan` decided for one compiled run (see the module docstring)."""

    slots: dict = field(default_factory=dict, repr=False)  # node id -> slot of its local
    # node id -> the input whose array it writes
    in_place: dict = field(default_factory=dict, repr=False)
    variable_in_place: set = field(default_factory=set, repr=False)  # ids of such assigns
    names: dict = field(default_factory=dict)  # node name -> slot (for the views)
    peak_bytes: int | None = None  # intermediates alive at once, at the worst point
    naive_bytes: int | None = None  # every intermediate kept to the end, nothing reused

    in_place_names: list = field(default_factory=list)  # "relu <- add" / "assign_sub: w"

    @property
    def buffers(self) -> dict:
        """Node name -> slot number: nodes with one number reuse one local in turn."""
        return dict(self.names)

    def summary(self) -> str:
        if self.peak_bytes is None:
            return (f"{len(set(self.slots.values()))} slots for {len(self.slots)} values; "
                    f"{len(self.in_place) + len(self.variable_in_place)} written in place "
                    "(bytes unknown: shapes are not all known)")
        return (f"peak {_size(self.peak_bytes)} live (vs {_size(self.naive_bytes)} with "
                f"nothing freed); {len(set(self.slots.values()))} slots for "
                f"{len(self.slots)} values; in place: {_count(self.in_place, 'op')}, "
                f"{_count(self.variable_in_place, 'variable update')}")


def _count(items, what: str) -> str:
    return f"{len(items)} {what}{'' if len(items) == 1 else 's'}"


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def nbytes(node) -> int | None:
    """The bytes of ``node``'s value, or None where its shape is not fully known."""
    if node.shape is None or None in node.shape or node.dtype is None:
        return None
    return int(np.prod(node.shape, dtype=np.int64)) * np.dtype(node.dtype).itemsize


def _fresh(node) -> bool:
    """Whether ``node``'s value is always a new array (its card's trait ``fresh``: a ufunc's
    result, a BLAS product, a reduction's accumulator, a fused kernel's): only such arrays
    are ever written in place. Every other op may return a view of an input or the input
    itself."""
    return node.device.type == "cpu" and "fresh" in node.op.traits


def _reads(node):
    return node.inputs[1:] if writes_variable(node) else node.inputs


def lifetimes(order, fetch_nodes) -> dict:
    """node id -> position of the last step that may still see its array. A value is seen
    by its readers and, through them, by whatever may share its memory (the result of a
    view, or of any op not known to make a new array)."""
    position = {id(n): k for k, n in enumerate(order)}
    last = {id(n): position[id(n)] for n in order}
    for f in fetch_nodes:
        last[id(f)] = NEVER
    for n in order:
        if n.op in ASSIGNS:  # the variable keeps the assigned array (unless copied)
            last[id(n.inputs[1])] = NEVER
    # Latest first, so a view's own lifetime is final before it extends its input's.
    for n in reversed(order):
        k = position[id(n)]
        shape_only = n.op.shape_inputs
        for index, i in enumerate(n.inputs):
            if id(i) not in last or (index == 0 and writes_variable(n)):
                continue  # not a value read here (a fed node, the variable an assign writes)
            # An input read for its shape alone cannot be in the output.
            aliased = not (_fresh(n) or n.op is no_op or index in shape_only)
            last[id(i)] = max(last[id(i)], max(k, last[id(n)]) if aliased else k)
    return last


def plan(order, fetch_nodes, feed_nodes, bindable) -> MemoryPlan:
    """Slots, in-place writes and byte counts for running ``order``. ``bindable(node)`` says
    whether the plan calls ``node``'s kernel as ``ufunc(*inputs, out=array)``."""
    last = lifetimes(order, fetch_nodes)
    fed = {id(n) for n in feed_nodes}
    position = {id(n): k for k, n in enumerate(order)}
    result = MemoryPlan()
    owned = set()  # ids of values that are arrays this run made and nobody else holds
    taken = set()  # ids of the inputs some node already writes into

    for k, n in enumerate(order):
        if id(n) in fed or n.op in (variable_op, placeholder_op, no_op) or \
                n.op.name == "const":
            continue
        if writes_variable(n):  # an assign_add/sub, or a fused update, may write in place
            var = n.inputs[0]
            if (n.op is not assign_op and n.device.type == "cpu" and last.get(id(var), -1) < k
                    and bindable(n) and _same_array(n, var)
                    and (n.op not in ASSIGNS or _same_array(n.inputs[1], var))):
                result.variable_in_place.add(id(n))
                result.in_place_names.append(f"{n.name} -> {var.name}")
            continue
        if _fresh(n):
            owned.add(id(n))
        if bindable(n):
            for i in n.inputs:
                if (id(i) in owned and last[id(i)] == k and _same_array(i, n)
                        and id(i) not in taken):
                    result.in_place[id(n)] = i
                    taken.add(id(i))
                    result.in_place_names.append(f"{n.name} -> {i.name}")
                    break

    # Slots: a value takes a free slot when it is made and frees it after its last read.
    # Busy slots sit in a heap by the step they end at (so a run of thousands of nodes costs
    # n log n, not n * live values); the slots ending together are freed in the order they
    # were taken, which is the order the generated locals have always been numbered in.
    free, busy, count = [], [], 0
    taken_at: dict[int, tuple] = {}  # busy slot -> (its end, when it was taken)
    for k, n in enumerate(order):
        ended = []
        while busy and busy[0][0] < k:
            entry = heapq.heappop(busy)
            if taken_at.get(entry[2]) == entry[:2]:  # else the slot was handed on in place
                ended.append(entry)
        for _end, _when, slot in sorted(ended, key=lambda e: e[1]):
            del taken_at[slot]
            free.append(slot)
        if id(n) in fed or n.op.name == "const":
            continue  # arguments and constants are not locals of the run
        source = result.in_place.get(id(n))
        if source is not None:  # it lives on in its input's array, so in its slot too
            slot = result.slots[id(source)]
        elif free:
            slot = free.pop()
        else:
            slot, count = count, count + 1
        result.slots[id(n)] = slot
        result.names[n.name] = slot
        taken_at[slot] = (last[id(n)], k)
        heapq.heappush(busy, (last[id(n)], k, slot))
    _bytes(order, fed, last, result, position)
    return result


def _same_array(a, b) -> bool:
    """``a``'s array can hold ``b``'s result: same concrete shape and dtype."""
    return (a.shape is not None and None not in a.shape and a.shape == b.shape
            and a.dtype == b.dtype and a.device.type == "cpu")


def _bytes(order, fed, last, result, position):
    made = [n for n in order if id(n) not in fed and n.op not in (variable_op, placeholder_op,
                                                                  no_op)
            and n.op.name != "const" and not writes_variable(n)]
    sizes = {id(n): (nbytes(n) if _fresh(n) or n.device.type != "cpu" else 0) for n in made}
    if any(s is None for s in sizes.values()):
        return
    result.naive_bytes = sum(sizes.values())
    live, peak = 0, 0
    ending: dict[int, int] = {}
    for k, n in enumerate(order):
        if id(n) in sizes and id(n) not in result.in_place:
            live += sizes[id(n)]
            end = last[id(n)]
            ending[end] = ending.get(end, 0) + sizes[id(n)]
        elif id(n) in result.in_place:  # it takes over its input's array and lifetime
            end = last[id(n)]
            src_end = last[id(result.in_place[id(n)])]
            ending[src_end] -= sizes[id(n)]
            ending[end] = ending.get(end, 0) + sizes[id(n)]
        peak = max(peak, live)
        live -= ending.pop(k, 0)
    result.peak_bytes = peak
