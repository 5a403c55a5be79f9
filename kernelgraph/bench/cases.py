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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

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
    """The straight-line Python source of ``chain(x)`` for the op sequence ``chain``."""
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
    """What the project must reach: at most ``max_us``, and kernelgraph/other ratios at most
    ``max_ratio[other]``."""

    max_us: float | None = None
    max_ratio: tuple[tuple[str, float], ...] = ()

    def describe(self, unit: str) -> str:
        parts = [f"<= {self.max_us:g} {unit}"] if self.max_us is not None else []
        parts += [f"<= {r:g}x {name}" for name, r in self.max_ratio]
        return ", ".join(parts)

    def evaluate(self, kg_us: float | None, ratios: dict) -> tuple[bool | None, list[str]]:
        """(passed, unchecked): passed is None when nothing could be checked."""
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
        return (all(checks) if checks else None), unchecked


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    unit: str
    description: str
    reference: Callable[[], object]
    setups: dict  # framework -> setup(module) -> Impl, or a str: why it is n/a
    target: Target | None = None


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
          "torch": NO_SESSION_TORCH, "tensorflow": _session_chain_tf}),
    Case("5", "graph construction, 100-op chain", "us/node",
         "A fresh graph, a placeholder and chain(x), per node of the graph built (each "
         "scalar op also adds a constant node).",
         lambda: reference_chain(CHAIN_INPUT),
         {"kernelgraph": _build_kg, "numpy": NO_GRAPH_NP, "torch": NO_SESSION_TORCH,
          "tensorflow": _build_tf},
         Target(max_us=5.0)),
)


# -- the correctness check --------------------------------------------------------------------
def _flatten(value, out):
    if isinstance(value, list | tuple):
        for v in value:
            _flatten(v, out)
    else:
        out.append(np.asarray(value))
    return out


def check(output, reference, rtol: float = 1e-4) -> str | None:
    """None when ``output`` matches ``reference`` (same structure and shapes, float32
    values within ``rtol`` relative error of the float64 reference), else what differs."""
    got, want = _flatten(output, []), _flatten(reference, [])
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
