"""``kg.optim.LBFGS`` against PyTorch's recorded steps (tests/recorded/record_torch_runtime.py):
plain steps and the strong-Wolfe line search, with a short history so that old pairs are
dropped."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg


def problem(kind):
    """The same problems as record_torch_runtime.py's lbfgs_problem."""
    if kind == "rosenbrock":
        x = kg.tensor([-1.5, 2.0], requires_grad=True)
        return [x], lambda: (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    w = kg.tensor([[0.1, -0.2, 0.3]], requires_grad=True)
    b = kg.tensor([0.05], requires_grad=True)
    xs = kg.linspace(-1.0, 1.0, 24).reshape(8, 3)
    ys = kg.sin(xs @ kg.tensor([[0.5], [-1.0], [2.0]])) + 0.25
    return [w, b], lambda: (((xs @ w.t() + b) - ys) ** 2).mean()


def test_lbfgs_follows_pytorchs_steps(recorded):
    for case in recorded("torch_runtime")["lbfgs"]:
        params, loss_fn = problem(case["problem"])
        opt = kg.optim.LBFGS(params, **case["kwargs"])

        def closure(opt=opt, loss_fn=loss_fn):
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        for want in case["trajectory"]:
            loss = opt.step(closure)
            st = opt.state[params[0]]
            assert (st["func_evals"], st["n_iter"]) == (want["func_evals"], want["n_iter"]), case
            np.testing.assert_allclose(float(loss), want["loss"], rtol=1e-6, atol=1e-7)
            for p, w in zip(params, want["params"], strict=True):
                np.testing.assert_allclose(p.tolist(), w, rtol=1e-6, atol=2e-7)


def test_lbfgs_refuses_what_pytorch_refuses():
    x = kg.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        kg.optim.LBFGS([x], line_search_fn="backtracking")
    with pytest.raises(ValueError, match="Invalid learning rate"):
        kg.optim.LBFGS([x], lr=-1.0)
    with pytest.raises(ValueError, match="parameter groups"):
        kg.optim.LBFGS([{"params": [x]}, {"params": [kg.zeros(1, requires_grad=True)]}])
    with pytest.raises(NotImplementedError, match="eager mode only"):
        kg.optim.LBFGS([x]).minimize(x.sum())
    with pytest.raises(TypeError):
        kg.optim.LBFGS([x]).step()  # PyTorch's step(closure) has no default either
    with pytest.raises(RuntimeError, match="needs a closure"):
        kg.optim.LBFGS([x]).step(None)


def test_lbfgs_stops_at_once_at_a_minimum():
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    opt = kg.optim.LBFGS([x])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = ((x - kg.tensor([1.0, 2.0])) ** 2).sum()
        loss.backward()
        return loss
    assert float(opt.step(closure)) == 0.0 and len(calls) == 1
    assert x.tolist() == [1.0, 2.0]


def test_lbfgs_state_dict_resumes_the_same_steps(recorded):
    case = recorded("torch_runtime")["lbfgs"][0]  # Rosenbrock, history 3: pairs dropped

    def make():
        params, loss_fn = problem(case["problem"])
        opt = kg.optim.LBFGS(params, **case["kwargs"])

        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        return params, opt, closure
    params, opt, closure = make()
    opt.step(closure)
    saved, values = opt.state_dict(), [p.detach().clone() for p in params]
    opt.step(closure)
    params2, opt2, closure2 = make()
    with kg.no_grad():
        for p, v in zip(params2, values, strict=True):
            p.copy_(v)
    opt2.load_state_dict(saved)
    opt2.step(closure2)
    assert [p.tolist() for p in params2] == [p.tolist() for p in params]
    assert [p.tolist() for p in params] == case["trajectory"][1]["params"]
