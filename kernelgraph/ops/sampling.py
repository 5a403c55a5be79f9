"""More random ops, seeded like every random op (:mod:`.random`: a global seed, an op seed and
a draw counter, the same streams in eager and static mode and on every device):

- ``truncated_normal``: normal draws, each one outside two standard deviations drawn again
  (TF's ``tf.truncated_normal``, the common weight initialiser of TF1 tutorials);
- ``multinomial``: ``num_samples`` class indices per row of ``logits`` (unnormalised log
  probabilities), TF's ``tf.multinomial`` / ``tf.random.categorical``;
- ``log_uniform_candidates``: TF's log-uniform (Zipfian) candidate sampler, which
  ``tf.nn.nce_loss`` and ``tf.nn.sampled_softmax_loss`` use by default: class ``c`` of
  ``range_max`` has probability ``log((c + 2) / (c + 1)) / log(range_max + 1)``; with
  ``unique`` it draws until it has ``num_sampled`` distinct classes. Its value is the
  sampled classes followed by the number of draws it took (what the expected counts of
  ``tf.nn.log_uniform_candidate_sampler`` need).

None has a gradient (draws are constants to autodiff). On CUDA each draws on the host with
the CPU's stream and uploads the result, as ``random_normal`` does (``multinomial`` first
copies its logits to the host).

>>> import kernelgraph as kg
>>> kg.random.seed(0)
>>> x = truncated_normal((1000,), std=2.0)
>>> bool((abs(x.numpy()) <= 4.0).all())
True
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import ShapeError, shown
from ..graph import Node
from .random import _generator, _on, _seed_attrs, _shape, _static
from .registry import define


def _attrs(seed, static, **kw):
    return dict(**kw, **_seed_attrs(seed, static))


# -- truncated normal ------------------------------------------------------------------------
def _truncated_infer(shapes_, dtypes, attrs):
    dt = D.as_dtype(attrs["dtype"])
    if dt not in D.FLOATS:
        raise TypeError(f"truncated_normal: dtype must be float32 or float64, got {dt.name}")
    return _shape(attrs["shape"]), dt


def _truncated_forward(shape, mean, std, dtype, global_seed, seed, stream):
    _truncated_infer([], [], {"shape": shape, "dtype": dtype})
    rng = _generator(global_seed, seed, stream)
    z = rng.standard_normal(_shape(shape))
    bad = np.abs(z) > 2.0
    while bad.any():  # TF redraws each value outside [-2, 2] until it falls inside
        z[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(z) > 2.0
    return np.asarray(z * std + mean).astype(dtype)


truncated_normal_op = define(
    "truncated_normal", _truncated_forward, _truncated_infer, None, traits=("random",),
    cuda=lambda k: k.random.drawn_on_host(_truncated_forward),
    doc="Normal samples (mean, std), each beyond two std drawn again (one draw per run).")


def truncated_normal(shape, mean: float = 0.0, std: float = 1.0, seed: int | None = None,
                     dtype=D.float32, device=None, static: bool = False, name=None):
    """Truncated normal samples: an eager tensor, or with ``static=True`` a graph node (a new
    draw each ``Session.run``)."""
    attrs = _attrs(seed, static, shape=_shape(shape), dtype=D.as_dtype(dtype), mean=float(mean),
                   std=float(std))
    if static:
        return _static(truncated_normal_op, attrs, name)
    with _on(device):
        return truncated_normal_op(**attrs)


# -- multinomial (categorical) ---------------------------------------------------------------
def _multinomial_infer(shapes_, dtypes, attrs):
    s = shapes_[0]
    if D.as_dtype(dtypes[0]) not in D.FLOATS:
        raise TypeError(f"multinomial: logits must be float32 or float64, got "
                        f"{D.as_dtype(dtypes[0]).name}")
    out = D.as_dtype(attrs["dtype"])
    if out.kind != "i":
        raise TypeError(f"multinomial: the output dtype must be an integer type, got {out.name}")
    if s is not None and len(s) != 2:
        raise ShapeError(f"multinomial: logits must be a matrix [batch, classes], got shape "
                         f"{tuple(s)}")
    return (None if s is None else s[0], int(attrs["num_samples"])), out


def _multinomial_forward(logits, num_samples, dtype, global_seed, seed, stream):
    _multinomial_infer([logits.shape], [logits.dtype], {"num_samples": num_samples,
                                                        "dtype": dtype})
    rng = _generator(global_seed, seed, stream)
    batch, classes = logits.shape
    u = rng.random((batch, int(num_samples)))
    if classes == 0 or batch == 0:
        if batch and num_samples:
            raise ValueError("multinomial: logits has no classes to draw from")
        return np.zeros((batch, int(num_samples)), dtype)
    z = np.asarray(logits, np.float64)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    cdf = np.cumsum(p, axis=1)
    cdf /= cdf[:, -1:]
    out = np.empty((batch, int(num_samples)), np.int64)
    for r in range(batch):  # the first class whose cumulative probability passes u
        out[r] = np.minimum(np.searchsorted(cdf[r], u[r], side="right"), classes - 1)
    return out.astype(dtype)


def _multinomial_cuda(k):
    def forward(logits, **attrs):  # the draw reads the logits' values: they come to the host
        k.launcher.not_replayable("draws its random numbers on the host (a new draw each run)")
        return k.core.to_device(_multinomial_forward(k.core.to_host(logits), **attrs))
    return forward


multinomial_op = define(
    "multinomial", _multinomial_forward, _multinomial_infer, None, traits=("random",),
    cuda=_multinomial_cuda,
    attr_names=("num_samples", "dtype"), inputs=1,
    doc="num_samples class indices per row of logits [batch, classes] (one draw per run).")


def multinomial(logits, num_samples: int, seed: int | None = None, dtype=D.int64):
    """Class indices drawn from ``softmax(logits)`` per row: shape [batch, num_samples]."""
    if isinstance(num_samples, bool) or not isinstance(num_samples, int | np.integer) \
            or num_samples < 0:
        raise ValueError(f"multinomial: num_samples must be a non-negative int, got "
                         f"{shown(num_samples)}")
    return multinomial_op(logits, **_attrs(seed, isinstance(logits, Node),
                                           num_samples=int(num_samples),
                                           dtype=D.as_dtype(dtype)))


# -- the log-uniform candidate sampler -------------------------------------------------------
def _candidates_infer(shapes_, dtypes, attrs):
    n, top = int(attrs["num_sampled"]), int(attrs["range_max"])
    if n < 0 or top < 1:
        raise ValueError(f"log_uniform_candidates: need num_sampled >= 0 and range_max >= 1, "
                         f"got {n} and {top}")
    if attrs["unique"] and n > top:
        raise ValueError(f"log_uniform_candidates: cannot draw {n} distinct classes of "
                         f"{top} (unique=True)")
    return (n + 1,), D.int64


def _candidates_forward(num_sampled, range_max, unique, global_seed, seed, stream):
    _candidates_infer([], [], {"num_sampled": num_sampled, "range_max": range_max,
                               "unique": unique})
    rng = _generator(global_seed, seed, stream)
    log_range = np.log(range_max + 1.0)

    def draw(n):  # inverse of the CDF log(c + 1) / log(range_max + 1)
        c = np.floor(np.exp(rng.random(n) * log_range)).astype(np.int64) - 1
        return np.clip(c, 0, range_max - 1)

    if not unique:
        return np.append(draw(num_sampled), num_sampled)
    picked, seen, tries = [], set(), 0
    while len(picked) < num_sampled:
        for c in draw(num_sampled - len(picked)).tolist():
            tries += 1
            if c not in seen:
                seen.add(c)
                picked.append(c)
                if len(picked) == num_sampled:
                    break
    return np.array(picked + [tries], np.int64)


log_uniform_candidates_op = define(
    "log_uniform_candidates", _candidates_forward, _candidates_infer, None,
    traits=("random",), cuda=lambda k: k.random.drawn_on_host(_candidates_forward),
    doc="num_sampled log-uniform classes of range_max (distinct if unique), then the number "
        "of draws taken (one draw per run).")


def log_uniform_candidates(num_sampled: int, range_max: int, unique: bool = True,
                           seed: int | None = None, static: bool = False, name=None):
    """int64 ``[c_1 ... c_num_sampled, tries]``: the sampled classes, then the number of
    draws that took (see the module docstring); a graph node with ``static=True``."""
    attrs = _attrs(seed, static, num_sampled=int(num_sampled), range_max=int(range_max),
                   unique=bool(unique))
    if static:
        return _static(log_uniform_candidates_op, attrs, name)
    return log_uniform_candidates_op(**attrs)
