"""kg.autobatch: per-sample eager code run as batched kernels, with the same values and
gradients as the unbatched eager run."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelgraph as kg
from kernelgraph.autobatching import LazyTensor, pending_count

RTOL, ATOL = 1e-5, 1e-6  # matmul and reductions over a batch may round differently


def _grads(params):
    out = [None if p.grad is None else p.grad.numpy().copy() for p in params]
    for p in params:
        p.grad = None
    return out


def _compare(model, params, *, exact=False):
    """Run ``model()`` (returns a scalar loss) eagerly and under autobatch with each
    strategy; compare. Returns the default (agenda) block; ``.depth``: the other one."""
    eager_loss = model()
    eager_loss.backward()
    eager_value, eager_grads = eager_loss.item(), _grads(params)
    blocks = {}
    for strategy in kg.autobatch.STRATEGIES:
        with kg.autobatch(strategy) as blocks[strategy]:
            loss = model()
            loss.backward()
            value = loss.item()
        grads = _grads(params)
        if exact:
            assert value == eager_value
        np.testing.assert_allclose(value, eager_value, rtol=RTOL, atol=ATOL)
        for g, e in zip(grads, eager_grads):
            assert (g is None) == (e is None)
            if g is not None:
                np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)
    blocks["agenda"].depth = blocks["depth"]
    return blocks["agenda"]


# -- an RNN over sequences of different lengths ------------------------------------------------
def _rnn_task(lengths, input_size=3, hidden=5, seed=0, first_state=None):
    """(model, parameters): the summed squared final states of an RNN over sequences of
    ``lengths``, each from its own zero state or all from the tensor ``first_state``."""
    rng = np.random.default_rng(seed)
    kg.random.seed(seed)
    cell = kg.nn.RNNCell(input_size, hidden)
    xs = [[kg.tensor(rng.standard_normal((1, input_size)).astype(np.float32))
           for _ in range(n)] for n in lengths]

    def model():
        loss = None
        for seq in xs:
            h = kg.zeros(1, hidden) if first_state is None else first_state
            for x in seq:
                h = cell(x, h)
            term = (h * h).sum()
            loss = term if loss is None else loss + term
        return loss

    return model, list(cell.parameters())


def test_rnn_matches_eager():
    model, params = _rnn_task([3, 1, 4, 4, 2])
    ab = _compare(model, params)
    assert ab.stats.batched > 0 and ab.stats.launches < ab.stats.nodes
    # depth: one fused cell call per step depth: 5 sequences, then 4, 3 (lengths 4, 4, 3), 2
    assert ab.depth.stats.batch_sizes["rnn_tanh_cell"] == [5, 4, 3, 2]
    # agenda: the same steps, found to be one recurrence, run as one scan
    assert ab.stats.recurrences == [[5, 4, 3, 2]] and "rnn_tanh_cell" not in ab.stats.batch_sizes
    assert ab.stats.batch_sizes["rnn_tanh_scan"] == [14]


def test_cell_steps_recorded_the_short_way_have_the_general_signature():
    """An RNNCell step inside a block is recorded by autobatching.record_cell, which reads
    the cell's weights once per block. Its records are the general path's: mixed with the
    same op called directly, every step is still one recurrence, with eager's values."""
    model, params = _rnn_task([3, 1, 4])
    ab = _compare(model, params)
    assert ab.stats.recurrences == [[3, 2, 2, 1]]
    cell = kg.nn.RNNCell(3, 5)
    w = [cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh]
    x = kg.ones(1, 3)

    def mixed():
        h = kg.zeros(1, 5)
        for step in range(4):  # odd steps through the op itself (the general recorder)
            h = cell(x, h) if step % 2 == 0 else kg.ops.rnn_tanh_cell(x, h, *w)
        return (h * h).sum()

    ab = _compare(mixed, w, exact=True)
    assert ab.stats.recurrences == [[1, 1, 1, 1]]
    assert not kg.autobatching._cell_weights  # (kept per block only)


def test_cell_steps_see_a_new_weight_array_and_grad_mode_mid_block():
    """record_cell compares the weights' arrays by identity: an array of another dtype
    assigned to a weight after a read inside the block is what the later steps compute
    with (float64 states), as eagerly; no_grad between steps is seen too."""
    cell = kg.nn.RNNCell(3, 5)
    x = kg.tensor(np.linspace(-1, 1, 3, dtype=np.float32).reshape(1, 3))
    before = cell.weight_hh._array.copy()

    def model():
        cell.weight_hh._array = before
        h = cell(x, cell(x, kg.zeros(1, 5)))
        first = (h * h).sum().item()  # a read: what is pending runs now
        cell.weight_hh._array = before.astype(np.float64) * 0.5
        h = cell(x, cell(x, h * 1.0))  # (a pending float32 state: the steps' signature
        # as before but for w_hh, so a stale one would say float32)
        with kg.no_grad():
            frozen = cell(x, h)
        return first, (h * h).sum(), frozen

    eager_first, eager_loss, eager_frozen = model()
    with kg.autobatch():
        first, loss, frozen = model()
        assert loss.dtype == kg.float64 and not frozen.requires_grad and loss.requires_grad
    assert first == eager_first and loss.item() == eager_loss.item()
    np.testing.assert_array_equal(frozen.numpy(), eager_frozen.numpy())
    cell.weight_hh._array = before


def test_agenda_runs_the_tails_of_all_lengths_together():
    # The loss term after each sequence sits at a depth set by the sequence's length: depth
    # batching runs it once per length, the agenda waits until every sequence has ended.
    model, params = _rnn_task([3, 1, 4, 4, 2])
    agenda = _compare(model, params)
    depth = agenda.depth
    assert agenda.stats.batch_sizes["mul"] == agenda.stats.batch_sizes["sum"] == [5]
    assert depth.stats.batch_sizes["mul"] == [2]  # lengths 4 and 4; three more one by one
    # agenda: the scan, one mul, one sum, the first add and the other three as one running
    # sum; depth: 4 steps, 4 muls, 4 sums, 4 adds
    assert (agenda.stats.launches, depth.stats.launches) == (5, 16)
    assert agenda.stats.batch_sizes["running_sum"] == [3]


def test_a_result_run_alone_feeds_a_batch_without_becoming_a_row():
    # The longer chain's last steps run alone; its final state then joins the other's in
    # one gather from the batched result and the lone one, not as a separate row.
    w = kg.tensor(np.full((2, 2), 0.5, np.float32), requires_grad=True)
    starts = [kg.tensor(np.full((1, 2), v, np.float32)) for v in (0.5, -1.0)]

    def model():
        terms = []
        for h, steps in zip(starts, (1, 3)):
            for _ in range(steps):
                h = (h @ w).tanh()
            terms.append((h * h).sum())
        return terms[0] + terms[1]

    _compare(model, [w])
    with kg.autobatch() as ab:
        edges = _graph_edges(model())
    assert ab.stats.batch_sizes["mul"] == [2] and ab.stats.batch_sizes["tanh"] == [2]
    assert ("gather", "concat") in edges and ("concat", "tanh") in edges
    assert ("concat", "getitem") not in edges  # no row of a batched result was cut out
    # h * h: both inputs are the same rows, gathered once
    assert edges.count(("gather", "concat")) == 1 and edges.count(("mul", "gather")) == 2


def test_an_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="strategy must be one of 'agenda', 'depth'"):
        kg.autobatch("greedy")


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=5))
def test_rnn_any_lengths(lengths):
    model, params = _rnn_task(lengths, seed=len(lengths))
    _compare(model, params)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=2, max_size=5), st.integers(1, 3),
       st.booleans())
def test_rnn_with_several_rows_per_sample_and_both_layouts(lengths, rows, shared_input):
    # Each sample is a batch of `rows` sequences; sequences ending at different steps make
    # the next step gather rows (rows * r + j); the loss reads the states through ops that
    # keep rows apart (tanh, sum over the last axis) and ops that need whole members
    # (sum over axis 0, reshape), so values move between both layouts.
    rng = np.random.default_rng(sum(lengths) * 10 + rows)
    kg.random.seed(rows)
    cell = kg.nn.RNNCell(3, 4)
    common = kg.tensor(rng.standard_normal((rows, 3)).astype(np.float32))
    xs = [[common if shared_input and t == 0 else
           kg.tensor(rng.standard_normal((rows, 3)).astype(np.float32)) for t in range(n)]
          for n in lengths]

    def model():
        loss = None
        for seq in xs:
            h = kg.zeros(rows, 4)
            for x in seq:
                h = cell(x, h)
            term = (h.tanh().sum(axis=-1) * 2.0).sum() + h.sum(axis=0).max() \
                + h.reshape(-1).mean()
            loss = term if loss is None else loss + term
        return loss

    ab = _compare(model, list(cell.parameters()))
    running = [sum(n > step for n in lengths) for step in range(max(lengths))]
    batched = ab.depth.stats.batch_sizes.get("rnn_tanh_cell", [])
    assert batched == [k for k in running if k > 1]  # every step with company, in one call
    assert ab.stats.recurrences == ([running] if len(running) > 1 else [])


def _graph_edges(t):
    """(consumer op, producer op) for every edge backward() of ``t`` would walk."""
    seen, edges, todo = set(), [], [t]
    while todo:
        node = todo.pop()._node
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for x in node.inputs:
            if isinstance(x, kg.Tensor) and x._node is not None:
                edges.append((node.op.name, x._node.op.name))
                todo.append(x)
    return edges


@pytest.mark.parametrize("state_grad", [False, True])
def test_a_shared_first_state_batches_the_first_step(state_grad):
    # Every sequence starts from the same zero state: the first step is one batched call (the
    # state repeated per member), not one call per sequence -- also when the state itself
    # requires grad and gets the sum of every sequence's gradient.
    h0 = kg.tensor(np.linspace(-0.2, 0.2, 5, dtype=np.float32).reshape(1, 5),
                   requires_grad=state_grad)
    model, params = _rnn_task([2, 3, 1, 3], seed=5, first_state=h0)
    ab = _compare(model, [*params, *([h0] if state_grad else [])])
    assert ab.depth.stats.batch_sizes["rnn_tanh_cell"] == [4, 3, 2]  # all 9 steps, 3 calls
    assert ab.stats.recurrences == [[4, 3, 2]]


def test_row_wise_groups_add_no_reshapes_to_the_graph():
    # Cell steps, x @ W, elementwise ops and the sum of a whole (1, k) state run on the
    # members' rows joined end to end (FLAT): the graph backward() walks has no reshape.
    model, _ = _rnn_task([3, 1, 4, 4, 2])
    with kg.autobatch("depth"):
        edges = _graph_edges(model())
    assert sum(1 for c, _ in edges if c == "rnn_tanh_cell") >= 3  # each step reads the last
    assert ("sum", "mul") in edges and not [e for e in edges if "reshape" in e]
    with kg.autobatch():  # the steps as one scan: the loss reads rows of its output
        edges = _graph_edges(model())
    assert ("gather", "rnn_tanh_scan") in edges and not [e for e in edges if "reshape" in e]
    w = kg.tensor(np.ones((3, 2), np.float32), requires_grad=True)
    with kg.autobatch() as ab:
        ys = [(kg.tensor(np.full((2, 3), i, np.float32)) @ w).tanh() for i in range(5)]
        total = kg.concat(ys, axis=0).sum()
        edges = _graph_edges(total)
    assert ab.stats.batch_sizes["matmul"] == [5] and ab.stats.batch_sizes["tanh"] == [5]
    assert ("tanh", "matmul") in edges and not [e for e in edges if "reshape" in e]
    np.testing.assert_allclose(total.item(), sum(np.tanh(np.full((2, 2), 3.0 * i))
                                                  for i in range(5)).sum(), rtol=1e-6)


# -- a tree-recursive network over random expression trees -------------------------------------
def _random_tree(rng, depth):
    if depth == 0 or rng.random() < 0.3:
        return int(rng.integers(0, 10))
    return (str(rng.choice(["+", "*"])), _random_tree(rng, depth - 1), _random_tree(rng, depth - 1))


def _tree_task(n_trees=6, hidden=4, seed=0):
    rng = np.random.default_rng(seed)
    trees = [_random_tree(rng, 4) for _ in range(n_trees)]
    p = {name: kg.tensor(rng.standard_normal(shape).astype(np.float32) * 0.5,
                         requires_grad=True)
         for name, shape in [("embed", (10, hidden)), ("W+", (2 * hidden, hidden)),
                             ("W*", (2 * hidden, hidden)), ("b+", (hidden,)), ("b*", (hidden,)),
                             ("out", (hidden, 1))]}
    digits = [kg.tensor(np.eye(10, dtype=np.float32)[d:d + 1]) for d in range(10)]

    def encode(tree):
        if isinstance(tree, int):
            return (digits[tree] @ p["embed"]).tanh()
        op, left, right = tree
        both = kg.concat([encode(left), encode(right)], axis=1)
        return (both @ p["W" + op] + p["b" + op]).tanh()

    def model():
        loss = None
        for tree in trees:
            term = ((encode(tree) @ p["out"]) ** 2.0).mean()
            loss = term if loss is None else loss + term
        return loss

    return model, list(p.values())


def test_tree_matches_eager():
    model, params = _tree_task()
    ab = _compare(model, params)
    assert "concat" in ab.stats.batch_sizes
    assert ab.stats.launches < ab.stats.nodes / 3  # leaves with one digit do not split groups


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 5))
def test_any_trees(seed, n_trees):
    model, params = _tree_task(n_trees=n_trees, seed=seed)
    _compare(model, params)


# -- op coverage -------------------------------------------------------------------------------
def test_elementwise_is_bit_identical():
    rng = np.random.default_rng(1)
    xs = [kg.tensor(rng.standard_normal((2, 8)).astype(np.float32)) for _ in range(5)]
    b = kg.tensor(rng.standard_normal(8).astype(np.float32))

    def run():
        return [((x * 1.5 + b).tanh() - x.sigmoid()).exp() / (x.abs() + 1.0) for x in xs]

    eager = [y.numpy() for y in run()]
    with kg.autobatch() as ab:
        batched = run()
    for y, e in zip(batched, eager):
        assert np.array_equal(y.numpy(), e)
    assert ab.stats.batch_sizes["tanh"] == [5]


def test_shaped_ops_match_eager():
    rng = np.random.default_rng(2)
    w = kg.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    table = kg.tensor(rng.standard_normal((7, 3)).astype(np.float32), requires_grad=True)
    xs = [kg.tensor(rng.standard_normal((2, 4)).astype(np.float32)) for _ in range(4)]
    ids = [kg.tensor(np.array([i % 7, (3 * i) % 7])) for i in range(4)]

    def model():
        total = None
        for x, i in zip(xs, ids):
            y = (x @ w).reshape(3, 2).T                       # matmul, reshape, transpose
            z = kg.concat([y, y[:, :1]], axis=1)              # getitem, concat
            s = kg.stack([z.sum(axis=0), z.max(axis=0)])      # reductions, stack
            e = kg.embedding(table, i).mean(axis=-1, keepdims=True)  # gather
            t = s.softmax(axis=1).sum() + e.sum() + kg.log_softmax(z, axis=0).mean()
            total = t if total is None else total + t
        return total

    ab = _compare(model, [w, table])
    for name in ("matmul", "reshape", "transpose", "concat", "getitem", "stack", "gather",
                 "softmax", "log_softmax", "max"):
        assert name in ab.stats.batch_sizes, name


@pytest.mark.parametrize("shape", [(1, 6), (3, 6), (1, 2, 3)])
@pytest.mark.parametrize("op", ["sum", "mean", "max"])
def test_reductions_over_any_axes_match_eager(shape, op):
    # Each axis choice takes its own path: rows kept apart (FLAT), a one-row member summed
    # whole (FLAT in, a number per member out), or stacked members.
    rng = np.random.default_rng(6)
    w = kg.tensor(rng.standard_normal(shape[-1]).astype(np.float32), requires_grad=True)
    xs = [kg.tensor(rng.standard_normal(shape).astype(np.float32)) for _ in range(4)]
    rank = len(shape)
    choices = [None, 0, -1, *([(0, 1), (0, rank - 1)] if rank > 1 else [])]

    def model():
        total = None
        for x in xs:
            y = (x * w).tanh()
            for axis in choices:
                for keepdims in (False, True):
                    r = getattr(y, op)(axis=axis, keepdims=keepdims)
                    t = r.sum() if r.ndim else r
                    total = t if total is None else total + t
        return total

    ab = _compare(model, [w])
    # every call of the op ran batched (for "sum", also the outer .sum() of each result
    # that is not a number already)
    outer = sum(np.zeros(shape).sum(axis=a, keepdims=k).ndim > 0
                for a in choices for k in (False, True))
    calls = 4 * (2 * len(choices) + (outer if op == "sum" else 0))
    assert sum(ab.stats.batch_sizes[op]) == calls


@pytest.mark.parametrize("rows", [1, 3])
def test_a_number_per_sample_batches_and_gives_the_same_bits(rows):
    # A regression loss: each sample's prediction minus its own target, a Python float.
    # The targets go in as one per-sample operand in the tensors' dtype (a float is weak),
    # so every member computes what it computes alone.
    rng = np.random.default_rng(7)
    w = kg.tensor(rng.standard_normal((3, 2)).astype(np.float32), requires_grad=True)
    xs = [kg.tensor(rng.standard_normal((rows, 3)).astype(np.float32)) for _ in range(5)]
    targets = [float(t) for t in rng.standard_normal(5)]
    v = kg.tensor(rng.standard_normal(3).astype(np.float32), requires_grad=True)

    def errors():  # elementwise only: BLAS may round a batch's rows otherwise than one row's
        return [(x * v).tanh() - t for x, t in zip(xs, targets)]

    eager = [e.detach().numpy() for e in errors()]
    with kg.autobatch() as ab:
        batched = errors()
    for e, b in zip(eager, batched):
        assert np.array_equal(b.detach().numpy(), e)  # elementwise: the same bits
    assert ab.stats.batch_sizes["sub"] == [5]

    def model():
        total = None
        for x, t in zip(xs, targets):
            err = (x @ w).tanh() - t
            term = (err * err * (1.0 + t)).sum() + (t - x * 2.0).mean()  # floats both sides
            total = term if total is None else total + term
        return total

    _compare(model, [w])
    with kg.autobatch():  # the same number everywhere is still one shared operand
        same = [kg.tensor(np.ones(2, np.float32)) * 3.0 for _ in range(4)]
    assert all(np.array_equal(y.numpy(), np.full(2, 3.0, np.float32)) for y in same)


def test_numbers_into_int_tensors_and_parameters():
    # A float with an int tensor computes in the default float dtype, as eager mode does;
    # a parameter times different numbers is computed once per number (no merge of the two).
    ints = [kg.tensor(np.array([i, i + 1])) for i in range(3)]
    w = kg.tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    eager = [(v * (0.5 + i)).numpy() for i, v in enumerate(ints)]
    with kg.autobatch():
        batched = [v * (0.5 + i) for i, v in enumerate(ints)]
        scaled = [w * 2.0, w * 3.0, w * 2.0]
    for b, e in zip(batched, eager):
        assert b.dtype == e.dtype and np.array_equal(b.numpy(), e)
    assert [s.detach().numpy().tolist() for s in scaled] == [[2.0, 4.0], [3.0, 6.0],
                                                             [2.0, 4.0]]


def test_per_sample_leaves_that_require_grad():
    # A leaf that requires grad counts as a parameter (not batched with other leaves), but
    # everything computed from it batches, and every leaf gets its own gradient.
    rng = np.random.default_rng(4)
    w = kg.tensor(rng.standard_normal((3, 2)).astype(np.float32), requires_grad=True)
    xs = [kg.tensor(rng.standard_normal((1, 3)).astype(np.float32), requires_grad=True)
          for _ in range(4)]

    def model():
        total = None
        for x in xs:
            t = ((x * 2.0) @ w).tanh().sum()
            total = t if total is None else total + t
        return total

    ab = _compare(model, [w, *xs])
    assert ab.stats.batch_sizes["matmul"] == [4]


def test_mixed_batchable_and_unbatchable_ops():
    rng = np.random.default_rng(3)
    w = kg.tensor(rng.standard_normal((3, 3)).astype(np.float32), requires_grad=True)
    xs = [kg.tensor(rng.standard_normal((1, 3)).astype(np.float32)) for _ in range(4)]
    labels = [kg.tensor(np.array([i % 3])) for i in range(4)]

    def model():
        total = None
        for x, y in zip(xs, labels):
            logits = kg.clip(x @ w, -2.0, 2.0)
            t = kg.cross_entropy(kg.pad(logits, [(0, 0), (0, 1)]), y)  # pad: one by one
            total = t if total is None else total + t
        return total

    ab = _compare(model, [w])
    sizes = ab.stats.batch_sizes
    assert sizes["matmul"] == sizes["clip"] == sizes["softmax_cross_entropy"] == [4]
    assert "pad" not in sizes and ab.stats.single >= 4


# -- what LSTMs, classifiers and CNNs call, per sample -------------------------------------------
@pytest.mark.parametrize("lengths", [[3, 1, 4, 2], [2, 2, 2]])
def test_lstm_over_different_lengths_batches_its_steps(lengths):
    rng = np.random.default_rng(4)
    kg.random.seed(4)
    cell = kg.nn.LSTMCell(3, 5)
    xs = [[kg.tensor(rng.standard_normal((1, 3)).astype(np.float32)) for _ in range(n)]
          for n in lengths]

    def model():
        total = None
        for seq in xs:
            h = c = kg.zeros(1, 5)
            for x in seq:
                h, c = cell(x, (h, c))
            t = (h * h).sum() + c.sum()
            total = t if total is None else total + t
        return total

    ab = _compare(model, list(cell.parameters()))
    # one lstm_cell call per step that more than one sequence takes, and the split of its
    # result into h and c batched the same way
    steps = [k for k in (sum(n > t for n in lengths) for t in range(max(lengths))) if k > 1]
    assert ab.stats.batch_sizes["lstm_cell"] == steps
    assert ab.stats.batch_sizes["split_piece"] == [k for k in steps for _ in range(2)]


@pytest.mark.parametrize("rows", [1, 3])
@pytest.mark.parametrize("shared_labels", [False, True])
def test_a_classifier_per_sample_batches_loss_argmax_and_one_hot(rows, shared_labels):
    rng = np.random.default_rng(5)
    w = kg.tensor(rng.standard_normal((4, 4)).astype(np.float32), requires_grad=True)
    xs = [kg.tensor(rng.standard_normal((rows, 4)).astype(np.float32)) for _ in range(5)]
    labels = [kg.tensor(rng.integers(0, 4, rows)) for _ in range(5)]
    if shared_labels:
        labels = [labels[0]] * 5

    def model():
        total = None
        for x, y in zip(xs, labels):
            logits = x @ w
            hit = kg.one_hot(kg.argmax(logits, axis=1), 4)      # no gradient: a mask
            agree = kg.one_hot(kg.argmax(logits, axis=0), rows)  # over the rows: STACKED
            t = (kg.cross_entropy(logits, y) + (hit * logits).sum()
                 + (agree * agree).sum() * 0.5)
            total = t if total is None else total + t
        return total

    ab = _compare(model, [w])
    sizes = ab.stats.batch_sizes
    assert sizes["softmax_cross_entropy"] == [5] and sizes["one_hot"] == [5, 5]
    assert sizes["argmax"] == [5, 5]


def test_argmax_of_the_whole_member_runs_one_by_one():
    xs = [kg.tensor([[0.0, float(i)], [1.5, 1.0]]) for i in range(3)]
    with kg.autobatch() as ab:
        picks = [kg.argmax(x * 1.0) for x in xs]
    assert [p.item() for p in picks] == [2, 2, 1]
    assert "argmax" not in ab.stats.batch_sizes


@pytest.mark.parametrize("axis", [0, 1])
def test_split_along_any_axis(axis):
    rng = np.random.default_rng(6)
    w = kg.tensor(rng.standard_normal((4, 6)).astype(np.float32), requires_grad=True)
    xs = [kg.tensor(rng.standard_normal((2, 4)).astype(np.float32)) for _ in range(3)]

    def model():
        total = None
        for x in xs:
            a, b = kg.split(x @ w, [1, -1] if axis == 0 else 2, axis=axis)
            t = (a.tanh() * 2.0).sum() + (b * b).sum()
            total = t if total is None else total + t
        return total

    ab = _compare(model, [w])
    assert ab.stats.batch_sizes["split_piece"] == [3, 3]


def test_a_cnn_per_image_batches_its_convolutions_and_pools():
    rng = np.random.default_rng(7)
    kg.random.seed(7)
    conv = kg.nn.Conv2d(2, 3, 3, padding=1)
    images = [kg.tensor(rng.standard_normal((1, 2, 6, 6)).astype(np.float32))
              for _ in range(4)]

    def model():
        total = None
        for x in images:
            y = kg.clip(conv(x), -1.0, 1.0)
            y = kg.max_pool2d(y, 2) + kg.avg_pool2d(y, 2)
            t = (kg.global_avg_pool2d(y) ** 2).sum() + kg.zeros_like(y).sum()
            total = t if total is None else total + t
        return total

    ab = _compare(model, list(conv.parameters()))
    sizes = ab.stats.batch_sizes
    for name in ("conv2d", "clip", "max_pool2d", "avg_pool2d", "global_avg_pool2d",
                 "zeros_like"):
        assert sizes[name] == [4], name


def test_dropout_runs_at_once_with_eager_random_numbers():
    xs = [kg.ones(2, 6) * float(i) for i in range(3)]
    kg.random.seed(5)
    eager = [kg.dropout(x * 2.0, 0.5).numpy() for x in xs]
    kg.random.seed(5)
    with kg.autobatch():
        batched = [kg.dropout(x * 2.0, 0.5) for x in xs]
    for y, e in zip(batched, eager):
        assert np.array_equal(y.numpy(), e)


# -- deferral, flushing, nesting, errors ---------------------------------------------------------
def test_ops_are_deferred_until_a_value_is_read():
    x = kg.tensor([[1.0, 2.0]])
    with kg.autobatch() as ab:
        ys = [x * float(i) + 1.0 for i in range(3)]
        assert pending_count() == 6 and type(ys[0]) is LazyTensor
        assert ys[0].shape == (1, 2) and ys[0].dtype == kg.float32  # known without running
        assert ab.stats.flushes == 0
        assert ys[2].tolist() == [[3.0, 5.0]]                      # reading runs everything
        assert pending_count() == 0 and type(ys[0]) is kg.Tensor and ab.stats.flushes == 1
        z = ys[1] * ys[2]                                          # recording goes on
        assert pending_count() == 1
    assert z.tolist() == [[6.0, 15.0]] and type(z) is kg.Tensor
    assert ab.stats.flushes == 2 and pending_count() == 0
    # x * 0.0, x * 1.0, x * 2.0: one call, the numbers a per-sample operand; the adds batch
    assert ab.stats.batch_sizes == {"mul": [3], "add": [3]} and ab.stats.single == 1


def test_stats_counts():
    xs = [kg.tensor([float(i)]) for i in range(4)]
    with kg.autobatch() as ab:
        ys = [(x * 2.0 + 1.0).tanh() for x in xs]
    assert [round(y.item(), 5) for y in ys] == [round(float(np.tanh(2 * i + 1)), 5)
                                              for i in range(4)]
    s = ab.stats.as_dict()
    assert (s["nodes"], s["launches"], s["batched"], s["single"]) == (12, 3, 3, 0)
    assert s["batch_sizes"] == {"mul": [4], "add": [4], "tanh": [4]}
    assert "12 nodes ran as 3 kernel launches" in repr(ab.stats)


def test_shared_parameter_ops_are_merged():
    w = kg.tensor(np.ones((2, 2), np.float32), requires_grad=True)
    with kg.autobatch() as ab:
        outs = [kg.tensor([[1.0, float(i)]]) @ w.T for i in range(5)]  # w.T: computed once
    assert ab.stats.merged == 4
    assert [o.tolist() for o in outs][2] == [[3.0, 3.0]]


def test_mid_block_read_and_backward_inside_the_block():
    model, params = _rnn_task([2, 3])
    eager_loss = model()
    eager_loss.backward()
    expected = _grads(params)
    with kg.autobatch() as ab:
        loss = model()
        if loss.item() > -1.0:  # bool() and item() inside the block
            loss.backward()
        again = model()          # recording after a flush
    assert ab.stats.flushes == 2 and again.requires_grad
    for g, e in zip(_grads(params), expected):
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)


def test_results_used_after_the_block():
    w = kg.tensor([2.0, 3.0], requires_grad=True)
    with kg.autobatch():
        ys = [w * float(i) for i in range(3)]
    loss = (ys[0] + ys[1] * ys[2]).sum()  # eager, outside, through the batched rows
    loss.backward()
    assert loss.item() == 26.0 and w.grad.tolist() == [8.0, 12.0]


def test_nested_blocks():
    x = kg.tensor([1.0])
    with kg.autobatch() as outer:
        a = [x + float(i) for i in range(2)]
        with kg.autobatch() as inner:
            b = [y * 3.0 for y in a]
        assert pending_count() == 0  # leaving the inner block ran everything
        c = [y - 1.0 for y in b]
    assert [y.item() for y in c] == [2.0, 5.0]
    assert inner.stats.nodes == 2 and outer.stats.nodes == 6
    assert inner.stats.flushes == 1 and outer.stats.flushes == 2


def test_no_grad_inside():
    w = kg.tensor([1.0, 2.0], requires_grad=True)
    with kg.autobatch():
        with kg.no_grad():
            frozen = [w * float(i) for i in range(3)]
        live = [w * float(i) for i in range(3)]
    assert not any(y.requires_grad for y in frozen) and all(y.requires_grad for y in live)
    (live[1] + live[2] + frozen[2]).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


def test_shape_error_names_the_users_line_and_leaves_the_engine_usable():
    a, b = kg.ones(2, 3), kg.ones(4, 5)
    with pytest.raises(ValueError) as info:
        with kg.autobatch():
            ok = a * 2.0
            a @ b  # the line that must be named
    message = str(info.value)
    assert "matmul" in message and "test_autobatch.py" in message and "a @ b" in message
    assert ok.tolist() == [[2.0] * 3] * 2  # pending work still ran on the way out
    assert pending_count() == 0
    assert (a + 1.0).tolist() == [[2.0] * 3] * 2  # eager again
    with kg.autobatch() as ab:
        y = a * 3.0
    assert y.tolist() == [[3.0] * 3] * 2 and ab.stats.nodes == 1


def test_user_exception_inside_the_block():
    x = kg.tensor([1.0, 2.0])
    with pytest.raises(KeyError):
        with kg.autobatch():
            y = x * 2.0
            raise KeyError("boom")
    assert y.tolist() == [2.0, 4.0] and pending_count() == 0
    assert (x * 2.0).tolist() == [2.0, 4.0]


def test_repr_and_numpy_force_a_flush():
    with kg.autobatch():
        y = kg.tensor([1.0, 2.0]) * 2.0
        assert "tensor([2., 4.])" in repr(y)
        z = kg.tensor([1.0]) + 1.0
        assert z.numpy().tolist() == [2.0]


def test_a_failure_while_running_leaves_the_engine_usable():
    table = kg.tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
    with pytest.raises(IndexError, match="out of range"):
        with kg.autobatch():
            good = table * 2.0
            bad = kg.gather(table, kg.tensor([5]))  # shapes fit; the index is checked on run
    with pytest.raises(RuntimeError, match="did not run"):
        bad.numpy()
    assert good.numpy()[2].tolist() == [8.0, 10.0] and pending_count() == 0
    with kg.autobatch():
        again = kg.gather(table, kg.tensor([2]))
    assert again.tolist() == [[4.0, 5.0]]


def test_intermediates_are_freed_without_a_garbage_collection():
    import gc
    import weakref

    x = kg.tensor(np.ones((2, 3), np.float32))
    gc.disable()
    try:
        with kg.autobatch():
            ys = [x * float(i) for i in range(3)]
            refs = [weakref.ref(y) for y in ys]
            outs = [(y + 1.0).sum() for y in ys]
            del ys
        assert [o.item() for o in outs] == [6.0, 12.0, 18.0]
        assert all(r() is None for r in refs)  # pending intermediates left no cycles
    finally:
        gc.enable()


def test_the_garbage_collector_pauses_inside_the_outermost_block_only():
    import gc

    x = kg.tensor([1.0])
    assert gc.isenabled()
    with pytest.raises(KeyError):
        with kg.autobatch():
            assert not gc.isenabled()
            with kg.autobatch():
                y = x * 2.0
            assert not gc.isenabled()  # leaving an inner block does not resume it
            raise KeyError("boom")
    assert gc.isenabled() and y.item() == 2.0  # resumed, also when the block raised
    gc.disable()  # someone else paused it: the block leaves it paused
    try:
        with kg.autobatch():
            y = x * 3.0
        assert not gc.isenabled() and y.item() == 3.0
    finally:
        gc.enable()


def test_kg_function_and_casts_inside_the_block():
    w = kg.tensor(np.ones((3, 2), np.float32), requires_grad=True)

    @kg.function
    def f(x):
        return (x @ w).tanh().sum()

    xs = [kg.tensor(np.full((1, 3), 0.1 * i, np.float32)) for i in range(3)]
    eager = [f(x * 2.0).item() for x in xs]
    with kg.autobatch():
        batched = [f(x * 2.0) for x in xs]       # the compiled plan reads its inputs: a flush
        doubled = [x.to(kg.float64) + 1.0 for x in xs]
    assert [b.item() for b in batched] == eager
    assert doubled[2].dtype == kg.float64
    assert doubled[2].tolist() == (xs[2].to(kg.float64) + 1.0).tolist()


def test_each_card_says_how_it_is_batched():
    """``op.batch`` on the card names a kind of :data:`BATCHING`, and autobatching has one
    batcher per kind: an op is batched by its card, not by a table of op names."""
    from kernelgraph.autobatching import _BATCHERS
    from kernelgraph.ops import OPS, registry

    assert _BATCHERS.keys() == registry.BATCHING.keys()
    for name, op in OPS.items():
        assert op.batch is None or op.batch in registry.BATCHING, name
        if op.elementwise:
            assert op.batch == "elementwise", name
    assert OPS["matmul"].batch == "matmul" and OPS["conv2d"].batch == "images"
    assert OPS["clip"].batch == "elementwise" and OPS["argmax"].batch == "argmax"
    assert registry.DerivedOp.inplace_of(OPS["add"], "AddBackward0").batch is None
    with pytest.raises(ValueError, match="unknown batch kind 'rows'"):
        registry.Op("t", None, None, None, batch="rows")
