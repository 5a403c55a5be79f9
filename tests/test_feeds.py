"""Static mode: a fed value overrides the node it feeds, whatever the node is (TF1).

A constant, a Variable, an intermediate or a value a loop reads, fed in ``feed_dict``, gives
the fed value's result in every compiler pass and with none, in ``Session.run``,
``explain``, ``step`` and ``eval``. The programs and TF1's results are in
tests/recorded/record_feeds.py and feeds.json.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernelgraph as kg
from kernelgraph.static import passes
from tests.recorded.record_feeds import CASES, NEEDS_INIT

# All passes, none, and each one left out: a fed node must win in every one of them.
CONFIGS = {"all": {}, "none": {"optimize": False},
           **{f"no_{name}": {"skip_passes": (name,)} for name in passes.PASSES}}
# The cases the CUDA simulator runs too (elementwise only: it is slow).
ON_CUDA = ("constant", "constant_vector", "equal_constants_first_fed", "times_one_fed",
           "plus_zero_fed", "intermediate_of_constants", "twin_of_fed",
           "inside_elementwise_chain", "partly_known_shape")


def _build(name, device="cpu"):
    g = kg.Graph()
    with g.as_default(), kg.device(device):
        fetches, feeds = CASES[name](kg)
        init = kg.global_variables_initializer()
    return g, fetches, feeds, init


def _check(name, run, recorded, feeds):
    """Compare what ``run()`` gives with what TF1 gave for case ``name``."""
    expected = recorded("feeds")["cases"][name]
    if "error" in expected:
        with pytest.raises(Exception) as info:  # noqa: PT011 - the type is compared below
            run()
        assert type(info.value).__name__ == expected["error"]["type"], info.value
        assert feeds[0][0].name in str(info.value)  # the message names the fed node
        return
    got = run()
    want = expected["value"]
    if not isinstance(got, list):
        got, want = [got], [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), w, rtol=1e-6)


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("name", CASES)
def test_fed_node_overrides_its_value_as_in_tf1(name, config, recorded):
    g, fetches, feeds, init = _build(name)
    with kg.Session(g, **CONFIGS[config]) as sess:
        if name in NEEDS_INIT:
            sess.run(init)
        _check(name, lambda: sess.run(fetches, dict(feeds)), recorded, feeds)


@pytest.mark.parametrize("config", ["all", "none"])
@pytest.mark.parametrize("name", ON_CUDA)
def test_fed_node_overrides_its_value_on_cuda(name, config, recorded):
    g, fetches, feeds, _ = _build(name, "cuda")
    with kg.Session(g, **CONFIGS[config]) as sess:
        _check(name, lambda: sess.run(fetches, dict(feeds)), recorded, feeds)


@pytest.mark.parametrize("optimize", [False, True])
@pytest.mark.parametrize("name", ["constant", "times_one_fed", "intermediate_of_constants",
                                  "inside_elementwise_chain", "while_reads_fed_constant"])
def test_step_and_eval_take_the_fed_value(name, optimize, recorded):
    g, fetches, feeds, _ = _build(name)
    with kg.Session(g) as sess:
        _check(name, lambda: sess.step(fetches, dict(feeds), optimize=optimize).run(),
               recorded, feeds)
        if not isinstance(fetches, list):
            _check(name, lambda: fetches.eval(dict(feeds)), recorded, feeds)


def test_stepper_shows_the_fed_value_of_a_constant():
    g = kg.Graph()
    with g.as_default():
        c = kg.constant(5.0, name="c")
        y = c * 2.0
    with kg.Session(g) as sess:
        stepper = sess.step(y, {c: 1.0})
        assert float(stepper.values["c"]) == 1.0  # before any step: the fed value
        assert float(stepper.run()) == 2.0


def test_explain_shows_a_fed_constant_kept():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[2], name="x")
        c = kg.constant(2.0, name="c")
        d = kg.constant(2.0, name="d")
        one = kg.constant(1.0, name="one")
        y = (x * c + x * d) * one * (c * 3.0)
    feed = {x: [1.0, 2.0], c: 1.0, one: 3.0}
    with kg.Session(g) as sess:
        unfed = {r.name: r.changes for r in sess.explain(y, {x: [1.0, 2.0]}).passes}
        fed = sess.explain(y, feed)
        changes = {r.name: r.changes for r in fed.passes}
        generic = {r.name: r.changes for r in sess.explain(y, dict.fromkeys(feed)).passes}
        got = sess.run(y, feed)
    # Unfed, c * 3 folds, c and d merge and "* one" goes; fed, none of that may happen.
    assert unfed["fold_constants"] and unfed["simplify"] and "d -> c" in unfed["cse"]
    for passes_did in (changes, generic):  # the plan for these shapes, and the generic one
        assert passes_did["fold_constants"] == [] and passes_did["simplify"] == []
        assert not any(c in ("d -> c", "c -> d") for c in passes_did["cse"])
    assert {"c", "one"} <= {n.name for n in fed.after}
    np.testing.assert_allclose(got, (np.array([1.0, 2.0]) * 3.0) * 3.0 * 3.0)
    assert fed.run_seconds is not None  # the explained plan ran with the fed values


def test_a_fed_array_is_never_written_in_place():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[4])
        t = x * 2.0  # a fresh array: unfed, u may be computed into it
        u = t + 1.0
    arr = np.arange(4, dtype=np.float32)
    with kg.Session(g, skip_passes=("fuse",)) as sess:
        unfed = sess.plan(u, {x: arr})
        assert unfed.memory.in_place  # the planner does write t's array when it owns it
        fed = sess.plan(u, {t: arr})
        assert not fed.memory.in_place
        np.testing.assert_array_equal(sess.run(u, {t: arr}), np.arange(4) + 1.0)
    np.testing.assert_array_equal(arr, np.arange(4))


def test_a_fed_node_inside_a_loop_body_is_refused():
    g = kg.Graph()
    inner = []

    def body(i, a):
        t = a * 2.0
        inner.append(t)
        return i + 1, t

    with g.as_default():
        _, a = kg.while_loop(lambda i, a: i < 3, body, [kg.constant(0), kg.constant(1.0)])
    with kg.Session(g) as sess, pytest.raises(ValueError, match="not an element of this graph"):
        sess.run(a, {inner[0]: 5.0})


def test_fed_variable_that_the_run_assigns_names_the_assign():
    g = kg.Graph()
    with g.as_default():
        v = kg.Variable(4.0, name="v")
        update = v.assign_sub(v * 0.5, name="update")
        init = kg.global_variables_initializer()
    for config in CONFIGS.values():
        with kg.Session(g, **config) as sess:
            sess.run(init)
            with pytest.raises(kg.errors.InvalidArgumentError,
                               match="Cannot feed variable 'v' in a run that assigns it"):
                sess.run(update, {v: 2.0})
            assert float(sess.run(v)) == 4.0  # nothing was written
            assert float(sess.run(update)) == 2.0


# -- property: any node of a random elementwise program, fed -------------------------------------
_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum}
_UNARY = {"relu": lambda a: np.maximum(a, 0), "neg": np.negative, "tanh": np.tanh}


@st.composite
def _programs(draw):
    """A list of steps over the values made so far (0: x, 1: a constant, 2: a constant of
    the same value, 3: a constant 1, 4: a constant 0), and which of them is fed."""
    steps = []
    for k in range(draw(st.integers(1, 6))):
        n = 5 + k
        if draw(st.booleans()):
            steps.append((draw(st.sampled_from(sorted(_BINARY))),
                          draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))))
        else:
            steps.append((draw(st.sampled_from(sorted(_UNARY))), draw(st.integers(0, n - 1))))
    fed = draw(st.integers(1, 4 + len(steps)))
    value = draw(st.lists(st.sampled_from([-1.5, 0.0, 0.5, 2.0]), min_size=3, max_size=3))
    return steps, fed, value


@given(_programs(), st.sampled_from(sorted(CONFIGS)))
def test_any_fed_node_of_a_program_overrides_it(program, config):
    steps, fed, fed_value = program
    g = kg.Graph()
    with g.as_default():
        nodes = [kg.placeholder(kg.float32, shape=[3]), kg.constant(2.0), kg.constant(2.0),
                 kg.constant(1.0), kg.constant(0.0)]
        for op, *args in steps:
            nodes.append(getattr(kg, op)(*[nodes[a] for a in args]))
    x_value = np.array([0.25, -2.0, 1.0], np.float32)
    fed_array = np.asarray(fed_value if nodes[fed].shape == (3,) else fed_value[0],
                           np.float32)
    # NumPy's answer: every node computed from its inputs, except the fed one.
    ref = [x_value] + [np.float32(v) for v in (2.0, 2.0, 1.0, 0.0)]
    if fed < len(ref):
        ref[fed] = fed_array
    for k, (op, *args) in enumerate(steps, start=5):
        fn = _BINARY.get(op) or _UNARY[op]
        ref.append(fed_array if k == fed else
                   np.asarray(fn(*[ref[a] for a in args]), np.float32))
    with kg.Session(g, **CONFIGS[config]) as sess:
        got = sess.run(nodes[-1], {nodes[0]: x_value, nodes[fed]: fed_array})
    np.testing.assert_allclose(got, ref[-1], rtol=1e-5)
