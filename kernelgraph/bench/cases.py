"""The benchmark cases: what each framework runs, what it must output, and the targets.

Every case gives, per framework, a *setup* that builds the inputs (and graphs, sessions)
and returns an :class:`Impl`: the statement to time, the namespace it runs in, and a
function returning its output for the correctness check. A framework that has no
counterpart for a case (NumPy has no autograd, TF1 has no eager ops, PyTorch no Session)
gets a string instead: the reason its cell is "n/a".

kernelgraph is used only through its public API (``kg.tensor``, ``kg.placeholder``,
``kg.gradients``, ``kg.Session``, operators, ``kg.tanh``, ``kg.sigmoid`` ...).

The 100-op chain is defined once (:data:`CHAIN`) and turned into straight-line Python for
each framework by :func:`make_chain`, so every framework runs exactly the same ops in the
same order, with no interpreter loop around them::

    def chain(x):
        x = x * 1.01
        x = x + 0.5
        x = tanh(x)
        x = sigmoid(x)
        ...             # 25 times: 100 ops

The same function works on eager tensors (computes now), on graph nodes (adds nodes), on
NumPy arrays and on torch / TF tensors; only ``tanh`` and ``sigmoid`` differ per framework.

Rows 6-8 are the larger CPU figures: a 1024x1024 matmul, ``a * b + c`` over 10M float32
(also in GB/s, next to an ``np.copyto`` copy timed in the same run: see :class:`Bandwidth`)
and one training step of a small CNN, in kernelgraph's eager and static modes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .. import cuda as kg_cuda
from .. import nest
from ..ops.registry import cuda_package
from .timing import measure

#: One cycle of the chain: (op, scalar operand or None).
CHAIN_CYCLE = (("mul", 1.01), ("add", 0.5), ("tanh", None), ("sigmoid", None))
CHAIN_LENGTH = 100
#: The exact op sequence every framework runs in the chain benchmarks.
CHAIN = tuple(CHAIN_CYCLE[i % len(CHAIN_CYCLE)] for i in range(CHAIN_LENGTH))
#: The chain's input: 16 float32 values.
CHAIN_INPUT = np.linspace(-1.0, 1.0, 16, dtype=np.float32)

_LINES = {"mul": "x = x * {c!r}", "add": "x = x + {c!r}", "tanh": "x = tanh(x)",
          "sigmoid": "x = sigmoid(x)"}


def chain_source(chain=CHAIN) -> str:
    """The straight-line Python source of ``chain(x)`` for the op sequence ``chain``: ops
    from :data:`CHAIN_CYCLE`, constants finite Python numbers (written as literals)."""
    for op, c in chain:
        if op not in _LINES:
            raise ValueError(f"chain ops are {', '.join(_LINES)}; got {type(op).__name__} "
                             f"{str(op)[:40]!r}")
        if op in ("mul", "add") and not (type(c) in (int, float) and math.isfinite(c)):
            raise ValueError(f"the constant of a chain's {op} must be a finite int or float, "
                             f"got {type(c).__name__}")
    body = [_LINES[op].format(c=c) for op, c in chain]
    return "def chain(x):\n" + "".join(f"    {line}\n" for line in body) + "    return x\n"


def make_chain(tanh: Callable, sigmoid: Callable, chain=CHAIN) -> Callable:
    """``chain(x)`` running :data:`CHAIN` with this framework's ``tanh`` and ``sigmoid``.

    >>> import numpy as np
    >>> f = make_chain(np.tanh, lambda x: 1 / (1 + np.exp(-x)), chain=CHAIN[:3])
    >>> float(f(np.float32(0.0))) == float(np.tanh(np.float32(0.5)))
    True
    """
    namespace = {"tanh": tanh, "sigmoid": sigmoid}
    exec(compile(chain_source(chain), "<kernelgraph.bench chain>", "exec"), namespace)  # noqa: S102
    return namespace["chain"]


# -- float64 references: the oracle every framework's output is compared with ----------------
def _sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-x))


def reference_chain(x0: np.ndarray) -> np.ndarray:
    """The chain's forward value, in float64."""
    x = np.asarray(x0, np.float64)
    for op, c in CHAIN:
        x = x * c if op == "mul" else x + c if op == "add" else (
            np.tanh(x) if op == "tanh" else _sigmoid64(x))
    return x


def reference_chain_grad(x0: np.ndarray) -> np.ndarray:
    """d(sum(chain(x)))/dx at ``x0``, by the chain rule written out by hand, in float64.

    (The gradient is tiny, about 1e-31: 25 tanh/sigmoid pairs squash it. The check is
    relative, so it still compares every significant digit.)
    """
    x = np.asarray(x0, np.float64)
    outs = []
    for op, c in CHAIN:
        x = x * c if op == "mul" else x + c if op == "add" else (
            np.tanh(x) if op == "tanh" else _sigmoid64(x))
        outs.append(x)
    g = np.ones_like(x)
    for (op, c), y in zip(reversed(CHAIN), reversed(outs)):
        if op == "mul":
            g = g * c
        elif op == "tanh":
            g = g * (1.0 - y * y)
        elif op == "sigmoid":
            g = g * y * (1.0 - y)
    return g


# -- the case description ---------------------------------------------------------------------
@dataclass
class Impl:
    """One framework's side of a case (see the module docstring)."""

    stmt: str
    namespace: dict
    output: Callable[[], object]
    per: int = 1  # the time is divided by this (ops per graph built)
    close: Callable[[], None] | None = None
    extra: dict = field(default_factory=dict)  # facts for the JSON (node counts ...)


@dataclass(frozen=True)
class Target:
    """What the project must reach: at most ``max_us``, kernelgraph/other ratios at most
    ``max_ratio[other]``, and (for a case with a :class:`Bandwidth`) kernelgraph's effective
    bandwidth at least ``min_bandwidth`` times the baseline's, measured in the same run."""

    max_us: float | None = None
    max_ratio: tuple[tuple[str, float], ...] = ()
    min_bandwidth: float | None = None

    def describe(self, unit: str) -> str:
        parts = [f"<= {self.max_us:g} {unit}"] if self.max_us is not None else []
        parts += [f"<= {r:.3g}x {name}" for name, r in self.max_ratio]
        if self.min_bandwidth is not None:
            parts.append(f">= {self.min_bandwidth:g}x copy GB/s")
        return ", ".join(parts)

    def evaluate(self, kg_us: float | None, ratios: dict,
                 bandwidth_ratio: float | None = None) -> tuple[bool | None, list[str]]:
        """(passed, unchecked): passed is None when nothing could be checked.
        ``bandwidth_ratio`` is kernelgraph's GB/s over the baseline's (None: not measured)."""
        checks, unchecked = [], []
        if self.max_us is not None:
            if kg_us is None:
                unchecked.append("time")
            else:
                checks.append(kg_us <= self.max_us)
        for name, limit in self.max_ratio:
            r = ratios.get(name)
            if r is None:
                unchecked.append(f"ratio to {name}")
            else:
                checks.append(r <= limit)
        if self.min_bandwidth is not None:
            if bandwidth_ratio is None:
                unchecked.append("bandwidth")
            else:
                checks.append(bandwidth_ratio >= self.min_bandwidth)
        return (all(checks) if checks else None), unchecked


@dataclass(frozen=True)
class Bandwidth:
    """Turn a memory-bound case's times into GB/s, next to a baseline timed in the same run.

    ``nbytes``: the bytes one call must move at least (the case says how they are counted);
    ``baseline``: setup(numpy) -> :class:`Impl` of the reference pass (a plain copy), which
    moves ``baseline_nbytes`` per call and is described by ``baseline_label``.
    """

    nbytes: int
    baseline: Callable
    baseline_nbytes: int
    baseline_label: str
    counting: str  # how the bytes are counted, for the footnote


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    unit: str
    description: str
    reference: Callable[[], object]
    setups: dict  # framework -> setup(module) -> Impl, or a str: why it is n/a
    target: Target | None = None
    bandwidth: Bandwidth | None = None
    rtol: float = 1e-4  # the output check's relative tolerance (see :func:`check`)


# -- setups -----------------------------------------------------------------------------------
NO_EAGER_TF = "TF1 (compat.v1) graph mode has no eager ops"
NO_AUTOGRAD_NP = "NumPy has no autograd"
NO_SESSION_TORCH = "PyTorch has no static graph / Session"
NO_GRAPH_NP = "NumPy builds no graph"


def _numpy_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _kg_chain(kg):
    return make_chain(kg.tanh, kg.sigmoid)


def _torch_chain(torch):
    return make_chain(torch.tanh, torch.sigmoid)


def _tf_chain(tf):
    return make_chain(tf.tanh, tf.sigmoid)


def _np_chain(np_):
    return make_chain(np_.tanh, _numpy_sigmoid)


# 1. eager add of two 1-element tensors
ADD_A, ADD_B = 1.5, 2.25


def _add_kg(kg):
    a = kg.tensor(np.array([ADD_A], np.float32))
    b = kg.tensor(np.array([ADD_B], np.float32))
    return Impl("a + b", {"a": a, "b": b}, lambda: (a + b).numpy())


def _add_np(np_):
    a = np_.array([ADD_A], np_.float32)
    b = np_.array([ADD_B], np_.float32)
    return Impl("a + b", {"a": a, "b": b}, lambda: a + b)


def _add_torch(torch):
    a = torch.tensor([ADD_A], dtype=torch.float32)
    b = torch.tensor([ADD_B], dtype=torch.float32)
    return Impl("a + b", {"a": a, "b": b}, lambda: (a + b).numpy())


# 2a/2b. eager 100-op chain, forward and forward+backward
def _chain_fwd_kg(kg):
    chain, x = _kg_chain(kg), kg.tensor(CHAIN_INPUT, requires_grad=True)
    return Impl("chain(x)", {"chain": chain, "x": x}, lambda: chain(x).detach().numpy())


def _chain_fwd_np(np_):
    chain, x = _np_chain(np_), CHAIN_INPUT.copy()
    return Impl("chain(x)", {"chain": chain, "x": x}, lambda: chain(x))


def _chain_fwd_torch(torch):
    chain, x = _torch_chain(torch), torch.tensor(CHAIN_INPUT, requires_grad=True)
    return Impl("chain(x)", {"chain": chain, "x": x}, lambda: chain(x).detach().numpy())


_BACKWARD = "x.grad = None\nchain(x).sum().backward()"


def _chain_fb_kg(kg):
    chain, x = _kg_chain(kg), kg.tensor(CHAIN_INPUT, requires_grad=True)

    def output():
        x.grad = None
        chain(x).sum().backward()
        return x.grad.numpy()

    return Impl(_BACKWARD, {"chain": chain, "x": x}, output)


def _chain_fb_torch(torch):
    chain, x = _torch_chain(torch), torch.tensor(CHAIN_INPUT, requires_grad=True)

    def output():
        x.grad = None
        chain(x).sum().backward()
        return x.grad.numpy()

    return Impl(_BACKWARD, {"chain": chain, "x": x}, output)


# 3. Session.run of the seed example with its gradients
_SEED_RUN = "sess.run([c, grads], feed_dict={a: 15.0, b: 20.0})"


def _seed_kg(kg):
    g = kg.Graph()
    with g.as_default():
        a = kg.placeholder(kg.float32)
        b = kg.placeholder(kg.float32)
        c = a * b
        grads = kg.gradients(c, [a, b])
    sess = kg.Session(graph=g)
    ns = {"sess": sess, "a": a, "b": b, "c": c, "grads": grads}
    return Impl(_SEED_RUN, ns, lambda: sess.run([c, grads], feed_dict={a: 15.0, b: 20.0}),
                close=sess.close)


def _seed_tf(tf):
    v1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        a = v1.placeholder(tf.float32)
        b = v1.placeholder(tf.float32)
        c = a * b
        grads = v1.gradients(c, [a, b])
    sess = v1.Session(graph=g)
    ns = {"sess": sess, "a": a, "b": b, "c": c, "grads": grads}
    return Impl(_SEED_RUN, ns, lambda: sess.run([c, grads], feed_dict={a: 15.0, b: 20.0}),
                close=sess.close)


def _seed_np(np_):
    f32 = np_.float32

    def seed(a, b):
        # What the session does: convert the fed numbers, c = a*b, dc/da = b, dc/db = a.
        a, b = np_.asarray(a, f32), np_.asarray(b, f32)
        return [a * b, [b, a]]

    return Impl("seed(15.0, 20.0)", {"seed": seed}, lambda: seed(15.0, 20.0))


# 4. Session.run of the 100-op chain (forward only)
_CHAIN_RUN = "sess.run(y, feed_dict={x: x0})"


def _session_chain_kg(kg):
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=(16,))
        y = _kg_chain(kg)(x)
    sess, x0 = kg.Session(graph=g), CHAIN_INPUT.copy()
    ns = {"sess": sess, "x": x, "y": y, "x0": x0}
    return Impl(_CHAIN_RUN, ns, lambda: sess.run(y, feed_dict={x: x0}), close=sess.close)


def _session_chain_tf(tf):
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(16,))
        y = _tf_chain(tf)(x)
    sess, x0 = tf.compat.v1.Session(graph=g), CHAIN_INPUT.copy()
    ns = {"sess": sess, "x": x, "y": y, "x0": x0}
    return Impl(_CHAIN_RUN, ns, lambda: sess.run(y, feed_dict={x: x0}), close=sess.close)


def _session_chain_np(np_):
    chain, x0 = _np_chain(np_), CHAIN_INPUT.copy()
    return Impl("chain(x0)", {"chain": chain, "x0": x0}, lambda: chain(x0))


# 5. graph construction of the 100-op chain, per node of the graph built
def _build_kg(kg):
    chain = _kg_chain(kg)

    def build():
        g = kg.Graph()
        with g.as_default():
            x = kg.placeholder(kg.float32, shape=(16,))
            y = chain(x)
        return g, x, y

    g, _, _ = build()

    def output():  # the graph built must compute the chain
        g, x, y = build()
        with kg.Session(graph=g) as sess:
            return sess.run(y, feed_dict={x: CHAIN_INPUT})

    return Impl("build()", {"build": build}, output, per=len(g.nodes),
                extra={"graph_nodes": len(g.nodes)})


def _build_tf(tf):
    chain = _tf_chain(tf)

    def build():
        g = tf.Graph()
        with g.as_default():
            x = tf.compat.v1.placeholder(tf.float32, shape=(16,))
            y = chain(x)
        return g, x, y

    g, _, _ = build()

    def output():
        g, x, y = build()
        with tf.compat.v1.Session(graph=g) as sess:
            return sess.run(y, feed_dict={x: CHAIN_INPUT})

    return Impl("build()", {"build": build}, output, per=len(g.get_operations()),
                extra={"graph_nodes": len(g.get_operations())})


# -- the CPU figures: large arrays and a small CNN -------------------------------------
# Every framework gets the same float32 data (made once, here, with a fixed seed), so outputs
# can be compared with one float64 reference. Data that a framework needs in another layout
# (TF's NHWC / HWIO) is transposed once in the setup, outside the timed statement.
def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# 6. matmul of two 1024x1024 float32 matrices
MATMUL_N = 1024


def _matmul_data():
    r = _rng(6)
    return (r.standard_normal((MATMUL_N, MATMUL_N), dtype=np.float32),
            r.standard_normal((MATMUL_N, MATMUL_N), dtype=np.float32))


def _matmul_reference():
    a, b = _matmul_data()
    return a.astype(np.float64) @ b.astype(np.float64)


def _matmul_kg(kg):
    a, b = (kg.tensor(v) for v in _matmul_data())
    return Impl("matmul(a, b)", {"matmul": kg.matmul, "a": a, "b": b},
                lambda: kg.matmul(a, b).numpy())


def _matmul_np(np_):
    a, b = _matmul_data()
    return Impl("matmul(a, b)", {"matmul": np_.matmul, "a": a, "b": b},
                lambda: np_.matmul(a, b))


def _matmul_torch(torch):
    a, b = (torch.from_numpy(v) for v in _matmul_data())
    return Impl("matmul(a, b)", {"matmul": torch.matmul, "a": a, "b": b},
                lambda: torch.matmul(a, b).numpy())


_FEED_RUN = "sess.run(y, feed_dict=feed)"


def _matmul_tf(tf):
    a0, b0 = _matmul_data()
    g = tf.Graph()
    with g.as_default():
        a = tf.compat.v1.placeholder(tf.float32, shape=a0.shape)
        b = tf.compat.v1.placeholder(tf.float32, shape=b0.shape)
        y = tf.matmul(a, b)
    sess, feed = tf.compat.v1.Session(graph=g), {a: a0, b: b0}
    return Impl(_FEED_RUN, {"sess": sess, "y": y, "feed": feed},
                lambda: sess.run(y, feed_dict=feed), close=sess.close)


# 7. a * b + c over 10M float32 values, with the copy bandwidth as the baseline
FMA_N = 10_000_000


def _fma_data():
    # Positive values: no cancellation, so float32 stays within 1e-6 of the float64 result.
    r = _rng(7)
    return tuple(r.uniform(0.5, 1.5, FMA_N).astype(np.float32) for _ in range(3))


def _fma_reference():
    a, b, c = (v.astype(np.float64) for v in _fma_data())
    return a * b + c


_FMA = "a * b + c"


def _fma_kg(kg):
    a, b, c = (kg.tensor(v) for v in _fma_data())
    return Impl(_FMA, {"a": a, "b": b, "c": c}, lambda: (a * b + c).numpy())


def _fma_np(np_):
    a, b, c = _fma_data()
    return Impl(_FMA, {"a": a, "b": b, "c": c}, lambda: a * b + c)


def _fma_torch(torch):
    a, b, c = (torch.from_numpy(v) for v in _fma_data())
    return Impl(_FMA, {"a": a, "b": b, "c": c}, lambda: (a * b + c).numpy())


def _fma_tf(tf):
    a0, b0, c0 = _fma_data()
    g = tf.Graph()
    with g.as_default():
        a, b, c = (tf.compat.v1.placeholder(tf.float32, shape=(FMA_N,)) for _ in range(3))
        y = a * b + c
    sess, feed = tf.compat.v1.Session(graph=g), {a: a0, b: b0, c: c0}
    return Impl(_FEED_RUN, {"sess": sess, "y": y, "feed": feed},
                lambda: sess.run(y, feed_dict=feed), close=sess.close)


def _copy_np(np_):
    src = _fma_data()[0]
    dst = np_.empty_like(src)
    return Impl("copyto(dst, src)", {"copyto": np_.copyto, "dst": dst, "src": src},
                lambda: dst)


FMA_BANDWIDTH = Bandwidth(
    nbytes=4 * 4 * FMA_N, baseline=_copy_np, baseline_nbytes=2 * 4 * FMA_N,
    baseline_label="np.copyto(dst, src) on 10M float32",
    counting="bytes are the minimal traffic of one fused pass: 4 arrays (a, b, c read, "
             "the result written) x 4 bytes x N; the copy moves 2 arrays x 4 bytes x N")


# 8. one training step of a small CNN: forward + backward of the mean cross-entropy
CNN_BATCH, CNN_SIZE, CNN_CHANNELS, CNN_CLASSES = 32, 16, 8, 10
CNN_FLAT = CNN_CHANNELS * CNN_SIZE * CNN_SIZE


def _cnn_data():
    """x (N, 1, H, W), labels (N,) int64, and the weights: w1 (8, 1, 3, 3), w2 (8, 8, 3, 3)
    (OIHW, He-scaled), w3 (2048, 10), b3 (10,)."""
    r = _rng(8)
    x = r.standard_normal((CNN_BATCH, 1, CNN_SIZE, CNN_SIZE), dtype=np.float32)
    labels = r.integers(0, CNN_CLASSES, CNN_BATCH).astype(np.int64)
    w1 = (r.standard_normal((CNN_CHANNELS, 1, 3, 3)) * np.sqrt(2 / 9)).astype(np.float32)
    w2 = (r.standard_normal((CNN_CHANNELS, CNN_CHANNELS, 3, 3))
          * np.sqrt(2 / (9 * CNN_CHANNELS))).astype(np.float32)
    w3 = (r.standard_normal((CNN_FLAT, CNN_CLASSES)) / np.sqrt(CNN_FLAT)).astype(np.float32)
    b3 = (r.standard_normal(CNN_CLASSES) * 0.1).astype(np.float32)
    return x, labels, [w1, w2, w3, b3]


def _patches(x):
    """(N, C, H, W) -> (N, C, 3, 3, H, W): the 3x3 windows of x zero-padded by 1."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.empty((n, c, 3, 3, h, w), x.dtype)
    for i in range(3):
        for j in range(3):
            out[:, :, i, j] = xp[:, :, i:i + h, j:j + w]
    return out


def _conv_input_grad(w, g):
    """The gradient of conv2d(x, w, padding=1) with respect to x, for output gradient g."""
    n, _, h, wd = g.shape
    cols = np.einsum("ocij,nohw->ncijhw", w, g)
    dxp = np.zeros((n, w.shape[1], h + 2, wd + 2))
    for i in range(3):
        for j in range(3):
            dxp[:, :, i:i + h, j:j + wd] += cols[:, :, i, j]
    return dxp[:, :, 1:-1, 1:-1]


def reference_cnn_step():
    """[loss, [dloss/dw1, dloss/dw2, dloss/dw3, dloss/db3]] of the CNN step, by hand, in
    float64."""
    x, labels, (w1, w2, w3, b3) = _cnn_data()
    x, w1, w2, w3, b3 = (v.astype(np.float64) for v in (x, w1, w2, w3, b3))
    p1 = _patches(x)
    a1 = np.einsum("ncijhw,ocij->nohw", p1, w1)
    h1 = np.maximum(a1, 0.0)
    p2 = _patches(h1)
    a2 = np.einsum("ncijhw,ocij->nohw", p2, w2)
    h2 = np.maximum(a2, 0.0)
    flat = h2.reshape(CNN_BATCH, -1)
    z = flat @ w3 + b3
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    rows = np.arange(CNN_BATCH)
    loss = -logp[rows, labels].mean()
    dz = np.exp(logp)
    dz[rows, labels] -= 1.0
    dz /= CNN_BATCH
    dw3, db3 = flat.T @ dz, dz.sum(axis=0)
    da2 = (dz @ w3.T).reshape(a2.shape) * (a2 > 0)
    dw2 = np.einsum("ncijhw,nohw->ocij", p2, da2)
    da1 = _conv_input_grad(w2, da2) * (a1 > 0)
    dw1 = np.einsum("ncijhw,nohw->ocij", p1, da1)
    return [np.array(loss), [dw1, dw2, dw3, db3]]


def _cnn_model(conv2d, relu, reshape, matmul, cross_entropy):
    """The model, written once for kernelgraph (both modes) and PyTorch."""
    def loss_of(x, labels, w1, w2, w3, b3):
        h = relu(conv2d(x, w1, padding=1))
        h = relu(conv2d(h, w2, padding=1))
        logits = matmul(reshape(h, (CNN_BATCH, CNN_FLAT)), w3) + b3
        return cross_entropy(logits, labels)
    return loss_of


def _cnn_eager_kg(kg):
    x0, y0, w0 = _cnn_data()
    x, labels = kg.tensor(x0), kg.tensor(y0)
    params = [kg.tensor(w, requires_grad=True) for w in w0]
    loss_of = _cnn_model(kg.conv2d, kg.relu, kg.reshape, kg.matmul, kg.cross_entropy)

    def step():
        for p in params:
            p.grad = None
        loss = loss_of(x, labels, *params)
        loss.backward()
        return loss

    def output():
        loss = step()
        return [loss.detach().numpy(), [p.grad.numpy() for p in params]]

    return Impl("step()", {"step": step}, output)


_CNN_RUN = "sess.run([loss, grads], feed_dict=feed)"


def _cnn_static_kg(kg):
    x0, y0, w0 = _cnn_data()
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=x0.shape)
        labels = kg.placeholder(kg.int64, shape=y0.shape)
        params = [kg.Variable(w) for w in w0]
        loss_of = _cnn_model(kg.conv2d, kg.relu, kg.reshape, kg.matmul, kg.cross_entropy)
        loss = loss_of(x, labels, *params)
        grads = kg.gradients(loss, params)
        init = kg.global_variables_initializer()
    sess, feed = kg.Session(graph=g), {x: x0, labels: y0}
    sess.run(init)
    ns = {"sess": sess, "loss": loss, "grads": grads, "feed": feed}
    return Impl(_CNN_RUN, ns, lambda: sess.run([loss, grads], feed_dict=feed), close=sess.close)


def _cnn_torch(torch):
    import torch.nn.functional as F

    x0, y0, w0 = _cnn_data()
    x, labels = torch.from_numpy(x0), torch.from_numpy(y0)
    params = [torch.tensor(w, requires_grad=True) for w in w0]
    loss_of = _cnn_model(F.conv2d, torch.relu, torch.reshape, torch.matmul, F.cross_entropy)

    def step():
        for p in params:
            p.grad = None
        loss = loss_of(x, labels, *params)
        loss.backward()
        return loss

    def output():
        loss = step()
        return [loss.detach().numpy(), [p.grad.numpy() for p in params]]

    return Impl("step()", {"step": step}, output)


def _to_nhwc_order(w3):
    """w3's rows reordered from NCHW flattening (c, h, w) to NHWC flattening (h, w, c)."""
    return w3.reshape(CNN_CHANNELS, CNN_SIZE, CNN_SIZE, -1).transpose(1, 2, 0, 3) \
        .reshape(CNN_FLAT, -1)


def _from_nhwc_order(w3):
    return w3.reshape(CNN_SIZE, CNN_SIZE, CNN_CHANNELS, -1).transpose(2, 0, 1, 3) \
        .reshape(CNN_FLAT, -1)


def _cnn_tf(tf):
    v1 = tf.compat.v1
    x0, y0, (w1, w2, w3, b3) = _cnn_data()
    # Once, outside timing: data to NHWC, filters OIHW -> HWIO, and w3's rows reordered so
    # that flattening NHWC activations gives exactly the same logits.
    x0 = np.ascontiguousarray(x0.transpose(0, 2, 3, 1))
    init = [np.ascontiguousarray(w1.transpose(2, 3, 1, 0)),
            np.ascontiguousarray(w2.transpose(2, 3, 1, 0)), _to_nhwc_order(w3), b3]
    g = tf.Graph()
    with g.as_default():
        x = v1.placeholder(tf.float32, shape=x0.shape)
        labels = v1.placeholder(tf.int64, shape=y0.shape)
        params = [v1.Variable(w) for w in init]
        h = tf.nn.relu(tf.nn.conv2d(x, params[0], strides=1, padding="SAME"))
        h = tf.nn.relu(tf.nn.conv2d(h, params[1], strides=1, padding="SAME"))
        logits = tf.matmul(tf.reshape(h, (CNN_BATCH, CNN_FLAT)), params[2]) + params[3]
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits))
        grads = v1.gradients(loss, params)
        initializer = v1.global_variables_initializer()
    sess, feed = v1.Session(graph=g), {x: x0, labels: y0}
    sess.run(initializer)

    def output():  # the gradients back in the OIHW / NCHW order of the reference
        value, (d1, d2, d3, db3) = sess.run([loss, grads], feed_dict=feed)
        return [value, [d1.transpose(3, 2, 0, 1), d2.transpose(3, 2, 0, 1),
                        _from_nhwc_order(d3), db3]]

    ns = {"sess": sess, "loss": loss, "grads": grads, "feed": feed}
    return Impl(_CNN_RUN, ns, output, close=sess.close)


# 9-10. the same kernels on a GPU (rows report n/a without one)
class Unavailable(Exception):
    """A setup that cannot run here (no GPU): the cell shows n/a with this reason."""


def _require_gpu():
    # The CUDA kernels load first, as on any first CUDA use: their memory pool must be in
    # place before numba makes a context (a baseline may use numba.cuda directly).
    core = cuda_package().core
    if not kg_cuda_available():
        raise Unavailable("no CUDA GPU here (kg.cuda.is_available() is False)")
    if core.SIMULATOR:
        raise Unavailable("numba's CUDA simulator is not a GPU (NUMBA_ENABLE_CUDASIM=1)")
    return core


def kg_cuda_available() -> bool:
    return kg_cuda.is_available()


def _torch_cuda(torch):
    if not torch.cuda.is_available():
        raise Unavailable("this PyTorch build sees no CUDA GPU")
    return torch.device("cuda")


GPU_N = 1 << 26  # 64M float32 = 256 MB per array: far past every cache
GPU_MATMUL_N = 4096
_SYNC = "; sync()"


def _gpu_mul_data():
    r = _rng(9)
    return tuple(r.uniform(0.5, 1.5, GPU_N).astype(np.float32) for _ in range(2))


def _gpu_mul_reference():
    a, b = (v.astype(np.float64) for v in _gpu_mul_data())
    return a * b


def _gpu_mul_kg(kg):
    _require_gpu()
    a, b = (kg.tensor(v, device="cuda") for v in _gpu_mul_data())
    return Impl("a * b" + _SYNC, {"a": a, "b": b, "sync": kg.cuda.synchronize},
                lambda: (a * b).cpu().numpy())


def _gpu_mul_torch(torch):
    dev = _torch_cuda(torch)
    a, b = (torch.from_numpy(v).to(dev) for v in _gpu_mul_data())
    return Impl("a * b" + _SYNC, {"a": a, "b": b, "sync": torch.cuda.synchronize},
                lambda: (a * b).cpu().numpy())


def _gpu_copy(np_):
    """The device's copy bandwidth: PyTorch's ``copy_`` where PyTorch sees the GPU (its copy
    kernel moves ~2.8 TB/s on an H100), else numba's device-to-device ``cuMemcpyDtoD``
    (~1.4-1.7 TB/s there: too slow to stand for the device)."""
    _require_gpu()
    try:
        import torch

        dev = _torch_cuda(torch)
    except (ImportError, Unavailable):
        from numba import cuda

        src = cuda.to_device(_gpu_mul_data()[0])
        dst = cuda.device_array_like(src)
        return Impl("dst.copy_to_device(src)" + _SYNC,
                    {"dst": dst, "src": src, "sync": cuda.synchronize}, lambda: None)
    src = torch.from_numpy(_gpu_mul_data()[0]).to(dev)
    dst = torch.empty_like(src)
    return Impl("dst.copy_(src)" + _SYNC, {"dst": dst, "src": src, "sync": torch.cuda.synchronize},
                lambda: None)


GPU_MUL_BANDWIDTH = Bandwidth(
    nbytes=3 * 4 * GPU_N, baseline=_gpu_copy, baseline_nbytes=2 * 4 * GPU_N,
    baseline_label="device-to-device copy of 64M float32 (PyTorch's copy_, else numba's)",
    counting="a * b reads 2 arrays and writes 1: 3 x 4 B x N; the copy moves 2 x 4 B x N")


def _gpu_matmul_data():
    r = _rng(10)
    return (r.standard_normal((GPU_MATMUL_N, GPU_MATMUL_N), dtype=np.float32),
            r.standard_normal((GPU_MATMUL_N, GPU_MATMUL_N), dtype=np.float32))


def _gpu_matmul_reference():
    a, b = _gpu_matmul_data()
    return a.astype(np.float64) @ b.astype(np.float64)


def _gpu_matmul_kg(kg):
    _require_gpu()
    a, b = (kg.tensor(v, device="cuda") for v in _gpu_matmul_data())
    return Impl("matmul(a, b)" + _SYNC,
                {"matmul": kg.matmul, "a": a, "b": b, "sync": kg.cuda.synchronize},
                lambda: kg.matmul(a, b).cpu().numpy())


def _gpu_matmul_torch(torch):
    dev = _torch_cuda(torch)
    torch.backends.cuda.matmul.allow_tf32 = False  # cuBLAS in true fp32, as ours
    a, b = (torch.from_numpy(v).to(dev) for v in _gpu_matmul_data())
    return Impl("matmul(a, b)" + _SYNC,
                {"matmul": torch.matmul, "a": a, "b": b, "sync": torch.cuda.synchronize},
                lambda: torch.matmul(a, b).cpu().numpy())


# 11. one SGD step of an MLP 64 -> 128 (relu) -> 10, mean softmax cross-entropy
MLP_IN, MLP_HIDDEN, MLP_CLASSES, MLP_LR = 64, 128, 10, 0.1


def _mlp_data(batch: int):
    r = _rng(11)
    x = r.standard_normal((batch, MLP_IN), dtype=np.float32)
    labels = r.integers(0, MLP_CLASSES, batch).astype(np.int64)
    w1 = (r.standard_normal((MLP_IN, MLP_HIDDEN)) * np.sqrt(2 / MLP_IN)).astype(np.float32)
    w2 = (r.standard_normal((MLP_HIDDEN, MLP_CLASSES)) / np.sqrt(MLP_HIDDEN)) \
        .astype(np.float32)
    b1, b2 = np.zeros(MLP_HIDDEN, np.float32), np.zeros(MLP_CLASSES, np.float32)
    return x, labels, [w1, b1, w2, b2]


def _mlp_step_np(np_, x, labels, params, dtype):
    """One SGD step by hand: returns the loss before the step; updates ``params`` in place."""
    w1, b1, w2, b2 = params
    n = x.shape[0]
    a1 = x @ w1 + b1
    h = np_.maximum(a1, 0)
    z = h @ w2 + b2
    z = z - z.max(axis=1, keepdims=True)
    e = np_.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    rows = np_.arange(n)
    loss = -np_.log(p[rows, labels]).mean()
    dz = p
    dz[rows, labels] -= 1
    dz /= dtype(n)
    dw2, db2 = h.T @ dz, dz.sum(axis=0)
    da1 = (dz @ w2.T) * (a1 > 0)
    dw1, db1 = x.T @ da1, da1.sum(axis=0)
    for w, g in zip(params, (dw1, db1, dw2, db2)):
        w -= dtype(MLP_LR) * g
    return loss


def _mlp_reference(batch):
    def reference():
        x, labels, params = _mlp_data(batch)
        params = [w.astype(np.float64) for w in params]
        loss = _mlp_step_np(np, x.astype(np.float64), labels, params, np.float64)
        return [np.array(loss), params]
    return reference


def _mlp_kg(batch):
    def setup(kg):
        x0, y0, w0 = _mlp_data(batch)
        g = kg.Graph()
        with g.as_default():
            x = kg.placeholder(kg.float32, shape=(None, MLP_IN))
            labels = kg.placeholder(kg.int64, shape=(None,))
            params = [kg.Variable(w) for w in w0]
            w1, b1, w2, b2 = params
            logits = kg.matmul(kg.relu(kg.matmul(x, w1) + b1), w2) + b2
            loss = kg.cross_entropy(logits, labels)
            grads = kg.gradients(loss, params)
            train = kg.group(*[w.assign_sub(gw * MLP_LR) for w, gw in zip(params, grads)])
            init = kg.global_variables_initializer()
        sess, feed = kg.Session(graph=g), {x: x0, labels: y0}

        def output():  # one step from the initial weights: the loss, then the new weights
            sess.run(init)
            value = sess.run([loss, train], feed)[0]
            return [value, sess.run(params)]

        return Impl(_MLP_RUN, {"sess": sess, "train": train, "feed": feed, "init": init},
                    output, close=sess.close)
    return setup


def _mlp_tf(batch):
    def setup(tf):
        v1 = tf.compat.v1
        x0, y0, w0 = _mlp_data(batch)
        g = tf.Graph()
        with g.as_default():
            x = v1.placeholder(tf.float32, shape=(None, MLP_IN))
            labels = v1.placeholder(tf.int64, shape=(None,))
            params = [v1.Variable(w) for w in w0]
            w1, b1, w2, b2 = params
            logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits))
            grads = v1.gradients(loss, params)
            train = tf.group(*[v1.assign_sub(w, gw * MLP_LR) for w, gw in zip(params, grads)])
            init = v1.global_variables_initializer()
        sess, feed = v1.Session(graph=g), {x: x0, labels: y0}

        def output():
            sess.run(init)
            value = sess.run([loss, train], feed)[0]
            return [value, sess.run(params)]

        return Impl(_MLP_RUN, {"sess": sess, "train": train, "feed": feed}, output,
                    close=sess.close)
    return setup


def _mlp_torch(batch):
    def setup(torch):
        import torch.nn.functional as F

        x0, y0, w0 = _mlp_data(batch)
        x, labels = torch.from_numpy(x0), torch.from_numpy(y0)
        params = [torch.tensor(w, requires_grad=True) for w in w0]

        def step():
            w1, b1, w2, b2 = params
            loss = F.cross_entropy(torch.relu(x @ w1 + b1) @ w2 + b2, labels)
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for w, gw in zip(params, grads):
                    w -= MLP_LR * gw
            return loss

        def output():
            with torch.no_grad():
                for w, w_init in zip(params, w0):
                    w.copy_(torch.from_numpy(w_init))
            loss = step()
            return [loss.detach().numpy(), [w.detach().numpy() for w in params]]

        return Impl("step()", {"step": step}, output)
    return setup


def _mlp_np(batch):
    def setup(np_):
        x, labels, w0 = _mlp_data(batch)
        params = [w.copy() for w in w0]

        def output():
            for w, w_init in zip(params, w0):
                w[...] = w_init
            loss = _mlp_step_np(np_, x, labels, params, np_.float32)
            return [np_.asarray(loss, np_.float32), params]

        return Impl("step(np, x, labels, params, float32)",
                    {"step": _mlp_step_np, "np": np_, "x": x, "labels": labels,
                     "params": params, "float32": np_.float32}, output)
    return setup


_MLP_RUN = "sess.run(train, feed_dict=feed)"


def _mlp_case(case_id, batch, target):
    return Case(case_id, f"Session.run MLP SGD step, batch {batch}", "us",
                f"One SGD step (lr {MLP_LR}) of 64 -> 128 relu -> 10 with mean softmax "
                f"cross-entropy on a batch of {batch}: kernelgraph and TF1 run the train op "
                "(assign_sub of every weight) of a static graph; torch does the same with "
                "autograd.grad and in-place updates; numpy is the step written by hand.",
                _mlp_reference(batch),
                {"kernelgraph": _mlp_kg(batch), "numpy": _mlp_np(batch),
                 "torch": _mlp_torch(batch), "tensorflow": _mlp_tf(batch)}, target)


NO_GPU_NP = "NumPy has no GPU arrays"
NO_GPU_TF = "not compared on the GPU (TF1 here is the CPU build)"

CASES = (
    Case("1", "eager a + b, shape (1,)", "us",
         "a + b on two 1-element float32 tensors without grad (numpy: arrays).",
         lambda: np.array([ADD_A + ADD_B]),
         {"kernelgraph": _add_kg, "numpy": _add_np, "torch": _add_torch,
          "tensorflow": NO_EAGER_TF},
         Target(max_us=0.6, max_ratio=(("torch", 0.65),))),
    Case("2a", "eager 100-op chain, forward", "us",
         "chain(x) on a (16,) float32 tensor with requires_grad=True.",
         lambda: reference_chain(CHAIN_INPUT),
         {"kernelgraph": _chain_fwd_kg, "numpy": _chain_fwd_np, "torch": _chain_fwd_torch,
          "tensorflow": NO_EAGER_TF}),
    Case("2b", "eager 100-op chain, fwd+backward", "us",
         "x.grad = None; chain(x).sum().backward().",
         lambda: reference_chain_grad(CHAIN_INPUT),
         {"kernelgraph": _chain_fb_kg, "numpy": NO_AUTOGRAD_NP, "torch": _chain_fb_torch,
          "tensorflow": NO_EAGER_TF},
         Target(max_us=100.0)),
    Case("3", "Session.run seed a*b + gradients", "us",
         "sess.run([c, grads], feed_dict={a: 15.0, b: 20.0}) with c = a*b and "
         "grads = gradients(c, [a, b]); numpy computes c = a*b, dc/da = b, dc/db = a by hand.",
         lambda: [np.array(300.0), [np.array(20.0), np.array(15.0)]],
         {"kernelgraph": _seed_kg, "numpy": _seed_np, "torch": NO_SESSION_TORCH,
          "tensorflow": _seed_tf},
         Target(max_us=10.0)),
    Case("4", "Session.run 100-op chain, forward", "us",
         "sess.run(y, feed_dict={x: x0}) with y = chain(x), x a (16,) float32 placeholder.",
         lambda: reference_chain(CHAIN_INPUT),
         {"kernelgraph": _session_chain_kg, "numpy": _session_chain_np,
          "torch": NO_SESSION_TORCH, "tensorflow": _session_chain_tf},
         Target(max_us=15.0)),
    Case("5", "graph construction, 100-op chain", "us/node",
         "A fresh graph, a placeholder and chain(x), per node of the graph built (each "
         "scalar op also adds a constant node).",
         lambda: reference_chain(CHAIN_INPUT),
         {"kernelgraph": _build_kg, "numpy": NO_GRAPH_NP, "torch": NO_SESSION_TORCH,
          "tensorflow": _build_tf},
         Target(max_us=5.0)),
    Case("6", "eager matmul 1024x1024", "us",
         "matmul(a, b) of two (1024, 1024) float32 tensors without grad; TF1 runs "
         "sess.run(tf.matmul(a, b)) feeding both (placeholders: constants would be folded). "
         "Target: >= 0.9x NumPy's speed, i.e. time <= NumPy's time / 0.9.",
         _matmul_reference,
         {"kernelgraph": _matmul_kg, "numpy": _matmul_np, "torch": _matmul_torch,
          "tensorflow": _matmul_tf},
         Target(max_ratio=(("numpy", 1 / 0.9),))),
    Case("7", "eager a * b + c, 10M float32", "us",
         "a * b + c on three (10_000_000,) float32 tensors without grad; TF1 runs "
         "sess.run(a * b + c) feeding all three. Bandwidth: 4 arrays x 4 B x N bytes per call "
         "(the minimal traffic of one fused pass), against np.copyto's 2 x 4 B x N, timed in "
         "the same run.",
         _fma_reference,
         {"kernelgraph": _fma_kg, "numpy": _fma_np, "torch": _fma_torch, "tensorflow": _fma_tf},
         Target(min_bandwidth=0.85), bandwidth=FMA_BANDWIDTH),
    Case("8a", "CNN train step, kg eager", "us",
         "One forward+backward of conv2d 1->8 3x3 pad 1, relu, conv2d 8->8 3x3 pad 1, relu, "
         "flatten, linear 2048->10 (+ bias), mean softmax cross-entropy, on a batch of 32 "
         "1x16x16 images; outputs the loss and the 4 weight gradients. kernelgraph eager "
         "(tensors, loss.backward()); torch the same in eager mode (F.conv2d, NCHW); TF1 "
         "sess.run([loss, grads]) with tf.nn.conv2d on NHWC data and HWIO filters "
         "(transposed once, outside timing). Same weights and data everywhere.",
         reference_cnn_step,
         {"kernelgraph": _cnn_eager_kg, "numpy": NO_AUTOGRAD_NP, "torch": _cnn_torch,
          "tensorflow": _cnn_tf},
         Target(max_ratio=(("tensorflow", 1.0),))),
    Case("8b", "CNN train step, kg static", "us",
         "The same step as 8a in kernelgraph's static mode: placeholders for x and the labels, "
         "Variables for the weights, grads = kg.gradients(loss, weights), timing "
         "sess.run([loss, grads], feed_dict=feed); torch and TF1 as in 8a.",
         reference_cnn_step,
         {"kernelgraph": _cnn_static_kg, "numpy": NO_AUTOGRAD_NP, "torch": _cnn_torch,
          "tensorflow": _cnn_tf},
         Target(max_ratio=(("tensorflow", 1.0),))),
    Case("9", "CUDA a * b, 64M float32", "us",
         "a * b on two (2**26,) float32 CUDA tensors, then a device synchronize; torch the "
         "same on its CUDA tensors. Bandwidth: 3 arrays x 4 B x N per call against a "
         "device-to-device copy timed in the same run. Needs a GPU.",
         _gpu_mul_reference,
         {"kernelgraph": _gpu_mul_kg, "numpy": NO_GPU_NP, "torch": _gpu_mul_torch,
          "tensorflow": NO_GPU_TF},
         Target(min_bandwidth=0.7), bandwidth=GPU_MUL_BANDWIDTH),
    Case("10", "CUDA matmul 4096x4096", "us",
         "matmul(a, b) of two (4096, 4096) float32 CUDA tensors (kernelgraph's tiled numba "
         "kernel), then a synchronize; torch calls cuBLAS in fp32 (TF32 off). Target: >= 0.3x "
         "cuBLAS's speed. Needs a GPU and, for the ratio, a CUDA build of PyTorch.",
         _gpu_matmul_reference,
         {"kernelgraph": _gpu_matmul_kg, "numpy": NO_GPU_NP, "torch": _gpu_matmul_torch,
          "tensorflow": NO_GPU_TF},
         Target(max_ratio=(("torch", 1 / 0.3),)), rtol=1e-3),
    _mlp_case("11a", 1, Target(max_us=30.0)),
    _mlp_case("11b", 64, Target(max_us=80.0)),
    _mlp_case("11c", 1024, Target(max_ratio=(("numpy", 1.1),))),
)


# -- the correctness check --------------------------------------------------------------------
def check(output, reference, rtol: float = 1e-4) -> str | None:
    """None when ``output`` matches ``reference`` (same structure and shapes, float32
    values within ``rtol`` relative error of the float64 reference), else what differs."""
    got = [np.asarray(v) for v in nest.flatten(output)]
    want = [np.asarray(v) for v in nest.flatten(reference)]
    if len(got) != len(want):
        return f"{len(got)} values where {len(want)} were expected"
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return f"value {i} has shape {g.shape}, expected {w.shape}"
        if g.dtype != np.float32:
            return f"value {i} has dtype {g.dtype}, expected float32"
        scale = float(np.max(np.abs(w))) if w.size else 0.0
        if not np.allclose(g, w, rtol=rtol, atol=rtol * 1e-2 * scale):
            err = float(np.max(np.abs(g.astype(np.float64) - w)))
            return f"value {i} differs from the reference by up to {err:.3g}"
    return None


def timed_cell(make_impl, settings, reference=None, rtol: float = 1e-4) -> tuple[dict, object]:
    """One side of a row timed: ``make_impl()`` builds its :class:`Impl`, whose output is
    checked against ``reference()`` (a callable, or None for no check), then timed with
    ``settings``. Returns (the results cell: us, check, stmt, ...; the output). A side that
    is unavailable or fails gives a cell with a reason, never an exception: one failing
    framework must not stop the table."""
    impl = None
    try:
        impl = make_impl()
        output = impl.output()
        problem = check(output, reference(), rtol=rtol) if reference is not None else None
        timing = measure(impl.stmt, impl.namespace, repeat=settings.repeat,
                         min_time=settings.min_time, number=settings.number, per=impl.per,
                         gc=settings.gc)
    except Unavailable as e:  # e.g. no GPU on this machine: n/a, not an error
        return {"us": None, "reason": str(e)}, None
    except Exception as e:  # noqa: BLE001 - see the docstring
        return {"us": None, "reason": f"error: {type(e).__name__}: {e}", "error": True}, None
    finally:
        if impl is not None and impl.close is not None:
            impl.close()
    cell = timing.as_json()
    cell["check"] = "ok" if problem is None else f"MISMATCH: {problem}"
    cell["stmt"] = impl.stmt
    cell.update(impl.extra)
    return cell, output


# The training rows (12: eager MLP steps, 13: the RNN task) live in their own module.
from .training import CASES as _TRAINING_CASES  # noqa: E402 - needs the helpers above

CASES = CASES + _TRAINING_CASES

# the normalisation rows (15: BatchNorm2d forward and backward)
from .norm import CASES as _NORM_CASES  # noqa: E402 - needs the helpers above

CASES = CASES + _NORM_CASES

# a 2-layer nn.LSTM training step (16)
from .lstm_step import CASES as _LSTM_STEP_CASES  # noqa: E402 - needs the helpers above

CASES = CASES + _LSTM_STEP_CASES

# the MNIST CNN step a learner trains (17), in the PyTorch and the TF1 program
from .cnn import CASES as _CNN_CASES  # noqa: E402 - needs the helpers above

CASES = CASES + _CNN_CASES

# the pool-of-devices rows (20: transfers, data-parallel training on Dask)
from .distributed import CASES as _DISTRIBUTED_CASES  # noqa: E402 - needs the helpers above

CASES = CASES + _DISTRIBUTED_CASES
