"""``kg.distributions`` (Categorical, Normal, Multinomial) against PyTorch's recorded
log-probabilities, entropies, gradients and seeded samples
(tests/recorded/record_torch_runtime.py)."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph import distributions as D

PROBS = [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]
LOGITS = [[1.0, -0.5, 0.25, 2.0], [0.0, 0.0, 0.0, 0.0], [-3.0, 1.0, 4.0, 0.5]]


def close(got, want, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=rtol, atol=atol)


@pytest.fixture(scope="module")
def want(recorded):
    return recorded("torch_runtime")["distribution"]


def test_categorical_from_probs(want):
    w = want["categorical_probs"]
    probs = kg.tensor(PROBS, requires_grad=True)
    c = D.Categorical(probs=probs)
    lp, ent = c.log_prob(kg.tensor([2, 0])), c.entropy()
    (lp.sum() + ent.sum()).backward()
    close(lp.tolist(), w["log_prob"])
    close(ent.tolist(), w["entropy"])
    close(probs.grad.tolist(), w["grad"])
    close(c.probs.tolist(), w["probs"])
    assert list(c.batch_shape) == w["batch_shape"]
    kg.manual_seed(0)
    assert c.sample((5,)).tolist() == w["sample"]


def test_categorical_from_logits(want):
    w = want["categorical_logits"]
    logits = kg.tensor(LOGITS, requires_grad=True)
    c = D.Categorical(logits=logits)
    lp, ent = c.log_prob(kg.tensor([[3, 0, 2], [1, 1, 1]])), c.entropy()
    (lp.sum() * 2 + ent.sum()).backward()
    close(lp.tolist(), w["log_prob"])
    close(ent.tolist(), w["entropy"])
    close(logits.grad.tolist(), w["grad"])
    close(c.logits.tolist(), w["logits"])
    kg.manual_seed(1)
    assert c.sample().tolist() == w["sample"]


def test_normal(want):
    w = want["normal"]
    loc = kg.tensor([0.0, 1.0, -2.0], requires_grad=True)
    scale = kg.tensor([1.0, 0.5, 2.0], requires_grad=True)
    n = D.normal.Normal(loc, scale)
    value = kg.tensor([0.3, 1.5, -1.0])
    lp, ent = n.log_prob(value), n.entropy()
    kg.manual_seed(2)
    sample = n.sample((2,))
    r = n.rsample((4,))
    (lp.sum() + ent.sum() + (r ** 2).sum()).backward()
    close(lp.tolist(), w["log_prob"])
    close(ent.tolist(), w["entropy"])
    close(n.cdf(value).tolist(), w["cdf"])
    close(sample.tolist(), w["sample"])
    close(r.tolist(), w["rsample"])
    close(loc.grad.tolist(), w["grad_loc"])
    close(scale.grad.tolist(), w["grad_scale"])
    assert not sample.requires_grad and r.requires_grad


def test_multinomial(want):
    w = want["multinomial"]
    probs = kg.tensor([0.2, 0.0, 0.3, 0.5], requires_grad=True)
    m = D.multinomial.Multinomial(6, probs=probs)
    lp = m.log_prob(kg.tensor([[1.0, 0.0, 2.0, 3.0], [0.0, 0.0, 6.0, 0.0]]))
    lp.sum().backward()
    close(lp.tolist(), w["log_prob"])
    close(probs.grad.tolist(), w["grad"], rtol=1e-5, atol=1e-4)
    close(m.mean.tolist(), w["mean"])
    kg.manual_seed(3)
    assert m.sample((3,)).tolist() == w["sample"]


def test_policy_gradient_reaches_the_logits():
    logits = kg.zeros(3, requires_grad=True)
    d = D.Categorical(logits=logits)
    (-d.log_prob(kg.tensor(1)) * 2.0).backward()
    close(logits.grad.tolist(), [2 / 3, -4 / 3, 2 / 3])


def test_bad_arguments():
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical()
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Categorical(probs=kg.ones(2), logits=kg.ones(2))
    with pytest.raises(NotImplementedError):
        D.Categorical(probs=kg.ones(2)).rsample()
