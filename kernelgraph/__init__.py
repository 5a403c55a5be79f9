"""kernelgraph: one small, real deep-learning engine with two front-ends.

Eager (PyTorch names)::

    import kernelgraph as kg
    a = kg.tensor(15.0, requires_grad=True)
    b = kg.tensor(20.0, requires_grad=True)
    c = a * b
    c.backward()            # a.grad == 20, b.grad == 15

Static (TensorFlow 1 names)::

    a = kg.placeholder(kg.float32)
    b = kg.placeholder(kg.float32)
    c = a * b
    grads = kg.gradients(c, [a, b])
    with kg.Session() as sess:
        sess.run([c, grads], feed_dict={a: 15.0, b: 20.0})   # [300.0, [20.0, 15.0]]

Both call the same ops (:mod:`kernelgraph.ops`), the same autodiff and the same numba kernels.
"""

from . import autograd, cuda, data, devices, dtypes, errors, nn, ops, optim, trace
from .autobatching import autobatch
from .checkpoint import load, save
from .devices import Device, DeviceError, device
from .dtypes import bool_, float32, float64, int32, int64
from .eager import (
    EagerNode,
    Tensor,
    arange,
    enable_grad,
    graph_of,
    is_grad_enabled,
    no_grad,
    ones,
    set_grad_enabled,
    tensor,
    zeros,
)
from .graph import Graph, Node, get_default_graph, name_scope, reset_default_graph
from .jit import function
from .ops import (
    argmax,
    avg_pool2d,
    broadcast_to,
    clip,
    concat,
    conv2d,
    cross_entropy,
    dropout,
    embedding,
    gather,
    global_avg_pool2d,
    log_softmax,
    matmul,
    max,
    max_pool2d,
    mean,
    mse_loss,
    one_hot,
    pad,
    random,
    reshape,
    softmax,
    softmax_cross_entropy,
    split,
    stack,
    sum,
    to_device,
    transpose,
)
from .ops.elementwise import *  # noqa: F403 - the public elementwise ops: its __all__
from .static.control_flow import cond, while_loop
from .static.gradients import gradients
from .static.session import InteractiveSession, Session, get_default_session
from .static.variables import (
    Variable,
    constant,
    global_variables,
    global_variables_initializer,
    group,
    placeholder,
    trainable_variables,
    variables_initializer,
)

# TF-style aliases for the same ops.
reduce_sum, reduce_mean, reduce_max = sum, mean, max
multiply, subtract, divide, negative = mul, sub, div, neg

# -- issue 21: PyTorch's and TF1's names. Each block belongs to one engineer; add names only
# inside your own block (a star import of your module's __all__ is the usual way).
# [H1 in-place, autograd.Function, Tensor constructor]
# [end H1]
# [H2 factories and PyTorch's random numbers]
# [end H2]
# [H3 nn, optim, devices]
# [end H3]
# [H4 math and reductions]
# [end H4]
# [H5 methods on both kinds of tensor, shape functions, printing]
# [end H5]
# [H6 dtypes]
# [end H6]

from .version import __version__ as __version__  # noqa: E402 - one place for the version


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where JupyterLab finds the prebuilt extension (``jupyter labextension develop .``)."""
    return [{"src": "labextension", "dest": "kernelgraph-extension"}]


def __getattr__(name: str):
    # The notebook views import IPython (and, for the widgets, ipywidgets and plotly): load
    # them on first use so that `import kernelgraph` stays fast.
    if name in ("show", "widgets"):
        import importlib

        widgets = importlib.import_module(".widgets", __name__)
        return widgets if name == "widgets" else widgets.show
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EagerNode", "Graph", "InteractiveSession", "Node", "Session", "Tensor", "Variable",
    "arange", "autograd", "avg_pool2d", "conv2d", "global_avg_pool2d", "max_pool2d", "bool_",
    "broadcast_to", "constant", "cross_entropy", "divide", "dtypes", "enable_grad", "errors",
    "float32", "float64", "get_default_graph", "get_default_session", "global_variables",
    "global_variables_initializer", "gradients", "graph_of", "group", "int32", "int64",
    "is_grad_enabled", "log_softmax", "matmul", "max", "mean", "mse_loss", "multiply",
    "name_scope", "negative", "no_grad", "ones", "ops", "placeholder", "reduce_max",
    "reduce_mean", "reduce_sum", "reset_default_graph", "reshape", "set_grad_enabled", "show",
    "softmax", "softmax_cross_entropy", "subtract", "sum", "tensor", "trace",
    "trainable_variables", "transpose", "variables_initializer", "zeros", "widgets",
] + ops.elementwise.__all__
__all__ += ["Device", "DeviceError", "cuda", "device", "devices", "to_device"]
__all__ += ["argmax", "clip", "concat", "dropout", "embedding", "gather", "one_hot", "pad",
            "random", "split", "stack"]
__all__ += ["cond", "nn", "while_loop"]
__all__ += ["function"]
__all__ += ["autobatch", "data", "load", "optim", "save"]
