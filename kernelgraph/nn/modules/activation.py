"""``torch.nn.modules.activation``: the activation modules and ``MultiheadAttention``."""

from ..activations import (
    ELU,
    GELU,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    ReLU6,
    SiLU,
    Softmin,
    Softplus,
    Softsign,
)
from ..attention import MultiheadAttention
from ..extras import PReLU
from ..layers import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh

__all__ = ["ELU", "GELU", "Hardtanh", "LeakyReLU", "LogSigmoid", "LogSoftmax",
           "MultiheadAttention", "PReLU", "ReLU", "ReLU6", "SiLU", "Sigmoid", "Softmax",
           "Softmin", "Softplus", "Softsign", "Tanh"]
