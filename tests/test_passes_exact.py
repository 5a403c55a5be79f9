"""The static compiler's passes change no bit of any value: every pass configuration gives
the unoptimised run's bits, and eager mode's, on special values (NaN, +-Inf, +-0.0,
subnormals, the extremes of each dtype).

``simplify`` keeps only identities exact for every value of the result's dtype: ``x * 1``,
``x / 1``, ``x - 0.0``, ``x + -0.0``, and ``x + 0`` on integers, never a float ``x + 0.0``
(IEEE: -0.0 + 0.0 = +0.0). A fed node is an input of the run, never the op that made it:
``-y`` with ``y = -x`` fed stays ``-y``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernelgraph as kg
from kernelgraph.static import passes
from tests.test_ops import assert_same

# The simulator-free CPU kernels raise NumPy's floating-point flags on NaN and Inf; pytest
# drops the filter kernelgraph's import adds for them (see tests/test_nan.py).
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
N = 4  # fed values per run: constants are scalars or arrays of this length

# Every pass configuration worth telling apart: all passes, each one left out, each one
# alone (prune always runs).
_OPTIONAL = tuple(passes.PASSES)
CONFIGS = [()] + [(p,) for p in _OPTIONAL] + \
    [tuple(q for q in _OPTIONAL if q != p) for p in _OPTIONAL]


def _specials(dtype: np.dtype) -> list:
    if dtype.kind == "f":
        info = np.finfo(dtype)
        return [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 2.5,
                float(info.smallest_subnormal), -float(info.smallest_subnormal),
                float(info.tiny), float(info.max), -float(info.max)]
    info = np.iinfo(dtype)
    return [0, 1, -1, 3, int(info.max), int(info.min)]


@st.composite
def _cases(draw):
    dtype = np.dtype(draw(st.sampled_from(["float32", "float64", "int64"])))
    values = st.sampled_from(_specials(dtype))
    # zeros of both signs (add/sub identities or not), ones (mul/div), anything
    zero = draw(st.sampled_from([0.0, -0.0, 0] if dtype.kind == "f" else [0, 0.0, -0.0]))
    one = draw(st.sampled_from([1, 1.0, -1.0]))
    other = draw(values)
    fed = np.array(draw(st.lists(values, min_size=N, max_size=N)), dtype)
    as_arrays = draw(st.booleans())  # Python numbers, or constants filled with the number
    return dtype, zero, one, other, fed, as_arrays


def _program(p, p2d, constant):
    """Expressions of a placeholder ``p`` (N,) and ``p2d`` (2, N) reaching every rewrite:
    the identities (exact or not), a double negation and transpose, casts and reshapes that
    change nothing, folded constants, repeated subexpressions and fusable chains."""
    zero, one, other = constant("zero"), constant("one"), constant("other")
    shared = p * other
    folded = kg.exp(constant("other", True))  # a function of constants: folded
    return [
        p + zero, zero + p, p - zero, zero - p, p * one, one * p, p / one,
        kg.neg(kg.neg(p)), kg.transpose(kg.transpose(p2d)), kg.cast(p, p.dtype),
        kg.reshape(p, [N]), kg.relu(p * other + zero), kg.tanh(p) - zero,
        folded * p, shared + shared, kg.maximum(p, zero) * one,
        kg.where(p > zero, p + zero, p - one),
    ]


def _run_static(graph, fetches, feed, skip):
    options = {"optimize": False} if skip is None else {"skip_passes": skip}
    with kg.Session(graph, **options) as sess:
        return sess.run(fetches, feed)


@given(case=_cases())
def test_every_pass_configuration_gives_the_same_bits(case):
    dtype, zero, one, other, fed, as_arrays = case
    numbers = {"zero": zero, "one": one, "other": other}

    def static_constant(name, array=False):
        v = numbers[name]
        return kg.constant(np.full(N, v, dtype)) if as_arrays or array else v

    graph = kg.Graph()
    with graph.as_default():
        p = kg.placeholder(dtype, shape=[N])
        p2d = kg.placeholder(dtype, shape=[2, N])
        fetches = _program(p, p2d, static_constant)
    feed = {p: fed, p2d: np.stack([fed, fed[::-1]])}
    plain = _run_static(graph, fetches, feed, None)

    def eager_constant(name, array=False):
        v = numbers[name]
        return kg.tensor(np.full(N, v, dtype)) if as_arrays or array else v

    eager = _program(kg.tensor(fed), kg.tensor(feed[p2d]), eager_constant)
    for k, (e, want) in enumerate(zip(eager, plain, strict=True)):
        assert_same(e.numpy(), want, f"expression {k}: eager vs unoptimised, {case}")
    for skip in CONFIGS:
        got = _run_static(graph, fetches, feed, skip)
        for k, (g, want) in enumerate(zip(got, plain, strict=True)):
            assert_same(g, want, f"expression {k}, skipping {skip}: {case}")


def _simplified(fetch_fn, dtype=kg.float32):
    """The changes ``simplify`` made to ``fetch_fn(x)``."""
    graph = kg.Graph()
    with graph.as_default():
        x = kg.placeholder(dtype, shape=[3])
        y = fetch_fn(x)
    with kg.Session(graph) as sess:
        e = sess.explain(y, {x: None})
    return next(r for r in e.passes if r.name == "simplify").changes


@pytest.mark.parametrize("expression, kept", [
    (lambda x: x + 0.0, True), (lambda x: 0.0 + x, True), (lambda x: x - (-0.0), True),
    (lambda x: x + kg.constant(np.array([-0.0, 0.0, -0.0], np.float32)), True),
    (lambda x: x + (-0.0), False), (lambda x: -0.0 + x, False), (lambda x: x - 0.0, False),
    (lambda x: x * 1.0, False), (lambda x: x / 1.0, False),
])
def test_float_zeros_are_identities_only_with_the_right_sign(expression, kept):
    assert (_simplified(expression) == []) is kept


def test_integer_zeros_are_identities_whatever_their_spelling():
    assert _simplified(lambda x: x + 0, kg.int64) != []
    assert _simplified(lambda x: x - 0, kg.int64) != []
    assert _simplified(lambda x: x + 0.0, kg.int64) == []  # a float result: not x


def test_the_example_from_the_issue():
    """``p + 0`` fed -0.0: 0.0 in both modes."""
    graph = kg.Graph()
    with graph.as_default():
        p = kg.placeholder(kg.float32, shape=[])
        y = p + 0
    with kg.Session(graph) as sess:
        static = sess.run(y, {p: np.float32(-0.0)})
    eager = (kg.tensor(np.float32(-0.0)) + 0).numpy()
    assert_same(static, eager, "p + 0")
    assert not np.signbit(static)


def test_a_fed_node_is_not_looked_through_or_rewired():
    """``--x`` and a transpose pair where the inner node is fed: the fed value is negated
    (transposed), not the node's own input; and a fed node whose input was fused stays the
    fed node (each once a KeyError while making the plan)."""
    graph = kg.Graph()
    with graph.as_default():
        x = kg.constant(np.float32(2.0))
        inner = kg.neg(x)
        outer = kg.neg(inner)
        t = kg.placeholder(kg.float32, shape=[2, 3])
        t1 = kg.transpose(t)
        t2 = kg.transpose(t1)
        p = kg.placeholder(kg.float32, shape=[])
        e = kg.exp(kg.neg(p))  # fused with its neg
        fed_sum = e + 1.0  # fed below: computed by nobody
        other = kg.neg(e)
    with kg.Session(graph) as sess:
        assert sess.run(outer, {inner: np.float32(5.0)}) == -5.0
        fed = np.arange(6, dtype=np.float32).reshape(3, 2)
        np.testing.assert_array_equal(sess.run(t2, {t1: fed}), fed.T)
        got = sess.run([other, fed_sum], {p: np.float32(0.0), fed_sum: np.float32(7.0)})
        assert [float(v) for v in got] == [-1.0, 7.0]
