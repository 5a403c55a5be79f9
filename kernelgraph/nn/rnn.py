"""Recurrent networks: ``kg.nn.RNNCell`` and ``kg.nn.dynamic_rnn``, in both modes.

One cell, one formula (PyTorch's ``nn.RNNCell``)::

    h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)

``dynamic_rnn`` runs it over a batch of sequences of different lengths with TF1's
semantics: outputs past a sequence's length are zero, and the final state of a sequence is
its state at its length. Eager mode loops in Python over however many steps this batch has
(a new graph per call: the dynamic story); static mode is one ``kg.while_loop`` node whose
number of iterations is read from the fed data, so one graph serves every length -- or, for
a plain tanh RNNCell on the host, one ``rnn_tanh_sequence`` node that loops over the steps
inside its kernel (kernelgraph/ops/rnn_sequence.py), with the same values.

>>> import kernelgraph as kg
>>> import numpy as np
>>> kg.random.seed(0)
>>> cell = kg.nn.RNNCell(2, 3)
>>> x = np.ones((2, 4, 2), np.float32)                      # batch 2, 4 steps, 2 features
>>> out, h = kg.nn.dynamic_rnn(cell, kg.tensor(x), sequence_length=[4, 2])
>>> out.shape, h.shape, bool((out[1, 2:] == 0).numpy().all())
(torch.Size([2, 4, 3]), torch.Size([2, 3]), True)
>>> g = kg.Graph()
>>> with g.as_default():
...     xs = kg.placeholder(kg.float32, shape=[None, None, 2])
...     lengths = kg.placeholder(kg.int64, shape=[None])
...     out_s, h_s = kg.nn.dynamic_rnn(cell, xs, sequence_length=lengths)
...     init = kg.global_variables_initializer()
>>> with kg.Session(g) as sess:
...     _ = sess.run(init)
...     static_h = sess.run(h_s, {xs: x, lengths: [4, 2]})
>>> np.allclose(static_h, h.detach().numpy())               # the two modes agree
True
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np

from .. import autobatching, devices, eager
from .. import dtypes as D
from .. import ops as O
from ..devices import device
from ..eager import Tensor, tensor
from ..errors import shown
from ..graph import Node, get_default_graph, shape_str, user_location
from ..ops.control import dim_size, flatten, pack_as
from ..ops.rnn_sequence import rnn_tanh_sequence
from ..static.control_flow import FuncGraph, build_while, root_graph
from ..static.variables import constant
from . import init
from .module import Module, _calls

_WEIGHTS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")  # a cell's parameters, in order
_weights_of = operator.itemgetter(*_WEIGHTS)  # (one C call: a cell reads them every step)


@functools.lru_cache(maxsize=64)
def _zero_bias(size: int, dtype) -> np.ndarray:
    """The zero biases of a cell without biases: one array per size and dtype (never
    written), so that every step passes the same one -- kg.autobatch then sees a shared
    input and a recurrence, not a new array a step."""
    return np.zeros(size, dtype)


class _Cell(Module):
    """What RNNCell and LSTMCell share: PyTorch's parameters -- ``weight_ih``
    (gates*hidden, input), ``weight_hh`` (gates*hidden, hidden), the two biases
    (gates*hidden), drawn in this order from U(-1/sqrt(hidden), 1/sqrt(hidden)) by
    PyTorch's generator (``kg.manual_seed``), as torch draws them -- the
    checks of sizes and dtype, ``output_size``, ``dtype`` and the repr."""

    GATES = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, dtype=None,
                 name: str | None = None):
        super().__init__(name)
        kind = type(self).__name__
        for what, n in (("input_size", input_size), ("hidden_size", hidden_size)):
            if isinstance(n, bool) or not isinstance(n, int | np.integer) or n <= 0:
                raise ValueError(f"{kind}: {what} must be a positive int, got {shown(n)}")
        self.input_size, self.hidden_size, self.bias = int(input_size), int(hidden_size), bias
        dtype = D.as_dtype(dtype) if dtype is not None else D.float32
        if dtype not in D.FLOATS:
            raise TypeError(f"{kind}: dtype must be float32 or float64, got {dtype.name}")
        k = 1.0 / math.sqrt(self.hidden_size)
        rows = self.GATES * self.hidden_size

        def draw(*shape):  # PyTorch's generator, in PyTorch's order: torch's numbers
            return init.uniform_(tensor(np.zeros(shape, dtype)), -k, k)

        self.register_parameter("weight_ih", draw(rows, self.input_size))
        self.register_parameter("weight_hh", draw(rows, self.hidden_size))
        self.register_parameter("bias_ih", draw(rows) if bias else None)
        self.register_parameter("bias_hh", draw(rows) if bias else None)

    def weights_now(self) -> tuple:
        """(w_ih, w_hh, b_ih, b_hh) as :meth:`current_parameters` gives them (eager tensors,
        or this cell's variables in the caller's graph), read straight from the parameters
        in an eager call: a quarter of a microsecond less a step, about 5 % of recording an
        autobatched RNN step."""
        stack = _calls.stack
        if not stack or stack[-1] is None:
            return _weights_of(self._parameters)
        return tuple(self.current_parameters(*_WEIGHTS))

    @property
    def output_size(self) -> int:
        return self.hidden_size

    @property
    def dtype(self):
        return self._parameters["weight_ih"].dtype

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False") \
            + ("" if getattr(self, "nonlinearity", "tanh") == "tanh" else
               f", nonlinearity={self.nonlinearity}")


class RNNCell(_Cell):
    """An Elman RNN cell: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (relu in place of
    tanh with ``nonlinearity="relu"``).

    Parameters as PyTorch's ``nn.RNNCell``: ``weight_ih`` (hidden, input), ``weight_hh``
    (hidden, hidden), ``bias_ih`` and ``bias_hh`` (hidden), each drawn from
    U(-1/sqrt(hidden), 1/sqrt(hidden)) by PyTorch's generator (``kg.manual_seed`` fixes them:
    torch's numbers).
    ``cell(x, h)`` takes x (batch, input) and h (batch, hidden) -- h defaults to zeros -- as
    eager tensors or as graph nodes; ``state_size`` and ``output_size`` are ``hidden_size``
    (TF's cell interface, for :func:`dynamic_rnn`).

    >>> import kernelgraph as kg
    >>> cell = kg.nn.RNNCell(3, 4)
    >>> [(name, tuple(p.shape)) for name, p in cell.named_parameters()]
    [('weight_ih', (4, 3)), ('weight_hh', (4, 4)), ('bias_ih', (4,)), ('bias_hh', (4,))]
    >>> cell(kg.ones(2, 3)).shape
    torch.Size([2, 4])
    """


    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", dtype=None, name: str | None = None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, dtype, name)
        self.nonlinearity = nonlinearity

    @property
    def state_size(self) -> int:
        return self.hidden_size

    def __call__(self, x, h=None):
        # An RNN calls this once a step, so its common cases skip Module.__call__'s generic
        # dispatch and forward's branches: inside kg.autobatch(), autobatching.record_cell
        # records the step (it checks x and h itself); an eager step (tensors in, no graph
        # call open) runs the op straight away. Anything else (a graph, a 1-D step, no
        # biases, a subclass's own forward) goes the general way, as does an error, for
        # forward to word it.
        if type(self) is RNNCell and self.bias and not _calls.stack and \
                self.nonlinearity == "tanh":
            weights = _weights_of(self._parameters)  # (what weights_now reads in this case)
            if eager._deferred is not None:
                out = autobatching.record_cell(self, x, h, weights)
                if out is not None:
                    return out
            if isinstance(h, Tensor) and isinstance(x, Tensor) and x.ndim == 2:
                try:
                    return O.rnn_tanh_cell(x, h, *weights)
                except (TypeError, ValueError, AttributeError):
                    pass
        return Module.__call__(self, x, h)

    def forward(self, x, h=None):
        """The next hidden state (also the cell's output)."""
        if h is None:
            _check_step(type(self).__name__, x, "input", self.input_size)
            h = zero_state(x, self.hidden_size, self.dtype)
        w_ih, w_hh, b_ih, b_hh = self.weights_now()
        if not self.bias:  # zero biases, where the step runs
            b_ih = b_hh = _zero_bias(self.hidden_size, self.dtype)
            if isinstance(x, Tensor) and x.is_cuda:
                b_ih = b_hh = tensor(b_ih, device=x.device)
        try:
            one = x.ndim == 1  # an unbatched step, as PyTorch allows: a batch of one
            x2, h2 = (O.reshape(x, shape=(1, -1)), O.reshape(h, shape=(1, -1))) if one else \
                (x, h)
            if self.nonlinearity == "relu":  # PyTorch's relu cell, from the public ops
                out = O.relu(O.matmul(x2, O.transpose(w_ih)) + b_ih +
                             O.matmul(h2, O.transpose(w_hh)) + b_hh)
            else:  # One op, not eight: see kernelgraph/ops/rnn.py.
                out = O.rnn_tanh_cell(x2, h2, w_ih, w_hh, b_ih, b_hh)
        except (TypeError, ValueError, AttributeError):  # (a ShapeError is a ValueError)
            # The op checks every shape, in its own terms. Only now, once per error rather
            # than twice per step, see whether the cell can say it in the user's.
            _check_step(type(self).__name__, x, "input", self.input_size)
            _check_step(type(self).__name__, h, "hidden state", self.hidden_size)
            raise
        return O.reshape(out, shape=(-1,)) if one else out


def _check_step(cell: str, x, what: str, size: int) -> None:
    """One step's input or state must be (batch, size) (or (size,)): say so otherwise."""
    if isinstance(x, Tensor):  # the per-step hot path of an eager (or autobatched) RNN
        shape = x.shape
        if len(shape) == 2 and shape[1] == size:
            return
    if not isinstance(x, Tensor | Node):
        raise TypeError(f"{cell}: the {what} must be a kg.Tensor or a graph node, got "
                        f"{type(x).__name__}")
    shape = None if x.shape is None else tuple(x.shape)  # a GPU array's shape: a tuple
    if shape is not None and (len(shape) not in (1, 2) or
                              (shape[-1] is not None and shape[-1] != size)):
        raise ValueError(f"{cell}: expected the {what} of shape (batch, {size}), got "
                         f"{shape_str(shape)}")


class LSTMCell(_Cell):
    """A long short-term memory cell with PyTorch's formula and parameter layout::

        i, f, g, o = split(x W_ih^T + b_ih + h W_hh^T + b_hh, 4)     # gates in this order
        c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h' = sigmoid(o) * tanh(c')

    ``weight_ih`` (4*hidden, input), ``weight_hh`` (4*hidden, hidden), ``bias_ih`` and
    ``bias_hh`` (4*hidden), each drawn from U(-1/sqrt(hidden), 1/sqrt(hidden)) by PyTorch's
    generator. ``cell(x, (h, c))`` returns ``(h', c')``; the state defaults to zeros.
    For :func:`dynamic_rnn` the state is the tuple ``(h, c)`` (``state_size`` is
    ``(hidden, hidden)``) and the output of a step is ``h``. A step is one op,
    ``kg.ops.lstm_cell``, and two views of its result (h' and c'), in every mode.

    >>> import kernelgraph as kg
    >>> cell = kg.nn.LSTMCell(3, 4)
    >>> [(name, tuple(p.shape)) for name, p in cell.named_parameters()]
    [('weight_ih', (16, 3)), ('weight_hh', (16, 4)), ('bias_ih', (16,)), ('bias_hh', (16,))]
    >>> h, c = cell(kg.ones(2, 3))
    >>> h.shape, c.shape
    (torch.Size([2, 4]), torch.Size([2, 4]))
    """

    GATES = 4

    @property
    def state_size(self) -> tuple[int, int]:
        return (self.hidden_size, self.hidden_size)

    def forward(self, x: Tensor | Node, state: tuple | None = None) -> tuple:
        """The next state ``(h, c)``; ``h`` is also the cell's output."""
        _check_step("LSTMCell", x, "input", self.input_size)
        if state is None:
            h = c = zero_state(x, self.hidden_size, self.dtype)
        elif isinstance(state, tuple | list) and len(state) == 2:
            h, c = state
        else:
            raise TypeError(f"LSTMCell: the state must be a tuple (h, c), got "
                            f"{type(state).__name__}")
        _check_step("LSTMCell", h, "hidden state h", self.hidden_size)
        _check_step("LSTMCell", c, "cell state c", self.hidden_size)
        w_ih, w_hh, b_ih, b_hh = self.weights_now()
        if not self.bias:  # zero biases, where the step runs
            b_ih = b_hh = _zero_bias(4 * self.hidden_size, self.dtype)
            if isinstance(x, Tensor) and x.is_cuda:
                b_ih = b_hh = tensor(b_ih, device=x.device)
        one = x.ndim == 1  # an unbatched step: a batch of one
        if one:
            x, h, c = (O.reshape(v, shape=(1, -1)) for v in (x, h, c))
        # One op and two views a step, not twenty ops: see kernelgraph/ops/rnn.py.
        out = O.lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh)  # [h' | c' | the gates]
        sizes = (self.hidden_size, self.hidden_size, 4 * self.hidden_size)
        h_next, c_next = (O.split_piece(out, sizes=sizes, index=k, axis=1) for k in (0, 1))
        if one:
            h_next, c_next = O.reshape(h_next, shape=(-1,)), O.reshape(c_next, shape=(-1,))
        return h_next, c_next


def zero_state(like, size: int, dtype):
    """Zeros of shape (batch, size), batch taken from ``like`` (batch, ...): known only at
    run time for a graph node, so made from it rather than from a shape."""
    if isinstance(like, Tensor):
        return tensor(np.zeros((*tuple(like.shape)[:-1], size), dtype), device=like.device)
    zeros = O.zeros_like(like[..., :1])  # (batch, 1), broadcast to (batch, size) below
    if zeros.dtype != dtype:
        zeros = O.cast(zeros, dtype=dtype)
    return zeros + np.zeros(size, dtype)


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                time_major: bool = False, scope: str | None = None) -> tuple:
    """Run ``cell`` over ``inputs`` step by step (TF1's ``tf.nn.dynamic_rnn``); returns
    ``(outputs, final_state)``.

    >>> import kernelgraph as kg
    >>> cell = kg.nn.RNNCell(1, 2)
    >>> out, h = kg.nn.dynamic_rnn(cell, kg.ones(3, 4, 1), sequence_length=[4, 1, 0])
    >>> out.shape, h.shape, out[2].abs().sum().item(), h[1].tolist() == out[1, 0].tolist()
    (torch.Size([3, 4, 2]), torch.Size([3, 2]), 0.0, True)

    ``inputs`` is (batch, time, input) (or (time, batch, input) with ``time_major=True``);
    ``sequence_length`` (batch,) ints: outputs at steps at or past a sequence's length are
    zero and its final state is the state at its length (all steps when None).
    ``initial_state`` (batch, state_size) -- for an :class:`LSTMCell` the tuple ``(h, c)``,
    each (batch, hidden) -- defaults to zeros of ``dtype`` (the inputs' dtype when None);
    the final state has the same structure. ``outputs`` is (batch, time, output_size)
    (time first if ``time_major``).

    Eager tensors: a Python loop, recorded for ``backward()``. Graph nodes: a
    ``kg.while_loop`` over however many steps the fed inputs have (one
    ``rnn_tanh_sequence`` node for a plain tanh RNNCell on the host); batch and time may be
    unknown (``placeholder([None, None, n])``), and ``kg.gradients`` reaches the inputs,
    ``initial_state`` and the cell's variables.
    """
    if not hasattr(cell, "state_size") or not callable(cell):
        raise TypeError(f"dynamic_rnn: cell must be a callable RNN cell with state_size (such "
                        f"as kg.nn.RNNCell), got {type(cell).__name__}")
    static = isinstance(inputs, Node) and not isinstance(inputs, Tensor)
    if not static and not isinstance(inputs, Tensor):
        inputs = tensor(np.asarray(inputs))
    if inputs.ndim is not None and inputs.ndim != 3:
        layout = "time, batch, input" if time_major else "batch, time, input"
        raise ValueError(f"dynamic_rnn: inputs must be 3-d ({layout}), got shape "
                         f"{shape_str(inputs.shape)}")
    if dtype is not None and D.as_dtype(dtype) != inputs.dtype:
        raise TypeError(f"dynamic_rnn: dtype {D.as_dtype(dtype).name} differs from the "
                        f"inputs' {inputs.dtype.name}")
    if static:
        current = get_default_graph()  # a loop body being traced, or the inputs' graph
        graph = current if isinstance(current, FuncGraph) else inputs.graph
        with graph.as_default(), graph.name_scope(scope or "rnn"):
            return _static_rnn(cell, inputs, sequence_length, initial_state, time_major)
    return _eager_rnn(cell, inputs, sequence_length, initial_state, time_major)


# sequence_length is checked as TF1 checks it (its words), and more strictly: a float or
# bool length is refused rather than truncated to an int, and a size that differs from the
# batch is refused when the graph is built wherever both are known (TF1 finds some of them
# only in the Select op it adds).
def _seq_size_error(batch, shape) -> ValueError:
    size = "batch_size" if batch is None else f"batch_size ({batch})"
    return ValueError(f"dynamic_rnn: Argument sequence_length must be a vector of length "
                      f"{size}, one int per sequence. Received sequence_length of shape: "
                      f"{shape_str(shape)}")


def _seq_dtype_error(dtype) -> TypeError:
    return TypeError(f"dynamic_rnn: Argument sequence_length must hold ints (int32 or int64), "
                     f"one length per sequence. Received sequence_length of dtype: "
                     f"{dtype.name}")


def _host_lengths(sequence_length, batch) -> np.ndarray:
    """``sequence_length`` given as data (a list, an array, an eager tensor), checked."""
    if isinstance(sequence_length, Tensor):
        lengths = devices.to_numpy(sequence_length._array)
    else:
        try:
            lengths = np.asarray(sequence_length)
        except (TypeError, ValueError):  # a ragged nesting
            raise ValueError(f"dynamic_rnn: Argument sequence_length must be a vector of "
                             f"ints, one per sequence. Received "
                             f"{shown(sequence_length)}") from None
    if lengths.ndim != 1 or (batch is not None and lengths.shape[0] != batch):
        raise _seq_size_error(batch, lengths.shape)
    if lengths.dtype.kind not in "iu":
        raise _seq_dtype_error(lengths.dtype)
    if (lengths < 0).any():
        raise ValueError(f"dynamic_rnn: sequence_length must not be negative, got "
                         f"{shown(lengths.tolist())}")
    return lengths


def _eager_lengths(sequence_length, batch):
    if sequence_length is None:
        return None
    return _host_lengths(sequence_length, batch)


def _eager_rnn(cell, inputs, sequence_length, initial_state, time_major):
    steps, batch = (inputs.shape[0], inputs.shape[1]) if time_major else \
        (inputs.shape[1], inputs.shape[0])
    lengths = _eager_lengths(sequence_length, batch)
    h = initial_state
    if h is None:
        h = pack_as(cell.state_size, [tensor(np.zeros((batch, size), inputs.dtype),
                                             device=inputs.device)
                                      for size in flatten(cell.state_size)])
    outputs = []
    for t in range(steps):
        x_t = inputs[t] if time_major else inputs[:, t]
        out, h_next = _call_cell(cell, x_t, h)
        if lengths is None:
            h = h_next
        else:
            # The same ops as the static loop, so both modes compute the same bits.
            alive = tensor((t < lengths)[:, None], device=inputs.device)
            out = O.where(alive, out, O.zeros_like(out))
            h = _keep(alive, h_next, h)
        outputs.append(out)
    if not outputs:
        shape = (0, batch, cell.output_size) if time_major else (batch, 0, cell.output_size)
        return tensor(np.zeros(shape, inputs.dtype)), h
    return O.stack(outputs, axis=0 if time_major else 1), h


def _static_rnn(cell, inputs, sequence_length, initial_state, time_major):
    location = user_location()
    x = inputs if time_major else O.transpose(inputs, perm=(1, 0, 2))  # (time, batch, input)
    with device("cpu"):  # a host op, like the loop that reads it
        steps = dim_size(x, axis=0)
    if initial_state is None:
        first = _first_step(x)
        initial_state = pack_as(cell.state_size, [zero_state(first, size, inputs.dtype)
                                                  for size in flatten(cell.state_size)])
    lengths = None
    if sequence_length is not None:
        lengths = _static_lengths(sequence_length, x)
    if _one_node(cell, x, initial_state):
        return _sequence_node(cell, x, initial_state, lengths, time_major)

    def keep_going(t, h):
        return t < steps

    def step(t, h):
        out, h_next = _call_cell(cell, O.gather(x, t, axis=0), h)
        if lengths is None:
            return (t + 1, h_next), [out]
        alive = O.less(t, lengths)[:, None]
        return (t + 1, _keep(alive, h_next, h)), [O.where(alive, out, O.zeros_like(out))]

    start = np.array(0, np.int64)
    # A node shaped like one step's output, for a loop of no steps: the state (or, for a
    # tuple state such as an LSTM's (h, c), its first part, h) when the sizes agree.
    state_like = flatten(initial_state)[0]
    size_like = flatten(cell.state_size)[0]
    like = [state_like] if getattr(cell, "output_size", None) == size_like else None
    (_, final), (outputs,) = build_while(keep_going, step, [start, initial_state], None, None,
                                         True, "while", location, stacked=1,
                                         stacked_like=like)
    if not time_major:
        outputs = O.transpose(outputs, perm=(1, 0, 2))
    return outputs, final


def _one_node(cell, x, initial_state) -> bool:
    """Whether the loop can be one ``rnn_tanh_sequence`` node: a plain tanh RNNCell, on the
    host, over inputs of its own dtype."""
    place = devices.current()
    return (type(cell) is RNNCell and cell.nonlinearity == "tanh" and x.dtype == cell.dtype
            and (place is None or place.type == "cpu") and isinstance(initial_state, Node)
            and not isinstance(initial_state, Tensor)
            and initial_state.dtype == cell.dtype and _fits(x, 3, cell.input_size)
            and _fits(initial_state, 2, cell.hidden_size))


def _fits(node, rank, size) -> bool:
    # (else the loop's cell call says what is wrong, in the cell's words)
    return node.shape is None or (len(node.shape) == rank and node.shape[-1] in (None, size))


def _sequence_node(cell, x, h0, lengths, time_major):
    """The whole loop as one node (see kernelgraph/ops/rnn_sequence.py): the same values."""
    _calls.stack.append(root_graph(x.graph))  # the cell's variables, as its call reads them
    try:
        w_ih, w_hh, b_ih, b_hh = cell.weights_now()
    finally:
        _calls.stack.pop()
    if not cell.bias:
        b_ih = b_hh = _zero_bias(cell.hidden_size, cell.dtype)
    if lengths is None:
        lengths = constant(np.zeros(0, np.int64), name="every_step")
    both = rnn_tanh_sequence(x, h0, w_ih, w_hh, b_ih, b_hh, lengths, name="rnn_sequence")
    outputs = both[:-1]
    return (outputs if time_major else O.transpose(outputs, perm=(1, 0, 2))), both[-1]


def _static_lengths(sequence_length, x):
    """``sequence_length`` as an int64 node of shape (batch,) for the (time, batch, input)
    node ``x``: checked now where the sizes are known, and when the graph runs where not."""
    batch = None if x.shape is None else x.shape[1]
    if not isinstance(sequence_length, Node):
        lengths = _host_lengths(sequence_length, batch)
        return constant(lengths.astype(np.int64), name="sequence_length")
    lengths = sequence_length
    if lengths.dtype not in D.INTS:
        raise _seq_dtype_error(lengths.dtype)
    if lengths.shape is not None and (len(lengths.shape) != 1 or None not in (
            batch, lengths.shape[0]) and lengths.shape[0] != batch):
        raise _seq_size_error(batch, lengths.shape)
    lengths = O.cast(lengths, dtype=D.int64)
    if batch is not None and lengths.shape is not None and lengths.shape[0] is not None:
        return lengths
    # A size known only when the graph runs: a concat along axis 1 with a (batch, 0) slice of
    # the inputs fails there unless the two sizes agree (they never broadcast), naming this
    # node; its column is the lengths.
    empty = O.cast(_first_step(x)[:, :0], dtype=D.int64)
    checked = O.concat([O.reshape(lengths, shape=(-1, 1)), empty], axis=1,
                       name="sequence_length_must_have_one_entry_per_sequence")
    return checked[:, 0]


def _call_cell(cell, x, h):
    """(output, new state): a PyTorch-style cell (a kg.nn.Module) returns the new state,
    whose first part (h of an LSTM's (h, c)) is its output; a TF-style cell returns both."""
    result = cell(x, h)
    if isinstance(cell, Module):
        return (result[0] if isinstance(result, tuple | list) else result), result
    if isinstance(result, tuple) and len(result) == 2:
        return result
    return result, result


def _keep(alive, new, old):
    """``new`` where ``alive`` (batch, 1) holds, else ``old``, for every part of a (possibly
    tuple) state."""
    return pack_as(new, [O.where(alive, n, o) for n, o in zip(flatten(new), flatten(old))])


def _first_step(x):
    """x[0] (batch, input) for a (time, batch, input) node whose time may be 0: the first
    row of a sum over at most one step, so a batch of empty sequences still has a batch."""
    return O.sum(x[0:1], axis=0)
