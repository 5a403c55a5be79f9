"""TF1's recurrent networks: ``tf.nn.dynamic_rnn`` and the cells of ``tf.nn.rnn_cell``
(``BasicRNNCell``, ``BasicLSTMCell``, ``LSTMCell``, ``LSTMStateTuple``) over
:mod:`kernelgraph.nn`, with TF's variables (``kernel`` and ``bias``) and formulas."""

from __future__ import annotations

import collections

import numpy as np

from ... import ops
from ...dtypes import as_dtype
from ...nn import Module as _Module
from ...nn import dynamic_rnn
from ...nn import init as _init
from .initializers import initial_value
from .spellings import zeros
from .variable_scope import get_variable_scope


def _dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                 parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """tf.nn.dynamic_rnn(cell, inputs, sequence_length, initial_state, dtype): (outputs,
    final_state), outputs zero past each sequence's length."""
    return dynamic_rnn(cell, inputs, sequence_length=sequence_length,
                       initial_state=initial_state, dtype=dtype, time_major=time_major,
                       scope=scope)


class BasicRNNCell:
    """tf.nn.rnn_cell.BasicRNNCell(num_units): TF1's tanh RNN cell, ``h' = tanh(concat([x,
    h], 1) @ kernel + bias)``, with TF's variables (``basic_rnn_cell/kernel`` of shape
    (input + num_units, num_units), Glorot-uniform unless the variable scope names an
    initializer, and a zero ``bias``); the input size is taken from its first input.

    >>> import kernelgraph.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.nn.rnn_cell.BasicRNNCell(4)
    ...     out, state = tf.nn.dynamic_rnn(cell, tf.placeholder(tf.float32, [None, 5, 3]),
    ...                                    dtype=tf.float32)
    ...     [v.name for v in tf.trainable_variables()]
    ['rnn/basic_rnn_cell/kernel:0', 'rnn/basic_rnn_cell/bias:0']
    """

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
            size = inputs.shape[-1] if inputs.shape is not None else None
            if size is None:
                raise ValueError("BasicRNNCell: the last dim of the inputs must be known")
            self.cell = _TFRNN(int(size), self.num_units, as_dtype(self.dtype or inputs.dtype),
                               self.name or "basic_rnn_cell")
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
    ...     print(outputs.shape.as_list(), type(state).__name__)
    ...     print([v.name for v in tf.trainable_variables()])
    [None, None, 4] LSTMStateTuple
    ['rnn/basic_lstm_cell/kernel:0', 'rnn/basic_lstm_cell/bias:0']
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


def _kernel(module, shape, dtype):
    """A cell's ``kernel`` parameter: the variable scope's initializer if it names one,
    else Glorot-uniform (TF1's default for variables)."""
    kernel = module.register_parameter("kernel", np.zeros(shape, dtype))
    init = get_variable_scope().initializer
    if init is None:
        _init.xavier_uniform_(kernel)
    else:
        kernel._array[...] = initial_value(init, shape, dtype)  # in its own storage
    return kernel


class _TFRNN(_Module):
    """The parameters and step of :class:`BasicRNNCell`."""

    def __init__(self, input_size: int, num_units: int, dtype, name: str):
        super().__init__(name)
        _kernel(self, (input_size + num_units, num_units), dtype)
        self.register_parameter("bias", np.zeros(num_units, dtype))

    def forward(self, x, h):
        return ops.tanh(ops.matmul(ops.concat([x, h], axis=1), self.kernel) + self.bias)


class _TFLSTM(_Module):
    """The parameters and step of :class:`BasicLSTMCell` (a kg.nn.Module, so its variables
    are made per graph like any layer's)."""

    def __init__(self, input_size: int, num_units: int, forget_bias: float, dtype, name: str):
        super().__init__(name)
        self.forget_bias = forget_bias
        _kernel(self, (input_size + num_units, 4 * num_units), dtype)
        self.register_parameter("bias", np.zeros(4 * num_units, dtype))

    def forward(self, x, c, h):
        gates = ops.matmul(ops.concat([x, h], axis=1), self.kernel) + self.bias
        i, j, f, o = ops.split(gates, 4, axis=1)
        new_c = c * ops.sigmoid(f + self.forget_bias) + ops.sigmoid(i) * ops.tanh(j)
        return new_c, ops.tanh(new_c) * ops.sigmoid(o)
