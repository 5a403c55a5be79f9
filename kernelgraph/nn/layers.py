"""Basic layers in both modes: ``Linear``, ``Flatten``, ``Dropout``, ``Embedding``,
``Sequential`` and the activation modules.

Each ``forward`` is written once with the public ops, so it computes on eager tensors and
adds nodes on graph nodes; parameters are the module's leaf tensors (eager) or its
``kg.Variable`` s in the caller's graph (static), as :class:`~kernelgraph.nn.Module` arranges.

>>> import kernelgraph as kg
>>> kg.random.seed(0)
>>> model = kg.nn.Sequential(kg.nn.Linear(3, 4), kg.nn.ReLU(), kg.nn.Linear(4, 2))
>>> model(kg.ones(5, 3)).shape
torch.Size([5, 2])
>>> model
Sequential(
  (0): Linear(in_features=3, out_features=4, bias=True)
  (1): ReLU()
  (2): Linear(in_features=4, out_features=2, bias=True)
)
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes as D
from .. import ops as O
from ..eager import Tensor, tensor
from ..errors import shown
from ..graph import Node, shape_str
from ..ops import random as R
from . import functional as F
from . import init
from .containers import Sequential
from .module import Module

__all__ = ["Dropout", "Embedding", "Flatten", "Identity", "Linear", "LogSoftmax", "ReLU",
           "Sequential", "Sigmoid", "Softmax", "Tanh"]


# -- argument and input checks shared by the layers ---------------------------------------------
def positive_int(layer: str, what: str, n) -> int:
    """``n`` as an int, or a ValueError naming the layer and the argument."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n <= 0:
        raise ValueError(f"{layer}: {what} must be a positive int, got {shown(n)}")
    return int(n)


def float_dtype(layer: str, dtype):
    dtype = D.as_dtype(dtype) if dtype is not None else D.float32
    if dtype not in D.FLOATS:
        raise TypeError(f"{layer}: dtype must be float32 or float64, got {dtype.name}")
    return dtype


def as_input(layer: str, x):
    """``x`` as a tensor or a graph node (arrays and lists become eager tensors)."""
    if isinstance(x, Tensor | Node):
        return x
    try:
        return tensor(np.asarray(x))
    except (TypeError, ValueError):
        raise TypeError(f"{layer}: expected a kg.Tensor or a graph node, got "
                        f"{type(x).__name__}") from None


def shape_of(x) -> tuple | None:
    """``x.shape`` as a plain tuple (None: unknown rank). A GPU tensor's shape may come
    from its device array (a tuple-like that not every CUDA backend indexes from the end)."""
    return None if x.shape is None else tuple(x.shape)


def empty(dtype, *shape) -> Tensor:
    """A parameter's storage before an initialiser fills it."""
    return tensor(np.zeros(shape, dtype))


# -- Linear ---------------------------------------------------------------------------------------
class Linear(Module):
    """``y = x W^T + b`` over the last dim (``torch.nn.Linear``): x (*, in) -> (*, out).

    ``weight`` (out, in) is drawn by ``kaiming_uniform_(a=sqrt(5))`` and ``bias`` (out,) from
    U(-1/sqrt(in), 1/sqrt(in)), as PyTorch does, from ``kg.random``.

    >>> import kernelgraph as kg
    >>> layer = kg.nn.Linear(3, 4)
    >>> layer(kg.ones(2, 3)).shape
    torch.Size([2, 4])
    >>> layer(kg.ones(2, 5))
    Traceback (most recent call last):
    ...
    ValueError: Linear(3, 4): expected input of shape (*, 3), got (2, 5)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None, name: str | None = None):
        super().__init__(name)
        self.in_features = positive_int("Linear", "in_features", in_features)
        self.out_features = positive_int("Linear", "out_features", out_features)
        dtype = float_dtype("Linear", dtype)
        self.register_parameter("weight", empty(dtype, self.out_features, self.in_features))
        self.register_parameter("bias", empty(dtype, self.out_features) if bias else None)
        self.reset_parameters()
        if device is not None:
            self.to(device)

    def reset_parameters(self) -> None:
        """PyTorch's default initialisation (see the class docstring)."""
        init.kaiming_uniform_(self._parameters["weight"], a=math.sqrt(5))
        if self._parameters["bias"] is not None:
            bound = 1.0 / math.sqrt(self.in_features)
            init.uniform_(self._parameters["bias"], -bound, bound)

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        x = as_input("Linear", x)
        shape = shape_of(x)
        if shape is not None and (len(shape) == 0 or
                                  shape[-1] not in (None, self.in_features)):
            raise ValueError(f"Linear({self.in_features}, {self.out_features}): expected "
                             f"input of shape (*, {self.in_features}), got {shape_str(shape)}")
        if shape is not None and len(shape) == 1:  # one sample (in,) -> (out,)
            return O.reshape(self.forward(O.reshape(x, shape=(1, -1))), shape=(-1,))
        y = O.matmul(x, O.transpose(self.weight))
        if self._parameters["bias"] is not None:
            y = y + self.bias
        return y

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self._parameters['bias'] is not None}")


# -- Flatten --------------------------------------------------------------------------------------
class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` into one (``torch.nn.Flatten``; by default all but
    the batch dim).

    >>> import kernelgraph as kg
    >>> kg.nn.Flatten()(kg.zeros(2, 3, 4, 5)).shape
    torch.Size([2, 60])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = int(start_dim), int(end_dim)

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        x = as_input("Flatten", x)
        shape = shape_of(x)
        if shape is None:
            raise ValueError("Flatten: the input's rank must be known")
        n = len(shape)
        start = self.start_dim + n if self.start_dim < 0 else self.start_dim
        end = self.end_dim + n if self.end_dim < 0 else self.end_dim
        if not (0 <= start < max(n, 1) and start <= end < max(n, 1)):
            raise ValueError(f"Flatten: dims {self.start_dim}..{self.end_dim} are out of range "
                             f"for an input of shape {shape_str(shape)}")
        if n == 0:
            return O.reshape(x, shape=(1,))
        merged = shape[start:end + 1]
        target = [*shape[:start], None if None in merged else int(np.prod(merged)),
                  *shape[end + 1:]]
        if target.count(None) > 1:  # reshape infers at most one dim (-1)
            raise ValueError(f"Flatten: input shape {shape_str(shape)} has too many unknown "
                             f"dims: all but one of {shape_str(tuple(target))} must be known")
        return O.reshape(x, shape=tuple(-1 if d is None else d for d in target))

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


# -- Dropout --------------------------------------------------------------------------------------
class Dropout(Module):
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p) in training
    mode; the identity after ``eval()`` (``torch.nn.Dropout``).

    Seeding: without ``seed``, an eager call draws PyTorch's mask from PyTorch's generator
    (a seeded PyTorch program drops the units torch drops), and a graph node draws from
    ``kg.random`` at each run. With ``seed=n`` the layer holds that op seed in both modes, so
    its k-th eager call and the k-th ``Session.run`` of its node draw the same mask: a model
    trained the same way in both modes drops the same units. In a graph the mode is read when
    the graph is built (call ``eval()`` before building an evaluation graph), as Keras'
    learning phase was.

    >>> import kernelgraph as kg
    >>> drop = kg.nn.Dropout(0.5)
    >>> y = drop(kg.ones(1000))
    >>> sorted(set(y.tolist()))                   # dropped, or scaled by 1 / (1 - p)
    [0.0, 2.0]
    >>> drop.eval()(kg.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """

    def __init__(self, p: float = 0.5, inplace: bool = False, seed: int | None = None):
        super().__init__()
        self.inplace = bool(inplace)
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {shown(p)}")
        self.p = float(p)
        # An explicit op seed, reserved now: eager calls with one seed share a draw counter,
        # and a graph node counts its own runs, so both modes walk the same stream.
        self.seed = seed if seed is not None else R._seed_attrs(None, True)["seed"]
        self._torch_masks = seed is None  # eager calls draw PyTorch's masks

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        x = as_input("Dropout", x)
        if self._torch_masks and isinstance(x, Tensor):
            return F.torch_dropout(x, self.p, self.training)
        return O.dropout(x, p=self.p, training=self.training, seed=self.seed)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


# -- Embedding ------------------------------------------------------------------------------------
class Embedding(Module):
    """A lookup table (``torch.nn.Embedding``): integer ids (*) -> rows (*, embedding_dim).
    ``weight`` (num_embeddings, embedding_dim) is drawn from N(0, 1).

    >>> import kernelgraph as kg
    >>> emb = kg.nn.Embedding(10, 3)
    >>> emb(kg.tensor([[1, 2], [3, 1]])).shape
    torch.Size([2, 2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None, max_norm=None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight=None, _freeze: bool = False, device=None, dtype=None,
                 name: str | None = None):
        super().__init__(name)
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError("Embedding: max_norm, scale_grad_by_freq and sparse are "
                                      "not supported by kernelgraph")
        self.num_embeddings = positive_int("Embedding", "num_embeddings", num_embeddings)
        self.embedding_dim = positive_int("Embedding", "embedding_dim", embedding_dim)
        if padding_idx is not None:
            if not -self.num_embeddings <= padding_idx < self.num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = padding_idx % self.num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            dtype = float_dtype("Embedding", dtype)
            self.register_parameter("weight", empty(dtype, self.num_embeddings,
                                                    self.embedding_dim))
            init.normal_(self._parameters["weight"])
            if padding_idx is not None:  # the padding row starts at zero, as PyTorch's
                init.zeros_(self._parameters["weight"][padding_idx])
        else:  # PyTorch's Parameter(_weight): the same storage, no draw from the generator
            if tuple(_weight.shape) != (self.num_embeddings, self.embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.register_parameter("weight", _weight.detach()).requires_grad_(not _freeze)
        if device is not None:
            self.to(device)

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx=None, max_norm=None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose weight is ``embeddings`` (2-D, sharing its storage), frozen (no
        gradient) unless ``freeze=False`` (``torch.nn.Embedding.from_pretrained``).

        >>> import kernelgraph as kg
        >>> emb = kg.nn.Embedding.from_pretrained(kg.tensor([[0.0, 1.0], [2.0, 3.0]]))
        >>> emb(kg.tensor([1])).tolist(), emb.weight.requires_grad
        ([[2.0, 3.0]], False)
        """
        embeddings = as_input("Embedding.from_pretrained", embeddings)
        if len(tuple(embeddings.shape)) != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = tuple(embeddings.shape)
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)

    def forward(self, ids: Tensor | Node) -> Tensor | Node:
        ids = as_input("Embedding", ids)
        if ids.dtype not in D.INTS:
            raise TypeError(f"Embedding: expected integer ids (int32 or int64), got "
                            f"{ids.dtype.name}")
        if isinstance(ids, Tensor) and ids._array.size and type(ids._array) is np.ndarray:
            bad = ids._array[(ids._array < 0) | (ids._array >= self.num_embeddings)]
            if bad.size:
                raise IndexError(f"Embedding: ids must be in [0, {self.num_embeddings}), got "
                                 f"{int(bad[0])}")
        out = O.embedding(self.weight, ids)
        if self.padding_idx is None:
            return out
        # the padding row gets no gradient: its lookups pass their value, held constant
        held = O.equal(ids, self.padding_idx).unsqueeze(-1)
        return O.where(held, out.detach(), out)

    def extra_repr(self) -> str:
        pad = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"


# -- activations ----------------------------------------------------------------------------------
class Identity(Module):
    """Returns its input (``torch.nn.Identity``).

    >>> import kernelgraph as kg
    >>> kg.nn.Identity()(kg.ones(2)).tolist()
    [1.0, 1.0]
    """

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return x


class ReLU(Module):
    """``max(x, 0)`` elementwise; ``inplace=True`` (``nn.ReLU(True)``) overwrites an eager
    input, as PyTorch's does (a graph node is computed anew: a graph has no in-place ops).

    >>> import kernelgraph as kg
    >>> kg.nn.ReLU()(kg.tensor([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    >>> kg.nn.ReLU(True)
    ReLU(inplace=True)
    """

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = bool(inplace)

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        x = as_input("ReLU", x)
        if self.inplace and isinstance(x, Tensor):
            return x.relu_()
        return O.relu(x)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """``tanh(x)`` elementwise.

    >>> import kernelgraph as kg
    >>> kg.nn.Tanh()(kg.tensor([0.0])).tolist()
    [0.0]
    """

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return O.tanh(as_input("Tanh", x))


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise.

    >>> import kernelgraph as kg
    >>> kg.nn.Sigmoid()(kg.tensor([0.0])).tolist()
    [0.5]
    """

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        return O.sigmoid(as_input("Sigmoid", x))


def _implicit_dim(x, dim, what: str) -> int:
    """``dim``, or PyTorch's legacy choice for ``dim=None`` (with its warning)."""
    if dim is not None:
        return dim
    warnings.warn(f"Implicit dimension choice for {what} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=4)
    n = len(shape_of(x) or ())
    return 0 if n in (0, 1, 3) else 1


class Softmax(Module):
    """Softmax along ``dim`` (``dim=None``: PyTorch's legacy implicit choice, with its
    warning: dim 0 for 0-, 1- and 3-D inputs, else dim 1).

    >>> import kernelgraph as kg
    >>> kg.nn.Softmax(dim=1)(kg.zeros(1, 4)).tolist()
    [[0.25, 0.25, 0.25, 0.25]]
    """

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = None if dim is None else int(dim)

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        x = as_input("Softmax", x)
        return O.softmax(x, axis=_implicit_dim(x, self.dim, "softmax"))

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """Log of the softmax along ``dim``, computed stably.

    >>> import kernelgraph as kg
    >>> round(kg.nn.LogSoftmax(dim=1)(kg.zeros(1, 2)).tolist()[0][0], 4)
    -0.6931
    """

    def forward(self, x: Tensor | Node) -> Tensor | Node:
        x = as_input("LogSoftmax", x)
        return O.log_softmax(x, axis=_implicit_dim(x, self.dim, "log_softmax"))
