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

# -- PyTorch's names, where they differ from the TF-style ones above or add to them. These
# come after the TF-style imports on purpose: where a name means different things in the two
# frameworks (max, sum, split, transpose, softmax, equal ...), ``kg`` follows PyTorch and
# accepts TF's spelling (``axis=``) too; ``kernelgraph.compat.v1`` keeps TF1's meanings.
from . import accelerator, utils  # noqa: E402 - torch.accelerator, torch.utils.data
from . import fx as fx  # noqa: E402 - torch.fx: symbolic tracing to a graph
from . import linalg as linalg  # noqa: E402 - torch.linalg.svd, svdvals
from . import serialization as serialization  # noqa: E402 - torch.serialization.safe_globals
from . import testing as testing  # noqa: E402 - torch.testing.assert_close
from .devices import get_default_device, set_default_device  # noqa: E402
from .dtypes import TORCH_NAMES as _TORCH_NAMES  # noqa: E402 - torch.float, torch.long ...
from .dtypes import float16, int8, int16, string, uint8  # noqa: E402 - storage dtypes
from .eager.creation import *  # noqa: E402, F403 - linspace full eye empty *_like from_numpy
from .eager.grad_mode import inference_mode, is_inference_mode_enabled  # noqa: E402
from .eager.legacy import *  # noqa: E402, F403 - kg.Tensor(data), FloatTensor, LongTensor ...
from .eager.printing import *  # noqa: E402, F403 - Size, set_printoptions ...
from .eager.random_creation import *  # noqa: E402, F403 - rand randn randint randperm normal
from .eager.tensor_extras import *  # noqa: E402, F403 - unique nonzero range set_num_threads
from .ops.casting import *  # noqa: E402, F403 - can_cast (the out= casting rule)
from .ops.closeness import *  # noqa: E402, F403 - allclose isclose
from .ops.einsum import *  # noqa: E402, F403 - einsum, composed of the ops above
from .ops.linalg import *  # noqa: E402, F403 - mm bmm dot outer addmm
from .ops.shape_functions import *  # noqa: E402, F403 - cat chunk split squeeze unsqueeze ...
from .ops.torch_bitwise import *  # noqa: E402, F403 - bitwise_and bitwise_or bitwise_xor
from .ops.torch_random import (  # noqa: E402 - PyTorch's CPU generator and its seeding
    Generator,
    default_generator,
    initial_seed,
    manual_seed,
    seed,
)
from .ops.torch_reduce import *  # noqa: E402, F403 - max(x, dim) -> (values, indices) ...
from .ops.torch_reduce import return_types  # noqa: E402 - torch.return_types.max ...
from .ops.torch_svd import *  # noqa: E402, F403 - svd (U, S, V); eig (PyTorch's removal error)
from .ops.torch_tensor_ops import *  # noqa: E402, F403 - gather(x, dim, index) topk tril ...

# torch.float, torch.int, torch.bool ...: these names shadow the builtins in this module on
# purpose, since they are torch's names here.
globals().update(_TORCH_NAMES)
matmul = ops.linalg.matmul_torch  # noqa: F811 - vectors too; the card stays kg.ops.matmul
softmax = ops.methods.softmax_torch  # noqa: F811 - torch.softmax(x, dim=1); kg.ops.softmax
log_softmax = ops.methods.log_softmax_torch  # noqa: F811 - as torch.log_softmax
ops.methods.refresh()  # the ops registered since with the trait "method" become methods

from .version import __version__ as __version__  # noqa: E402 - one place for the version

# TF1's run metadata (sess.run(..., options=kg.RunOptions(...), run_metadata=md))
# isort: split
from .distributed.metadata import RunMetadata, RunOptions  # noqa: E402


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
__all__ += ["accelerator", "testing", "utils", "get_default_device", "set_default_device",
            "float16", "int8", "int16", "string", "uint8", "inference_mode",
            "is_inference_mode_enabled", "Generator", "default_generator", "initial_seed",
            "manual_seed", "seed", "return_types", "softmax", "log_softmax"]
__all__ += [*_TORCH_NAMES, *eager.creation.__all__, *eager.legacy.__all__,
            *eager.printing.__all__, *eager.random_creation.__all__, *ops.casting.__all__,
            *ops.closeness.__all__,
            *ops.linalg.__all__, *ops.shape_functions.__all__, *ops.torch_reduce.__all__]
__all__ += [*ops.torch_tensor_ops.__all__, *eager.tensor_extras.__all__,
            *ops.torch_bitwise.__all__]
__all__ += ["RunMetadata", "RunOptions"]
# torch.backends (cudnn flags), torch.distributions, torch.set_default_tensor_type,
# torch.amp / torch.autocast, torch.compile, torch.profiler, torch.multiprocessing, torch.futures
from . import amp, backends, distributions, futures, multiprocessing, profiler  # noqa: E402
from .amp import autocast  # noqa: E402
from .compiling import compile  # noqa: E402, A004 - torch.compile
from .default_type import set_default_tensor_type  # noqa: E402

__all__ += ["amp", "autocast", "backends", "compile", "distributions", "futures",
            "multiprocessing", "profiler", "set_default_tensor_type"]
__all__ = sorted(set(__all__))
