"""kg.nn layers, losses and initialisers: NumPy references in both modes (eager and static
agree), finite differences for LSTMCell, dynamic_rnn over an LSTM, Dropout's train/eval
behaviour and seeding, state_dict round trips, and argument/shape errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernelgraph as kg
from kernelgraph.kernels import reference as R
from tests.test_ops import numeric_grad


def static_call(module, *arrays, shapes=None, extra=None):
    """``module`` called on placeholders (of the arrays' shapes, or ``shapes``: None dims
    allowed) in a fresh graph; the run's value(s) as arrays."""
    g = kg.Graph()
    with g.as_default():
        phs = [kg.placeholder(kg.dtypes.as_dtype(a.dtype),
                              shape=list(a.shape) if shapes is None else shapes[k])
               for k, a in enumerate(arrays)]
        out = module(*phs)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        return sess.run(out, dict(zip(phs, arrays)))


def eager_call(module, *arrays):
    out = module(*[kg.tensor(a) for a in arrays])
    if isinstance(out, tuple):
        return tuple(o.detach().numpy() for o in out)
    return out.detach().numpy()


def both(module, *arrays, shapes=None):
    """The module's output in eager and static mode, checked equal; returns it."""
    e = eager_call(module, *arrays)
    s = static_call(module, *arrays, shapes=shapes)
    if isinstance(e, tuple):
        for a, b in zip(e, s):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_allclose(e, s, rtol=1e-6, atol=1e-6)
    return e


def params(module):
    return {k: v.astype(np.float64) for k, v in module.state_dict().items()}



rng = np.random.default_rng(0)


# -- Linear -------------------------------------------------------------------------------------
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.integers(1, 4),
       st.integers(1, 4), st.booleans())
def test_linear_matches_numpy_in_both_modes(batch, fin, fout, bias):
    layer = kg.nn.Linear(fin, fout, bias=bias)
    x = rng.standard_normal((*batch, fin)).astype(np.float32)
    p = params(layer)
    want = x @ p["weight"].T + (p["bias"] if bias else 0)
    got = both(layer, x, shapes=[[None] * len(batch) + [fin]])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_linear_one_sample_and_default_init():
    kg.random.seed(0)
    layer = kg.nn.Linear(16, 4)
    assert layer(kg.ones(16)).shape == (4,)
    w, b = layer.state_dict()["weight"], layer.state_dict()["bias"]
    # kaiming_uniform(a=sqrt(5)) and the bias: both U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert np.abs(w).max() <= 0.25 and np.abs(w).max() > 0.2
    assert np.abs(b).max() <= 0.25
    assert layer.weight.requires_grad and layer.weight.is_leaf


def test_linear_errors_say_what_was_expected():
    with pytest.raises(ValueError, match=r"Linear\(3, 4\): expected input of shape \(\*, 3\), "
                                         r"got \(2, 5\)"):
        kg.nn.Linear(3, 4)(kg.ones(2, 5))
    with kg.Graph().as_default():
        with pytest.raises(ValueError, match=r"expected input of shape \(\*, 3\)"):
            kg.nn.Linear(3, 4)(kg.placeholder(kg.float32, shape=[None, 5]))
    with pytest.raises(ValueError, match="in_features must be a positive int, got 0"):
        kg.nn.Linear(0, 4)
    with pytest.raises(TypeError, match="dtype must be float32 or float64"):
        kg.nn.Linear(2, 2, dtype=kg.int32)


def test_linear_float64():
    layer = kg.nn.Linear(2, 3, dtype=kg.float64)
    assert layer(kg.ones(1, 2, dtype=kg.float64)).dtype == kg.float64


# -- Conv2d and pooling ----------------------------------------------------------------------------
@st.composite
def conv_cases(draw):
    k = draw(st.integers(1, 3))
    stride, padding, dilation = draw(st.integers(1, 2)), draw(st.integers(0, 2)), \
        draw(st.integers(1, 2))
    size = draw(st.integers(dilation * (k - 1) + 1, 6))
    return dict(batch=draw(st.integers(1, 2)), cin=draw(st.integers(1, 3)),
                cout=draw(st.integers(1, 3)), k=k, stride=stride, padding=padding,
                dilation=dilation, h=size, w=size + draw(st.integers(0, 2)),
                bias=draw(st.booleans()))


@given(conv_cases())
def test_conv2d_matches_numpy_in_both_modes(c):
    conv = kg.nn.Conv2d(c["cin"], c["cout"], c["k"], stride=c["stride"], padding=c["padding"],
                        dilation=c["dilation"], bias=c["bias"])
    x = rng.standard_normal((c["batch"], c["cin"], c["h"], c["w"])).astype(np.float32)
    p = params(conv)
    want = R.conv2d(x.astype(np.float64), p["weight"], c["stride"], c["padding"],
                    c["dilation"])
    if c["bias"]:
        want = want + p["bias"][:, None, None]
    got = both(conv, x, shapes=[[None, c["cin"], None, None]])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_conv2d_default_init_and_repr():
    kg.random.seed(0)
    conv = kg.nn.Conv2d(2, 3, (3, 1))
    bound = 1 / math.sqrt(2 * 3 * 1)
    sd = conv.state_dict()
    assert sd["weight"].shape == (3, 2, 3, 1)
    assert np.abs(sd["weight"]).max() <= bound and np.abs(sd["bias"]).max() <= bound
    assert repr(conv) == "Conv2d(2, 3, kernel_size=(3, 1), stride=(1, 1))"
    assert repr(kg.nn.Conv2d(1, 1, 2, padding=1, dilation=2, bias=False)) == \
        "Conv2d(1, 1, kernel_size=(2, 2), stride=(1, 1), padding=(1, 1), dilation=(2, 2), " \
        "bias=False)"


def test_conv2d_errors():
    with pytest.raises(ValueError, match=r"Conv2d: expected input of shape \(N, 3, H, W\), got "
                                         r"\(1, 2, 5, 5\)"):
        kg.nn.Conv2d(3, 4, 3)(kg.ones(1, 2, 5, 5))
    with pytest.raises(ValueError, match=r"expected input of shape \(N, 3, H, W\), got \(5, 5\)"):
        kg.nn.Conv2d(3, 4, 3)(kg.ones(5, 5))
    with pytest.raises(TypeError, match="kernel_size must be an int or a pair"):
        kg.nn.Conv2d(3, 4, "3")
    with pytest.raises(kg.errors.ShapeError, match="larger than the padded input"):
        kg.nn.Conv2d(1, 1, 5)(kg.ones(1, 1, 3, 3))


@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 1), st.integers(3, 6))
def test_pooling_matches_numpy_in_both_modes(k, stride, padding, size):
    padding = min(padding, k // 2)
    x = rng.standard_normal((2, 3, size, size + 1)).astype(np.float32)
    for layer, ref in ((kg.nn.MaxPool2d(k, stride, padding), R.max_pool2d),
                       (kg.nn.AvgPool2d(k, stride, padding), R.avg_pool2d)):
        got = both(layer, x, shapes=[[None, 3, None, None]])
        np.testing.assert_allclose(got, ref(x, k, stride, padding), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(both(kg.nn.GlobalAvgPool2d(), x), x.mean(axis=(2, 3)),
                               rtol=1e-5, atol=1e-6)


def test_pooling_defaults_and_errors():
    assert kg.nn.MaxPool2d(2).stride == (2, 2)
    assert repr(kg.nn.AvgPool2d(3, 1, 1)) == "AvgPool2d(kernel_size=3, stride=1, padding=1)"
    with pytest.raises(ValueError, match="padding .* must be at most half the kernel"):
        kg.nn.MaxPool2d(2, padding=2)
    with pytest.raises(ValueError, match=r"MaxPool2d: expected input of shape \(N, C, H, W\)"):
        kg.nn.MaxPool2d(2)(kg.ones(4, 4))
    with pytest.raises(ValueError, match=r"GlobalAvgPool2d: expected input of shape"):
        kg.nn.GlobalAvgPool2d()(kg.ones(2, 3))


def test_a_small_cnn_has_the_same_gradients_in_both_modes():
    kg.random.seed(3)
    net = kg.nn.Sequential(kg.nn.Conv2d(1, 2, 3, padding=1), kg.nn.ReLU(), kg.nn.MaxPool2d(2),
                           kg.nn.Flatten(), kg.nn.Linear(8, 3))
    x = rng.standard_normal((2, 1, 4, 4)).astype(np.float32)
    y = np.array([0, 2])
    loss = kg.nn.CrossEntropyLoss()(net(kg.tensor(x)), kg.tensor(y))
    loss.backward()
    g = kg.Graph()
    with g.as_default():
        xs = kg.placeholder(kg.float32, shape=[None, 1, 4, 4])
        ys = kg.placeholder(kg.int64, shape=[None])
        ls = kg.nn.CrossEntropyLoss()(net(xs), ys)
        grads = kg.gradients(ls, net.variables(g))
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        value, static_grads = sess.run([ls, grads], {xs: x, ys: y})
    assert np.allclose(value, loss.item(), rtol=1e-6)
    for (name, p), sg in zip(net.named_parameters(), static_grads):
        np.testing.assert_allclose(p.grad.detach().numpy(), sg, rtol=1e-5, atol=1e-6, err_msg=name)


# -- Flatten, activations --------------------------------------------------------------------------
def test_flatten_in_both_modes():
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    assert both(kg.nn.Flatten(), x, shapes=[[None, 3, 4, 5]]).shape == (2, 60)
    assert both(kg.nn.Flatten(0, 1), x).shape == (6, 4, 5)
    assert both(kg.nn.Flatten(-2), x).shape == (2, 3, 20)
    with kg.Graph().as_default():
        with pytest.raises(ValueError, match="too many unknown dims"):
            kg.nn.Flatten()(kg.placeholder(kg.float32, shape=[None, 3, None]))
    with pytest.raises(ValueError, match="out of range"):
        kg.nn.Flatten(3)(kg.ones(2, 3))


@pytest.mark.parametrize("module, ref", [
    (kg.nn.ReLU(), R.relu), (kg.nn.Tanh(), np.tanh), (kg.nn.Sigmoid(), R.sigmoid),
    (kg.nn.Softmax(dim=1), lambda x: R.softmax(x, 1)),
    (kg.nn.Softmax(dim=0), lambda x: R.softmax(x, 0)),
    (kg.nn.LogSoftmax(dim=-1), lambda x: R.log_softmax(x, -1)),
    (kg.nn.Identity(), lambda x: x),
])
def test_activations_match_numpy_in_both_modes(module, ref):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(both(module, x, shapes=[[None, 4]]), ref(x.astype(np.float64)),
                               rtol=1e-5, atol=1e-6)


def test_activation_reprs():
    assert repr(kg.nn.Softmax(dim=1)) == "Softmax(dim=1)"
    assert repr(kg.nn.ReLU()) == "ReLU()"


# -- Dropout ---------------------------------------------------------------------------------------
def test_dropout_train_and_eval():
    drop = kg.nn.Dropout(0.25, seed=5)
    x = np.ones((200, 50), np.float32)
    y = eager_call(drop, x)
    assert set(np.unique(y).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    assert 0.2 < (y == 0).mean() < 0.3
    drop.eval()
    assert not drop.training
    np.testing.assert_array_equal(eager_call(drop, x), x)
    np.testing.assert_array_equal(static_call(drop, x), x)
    drop.train()
    assert (eager_call(drop, x) == 0).any()
    assert (kg.nn.Dropout(1.0)(kg.ones(3)).detach().numpy() == 0).all()
    np.testing.assert_array_equal(eager_call(kg.nn.Dropout(0.0), x), x)


def test_dropout_gradient_is_the_mask():
    x = kg.ones(4, 5, requires_grad=True)
    y = kg.nn.Dropout(0.5)(x)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.detach().numpy(), y.detach().numpy())


def test_dropout_draws_the_same_masks_in_both_modes():
    kg.random.seed(0)
    drop = kg.nn.Dropout(0.5, seed=3)  # without a seed, eager calls draw PyTorch's masks
    x = np.ones((4, 6), np.float32)
    eager = [eager_call(drop, x) for _ in range(3)]
    kg.random.seed(0)
    drop = kg.nn.Dropout(0.5, seed=3)
    g = kg.Graph()
    with g.as_default():
        ph = kg.placeholder(kg.float32, shape=[None, 6])
        out = drop(ph)
    with kg.Session(g) as sess:
        static = [sess.run(out, {ph: x}) for _ in range(3)]
    for e, s in zip(eager, static):
        np.testing.assert_array_equal(e, s)
    assert not np.array_equal(eager[0], eager[1])  # a new mask each step


def test_dropout_errors():
    with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
        kg.nn.Dropout(1.5)
    assert repr(kg.nn.Dropout(0.1)) == "Dropout(p=0.1, inplace=False)"


# -- Embedding -------------------------------------------------------------------------------------
def test_embedding_in_both_modes_and_its_gradient():
    emb = kg.nn.Embedding(5, 3)
    ids = np.array([[0, 4], [4, 2]])
    got = both(emb, ids, shapes=[[None, 2]])
    np.testing.assert_array_equal(got, emb.state_dict()["weight"][ids])
    emb(kg.tensor(ids)).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.detach().numpy()[:, 0], [1, 0, 1, 0, 2])


def test_embedding_errors():
    emb = kg.nn.Embedding(5, 3)
    with pytest.raises(TypeError, match="expected integer ids"):
        emb(kg.ones(2))
    with pytest.raises(IndexError, match=r"ids must be in \[0, 5\), got 7"):
        emb(kg.tensor([1, 7]))


# -- LSTMCell --------------------------------------------------------------------------------------
def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_lstm(x, h, c, p):
    gates = x @ p["weight_ih"].T + p["bias_ih"] + h @ p["weight_hh"].T + p["bias_hh"]
    i, f, g, o = np.split(gates, 4, axis=-1)
    c = np_sigmoid(f) * c + np_sigmoid(i) * np.tanh(g)
    return np_sigmoid(o) * np.tanh(c), c


@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 4))
def test_lstm_cell_matches_numpy_in_both_modes(batch, fin, hidden):
    cell = kg.nn.LSTMCell(fin, hidden)
    x = rng.standard_normal((batch, fin)).astype(np.float32)
    h = rng.standard_normal((batch, hidden)).astype(np.float32)
    c = rng.standard_normal((batch, hidden)).astype(np.float32)
    want = np_lstm(x, h, c, params(cell))
    e = cell(kg.tensor(x), (kg.tensor(h), kg.tensor(c)))
    g = kg.Graph()
    with g.as_default():
        phs = [kg.placeholder(kg.float32, shape=[None, n]) for n in (fin, hidden, hidden)]
        out = cell(phs[0], (phs[1], phs[2]))
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        s = sess.run(list(out), dict(zip(phs, (x, h, c))))
    for got_e, got_s, ref in zip(e, s, want):
        np.testing.assert_allclose(got_e.detach().numpy(), ref, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(got_e.detach().numpy(), got_s)


def test_lstm_cell_state_defaults_to_zeros():
    cell = kg.nn.LSTMCell(2, 3)
    x = rng.standard_normal((4, 2)).astype(np.float32)
    h, c = cell(kg.tensor(x))
    zeros = np.zeros((4, 3))
    want = np_lstm(x, zeros, zeros, params(cell))
    np.testing.assert_allclose(h.detach().numpy(), want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.detach().numpy(), want[1], rtol=1e-5, atol=1e-6)
    s = static_call(cell, x, shapes=[[None, 2]])
    np.testing.assert_array_equal(s[0], h.detach().numpy())


def test_lstm_cell_gradients_match_finite_differences():
    cell = kg.nn.LSTMCell(3, 2, dtype=kg.float64)
    x = rng.standard_normal((2, 3))
    h = rng.standard_normal((2, 2))
    c = rng.standard_normal((2, 2))
    p = params(cell)
    xt, ht, ct = (kg.tensor(a, requires_grad=True) for a in (x, h, c))
    h2, c2 = cell(xt, (ht, ct))
    ((h2 * h2).sum() + c2.sum()).backward()

    def loss(x=x, h=h, c=c, p=p):
        hn, cn = np_lstm(x, h, c, p)
        return (hn ** 2).sum() + cn.sum()

    np.testing.assert_allclose(xt.grad.numpy(), numeric_grad(lambda v: loss(x=v), x),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ht.grad.numpy(), numeric_grad(lambda v: loss(h=v), h),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ct.grad.numpy(), numeric_grad(lambda v: loss(c=v), c),
                               rtol=1e-5, atol=1e-7)
    for name, param in cell.named_parameters():
        want = numeric_grad(lambda v, name=name: loss(p={**p, name: v}), p[name])
        np.testing.assert_allclose(param.grad.detach().numpy(), want, rtol=1e-5, atol=1e-7,
                                   err_msg=name)


def _lstm_op_inputs(batch=3, fin=4, hidden=5, dtype=np.float64):
    shapes = ((batch, fin), (batch, hidden), (batch, hidden), (4 * hidden, fin),
              (4 * hidden, hidden), (4 * hidden,), (4 * hidden,))
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _lstm_op_reference(x, h, c, w_ih, w_hh, b_ih, b_hh):
    """[h' | c' | the gates' activations], as the op returns them."""
    p = {"weight_ih": w_ih, "weight_hh": w_hh, "bias_ih": b_ih, "bias_hh": b_hh}
    i, f, g, o = np.split(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, axis=1)
    return np.concatenate([*np_lstm(x, h, c, p), np_sigmoid(i), np_sigmoid(f), np.tanh(g),
                           np_sigmoid(o)], axis=1)


def test_lstm_cell_op_gradients_every_way_match_finite_differences():
    """The op's gradient has two paths: one compiled call on host arrays (eager backward,
    leaf weights summed at the end), and the same formula written with ops (a graph, a
    differentiable backward, weights that are not leaves). Both meet the finite
    differences of the NumPy formula, for every input."""
    values = _lstm_op_inputs()
    weight = rng.standard_normal((3, 30))  # every column has a gradient, the gates' too

    def loss(vs):
        return float((_lstm_op_reference(*vs) * weight).sum())

    want = [numeric_grad(lambda v, k=k: loss(values[:k] + [v] + values[k + 1:]), values[k])
            for k in range(7)]
    np.testing.assert_allclose(kg.ops.lstm_cell(*values), _lstm_op_reference(*values),
                               rtol=1e-10)
    leaves = [kg.tensor(v, requires_grad=True) for v in values]
    (kg.ops.lstm_cell(*leaves) * kg.tensor(weight)).sum().backward()
    # weights computed from leaves: their gradients come back from the rule, not a sink
    scaled = [kg.tensor(v, requires_grad=True) for v in values]
    (kg.ops.lstm_cell(*scaled[:3], *[w * 1.0 for w in scaled[3:]])
     * kg.tensor(weight)).sum().backward()
    g = kg.Graph()
    with g.as_default():
        nodes = [kg.placeholder(kg.float64, shape=[None, *v.shape[1:]]) if k < 3 else
                 kg.placeholder(kg.float64, shape=v.shape) for k, v in enumerate(values)]
        grads = kg.gradients(kg.reduce_sum(kg.ops.lstm_cell(*nodes) * weight), nodes)
    with kg.Session(g) as sess:
        static = sess.run(grads, dict(zip(nodes, values)))
    for k, name in enumerate(("x", "h", "c", "w_ih", "w_hh", "b_ih", "b_hh")):
        for got in (leaves[k].grad.numpy(), scaled[k].grad.numpy(), static[k]):
            np.testing.assert_allclose(got, want[k], rtol=1e-6, atol=1e-8, err_msg=name)


def test_lstm_cell_op_on_cuda_matches_the_cpu():
    values = _lstm_op_inputs(dtype=np.float32)
    weight = rng.standard_normal((3, 30)).astype(np.float32)
    cuda = kg.device("cuda")
    results = []
    for device in (None, cuda):
        ts = [kg.tensor(v, requires_grad=True, device=device) for v in values]
        out = kg.ops.lstm_cell(*ts)
        (out * kg.tensor(weight, device=device)).sum().backward()
        results.append([out.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in ts])
    assert out.device == cuda
    for got, want in zip(*reversed(results)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_lstm_cell_is_one_op_a_step_unbatched_and_without_bias():
    kg.random.seed(2)
    cell = kg.nn.LSTMCell(3, 4, bias=False)
    x = rng.standard_normal(3).astype(np.float32)
    h, c = cell(kg.tensor(x))
    assert h.shape == c.shape == (4,)
    zeros = np.zeros(16, np.float32)
    p = {**params(cell), "bias_ih": zeros, "bias_hh": zeros}
    want = np_lstm(x[None], np.zeros((1, 4)), np.zeros((1, 4)), p)
    np.testing.assert_allclose(h.detach().numpy(), want[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.detach().numpy(), want[1][0], rtol=1e-5, atol=1e-6)
    g = kg.Graph()
    with g.as_default():
        h_s, c_s = kg.nn.LSTMCell(3, 4)(kg.placeholder(kg.float32, shape=[None, 3]))
    ops = [n.op.name for n in g.nodes]
    assert ops.count("lstm_cell") == 1 and "sigmoid" not in ops and "matmul" not in ops


def test_lstm_cell_op_errors_name_the_inputs():
    x, h, c, w_ih, w_hh, b_ih, b_hh = _lstm_op_inputs()
    x, h = kg.tensor(x), kg.tensor(h)
    with pytest.raises(kg.errors.ShapeError, match=r"lstm_cell: w_ih must have 4\*hidden "
                                                  r"rows \(gates i, f, g, o\), got shape "
                                                  r"\(19, 4\)"):
        kg.ops.lstm_cell(x, h, c, w_ih[:-1], w_hh, b_ih, b_hh)
    with pytest.raises(kg.errors.ShapeError, match="lstm_cell: the hidden size differs "
                                                  "between inputs: h 5, c 4, w_ih/4 5"):
        kg.ops.lstm_cell(x, h, c[:, :4], w_ih, w_hh, b_ih, b_hh)
    with pytest.raises(kg.errors.ShapeError, match="lstm_cell: the batch differs"):
        with kg.Graph().as_default():
            kg.ops.lstm_cell(kg.placeholder(kg.float64, shape=[2, 4]), h.numpy(), c, w_ih,
                             w_hh, b_ih, b_hh)
    with pytest.raises(TypeError, match="lstm_cell takes 7 inputs"):
        kg.ops.lstm_cell(x, h, c, w_ih, w_hh, b_ih)


def test_lstm_cell_errors_and_repr():
    cell = kg.nn.LSTMCell(3, 4)
    with pytest.raises(ValueError, match=r"LSTMCell: expected the input of shape \(batch, 3\), "
                                         r"got \(2, 5\)"):
        cell(kg.ones(2, 5))
    with pytest.raises(ValueError, match=r"expected the cell state c of shape \(batch, 4\)"):
        cell(kg.ones(2, 3), (kg.zeros(2, 4), kg.zeros(2, 3)))
    with pytest.raises(TypeError, match=r"the state must be a tuple \(h, c\)"):
        cell(kg.ones(2, 3), kg.zeros(2, 4))
    with pytest.raises(ValueError, match="hidden_size must be a positive int"):
        kg.nn.LSTMCell(3, 0)
    assert repr(cell) == "LSTMCell(3, 4)"
    assert cell.state_size == (4, 4) and cell.output_size == 4


# -- dynamic_rnn over an LSTM ----------------------------------------------------------------------
def np_lstm_rnn(x, lengths, p, h0, c0):
    batch, steps, _ = x.shape
    h, c = h0, c0
    outs = np.zeros((batch, steps, h.shape[1]))
    for t in range(steps):
        hn, cn = np_lstm(x[:, t], h, c, p)
        alive = (t < np.asarray(lengths))[:, None]
        outs[:, t] = np.where(alive, hn, 0.0)
        h, c = np.where(alive, hn, h), np.where(alive, cn, c)
    return outs, h, c


@pytest.mark.parametrize("with_state", [False, True])
def test_dynamic_rnn_with_an_lstm_cell_in_both_modes(with_state):
    kg.random.seed(1)
    cell = kg.nn.LSTMCell(3, 4)
    x = rng.standard_normal((3, 5, 3)).astype(np.float32)
    lengths = np.array([5, 2, 0])
    h0 = rng.standard_normal((3, 4)).astype(np.float32) if with_state else np.zeros((3, 4),
                                                                                    np.float32)
    c0 = rng.standard_normal((3, 4)).astype(np.float32) if with_state else np.zeros((3, 4),
                                                                                    np.float32)
    want = np_lstm_rnn(x.astype(np.float64), lengths, params(cell), h0, c0)
    state = (kg.tensor(h0), kg.tensor(c0)) if with_state else None
    out, (h, c) = kg.nn.dynamic_rnn(cell, kg.tensor(x), sequence_length=lengths,
                                    initial_state=state)
    for got, ref in zip((out, h, c), want):
        np.testing.assert_allclose(got.detach().numpy(), ref, rtol=1e-5, atol=1e-5)
    g = kg.Graph()
    with g.as_default():
        xs = kg.placeholder(kg.float32, shape=[None, None, 3])
        ls = kg.placeholder(kg.int64, shape=[None])
        hs = kg.placeholder(kg.float32, shape=[None, 4])
        cs = kg.placeholder(kg.float32, shape=[None, 4])
        outs, (hf, cf) = kg.nn.dynamic_rnn(cell, xs, sequence_length=ls,
                                           initial_state=(hs, cs) if with_state else None)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        static = sess.run([outs, hf, cf], {xs: x, ls: lengths, hs: h0, cs: c0})
        assert sess.run(outs, {xs: x[:, :0], ls: [0, 0, 0], hs: h0, cs: c0}).shape == (3, 0, 4)
    for s, e in zip(static, (out, h, c)):
        np.testing.assert_array_equal(s, e.detach().numpy())


def test_dynamic_rnn_lstm_gradients_agree_between_modes():
    kg.random.seed(2)
    cell = kg.nn.LSTMCell(2, 3)
    x = rng.standard_normal((2, 4, 2)).astype(np.float32)
    lengths = [4, 3]
    xt = kg.tensor(x, requires_grad=True)
    out, (h, c) = kg.nn.dynamic_rnn(cell, xt, sequence_length=lengths)
    ((out * out).sum() + c.sum()).backward()
    g = kg.Graph()
    with g.as_default():
        xs = kg.placeholder(kg.float32, shape=[None, None, 2])
        outs, (hs, cs) = kg.nn.dynamic_rnn(cell, xs, sequence_length=lengths)
        grads = kg.gradients(kg.sum(outs * outs) + kg.sum(cs), [xs] + cell.variables(g))
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        static = sess.run(grads, {xs: x})
    np.testing.assert_allclose(static[0], xt.grad.detach().numpy(), rtol=1e-5, atol=1e-6)
    for sg, p in zip(static[1:], cell.parameters()):
        np.testing.assert_allclose(sg, p.grad.detach().numpy(), rtol=1e-5, atol=1e-6)


# -- losses ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_loss_matches_numpy_in_both_modes(reduction):
    logits = rng.standard_normal((5, 4)).astype(np.float32)
    labels = rng.integers(0, 4, 5)
    per = -R.log_softmax(logits.astype(np.float64))[np.arange(5), labels]
    want = {"mean": per.mean(), "sum": per.sum(), "none": per}[reduction]
    got = both(kg.nn.CrossEntropyLoss(reduction=reduction), logits, labels,
               shapes=[[None, 4], [None]])
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_numpy_in_both_modes(reduction):
    a, b = rng.standard_normal((2, 3, 4)).astype(np.float32)
    per = (a.astype(np.float64) - b) ** 2
    want = {"mean": per.mean(), "sum": per.sum(), "none": per}[reduction]
    np.testing.assert_allclose(both(kg.nn.MSELoss(reduction=reduction), a, b), want, rtol=1e-5)


def test_loss_errors():
    with pytest.raises(ValueError, match="reduction must be one of 'mean', 'sum', 'none', got "
                                         "'max'"):
        kg.nn.MSELoss(reduction="max")
    with pytest.raises(ValueError, match=r"MSELoss: input \(2, 3\) and target \(3, 2\) must have"):
        kg.nn.MSELoss()(kg.ones(2, 3), kg.ones(3, 2))
    with pytest.raises(TypeError, match="expected integer class targets"):
        kg.nn.CrossEntropyLoss()(kg.ones(2, 3), kg.ones(2))
    with pytest.raises(ValueError, match=r"expected logits of shape \(N, C\), got \(3,\)"):
        kg.nn.CrossEntropyLoss()(kg.ones(3), kg.tensor([0, 1, 2]))
    assert repr(kg.nn.CrossEntropyLoss(reduction="sum")) == "CrossEntropyLoss()"  # as torch


# -- init ------------------------------------------------------------------------------------------
def test_init_is_seeded_by_kg_random():
    def weights():
        kg.random.seed(7)
        return kg.nn.Sequential(kg.nn.Linear(3, 4), kg.nn.Conv2d(1, 2, 3), kg.nn.LSTMCell(2, 2),
                                kg.nn.Embedding(4, 2)).state_dict()

    a, b = weights(), weights()
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    kg.random.seed(8)
    assert not np.array_equal(kg.nn.Linear(3, 4).state_dict()["weight"], a["0.weight"])


def test_init_functions():
    init = kg.nn.init
    w = kg.zeros(200, 300)
    init.normal_(w, 1.0, 2.0)
    values = w.detach().numpy()
    assert abs(values.mean() - 1.0) < 0.05 and abs(values.std() - 2.0) < 0.05
    init.xavier_uniform_(w, gain=2.0)
    assert np.abs(w.detach().numpy()).max() <= 2.0 * math.sqrt(6 / 500)
    init.xavier_normal_(w)
    assert abs(w.detach().numpy().std() - math.sqrt(2 / 500)) < 0.005
    init.kaiming_uniform_(w, nonlinearity="relu")
    assert np.abs(w.detach().numpy()).max() <= math.sqrt(6 / 300)
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.detach().numpy().std() - math.sqrt(2 / 200)) < 0.005
    init.constant_(w, 3.0)
    assert (w.detach().numpy() == 3.0).all()
    assert init.calculate_gain("relu") == math.sqrt(2)
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == math.sqrt(1 / 3)
    p = kg.nn.Linear(2, 2).weight
    init.zeros_(p)  # a parameter that requires grad: filled in place, not recorded
    assert p.is_leaf and p.requires_grad and (p.detach().numpy() == 0).all()
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(kg.zeros(3))
    with pytest.raises(ValueError, match="unsupported nonlinearity 'gelu'"):
        init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="mode must be 'fan_in' or 'fan_out'"):
        init.kaiming_uniform_(w, mode="fan")


# -- Module: Sequential, parameters, train/eval, state_dict, repr ----------------------------------
def mlp():
    return kg.nn.Sequential(kg.nn.Linear(3, 4), kg.nn.ReLU(), kg.nn.Dropout(0.5),
                            kg.nn.Linear(4, 2))


def test_sequential_parameters_and_repr():
    net = mlp()
    assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias", "3.weight", "3.bias"]
    assert len(list(net.parameters())) == 4 and len(net) == 4
    assert isinstance(net[2], kg.nn.Dropout) and len(net[1:]) == 3
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Dropout(p=0.5, inplace=False)\n"
        "  (3): Linear(in_features=4, out_features=2, bias=True)\n"
        ")")
    with kg.Graph().as_default() as g:
        names = [v.name for v in net.variables(g)]
    assert names == ["linear/weight", "linear/bias", "linear_1/weight", "linear_1/bias"]
    with pytest.raises(TypeError, match="argument 1 is a int, expected a kg.nn.Module"):
        kg.nn.Sequential(kg.nn.ReLU(), 3)


def test_train_and_eval_reach_every_submodule():
    net = mlp()
    assert all(m.training for m in net.modules())
    assert net.eval() is net and not any(m.training for m in net.modules())
    x = kg.ones(2, 3)
    # no dropout in eval: the same output twice
    np.testing.assert_array_equal(net(x).detach().numpy(), net(x).detach().numpy())
    net.train()
    assert net[2].training


def test_state_dict_round_trip():
    a, b = mlp(), mlp()
    sd = a.state_dict()
    assert list(sd) == ["0.weight", "0.bias", "3.weight", "3.bias"]
    assert all(isinstance(v, np.ndarray) for v in sd.values())
    sd["0.bias"][:] = 0  # a copy: the model is unchanged
    assert not (a.state_dict()["0.bias"] == 0).all()
    b.load_state_dict(a.state_dict())
    a.eval(), b.eval()
    x = kg.tensor(rng.standard_normal((5, 3)).astype(np.float32))
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())
    weight = b[0].weight
    b.load_state_dict({k: np.zeros_like(v) for k, v in a.state_dict().items()})
    assert b[0].weight is weight and (weight.detach().numpy() == 0).all()  # in place


def test_load_state_dict_checks_keys_and_shapes():
    net = mlp()
    sd = net.state_dict()
    with pytest.raises(RuntimeError, match=r"missing keys \['3.bias'\]"):
        net.load_state_dict({k: v for k, v in sd.items() if k != "3.bias"})
    with pytest.raises(RuntimeError, match=r"unexpected keys \['extra'\]"):
        net.load_state_dict({**sd, "extra": np.zeros(1)})
    bad = {**sd, "0.weight": np.zeros((3, 4))}
    with pytest.raises(RuntimeError, match=r"size mismatch for 0.weight: the checkpoint has "
                                           r"shape \(3, 4\), the parameter has shape \(4, 3\)"):
        net.load_state_dict(bad)
    np.testing.assert_array_equal(net.state_dict()["0.weight"], sd["0.weight"])  # untouched
    net.load_state_dict({"0.bias": np.ones(4)}, strict=False)
    assert (net.state_dict()["0.bias"] == 1).all()
    with pytest.raises(TypeError, match="expects a dict"):
        net.load_state_dict([1, 2])


@pytest.mark.skipif(not kg.cuda.is_available(), reason="needs CUDA or its simulator")
def test_eager_lstm_rnn_on_cuda_matches_the_cpu():
    kg.random.seed(0)
    cell = kg.nn.LSTMCell(2, 3)
    x = rng.standard_normal((2, 4, 2)).astype(np.float32)
    out, (h, c) = kg.nn.dynamic_rnn(cell, kg.tensor(x), sequence_length=[4, 2])
    for p in cell.parameters():
        p._array = kg.devices.transfer(p._array, kg.device("cuda"))
    out2, (h2, c2) = kg.nn.dynamic_rnn(cell, kg.tensor(x, device="cuda"),
                                       sequence_length=[4, 2])
    assert c2.device.type == "cuda"
    for a, b in ((out, out2), (h, h2), (c, c2)):
        np.testing.assert_allclose(b.cpu().detach().numpy(), a.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_compat_basic_lstm_cell_follows_tf1():
    import kernelgraph.compat.v1 as tf

    x = rng.standard_normal((3, 4, 2)).astype(np.float32)
    lengths = np.array([4, 1, 3])
    g = tf.Graph()
    with g.as_default():
        cell = tf.nn.rnn_cell.BasicLSTMCell(3, forget_bias=0.5)
        xs = tf.placeholder(tf.float32, [None, None, 2])
        outputs, state = tf.nn.dynamic_rnn(cell, xs, sequence_length=lengths, dtype=tf.float32)
        assert isinstance(state, tf.nn.rnn_cell.LSTMStateTuple)
        init = tf.global_variables_initializer()
    with tf.Session(graph=g) as sess:
        sess.run(init)
        out, c, h = sess.run([outputs, state.c, state.h], {xs: x})
    p = {k: v.astype(np.float64) for k, v in cell.cell.state_dict().items()}
    assert p["kernel"].shape == (5, 12) and (p["bias"] == 0).all()
    hs, cs = np.zeros((3, 3)), np.zeros((3, 3))
    want = np.zeros((3, 4, 3))
    for t in range(4):
        gates = np.concatenate([x[:, t], hs], 1) @ p["kernel"] + p["bias"]
        i, j, f, o = np.split(gates, 4, axis=1)
        nc = cs * np_sigmoid(f + 0.5) + np_sigmoid(i) * np.tanh(j)
        nh = np.tanh(nc) * np_sigmoid(o)
        alive = (t < lengths)[:, None]
        want[:, t] = np.where(alive, nh, 0)
        hs, cs = np.where(alive, nh, hs), np.where(alive, nc, cs)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, hs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c, cs, rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="peepholes"):
        tf.nn.rnn_cell.LSTMCell(3, use_peepholes=True)
