"""Property tests for the indexing and random ops (``kernelgraph/ops/indexing.py``,
``kernelgraph/ops/random.py``), with the helpers of ``test_ops.py``: forward against the
NumPy reference, eager/static/raw bit-identity, gradients against finite differences in
float64, and every error case by its message."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kernelgraph as kg
from kernelgraph.errors import InvalidArgumentError, ShapeError
from kernelgraph.ops.reference import REFERENCE, scatter_add
from tests.test_ops import (
    F32,
    F64,
    FLOATS,
    I32,
    I64,
    PLACEHOLDER_SHAPES,
    arrays,
    assert_same,
    check_op,
    small_shapes,
    weights,
)

DTYPES = FLOATS + (I64,)


def _run(fetches, feed=None, graph=None):
    with kg.Session(graph) as sess:
        return sess.run(fetches, feed_dict=feed or {})


# -- concat / stack / split ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_concat(dtype, data):
    shape = data.draw(small_shapes(min_dims=1))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.integers(1, 3))
    shapes = []
    for _ in range(n):
        s = list(shape)
        s[axis] = data.draw(st.integers(1, 3))  # empty sums hit a reduce_sum bug
        shapes.append(tuple(s))
    xs = [arrays(data.draw, "any", dtype, s) for s in shapes]
    check_op(lambda *ts: kg.concat(list(ts), axis=axis),
             lambda *a: REFERENCE["concat"](*a, axis=axis), xs, diff=tuple(range(n)),
             ph=data.draw(PLACEHOLDER_SHAPES))


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_stack(dtype, data):
    shape = data.draw(small_shapes())
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    n = data.draw(st.integers(1, 3))
    xs = [arrays(data.draw, "any", dtype, shape) for _ in range(n)]
    check_op(lambda *ts: kg.stack(list(ts), axis=axis),
             lambda *a: REFERENCE["stack"](*a, axis=axis), xs, diff=tuple(range(n)),
             ph=data.draw(PLACEHOLDER_SHAPES))


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_split(dtype, data):
    shape = data.draw(small_shapes(min_dims=1))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[axis]
    if data.draw(st.booleans()):
        spec = data.draw(st.sampled_from([k for k in range(1, size + 1) if size % k == 0]))
        bounds = np.cumsum([size // spec] * spec)[:-1]
    else:
        cuts = sorted(set(data.draw(st.lists(st.integers(1, size - 1), max_size=3))) if size > 1
                      else [])
        spec = list(np.diff([0, *cuts, size]))
        bounds = cuts
        if data.draw(st.booleans()):
            spec[data.draw(st.integers(0, len(spec) - 1))] = -1
    x = arrays(data.draw, "any", dtype, shape)
    pieces = np.split(x, bounds, axis=axis)
    ph = data.draw(PLACEHOLDER_SHAPES)
    for i in range(len(pieces)):
        check_op(lambda t, i=i: kg.split(t, spec, axis=axis)[i],
                 lambda a, i=i: np.split(a, bounds, axis=axis)[i], [x], diff=(0,), ph=ph)


# -- getitem ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_getitem(dtype, data):
    shape = data.draw(small_shapes())
    index = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    x = arrays(data.draw, "any", dtype, shape)
    assume(x[index].size > 0)  # kg.sum of an empty array fails in static mode (not ours)
    normalized = kg.ops.normalize_index(index)

    def fn(t):  # raw arrays (NumPy or numba device arrays) have their own indexing, which
        # can give scalars: call the op there
        raw = isinstance(t, np.ndarray) or kg.devices.is_cuda_array(t)
        return kg.ops.getitem(t, normalized) if raw else t[index]

    check_op(fn, lambda a: np.asarray(a[index]), [x], diff=(0,),
             ph=data.draw(PLACEHOLDER_SHAPES))


def test_getitem_examples_and_gradient_scatter():
    x = np.arange(24.0).reshape(2, 3, 4)
    t = kg.tensor(x, requires_grad=True)
    for index in [(0,), (slice(1, 3), slice(None, None, 2)), (Ellipsis, 1), (-1, slice(None),
                  slice(None, None, -1)), (None, 1, Ellipsis, None), (1, -2, -3)]:
        assert_same(t[index]._array, x[index], f"x[{index}]")
    y = t[..., 1:3]
    (y * 2.0).sum().backward()
    expected = np.zeros_like(x)
    expected[..., 1:3] = 2.0
    assert_same(t.grad._array, expected, "scatter into zeros")
    assert [r.tolist() for r in kg.tensor([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]  # iteration


def test_getitem_static_unknown_dims():
    with kg.Graph().as_default() as g:
        p = kg.placeholder(kg.float64, shape=(None, 4))
        y = p[1:, ::-2]
        assert y.shape == (None, 2)
        assert p[..., 0].shape == (None,)
        assert p[None].shape == (1, None, 4)
    x = np.arange(12.0).reshape(3, 4)
    assert_same(_run(y, {p: x}, g), x[1:, ::-2], "static getitem")


# -- gather / embedding ----------------------------------------------------------------------
@pytest.mark.parametrize("index_dtype", (I32, I64))
@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_gather(dtype, index_dtype, data):
    shape = data.draw(small_shapes(min_dims=1))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    ishape = data.draw(small_shapes(max_dims=2))
    params = arrays(data.draw, "any", dtype, shape)
    indices = data.draw(hnp.arrays(index_dtype, ishape,
                                   elements=st.integers(0, shape[axis] - 1)))
    check_op(lambda p, i: kg.gather(p, i, axis=axis),
             lambda p, i: REFERENCE["gather"](p, i, axis=axis), [params, indices], diff=(0,),
             ph=data.draw(PLACEHOLDER_SHAPES))


@given(data=st.data())
def test_gather_repeated_indices_accumulate(data):
    shape = data.draw(small_shapes(min_dims=1))
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    indices = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=8)))
    indices[1] = indices[0]  # at least one repeat
    params = arrays(data.draw, "any", F64, shape)
    out, (grad,) = check_op(lambda p, i: kg.gather(p, i, axis=axis),
                            lambda p, i: np.take(p, i, axis=axis), [params, indices],
                            diff=(0,))
    expected = scatter_add(weights(out.shape, F64), indices, shape, axis)
    np.testing.assert_allclose(grad, expected, rtol=1e-12)


def test_embedding():
    w = kg.tensor(np.arange(8.0).reshape(4, 2), requires_grad=True)
    ids = kg.tensor([[3, 0], [3, 3]])
    e = kg.embedding(w, ids)
    assert e.shape == (2, 2, 2)
    e.sum().backward()
    assert w.grad.tolist() == [[1, 1], [0, 0], [0, 0], [3, 3]]


# -- pad, one_hot, clip, argmax --------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_pad(dtype, data):
    shape = data.draw(small_shapes())
    pads = [(data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in shape]
    value = data.draw(st.sampled_from([0, 1, -2]))
    x = arrays(data.draw, "any", dtype, shape)
    check_op(lambda t: kg.pad(t, pads, value=value),
             lambda a: REFERENCE["pad"](a, pads, value), [x], diff=(0,),
             ph=data.draw(PLACEHOLDER_SHAPES))


@pytest.mark.parametrize("index_dtype", (I32, I64))
@given(data=st.data())
def test_one_hot(index_dtype, data):
    depth = data.draw(st.integers(1, 5))
    idx = data.draw(hnp.arrays(index_dtype, small_shapes(), elements=st.integers(0, depth - 1)))
    out, grads = check_op(lambda t: kg.one_hot(t, depth), lambda a: REFERENCE["one_hot"](
        a, depth), [idx], out_dtype=F32, ph=data.draw(PLACEHOLDER_SHAPES))
    assert grads == []


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_clip(dtype, data):
    lo, hi = data.draw(st.sampled_from([(-1, 1), (None, 0), (-2, None), (0, 0)]))
    x = arrays(data.draw, "grid_a", dtype, data.draw(small_shapes()))  # never on a bound
    if dtype in FLOATS and lo is not None:
        lo = float(lo)
    out, grads = check_op(lambda t: kg.clip(t, lo, hi), lambda a: REFERENCE["clip"](a, lo, hi),
                          [x], diff=(0,), ph=data.draw(PLACEHOLDER_SHAPES))
    if grads:
        inside = (x >= (-np.inf if lo is None else lo)) & (x <= (np.inf if hi is None else hi))
        assert_same(grads[0], np.where(inside, weights(x.shape, dtype), 0).astype(dtype),
                    "clip gradient passes where inside")


def test_clip_gradient_at_bounds_passes():
    x = kg.tensor([-1.0, 0.0, 1.0, 2.0], requires_grad=True)
    kg.clip(x, -1.0, 1.0).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0, 0.0]


@pytest.mark.parametrize("dtype", (F32, F64, I32, I64))
@given(data=st.data())
def test_argmax(dtype, data):
    shape = data.draw(small_shapes(min_dims=1))
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    keepdims = data.draw(st.booleans())
    x = arrays(data.draw, "ties", dtype, shape)  # ties: the first maximum wins
    out, grads = check_op(lambda t: kg.argmax(t, axis, keepdims),
                          lambda a: REFERENCE["argmax"](a, axis, keepdims), [x], diff=(0,),
                          out_dtype=I64, ph=data.draw(PLACEHOLDER_SHAPES))
    assert grads == []


# -- random and dropout ----------------------------------------------------------------------
def test_random_reproducible_and_identical_across_modes():
    kg.random.seed(5)
    eager = [kg.random.normal((2, 3), seed=7)._array for _ in range(3)]
    auto = kg.random.uniform((4,), low=-1, high=2, dtype=kg.float64)._array
    kg.random.seed(5)
    again = [kg.random.normal((2, 3), seed=7)._array for _ in range(3)]
    for a, b in zip(eager, again):
        assert_same(a, b, "same seed, same stream")
    assert not np.array_equal(eager[0], eager[1]), "each call is a new draw"
    assert eager[0].dtype == F32 and auto.dtype == F64
    assert np.all((auto >= -1) & (auto < 2))

    kg.random.seed(5)
    with kg.Graph().as_default() as g:
        node = kg.random.random_normal((2, 3), seed=7)
        auto_node = kg.random.random_uniform((4,), low=-1, high=2, dtype=kg.float64)
        assert node.shape == (2, 3) and node.dtype == F32
    with kg.Session(g) as sess:
        runs = [sess.run(node) for _ in range(3)]
        auto_static = sess.run(auto_node)
    for a, b in zip(eager, runs):
        assert_same(a, b, "eager calls == static runs")
    assert_same(auto, auto_static, "automatic seeds in creation order")


def test_random_statistics_and_global_seed():
    kg.random.seed(1)
    z = kg.random.normal((20000,), mean=2.0, std=3.0, dtype=kg.float64)._array
    assert abs(z.mean() - 2.0) < 0.1 and abs(z.std() - 3.0) < 0.1
    kg.random.seed(2)
    assert not np.array_equal(kg.random.normal((5,), seed=1)._array,
                              (kg.random.seed(3), kg.random.normal((5,), seed=1)._array)[1])


@pytest.mark.parametrize("dtype", FLOATS)
def test_dropout_mask_and_gradient(dtype):
    x = np.linspace(1.0, 2.0, 40).reshape(8, 5).astype(dtype)
    kg.random.seed(0)
    t = kg.tensor(x, requires_grad=True)
    y = kg.dropout(t, p=0.25, seed=11)
    w = weights(x.shape, dtype)
    (y * kg.tensor(w)).sum().backward()
    kept = y._array != 0
    assert 0 < kept.sum() < x.size
    mask = kept.astype(dtype) * dtype.type(1 / 0.75)
    np.testing.assert_allclose(y._array, x * mask, rtol=1e-6)
    assert_same(t.grad._array, (w * mask).astype(dtype), "gradient is the same mask")

    kg.random.seed(0)
    with kg.Graph().as_default() as g:
        p = kg.placeholder(dtype, shape=(None, 5))
        node = kg.dropout(p, p=0.25, seed=11)
        (grad,) = kg.gradients(kg.sum(node * kg.constant(w)), [p])
    out, gs = _run([node, grad], {p: x}, g)
    assert_same(out, y._array, "static dropout == eager dropout")
    assert_same(gs, t.grad._array, "static dropout gradient == eager")


def test_dropout_identity_cases():
    t = kg.ones(3)
    assert kg.dropout(t, p=0.5, training=False) is t
    assert kg.dropout(t, p=0.0) is t
    assert kg.dropout(t, p=1.0).tolist() == [0.0, 0.0, 0.0]


# -- compat ----------------------------------------------------------------------------------
def test_compat_v1_spellings():
    import kernelgraph.compat.v1 as tf

    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, shape=[None, 4])
        a, b = tf.split(x, 2, axis=1)
        fetches = [tf.concat([b, a], 1), tf.stack([a, b]), tf.gather(x, [1], axis=0),
                   tf.pad(x, [[0, 0], [1, 0]]), tf.one_hot([0, 2], 3),
                   tf.clip_by_value(x, 0.0, 2.0), tf.argmax(x, 1),
                   tf.random.normal([2], seed=1), tf.nn.dropout(x, rate=0.5, seed=1)]
    v = np.arange(8, dtype=np.float32).reshape(2, 4)
    out = _run(fetches, {x: v}, g)
    assert_same(out[0], np.concatenate([v[:, 2:], v[:, :2]], 1), "tf.concat/tf.split")
    assert out[1].shape == (2, 2, 2) and out[2].tolist() == [v[1].tolist()]
    assert out[3].shape == (2, 5) and out[4].tolist() == [[1, 0, 0], [0, 0, 1]]
    assert out[5].max() == 2.0 and out[6].tolist() == [3, 3]
    assert out[7].shape == (2,) and out[8].shape == (2, 4)


# -- errors ----------------------------------------------------------------------------------
def test_getitem_errors():
    t = kg.tensor(np.zeros((3, 4)))
    with pytest.raises(IndexError, match="index 5 is out of range for axis 0 with size 3"):
        t[5]
    with pytest.raises(IndexError, match="index -5 is out of range for axis 1 with size 4"):
        t[0, -5]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., ...]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        t[::0]
    with pytest.raises(IndexError, match="long, int, byte or bool"):
        t[kg.tensor([0.5])]  # index tensors and lists are advanced indexing (a gather)
    with pytest.raises(IndexError, match="out of bounds"):
        t[[0, 7]]
    with kg.Graph().as_default() as g:
        p = kg.placeholder(kg.float32, shape=(3, None))
        with pytest.raises(IndexError, match="index 3 is out of range for axis 0"):
            p[3]
        late = p[:, 7]  # unknown dim: checked when it runs
    with pytest.raises(InvalidArgumentError, match="index 7 is out of range for axis 1"):
        _run(late, {p: np.zeros((3, 2), np.float32)}, g)


def test_gather_errors():
    p = kg.tensor(np.zeros((3, 2)))
    with pytest.raises(IndexError, match=r"index 3 is out of range for axis 0 with size 3"):
        kg.gather(p, kg.tensor([0, 3]))
    with pytest.raises(IndexError, match=r"index -1 is out of range .* 0 <= index < 3"):
        kg.embedding(p, kg.tensor([-1]))
    with pytest.raises(TypeError, match="indices must be int32 or int64, got float32"):
        kg.gather(p, kg.tensor([0.0]))
    with pytest.raises(ShapeError, match="axis 2 is out of range"):
        kg.gather(p, kg.tensor([0]), axis=2)
    with kg.Graph().as_default() as g:
        pp = kg.placeholder(kg.float64, shape=(None, 2))
        ids = kg.placeholder(kg.int64, shape=(None,))
        out = kg.gather(pp, ids)
    with pytest.raises(InvalidArgumentError, match="index 9 is out of range"):
        _run(out, {pp: np.zeros((3, 2)), ids: np.array([9])}, g)


def test_shape_op_errors():
    a, b = kg.tensor(np.zeros((2, 3))), kg.tensor(np.zeros((2, 4)))
    with pytest.raises(ShapeError, match="differ"):
        kg.concat([a, b], axis=0)
    with pytest.raises(TypeError, match="one dtype"):
        kg.concat([a, kg.tensor(np.zeros((2, 3), np.float32))])
    with pytest.raises(ValueError, match="at least one tensor"):
        kg.concat([])
    with pytest.raises(TypeError, match="list of tensors"):
        kg.stack(a)
    with pytest.raises(ShapeError, match=r"stack: shapes \(2, 3\), \(2, 4\) differ"):
        kg.stack([a, b])
    with pytest.raises(ShapeError, match="does not split into 2 equal pieces"):
        kg.split(a, 2, axis=1)
    with pytest.raises(ShapeError, match="add up to 2"):
        kg.split(a, [1, 1], axis=1)
    with pytest.raises(ShapeError, match="one pair per dim"):
        kg.pad(a, [(1, 1)])
    with pytest.raises(ValueError, match="non-negative"):
        kg.pad(a, [(1, 1), (-1, 0)])
    with pytest.raises(IndexError, match="one_hot: index 3 is out of range"):
        kg.one_hot(kg.tensor([0, 3]), 3)
    with pytest.raises(ValueError, match="at least one of 'min' or 'max'"):
        kg.clip(a)
    with pytest.raises(ValueError, match="reduction axis 1 to have non-zero size"):
        kg.argmax(kg.tensor(np.zeros((2, 0))), 1)
    with pytest.raises(ValueError, match="between 0 and 1"):
        kg.dropout(a, p=1.5)
    with pytest.raises(TypeError, match="floating-point"):
        kg.dropout(kg.tensor([1, 2]), p=0.5)
    with pytest.raises(ValueError, match="non-negative int"):
        kg.random.seed(-1)
    with pytest.raises(TypeError, match="float32 or float64"):
        kg.random.normal((2,), dtype=kg.int32)
