"""``kg.fx``: PyTorch's ``torch.fx`` for kernelgraph modules — symbolic tracing to a graph of
``placeholder`` / ``get_attr`` / ``call_function`` / ``call_module`` / ``call_method`` /
``output`` nodes, graph editing, and a :class:`GraphModule` that runs the edited graph as
generated Python. See ``docs/fx.md``.
"""

from . import graph, node, proxy
from .graph import Graph
from .graph_module import GraphModule
from .node import Node, map_arg
from .proxy import Proxy, TraceError
from .subgraph_rewriter import replace_pattern
from .tracer import Tracer, symbolic_trace, wrap

__all__ = ["Graph", "GraphModule", "Node", "Proxy", "TraceError", "Tracer", "graph",
           "map_arg", "node", "proxy", "replace_pattern", "symbolic_trace", "wrap"]
