"""TensorFlow 1 spellings over kernelgraph's static mode.

Classic TF1 tutorial code runs with only its import changed::

    import kernelgraph.compat.v1 as tf
    tf.disable_v2_behavior()
    a = tf.placeholder(tf.float32)
    b = tf.placeholder(tf.float32)
    c = tf.multiply(a, b)
    with tf.Session() as sess:
        print(sess.run([c], feed_dict={a: [15.0], b: [20.0]}))   # [array([300.], ...)]
"""

from __future__ import annotations

import collections
import types

import numpy as np

from .. import errors, ops
from ..devices import device as kg_device
from ..dtypes import as_dtype, bool_, float32, float64, int32, int64
from ..graph import Graph, Node, get_default_graph, name_scope, reset_default_graph
from ..nn import Module as _Module
from ..nn import init as _init
from ..optim import GraphUpdates as _GraphUpdates
from ..static.gradients import gradients
from ..static.session import InteractiveSession, Session, get_default_session
from ..static.variables import (
    Variable,
    constant,
    global_variables,
    global_variables_initializer,
    group,
    placeholder,
    trainable_variables,
    variables_initializer,
)

bool = bool_  # noqa: A001 - tf.bool
Tensor = Operation = Node
DType = np.dtype

add, subtract, multiply, divide, truediv = ops.add, ops.sub, ops.mul, ops.div, ops.div
negative, pow, square, sqrt, exp, log = ops.neg, ops.pow, ops.square, ops.sqrt, ops.exp, ops.log
abs, sign, maximum, minimum, where = ops.abs, ops.sign, ops.maximum, ops.minimum, ops.where
tanh, sigmoid, matmul, identity = ops.tanh, ops.sigmoid, ops.matmul, ops.identity
equal, not_equal, less, less_equal = ops.equal, ops.not_equal, ops.less, ops.less_equal
greater, greater_equal = ops.greater, ops.greater_equal
zeros_like, ones_like = ops.zeros_like, ops.ones_like
initialize_all_variables = global_variables_initializer


def _reduce(op):
    def reduce(input_tensor, axis=None, keepdims=False, name=None, keep_dims=None):
        if keep_dims is not None:
            keepdims = keep_dims
        return op(input_tensor, axis=axis, keepdims=bool_py(keepdims), name=name)
    reduce.__name__ = f"reduce_{op.name}"
    reduce.__doc__ = f"tf.reduce_{op.name}(input_tensor, axis=None, keepdims=False)"
    return reduce


def bool_py(x):
    return True if x else False


reduce_sum, reduce_mean, reduce_max = _reduce(ops.sum), _reduce(ops.mean), _reduce(ops.max)


def reshape(tensor, shape, name=None):
    return ops.reshape(tensor, shape=tuple(shape), name=name)


def transpose(a, perm=None, name=None):
    # perm is checked by the op (a list, tuple or 1-D int array of distinct axes in range).
    return ops.transpose(a, perm=perm, name=name)


def broadcast_to(input, shape, name=None):  # noqa: A002 - TF's argument name
    return ops.broadcast_to(input, shape=tuple(shape), name=name)


def cast(x, dtype, name=None):
    return ops.cast(x, dtype=as_dtype(dtype), name=name)


def zeros(shape, dtype=float32, name=None):
    return constant(np.zeros(shape), dtype=dtype, name=name or "zeros")


def ones(shape, dtype=float32, name=None):
    return constant(np.ones(shape), dtype=dtype, name=name or "ones")


def assign(ref, value, name=None):
    return ref.assign(value, name=name)


def assign_add(ref, value, name=None):
    return ref.assign_add(value, name=name)


def assign_sub(ref, value, name=None):
    return ref.assign_sub(value, name=name)


def _sparse_xent(_sentinel=None, labels=None, logits=None, name=None):
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...)")
    return ops.softmax_cross_entropy(logits, labels, name=name)


nn = types.SimpleNamespace(
    relu=ops.relu, sigmoid=ops.sigmoid, tanh=ops.tanh,
    softmax=lambda logits, axis=-1, name=None: ops.softmax(logits, axis=axis, name=name),
    log_softmax=lambda logits, axis=-1, name=None: ops.log_softmax(logits, axis=axis,
                                                                   name=name),
    sparse_softmax_cross_entropy_with_logits=_sparse_xent,
)
losses = types.SimpleNamespace(
    mean_squared_error=lambda labels, predictions: ops.mse_loss(predictions, labels),
    sparse_softmax_cross_entropy=lambda labels, logits: ops.cross_entropy(logits, labels),
)


def disable_v2_behavior() -> None:
    """Nothing to disable: kernelgraph's static mode is already TF1's graph mode."""


disable_eager_execution = disable_v2_behavior

__all__ = [
    "DType", "Graph", "InteractiveSession", "Operation", "Session", "Tensor", "Variable",
    "abs", "add", "assign", "assign_add", "assign_sub", "bool", "broadcast_to", "cast",
    "constant", "disable_eager_execution", "disable_v2_behavior", "divide", "equal", "errors",
    "exp", "float32", "float64", "get_default_graph", "get_default_session",
    "global_variables", "global_variables_initializer", "gradients", "greater",
    "greater_equal", "group", "identity", "initialize_all_variables", "int32", "int64",
    "less", "less_equal", "log", "losses", "matmul", "maximum", "minimum", "multiply",
    "name_scope", "negative", "nn", "not_equal", "ones", "ones_like", "placeholder", "pow",
    "reduce_max", "reduce_mean", "reduce_sum", "reset_default_graph", "reshape", "sigmoid",
    "sign", "sqrt", "square", "subtract", "tanh", "trainable_variables", "transpose",
    "truediv", "variables_initializer", "where", "zeros", "zeros_like",
]


# -- indexing and random ops -------------------------------------------------------------------
def concat(values, axis, name=None):
    """tf.concat(values, axis)."""
    return ops.concat(values, axis=axis, name=name)


def stack(values, axis=0, name=None):
    """tf.stack(values, axis=0)."""
    return ops.stack(values, axis=axis, name=name)


def split(value, num_or_size_splits, axis=0, name=None):
    """tf.split(value, num_or_size_splits, axis=0): a list of pieces."""
    return ops.split(value, num_or_size_splits, axis=axis, name=name)


def gather(params, indices, axis=0, name=None):
    """tf.gather(params, indices, axis=0)."""
    return ops.gather(params, indices, axis=axis, name=name)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """tf.pad(tensor, paddings, constant_values=0) (CONSTANT mode only)."""
    if str(mode).upper() != "CONSTANT":
        raise NotImplementedError(f"tf.pad: only mode='CONSTANT' is implemented, got "
                                  f"{errors.shown(mode)}")
    return ops.pad(tensor, paddings=paddings, value=constant_values, name=name)


def one_hot(indices, depth, dtype=float32, name=None):
    """tf.one_hot(indices, depth) (on_value 1, off_value 0)."""
    if not isinstance(indices, Node):  # graph mode even for a Python list
        indices = constant(indices, dtype=int64)
    return ops.one_hot(indices, depth=depth, dtype=dtype, name=name)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """tf.clip_by_value(t, min, max) with Python-number bounds."""
    return ops.clip(t, min=clip_value_min, max=clip_value_max, name=name)


def argmax(input, axis=None, name=None, output_type=int64):  # noqa: A002 - TF's name
    """tf.argmax(input, axis) (int64; axis None means 0, as in TF1)."""
    return ops.argmax(input, axis=0 if axis is None else axis, name=name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    """tf.random_normal / tf.random.normal: a new draw each Session.run."""
    return ops.random.random_normal(shape, mean=mean, std=stddev, seed=seed, dtype=dtype,
                                    name=name)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=float32, seed=None, name=None):
    """tf.random_uniform / tf.random.uniform: a new draw each Session.run."""
    return ops.random.random_uniform(shape, low=minval, high=maxval, seed=seed, dtype=dtype,
                                     name=name)


def _nn_dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    if noise_shape is not None:
        raise NotImplementedError("tf.nn.dropout: noise_shape is not implemented")
    if (rate is None) == (keep_prob is None):
        raise ValueError("tf.nn.dropout: pass exactly one of rate= or keep_prob=")
    return ops.dropout(x, p=rate if rate is not None else 1.0 - keep_prob, seed=seed)


random = types.SimpleNamespace(normal=random_normal, uniform=random_uniform,
                               set_random_seed=ops.random.seed)
set_random_seed = ops.random.seed
nn.dropout = _nn_dropout
__all__ += ["argmax", "clip_by_value", "concat", "gather", "one_hot", "pad", "random",
            "random_normal", "random_uniform", "set_random_seed", "split", "stack"]


# -- convolution and pooling in TensorFlow's layout (NHWC data, HWIO filters) ----------------
def _spatial(value, what: str, data_format: str) -> tuple[int, int]:
    """TF's strides/ksize/dilations: an int, [h, w], or a 4-list in the data layout."""
    v = [value] if isinstance(value, int) else list(value)
    if len(v) == 1:
        return v[0], v[0]
    if len(v) == 2:
        return v[0], v[1]
    if len(v) == 4:
        h, w = (1, 2) if data_format == "NHWC" else (2, 3)
        if v[0] != 1 or v[3 if data_format == "NHWC" else 1] != 1:
            raise ValueError(f"{what}: the batch and channel entries must be 1, got {value}")
        return v[h], v[w]
    raise ValueError(f"{what} must be an int or a list of 1, 2 or 4 ints, got "
                     f"{errors.shown(value)}")


def _same_pads(x, kernel, stride, dilation, what):
    """TF's 'SAME' padding ((top, bottom), (left, right)) for NCHW x: the output is
    ceil(size / stride), and an odd total puts the extra row/column at the bottom/right."""
    pads = []
    for a in range(2):
        size = x.shape[2 + a] if x.shape is not None else None
        if size is None:
            raise ValueError(f"{what}: padding='SAME' needs the spatial size, but the input "
                             f"shape is {x.shape}")
        span = (kernel[a] - 1) * dilation[a] + 1
        total = max((-(-size // stride[a]) - 1) * stride[a] + span - size, 0)
        pads.append((total // 2, total - total // 2))
    return pads


def _padded(x, padding, kernel, stride, dilation, what, fill=0.0):
    """(x, symmetric padding) for the NCHW ops: asymmetric 'SAME' padding goes into a pad."""
    if padding == "VALID":
        return x, 0
    if padding != "SAME":
        raise ValueError(f"{what}: padding must be 'SAME' or 'VALID', got {errors.shown(padding)}")
    (t, b), (l_, r) = _same_pads(x, kernel, stride, dilation, what)
    if t == b and l_ == r and t <= kernel[0] // 2 and l_ <= kernel[1] // 2:
        return x, (t, l_)
    return ops.pad(x, ((0, 0), (0, 0), (t, b), (l_, r)), value=fill), 0


def _nchw(x, data_format):
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {errors.shown(data_format)}")
    return x if data_format == "NCHW" else ops.transpose(x, perm=(0, 3, 1, 2))


def _back(y, data_format):
    return y if data_format == "NCHW" else ops.transpose(y, perm=(0, 2, 3, 1))


def conv2d(input, filters=None, strides=1, padding="VALID", data_format="NHWC",  # noqa: A002
           dilations=1, name=None, filter=None):  # noqa: A002 - TF1's argument names
    """tf.nn.conv2d: NHWC input, HWIO filters, padding 'SAME' or 'VALID' (TF's rules, the
    odd extra row at the bottom), computed by kernelgraph's NCHW conv2d."""
    w = filters if filters is not None else filter
    stride = _spatial(strides, "strides", data_format)
    dilation = _spatial(dilations, "dilations", data_format)
    x = _nchw(input, data_format)
    w = ops.transpose(w, perm=(3, 2, 0, 1))  # HWIO -> OIHW
    kernel = tuple(w.shape[2:]) if w.shape is not None else None
    if kernel is None or None in kernel:
        if padding == "SAME":
            raise ValueError("conv2d: padding='SAME' needs the filter's spatial size")
        kernel = (1, 1)  # not used by 'VALID'
    x, pad = _padded(x, padding, kernel, stride, dilation, "conv2d")
    return _back(ops.conv2d(x, w, stride=stride, padding=pad, dilation=dilation, name=name),
                 data_format)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """tf.nn.max_pool2d (also tf.nn.max_pool): padding never wins, as in TF."""
    kernel = _spatial(ksize, "ksize", data_format)
    stride = _spatial(strides, "strides", data_format)
    x, pad = _padded(_nchw(input, data_format), padding, kernel, stride, (1, 1),
                     "max_pool2d", fill=-np.inf)
    return _back(ops.max_pool2d(x, kernel_size=kernel, stride=stride, padding=pad, name=name),
                 data_format)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """tf.nn.avg_pool2d with padding='VALID' (TF's 'SAME' leaves padding out of each mean,
    which kernelgraph's avg_pool2d does not do)."""
    if padding != "VALID":
        raise NotImplementedError("tf.nn.avg_pool2d: only padding='VALID' is implemented")
    kernel = _spatial(ksize, "ksize", data_format)
    stride = _spatial(strides, "strides", data_format)
    return _back(ops.avg_pool2d(_nchw(input, data_format), kernel_size=kernel, stride=stride,
                                name=name), data_format)


nn.conv2d = conv2d
nn.max_pool2d = nn.max_pool = max_pool2d
nn.avg_pool2d = nn.avg_pool = avg_pool2d
device = kg_device  # tf.device('/gpu:0') places nodes, as kg.device('cuda') does
__all__ += ["device"]


# -- control flow and RNNs (kernelgraph.ops.control, kernelgraph.nn) ---------------------------
def _graph_values(values):
    """Graph mode: Python numbers and arrays become constants (TF1 converts them)."""
    from ..ops.control import flatten, pack_as

    return pack_as(values, [v if isinstance(v, Node) else constant(v)
                            for v in flatten(values)])


def _unpack_singleton(result):
    return result[0] if isinstance(result, list | tuple) and len(result) == 1 else result


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None):
    """tf.cond(pred, true_fn, false_fn): only the branch ``pred`` picks runs. As in TF1,
    a branch's one-element list is unpacked unless ``strict=True``."""
    from ..ops.control import cond as kg_cond

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
    from ..ops.control import while_loop as kg_while

    result = kg_while(cond, body, _graph_values(loop_vars), shape_invariants,
                      maximum_iterations=maximum_iterations, back_prop=back_prop, name=name)
    return result if return_same_structure else _unpack_singleton(result)


def _dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                 parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """tf.nn.dynamic_rnn(cell, inputs, sequence_length, initial_state, dtype): (outputs,
    final_state), outputs zero past each sequence's length."""
    from ..nn import dynamic_rnn

    return dynamic_rnn(cell, inputs, sequence_length=sequence_length,
                       initial_state=initial_state, dtype=dtype, time_major=time_major,
                       scope=scope)


class BasicRNNCell:
    """tf.nn.rnn_cell.BasicRNNCell(num_units): a tanh RNN cell whose input size is taken
    from its first input, as in TF; it is a :class:`kernelgraph.nn.RNNCell` inside
    (PyTorch's parameters: two weight matrices and two biases)."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None):
        if activation not in (None, ops.tanh):
            raise NotImplementedError("BasicRNNCell: only the default tanh activation is "
                                      "implemented")
        self.num_units, self.name, self.dtype = int(num_units), name, dtype
        self.cell = None  # made at the first call, when the input size is known

    state_size = output_size = property(lambda self: self.num_units)

    def __call__(self, inputs, state):
        """TF's cell call: ``(output, new_state)``, both the new state."""
        if self.cell is None:
            from ..nn import RNNCell

            size = inputs.shape[-1] if inputs.shape is not None else None
            if size is None:
                raise ValueError("BasicRNNCell: the last dim of the inputs must be known")
            self.cell = RNNCell(size, self.num_units, dtype=self.dtype or inputs.dtype,
                                name=self.name or "basic_rnn_cell")
        h = self.cell(inputs, state)
        return h, h

    def zero_state(self, batch_size, dtype):
        return zeros([batch_size, self.num_units], dtype=dtype)


LSTMStateTuple = collections.namedtuple("LSTMStateTuple", ["c", "h"])


class BasicLSTMCell:
    """tf.nn.rnn_cell.BasicLSTMCell(num_units, forget_bias=1.0): TF1's LSTM, not PyTorch's
    (that is :class:`kernelgraph.nn.LSTMCell`): one ``kernel`` (input + num_units,
    4 * num_units), Glorot-uniform, and one zero ``bias``; gates in TF's order i, j, f, o;
    ``forget_bias`` added to f; the state is ``LSTMStateTuple(c, h)``::

        i, j, f, o = split(concat([x, h], 1) @ kernel + bias, 4)
        c' = c * sigmoid(f + forget_bias) + sigmoid(i) * tanh(j)
        h' = tanh(c') * sigmoid(o)

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    ...     x = tf.placeholder(tf.float32, [None, 5, 3])
    ...     outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    ...     outputs.shape, type(state).__name__, [v.name for v in tf.trainable_variables()]
    ((None, None, 4), 'LSTMStateTuple', ['rnn/basic_lstm_cell/kernel', 'rnn/basic_lstm_cell/bias'])
    """

    def __init__(self, num_units: int, forget_bias: float = 1.0, state_is_tuple: bool = True,
                 activation=None, reuse=None, name: str | None = None, dtype=None):
        if not state_is_tuple:
            raise NotImplementedError("BasicLSTMCell: only state_is_tuple=True is implemented")
        if activation not in (None, ops.tanh):
            raise NotImplementedError("BasicLSTMCell: only the default tanh activation is "
                                      "implemented")
        self.num_units, self.forget_bias = int(num_units), float(forget_bias)
        self.name, self.dtype = name, dtype
        self.cell = None  # made at the first call, when the input size is known

    @property
    def state_size(self) -> LSTMStateTuple:
        return LSTMStateTuple(self.num_units, self.num_units)

    @property
    def output_size(self) -> int:
        return self.num_units

    def __call__(self, inputs, state) -> tuple:
        """TF's cell call: ``(h', LSTMStateTuple(c', h'))``."""
        if self.cell is None:
            size = inputs.shape[-1] if inputs.shape is not None else None
            if size is None:
                raise ValueError(f"{type(self).__name__}: the last dim of the inputs must be "
                                 "known")
            self.cell = _TFLSTM(int(size), self.num_units, self.forget_bias,
                                as_dtype(self.dtype or inputs.dtype),
                                self.name or "basic_lstm_cell")
        c, h = state
        new_c, new_h = self.cell(inputs, c, h)
        return new_h, LSTMStateTuple(new_c, new_h)

    def zero_state(self, batch_size, dtype) -> LSTMStateTuple:
        return LSTMStateTuple(zeros([batch_size, self.num_units], dtype=dtype),
                              zeros([batch_size, self.num_units], dtype=dtype))


class LSTMCell(BasicLSTMCell):
    """tf.nn.rnn_cell.LSTMCell(num_units): :class:`BasicLSTMCell`'s formula; peepholes,
    clipping and projections are not implemented."""

    def __init__(self, num_units: int, use_peepholes: bool = False, cell_clip=None,
                 initializer=None, num_proj=None, proj_clip=None, forget_bias: float = 1.0,
                 state_is_tuple: bool = True, activation=None, reuse=None,
                 name: str | None = None, dtype=None):
        if use_peepholes or cell_clip is not None or num_proj is not None or \
                proj_clip is not None or initializer is not None:
            raise NotImplementedError("LSTMCell: peepholes, clipping, projections and custom "
                                      "initializers are not implemented")
        super().__init__(num_units, forget_bias, state_is_tuple, activation, reuse,
                         name or "lstm_cell", dtype)


class _TFLSTM(_Module):
    """The parameters and step of :class:`BasicLSTMCell` (a kg.nn.Module, so its variables
    are made per graph like any layer's)."""

    def __init__(self, input_size: int, num_units: int, forget_bias: float, dtype, name: str):
        super().__init__(name)
        self.forget_bias = forget_bias
        kernel = self.register_parameter(
            "kernel", np.zeros((input_size + num_units, 4 * num_units), dtype))
        _init.xavier_uniform_(kernel)  # TF1's default initializer for variables
        self.register_parameter("bias", np.zeros(4 * num_units, dtype))

    def forward(self, x, c, h):
        gates = ops.matmul(ops.concat([x, h], axis=1), self.kernel) + self.bias
        i, j, f, o = ops.split(gates, 4, axis=1)
        new_c = c * ops.sigmoid(f + self.forget_bias) + ops.sigmoid(i) * ops.tanh(j)
        return new_c, ops.tanh(new_c) * ops.sigmoid(o)
nn.dynamic_rnn = _dynamic_rnn
nn.rnn_cell = types.SimpleNamespace(BasicRNNCell=BasicRNNCell, RNNCell=BasicRNNCell,
                                    BasicLSTMCell=BasicLSTMCell, LSTMCell=LSTMCell,
                                    LSTMStateTuple=LSTMStateTuple)
__all__ += ["cond", "while_loop"]


# -- tf.train: optimizers ----------------------------------------------------------------------
class Optimizer(_GraphUpdates):
    """TF1's ``tf.train.Optimizer``: ``minimize(loss)`` = ``apply_gradients(
    compute_gradients(loss))``, a train op updating the trainable variables of the loss's
    graph. The update rules are TF1's (see each subclass); the machinery (slot variables,
    one ``group`` of assigns) is :mod:`kernelgraph.optim`'s."""

    _slot_names: tuple = ()

    def __init__(self, use_locking: bool = False, name: str = "Optimizer"):  # locking: no-op
        self._name = name

    def _hyper(self) -> dict:
        return {}

    def compute_gradients(self, loss: Node, var_list: list | None = None) -> list:
        """``[(gradient, variable)]`` for ``var_list`` (default: the trainable variables of
        the loss's graph); the gradient is None where the loss does not depend on it."""
        if not isinstance(loss, Node) or type(loss).__name__ == "EagerNode":
            raise TypeError(f"{type(self).__name__}.compute_gradients needs a graph tensor "
                            f"loss, got {type(loss).__name__}")
        graph = loss.graph
        if var_list is None:
            var_list = [v for v in graph.variables if v.trainable]
        var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        with graph.as_default():
            grads = gradients(loss, var_list)
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step: Variable | None = None,
                        name: str | None = None) -> Node:
        """The train op applying ``[(gradient, variable)]``; increments ``global_step``."""
        pairs = list(grads_and_vars)
        if all(g is None for g, _ in pairs):
            raise ValueError(f"No gradients provided for any variable: "
                             f"{[v.name for _, v in pairs]}")
        return self._train_op(pairs, self._hyper(), global_step, name, scope=self._name)

    def minimize(self, loss: Node, global_step: Variable | None = None,
                 var_list: list | None = None, name: str | None = None) -> Node:
        """One train op: compute the gradients of ``loss`` and apply them.

        >>> import kernelgraph.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable(3.0)
        ...     step = tf.train.get_or_create_global_step()
        ...     train = tf.train.GradientDescentOptimizer(0.25).minimize(
        ...         tf.square(w), global_step=step)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         _ = sess.run(train)
        ...         float(sess.run(w)), int(sess.run(step))     # 3 - 0.25 * 6
        (1.5, 1)
        """
        return self.apply_gradients(self.compute_gradients(loss, var_list), global_step, name)

    def get_slot_names(self) -> list:
        """The names ``get_slot`` accepts (TF's: ``['m', 'v']`` for Adam)."""
        return list(self._slot_names)


class GradientDescentOptimizer(Optimizer):
    """``var -= learning_rate * grad``.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0)
    ...     train = tf.train.GradientDescentOptimizer(0.1).minimize(w * w)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer()); _ = sess.run(train)
    ...         round(float(sess.run(w)), 6)                # 1 - 0.1 * 2
    0.8
    """

    def __init__(self, learning_rate: float, use_locking: bool = False,
                 name: str = "GradientDescent"):
        super().__init__(use_locking, name)
        self._lr = learning_rate

    def _update(self, p, g, state, hyper):
        return self._lr * g, {}


class MomentumOptimizer(Optimizer):
    """``accum = momentum * accum + grad; var -= learning_rate * accum`` (with
    ``use_nesterov``: ``var -= learning_rate * (grad + momentum * accum)``).

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0)
    ...     opt = tf.train.MomentumOptimizer(0.1, momentum=0.5)
    ...     train = opt.minimize(w * w)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         _ = sess.run(train); _ = sess.run(train)     # accum 2, then 0.5*2 + 1.6
    ...         round(float(sess.run(w)), 6), opt.get_slot(w, "momentum").name
    (0.54, 'Momentum/Variable/momentum')
    """

    _slot_names = ("momentum",)

    def __init__(self, learning_rate: float, momentum: float, use_locking: bool = False,
                 name: str = "Momentum", use_nesterov: bool = False):
        super().__init__(use_locking, name)
        self._lr, self._momentum, self._nesterov = learning_rate, momentum, use_nesterov

    def _slot_specs(self, p) -> dict:
        return {"momentum": (tuple(p.shape), p.dtype, 0.0)}

    def _update(self, p, g, state, hyper):
        accum = self._momentum * state["momentum"] + g
        step = g + self._momentum * accum if self._nesterov else accum
        return self._lr * step, {"momentum": accum}


class AdamOptimizer(Optimizer):
    """TF1's Adam, with epsilon added to sqrt(v) *before* the bias correction folds into
    the learning rate (unlike PyTorch's, see :class:`kernelgraph.optim.Adam`)::

        t = t + 1
        lr_t = learning_rate * sqrt(1 - beta2**t) / (1 - beta1**t)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        var -= lr_t * m / (sqrt(v) + epsilon)

    TF keeps ``beta1_power``/``beta2_power`` variables; here each variable counts its steps.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0)
    ...     train = tf.train.AdamOptimizer(0.1).minimize(w * w)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer()); _ = sess.run(train)
    ...         round(float(sess.run(w)), 6)                # the first step is lr * sign(g)
    0.9
    """

    _slot_names = ("m", "v")

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-08, use_locking: bool = False, name: str = "Adam"):
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._eps = learning_rate, beta1, beta2, epsilon

    def _slot_specs(self, p) -> dict:
        shape = tuple(p.shape)
        return {"step": ((), float64, 0.0), "m": (shape, p.dtype, 0.0),
                "v": (shape, p.dtype, 0.0)}

    def _update(self, p, g, state, hyper):
        b1, b2 = self._beta1, self._beta2
        t = state["step"] + 1.0
        lr_t = ops.cast(self._lr * ops.sqrt(1.0 - ops.pow(b2, t)) / (1.0 - ops.pow(b1, t)),
                        dtype=p.dtype)
        m = b1 * state["m"] + (1 - b1) * g
        v = b2 * state["v"] + (1 - b2) * (g * g)
        return lr_t * (m / (ops.sqrt(v) + self._eps)), {"step": t, "m": m, "v": v}


def get_global_step(graph: Graph | None = None) -> Variable | None:
    """The graph's ``global_step`` variable, or None.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     print(tf.train.get_global_step())
    None
    """
    graph = graph or get_default_graph()
    found = [v for v in graph.variables if v.name == "global_step"]
    return found[0] if found else None


def create_global_step(graph: Graph | None = None) -> Variable:
    """A new int64 ``global_step`` variable (0, not trainable).

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     tf.train.create_global_step().name
    'global_step'
    """
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default():
        return Variable(np.array(0, np.int64), trainable=False, name="global_step")


def get_or_create_global_step(graph: Graph | None = None) -> Variable:
    """The graph's ``global_step`` variable, made if there is none.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     tf.train.get_or_create_global_step() is tf.train.get_or_create_global_step()
    True
    """
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)


train = types.SimpleNamespace(
    Optimizer=Optimizer, GradientDescentOptimizer=GradientDescentOptimizer,
    MomentumOptimizer=MomentumOptimizer, AdamOptimizer=AdamOptimizer,
    get_global_step=get_global_step, create_global_step=create_global_step,
    get_or_create_global_step=get_or_create_global_step,
)
__all__ += ["train"]
