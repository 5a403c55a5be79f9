"""``tf.cond`` and ``tf.while_loop`` over kernelgraph's control flow
(:mod:`kernelgraph.static.control_flow`), with TF1's conversions and unpacking."""

from __future__ import annotations

from ...graph import Node
from ...ops.control import flatten, pack_as
from ...static.control_flow import cond as kg_cond
from ...static.control_flow import while_loop as kg_while
from ...static.variables import constant
from .spellings import bool_py


def _graph_values(values):
    """Graph mode: Python numbers and arrays become constants (TF1 converts them)."""
    return pack_as(values, [v if isinstance(v, Node) else constant(v)
                            for v in flatten(values)])


def _unpack_singleton(result):
    return result[0] if isinstance(result, list | tuple) and len(result) == 1 else result


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None):
    """tf.cond(pred, true_fn, false_fn): only the branch ``pred`` picks runs. As in TF1,
    a branch's one-element list is unpacked unless ``strict=True``."""
    if not isinstance(pred, Node):
        pred = constant(bool_py(pred))
    result = kg_cond(pred, true_fn, false_fn, name=name)
    return result if strict else _unpack_singleton(result)


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """tf.while_loop: one loop node in the graph (``parallel_iterations`` and
    ``swap_memory`` are accepted and have nothing to do here). As in TF1, one loop variable
    in a list comes back as a tensor unless ``return_same_structure=True``."""
    result = kg_while(cond, body, _graph_values(loop_vars), shape_invariants,
                      maximum_iterations=maximum_iterations, back_prop=back_prop, name=name)
    return result if return_same_structure else _unpack_singleton(result)
