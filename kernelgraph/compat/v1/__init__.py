"""TensorFlow 1 spellings over kernelgraph's static mode.

Classic TF1 tutorial code runs with only its import changed::

    import kernelgraph.compat.v1 as tf
    tf.disable_v2_behavior()
    a = tf.placeholder(tf.float32)
    b = tf.placeholder(tf.float32)
    c = tf.multiply(a, b)
    with tf.Session() as sess:
        print(sess.run([c], feed_dict={a: [15.0], b: [20.0]}))   # [array([300.], ...)]

Every function here returns TF1's types (:mod:`.face`): ``tf.Tensor``, ``tf.Operation`` and
``tf.Variable`` wrap kernelgraph's graph nodes, so ``c.name`` is 'Mul:0' and ``c.op.type``
'Mul' because ``c`` is a ``tf.Tensor``, whatever else the program imports.

The names live by idea in :mod:`.spellings` (ops, dtypes, variables), :mod:`.conv`
(convolution and pooling in TF's layout), :mod:`.control_flow`, :mod:`.rnn` and
:mod:`.optimizers` (``tf.train``); this module gathers them into TF1's namespaces
(``tf.nn``, ``tf.losses``, ``tf.random``, ``tf.train``).
"""

from __future__ import annotations

import types

from ... import errors, ops
from ...dtypes import float32, float64, int32, int64
from ...graph import Graph, get_default_graph, name_scope, reset_default_graph
from ...graph import Node as Node  # not TF's: the module offered it before its split
from ...static.gradients import gradients
from ...static.session import InteractiveSession, Session, get_default_session
from ...static.variables import (
    Variable,
    constant,
    global_variables,
    global_variables_initializer,
    group,
    placeholder,
    trainable_variables,
    variables_initializer,
)
from .adaptive import AdadeltaOptimizer, AdagradOptimizer, RMSPropOptimizer
from .control_flow import cond, while_loop
from .optimizers import (
    AdamOptimizer,
    GradientDescentOptimizer,
    MomentumOptimizer,
    Optimizer,
    create_global_step,
    get_global_step,
    get_or_create_global_step,
)
from .proximal import (
    AdagradDAOptimizer,
    FtrlOptimizer,
    ProximalAdagradOptimizer,
    ProximalGradientDescentOptimizer,
)
from .spellings import (
    abs,
    add,
    argmax,
    assign,
    assign_add,
    assign_sub,
    bool,
    broadcast_to,
    cast,
    clip_by_value,
    concat,
    device,
    disable_eager_execution,
    disable_v2_behavior,
    divide,
    equal,
    exp,
    gather,
    greater,
    greater_equal,
    identity,
    initialize_all_variables,
    less,
    less_equal,
    log,
    matmul,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    one_hot,
    ones,
    ones_like,
    pad,
    pow,
    random_normal,
    random_uniform,
    reduce_max,
    reduce_mean,
    reduce_sum,
    reshape,
    set_random_seed,
    sigmoid,
    sign,
    split,
    sqrt,
    square,
    stack,
    subtract,
    tanh,
    transpose,
    truediv,
    where,
    zeros,
    zeros_like,
)

# Not TF's either: names the module offered before its split.
from .spellings import as_dtype as as_dtype
from .spellings import bool_ as bool_
from .spellings import bool_py as bool_py
from .spellings import kg_device as kg_device

# -- TF1's Session, tensors, shapes, dtypes, gradients and tests
# isort: split
import sys as _sys  # noqa: E402

from .spellings import *  # noqa: E402, F403 - TF1's op names: its __all__
from .tensors import *  # noqa: E402, F403 - constant, TensorShape, shape, range, dtypes ...
from .testing import test as test  # noqa: E402 - tf.test.TestCase, as TF1's tests use it
from .variable_scope import is_variable_initialized as is_variable_initialized  # noqa: E402
from .variable_scope import (  # noqa: E402
    report_uninitialized_variables as report_uninitialized_variables,
)

# tf.math: the same functions under TF 1.13+'s namespace.
math = types.SimpleNamespace(softplus=ops.softplus, **{name: globals()[name] for name in (
    "abs", "add", "add_n", "argmax", "argmin", "ceil", "cos", "count_nonzero", "divide", "equal",
    "exp", "floor", "floordiv", "floormod", "greater", "greater_equal", "less", "less_equal",
    "log", "log1p", "logical_and", "logical_not", "logical_or", "maximum", "minimum", "multiply",
    "negative", "not_equal", "pow", "reciprocal", "reduce_all", "reduce_any",
    "reduce_logsumexp", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum",
    "round", "rsqrt", "sigmoid", "sign", "sin", "sqrt", "square", "squared_difference",
    "subtract", "tan", "tanh", "truediv")})
# -- tf.nn, tf.layers, tf.data, tf.losses, variable scopes and control flow
# isort: split
from .namespaces import *  # noqa: E402, F403 - tf.nn, tf.layers, tf.data, tf.losses ...
from .namespaces import __all__ as _namespaces_all  # noqa: E402

random = types.SimpleNamespace(normal=random_normal, uniform=random_uniform,
                               set_random_seed=ops.random.seed)
train = types.SimpleNamespace(
    Optimizer=Optimizer, GradientDescentOptimizer=GradientDescentOptimizer,
    MomentumOptimizer=MomentumOptimizer, AdamOptimizer=AdamOptimizer,
    RMSPropOptimizer=RMSPropOptimizer, AdagradOptimizer=AdagradOptimizer,
    AdadeltaOptimizer=AdadeltaOptimizer, FtrlOptimizer=FtrlOptimizer,
    ProximalGradientDescentOptimizer=ProximalGradientDescentOptimizer,
    ProximalAdagradOptimizer=ProximalAdagradOptimizer, AdagradDAOptimizer=AdagradDAOptimizer,
    get_global_step=get_global_step, create_global_step=create_global_step,
    get_or_create_global_step=get_or_create_global_step,
)
# tf.RunOptions / tf.RunMetadata, tf.train.ClusterSpec / replica_device_setter
from .distribute import TRAIN_NAMES as _TRAIN_NAMES  # noqa: E402
from .distribute import RunMetadata, RunOptions, device  # noqa: E402, F811 - device(None)
from .saver import TRAIN_NAMES as _SAVER_NAMES  # noqa: E402 - tf.train.Saver ...

vars(train).update(_TRAIN_NAMES)
vars(train).update(_SAVER_NAMES)
from . import flags  # noqa: E402 - tf.flags: absl's, as TF1 wraps them (a module)
from .gfile import gfile  # noqa: E402 - tf.gfile: Python's file IO in TF's names

# tf.import_graph_def, tf.train.write_graph / import_meta_graph: graph files (TF's protobufs)
from .graph_import import import_graph_def  # noqa: E402
from .graph_io import write_graph  # noqa: E402
from .meta_graph import TRAIN_NAMES as _META_NAMES  # noqa: E402

vars(train).update(_META_NAMES, write_graph=write_graph)
# tf.train's training loop: decays, moving averages, Server, MonitoredTrainingSession, hooks
from .training import TRAIN_NAMES as _LOOP_NAMES  # noqa: E402

vars(train).update(_LOOP_NAMES)
# tf.metrics: (value, update_op) pairs over local variables
from . import metrics as _metrics  # noqa: E402
from .math_ops import *  # noqa: E402, F403 - tf.div, tf.clip_by_global_norm, tf.tensordot ...
from .math_ops import __all__ as _math_ops_all  # noqa: E402
from .nn_ops import NN_NAMES as _NN_NAMES  # noqa: E402 - tf.nn.nce_loss, tf.nn.top_k ...
from .nn_ops import multinomial, truncated_normal  # noqa: E402
from .sparse import *  # noqa: E402, F403 - tf.SparseTensor, tf.sparse_placeholder ...
from .sparse import __all__ as _sparse_all  # noqa: E402

vars(nn).update(_NN_NAMES)  # noqa: F405 - tf.nn, from .namespaces
vars(random).update(truncated_normal=truncated_normal)
vars(linalg).update(  # noqa: F405 - tf.linalg, from .tensors
    det=matrix_determinant, inv=matrix_inverse, solve=matrix_solve, cholesky=cholesky,  # noqa: F405
    eigh=self_adjoint_eig, eigvalsh=self_adjoint_eigvals, diag_part=matrix_diag_part,  # noqa: F405
    tensordot=tensordot, cross=cross)  # noqa: F405
from .modes import *  # noqa: E402, F403 - enable_eager_execution, keras.backend, all_variables
from .modes import __all__ as _modes_all  # noqa: E402
from .saved_model import saved_model  # noqa: E402 - tf.saved_model: TF's directory layout

metrics = types.SimpleNamespace(**{n: getattr(_metrics, n) for n in _metrics.__all__})
# TF1's input pipeline: queues, readers, tf.decode_csv, record files, tf.io, tf.python_io
from . import input_names as _inputs  # noqa: E402

globals().update(_inputs.TOP_LEVEL)
io = globals().get("io") or types.SimpleNamespace()  # tf.io, shared with other names
vars(io).update(_inputs.IO_NAMES)
vars(train).update(_inputs.TRAIN_NAMES)
vars(data).update(_inputs.DATA_NAMES)  # noqa: F405 - tf.data, from .namespaces
vars(data).setdefault("experimental", types.SimpleNamespace())  # noqa: F405
vars(data.experimental).update(_inputs.DATA_EXPERIMENTAL)  # noqa: F405
vars(compat).update(_inputs.COMPAT_NAMES)  # noqa: F405 - tf.compat.as_bytes ...

__all__ = [
    "DType", "Graph", "InteractiveSession", "Operation", "Session", "Tensor", "Variable",
    "abs", "add", "assign", "assign_add", "assign_sub", "bool", "broadcast_to", "cast",
    "constant", "disable_eager_execution", "disable_v2_behavior", "divide", "equal", "errors",
    "exp", "float32", "float64", "get_default_graph", "get_default_session",
    "global_variables", "global_variables_initializer", "gradients", "greater",
    "greater_equal", "group", "identity", "initialize_all_variables", "int32", "int64",
    "less", "less_equal", "log", "matmul", "maximum", "minimum", "multiply",
    "name_scope", "negative", "not_equal", "ones", "ones_like", "placeholder", "pow",
    "reduce_max", "reduce_mean", "reduce_sum", "reset_default_graph", "reshape", "sigmoid",
    "sign", "sqrt", "square", "subtract", "tanh", "trainable_variables", "transpose",
    "truediv", "variables_initializer", "where", "zeros", "zeros_like",
    "argmax", "clip_by_value", "concat", "gather", "one_hot", "pad", "random",
    "random_normal", "random_uniform", "set_random_seed", "split", "stack",
    "device", "cond", "while_loop", "train",
]
__all__ += _namespaces_all
__all__ += ["RunMetadata", "RunOptions"]  # tf.RunOptions, tf.RunMetadata
__all__ += ["metrics"]
__all__ += sorted(_inputs.TOP_LEVEL) + ["io"]
__all__ += [*_math_ops_all, "multinomial", "truncated_normal", *_sparse_all]
__all__ += ["flags", "gfile", "import_graph_def", "saved_model", *_modes_all]
from .summary import summary  # noqa: E402 - tf.summary: summary ops and FileWriter

__all__ += ["summary"]
from .image import image  # noqa: E402 - tf.image: resizes, colour adjustments, decoders

__all__ += ["image"]
from .keras import feature_column, keras  # noqa: E402 - tf.keras layers and Sequential in graphs

__all__ += ["feature_column", "keras"]

# -- TF1's types, and the boundary on every function and class of the face
# isort: split
from .dtype import CONSTANTS as _DTYPES  # noqa: E402
from .dtype import DType  # noqa: E402
from .face import Graph, Operation, Tensor, Variable, install  # noqa: E402, F811
from .session import InteractiveSession, Session  # noqa: E402, F811

# tf.float32 ... are TF1's DTypes (they read as NumPy's dtypes wherever one is expected)
globals().update(_DTYPES)
vars(dtypes).update(_DTYPES)  # noqa: F405 - tf.dtypes, from .tensors
install(_sys.modules[__name__])


def __getattr__(name):
    # tf.GraphDef, tf.NodeDef: TF's protobuf classes, loaded when a program first asks
    if name in ("GraphDef", "NodeDef", "MetaGraphDef", "AttrValue", "TensorProto"):
        from . import graph_io  # late: protobuf's modules take a moment to load

        return getattr(graph_io, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
