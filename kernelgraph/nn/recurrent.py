"""PyTorch's multi-layer recurrent modules: ``kg.nn.RNN``, ``kg.nn.LSTM``, ``kg.nn.GRU`` (and
``kg.nn.GRUCell``), in both modes.

Parameters are PyTorch's, named and shaped as PyTorch names them (``weight_ih_l0``,
``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``, ``..._reverse`` for the second direction),
registered in PyTorch's order and drawn in that order from U(-1/sqrt(hidden),
1/sqrt(hidden)) by PyTorch's generator: after ``kg.manual_seed(0)`` an ``nn.LSTM(3, 4)``
holds the numbers ``torch.nn.LSTM(3, 4)`` holds after ``torch.manual_seed(0)``.

Each layer and direction is one :func:`~kernelgraph.nn.dynamic_rnn` over a cell that reads
the module's weights: a Python loop on eager tensors, one ``kg.while_loop`` node on graph
nodes (so one graph serves every sequence length). A :class:`PackedSequence` input runs as
its padded batch with the sequences' lengths: outputs past a length are zero and the final
state of a sequence is its state at its length, as PyTorch's packed kernels give.

>>> import kernelgraph as kg
>>> _ = kg.manual_seed(0)
>>> lstm = kg.nn.LSTM(3, 4, num_layers=2, batch_first=True)
>>> [name for name, _ in lstm.named_parameters()][:4]
['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']
>>> out, (h, c) = lstm(kg.ones(2, 5, 3))
>>> out.shape, h.shape, c.shape
(torch.Size([2, 5, 4]), torch.Size([2, 2, 4]), torch.Size([2, 2, 4]))
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops as O
from ..eager import Tensor, tensor
from ..errors import shown
from ..graph import Node, shape_str
from . import functional as F
from . import init
from .layers import as_input, empty, float_dtype, positive_int
from .module import Module
from .rnn import _zero_bias, dynamic_rnn, zero_state
from .utils.rnn import PackedSequence, host_ints, index_like, pack_rows, unpack_rows

__all__ = ["GRU", "GRUCell", "LSTM", "RNN"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _linear(x, w, b):
    return O.matmul(x, O.transpose(w)) + b


def rnn_relu_step(x, h, w_ih, w_hh, b_ih, b_hh):
    """PyTorch's ``RNN(nonlinearity='relu')`` step."""
    return O.relu(_linear(x, w_ih, b_ih) + _linear(h, w_hh, b_hh))


def gru_step(x, h, w_ih, w_hh, b_ih, b_hh, hidden: int):
    """PyTorch's GRU step (gates r, z, n in this order; r multiplies ``h W_hn^T + b_hn``)::

        r = sigmoid(x W_ir^T + b_ir + h W_hr^T + b_hr)
        z = sigmoid(x W_iz^T + b_iz + h W_hz^T + b_hz)
        n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))
        h' = (1 - z) * n + z * h
    """
    gi, gh = _linear(x, w_ih, b_ih), _linear(h, w_hh, b_hh)
    sizes = (hidden, hidden, hidden)
    i_r, i_z, i_n = (O.split_piece(gi, sizes=sizes, index=k, axis=1) for k in range(3))
    h_r, h_z, h_n = (O.split_piece(gh, sizes=sizes, index=k, axis=1) for k in range(3))
    r = O.sigmoid(i_r + h_r)
    z = O.sigmoid(i_z + h_z)
    n = O.tanh(i_n + r * h_n)
    return n + z * (h - n)  # (1 - z) * n + z * h, in the form PyTorch's kernel computes


class _StepCell:
    """One layer and direction of a module as a cell for :func:`dynamic_rnn`: a step reads
    the weights the module's forward gathered (eager tensors, or variables in its graph)."""

    def __init__(self, mode: str, hidden: int, weights: tuple):
        self.mode, self.hidden, self.weights = mode, hidden, weights
        self.state_size = (hidden, hidden) if mode == "LSTM" else hidden
        self.output_size = hidden

    def __call__(self, x, state):
        w = self.weights
        if self.mode == "LSTM":
            h, c = state
            out = O.lstm_cell(x, h, c, *w)  # [h' | c' | the gates]
            sizes = (self.hidden, self.hidden, 4 * self.hidden)
            h2, c2 = (O.split_piece(out, sizes=sizes, index=k, axis=1) for k in (0, 1))
            return h2, (h2, c2)
        if self.mode == "RNN_TANH":
            h2 = O.rnn_tanh_cell(x, state, *w)
        elif self.mode == "RNN_RELU":
            h2 = rnn_relu_step(x, state, *w)
        else:
            h2 = gru_step(x, state, *w, hidden=self.hidden)
        return h2, h2


class RNNBase(Module):
    """What RNN, LSTM and GRU share (``torch.nn.RNNBase``): the parameters, the checks, the
    layers-and-directions loop."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__()
        kind = type(self).__name__
        self.mode = mode
        self.input_size = positive_int(kind, "input_size", input_size)
        self.hidden_size = positive_int(kind, "hidden_size", hidden_size)
        self.num_layers = positive_int(kind, "num_layers", num_layers)
        self.bias, self.batch_first = bool(bias), bool(batch_first)
        self.bidirectional = bool(bidirectional)
        if isinstance(dropout, bool) or not isinstance(dropout, int | float) or \
                not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        self.dropout = float(dropout)
        if proj_size:
            raise NotImplementedError(f"{kind}: proj_size is not supported by kernelgraph")
        self.proj_size = 0
        dtype = float_dtype(kind, dtype)
        rows = _GATES[mode] * self.hidden_size
        directions = 2 if self.bidirectional else 1
        for layer in range(self.num_layers):
            size_in = self.input_size if layer == 0 else self.hidden_size * directions
            for d in range(directions):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                self.register_parameter("weight_ih" + sfx, empty(dtype, rows, size_in))
                self.register_parameter("weight_hh" + sfx, empty(dtype, rows, self.hidden_size))
                if self.bias:
                    self.register_parameter("bias_ih" + sfx, empty(dtype, rows))
                    self.register_parameter("bias_hh" + sfx, empty(dtype, rows))
        self.reset_parameters()
        if device is not None:
            self.to(device)

    def reset_parameters(self) -> None:
        """Every parameter from U(-1/sqrt(hidden), 1/sqrt(hidden)), in registration order
        (PyTorch's)."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def flatten_parameters(self) -> None:
        """Nothing to do (PyTorch packs the weights into one cuDNN buffer here; tutorials
        call it after ``model.cuda()`` or under ``DataParallel``)."""

    @property
    def all_weights(self) -> list:
        names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if self.bias else [])
        out = []
        for layer in range(self.num_layers):
            for d in range(2 if self.bidirectional else 1):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                out.append([getattr(self, n + sfx) for n in names])
        return out

    def _weights(self, layer: int, d: int, like):
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        if self.bias:
            return tuple(self.current_parameters(
                *(n + sfx for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))))
        w_ih, w_hh = self.current_parameters("weight_ih" + sfx, "weight_hh" + sfx)
        zero = _zero_bias(_GATES[self.mode] * self.hidden_size,
                          self._parameters["weight_ih_l0"].dtype)
        if isinstance(like, Tensor) and like.is_cuda:
            zero = tensor(zero, device=like.device)
        return w_ih, w_hh, zero, zero

    def forward(self, input, hx=None):  # noqa: A002 - PyTorch's argument name
        kind = type(self).__name__
        packed = isinstance(input, PackedSequence)
        lengths = None
        if packed:
            x, lengths, _ = unpack_rows(input)  # (time, batch, input), sorted by length
            if hx is not None:  # given in the caller's order: PyTorch sorts it likewise
                hx = self._permute_state(hx, input.sorted_indices)
        else:
            x = as_input(kind, input)
            if x.ndim is not None and x.ndim not in (2, 3):
                raise ValueError(f"{kind}: Expected input to be 2D or 3D, got {x.ndim}D "
                                 f"instead")
            if x.ndim == 3 and self.batch_first:
                x = O.transpose(x, perm=(1, 0, 2))
        if x.shape is not None and x.shape[-1] not in (None, self.input_size):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {x.shape[-1]}")
        unbatched = not packed and x.ndim == 2
        if unbatched:  # (time, input): a batch of one
            x = O.reshape(x, shape=(-1, 1, self.input_size))
        states = self._initial_states(hx, unbatched, kind)
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for d in range(directions):
                k = layer * directions + d
                init_state = None if states is None else states[k]
                cell = _StepCell(self.mode, self.hidden_size, self._weights(layer, d, x))
                xs = x if d == 0 else _reverse(x, lengths)
                out, final = dynamic_rnn(cell, xs, sequence_length=lengths,
                                         initial_state=init_state, time_major=True)
                outs.append(out if d == 0 else _reverse(out, lengths))
                finals.append(final)
            x = outs[0] if directions == 1 else O.concat(outs, axis=2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                if packed:  # PyTorch drops from the packed rows: its mask has their shape
                    rows = F.dropout(pack_rows(x, input.batch_sizes), self.dropout)
                    x = unpack_rows(PackedSequence(rows, input.batch_sizes))[0]
                else:
                    x = F.dropout(x, self.dropout, training=True)
        if self.mode == "LSTM":
            h_n = O.stack([f[0] for f in finals], axis=0)
            c_n = O.stack([f[1] for f in finals], axis=0)
        else:
            h_n, c_n = O.stack(finals, axis=0), None
        if packed:
            out = PackedSequence(pack_rows(x, input.batch_sizes), input.batch_sizes,
                                 input.sorted_indices, input.unsorted_indices)
            h_n = self._permute_state(h_n, input.unsorted_indices)
            if c_n is not None:
                c_n = self._permute_state(c_n, input.unsorted_indices)
        elif unbatched:
            out = O.reshape(x, shape=(-1, x.shape[-1]))
            h_n = O.reshape(h_n, shape=(h_n.shape[0], -1))
            c_n = None if c_n is None else O.reshape(c_n, shape=(c_n.shape[0], -1))
        else:
            out = O.transpose(x, perm=(1, 0, 2)) if self.batch_first else x
        return out, ((h_n, c_n) if self.mode == "LSTM" else h_n)

    def _permute_state(self, state, indices):
        if indices is None:
            return state
        if isinstance(state, tuple | list):
            return type(state)(self._permute_state(s, indices) for s in state)
        return O.gather(state, index_like(host_ints(indices), state), axis=1)

    def _initial_states(self, hx, unbatched: bool, kind: str):
        """``hx`` (layers * directions, batch, hidden) -- an LSTM's the tuple (h0, c0) --
        as one initial state per layer and direction, or None (zeros)."""
        if hx is None:
            return None
        layers = self.num_layers * (2 if self.bidirectional else 1)
        parts = hx
        if self.mode == "LSTM":
            if not isinstance(hx, tuple | list) or len(hx) != 2:
                raise RuntimeError(f"{kind}: hx must be a tuple (h_0, c_0), got "
                                   f"{type(hx).__name__}")
        else:
            parts = (hx,)
        for p in parts:
            if not isinstance(p, Tensor | Node):
                raise TypeError(f"{kind}: the initial state must be a kg.Tensor or a graph "
                                f"node, got {type(p).__name__}")
            want = 2 if unbatched else 3
            if p.shape is not None and (len(p.shape) != want or
                                        p.shape[0] not in (None, layers) or
                                        p.shape[-1] not in (None, self.hidden_size)):
                raise RuntimeError(f"Expected hidden size ({layers}, *, {self.hidden_size}), "
                                   f"got {shape_str(p.shape)}")
        if unbatched:
            parts = tuple(O.reshape(p, shape=(layers, 1, self.hidden_size)) for p in parts)
        per_part = [[p[k] for k in range(layers)] for p in parts]
        if self.mode == "LSTM":
            return list(zip(*per_part))
        return per_part[0]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity='relu'"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout:g}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


def _reverse(x, lengths):
    """x (time, batch, n) with each sequence's first ``length`` steps reversed (all steps
    when ``lengths`` is None): where the reverse direction of a bidirectional layer starts,
    and (applied again) how its outputs return to time order."""
    if lengths is None:
        return x[::-1]
    # (the packed input's sizes, which a graph's loop outputs may not state)
    steps, batch = int(lengths.max()), len(lengths)
    t = np.arange(steps)[:, None]
    src = np.where(t < lengths[None, :], lengths[None, :] - 1 - t, t)
    flat = (src * batch + np.arange(batch)[None, :]).reshape(-1).astype(np.int64)
    rows = O.gather(O.reshape(x, shape=(steps * batch, -1)), index_like(flat, x), axis=0)
    return O.reshape(rows, shape=(steps, batch, -1))


class RNN(RNNBase):
    """An Elman RNN (``torch.nn.RNN``): ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T +
    b_hh)`` with ``act`` tanh or relu (``nonlinearity``), ``num_layers`` stacked.

    ``forward(input, h_0=None)`` -> ``(output, h_n)``: input (time, batch, input_size)
    (``batch_first``: (batch, time, input_size); or unbatched (time, input_size); or a
    :class:`~kernelgraph.nn.utils.rnn.PackedSequence`), h_0 and h_n (num_layers *
    directions, batch, hidden_size), output (time, batch, directions * hidden_size).

    >>> import kernelgraph as kg
    >>> rnn = kg.nn.RNN(2, 3, nonlinearity="relu", bidirectional=True)
    >>> out, h = rnn(kg.ones(4, 1, 2))
    >>> out.shape, h.shape
    (torch.Size([4, 1, 6]), torch.Size([2, 1, 3]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


class LSTM(RNNBase):
    """A multi-layer LSTM (``torch.nn.LSTM``), gates i, f, g, o as :class:`LSTMCell`.

    ``forward(input, (h_0, c_0)=None)`` -> ``(output, (h_n, c_n))``, shapes as :class:`RNN`'s.

    >>> import kernelgraph as kg
    >>> lstm = kg.nn.LSTM(3, 4)
    >>> out, (h, c) = lstm(kg.ones(5, 2, 3))
    >>> bool((out[-1] == h[0]).all())
    True
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """A multi-layer GRU (``torch.nn.GRU``), gates r, z, n as :class:`GRUCell`.

    ``forward(input, h_0=None)`` -> ``(output, h_n)``, shapes as :class:`RNN`'s.

    >>> import kernelgraph as kg
    >>> gru = kg.nn.GRU(3, 4, batch_first=True)
    >>> [tuple(p.shape) for p in gru.parameters()]
    [(12, 3), (12, 4), (12,), (12,)]
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, device=device, dtype=dtype)


class GRUCell(Module):
    """A gated recurrent unit cell (``torch.nn.GRUCell``): ``h' = cell(x, h)`` with PyTorch's
    formula (see :func:`gru_step`), parameters ``weight_ih`` (3*hidden, input),
    ``weight_hh`` (3*hidden, hidden), ``bias_ih``, ``bias_hh`` (3*hidden), drawn in that
    order from U(-1/sqrt(hidden), 1/sqrt(hidden)) by PyTorch's generator.

    >>> import kernelgraph as kg
    >>> cell = kg.nn.GRUCell(3, 4)
    >>> cell(kg.ones(2, 3)).shape
    torch.Size([2, 4])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        self.input_size = positive_int("GRUCell", "input_size", input_size)
        self.hidden_size = positive_int("GRUCell", "hidden_size", hidden_size)
        self.bias = bool(bias)
        dtype = float_dtype("GRUCell", dtype)
        rows = 3 * self.hidden_size
        self.register_parameter("weight_ih", empty(dtype, rows, self.input_size))
        self.register_parameter("weight_hh", empty(dtype, rows, self.hidden_size))
        self.register_parameter("bias_ih", empty(dtype, rows) if bias else None)
        self.register_parameter("bias_hh", empty(dtype, rows) if bias else None)
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)
        if device is not None:
            self.to(device)

    @property
    def state_size(self) -> int:
        return self.hidden_size

    @property
    def output_size(self) -> int:
        return self.hidden_size

    def forward(self, input, hx=None):  # noqa: A002 - PyTorch's argument name
        x = as_input("GRUCell", input)
        if x.shape is not None and (len(x.shape) not in (1, 2) or
                                    x.shape[-1] not in (None, self.input_size)):
            raise ValueError(f"GRUCell: expected the input of shape (batch, "
                             f"{self.input_size}), got {shape_str(x.shape)}")
        one = x.ndim == 1
        if one:
            x = O.reshape(x, shape=(1, -1))
        if hx is None:
            hx = zero_state(x, self.hidden_size, self._parameters["weight_ih"].dtype)
        elif one:
            hx = O.reshape(hx, shape=(1, -1))
        if not isinstance(hx, Tensor | Node):
            raise TypeError(f"GRUCell: hx must be a kg.Tensor or a graph node, got "
                            f"{shown(hx)}")
        w_ih, w_hh, b_ih, b_hh = self.current_parameters("weight_ih", "weight_hh", "bias_ih",
                                                         "bias_hh")
        if not self.bias:
            b_ih = b_hh = _zero_bias(3 * self.hidden_size, self._parameters["weight_ih"].dtype)
        h = gru_step(x, hx, w_ih, w_hh, b_ih, b_hh, hidden=self.hidden_size)
        return O.reshape(h, shape=(-1,)) if one else h

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")
