"""kg.optim (PyTorch's formulas) and compat.v1's tf.train optimisers (TF1's): updates against
hand-written NumPy formulas, eager and static loss trajectories, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernelgraph as kg
import kernelgraph.compat.v1 as tf

W0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float64)
STEPS = 4


def grad_of(w):
    """The gradient of the test loss sum(w**3) / 3 + sum(w): w**2 + 1."""
    return w * w + 1


def eager_run(make_opt, steps=STEPS, w0=W0):
    w = kg.tensor(w0.copy(), requires_grad=True)
    opt = make_opt([w])
    history = []
    for _ in range(steps):
        opt.zero_grad()
        ((w * w * w).sum() / 3 + w.sum()).backward()
        opt.step()
        history.append(w.detach().numpy().copy())
    return history


def static_run(make_opt, steps=STEPS, w0=W0):
    g = kg.Graph()
    with g.as_default():
        w = kg.Variable(w0.copy(), name="w")
        loss = kg.sum(w * w * w) / 3 + kg.sum(w)
        train = make_opt([w]).minimize(loss)  # kg.optim or a tf.train optimiser
        init = kg.global_variables_initializer()
    history = []
    with kg.Session(g) as sess:
        sess.run(init)
        for _ in range(steps):
            sess.run(train)
            history.append(sess.run(w))
    return history


def np_sgd(lr, momentum=0.0, weight_decay=0.0, nesterov=False, steps=STEPS):
    """torch.optim.SGD's documented algorithm (dampening 0)."""
    w, buf, history = W0.copy(), None, []
    for _ in range(steps):
        g = grad_of(w) + weight_decay * w
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + g
            g = g + momentum * buf if nesterov else buf
        w = w - lr * g
        history.append(w)
    return history


def np_adam(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, steps=STEPS):
    """torch.optim.Adam's documented algorithm (amsgrad off)."""
    w, m, v, history = W0.copy(), 0.0, 0.0, []
    for t in range(1, steps + 1):
        g = grad_of(w) + weight_decay * w
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        m_hat, v_hat = m / (1 - betas[0] ** t), v / (1 - betas[1] ** t)
        w = w - lr * m_hat / (np.sqrt(v_hat) + eps)
        history.append(w)
    return history


def np_tf_adam(lr, b1=0.9, b2=0.999, eps=1e-8, steps=STEPS):
    """TF1's AdamOptimizer: epsilon added to sqrt(v) before the bias correction."""
    w, m, v, history = W0.copy(), 0.0, 0.0, []
    for t in range(1, steps + 1):
        g = grad_of(w)
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr_t * m / (np.sqrt(v) + eps)
        history.append(w)
    return history


def np_tf_momentum(lr, momentum, nesterov=False, steps=STEPS):
    w, accum, history = W0.copy(), 0.0, []
    for _ in range(steps):
        g = grad_of(w)
        accum = momentum * accum + g
        w = w - lr * (g + momentum * accum if nesterov else accum)
        history.append(w)
    return history


def check(history, want):
    for got, ref in zip(history, want):
        np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)


# -- kg.optim against the formulas, both modes ---------------------------------------------------
SGD_CASES = [dict(lr=0.1), dict(lr=0.05, momentum=0.9), dict(lr=0.05, momentum=0.8,
                                                             nesterov=True),
             dict(lr=0.1, momentum=0.5, weight_decay=0.1)]


@pytest.mark.parametrize("kw", SGD_CASES)
def test_sgd_matches_the_formula_in_both_modes(kw):
    want = np_sgd(**kw)
    check(eager_run(lambda p: kg.optim.SGD(p, **kw)), want)
    check(static_run(lambda p: kg.optim.SGD(p, **kw)), want)


ADAM_CASES = [dict(lr=0.1), dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6),
              dict(lr=0.05, weight_decay=0.2)]


@pytest.mark.parametrize("kw", ADAM_CASES)
def test_adam_matches_the_formula_in_both_modes(kw):
    want = np_adam(**kw)
    check(eager_run(lambda p: kg.optim.Adam(p, **kw)), want)
    check(static_run(lambda p: kg.optim.Adam(p, **kw)), want)


@given(st.floats(1e-3, 0.5), st.floats(0.0, 0.95), st.booleans(), st.floats(0.0, 0.1))
def test_sgd_property(lr, momentum, nesterov, weight_decay):
    nesterov = nesterov and momentum > 0
    kw = dict(lr=lr, momentum=momentum, nesterov=nesterov, weight_decay=weight_decay)
    check(eager_run(lambda p: kg.optim.SGD(p, **kw), steps=2), np_sgd(**kw, steps=2))


def test_parameters_without_a_gradient_are_skipped():
    a = kg.tensor([1.0], requires_grad=True)
    b = kg.tensor([1.0], requires_grad=True)
    opt = kg.optim.Adam([a, b], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    assert b.tolist() == [1.0] and a.tolist() != [1.0]
    assert 1 not in opt.state and opt.state[0]["step"].item() == 1.0


def test_the_learning_rate_is_read_at_every_step():
    w = kg.tensor([1.0], requires_grad=True)
    opt = kg.optim.SGD([w], lr=1.0)
    w.sum().backward()
    opt.param_groups[0]["lr"] = 0.5
    opt.step()
    assert w.tolist() == [0.5]


def test_step_updates_in_place_and_zero_grad():
    model = kg.nn.Linear(2, 1)
    weight = model.weight
    opt = kg.optim.SGD(model.parameters(), lr=0.1)
    model(kg.ones(3, 2)).sum().backward()
    before = weight.detach().numpy().copy()
    opt.step()
    assert model.weight is weight and weight.is_leaf and weight.requires_grad
    np.testing.assert_allclose(weight.detach().numpy(), before - 0.1 * 3, rtol=1e-6)
    opt.zero_grad()
    assert weight.grad is None
    model(kg.ones(3, 2)).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert (weight.grad.numpy() == 0).all()


def test_step_with_a_closure_returns_its_loss():
    w = kg.tensor([2.0], requires_grad=True)
    opt = kg.optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 4.0 and w.tolist() == [1.0]


# -- static specifics ------------------------------------------------------------------------------
def test_slots_are_non_trainable_variables_set_by_the_initializer():
    model = kg.nn.Linear(2, 1)
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 2])
        opt = kg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        train = opt.minimize(kg.mean(model(x)))
        init = kg.global_variables_initializer()
        assert [v.name for v in kg.trainable_variables()] == ["linear/weight", "linear/bias"]
        slots = [v for v in kg.global_variables() if not v.trainable]
        assert [v.name for v in slots] == ["train/linear/weight/momentum_buffer",
                                           "train/linear/bias/momentum_buffer"]
        assert opt.get_slot(model.variables(g)[0], "momentum_buffer") is slots[0]
    with kg.Session(g) as sess:
        sess.run(init)
        assert (sess.run(slots[0]) == 0).all()
        sess.run(train, {x: np.ones((4, 2), np.float32)})
        np.testing.assert_allclose(sess.run(slots[0]), np.ones((1, 2)))  # d mean / d w


def test_a_fed_learning_rate_and_var_list():
    g = kg.Graph()
    with g.as_default():
        w = kg.Variable(np.array([1.0, 2.0]), name="w")
        b = kg.Variable(np.array([1.0]), name="b")
        lr = kg.placeholder(kg.float64, shape=[])
        train = kg.optim.SGD([w, b], lr=lr).minimize(kg.sum(w * w) + kg.sum(b), var_list=[w])
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        sess.run(train, {lr: 0.25})
        assert sess.run(w).tolist() == [0.5, 1.0] and sess.run(b).tolist() == [1.0]
        sess.run(train, {lr: 0.5})
        assert sess.run(w).tolist() == [0.0, 0.0]


def test_minimize_with_a_global_step():
    g = kg.Graph()
    with g.as_default():
        w = kg.Variable(np.array([1.0]))
        step = kg.Variable(np.array(0, np.int64), trainable=False)
        train = kg.optim.Adam([w], lr=0.1).minimize(kg.sum(w * w), global_step=step)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        for _ in range(3):
            sess.run(train)
        assert int(sess.run(step)) == 3


def test_slots_made_under_control_dependencies_need_no_feed():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=(None,))
        w = kg.Variable(np.array([1.0], np.float32))
        seen = kg.Variable(np.array(0.0, np.float32), trainable=False)
        note = seen.assign(kg.sum(x))
        with g.control_dependencies([note]):
            train = kg.optim.Adam([w], lr=0.1).minimize(kg.sum(w * w * x))
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)  # the slots' initial zeros need no value of x
        sess.run(train, {x: np.array([2.0], np.float32)})
        assert float(sess.run(seen)) == 2.0 and float(sess.run(w)[0]) < 1.0


def mlp():
    return kg.nn.Sequential(kg.nn.Linear(4, 8), kg.nn.Tanh(), kg.nn.Dropout(0.25, seed=7),
                            kg.nn.Linear(8, 3))


@pytest.mark.parametrize("make_opt", [
    lambda p: kg.optim.SGD(p, lr=0.1, momentum=0.9),
    lambda p: kg.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2),
    lambda p: kg.optim.Adam(p, lr=0.01),
    lambda p: kg.optim.Adam(p, lr=0.01, weight_decay=1e-2),
], ids=["sgd-momentum", "sgd-nesterov-wd", "adam", "adam-wd"])
def test_eager_and_static_training_give_the_same_losses(make_opt):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.integers(0, 3, 16)
    criterion = kg.nn.CrossEntropyLoss()

    kg.random.seed(0)
    model = mlp()
    opt = make_opt(model.parameters())
    eager = []
    for _ in range(6):
        opt.zero_grad()
        loss = criterion(model(kg.tensor(x)), kg.tensor(y))
        loss.backward()
        opt.step()
        eager.append(loss.item())

    kg.random.seed(0)  # the same initial weights (and dropout seeds) again
    model = mlp()
    opt = make_opt(model.parameters())
    g = kg.Graph()
    with g.as_default():
        xs = kg.placeholder(kg.float32, shape=[None, 4])
        ys = kg.placeholder(kg.int64, shape=[None])
        loss = criterion(model(xs), ys)
        train = opt.minimize(loss)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        static = [float(sess.run([loss, train], {xs: x, ys: y})[0]) for _ in range(6)]
    np.testing.assert_allclose(static, eager, rtol=1e-6)
    assert eager[-1] < eager[0]


# -- errors ----------------------------------------------------------------------------------------
def test_errors():
    w = kg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="Invalid learning rate: -0.1"):
        kg.optim.SGD([w], lr=-0.1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum > 0"):
        kg.optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        kg.optim.Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="empty parameter list"):
        kg.optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors"):
        kg.optim.SGD(w, lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        kg.optim.SGD([w * 2.0], lr=0.1)
    frozen = kg.tensor([1.0])  # kept, as PyTorch keeps it, and skipped: it has no grad
    kg.optim.SGD([frozen], lr=0.1).step()
    assert frozen.tolist() == [1.0]
    with pytest.raises(TypeError, match=r"in eager mode call loss.backward\(\)"):
        kg.optim.SGD([w], lr=0.1).minimize((w * w).sum())
    model = kg.nn.Linear(2, 1)
    with kg.Graph().as_default():
        loss = kg.sum(kg.placeholder(kg.float32, shape=[2]) * 2.0)
        with pytest.raises(ValueError, match="parameter 0 .* has no kg.Variable in the loss's "
                                             "graph"):
            kg.optim.SGD(model.parameters(), lr=0.1).minimize(loss)
        v = kg.Variable(np.ones(2, np.float32))
        opt = kg.optim.SGD([v], lr=0.1)
        with pytest.raises(TypeError, match="step\\(\\) updates eager tensors"):
            opt.step()
        with pytest.raises(ValueError, match="no gradients for any variable"):
            kg.optim.SGD([v], lr=0.1).minimize(loss)


# -- compat.v1 tf.train ----------------------------------------------------------------------------
def test_tf_gradient_descent():
    check(static_run(lambda p: tf.train.GradientDescentOptimizer(0.1)), np_sgd(0.1))


@pytest.mark.parametrize("nesterov", [False, True])
def test_tf_momentum(nesterov):
    check(static_run(lambda p: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=nesterov)),
          np_tf_momentum(0.05, 0.9, nesterov))


def test_tf_adam_uses_tf1_epsilon_placement():
    # A large epsilon makes TF1's and PyTorch's formulas differ visibly.
    want = np_tf_adam(0.1, eps=0.5)
    check(static_run(lambda p: tf.train.AdamOptimizer(0.1, epsilon=0.5)), want)
    assert not np.allclose(want[-1], np_adam(0.1, eps=0.5)[-1])


def test_tf_train_api():
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, shape=[None, 1])
    w = tf.Variable(np.zeros((1, 1), np.float32), name="w")
    b = tf.Variable(np.zeros(1, np.float32), name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - 2.0 * x))
    step = tf.train.get_or_create_global_step()
    assert tf.train.get_or_create_global_step() is step
    opt = tf.train.AdamOptimizer(0.1)
    grads_and_vars = opt.compute_gradients(loss)
    assert [v.name for _, v in grads_and_vars] == ["w:0", "b:0"]
    train = opt.apply_gradients(grads_and_vars, global_step=step)
    assert opt.get_slot_names() == ["m", "v"] and opt.get_slot(w, "m").name == "w/Adam:0"
    data = np.linspace(-1, 1, 8, dtype=np.float32)[:, None]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: data})
        for _ in range(50):
            sess.run(train, {x: data})
        assert sess.run(loss, {x: data}) < first / 10
        assert sess.run(step) == 50
    with pytest.raises(ValueError, match="global_step\" already exists"):
        tf.train.create_global_step()
    tf.reset_default_graph()


@pytest.mark.skipif(not kg.cuda.is_available(), reason="needs CUDA or its simulator")
def test_training_on_cuda_matches_the_cpu():
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)

    def run(device):
        kg.random.seed(0)
        model = kg.nn.Linear(3, 2)
        for p in model.parameters():  # the same initial weights, moved to the device
            p._array = kg.devices.transfer(p._array, kg.device(device))
        opt = kg.optim.Adam(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            loss = kg.nn.MSELoss()(model(kg.tensor(x, device=device)),
                                   kg.zeros(4, 2, device=device))
            loss.backward()
            opt.step()
        return loss.item(), model.state_dict()

    cpu, cuda = run("cpu"), run("cuda")
    assert np.isclose(cpu[0], cuda[0], rtol=1e-5)
    for k in cpu[1]:
        np.testing.assert_allclose(cuda[1][k], cpu[1][k], rtol=1e-5, atol=1e-6)

    kg.random.seed(0)
    model = kg.nn.Linear(3, 2)
    g = kg.Graph()
    with g.as_default(), kg.device("cuda"):
        xs = kg.placeholder(kg.float32, shape=[None, 3])
        loss = kg.nn.MSELoss()(model(xs), kg.zeros_like(model(xs)))
        train = kg.optim.Adam(model.parameters(), lr=0.1).minimize(loss)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        sess.run(train, {xs: x})
        second = float(sess.run([loss, train], {xs: x})[0])
    assert np.isclose(second, cpu[0], rtol=1e-5)
