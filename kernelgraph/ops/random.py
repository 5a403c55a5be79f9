"""Seeded random numbers and dropout, with the same streams in eager and static mode.

How a draw is seeded: every random op has an *op seed* (yours, or the next automatic one)
and a *draw counter*; its k-th draw comes from a NumPy ``Generator`` seeded with
``(global seed, op seed, k)``. In eager mode each call is one draw, and all calls with the
same explicit ``seed`` share one counter; in static mode each node has its own counter, and
each ``Session.run`` of the node is one draw. So with the same global and op seed::

    kg.random.seed(0)
    a = kg.random.normal((2, 3), seed=7)            # eager: draw 0 of stream 7
    b = kg.random.normal((2, 3), seed=7)            # eager: draw 1 of stream 7

    kg.random.seed(0)
    with kg.Graph().as_default():
        node = kg.random.random_normal((2, 3), seed=7)
        with kg.Session() as sess:
            sess.run(node)                          # == a (draw 0)
            sess.run(node)                          # == b (draw 1)

Without a ``seed``, ops take automatic op seeds 0, 1, 2 ... (offset past user seeds) in
the order they are called (eager) or created (static), restarted by ``kg.random.seed(n)``:
a program that makes its random ops in the same order gets the same first draws in both
modes. ``kg.random.seed(n)`` also restarts the eager counters; a static node's counter
lives as long as the node.
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import devices
from .. import dtypes as D
from ..errors import ShapeError, shown
from ..graph import Node
from . import registry, torch_random
from .elementwise import mul
from .registry import define

# PyTorch's ``torch.random.manual_seed`` and kin: the generator of kg.randn and nn.init.
from .torch_random import get_rng_state, initial_seed, manual_seed, set_rng_state  # noqa: F401

_AUTO = 1 << 40  # automatic op seeds start here, away from seeds users pick
_state = {"seed": 0, "auto": 0, "streams": {}}


class Stream:
    """The draw counter of one random op (eager: of one op seed; static: of one node).

    While ``replaying`` is set, :meth:`take` gives the last draw again instead of the next
    one: the gradient of a static ``kg.cond`` computes its branch again, and must see the
    same dropout mask as the forward run did (:mod:`kernelgraph.static.control_flow`)."""

    __slots__ = ("draws", "last", "replaying")

    def __init__(self):
        self.draws = 0
        self.last = None  # the draw index take() gave last
        self.replaying = False

    def take(self) -> int:
        if self.replaying:
            if self.last is None:
                raise RuntimeError("a random op's draw was to be repeated, but it never drew")
            return self.last
        k = self.last = self.draws
        self.draws += 1
        return k

    def __repr__(self):
        return f"<random stream, {self.draws} draws>"


def seed(n: int) -> None:
    """Set the global seed and restart automatic op seeds and eager draw counters; also
    ``kg.manual_seed(n)``, PyTorch's generator that ``kg.randn`` and ``kg.nn.init`` draw from.

    >>> import kernelgraph as kg
    >>> kg.random.seed(3); a = kg.random.uniform((2,))
    >>> kg.random.seed(3); kg.random.uniform((2,)).tolist() == a.tolist()
    True
    """
    _state["seed"] = _check_seed(n, "seed")
    _state["auto"] = 0
    _state["streams"].clear()
    torch_random.manual_seed(n)  # PyTorch's generator too: nn.init and kg.randn draw from it


def _check_seed(n, what):
    if not isinstance(n, int | np.integer) or isinstance(n, bool) or n < 0:
        raise ValueError(f"{what} must be a non-negative int, got {shown(n)}")
    return int(n)


def _seed_attrs(op_seed, static: bool) -> dict:
    g = _state["seed"]
    if op_seed is None:
        op_seed = _AUTO + _state["auto"]
        _state["auto"] += 1
        stream = Stream()
    else:
        op_seed = _check_seed(op_seed, "seed")
        stream = Stream() if static else _state["streams"].setdefault((g, op_seed), Stream())
    return {"global_seed": g, "seed": op_seed, "stream": stream}


def _generator(global_seed, seed, stream) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        [global_seed, seed, stream.take()])))


def _shape(shape):
    if isinstance(shape, int | np.integer):
        shape = (shape,)
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints, got {shown(shape)}") from None
    if any(d < 0 for d in shape):
        raise ShapeError(f"random: shape {shape} has a negative dim")
    return shape


def _random_infer(shapes_, dtypes, attrs):
    dt = D.as_dtype(attrs["dtype"])
    if dt not in D.FLOATS:
        raise TypeError(f"random: dtype must be float32 or float64, got {dt.name}")
    return _shape(attrs["shape"]), dt


def _normal_forward(shape, mean, std, dtype, global_seed, seed, stream):
    _random_infer([], [], {"shape": shape, "dtype": dtype})
    z = _generator(global_seed, seed, stream).standard_normal(_shape(shape))
    return np.asarray(z * std + mean).astype(dtype)


def _uniform_forward(shape, low, high, dtype, global_seed, seed, stream):
    _random_infer([], [], {"shape": shape, "dtype": dtype})
    u = _generator(global_seed, seed, stream).random(_shape(shape))
    return np.asarray(u * (high - low) + low).astype(dtype)


random_normal_op = define("random_normal", _normal_forward, _random_infer, None,
                          traits=("random",), cuda=lambda k: k.random.drawn_on_host(
                              _normal_forward),
                          doc="Normal samples (a seeded stream: one draw per run).")
random_uniform_op = define("random_uniform", _uniform_forward, _random_infer, None,
                           traits=("random",), cuda=lambda k: k.random.drawn_on_host(
                               _uniform_forward),
                           doc="Uniform samples in [low, high) (one draw per run).")


def _attrs(shape, dtype, seed, static, **kw):
    return dict(shape=_shape(shape), dtype=D.as_dtype(dtype), **kw, **_seed_attrs(seed, static))


def _static(op, attrs, name):
    # No input says the mode here, so the node is built by the static front-end's own entry
    # (registered for graph nodes by kernelgraph.static.build, a floor above the ops).
    if name is not None:
        attrs["name"] = name
    return registry.FRONTENDS[Node](op, (), attrs)


def _on(device):
    """The ``with kg.device(...)`` block for an eager factory's ``device=`` argument."""
    return contextlib.nullcontext() if device is None else devices.device(device)


def normal(shape, mean: float = 0.0, std: float = 1.0, seed: int | None = None,
           dtype=D.float32, device=None):
    """An eager tensor of normal samples (see the module docstring for seeding); the same
    numbers on every device."""
    with _on(device):
        return random_normal_op(**_attrs(shape, dtype, seed, False, mean=float(mean),
                                         std=float(std)))


def uniform(shape, low: float = 0.0, high: float = 1.0, seed: int | None = None,
            dtype=D.float32, device=None):
    """An eager tensor of uniform samples in [low, high)."""
    with _on(device):
        return random_uniform_op(**_attrs(shape, dtype, seed, False, low=float(low),
                                          high=float(high)))


def random_normal(shape, mean: float = 0.0, std: float = 1.0, seed: int | None = None,
                  dtype=D.float32, name: str | None = None) -> Node:
    """A graph node of normal samples: a new draw each ``Session.run`` (tf.random_normal)."""
    return _static(random_normal_op, _attrs(shape, dtype, seed, True, mean=float(mean),
                                            std=float(std)), name)


def random_uniform(shape, low: float = 0.0, high: float = 1.0, seed: int | None = None,
                   dtype=D.float32, name: str | None = None) -> Node:
    """A graph node of uniform samples in [low, high): a new draw each ``Session.run``."""
    return _static(random_uniform_op, _attrs(shape, dtype, seed, True, low=float(low),
                                             high=float(high)), name)


# -- dropout ---------------------------------------------------------------------------------
def _mask_infer(shapes_, dtypes, attrs):
    if D.as_dtype(dtypes[0]) not in D.FLOATS:
        raise TypeError(f"dropout needs a floating-point tensor, got {D.as_dtype(dtypes[0]).name}")
    return shapes_[0], dtypes[0]


def _mask_forward(x, p, global_seed, seed, stream):
    _mask_infer([x.shape], [x.dtype], {})
    keep = _generator(global_seed, seed, stream).random(x.shape) >= p
    return (keep.astype(x.dtype) * x.dtype.type(1.0 / (1.0 - p))) if p < 1 else \
        np.zeros(x.shape, x.dtype)


dropout_mask = define("dropout_mask", _mask_forward, _mask_infer, None,
                      traits=("random",), cuda=lambda k: k.random.drawn_on_host(_mask_forward),
                      doc="0 with probability p, else 1/(1-p), in x's shape and dtype.")


def dropout(x, p: float = 0.5, training: bool = True, seed: int | None = None):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``; the
    gradient is the same mask. Identity when not ``training`` or ``p == 0``.

    >>> import kernelgraph as kg
    >>> kg.dropout(kg.ones(4), p=0.5, seed=1).tolist()  # doctest: +SKIP
    [2.0, 0.0, 2.0, 2.0]
    """
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {shown(p)}")
    if not training or p == 0:
        return x
    mask = dropout_mask(x, p=float(p), **_seed_attrs(seed, isinstance(x, Node)))
    return mul(x, mask)
