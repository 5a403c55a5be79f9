"""The op set. Every op is defined once, on its card (see :mod:`.registry`), and works in
every mode and on every device. ``REFERENCE`` and ``cuda_kernels()`` read one fact of every
card (its NumPy reference, its CUDA forward) for the tests."""

from . import edit_distance as edit_distance  # its card registers
from . import elementwise, random
from . import matrix as matrix  # det, inverse, solve, Cholesky, eigh: their cards register
from . import sampling as sampling  # truncated_normal, multinomial: their cards register
from . import selection as selection  # top_k, unique
from .conv import (
    avg_pool2d,
    avg_pool2d_backward,
    conv2d,
    conv2d_backward_filter,
    conv2d_backward_input,
    global_avg_pool2d,
    max_pool2d,
    max_pool2d_backward,
    max_pool2d_select,
)
from .elementwise import *  # noqa: F403 - the public elementwise ops: its __all__
from .elementwise import relu_grad, sigmoid_grad, tanh_grad
from .indexing import (
    argmax,
    clip,
    embedding,
    gather,
    gather_grad,
    getitem,
    getitem_grad,
    normalize_index,
    one_hot,
    pad,
)
from .join import concat, concat_slice, split, split_grad, split_piece, stack
from .linalg import matmul
from .nn import (
    cross_entropy,
    log_softmax,
    mse_loss,
    softmax,
    softmax_cross_entropy,
    softmax_cross_entropy_grad,
)
from .random import dropout
from .reduce import broadcast_like, broadcast_reduced, max, mean, sum, sum_to_like
from .registry import CUDA_KERNELS, OPS, REFERENCE, TRAITS, FusedOp, Op, cuda_kernels, define
from .resize import resize, resize_backward
from .rnn import lstm_cell, rnn_tanh_cell
from .shape import broadcast_to, matrix_transpose, reshape, reshape_like, transpose
from .transfer import to_device

__all__ = [
    "CUDA_KERNELS", "OPS", "REFERENCE", "TRAITS", "FusedOp", "Op", "cuda_kernels", "define",
    "avg_pool2d", "avg_pool2d_backward", "conv2d", "conv2d_backward_filter",
    "conv2d_backward_input", "global_avg_pool2d", "max_pool2d", "max_pool2d_backward",
    "max_pool2d_select", "broadcast_like", "broadcast_reduced", "broadcast_to",
    "cross_entropy", "log_softmax", "matmul", "matrix_transpose", "max", "mean", "mse_loss",
    "relu_grad", "reshape", "reshape_like", "sigmoid_grad", "softmax", "softmax_cross_entropy",
    "softmax_cross_entropy_grad", "sum", "sum_to_like", "tanh_grad", "transpose", "argmax",
    "clip", "concat", "concat_slice", "dropout", "embedding", "gather", "gather_grad",
    "getitem", "getitem_grad", "lstm_cell", "normalize_index", "one_hot", "pad", "random",
    "rnn_tanh_cell", "split", "split_grad", "split_piece", "stack", "to_device",
] + elementwise.__all__
__all__ += ["resize", "resize_backward"]
