"""rnn_tanh_scan, the op kg.autobatch runs a recurrence of RNN cells as: the step-by-step
cell's bits forward, gradients against finite differences on both of its gradient paths, and
the autobatched per-sample code around it (states the user keeps, a gradient of a gradient)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelgraph as kg
from kernelgraph import ops as O
from kernelgraph.ops.rnn_scan import rnn_tanh_scan
from kernelgraph.ops.running_sum import running_sum
from tests.test_ops import assert_same, numeric_grad


def _recurrence(counts, seed, inputs=3, hidden=4, dtype=np.float64):
    """Random scan inputs for steps of ``counts`` rows (not increasing): each row of a step
    continues a different row of the step before it, in a shuffled order."""
    rng = np.random.default_rng(seed)
    offsets = np.cumsum([0, *counts])
    prev = np.concatenate([rng.permutation(np.arange(offsets[k - 1], offsets[k]))[:n]
                           for k, n in enumerate(counts) if k]).astype(np.int64) \
        if len(counts) > 1 else np.zeros(0, np.int64)
    values = [rng.standard_normal(s).astype(dtype) for s in
              ((offsets[-1], inputs), (counts[0], hidden), (hidden, inputs), (hidden, hidden),
               (hidden,), (hidden,))]
    return values, prev


def _step_by_step(values, prev, counts):
    """The scan's output by rnn_tanh_cell, one step at a time (NumPy arrays)."""
    x, h0, *weights = values
    out, offsets = [], np.cumsum([0, *counts])
    for k in range(len(counts)):
        a, b = offsets[k], offsets[k + 1]
        h = h0 if k == 0 else np.concatenate(out)[prev[a - counts[0]:b - counts[0]]]
        out.append(O.rnn_tanh_cell(x[a:b], h, *weights))
    return np.concatenate(out)


counts_lists = st.lists(st.integers(1, 4), min_size=1, max_size=5).map(
    lambda c: sorted(c, reverse=True))


@settings(max_examples=20, deadline=None)
@given(counts_lists, st.integers(0, 1000), st.sampled_from([np.float32, np.float64]))
def test_forward_has_the_step_by_step_cells_bits(counts, seed, dtype):
    values, prev = _recurrence(counts, seed, dtype=dtype)
    got = rnn_tanh_scan.forward(*values, prev, steps=tuple(counts))
    assert_same(got, _step_by_step(values, prev, counts), "scan vs cell steps")


@pytest.mark.parametrize("counts", [[3, 3, 2, 1], [2], [1, 1, 1]])
def test_gradients_both_ways_match_finite_differences(counts):
    # Leaf weights take eager mode's sinks (one product at the end); weights computed from
    # leaves (w * 1.0) and create_graph=True take the rule's return values; the latter
    # runs the formula as ops. All meet the finite differences of the step-by-step cells.
    values, prev = _recurrence(counts, seed=len(counts))
    weight = np.random.default_rng(7).standard_normal((sum(counts), 4))

    def loss(vs):
        return float((_step_by_step(vs, prev, counts) * weight).sum())

    want = [numeric_grad(lambda v, k=k: loss(values[:k] + [v] + values[k + 1:]), values[k])
            for k in range(6)]
    for way in ("leaves", "computed", "create_graph"):
        leaves = [kg.tensor(v, requires_grad=True) for v in values]
        inputs = leaves[:2] + [w * 1.0 for w in leaves[2:]] if way == "computed" else leaves
        out = rnn_tanh_scan(*inputs, prev, steps=tuple(counts))
        total = (out * kg.tensor(weight)).sum()
        if way == "create_graph":
            grads = kg.autograd.grad(total, leaves, create_graph=True)
        else:
            total.backward()
            grads = [t.grad for t in leaves]
        for k, name in enumerate(("x", "h0", "w_ih", "w_hh", "b_ih", "b_hh")):
            np.testing.assert_allclose(grads[k].detach().numpy(), want[k], rtol=1e-6,
                                       atol=1e-8, err_msg=f"{way}: {name}")


def _sequences(lengths, seed=0, hidden=5):
    rng = np.random.default_rng(seed)
    kg.random.seed(seed)
    cell = kg.nn.RNNCell(3, hidden)
    xs = [[kg.tensor(rng.standard_normal((1, 3)).astype(np.float32)) for _ in range(n)]
          for n in lengths]
    return cell, xs


def test_states_the_user_keeps_are_rows_of_the_scan_with_their_gradients():
    # Every state is kept (a list per sequence) and read after the block: each is an
    # ordinary tensor, a row of the scan's output, and the loss over all of them has the
    # gradients of the step-by-step eager run.
    cell, xs = _sequences([3, 1, 4])

    def model():
        kept = []
        for seq in xs:
            h = kg.zeros(1, 5)
            states = []
            for x in seq:
                h = cell(x, h)
                states.append(h)
            kept.append(states)
        loss = sum((s * s).sum() for states in kept for s in states)
        return loss, kept

    loss, eager_kept = model()
    loss.backward()
    want = [p.grad.numpy().copy() for p in cell.parameters()]
    for p in cell.parameters():
        p.grad = None
    with kg.autobatch() as ab:
        loss, kept = model()
        loss.backward()
    assert ab.stats.recurrences == [[3, 2, 2, 1]]
    for states, eager_states in zip(kept, eager_kept):
        for s, e in zip(states, eager_states):
            assert type(s) is kg.Tensor
            np.testing.assert_allclose(s.detach().numpy(), e.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
    for p, w in zip(cell.parameters(), want):
        np.testing.assert_allclose(p.grad.numpy(), w, rtol=1e-5, atol=1e-6)


def test_a_gradient_of_a_gradient_through_a_scan_matches_depth_batching():
    cell, xs = _sequences([2, 4, 3], seed=3)
    params = list(cell.parameters())

    def penalty(strategy):
        with kg.autobatch(strategy) as ab:
            loss = None
            for seq in xs:
                h = kg.zeros(1, 5)
                for x in seq:
                    h = cell(x, h)
                loss = (h * h).sum() if loss is None else loss + (h * h).sum()
            grads = kg.autograd.grad(loss, params, create_graph=True)
            total = sum((g * g).sum() for g in grads)
            total.backward()
        out = [p.grad.numpy().copy() for p in params]
        for p in params:
            p.grad = None
        return ab, out

    scan, got = penalty("agenda")
    depth, want = penalty("depth")
    assert scan.stats.recurrences == [[3, 3, 2, 1]] and not depth.stats.recurrences
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)


def test_cells_with_other_weights_or_pending_inputs_are_no_recurrence():
    # Two cells (other weights): each sequence's own recurrence. A step whose input is
    # computed from the previous state (x = h @ W) is not a scan: it needs the state first.
    cell_a, xs = _sequences([3, 2], seed=1)
    cell_b = kg.nn.RNNCell(3, 5)
    w = kg.tensor(np.full((5, 3), 0.1, np.float32))
    with kg.autobatch() as ab:
        hs = []
        for cell, seq in zip((cell_a, cell_b), xs):
            h = kg.zeros(1, 5)
            for x in seq:
                h = cell(x, h)
            hs.append(h)
        h = kg.zeros(1, 5)
        for _ in range(3):  # feeds itself: the next input is the state
            h = cell_a(h @ w, h)
        hs.append(h)
        values = [t.detach().numpy() for t in hs]
    # cell_b's two steps; cell_a's three, whose first step also ran the self-feeding
    # sequence's first cell (ready by then), which no later cell continues
    assert sorted(ab.stats.recurrences) == [[1, 1], [2, 1, 1]]
    eager = []
    for cell, seq in zip((cell_a, cell_b), xs):
        h = kg.zeros(1, 5)
        for x in seq:
            h = cell(x, h)
        eager.append(h.detach().numpy())
    h = kg.zeros(1, 5)
    for _ in range(3):
        h = cell_a(h @ w, h)
    eager.append(h.detach().numpy())
    for v, e in zip(values, eager):
        np.testing.assert_allclose(v, e, rtol=1e-5, atol=1e-6)


# -- running_sum: the chain of additions of a running total -----------------------------------
@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_running_sum_gradients_both_ways_match_finite_differences(shape):
    rng = np.random.default_rng(len(shape))
    start, terms = rng.standard_normal(shape), rng.standard_normal((4, *shape))
    weight = rng.standard_normal((4, *shape))

    def loss(s, t):
        return float((np.cumsum(np.concatenate([s[None], t]), axis=0)[1:] * weight).sum())

    want = [numeric_grad(lambda v: loss(v, terms), start),
            numeric_grad(lambda v: loss(start, v), terms)]
    for create_graph in (False, True):
        leaves = [kg.tensor(start, requires_grad=True), kg.tensor(terms, requires_grad=True)]
        total = (running_sum(*leaves) * kg.tensor(weight)).sum()
        grads = kg.autograd.grad(total, leaves, create_graph=create_graph)
        for g, w in zip(grads, want):
            np.testing.assert_allclose(g.detach().numpy(), w, rtol=1e-6, atol=1e-8)


def test_a_running_total_is_one_node_with_the_chains_bits():
    # loss = loss + term over 12 samples, and Python's sum() (from the int 0): the first
    # addition runs as it is, the other eleven as one running_sum with the same bits.
    rng = np.random.default_rng(5)
    w = kg.tensor(rng.standard_normal((3, 1)).astype(np.float32), requires_grad=True)
    xs = [kg.tensor(rng.standard_normal((1, 3)).astype(np.float32)) for _ in range(12)]

    def by_loop():
        loss = 0.0
        for x in xs:
            loss = loss + ((x @ w).tanh() * 3.0).sum()
        return loss

    def by_sum():
        return sum(((x @ w).tanh() * 3.0).sum() for x in xs)

    for model in (by_loop, by_sum):
        eager = model()
        eager.backward()
        want = w.grad.numpy().copy()
        w.grad = None
        with kg.autobatch() as ab:
            loss = model()
            loss.backward()
        assert ab.stats.batch_sizes["running_sum"] == [11]
        assert loss.item() == eager.item()
        np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-6)
        w.grad = None


def test_partial_sums_the_user_keeps_and_chains_that_stop():
    # The partial totals are kept (a list): each is a row of the running sum, with its own
    # gradient. A term of another shape (it broadcasts) ends the chain there.
    rng = np.random.default_rng(6)
    terms = [kg.tensor(rng.standard_normal(2).astype(np.float32), requires_grad=True)
             for _ in range(6)]
    wide = kg.tensor(rng.standard_normal((3, 2)).astype(np.float32), requires_grad=True)

    def model():
        total, kept = terms[0] * 1.0, []
        for t in terms[1:4]:
            total = total + t
            kept.append(total)
        total = total + wide  # (2,) + (3, 2): broadcasts, not a link of the chain
        for t in terms[4:]:
            total = total + t
        return (total.sum() + sum((k * k).sum() for k in kept)), kept

    loss, eager_kept = model()
    loss.backward()
    want = [t.grad.numpy().copy() for t in (*terms, wide)]
    for t in (*terms, wide):
        t.grad = None
    with kg.autobatch() as ab:
        loss, kept = model()
        loss.backward()
    assert ab.stats.batch_sizes["running_sum"][0] == 2  # terms[2], terms[3] after the first
    for k, e in zip(kept, eager_kept):
        np.testing.assert_array_equal(k.detach().numpy(), e.detach().numpy())
    for t, w in zip((*terms, wide), want):
        np.testing.assert_allclose(t.grad.numpy(), w, rtol=1e-6)


@pytest.mark.parametrize("bias", [True, False])
def test_cells_without_biases_are_a_recurrence_too(bias):
    # A cell without biases passes zero biases to its op: one shared array for every step,
    # so its steps are still one scan, with eager's values and gradients.
    cell, xs = _sequences([3, 5, 2], seed=4)
    cell = kg.nn.RNNCell(3, 5, bias=bias)

    def model():
        loss = 0.0
        for seq in xs:
            h = kg.zeros(1, 5)
            for x in seq:
                h = cell(x, h)
            loss = loss + (h * h).sum()
        return loss

    eager = model()
    eager.backward()
    want = [p.grad.numpy().copy() for p in cell.parameters()]
    for p in cell.parameters():
        p.grad = None
    with kg.autobatch() as ab:
        loss = model()
        loss.backward()
    assert ab.stats.recurrences == [[3, 3, 2, 1, 1]]
    np.testing.assert_allclose(loss.item(), eager.item(), rtol=1e-6)
    for p, w in zip(cell.parameters(), want):
        np.testing.assert_allclose(p.grad.numpy(), w, rtol=1e-5, atol=1e-6)
