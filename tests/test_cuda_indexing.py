"""CUDA forwards of the indexing and random ops (``kernelgraph/kernels/cuda/indexing.py``,
``kernelgraph/kernels/cuda/random.py``) against their CPU forwards.

Each case runs the CUDA forward on device copies of NumPy inputs and the CPU forward
(``OPS[name].forward``) on the inputs themselves: the results must agree bit for bit (these
ops move data, so they round nothing; only gather_grad's atomic float sums may round in
another order), and bad inputs must raise the same error with the same message. Without an
NVIDIA GPU the kernels run on numba's simulator (the root conftest), which pays per thread:
shapes stay tiny and hypothesis examples few.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kernelgraph as kg
from kernelgraph.kernels.cuda import core
from kernelgraph.kernels.cuda import indexing as CI
from kernelgraph.ops import cuda_kernels, indexing, join
from kernelgraph.ops import random as R
from kernelgraph.ops.indexing import normalize_index
from kernelgraph.ops.registry import OPS
from tests.test_ops import (
    BOOL,
    F32,
    F64,
    I32,
    I64,
    arrays,
    assert_same,
    run_cuda,
    small_shapes,
    to_device,
)

FEW = settings(max_examples=8)
CUDA = cuda_kernels(indexing, join, R)
DTYPES = (F32, F64, I32, I64, BOOL)
NUMERIC = (F32, F64, I32, I64)


# -- helpers ---------------------------------------------------------------------------------
def check(name, *args, **attrs) -> np.ndarray:
    """CUDA forward == CPU forward, bit for bit (dtype, shape and every byte)."""
    got = run_cuda(name, *args, **attrs)
    want = OPS[name].forward(*args, **attrs)
    assert_same(got, want, f"{name} on CUDA vs CPU")
    return got


def check_error(name, *args, **attrs):
    """Both forwards raise the same exception type with the same message."""
    with pytest.raises(Exception) as cpu:
        OPS[name].forward(*args, **attrs)
    dev_args = [to_device(a) for a in args]
    with pytest.raises(cpu.type) as dev:
        CUDA[name](*dev_args, **attrs)
    assert str(dev.value) == str(cpu.value)


def any_array(draw, dtype, shape):
    return arrays(draw, "ties", dtype, shape) if dtype != BOOL else arrays(
        draw, "any", dtype, shape)


def test_every_assigned_op_has_a_cuda_forward():
    names = {"concat", "concat_slice", "stack", "split_piece", "split_grad", "getitem",
             "getitem_grad", "gather", "gather_grad", "pad", "one_hot", "clip", "argmax",
             "random_normal", "random_uniform", "dropout_mask", "setitem"}
    assert set(CUDA) == names and names <= set(OPS)


# -- concat / stack / split ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_concat(dtype, data):
    shape = data.draw(small_shapes(min_dims=1))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    xs = []
    for _ in range(data.draw(st.integers(1, 3))):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))  # a 0-wide input adds nothing
        xs.append(any_array(data.draw, dtype, tuple(s)))
    check("concat", *xs, axis=axis)
    for i in range(len(xs)):  # its gradient: each input's piece of the output
        g = any_array(data.draw, dtype, np.concatenate(xs, axis).shape)
        check("concat_slice", g, *xs, index=i, axis=axis)


def test_concat_errors():
    a, b = np.zeros((2, 3)), np.zeros((2, 4))
    check_error("concat", a, b, axis=0)
    check_error("concat", a, a.astype(np.float32))
    check_error("concat", np.zeros(()), np.zeros(()))
    check_error("concat", a, a, axis=2)


@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_stack(dtype, data):
    shape = data.draw(small_shapes())  # 0-d inputs included
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    xs = [any_array(data.draw, dtype, shape) for _ in range(data.draw(st.integers(1, 3)))]
    check("stack", *xs, axis=axis)


def test_stack_errors_and_empty():
    check("stack", np.zeros((2, 0)), np.zeros((2, 0)), axis=1)
    check_error("stack", np.zeros((2, 3)), np.zeros((2, 4)))
    check_error("stack", np.zeros((2, 3)), np.zeros((2, 3)), axis=3)


@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_split_piece_and_grad(dtype, data):
    shape = data.draw(small_shapes(min_dims=1))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[axis]
    if data.draw(st.booleans()):
        sizes = data.draw(st.sampled_from([k for k in range(1, size + 1) if size % k == 0]))
        count = sizes
    else:
        cuts = sorted(data.draw(st.lists(st.integers(0, size), max_size=3)))
        sizes = tuple(int(s) for s in np.diff([0, *cuts, size]))
        if data.draw(st.booleans()):
            sizes = tuple(-1 if i == 0 else s for i, s in enumerate(sizes))
        count = len(sizes)
    x = any_array(data.draw, dtype, shape)
    for index in range(count):
        piece = check("split_piece", x, sizes=sizes, index=index, axis=axis)
        g = any_array(data.draw, dtype, piece.shape)
        check("split_grad", g, x, sizes=sizes, index=index, axis=axis)


def test_split_errors():
    x = np.zeros((2, 3))
    check_error("split_piece", x, sizes=2, index=0, axis=1)
    check_error("split_piece", x, sizes=(1, 1), index=0, axis=1)
    check_error("split_grad", np.zeros((2, 1)), x, sizes=(1, 1), index=0, axis=1)
    check_error("split_grad", np.zeros((2, 2)), x, sizes=(1, 2), index=0, axis=1)


# -- getitem ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_getitem_and_grad(dtype, data):
    shape = data.draw(small_shapes())
    index = normalize_index(data.draw(hnp.basic_indices(shape, allow_newaxis=True,
                                                        allow_ellipsis=True)))
    x = any_array(data.draw, dtype, shape)
    out = check("getitem", x, index)
    g = any_array(data.draw, dtype, out.shape)
    check("getitem_grad", g, x, index)


@pytest.mark.parametrize("index", [
    (0,), (slice(1, 3), slice(None, None, 2)), (Ellipsis, 1),
    (-1, slice(None), slice(None, None, -1)), (None, 1, Ellipsis, None), (1, -2, -3),
    (slice(None, None, -2), None, slice(3, 0, -1)), (slice(5, 1),), (Ellipsis,), (),
    (slice(-10, 10, 3), Ellipsis, slice(None, -5, -1)),
])
def test_getitem_examples(index):
    x = np.arange(24.0).reshape(2, 3, 4)
    index = normalize_index(index)
    out = check("getitem", x, index)
    check("getitem_grad", np.arange(out.size, dtype=x.dtype).reshape(out.shape), x, index)


def test_getitem_zero_d_and_empty():
    check("getitem", np.array(3.5), ())
    check("getitem", np.array(3.5), (None, "..."))
    check("getitem", np.arange(4), (2,))  # a 0-d result (NumPy would give a scalar)
    x = np.zeros((0, 3), np.int32)
    check("getitem", x, ((None, None, None), 1))
    check("getitem_grad", np.zeros((0,), np.int32), x, ((None, None, None), 1))


def test_getitem_grad_broadcasts_like_numpy_assignment():
    x = np.zeros((3, 4))
    index = normalize_index((slice(None), slice(1, 3)))
    check("getitem_grad", np.array([1.0, 2.0]), x, index)  # (2,) into a (3, 2) view
    check("getitem_grad", np.array([[[1.0], [2.0], [3.0]]]), x, index)  # leading 1 dropped
    check_error("getitem_grad", np.ones((3, 3)), x, index)


def test_getitem_errors():
    x = np.zeros((3, 4))
    check_error("getitem", x, (5,))
    check_error("getitem", x, (0, -5))
    check_error("getitem", x, (0, 0, 0))
    check_error("getitem", x, ("...", 0, 0, 0))


# -- gather / gather_grad --------------------------------------------------------------------
@pytest.mark.parametrize("index_dtype", (I32, I64))
@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_gather_and_grad(dtype, index_dtype, data):
    shape = data.draw(small_shapes(min_dims=1))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    ishape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4))
    params = any_array(data.draw, dtype, shape)
    indices = data.draw(hnp.arrays(index_dtype, ishape,
                                   elements=st.integers(0, shape[axis] - 1)))
    out = check("gather", params, indices, axis=axis)
    g = any_array(data.draw, dtype, out.shape)  # "ties": small exact values, any sum order
    check("gather_grad", g, indices, params, axis=axis)


@pytest.mark.parametrize("dtype", (F32, F64))
def test_gather_grad_accumulates_repeats(dtype):
    rng = np.random.default_rng(0)
    g = rng.standard_normal((2, 12, 3)).astype(dtype)
    indices = np.array([1, 0, 1, 1, 3, 1, 0, 1, 2, 1, 1, 3])
    like = np.zeros((2, 4, 3), dtype)
    got = run_cuda("gather_grad", g, indices, like, axis=1)
    want = OPS["gather_grad"].forward(g, indices, like, axis=1)
    assert got.dtype == want.dtype and got.shape == want.shape
    # Atomics add in whatever order threads land: float sums may round differently.
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == F32 else 1e-12, atol=1e-6)


def test_gather_errors():
    p = np.zeros((3, 2))
    check_error("gather", p, np.array([0, 3]))
    check_error("gather", p, np.array([[1, -1], [7, -2]]), axis=0)  # names the first bad one
    check_error("gather", p, np.array([2], np.int32), axis=1)
    check_error("gather", p, np.array([0.0]))
    check_error("gather", p, np.array([0]), axis=2)
    check_error("gather", np.zeros((0, 2)), np.array([0]), axis=0)  # no data, still checked
    check_error("gather_grad", np.zeros((2, 2)), np.array([0, 3]), p)
    check_error("gather_grad", np.zeros((2, 3)), np.array([0, 1]), p)


# -- pad, one_hot, clip ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_pad(dtype, data):
    shape = data.draw(small_shapes())
    paddings = [(data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in shape]
    value = data.draw(st.sampled_from([0, 1, -2, 2.5]))
    x = any_array(data.draw, dtype, shape)
    check("pad", x, paddings, value=value)


def test_pad_edges():
    check("pad", np.zeros((0, 2), np.float32), [(1, 0), (0, 1)], value=7)
    check("pad", np.array(2.0), [])
    check_error("pad", np.zeros((2, 2)), [(1, 1)])
    check_error("pad", np.zeros((2, 2)), [(1, 1), (-1, 0)])


@pytest.mark.parametrize("index_dtype", (I32, I64))
@FEW
@given(data=st.data())
def test_one_hot(index_dtype, data):
    depth = data.draw(st.integers(1, 5))
    idx = data.draw(hnp.arrays(index_dtype, small_shapes(), elements=st.integers(0, depth - 1)))
    dtype = data.draw(st.sampled_from(DTYPES))
    check("one_hot", idx, depth)
    check("one_hot", idx, depth, dtype=dtype)


def test_one_hot_edges_and_errors():
    check("one_hot", np.zeros((0, 2), np.int64), 3)
    check("one_hot", np.zeros((0,), np.int32), 0)
    check("one_hot", np.array(2), 3, dtype=kg.int32)
    check_error("one_hot", np.array([0, 3]), 3)
    check_error("one_hot", np.array([0]), 0)
    check_error("one_hot", np.array([0.0]), 2)
    check_error("one_hot", np.array([0]), -1)


@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_clip(dtype, data):
    lo, hi = data.draw(st.sampled_from([(-1, 1), (None, 0), (-2, None), (0, 0), (-1.5, 2.5),
                                        (1, -1), (True, None)]))
    x = any_array(data.draw, dtype, data.draw(small_shapes()))
    check("clip", x, lo, hi)
    check("clip", x, min=lo, max=hi)


def test_clip_nan_and_errors():
    x = np.array([np.nan, -3.0, 0.5, 4.0, np.inf, -np.inf], np.float32)
    check("clip", x, -1.0, 1.0)
    check("clip", x, np.nan, None)
    check("clip", np.zeros((0, 3)), 0, 1)
    check_error("clip", x)
    check_error("clip", x, "a", None)


# -- argmax ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_argmax(dtype, data):
    shape = data.draw(small_shapes(min_dims=0))
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1)) if shape else None
    x = any_array(data.draw, dtype, shape)  # "ties": the first maximum must win
    if dtype == np.bool_:  # refused, as in PyTorch
        check_error("argmax", x, axis, keepdims=False)
        return
    check("argmax", x, axis, keepdims=data.draw(st.booleans()))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_long_rows_take_the_block_kernel(axis, keepdims):
    # Rows of >= core.THREADS elements reduce with a block each; ties and NaNs included.
    x = (np.arange(40 * 3, dtype=np.float64) % 7).reshape(40, 3)
    check("argmax", x, axis, keepdims=keepdims)
    x[5, :] = x[30, :] = np.nan
    check("argmax", x, axis, keepdims=keepdims)
    check("argmax", x.T.copy(), axis, keepdims=keepdims)


@pytest.mark.parametrize("grid", [(1, 1), (1, 5), (1, 7), (2, 3), (3, 32)])
def test_argmax_block_kernel_any_block_size(grid):
    # The tree reduction must be right for any block and grid size, not just the launch's.
    rng = np.random.default_rng(1)
    x = rng.integers(0, 4, size=(3, 37)).astype(np.float64)
    x[1, [4, 20, 33]] = np.nan
    out = core.empty((3,), np.int64)
    blocks, threads = grid
    CI._argmax_by_block[blocks, threads](core.to_device(x.reshape(-1)), out, 37, 1)
    assert_same(core.to_host(out), np.argmax(x, axis=1), f"block reduction on {grid}")


def test_argmax_nan_and_errors():
    x = np.array([[1.0, np.nan, 5.0, np.nan], [2.0, 2.0, 1.0, 0.0], [np.nan, 0, 0, 9]])
    for axis in (None, 0, 1):
        check("argmax", x, axis)
    check("argmax", np.zeros((0, 3)), 1)  # empty other dims: an empty result
    check_error("argmax", np.zeros((2, 0)), 1)
    check_error("argmax", np.zeros((0,)))
    check_error("argmax", np.array(1.0), 0)
    check_error("argmax", np.zeros((2, 2)), 2)


# -- random ----------------------------------------------------------------------------------
def _draws(device):
    """Draws of each random op after ``kg.random.seed(3)``, through the CPU or CUDA forwards
    (the attrs come from the public helpers, so op seeds and counters are the real ones)."""
    forward = (lambda n: OPS[n].forward) if device == "cpu" else (lambda n: CUDA[n])
    host = core.to_host if device == "cuda" else np.asarray
    kg.random.seed(3)
    out = []
    for seed in (7, 7, None):
        out.append(host(forward("random_normal")(**R._attrs(
            (2, 3), kg.float32, seed, False, mean=1.0, std=2.0))))
        out.append(host(forward("random_uniform")(**R._attrs(
            (4,), kg.float64, seed, False, low=-1.0, high=2.0))))
    like = np.zeros((3, 5), np.float64)
    for p in (0.25, 1.0):
        x = like if device == "cpu" else core.to_device(like)
        out.append(host(forward("dropout_mask")(x, p=p, **R._seed_attrs(11, False))))
    return out


def test_random_streams_are_the_same_on_cpu_and_cuda():
    cpu, dev = _draws("cpu"), _draws("cuda")
    for i, (a, b) in enumerate(zip(cpu, dev)):
        assert_same(b, a, f"draw {i}: CUDA vs CPU")
    assert not np.array_equal(cpu[0], cpu[2]), "a second call is a new draw"


def test_random_outputs_are_device_arrays():
    kg.random.seed(0)
    run_cuda("random_normal", **R._attrs((0, 2), kg.float64, None, False, mean=0.0, std=1.0))
    run_cuda("random_uniform", **R._attrs((), kg.float32, 1, False, low=0.0, high=1.0))
    run_cuda("dropout_mask", np.ones((2, 2), np.float32), p=0.5, **R._seed_attrs(1, False))


def test_dropout_mask_reads_only_shape_and_dtype():
    # An input with no data at all: the forward must not copy x to the host.
    x = types.SimpleNamespace(shape=(4, 3), dtype=np.dtype(np.float32))
    kg.random.seed(0)
    got = core.to_host(CUDA["dropout_mask"](x, p=0.5, **R._seed_attrs(5, False)))
    kg.random.seed(0)
    want = OPS["dropout_mask"].forward(np.zeros((4, 3), np.float32), p=0.5,
                                       **R._seed_attrs(5, False))
    assert_same(got, want, "dropout mask from shape and dtype alone")


def test_random_errors():
    check_error("random_normal", shape=(2,), mean=0.0, std=1.0, dtype=kg.int32,
                **R._seed_attrs(1, False))
    check_error("dropout_mask", np.zeros((2,), np.int64), p=0.5, **R._seed_attrs(1, False))
