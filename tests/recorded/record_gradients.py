"""Record total derivatives from TF1's ``tf.gradients`` and PyTorch's ``torch.autograd.grad``
/ ``.backward()``, where one x is computed from another, ys are xs, xs or ys repeat, an x
reaches no y, into ``gradients.json`` (read by tests/test_total_gradients.py).

Run with an environment that has tensorflow-cpu and torch (see README.md here)::

    python tests/recorded/record_gradients.py

The programs are written once, here, against a namespace ``ns``: TF1
(``tensorflow.compat.v1``, graph mode) or kernelgraph for :data:`STATIC`, PyTorch or
kernelgraph for :data:`EAGER`, so both frameworks run the very same program. A static case
returns ``(fetches, feeds)``, fetches a list where a gradient may be None; an eager case
returns a list of tensors (or None), or raises.
"""

from __future__ import annotations

import json
from pathlib import Path

STATIC: dict = {}
EAGER: dict = {}
X = 1.5
XS = [0.5, -1.0, 2.0]
MS = [[0.25, -0.5, 1.0], [2.0, 0.0, -1.5]]


def static(fn):
    STATIC[fn.__name__] = fn
    return fn


def eager(fn):
    EAGER[fn.__name__] = fn
    return fn


def _chain(ns):
    x = ns.placeholder(ns.float32, shape=[])
    t = 2.0 * x
    return x, t, 3.0 * t


# -- TF1 tf.gradients ----------------------------------------------------------------------------
@static
def chain(ns):
    x, t, z = _chain(ns)
    return ns.gradients(z, [x, t]), [(x, X)]


@static
def chain_xs_reversed(ns):
    x, t, z = _chain(ns)
    return ns.gradients(z, [t, x]), [(x, X)]


@static
def y_is_x(ns):
    x, _, _ = _chain(ns)
    return ns.gradients(x, x), [(x, X)]


@static
def y_is_x_with_grad_ys(ns):
    x, _, _ = _chain(ns)
    return ns.gradients(x, x, grad_ys=ns.constant(5.0)), [(x, X)]


@static
def y_is_later_x(ns):
    x, t, _ = _chain(ns)
    return ns.gradients(t, [x, t]), [(x, X)]


@static
def xs_repeated(ns):
    x, t, z = _chain(ns)
    return ns.gradients(z, [x, x, t, t]), [(x, X)]


@static
def ys_repeated(ns):
    x, t, z = _chain(ns)
    return ns.gradients([z, z], [x, t]), [(x, X)]


@static
def ys_are_xs(ns):
    x, t, z = _chain(ns)
    return ns.gradients([z, t], [x, t]), [(x, X)]


@static
def grad_ys(ns):
    x, t, z = _chain(ns)
    return ns.gradients(z, [x, t], grad_ys=ns.constant(2.0)), [(x, X)]


@static
def x_reaches_no_y(ns):
    x, t, z = _chain(ns)
    u = ns.placeholder(ns.float32, shape=[])
    return ns.gradients(z, [x, t, u]), [(x, X)]


@static
def x_after_y(ns):
    x, t, z = _chain(ns)
    return ns.gradients(t, [z, x]), [(x, X)]


@static
def three_levels(ns):
    x = ns.placeholder(ns.float32, shape=[3])
    t = ns.tanh(x) * x
    s = t * t + x
    return ns.gradients(ns.reduce_sum(s * 2.0), [x, t, s]), [(x, XS)]


@static
def broadcast(ns):
    x = ns.placeholder(ns.float32, shape=[3])
    m = ns.placeholder(ns.float32, shape=[2, 3])
    t = x + m
    return ns.gradients(ns.reduce_sum(t * t), [x, t, m]), [(x, XS), (m, MS)]


@static
def diamond(ns):
    x = ns.placeholder(ns.float32, shape=[])
    a = x * x
    t = a * ns.exp(x)
    return ns.gradients(t + a, [x, a, t]), [(x, X)]


# -- PyTorch autograd ----------------------------------------------------------------------------
def _leaf_chain(ns):
    x = ns.tensor(X, requires_grad=True)
    t = 2.0 * x
    return x, t, 3.0 * t


@eager
def grad_chain(ns):
    x, t, z = _leaf_chain(ns)
    return ns.autograd.grad(z, [x, t])


@eager
def grad_chain_inputs_reversed(ns):
    x, t, z = _leaf_chain(ns)
    return ns.autograd.grad(z, [t, x])


@eager
def grad_output_is_leaf_input(ns):
    x, _, _ = _leaf_chain(ns)
    return ns.autograd.grad(x, [x])


@eager
def grad_output_is_later_input(ns):
    x, t, _ = _leaf_chain(ns)
    return ns.autograd.grad(t, [x, t])


@eager
def grad_inputs_repeated(ns):
    x, t, z = _leaf_chain(ns)
    return ns.autograd.grad(z, [x, x, t, t])


@eager
def grad_outputs_repeated(ns):
    x, t, z = _leaf_chain(ns)
    return ns.autograd.grad([z, z], [x, t])


@eager
def grad_outputs_are_inputs(ns):
    x, t, z = _leaf_chain(ns)
    return ns.autograd.grad([z, t], [x, t])


@eager
def grad_with_grad_outputs(ns):
    x, t, z = _leaf_chain(ns)
    return ns.autograd.grad(z, [x, t], grad_outputs=ns.tensor(2.0))


@eager
def grad_unused_allowed(ns):
    x, t, z = _leaf_chain(ns)
    u = ns.tensor(1.0, requires_grad=True)
    return ns.autograd.grad(z, [x, t, u], allow_unused=True)


@eager
def grad_unused_refused(ns):
    x, t, z = _leaf_chain(ns)
    u = ns.tensor(1.0, requires_grad=True)
    return ns.autograd.grad(z, [x, u])


@eager
def grad_input_needs_no_grad(ns):
    x, t, z = _leaf_chain(ns)
    return ns.autograd.grad(z * ns.tensor(2.0), [x, ns.tensor(2.0)], allow_unused=True)


@eager
def grad_input_after_output(ns):
    x, t, z = _leaf_chain(ns)
    return ns.autograd.grad(t, [z, x], allow_unused=True)


@eager
def grad_through_detach(ns):
    x, t, _ = _leaf_chain(ns)
    z = t.detach() * x
    return ns.autograd.grad(z, [x, t], allow_unused=True)


@eager
def backward_retain_grad(ns):
    x, t, z = _leaf_chain(ns)
    t.retain_grad()
    z.backward()
    return [x.grad, t.grad]


@eager
def grad_hook_on_input(ns):
    # The hook changes what flows on to x; t's own gradient is taken before it.
    x, t, z = _leaf_chain(ns)
    t.register_hook(lambda g: g * 10.0)
    return ns.autograd.grad(z, [x, t])


@eager
def grad_retained_input(ns):
    # An input is reached (its hooks run, a retained .grad is set); nothing beyond it runs.
    x = ns.tensor(X, requires_grad=True)
    w = x * 1.0
    w.retain_grad()
    t = 2.0 * w
    t.retain_grad()
    z = 3.0 * t
    got = ns.autograd.grad(z, [t])
    return [got[0], t.grad, w.grad]


@eager
def grad_three_levels(ns):
    x = ns.tensor(XS, requires_grad=True)
    t = ns.tanh(x) * x
    s = t * t + x
    return ns.autograd.grad((s * 2.0).sum(), [x, t, s])


@eager
def grad_broadcast(ns):
    x = ns.tensor(XS, requires_grad=True)
    m = ns.tensor(MS, requires_grad=True)
    t = x + m
    return ns.autograd.grad((t * t).sum(), [x, t, m])


@eager
def grad_diamond(ns):
    x = ns.tensor(X, requires_grad=True)
    a = x * x
    t = a * ns.exp(x)
    return ns.autograd.grad(t + a, [x, a, t])


def _error(e: Exception) -> dict:
    return {"error": {"type": type(e).__name__, "message": " ".join(str(e).split())[:300]}}


def _json(values):
    import numpy as np

    return [None if v is None else np.asarray(v.detach() if hasattr(v, "detach") else v)
            .tolist() for v in values]


def _record_static() -> tuple[dict, str]:
    import os
    from types import SimpleNamespace

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf2
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    ns = SimpleNamespace(placeholder=tf.placeholder, float32=tf.float32, constant=tf.constant,
                         gradients=tf.gradients, tanh=tf.tanh, exp=tf.exp,
                         reduce_sum=tf.reduce_sum)
    cases = {}
    for name, build in STATIC.items():
        with tf.Graph().as_default():
            grads, feeds = build(ns)
            with tf.Session() as sess:
                try:
                    got = sess.run([g for g in grads if g is not None], dict(feeds))
                except Exception as e:  # noqa: BLE001 - recorded: the tests compare it
                    cases[name] = _error(e)
                    continue
            it = iter(got)
            cases[name] = {"value": _json([None if g is None else next(it) for g in grads])}
    return cases, tf2.__version__


def _record_eager() -> tuple[dict, str]:
    import torch

    cases = {}
    for name, build in EAGER.items():
        try:
            cases[name] = {"value": _json(build(torch))}
        except Exception as e:  # noqa: BLE001 - recorded: the tests compare it
            cases[name] = _error(e)
    return cases, torch.__version__


def main() -> None:
    import numpy as np

    static_cases, tf_version = _record_static()
    eager_cases, torch_version = _record_eager()
    rec = {"versions": {"tensorflow": tf_version, "torch": torch_version,
                        "numpy": np.__version__},
           "static": static_cases, "eager": eager_cases}
    path = Path(__file__).with_name("gradients.json")
    path.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
