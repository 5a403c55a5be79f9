"""kg.nn.RNN / LSTM / GRU, the cells, nn.utils.rnn (packed sequences) and
nn.utils.clip_grad_*, against PyTorch 2.13's recorded numbers (the case code in
tests/recorded/record_torch_rnn.py runs on both frameworks), and the modules in static
mode against eager mode."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph import nn
from tests.recorded.record_torch_rnn import (
    CELL_CASES,
    MODULE_CASES,
    cell_case,
    char_rnn_case,
    clip_case,
    data,
    namespaces,
    packed_training_case,
    run_module,
    training_case,
    utils_case,
)

T = namespaces(kg, nn, nn.utils.rnn, kg.optim)


def assert_same(got, want, path="value"):
    if isinstance(want, dict):
        assert set(got) == set(want), path
        for k in want:
            assert_same(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, str) or want is None:
        assert got == want, path
    else:
        np.testing.assert_allclose(np.array(got, np.float64), np.array(want, np.float64),
                                   rtol=1e-5, atol=1e-6, err_msg=path)


@pytest.mark.parametrize("name", list(MODULE_CASES))
def test_modules_match_torch(name, recorded):
    kind, kwargs, shape, extra = MODULE_CASES[name]
    assert_same(run_module(T, kind, kwargs, shape, **extra),
                recorded("torch_rnn")["cases"][name], name)


@pytest.mark.parametrize("name", list(CELL_CASES))
def test_cells_match_torch(name, recorded):
    kind, kwargs, state = CELL_CASES[name]
    assert_same(cell_case(T, kind, kwargs, state), recorded("torch_rnn")["cases"][name], name)


def test_packing_utilities_match_torch(recorded):
    assert_same(utils_case(T), recorded("torch_rnn")["cases"]["utils"])


def test_clip_grad_match_torch(recorded):
    assert_same(clip_case(T), recorded("torch_rnn")["cases"]["clip"])


def test_sequence_classifier_trains_as_torch(recorded):
    assert_same(training_case(T), recorded("torch_rnn")["cases"]["training"])


def test_packed_gru_classifier_trains_as_torch(recorded):
    assert_same(packed_training_case(T), recorded("torch_rnn")["cases"]["packed_training"])


def test_char_rnn_with_a_carried_hidden_state_trains_as_torch(recorded):
    assert_same(char_rnn_case(T), recorded("torch_rnn")["cases"]["char_rnn"])


# -- static mode: the same module on graph nodes ------------------------------------------------
STATIC_MODULES = {
    "lstm_2layers_bidirectional_batch_first": lambda: nn.LSTM(
        3, 4, num_layers=2, batch_first=True, bidirectional=True),
    "gru_bidirectional": lambda: nn.GRU(3, 4, bidirectional=True),
    "rnn_relu_no_bias": lambda: nn.RNN(3, 4, nonlinearity="relu", bias=False),
}


@pytest.mark.parametrize("name", list(STATIC_MODULES))
def test_static_graph_matches_eager(name):
    """Called on placeholders of unknown batch and time, a module builds one graph whose
    outputs, final states and gradients equal eager mode's on the same weights."""
    kg.manual_seed(0)
    m = STATIC_MODULES[name]()
    lstm = isinstance(m, nn.LSTM)
    x = data(1, 2, 5, 3)
    layers = m.num_layers * (2 if m.bidirectional else 1)
    h0 = data(2, layers, 2 if m.batch_first else 5, 4)  # (x: batch 2 or time 2)
    state0 = (h0, h0 * 0.5) if lstm else h0

    def loss_of(out, hn):
        parts = (out, *hn) if lstm else (out, hn)
        return sum((p * p).sum() for p in parts)

    xe = kg.tensor(x)
    out_e, hn_e = m(xe, tuple(kg.tensor(s) for s in state0) if lstm else kg.tensor(state0))
    loss_of(out_e, hn_e).backward()
    grads_e = [p.grad.numpy() for p in m.parameters()]

    g = kg.Graph()
    with g.as_default():
        xs = kg.placeholder(kg.float32, shape=[None, None, 3])
        hs = kg.placeholder(kg.float32, shape=[layers, None, 4])
        state = (hs, hs * 0.5) if lstm else hs
        out_s, hn_s = m(xs, state)
        grads_s = kg.gradients(loss_of(out_s, hn_s), m.variables(g))
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        out, hn, grads = sess.run([out_s, hn_s, grads_s], {xs: x, hs: h0})
    np.testing.assert_allclose(out, out_e.detach().numpy(), rtol=1e-6, atol=1e-7)
    for a, b in zip(hn if lstm else [hn], hn_e if lstm else [hn_e]):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-6, atol=1e-7)
    for a, b in zip(grads, grads_e):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert [v.name for v in m.variables(g)][:2] == [f"{m.name}/weight_ih_l0",
                                                    f"{m.name}/weight_hh_l0"]


def test_gru_cell_in_a_graph_matches_eager():
    kg.manual_seed(0)
    cell = nn.GRUCell(3, 4)
    x, h = data(4, 2, 3), data(5, 2, 4)
    want = cell(kg.tensor(x), kg.tensor(h)).detach().numpy()
    g = kg.Graph()
    with g.as_default():
        xs, hs = kg.placeholder(kg.float32, [None, 3]), kg.placeholder(kg.float32, [None, 4])
        out = cell(xs, hs)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        np.testing.assert_allclose(sess.run(out, {xs: x, hs: h}), want, rtol=1e-6)


# -- what PyTorch refuses ---------------------------------------------------------------------
def test_argument_and_shape_errors():
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout"):
        nn.LSTM(3, 4, dropout=1.5)
    lstm = nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(RuntimeError, match="input_size. Expected 3, got 5"):
        lstm(kg.ones(2, 1, 5))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(2, \*, 4\)"):
        lstm(kg.ones(2, 1, 3), (kg.zeros(1, 1, 4), kg.zeros(1, 1, 4)))
    with pytest.raises(RuntimeError, match="hx must be a tuple"):
        lstm(kg.ones(2, 1, 3), kg.zeros(2, 1, 4))
    with pytest.raises(RuntimeError, match="greater than 0"):
        nn.utils.rnn.pack_padded_sequence(kg.ones(3, 2, 1), [3, 0])


def test_repr_and_all_weights():
    m = nn.GRU(3, 4, num_layers=2, batch_first=True, dropout=0.25, bidirectional=True)
    assert repr(m) == "GRU(3, 4, num_layers=2, batch_first=True, dropout=0.25, " \
                      "bidirectional=True)"
    assert [len(w) for w in m.all_weights] == [4, 4, 4, 4]
    assert tuple(m.weight_ih_l1_reverse.shape) == (12, 8)
    before = m.eval()(kg.ones(2, 3, 3))[0].detach().numpy()   # (eval: no dropout)
    assert m.flatten_parameters() is None       # tutorials call it after .cuda()
    np.testing.assert_array_equal(m(kg.ones(2, 3, 3))[0].detach().numpy(), before)


@pytest.mark.skipif(not kg.cuda.is_available(), reason="needs CUDA or its simulator")
@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_modules_on_cuda_match_the_cpu(kind):
    """``model.cuda()`` and a CUDA input: the same outputs, states and gradients (small
    shapes: the simulator is slow)."""
    kg.manual_seed(0)
    m = getattr(nn, kind)(2, 3, bidirectional=True, batch_first=True, bias=kind != "GRU")
    x = data(1, 2, 3, 2)
    lengths = [3, 1]

    def run(device):
        xt = kg.tensor(x, device=device)
        out, hn = m(nn.utils.rnn.pack_padded_sequence(xt, lengths, batch_first=True))
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        states = hn if kind == "LSTM" else (hn,)
        loss = (out * out).sum() + sum((s * s).sum() for s in states)
        m.zero_grad()
        loss.backward()
        return [out.cpu().detach().numpy(), *(s.cpu().detach().numpy() for s in states),
                *(p.grad.cpu().numpy() for p in m.parameters())], out.device

    want, _ = run(None)
    m.cuda()
    got, device = run("cuda")
    assert device.type == "cuda"
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_packed_sequence_in_a_graph_matches_eager():
    """A packed batch of a placeholder whose shape is known: lengths are data the packing
    reads when the graph is built (a two-layer bidirectional GRU, unsorted lengths)."""
    kg.manual_seed(0)
    m = nn.GRU(3, 4, batch_first=True, bidirectional=True, num_layers=2)
    x, lengths = data(1, 3, 5, 3), [2, 5, 4]

    def run(inputs):
        packed = nn.utils.rnn.pack_padded_sequence(inputs, lengths, batch_first=True,
                                                   enforce_sorted=False)
        out, h_n = m(packed)
        return nn.utils.rnn.pad_packed_sequence(out, batch_first=True)[0], h_n

    want = [v.detach().numpy() for v in run(kg.tensor(x))]
    g = kg.Graph()
    with g.as_default():
        xs = kg.placeholder(kg.float32, shape=[3, 5, 3])
        fetches = run(xs)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        got = sess.run(list(fetches), {xs: x})
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_unbatched_graph_input_of_unknown_length():
    """(time, input) placeholders with time unknown: a batch of one, as eager mode runs it."""
    kg.manual_seed(0)
    m = nn.LSTM(3, 4, num_layers=2)
    x = data(3, 6, 3)
    want = [v.detach().numpy() for v in (m(kg.tensor(x))[0], *m(kg.tensor(x))[1])]
    g = kg.Graph()
    with g.as_default():
        xs = kg.placeholder(kg.float32, shape=[None, None])
        out, (h, c) = m(xs)
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        got = sess.run([out, h, c], {xs: x})
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
