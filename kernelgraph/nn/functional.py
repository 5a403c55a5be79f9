"""``kg.nn.functional`` (``import torch.nn.functional as F``): activations, losses, linear,
dropout, convolution and pooling as functions, in both modes (each is written with the
public ops, so a graph node gives a graph node).

>>> import kernelgraph as kg
>>> import kernelgraph.nn.functional as F
>>> x = kg.tensor([[1.0, -2.0, 0.5]])
>>> F.relu(x).tolist(), [round(v, 4) for v in F.softmax(x, dim=1).tolist()[0]]
([[1.0, 0.0, 0.5]], [0.6037, 0.0301, 0.3662])
>>> round(F.cross_entropy(x, kg.tensor([0])).item(), 4)
0.5046
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes as D
from .. import ops as O
from ..eager import Tensor, tensor
from ..graph import Node, shape_str
from ..ops import torch_random as R
from ..ops.conv import _pair
from ..static.variables import constant
from . import functional_conv as _conv
from .functional_conv import *  # noqa: F403 - conv1d, interpolate, dropout2d ... (its __all__)
from .functional_conv import pad_edges

__all__ = [
    "avg_pool2d", "binary_cross_entropy", "binary_cross_entropy_with_logits", "conv2d",
    "cross_entropy", "dropout", "elu", "embedding", "gelu", "hardtanh", "l1_loss", "leaky_relu",
    "linear", "log_softmax", "logsigmoid", "max_pool2d", "mse_loss", "nll_loss", "one_hot",
    "pad", "relu", "relu6", "sigmoid", "silu", "smooth_l1_loss", "softmax", "softmin",
    "softplus", "softsign", "tanh",
] + _conv.__all__

_REDUCTIONS = ("mean", "sum", "none")


def _t(x):
    """``x`` as a tensor or graph node (arrays, lists and numbers become eager tensors)."""
    return x if isinstance(x, Tensor | Node) else tensor(np.asarray(x))


def _host(t: Tensor) -> np.ndarray:
    """An eager tensor's values on the host, to look at (class ids, a range check): the
    tensor's own memory on the CPU, one explicit copy from a GPU (``numpy()`` refuses a GPU
    tensor, as PyTorch's does). PyTorch checks the same things on its device and syncs to
    raise; here they are checked before any kernel runs, with the CPU's messages."""
    return t.detach().cpu().numpy()


def _as(ref, y):
    """``y`` ready to meet ``ref`` in one op: where ``ref`` is a graph node, an eager tensor
    that needs no gradient (class targets, a class weight) becomes a constant of its graph,
    so one loss function serves both modes."""
    if y is None:
        return None
    y = _t(y)
    if isinstance(ref, Node) and not isinstance(ref, Tensor) and isinstance(y, Tensor) \
            and not y.requires_grad:
        with ref.graph.as_default():
            return constant(_host(y))
    return y


def _shape(x) -> tuple | None:
    return None if x.shape is None else tuple(x.shape)


def _reduce(loss, reduction: str, what: str):
    if reduction == "mean":
        return O.mean(loss)
    if reduction == "sum":
        return O.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction (in {what}); expected "
                     f"one of {', '.join(map(repr, _REDUCTIONS))}")


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    """PyTorch's deprecated ``size_average``/``reduce`` flags as a ``reduction``."""
    for flag in (size_average, reduce):
        if isinstance(flag, str):  # MSELoss('sum'): torch reads a flag and averages
            raise TypeError(f"the first positional arguments of PyTorch's losses are the "
                            f"deprecated flags size_average and reduce, got {flag!r}: pass "
                            f"reduction={flag!r} by keyword")
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else "mean" if size_average else "sum"


def _is_eager(*xs) -> bool:
    return all(not isinstance(x, Node) or isinstance(x, Tensor) for x in xs)


# -- activations ---------------------------------------------------------------------------------
def relu(input, inplace: bool = False):  # noqa: A002 - torch's names throughout
    """``max(x, 0)``.

    >>> import kernelgraph as kg
    >>> kg.nn.functional.relu(kg.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return O.relu(_t(input))


def sigmoid(input):  # noqa: A002
    """``1 / (1 + exp(-x))``."""
    return O.sigmoid(_t(input))


def tanh(input):  # noqa: A002
    """``tanh(x)``."""
    return O.tanh(_t(input))


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):  # noqa: A002
    """``x`` where positive, ``negative_slope * x`` elsewhere.

    >>> import kernelgraph as kg
    >>> kg.nn.functional.leaky_relu(kg.tensor([-1.0, 2.0]), 0.1).tolist()
    [-0.10000000149011612, 2.0]
    """
    x = _t(input)
    return O.where(x > 0, x, x * negative_slope)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False):
    """``x`` clipped to ``[min_val, max_val]`` (gradient 1 strictly inside, as PyTorch's).

    >>> import kernelgraph as kg
    >>> kg.nn.functional.hardtanh(kg.tensor([-2.0, 0.5, 1.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    x = _t(input)
    return O.where(x <= min_val, O.zeros_like(x) + min_val,
                   O.where(x >= max_val, O.zeros_like(x) + max_val, x))


def relu6(input, inplace: bool = False):  # noqa: A002
    """``min(max(x, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0)


def elu(input, alpha: float = 1.0, inplace: bool = False):  # noqa: A002
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""
    x = _t(input)
    return O.where(x > 0, x, alpha * O.expm1(x))


def gelu(input, approximate: str = "none"):  # noqa: A002
    """``x * Phi(x)`` (``approximate='tanh'``: PyTorch's tanh approximation).

    >>> import kernelgraph as kg
    >>> round(kg.nn.functional.gelu(kg.tensor([1.0])).item(), 4)
    0.8413
    """
    x = _t(input)
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + O.tanh(inner))
    if approximate != "none":
        raise ValueError(f"approximate argument must be either none or tanh, got "
                         f"{approximate!r}")
    return x * 0.5 * (1.0 + O.erf(x * (1.0 / math.sqrt(2.0))))


def silu(input, inplace: bool = False):  # noqa: A002
    """``x * sigmoid(x)`` (swish)."""
    x = _t(input)
    return x * O.sigmoid(x)


def softplus(input, beta: float = 1.0, threshold: float = 20.0):  # noqa: A002
    """``log(1 + exp(beta * x)) / beta``, the identity where ``beta * x > threshold``."""
    x = _t(input)
    if beta == 1.0:
        return O.where(x > threshold, x, O.softplus(x))
    bx = x * beta
    return O.where(bx > threshold, x, O.softplus(bx) / beta)


def softsign(input):  # noqa: A002
    """``x / (1 + |x|)``."""
    x = _t(input)
    return x / (1.0 + O.abs(x))


def logsigmoid(input):  # noqa: A002
    """``log(sigmoid(x)) = -softplus(-x)``."""
    return -O.softplus(-_t(input))


def _softmax_dim(x, dim, what: str) -> int:
    if dim is None:  # PyTorch's legacy choice, with its warning
        warnings.warn(f"Implicit dimension choice for {what} has been deprecated. Change the "
                      "call to include dim=X as an argument.", UserWarning, stacklevel=3)
        n = len(_shape(x) or ())
        return 0 if n in (0, 1, 3) else 1
    return int(dim)


def softmax(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):  # noqa: A002
    """``exp(x) / sum(exp(x))`` along ``dim``."""
    x = _t(input)
    if dtype is not None:
        x = O.cast(x, dtype=D.as_dtype(dtype))
    return O.softmax(x, axis=_softmax_dim(x, dim, "softmax"))


def softmin(input, dim: int | None = None, _stacklevel: int = 3, dtype=None):  # noqa: A002
    """``softmax(-x)`` along ``dim``."""
    return softmax(-_t(input), dim, _stacklevel, dtype)


def log_softmax(input, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
                dtype=None):
    """``log(softmax(x))`` along ``dim``, computed stably."""
    x = _t(input)
    if dtype is not None:
        x = O.cast(x, dtype=D.as_dtype(dtype))
    return O.log_softmax(x, axis=_softmax_dim(x, dim, "log_softmax"))


# -- linear, dropout, embedding ------------------------------------------------------------------
def linear(input, weight, bias=None):  # noqa: A002
    """``x @ weight.T + bias`` (``weight``: (out, in)).

    >>> import kernelgraph as kg
    >>> kg.nn.functional.linear(kg.ones(2, 3), kg.ones(4, 3), kg.zeros(4)).shape
    torch.Size([2, 4])
    """
    x, w = _t(input), _t(weight)
    shape = _shape(x)
    if shape is not None and len(shape) == 1:
        y = O.reshape(O.matmul(O.reshape(x, shape=(1, -1)), O.transpose(w)), shape=(-1,))
    else:
        y = O.matmul(x, O.transpose(w))
    return y if bias is None else y + _t(bias)


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):  # noqa: A002
    """Zero elements with probability ``p`` and scale the rest by ``1 / (1 - p)`` when
    ``training`` (note: ``F.dropout``'s default is ``training=True``, also in ``eval()``).

    On eager tensors the mask is PyTorch's: ``bernoulli_(1 - p)`` drawn from its generator,
    so a seeded program drops the units torch drops. On graph nodes it is the ``dropout``
    op, drawing at each run from ``kg.random``.

    >>> import kernelgraph as kg
    >>> _ = kg.manual_seed(0)
    >>> kg.nn.functional.dropout(kg.ones(6)).tolist()
    [0.0, 0.0, 2.0, 0.0, 0.0, 0.0]
    """
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    x = _t(input)
    if not isinstance(x, Tensor):
        return O.dropout(x, p=float(p), training=bool(training))
    return torch_dropout(x, float(p), bool(training))


def torch_dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """PyTorch's CPU dropout of an eager tensor: ``x * (bernoulli(1 - p) / (1 - p))``, the
    mask drawn from PyTorch's generator (none drawn when nothing is dropped)."""
    if p == 0 or not training or x.numel() == 0:
        return x
    if p == 1:
        return x * O.zeros_like(x)
    if type(x._array) is np.ndarray:  # a transposed view's mask in its memory order
        return x * (tensor(R.bernoulli_like(x._array, 1.0 - p)) / (1.0 - p))
    noise = tensor(R.bernoulli_array(x.shape, 1.0 - p, dtype=x.dtype), device=x.device)
    return x * (noise / (1.0 - p))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,  # noqa: A002
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` at the integer ids ``input``."""
    if max_norm is not None:
        raise NotImplementedError("F.embedding: max_norm is not supported by kernelgraph")
    return O.embedding(_t(weight), _t(input))


def one_hot(tensor_, num_classes: int = -1):
    """int64 one-hot rows of the class ids ``tensor_`` (``num_classes=-1``: the largest id
    plus one, eager tensors only).

    >>> import kernelgraph as kg
    >>> kg.nn.functional.one_hot(kg.tensor([0, 2])).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    ids = _t(tensor_)
    if ids.dtype not in D.INTS:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if not isinstance(ids, Tensor):
            raise ValueError("one_hot of a graph node needs num_classes (its ids are not known "
                             "while the graph is built)")
        num_classes = int(_host(ids).max()) + 1 if ids.numel() else 0
    return O.one_hot(ids, depth=int(num_classes), dtype=D.int64)


def pad(input, pad, mode: str = "constant", value: float | None = None):  # noqa: A002
    """Pad the last dims: ``pad = (left, right, top, bottom, ...)``, last dim first; mode
    'constant' (``value``), or 'reflect' / 'replicate' of the last one or two dims.

    >>> import kernelgraph as kg
    >>> kg.nn.functional.pad(kg.ones(1, 2), (1, 0), value=0.0).tolist()
    [[0.0, 1.0, 1.0]]
    """
    if mode in ("reflect", "replicate"):
        return pad_edges(_t(input), pad, mode)
    if mode != "constant":
        raise NotImplementedError(f"F.pad: mode {mode!r} is not supported by kernelgraph "
                                  "(only 'constant', 'reflect', 'replicate')")
    x = _t(input)
    shape = _shape(x)
    if len(pad) % 2 or shape is None or len(pad) // 2 > len(shape):
        raise ValueError(f"Padding length must be divisible by 2 and at most twice the rank; "
                         f"got {len(pad)} for shape {shape_str(shape)}")
    paddings = [[0, 0] for _ in shape]
    for k in range(len(pad) // 2):
        paddings[len(shape) - 1 - k] = [int(pad[2 * k]), int(pad[2 * k + 1])]
    return O.pad(x, paddings=paddings, value=0.0 if value is None else value)


# -- convolution and pooling ---------------------------------------------------------------------
def _batched(x, what: str):
    """(x as 4-D, whether a batch dim was added): PyTorch also takes one (C, H, W) image."""
    shape = _shape(x)
    if shape is not None and len(shape) == 3:
        return O.reshape(x, shape=(1, *shape)), True
    if shape is not None and len(shape) != 4:
        raise ValueError(f"{what}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got "
                         f"{shape_str(shape)}")
    return x, False


def _unbatched(y, added: bool):
    return O.reshape(y, shape=tuple(_shape(y)[1:])) if added else y


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1,  # noqa: A002
           groups: int = 1):
    """2-D cross-correlation of (N, C, H, W) with ``weight`` (out, C, kh, kw), plus bias."""
    if groups != 1:
        raise NotImplementedError("F.conv2d: groups != 1 is not supported by kernelgraph")
    x, added = _batched(_t(input), "conv2d")
    w = _t(weight)
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            kh, kw = _shape(w)[2:]
            dh, dw = _pair(dilation, "dilation", 1, "conv2d")
            total = (dh * (kh - 1), dw * (kw - 1))
            if any(t % 2 for t in total) or _pair(stride, "stride", 1, "conv2d") != (1, 1):
                raise NotImplementedError("F.conv2d: padding='same' with an even kernel or a "
                                          "stride is not supported by kernelgraph")
            padding = (total[0] // 2, total[1] // 2)
        else:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             "{'valid', 'same'}")
    y = O.conv2d(x, w, stride=stride, padding=padding, dilation=dilation)
    if bias is not None:
        y = y + O.reshape(_t(bias), shape=(-1, 1, 1))
    return _unbatched(y, added)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False):
    """Maximum over windows; ``stride`` defaults to ``kernel_size``."""
    if dilation not in (1, (1, 1)) or ceil_mode or return_indices:
        raise NotImplementedError("F.max_pool2d: dilation, ceil_mode and return_indices are "
                                  "not supported by kernelgraph")
    x, added = _batched(_t(input), "max_pool2d")
    y = O.max_pool2d(x, kernel_size=kernel_size,
                     stride=kernel_size if stride is None or stride == [] else stride,
                     padding=padding)
    return _unbatched(y, added)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True, divisor_override=None):
    """Mean over windows (padding counted); ``stride`` defaults to ``kernel_size``."""
    if ceil_mode or not count_include_pad or divisor_override is not None:
        raise NotImplementedError("F.avg_pool2d: ceil_mode, count_include_pad=False and "
                                  "divisor_override are not supported by kernelgraph")
    x, added = _batched(_t(input), "avg_pool2d")
    y = O.avg_pool2d(x, kernel_size=kernel_size,
                     stride=kernel_size if stride is None or stride == [] else stride,
                     padding=padding)
    return _unbatched(y, added)


# -- losses --------------------------------------------------------------------------------------
def _same_shape(what: str, x, t):
    a, b = _shape(x), _shape(t)
    if a is not None and b is not None and a != b:
        # x.shape, not the tuple: an eager tensor's prints as PyTorch's torch.Size([2])
        warnings.warn(f"Using a target size ({t.shape}) that is different to the input size "
                      f"({x.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please "
                      "ensure they have the same size.", UserWarning, stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None,  # noqa: A002
             reduction: str = "mean", weight=None):
    """``(x - t) ** 2``, reduced (PyTorch broadcasts shapes that differ, with a warning).

    >>> import kernelgraph as kg
    >>> kg.nn.functional.mse_loss(kg.tensor([1.0, 2.0]), kg.zeros(2), reduction="sum").item()
    5.0
    """
    x = _t(input)
    t = _as(x, target)
    _same_shape("mse_loss", x, t)
    return _reduce(O.square(x - t), _legacy_reduction(size_average, reduce, reduction),
                   "mse_loss")


def l1_loss(input, target, size_average=None, reduce=None,  # noqa: A002
            reduction: str = "mean"):
    """``|x - t|``, reduced."""
    x = _t(input)
    t = _as(x, target)
    _same_shape("l1_loss", x, t)
    return _reduce(O.abs(x - t), _legacy_reduction(size_average, reduce, reduction), "l1_loss")


def smooth_l1_loss(input, target, size_average=None, reduce=None,  # noqa: A002
                   reduction: str = "mean", beta: float = 1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (d = x - t)."""
    x = _t(input)
    t = _as(x, target)
    _same_shape("smooth_l1_loss", x, t)
    d = O.abs(x - t)
    loss = d if beta == 0 else O.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction), "smooth_l1_loss")


def binary_cross_entropy(input, target, weight=None, size_average=None,  # noqa: A002
                         reduce=None, reduction: str = "mean"):
    """``-(t log x + (1 - t) log(1 - x))`` with the logs clamped at -100, as PyTorch.

    >>> import kernelgraph as kg
    >>> round(kg.nn.functional.binary_cross_entropy(kg.tensor([0.8]), kg.tensor([1.0])).item(),
    ...       4)
    0.2231
    """
    x = _t(input)
    t = _as(x, target)
    if _shape(x) is not None and _shape(t) is not None and _shape(x) != _shape(t):
        raise ValueError(f"Using a target size ({t.shape}) that is different to the input "
                         f"size ({x.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    if _is_eager(x) and isinstance(x, Tensor) and x.numel():
        values = _host(x)
        if ((values < 0) | (values > 1)).any():
            raise RuntimeError("all elements of input should be between 0 and 1")
    loss = -(t * O.maximum(O.log(x), -100.0) + (1.0 - t) * O.maximum(O.log(1.0 - x), -100.0))
    if weight is not None:
        loss = loss * _as(x, weight)
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction),
                   "binary_cross_entropy")


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,  # noqa: A002
                                     reduce=None, reduction: str = "mean", pos_weight=None):
    """``binary_cross_entropy(sigmoid(x), t)`` computed stably from the logits ``x``."""
    x = _t(input)
    t = _as(x, target)
    if _shape(x) is not None and _shape(t) is not None and _shape(x) != _shape(t):
        raise ValueError(f"Target size ({_shape(t)}) must be the same as input size "
                         f"({_shape(x)})")
    max_val = O.relu(-x)
    softplus_neg = O.log(O.exp(-max_val) + O.exp(-x - max_val)) + max_val  # log(1 + e^-x)
    if pos_weight is not None:
        log_weight = (_as(x, pos_weight) - 1.0) * t + 1.0
        loss = (1.0 - t) * x + log_weight * softplus_neg
    else:
        loss = (1.0 - t) * x + softplus_neg
    if weight is not None:
        loss = loss * _as(x, weight)
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction),
                   "binary_cross_entropy_with_logits")


def _class_inputs(what: str, x, t):
    """(x as (N, C), t as (N,), whether one unbatched sample was given)."""
    xs, ts = _shape(x), _shape(t)
    if xs is not None and len(xs) == 1 and (ts is None or len(ts) == 0):
        return O.reshape(x, shape=(1, -1)), O.reshape(t, shape=(1,)), True
    if xs is not None and len(xs) != 2:
        raise NotImplementedError(f"{what}: kernelgraph takes inputs of shape (N, C) or (C,), "
                                  f"got {shape_str(xs)} (no extra spatial dims)")
    if ts is not None and len(ts) != 1:
        raise ValueError(f"{what}: expected class targets of shape (N,), got {shape_str(ts)}")
    if xs is not None and ts is not None and None not in (xs[0], ts[0]) and xs[0] != ts[0]:
        raise ValueError(f"Expected input batch_size ({xs[0]}) to match target batch_size "
                         f"({ts[0]}).")
    return x, t, False


def _nll(what: str, logp, t, weight, ignore_index: int, reduction: str, label_smoothing=0.0):
    """NLL of log-probabilities (N, C) at class ids (N,), PyTorch's weights and mean."""
    n_classes = _shape(logp)[1]
    if n_classes is None:
        raise ValueError(f"{what}: the number of classes (input dim 1) must be known")
    if isinstance(t, Tensor) and t.numel():
        ids = _host(t)
        bad = ids[((ids < 0) | (ids >= n_classes)) & (ids != ignore_index)]
        if bad.size:
            raise IndexError(f"Target {int(bad[0])} is out of bounds.")
    keep = O.cast(O.not_equal(t, ignore_index), dtype=logp.dtype)  # (graph nodes' == is
    safe = O.where(O.equal(t, ignore_index), O.zeros_like(t), t)      # identity, as TF1's)
    hot = O.one_hot(safe, depth=int(n_classes), dtype=logp.dtype)
    weight = _as(logp, weight)
    w = keep if weight is None else keep * O.sum(hot * weight, axis=1)
    picked = -O.sum(hot * logp, axis=1)
    loss = w * picked
    if label_smoothing:
        smooth = -O.sum(logp if weight is None else logp * weight, axis=1) * keep
        loss = (1.0 - label_smoothing) * loss + (label_smoothing / n_classes) * smooth
    if reduction == "mean":
        return O.sum(loss) / O.sum(w)
    return _reduce(loss, reduction, what)


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100,  # noqa: A002
             reduce=None, reduction: str = "mean"):
    """Negative log-likelihood of log-probabilities (N, C) at class ids (N,).

    >>> import kernelgraph as kg
    >>> logp = kg.tensor([[-0.5, -1.0], [-2.0, -0.1]])
    >>> round(kg.nn.functional.nll_loss(logp, kg.tensor([0, 1])).item(), 4)
    0.3
    """
    x = _t(input)
    x, t, single = _class_inputs("nll_loss", x, _as(x, target))
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if t.dtype not in D.INTS:
        raise RuntimeError(f"expected scalar type Long but found {D.as_dtype(t.dtype).name}")
    loss = _nll("nll_loss", x, t, weight, ignore_index, reduction)
    return O.reshape(loss, shape=()) if single and reduction == "none" else loss


def cross_entropy(input, target, weight=None, size_average=None,  # noqa: A002
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0):
    """Softmax cross-entropy of logits (N, C) against class ids (N,) or class
    probabilities (N, C), with PyTorch's ``weight``, ``ignore_index``, ``reduction`` and
    ``label_smoothing``.

    >>> import kernelgraph as kg
    >>> round(kg.nn.functional.cross_entropy(kg.zeros(2, 4), kg.tensor([0, 3])).item(), 4)
    1.3863
    """
    x = _t(input)
    t = _as(x, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if t.dtype in D.FLOATS:  # class probabilities, the same shape as the logits
        if _shape(x) != _shape(t):
            raise ValueError(f"cross_entropy: probability targets {shape_str(_shape(t))} must "
                             f"have the logits' shape {shape_str(_shape(x))}")
        dim = 1 if len(_shape(x) or ()) > 1 else 0
        logp = O.log_softmax(x, axis=dim)
        n_classes = _shape(x)[dim]
        if label_smoothing:
            t = t * (1.0 - label_smoothing) + label_smoothing / n_classes
        terms = logp * t if weight is None else logp * t * _as(x, weight)
        loss = -O.sum(terms, axis=dim)
        if reduction == "mean" and dim == 1:
            return O.sum(loss) / _shape(x)[0]
        return _reduce(loss, reduction, "cross_entropy")
    if t.dtype not in D.INTS:
        raise RuntimeError(f"expected scalar type Long but found {D.as_dtype(t.dtype).name}")
    x, t, single = _class_inputs("cross_entropy", x, t)
    # the fused op where no target is ignored (eager: looked at; static: none can be a class)
    ignored = bool((_host(t) == ignore_index).any()) if isinstance(t, Tensor) and t.numel() \
        else not isinstance(t, Tensor) and ignore_index >= 0
    if weight is None and not label_smoothing and not ignored:
        loss = _reduce(O.softmax_cross_entropy(x, t), reduction, "cross_entropy")
    else:
        loss = _nll("cross_entropy", O.log_softmax(x, axis=1), t, weight, ignore_index,
                    reduction, label_smoothing)
    return O.reshape(loss, shape=()) if single and reduction == "none" else loss


__all__ += ["glu", "normalize", "prelu", "scaled_dot_product_attention"]
from .attention import scaled_dot_product_attention  # noqa: E402 - its module builds on this
from .extras import glu, normalize, prelu  # noqa: E402 - (so do these), exported as F.<name>
