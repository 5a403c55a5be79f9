"""``kg.fx.replace_pattern``: find a traced pattern in a graph and put a replacement there.

``pattern`` and ``replacement`` are functions (or modules) of the same arguments; both are
traced. A match is a set of nodes computing the pattern's output from some values (bound to
the pattern's placeholders), none of whose inner results is read outside the match.

>>> import kernelgraph as kg
>>> from kernelgraph import fx
>>> def f(x):
...     return kg.relu(kg.neg(x))
>>> gm = fx.symbolic_trace(f)
>>> matches = fx.replace_pattern(gm, lambda x: kg.relu(kg.neg(x)), lambda x: kg.abs(x))
>>> [n.target for n in gm.graph.nodes if n.op == "call_function"] == [kg.abs]
True
"""

from __future__ import annotations

from typing import NamedTuple

from .node import Node, map_arg
from .tracer import symbolic_trace


class Match(NamedTuple):
    anchor: Node  # the node of the graph matching the pattern's output
    nodes_map: dict  # pattern node -> graph node


def _match(pn: Node, gn, binding: dict) -> bool:
    if pn.op == "placeholder":
        if pn in binding:
            return binding[pn] is gn
        binding[pn] = gn
        return True
    if not isinstance(gn, Node) or gn.op != pn.op or gn.target != pn.target \
            or len(gn.args) != len(pn.args) or set(gn.kwargs) != set(pn.kwargs):
        return False
    if pn in binding:
        return binding[pn] is gn
    binding[pn] = gn
    pairs = list(zip(pn.args, gn.args, strict=True)) + [(v, gn.kwargs[k])
                                                        for k, v in pn.kwargs.items()]
    for pa, ga in pairs:
        if isinstance(pa, Node):
            if not _match(pa, ga, binding):
                return False
        elif isinstance(ga, Node) or pa != ga:
            return False
    return True


def replace_pattern(gm, pattern, replacement) -> list[Match]:
    """Replace every non-overlapping match of ``pattern`` in ``gm.graph`` by
    ``replacement``, recompile ``gm`` and return the matches."""
    pg = symbolic_trace(pattern).graph
    rg = symbolic_trace(replacement).graph
    p_out = pg.nodes[-1].args[0]
    if not isinstance(p_out, Node):
        raise ValueError("replace_pattern: the pattern must return one value")
    p_inputs = [n for n in pg.nodes if n.op == "placeholder"]
    r_inputs = [n for n in rg.nodes if n.op == "placeholder"]
    if len(p_inputs) != len(r_inputs):
        raise ValueError("replace_pattern: pattern and replacement take different arguments")
    graph, matches, used = gm.graph, [], set()
    for node in graph.nodes:
        if node in used or node.op in ("placeholder", "output"):
            continue
        binding: dict = {}
        if not _match(p_out, node, binding):
            continue
        inner = {binding[p] for p in binding if p.op != "placeholder"}
        if inner & used or any(u not in inner for n in inner - {node} for u in n.users):
            continue
        used |= inner
        matches.append(Match(node, dict(binding)))
        env = {r: binding[p] for p, r in zip(p_inputs, r_inputs, strict=True)}
        with graph.inserting_before(node):
            for rn in rg.nodes:
                if rn.op == "placeholder":
                    continue
                if rn.op == "output":
                    new = map_arg(rn.args[0], env.__getitem__)
                    break
                env[rn] = graph.node_copy(rn, env.__getitem__)
        node.replace_all_uses_with(new)
        for n in reversed(graph.nodes):
            if n in inner and not n.users:
                graph.erase_node(n)
    gm.recompile()
    return matches
