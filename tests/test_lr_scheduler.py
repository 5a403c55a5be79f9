"""``kg.optim.lr_scheduler`` (``torch.optim.lr_scheduler``): the learning rates and the
weights they give, against numbers recorded from torch 2.13 (the cases of
tests/recorded/record_torch_nn.py run on both), and the scheduler API."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.nn.functional as F
import kernelgraph.optim.lr_scheduler as sched
import kernelgraph.utils.data as data
from kernelgraph.optim.lr_scheduler import ExponentialLR, StepLR
from tests.recorded.record_torch_nn import SCHEDULERS, case_plateau, namespaces, scheduler_run

T = namespaces(kg, kg.nn, F, kg.optim, sched, data)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_matches_recorded_torch(name, recorded):
    want = recorded("torch_nn")["cases"][f"sched_{name}"]
    got = scheduler_run(T, name)
    assert got["last_epoch"] == want["last_epoch"]
    # the rates are Python floats computed by the same chained formulas: equal to the bit
    assert got["last_lr"] == want["last_lr"] and got["group_lr"] == want["group_lr"]
    np.testing.assert_allclose(got["w"], want["w"], rtol=1e-6)


def test_reduce_on_plateau_matches_recorded_torch(recorded):
    assert case_plateau(T) == recorded("torch_nn")["cases"]["sched_plateau"]


def opt_for(lr=1.0, groups=1):
    params = [kg.zeros(1).requires_grad_() for _ in range(groups)]
    return kg.optim.SGD([{"params": [p], "lr": lr * (k + 1)} for k, p in enumerate(params)],
                        lr=lr)


def test_every_group_is_scheduled():
    opt = opt_for(groups=2)
    s = ExponentialLR(opt, gamma=0.5)
    assert [g["initial_lr"] for g in opt.param_groups] == [1.0, 2.0]
    s.step()
    assert s.get_last_lr() == [0.5, 1.0] and s.base_lrs == [1.0, 2.0]


def test_step_with_an_epoch_uses_the_closed_form():
    opt = opt_for()
    s = StepLR(opt, step_size=2, gamma=0.1)
    s.step(5)
    assert s.last_epoch == 5 and s.get_last_lr() == [1.0 * 0.1 ** 2]


def test_state_dict_round_trip():
    opt = opt_for()
    s = StepLR(opt, step_size=1, gamma=0.5)
    s.step()
    state = s.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 1
    t = StepLR(opt_for(), step_size=1, gamma=0.5)
    t.load_state_dict(state)
    assert t.last_epoch == 1 and t.get_last_lr() == [0.5]


def test_a_static_train_op_reads_a_fed_rate():
    """In a graph the schedule is fed: the rate is a placeholder the loop fills from the
    scheduler (the optimiser's group lr), as TF1 programs feed a decayed rate."""
    opt_state = opt_for(lr=0.5)
    s = StepLR(opt_state, step_size=1, gamma=0.5)
    g = kg.Graph()
    with g.as_default():
        w = kg.Variable(np.array([1.0], np.float32))
        lr = kg.placeholder(kg.float32, shape=[])
        train = kg.optim.SGD([w], lr=lr).minimize(kg.sum(w * w))
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        for _ in range(2):
            sess.run(train, {lr: s.get_last_lr()[0]})
            s.step()
        # 1 - 0.5 * 2 = 0; then 0 - 0.25 * 0 = 0
        assert sess.run(w).tolist() == [0.0]


def test_errors():
    with pytest.raises(TypeError, match="is not an Optimizer"):
        StepLR(object(), step_size=1)
    with pytest.raises(KeyError, match="initial_lr"):
        StepLR(opt_for(), step_size=1, last_epoch=3)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        sched.ReduceLROnPlateau(opt_for(), factor=2.0)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        sched.LambdaLR(opt_for(groups=2), [lambda e: 1.0])
