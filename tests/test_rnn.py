"""kg.nn.Module, kg.nn.RNNCell and kg.nn.dynamic_rnn: NumPy references, finite differences,
eager and static agreement with variable lengths, training, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.compat.v1 as tf
from tests.test_ops import numeric_grad

H, F = 4, 3  # hidden size, input features


def params(cell):
    return {name: p.detach().numpy().astype(np.float64) for name, p in cell.named_parameters()}


def np_cell(x, h, p):
    return np.tanh(x @ p["weight_ih"].T + p["bias_ih"] + h @ p["weight_hh"].T + p["bias_hh"])


def np_rnn(x, lengths, p, h0=None):
    """TF1's dynamic_rnn on (batch, time, input) in NumPy."""
    batch, steps, _ = x.shape
    h = np.zeros((batch, p["weight_hh"].shape[0])) if h0 is None else h0
    outs = np.zeros((batch, steps, h.shape[1]))
    for t in range(steps):
        nxt = np_cell(x[:, t], h, p)
        alive = (t < np.asarray(lengths))[:, None]
        outs[:, t] = np.where(alive, nxt, 0.0)
        h = np.where(alive, nxt, h)
    return outs, h



@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((3, 5, F)), np.array([5, 2, 0]), rng.standard_normal((3, H))


# -- Module -------------------------------------------------------------------------------------
class Affine(kg.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_parameter("weight", kg.ones(2, 2))
        self.register_parameter("bias", None)

    def forward(self, x):
        return kg.matmul(x, self.weight)


class Stack(kg.nn.Module):
    def __init__(self):
        super().__init__(name="stack")
        self.first = Affine()
        self.second = Affine()

    def forward(self, x):
        return self.second(self.first(x))


def test_module_parameters_and_submodules():
    m = Stack()
    assert [n for n, _ in m.named_parameters()] == ["first.weight", "second.weight"]
    assert all(p.requires_grad and p.is_leaf for p in m.parameters())
    assert m.first.bias is None and list(m.children()) == [m.first, m.second]
    assert repr(m) == "Stack(\n  (first): Affine()\n  (second): Affine()\n)"
    y = m(kg.ones(1, 2))
    y.sum().backward()
    assert m.first.weight.grad is not None
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    assert m.eval().training is False and m.first.training is False


def test_module_makes_one_variable_per_parameter_and_graph():
    m = Stack()
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 2])
        y1 = m(x)
        m(x * 2.0)  # the second call reads the same variables
        init = kg.global_variables_initializer()
    variables = m.variables(g)
    assert [v.name for v in variables] == ["affine/weight", "affine_1/weight"]
    assert len(g.variables) == 2  # the second call reused them
    with kg.Session(g) as sess:
        sess.run(init)
        np.testing.assert_array_equal(sess.run(y1, {x: [[1.0, 2.0]]}), [[6.0, 6.0]])
    # Another graph gets its own variables, from the parameters' current values.
    with kg.no_grad():
        m.first.weight.data[:] = 2.0
    with kg.Graph().as_default() as g2:
        m(kg.placeholder(kg.float32, shape=[None, 2]))
        assert m.variables(g2)[0].initial_value.attrs["value"][0, 0] == 2.0


def test_module_errors():
    class Forgot(kg.nn.Module):
        def __init__(self):
            self.register_parameter("w", kg.ones(2))

    with pytest.raises(AttributeError, match=r"call super\(\).__init__\(\) first"):
        Forgot()
    m = kg.nn.Module()
    with pytest.raises(TypeError, match="float32 or float64"):
        m.register_parameter("w", kg.tensor([1, 2]))
    m.register_parameter("w", kg.ones(2))
    m.size = 2
    with pytest.raises(KeyError, match="already exists"):
        m.register_parameter("size", kg.ones(2))
    with pytest.raises(TypeError, match="cannot assign"):
        m.w = 3
    with pytest.raises(NotImplementedError, match="must define forward"):
        m(kg.ones(2))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        m.nope  # noqa: B018


# -- RNNCell ------------------------------------------------------------------------------------
def test_rnn_cell_parameters_follow_pytorch_and_the_seed():
    kg.random.seed(5)
    cell = kg.nn.RNNCell(F, H)
    shapes = {name: p.shape for name, p in cell.named_parameters()}
    assert shapes == {"weight_ih": (H, F), "weight_hh": (H, H), "bias_ih": (H,),
                      "bias_hh": (H,)}
    bound = 1 / np.sqrt(H)
    assert all(np.abs(v).max() <= bound for v in params(cell).values())
    kg.random.seed(5)
    again = kg.nn.RNNCell(F, H)
    assert all(np.array_equal(params(cell)[k], params(again)[k]) for k in params(cell))
    assert (cell.state_size, cell.output_size) == (H, H)
    assert repr(kg.nn.RNNCell(2, 3, bias=False)) == "RNNCell(2, 3, bias=False)"


def test_rnn_cell_eager_matches_numpy_and_finite_differences():
    cell = kg.nn.RNNCell(F, H, dtype=kg.float64)
    p = params(cell)
    rng = np.random.default_rng(1)
    x, h = rng.standard_normal((2, F)), rng.standard_normal((2, H))
    xt = kg.tensor(x, requires_grad=True)
    out = cell(xt, kg.tensor(h))
    np.testing.assert_allclose(out.detach().numpy(), np_cell(x, h, p), rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), numeric_grad(lambda v: np_cell(v, h, p).sum(),
                                                             x), rtol=1e-6)
    np.testing.assert_allclose(
        cell.weight_hh.grad.numpy(),
        numeric_grad(lambda w: np_cell(x, h, {**p, "weight_hh": w}).sum(), p["weight_hh"]),
        rtol=1e-6)
    np.testing.assert_allclose(cell(kg.tensor(x)).detach().numpy(),
                               np_cell(x, np.zeros((2, H)), p), rtol=1e-12)


def test_eager_backward_sums_a_weights_steps_in_one_product():
    # The cell hands its leaf weights' per-step gradients to sinks, summed in one product
    # when backward() ends (kernelgraph/ops/products.py). Here one square matrix is both
    # weights of the cell and also used outside it, one bias vector is both biases: every
    # gradient must still be the sum over every use, as the composed formula gives it.
    rng = np.random.default_rng(3)
    w0, b0 = rng.standard_normal((H, H)) * 0.5, rng.standard_normal(H)
    xs = [rng.standard_normal((2, H)) for _ in range(5)]

    def run(fused):
        w, b = kg.tensor(w0, requires_grad=True), kg.tensor(b0, requires_grad=True)
        seen = []
        w.register_hook(lambda g: seen.append(g.numpy().copy()))
        h = kg.zeros(2, H, dtype=kg.float64)
        for x in xs:
            x = kg.tensor(x)
            h = kg.ops.rnn_tanh_cell(x, h, w, w, b, b) if fused else \
                kg.tanh(x @ w.T + b + h @ w.T + b)
        loss = (h * h).sum() + (w * w).sum() + b.sum()
        loss.backward()
        (gw, gb) = kg.autograd.grad((kg.ops.rnn_tanh_cell(kg.tensor(xs[0]), h.detach(), w, w,
                                                           b, b) if fused else
                                     kg.tanh(kg.tensor(xs[0]) @ w.T + b + h.detach() @ w.T
                                             + b)).sum(), [w, b])
        return w.grad.numpy(), b.grad.numpy(), seen[0], gw.numpy(), gb.numpy()

    for fused, composed in zip(run(True), run(False)):
        np.testing.assert_allclose(fused, composed, rtol=1e-12, atol=1e-12)


def test_rnn_cell_static_starts_from_the_eager_weights():
    cell = kg.nn.RNNCell(F, H)
    x = np.ones((2, F), np.float32)
    with kg.Graph().as_default():
        xs = kg.placeholder(kg.float32, shape=[None, F])
        hs = cell(xs)
        with kg.Session() as sess:
            sess.run(kg.global_variables_initializer())
            static = sess.run(hs, {xs: x})
    np.testing.assert_array_equal(static, cell(kg.tensor(x)).detach().numpy())


def test_rnn_cell_errors():
    cell = kg.nn.RNNCell(F, H)
    with pytest.raises(ValueError, match=r"input of shape \(batch, 3\), got \(2, 5\)"):
        cell(kg.ones(2, 5))
    with pytest.raises(ValueError, match=r"hidden state of shape \(batch, 4\)"):
        cell(kg.ones(2, F), kg.ones(2, 3))
    with pytest.raises(TypeError, match="kg.Tensor or a graph node"):
        cell(np.ones((2, F)))
    # The shapes are checked by the op, and told in the cell's terms: unbatched, deferred
    # by autobatching, and in a graph (unknown batch) alike.
    with pytest.raises(ValueError, match=r"input of shape \(batch, 3\), got \(5,\)"):
        cell(kg.ones(5), kg.ones(H))
    with kg.autobatch(), pytest.raises(ValueError, match=r"hidden state of shape \(batch, 4\)"):
        cell(kg.ones(2, F), kg.ones(2, 3))
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float32, shape=(None, 5))
        with pytest.raises(ValueError, match=r"input of shape \(batch, 3\), got \(\?, 5\)"):
            cell(x, kg.zeros(1, H))
    with pytest.raises(ValueError, match="hidden_size must be a positive int"):
        kg.nn.RNNCell(3, 0)
    with pytest.raises(TypeError, match="float32 or float64"):
        kg.nn.RNNCell(3, 2, dtype=kg.int64)


def test_rnn_cell_is_one_node_per_step_in_both_modes():
    """The cell is the fused rnn_tanh_cell op: one recorded node a step (not the eight of
    the formula written with matmul, transpose, add and tanh), in eager mode and in the
    static loop body alike."""
    cell = kg.nn.RNNCell(F, H)
    h = kg.zeros(1, H)
    for _ in range(3):
        h = cell(kg.ones(1, F), h)
    ops = [n["op"] for n in kg.graph_of(h)["nodes"] if n["op"] != "leaf"]
    assert ops == ["rnn_tanh_cell"] * 3
    class Cell(kg.nn.RNNCell):  # a subclass may change the step: dynamic_rnn loops over it
        pass

    g = kg.Graph()
    with g.as_default():
        xs = kg.placeholder(kg.float32, shape=[None, None, F])
        kg.nn.dynamic_rnn(Cell(F, H), xs)
    body = next(n for n in g.nodes if n.op.name == "while_loop").attrs["spec"].body
    assert [n.op.name for n in body.graph.nodes].count("rnn_tanh_cell") == 1


def test_rnn_cell_eager_step_takes_the_short_way_and_a_subclass_its_own_forward():
    """An eager step skips Module.__call__ and forward (RNNCell.__call__): the same values
    and one node as the general path; a subclass that overrides forward still has it run."""
    cell = kg.nn.RNNCell(F, H)
    x, h = kg.tensor(np.linspace(-1, 1, 2 * F).reshape(2, F)), kg.ones(2, H)
    short, general = cell(x, h), kg.nn.Module.__call__(cell, x, h)
    np.testing.assert_array_equal(short.detach().numpy(), general.detach().numpy())
    assert [n["op"] for n in kg.graph_of(short)["nodes"] if n["op"] != "leaf"] == \
        ["rnn_tanh_cell"]

    class Doubled(kg.nn.RNNCell):
        def forward(self, x, h=None):
            return super().forward(x, h) * 2.0

    doubled = Doubled(F, H)
    doubled.load_state_dict(cell.state_dict())
    np.testing.assert_array_equal(doubled(x, h).detach().numpy(), 2.0 * short.detach().numpy())


def test_rnn_cell_unbatched_and_without_bias_in_both_modes():
    kg.random.seed(2)
    cell = kg.nn.RNNCell(F, H, bias=False)
    assert [name for name, _ in cell.named_parameters()] == ["weight_ih", "weight_hh"]
    x = np.linspace(-1, 1, F).astype(np.float32)
    p = params(cell)
    want = np.tanh(p["weight_ih"] @ x)
    eager = cell(kg.tensor(x))  # (input,) -> (hidden,), as PyTorch's unbatched call
    assert eager.shape == (H,)
    np.testing.assert_allclose(eager.detach().numpy(), want, rtol=1e-6)
    with kg.Graph().as_default():
        xs = kg.placeholder(kg.float32, shape=[F])
        out = cell(xs)
        assert out.shape == (H,)
        with kg.Session() as sess:
            sess.run(kg.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(out, {xs: x}), eager.detach().numpy())


def test_rnn_tanh_cell_errors_name_the_inputs():
    x, h = np.ones((2, F), np.float32), np.ones((2, H), np.float32)
    w_ih, w_hh, b = np.ones((H, F), np.float32), np.ones((H, H), np.float32), np.ones(H)
    with pytest.raises(kg.errors.ShapeError, match="hidden size differs between inputs: "
                                                  "h 4, w_ih 4, w_hh 4, w_hh 4, b_ih 5"):
        kg.ops.rnn_tanh_cell(kg.tensor(x), kg.tensor(h), w_ih, w_hh, np.ones(H + 1), b)
    with pytest.raises(kg.errors.ShapeError, match="batch differs between inputs: x 2, h 3"):
        kg.ops.rnn_tanh_cell(kg.tensor(x), kg.tensor(np.ones((3, H))), w_ih, w_hh, b, b)
    with pytest.raises(kg.errors.ShapeError, match=r"x must have rank 2, got shape \(3,\)"):
        with kg.Graph().as_default():
            kg.ops.rnn_tanh_cell(kg.placeholder(kg.float32, shape=[F]), h, w_ih, w_hh, b, b)
    with pytest.raises(TypeError, match="takes 6 inputs"):
        kg.ops.rnn_tanh_cell(kg.tensor(x), kg.tensor(h), w_ih, w_hh)
    # mixed dtypes promote, as matmul does: float32 inputs with float64 biases give float64
    assert kg.ops.rnn_tanh_cell(kg.tensor(x), kg.tensor(h), w_ih, w_hh, b, b).dtype == \
        kg.float64


# -- dynamic_rnn --------------------------------------------------------------------------------
def test_eager_dynamic_rnn_matches_numpy(data):
    x, lengths, h0 = data
    cell = kg.nn.RNNCell(F, H, dtype=kg.float64)
    out, h = kg.nn.dynamic_rnn(cell, kg.tensor(x), sequence_length=lengths,
                               initial_state=kg.tensor(h0))
    ref_out, ref_h = np_rnn(x, lengths, params(cell), h0)
    np.testing.assert_allclose(out.detach().numpy(), ref_out, rtol=1e-12)
    np.testing.assert_allclose(h.detach().numpy(), ref_h, rtol=1e-12)
    assert not out.detach().numpy()[1, 2:].any() and not out.detach().numpy()[2].any()
    np.testing.assert_array_equal(h.detach().numpy()[2], h0[2])  # length 0: initial state


def static_rnn(cell, time_major=False, with_h0=True):
    g = kg.Graph()
    with g.as_default():
        shape = [None, None, F]
        x = kg.placeholder(cell.dtype, shape=shape, name="x")
        lengths = kg.placeholder(kg.int64, shape=[None], name="lengths")
        h0 = kg.placeholder(cell.dtype, shape=[None, H], name="h0") if with_h0 else None
        out, h = kg.nn.dynamic_rnn(cell, x, sequence_length=lengths, initial_state=h0,
                                   time_major=time_major)
        init = kg.global_variables_initializer()
    sess = kg.Session(g)
    sess.run(init)
    return g, sess, x, lengths, h0, out, h


def test_static_dynamic_rnn_agrees_with_eager_for_any_length(data):
    x, lengths, h0 = data
    cell = kg.nn.RNNCell(F, H)
    g, sess, xs, ls, hs, out, h = static_rnn(cell)
    assert out.shape == (None, None, H) and h.shape == (None, H)
    for steps, batch in ((5, 3), (2, 3), (7, 1)):  # one graph, any time and batch size
        xv = np.resize(x, (batch, steps, F)).astype(np.float32)
        lv = np.minimum(lengths[:batch], steps)
        hv = h0[:batch].astype(np.float32)
        so, sh = sess.run([out, h], {xs: xv, ls: lv, hs: hv})
        eo, eh = kg.nn.dynamic_rnn(cell, kg.tensor(xv), sequence_length=lv,
                                   initial_state=kg.tensor(hv))
        np.testing.assert_allclose(so, eo.detach().numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(sh, eh.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_static_gradients_match_eager_and_finite_differences(data):
    x, lengths, h0 = data
    cell = kg.nn.RNNCell(F, H, dtype=kg.float64)
    p = params(cell)
    r = np.random.default_rng(2).standard_normal((3, 5, H))

    def loss_np(xv=x, hv=h0, **changed):
        outs, hn = np_rnn(xv, lengths, {**p, **changed}, hv)
        return (outs * r).sum() + (hn * hn).sum()

    g, sess, xs, ls, hs, out, h = static_rnn(cell)
    with g.as_default():
        loss = kg.reduce_sum(out * r) + kg.reduce_sum(h * h)
        variables = cell.variables(g)
        grads = kg.gradients(loss, [xs, hs, *variables])
    got = sess.run([loss, grads], {xs: x, ls: lengths, hs: h0})
    assert got[0] == pytest.approx(loss_np())
    np.testing.assert_allclose(got[1][0], numeric_grad(lambda v: loss_np(xv=v), x), rtol=1e-5,
                               atol=1e-8)
    np.testing.assert_allclose(got[1][1], numeric_grad(lambda v: loss_np(hv=v), h0),
                               rtol=1e-5, atol=1e-8)
    for (name, value), grad in zip(p.items(), got[1][2:]):
        np.testing.assert_allclose(grad, numeric_grad(lambda v, n=name: loss_np(**{n: v}),
                                                      value), rtol=1e-5, atol=1e-8)
    # Eager backward gives the same numbers.
    xt, ht = kg.tensor(x, requires_grad=True), kg.tensor(h0, requires_grad=True)
    eo, eh = kg.nn.dynamic_rnn(cell, xt, sequence_length=lengths, initial_state=ht)
    ((eo * kg.tensor(r)).sum() + (eh * eh).sum()).backward()
    np.testing.assert_allclose(got[1][0], xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[1][1], ht.grad.numpy(), rtol=1e-10, atol=1e-12)
    for p_eager, grad in zip(cell.parameters(), got[1][2:]):
        np.testing.assert_allclose(grad, p_eager.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_time_major_and_default_state(data):
    x, lengths, _ = data
    cell = kg.nn.RNNCell(F, H, dtype=kg.float64)
    g, sess, xs, ls, _, out, h = static_rnn(cell, time_major=True, with_h0=False)
    so, sh = sess.run([out, h], {xs: x.transpose(1, 0, 2), ls: lengths})
    ref_out, ref_h = np_rnn(x, lengths, params(cell))
    np.testing.assert_allclose(so, ref_out.transpose(1, 0, 2), rtol=1e-12)
    np.testing.assert_allclose(sh, ref_h, rtol=1e-12)
    eo, eh = kg.nn.dynamic_rnn(cell, kg.tensor(x.transpose(1, 0, 2)), time_major=True)
    np.testing.assert_allclose(eh.detach().numpy(), np_rnn(x, [5, 5, 5], params(cell))[1],
                               rtol=1e-12)


def test_no_steps_at_all(data):
    cell = kg.nn.RNNCell(F, H)
    g, sess, xs, ls, hs, out, h = static_rnn(cell)
    h0 = data[2].astype(np.float32)
    so, sh = sess.run([out, h], {xs: np.zeros((3, 0, F)), ls: [0, 0, 0], hs: h0})
    assert so.shape == (3, 0, H)
    np.testing.assert_array_equal(sh, h0)
    eo, eh = kg.nn.dynamic_rnn(cell, kg.zeros(3, 0, F))
    assert eo.shape == (3, 0, H) and not eh.detach().numpy().any()


def test_training_reduces_the_loss_in_both_modes():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 6, F)).astype(np.float32)
    lengths = rng.integers(2, 7, 8)
    target = np.tanh(x[np.arange(8), lengths - 1, :1] * 2.0).astype(np.float32)  # (8, 1)

    kg.random.seed(0)
    cell = kg.nn.RNNCell(F, H)
    g = kg.Graph()
    with g.as_default():
        xs = kg.placeholder(kg.float32, shape=[None, None, F])
        ls = kg.placeholder(kg.int64, shape=[None])
        _, h = kg.nn.dynamic_rnn(cell, xs, sequence_length=ls)
        loss = kg.reduce_mean(kg.square(h[:, :1] - target))
        variables = cell.variables(g)
        grads = kg.gradients(loss, variables)
        train = kg.group(*[v.assign_sub(0.5 * gv) for v, gv in zip(variables, grads)])
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        static = [sess.run([loss, train], {xs: x, ls: lengths})[0] for _ in range(40)]
    assert static[-1] < 0.5 * static[0]

    eager = []
    for _ in range(40):  # the same model, eagerly, from the same initial weights
        cell.zero_grad()
        _, h = kg.nn.dynamic_rnn(cell, kg.tensor(x), sequence_length=lengths)
        loss = ((h[:, :1] - kg.tensor(target)) ** 2).mean()
        loss.backward()
        eager.append(loss.item())
        with kg.no_grad():
            for p in cell.parameters():
                p.data -= 0.5 * p.grad.data
    np.testing.assert_allclose(eager, static, rtol=1e-4)


def test_dynamic_rnn_errors():
    cell = kg.nn.RNNCell(F, H)
    with pytest.raises(ValueError, match="inputs must be 3-d"):
        kg.nn.dynamic_rnn(cell, kg.ones(2, F))
    with pytest.raises(ValueError, match=r"sequence_length must be a vector of length "
                       r"batch_size \(2\)"):
        kg.nn.dynamic_rnn(cell, kg.ones(2, 3, F), sequence_length=[1, 2, 3])
    with pytest.raises(ValueError, match="must not be negative"):
        kg.nn.dynamic_rnn(cell, kg.ones(2, 3, F), sequence_length=[1, -2])
    with pytest.raises(TypeError, match="dtype float64 differs"):
        kg.nn.dynamic_rnn(cell, kg.ones(2, 3, F), dtype=kg.float64)
    with pytest.raises(TypeError, match="RNN cell"):
        kg.nn.dynamic_rnn(lambda x, h: x, kg.ones(2, 3, F))
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float32, shape=[None, None, F])
        with pytest.raises(TypeError, match=r"sequence_length must hold ints"):
            kg.nn.dynamic_rnn(cell, x, sequence_length=kg.placeholder(kg.float32, [None]))
        with pytest.raises(ValueError, match=r"input of shape \(batch, 3\)"):
            kg.nn.dynamic_rnn(cell, kg.placeholder(kg.float32, shape=[None, None, 5]))


def test_compat_v1_dynamic_rnn_with_basic_rnn_cell():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, F])
        cell = tf.nn.rnn_cell.BasicRNNCell(H)
        out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[2, 3], dtype=tf.float32)
        names = [v.name for v in tf.global_variables()]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            o, s = sess.run([out, state], {x: np.ones((2, 3, F))})
    assert names[0] == "rnn/basic_rnn_cell/kernel:0" and len(names) == 2  # TF1's variables
    assert o.shape == (2, 3, H) and not o[0, 2].any()
    np.testing.assert_array_equal(s[0], o[0, 1])
    np.testing.assert_array_equal(s[1], o[1, 2])


@pytest.mark.skipif(not kg.cuda.is_available(), reason="needs CUDA or its simulator")
def test_static_rnn_with_the_cell_on_cuda():
    kg.random.seed(0)
    cell = kg.nn.RNNCell(2, 3)
    x = np.random.default_rng(0).standard_normal((2, 3, 2)).astype(np.float32)
    g = kg.Graph()
    with g.as_default(), kg.device("cuda"):
        xs = kg.placeholder(kg.float32, [None, None, 2])
        _, h = kg.nn.dynamic_rnn(cell, xs, sequence_length=[3, 1])
        grads = kg.gradients(kg.reduce_sum(h), cell.variables(g))
        init = kg.global_variables_initializer()
    assert {v.device.type for v in cell.variables(g)} == {"cuda"}
    with kg.Session(g) as sess:
        sess.run(init)
        static_h, static_g = sess.run([h, grads], {xs: x})
    _, eager_h = kg.nn.dynamic_rnn(cell, kg.tensor(x), sequence_length=[3, 1])
    eager_h.sum().backward()
    np.testing.assert_allclose(static_h, eager_h.detach().numpy(), rtol=1e-5, atol=1e-6)
    for got, p in zip(static_g, cell.parameters()):
        np.testing.assert_allclose(got, p.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_eager_cells_on_cuda_with_and_without_bias():
    rng = np.random.default_rng(3)
    x, h = rng.standard_normal((2, F)).astype(np.float32), rng.standard_normal((2, H))
    for bias in (True, False):
        kg.random.seed(1)
        cell = kg.nn.RNNCell(F, H, bias=bias)
        want = cell(kg.tensor(x), kg.tensor(h.astype(np.float32))).detach().numpy()
        cuda = kg.device("cuda")
        for p in cell.parameters():
            p.data = p.to(cuda).data
        got = cell(kg.tensor(x, device=cuda), kg.tensor(h, dtype=kg.float32, device=cuda))
        assert got.device == cuda
        np.testing.assert_allclose(got.detach().cpu().numpy(), want, rtol=1e-5, atol=1e-6)
