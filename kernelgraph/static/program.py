"""The static compiler's program: the fetched subgraph that its passes rewrite, and the
helpers every rewrite uses.

A :class:`Program` is the part of the graph one run computes: its nodes in an order where
inputs come first, its fetches, and its fed nodes. A pass never changes the user's graph:
where it rewrites a node it makes a :func:`clone` (same name, source line and creation
order, so run-time errors still point at the user's code) and :func:`rewrite` re-wires every
later node to the replacements of its inputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..graph import Node, ancestors
from .variables import read_inputs

#: Traits of ops never folded, merged or simplified away: run by the session (variables,
#: assigns, placeholders), random draws, device copies, and control flow (which runs whole
#: sub-graphs, may draw random numbers, and whose value is a tuple).
KEPT_TRAITS = frozenset({"stateful", "random", "transfer", "control"})


@dataclass
class Program:
    """The subgraph one run computes: ``nodes`` in an order where inputs come first."""

    nodes: list
    fetches: list
    feeds: frozenset  # ids of the fed nodes (they are inputs: never computed or rewritten)
    # The shapes of this run's fed values, by node id, when the plan is specialised to them.
    feed_shapes: dict | None = None


def clone(node: Node, inputs: tuple, **changes) -> Node:
    """A copy of ``node`` reading ``inputs`` (same name, source line and creation order)."""
    new = Node.__new__(Node)
    for slot in ("op", "attrs", "shape", "dtype", "device", "name", "location", "graph", "seq",
                 "control_inputs"):
        setattr(new, slot, getattr(node, slot))
    new.inputs = inputs
    for key, value in changes.items():
        setattr(new, key, value)
    return new


def rewrite(program: Program, rule) -> tuple[Program, list]:
    """Apply ``rule(node, changes) -> replacement or None`` to every node in order, re-wiring
    each node to the replacements of its inputs. Returns the new program and the changes
    (short texts the rule appended to ``changes``)."""
    replaced: dict[int, Node] = {}
    nodes, present, changes = [], set(), []
    for n in program.nodes:
        if id(n) in program.feeds:
            out = n
        else:
            inputs = tuple(replaced.get(id(i), i) for i in n.inputs)
            controls = tuple(replaced.get(id(c), c) for c in n.control_inputs)
            current = n
            if inputs != n.inputs or controls != n.control_inputs:
                current = clone(n, inputs, control_inputs=controls)
            out = rule(current, changes)
            if out is None:
                out = current
            if out is not n:
                replaced[id(n)] = out
        if id(out) not in present:  # a node folded into a new constant takes its place
            present.add(id(out))
            nodes.append(out)
    fetches = [replaced.get(id(f), f) for f in program.fetches]
    return Program(nodes, fetches, program.feeds, program.feed_shapes), changes


def needed(fetches, feeds) -> list:
    """The nodes a run of ``fetches`` computes, in creation order, stopping at the fed
    nodes (kept: they are the run's inputs); the variable an assign writes is not read."""
    return ancestors(fetches, stop=feeds, reads=read_inputs)


def rewritable(n: Node) -> bool:
    """Whether a pass may fold, merge or simplify ``n`` away (see :data:`KEPT_TRAITS`)."""
    return not (n.op.traits & KEPT_TRAITS) and not n.control_inputs and n.op.forward is not None


def const_value(n: Node, feeds=frozenset()):
    """The value of the constant ``n``, or None: not a constant, or a fed one (in ``feeds``),
    whose value this run's feed overrides (TF1: any fed tensor takes the fed value)."""
    return n.attrs["value"] if n.op.name == "const" and id(n) not in feeds else None
