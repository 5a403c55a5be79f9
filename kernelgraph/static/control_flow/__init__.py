"""Control flow: ``kg.cond`` and ``kg.while_loop``, in both modes, with gradients.

In eager mode they simply run Python (:mod:`.api`). In static mode the design is TF2's
*functional* control flow, small enough to read:

- **Tracing** (:mod:`.tracing`). Each branch of a cond, and the ``cond``/``body`` of a
  loop, is called once on placeholders inside a private :class:`FuncGraph`. An outer node
  read inside becomes a *capture*: a placeholder of the inner graph and an extra input of
  the control-flow node.
- **One node, a tuple value.** The IR has one output per node, so a ``cond`` or
  ``while_loop`` node's value is a :class:`~kernelgraph.ops.control.Results` tuple, and one
  ``output`` node per item picks it: those are what the user holds. The node's ``spec``
  attribute runs it and builds its gradient (:mod:`kernelgraph.ops.control` defines the
  ops, on the floor below, and hands over to the spec).
- **Running** (:mod:`.subgraph`). The node's kernel runs the inner graph through a Session
  of its own (:class:`Subgraph`): the same compiler passes and generated plan as any run.
- **Gradients.** ``kg.gradients`` inside the inner graph gives each branch's or body's
  gradient graph: the gradient of a ``cond`` is a ``cond`` over the branches' gradient
  graphs (:mod:`.conditional`); the gradient of a ``while_loop`` is a ``while_grad`` node
  that runs the body's gradient graph backwards over the recorded iterations
  (:mod:`.loop`, :mod:`.loop_gradient`).
"""

from .api import cond, while_loop
from .conditional import CondSpec, build_cond, cond_gradient, make_cond
from .host_ops import iterator_get_next_op, iterator_init_op, random_uniform_like
from .loop import WhileSpec, build_while
from .loop_gradient import WhileGradSpec, while_gradient
from .subgraph import FedValues, Subgraph, use_compiler
from .tracing import FuncGraph, root_graph

__all__ = ["CondSpec", "FedValues", "FuncGraph", "Subgraph", "WhileGradSpec", "WhileSpec",
           "build_cond", "build_while", "cond", "cond_gradient", "iterator_get_next_op",
           "iterator_init_op", "make_cond", "random_uniform_like", "root_graph",
           "use_compiler", "while_gradient", "while_loop"]
