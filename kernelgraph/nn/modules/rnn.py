"""``torch.nn.modules.rnn``: the recurrent modules and cells."""

from ..recurrent import GRU, LSTM, RNN, GRUCell, RNNBase
from ..rnn import LSTMCell, RNNCell

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell"]
