"""Total derivatives: ``kg.gradients(ys, xs)`` and ``kg.autograd.grad`` where one x is
computed from another (``t = 2 * x; z = 3 * t``: dz/dx is 6, along the path through t), ys
that are xs, repeated xs and ys, grad_ys, an x that reaches no y, against TF1 and PyTorch
(tests/recorded/record_gradients.py, gradients.json) and finite differences.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import kernelgraph as kg
from tests.recorded.record_gradients import EAGER, MS, STATIC, XS, X


def _compare(got, want, rtol=1e-5):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        if w is None:
            assert g is None, f"gradient {k}: expected None, got {g}"
        else:
            assert g is not None, f"gradient {k}: expected {w}, got None"
            np.testing.assert_allclose(np.asarray(g, dtype=np.float64), w, rtol=rtol,
                                       atol=1e-6, err_msg=f"gradient {k}")


def _static(name, device="cpu", optimize=True):
    g = kg.Graph()
    with g.as_default(), kg.device(device):
        grads, feeds = STATIC[name](kg)
    with kg.Session(g, optimize=optimize) as sess:
        got = sess.run([d for d in grads if d is not None], dict(feeds))
    it = iter(got)
    return [None if d is None else next(it) for d in grads]


@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("name", STATIC)
def test_gradients_match_tf1(name, optimize, recorded):
    _compare(_static(name, optimize=optimize), recorded("gradients")["static"][name]["value"])


@pytest.mark.parametrize("name", ["chain", "ys_are_xs", "broadcast", "diamond"])
def test_gradients_match_tf1_on_cuda(name, recorded):
    _compare(_static(name, "cuda"), recorded("gradients")["static"][name]["value"])


def _on(device):
    """kernelgraph as the recorded eager cases see it, with every new tensor on ``device``."""
    def tensor(data, requires_grad=False):
        return kg.tensor(data, requires_grad=requires_grad, device=device)

    return SimpleNamespace(tensor=tensor, autograd=kg.autograd, tanh=kg.tanh, exp=kg.exp)


def _eager(name, device="cpu"):
    out = EAGER[name](_on(device))
    return [None if t is None else kg.tensor(t).to("cpu").numpy() for t in out]


@pytest.mark.parametrize("name", EAGER)
def test_autograd_matches_pytorch(name, recorded):
    want = recorded("gradients")["eager"][name]
    if "error" in want:
        with pytest.raises(Exception) as info:  # noqa: PT011 - the type is compared below
            _eager(name)
        assert type(info.value).__name__ == want["error"]["type"]
        assert str(info.value) == want["error"]["message"]
        return
    _compare(_eager(name), want["value"])


@pytest.mark.parametrize("name", ["grad_chain", "grad_outputs_are_inputs", "grad_broadcast",
                                  "grad_hook_on_input"])
def test_autograd_matches_pytorch_on_cuda(name, recorded):
    _compare(_eager(name, "cuda"), recorded("gradients")["eager"][name]["value"])


def test_a_kept_gradient_is_what_arrived_while_the_walk_goes_on():
    """t's gradient is the answer for t and also flows on to x: the two must not share one
    array that a later step changes (x's gradient sums two paths into a new array)."""
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    t = x * 3.0
    z = (t * x).sum()
    gx, gt = kg.autograd.grad(z, [x, t])
    np.testing.assert_allclose(gt.numpy(), [1.0, 2.0])  # dz/dt = x
    np.testing.assert_allclose(gx.numpy(), [6.0, 12.0])  # 3x (via t) + t = 6x


# -- finite differences --------------------------------------------------------------------------
# Each program in float64, its gradients with respect to every x (a placeholder or an
# intermediate), against central differences of the fetched loss. An intermediate is
# perturbed by feeding it: everything after it is recomputed, what made it is not, which
# is the derivative kg.gradients gives for it.
EPS = 1e-6


def _three_levels():
    x = kg.placeholder(kg.float64, shape=[3])
    t = kg.tanh(x) * x
    s = t * t + x
    return kg.reduce_sum(s * 2.0), [x, t, s], {x: np.array(XS)}


def _broadcast():
    x = kg.placeholder(kg.float64, shape=[3])
    m = kg.placeholder(kg.float64, shape=[2, 3])
    t = x + m
    return kg.reduce_sum(t * t), [x, t, m], {x: np.array(XS), m: np.array(MS)}


def _diamond():
    x = kg.placeholder(kg.float64, shape=[])
    a = x * x
    t = a * kg.exp(x)
    return t + a, [x, a, t], {x: np.array(X)}


@pytest.mark.parametrize("make", [_three_levels, _broadcast, _diamond])
def test_gradients_match_finite_differences(make):
    g = kg.Graph()
    with g.as_default():
        z, xs, feeds = make()
        grads = kg.gradients(z, xs)
    with kg.Session(g) as sess:
        values = sess.run(xs, feeds)
        got = sess.run(grads, feeds)
        for x, base, grad in zip(xs, values, got):
            base = np.asarray(base, np.float64)
            numeric = np.zeros_like(base)
            for k in np.ndindex(base.shape):
                step = np.zeros_like(base)
                step[k] = EPS
                fed = {**feeds, x: base + step}
                up = sess.run(z, fed)
                fed[x] = base - step
                numeric[k] = (up - sess.run(z, fed)) / (2 * EPS)
            np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8, err_msg=x.name)


def test_autograd_matches_finite_differences():
    """The eager three-level program: dz/dx through t and s, dz/dt through s, dz/ds."""
    x = kg.tensor(np.array(XS), requires_grad=True)
    t = kg.tanh(x) * x
    s = t * t + x
    gx, gt, gs = kg.autograd.grad((s * 2.0).sum(), [x, t, s])

    def z(xv=None, tv=None, sv=None):
        xv = np.array(XS) if xv is None else xv
        tv = np.tanh(xv) * xv if tv is None else tv
        sv = tv * tv + xv if sv is None else sv
        return float(np.sum(sv * 2.0))

    base = {"xv": np.array(XS), "tv": t.detach().numpy(), "sv": s.detach().numpy()}
    for key, got in (("xv", gx), ("tv", gt), ("sv", gs)):
        numeric = np.zeros(3)
        for k in range(3):
            step = np.zeros(3)
            step[k] = EPS
            # What comes after the perturbed value is recomputed, what made it is not.
            numeric[k] = (z(**{key: base[key] + step})
                          - z(**{key: base[key] - step})) / (2 * EPS)
        np.testing.assert_allclose(got.numpy(), numeric, rtol=1e-6, err_msg=key)
