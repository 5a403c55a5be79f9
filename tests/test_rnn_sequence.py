"""Static ``dynamic_rnn`` over a plain ``kg.nn.RNNCell`` is one ``rnn_tanh_sequence`` node
(kernelgraph/ops/rnn_sequence.py): it gives the eager loop's bits, and the gradients of the
``while_loop`` it replaces, for every way of giving lengths, batch and time."""

import numpy as np
import pytest

import kernelgraph as kg

F, H = 3, 5


class LoopCell(kg.nn.RNNCell):
    """The same cell, run by the general while_loop (a subclass may change the step)."""


def _static(cell, xs, lengths, h0=None, time_major=False):
    g = kg.Graph()
    with g.as_default():
        inputs = kg.placeholder(kg.float32, shape=(None, None, F))
        feed = {inputs: xs}
        lens = None
        if lengths is not None:
            lens = kg.placeholder(kg.int64, shape=(None,))
            feed[lens] = lengths
        init = None
        if h0 is not None:
            init = kg.placeholder(kg.float32, shape=(None, H))
            feed[init] = h0
        out, h = kg.nn.dynamic_rnn(cell, inputs, sequence_length=lens, initial_state=init,
                                   time_major=time_major)
        params = cell.variables(g)
        loss = kg.reduce_sum(h * h) + kg.reduce_sum(out * np.float32(0.5))
        wrt = params + [inputs] + ([init] if init is not None else [])
        grads = kg.gradients(loss, wrt)
        ops = [n.op.name for n in g.nodes]
        with kg.Session(graph=g) as sess:
            sess.run(kg.global_variables_initializer())
            return ops, sess.run([out, h, grads], feed)


def _cells():
    kg.random.seed(3)
    cell = kg.nn.RNNCell(F, H)
    loop = LoopCell(F, H)
    loop.load_state_dict(cell.state_dict())
    return cell, loop


@pytest.mark.parametrize("batch,steps,lengths", [
    (4, 6, [6, 2, 0, 4]), (3, 5, None), (2, 0, [0, 0]), (0, 4, []), (3, 1, [1, 0, 1])])
@pytest.mark.parametrize("with_h0", [False, True])
def test_one_node_matches_the_loop_and_eager(batch, steps, lengths, with_h0):
    rng = np.random.default_rng(batch * 10 + steps)
    xs = rng.standard_normal((batch, steps, F)).astype(np.float32)
    h0 = rng.standard_normal((batch, H)).astype(np.float32) if with_h0 else None
    cell, loop = _cells()
    ops, (out, h, grads) = _static(cell, xs, lengths, h0)
    assert "rnn_tanh_sequence" in ops and "while_loop" not in ops
    loop_ops, (out_l, h_l, grads_l) = _static(loop, xs, lengths, h0)
    assert "while_loop" in loop_ops and "rnn_tanh_sequence" not in loop_ops
    # the forward runs the loop's own cell on the whole batch: the same bits
    np.testing.assert_array_equal(out, out_l)
    np.testing.assert_array_equal(h, h_l)
    for got, want in zip(grads, grads_l):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    eager_out, eager_h = kg.nn.dynamic_rnn(
        cell, kg.tensor(xs), sequence_length=None if lengths is None else np.array(lengths, int),
        initial_state=None if h0 is None else kg.tensor(h0))
    np.testing.assert_array_equal(out, eager_out.detach().numpy())
    np.testing.assert_array_equal(h, eager_h.detach().numpy())
    if lengths is not None and batch and steps:
        for b, n in enumerate(lengths):  # outputs past a length are zero
            assert not out[b, n:].any()


def test_time_major_and_float64():
    cell, loop = _cells()
    xs = np.random.default_rng(0).standard_normal((4, 2, F)).astype(np.float32)
    _, (out, h, _) = _static(cell, xs, [4, 3], time_major=True)
    _, (out_l, h_l, _) = _static(loop, xs, [4, 3], time_major=True)
    np.testing.assert_array_equal(out, out_l)
    np.testing.assert_array_equal(h, h_l)
    kg.random.seed(0)
    cell64 = kg.nn.RNNCell(F, H, dtype=kg.float64)
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float64, shape=(2, 3, F))
        _, h = kg.nn.dynamic_rnn(cell64, x, sequence_length=[3, 1])
        assert "rnn_tanh_sequence" in [n.op.name for n in g.nodes]
        with kg.Session(graph=g) as sess:
            sess.run(kg.global_variables_initializer())
            value = sess.run(h, {x: np.ones((2, 3, F))})
    eager = kg.nn.dynamic_rnn(cell64, kg.tensor(np.ones((2, 3, F))), sequence_length=[3, 1])[1]
    np.testing.assert_array_equal(value, eager.detach().numpy())


def test_a_wrong_size_is_the_cells_error_and_bad_lengths_are_refused():
    cell, _ = _cells()
    with kg.Graph().as_default():
        with pytest.raises(ValueError, match=r"input of shape \(batch, 3\)"):
            kg.nn.dynamic_rnn(cell, kg.placeholder(kg.float32, shape=[None, None, 5]))
    with pytest.raises(ValueError, match=r"lengths must be \(batch,\) = \(2,\) or empty"):
        kg.ops.OPS["rnn_tanh_sequence"](
            np.ones((3, 2, F)), np.zeros((2, H)), np.ones((H, F)), np.ones((H, H)),
            np.zeros(H), np.zeros(H), np.array([1, 2, 3]))
    with pytest.raises(TypeError, match="lengths must be int32 or int64"):
        kg.ops.OPS["rnn_tanh_sequence"](
            np.ones((3, 2, F)), np.zeros((2, H)), np.ones((H, F)), np.ones((H, H)),
            np.zeros(H), np.zeros(H), np.array([1.0, 2.0]))


def test_a_cell_without_biases_and_an_eager_initial_state_in_a_graph():
    kg.random.seed(1)
    cell = kg.nn.RNNCell(F, H, bias=False)
    loop = LoopCell(F, H, bias=False)
    loop.load_state_dict(cell.state_dict())
    xs = np.random.default_rng(5).standard_normal((2, 4, F)).astype(np.float32)
    ops, (out, h, grads) = _static(cell, xs, [4, 2])
    assert "rnn_tanh_sequence" in ops
    _, (out_l, h_l, grads_l) = _static(loop, xs, [4, 2])
    np.testing.assert_array_equal(out, out_l)
    np.testing.assert_array_equal(h, h_l)
    for got, want in zip(grads, grads_l):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # an eager tensor as the initial state of a graph's RNN is refused as the loop refuses it
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float32, shape=(2, 4, F))
        with pytest.raises(TypeError, match="is an eager tensor, but the loop is in a graph"):
            kg.nn.dynamic_rnn(cell, x, initial_state=kg.tensor(np.zeros((2, H), np.float32)))
