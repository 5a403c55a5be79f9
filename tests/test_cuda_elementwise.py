"""The CUDA forwards of the elementwise, reduction and shape ops against their CPU forwards.

Each check runs ``FORWARDS[name]`` on device copies of NumPy inputs (Python numbers stay
numbers) and ``OPS[name].forward`` on the NumPy inputs themselves, and wants a new
C-contiguous device array of the same shape and dtype with the same values: exactly for ints
and bools, within a few float32/float64 rounding steps for floats (a GPU's ``expf`` is not
the CPU's). Bad inputs must raise the CPU's error.

Without a GPU these run on numba's simulator (see ../conftest.py), which runs every CUDA
thread as a Python thread: shapes stay tiny and examples few. The reduction launch tuning is
shrunk in :func:`test_reduction_splits_and_multi_block_grids` so that the simulator also
runs the partial-sum second pass and multi-block grid-stride loops a GPU would.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from kernelgraph import ops
from kernelgraph.dtypes import DtypeError
from kernelgraph.errors import ShapeError
from kernelgraph.kernels.cuda import core
from kernelgraph.kernels.cuda import reduce as cuda_reduce
from kernelgraph.ops.registry import OPS
from tests.test_ops import (
    BOOL,
    F32,
    F64,
    FLOATS,
    I32,
    I64,
    INTS,
    arrays,
    broadcast_shapes,
    broadcast_to_cases,
    permutations,
    reduce_axes,
    reshape_targets,
    run_cuda,
    small_shapes,
    to_device,
)

FORWARDS = ops.cuda_kernels(ops.elementwise, ops.reduce, ops.shape)
ALL_DTYPES = (F32, F64, I32, I64, BOOL)
# Tighter than test_ops' tolerances against a float64 reference: this compares the same
# computation on two devices, which differ only in libm ulps and FMA contraction.
TOL = {F32: {"rtol": 1e-5, "atol": 1e-6}, F64: {"rtol": 1e-12, "atol": 1e-13}}
FEW = settings(max_examples=3)
SOME = settings(max_examples=6)


# -- helpers ---------------------------------------------------------------------------------
def check(name, *args, **attrs):
    """The CUDA forward of op ``name`` agrees with its CPU forward on ``args``."""
    expected = np.asarray(OPS[name].forward(*args, **attrs))
    host = run_cuda(name, *args, **attrs)
    what = f"{name}{tuple(getattr(a, 'shape', a) for a in args)} {attrs}"
    assert host.dtype == expected.dtype, f"{what}: dtype {host.dtype} != {expected.dtype}"
    assert host.shape == expected.shape, f"{what}: shape {host.shape} != {expected.shape}"
    if expected.dtype in FLOATS:
        np.testing.assert_allclose(host, expected, equal_nan=True, err_msg=what,
                                   **TOL[expected.dtype])
    else:
        assert np.array_equal(host, expected), f"{what}: {host!r} != {expected!r}"
    return host


def check_error(name, *args, **attrs):
    """The CUDA forward raises what the CPU forward raises: the same message, and the same
    type (for NumPy's private ufunc errors, their public base, e.g. TypeError)."""
    with pytest.raises(Exception) as cpu_error:
        OPS[name].forward(*args, **attrs)
    expected = cpu_error.type
    if expected.__module__.startswith("numpy._"):
        expected = next(t for t in expected.__mro__ if t.__module__ == "builtins")
    with pytest.raises(expected) as cuda_error:
        FORWARDS[name](*(to_device(a) for a in args), **attrs)
    assert str(cuda_error.value) == str(cpu_error.value)


def check_or_refused(name, *args, **attrs):
    """:func:`check`, or, where the CPU forward refuses the operands' dtypes (a bool where
    PyTorch refuses one: ``-b``, ``b - x``, ``b ** b``), the same refusal on CUDA."""
    try:
        OPS[name].forward(*args, **attrs)
    except DtypeError:
        check_error(name, *args, **attrs)
        return
    check(name, *args, **attrs)


def values(draw, kind, dtype, shape):
    """Arrays of ``kind`` (test_ops' domains), with integer and bool versions of the domains
    that must avoid 0 (divisors) or negatives (integer exponents)."""
    if dtype == BOOL:
        return draw(hnp.arrays(BOOL, shape, elements=st.just(True) if kind == "nonzero"
                               else st.booleans()))
    if dtype in INTS and kind in ("nonzero", "exponent"):
        ints = st.integers(0, 3) if kind == "exponent" else \
            st.integers(1, 6) | st.integers(-6, -1)
        return draw(hnp.arrays(dtype, shape, elements=ints))
    return arrays(draw, kind, dtype, shape)


def test_every_assigned_op_has_a_cuda_forward():
    # Every op these three families define (the module on its card) has a CUDA forward: a
    # new op is found through its card, not through a list kept here.
    families = {m.__name__ for m in (ops.elementwise, ops.reduce, ops.shape)}
    assigned = [name for name, op in OPS.items() if op.module in families]
    assert len(assigned) >= 42
    assert sorted(FORWARDS) == sorted(assigned)
    assert all(name in OPS for name in FORWARDS)


# -- elementwise -----------------------------------------------------------------------------
UNARY = {"neg": "any", "exp": "any", "log": "positive", "sqrt": "positive", "tanh": "any",
         "sigmoid": "wide", "relu": "any", "abs": "any", "sign": "ties"}


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", list(UNARY))
@FEW
@given(data=st.data())
def test_unary(name, dtype, data):
    check_or_refused(name, values(data.draw, UNARY[name], dtype, data.draw(small_shapes())))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy, on the CPU side
def test_unary_special_values(name, dtype):
    """NaN, infinities, signed zeros and negatives (log/sqrt: -inf at 0, NaN below), and
    values whose exp overflows (inf, as on the CPU: the simulator's Python math.exp would
    raise OverflowError) or underflows, in each dtype."""
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -2.5, 1e-30, 30.0, 89.0, 710.0, 1e3,
                  -1e3, -750.0, np.finfo(dtype).smallest_subnormal, np.finfo(dtype).max],
                 dtype)
    check(name, x)


BINARY = {  # name: (domain of x, domain of y)
    "add": ("any", "any"), "sub": ("any", "any"), "mul": ("any", "any"),
    "div": ("any", "nonzero"), "pow": ("base", "exponent"),
    "maximum": ("ties", "ties"), "minimum": ("ties", "ties"),
    "tanh_grad": ("any", "any"), "sigmoid_grad": ("any", "any"), "relu_grad": ("ties", "any"),
    **{name: ("ties", "ties") for name in ("equal", "not_equal", "less", "less_equal",
                                            "greater", "greater_equal")},
}


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", list(BINARY))
@FEW
@given(data=st.data())
def test_binary_broadcasting(name, dtype, data):
    sx, sy = data.draw(broadcast_shapes(2))
    kx, ky = BINARY[name]
    check_or_refused(name, values(data.draw, kx, dtype, sx), values(data.draw, ky, dtype, sy))


@pytest.mark.parametrize("name", list(BINARY))
@SOME
@given(data=st.data())
def test_binary_mixed_dtypes(name, data):
    """Operands of two dtypes promote as on the CPU before the kernel runs."""
    dx, dy = data.draw(st.sampled_from(ALL_DTYPES)), data.draw(st.sampled_from(ALL_DTYPES))
    sx, sy = data.draw(broadcast_shapes(2))
    kx, ky = BINARY[name]
    check_or_refused(name, values(data.draw, kx, dx, sx), values(data.draw, ky, dy, sy))


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # negative int ** 0.5 is NaN
@SOME
@given(data=st.data())
def test_python_number_operand(name, side, data):
    """Numbers are weak operands (int32 tensor + 2 stays int32, * 0.5 becomes float32)."""
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    number = data.draw(st.sampled_from([2, 3, 0.5, -1.25, True, False]))
    kx, ky = BINARY[name]
    if name in ("div", "pow"):  # no zero divisor, no integer to a negative power
        number = {False: True, -1.25: 1.25}.get(number, number) if side == "right" else 2.0
        kx = "base" if name == "pow" else "nonzero"
    x = values(data.draw, kx if side == "right" else ky, dtype, data.draw(small_shapes()))
    check_or_refused(name, *((x, number) if side == "right" else (number, x)))


LAYOUTS = [  # (x shape, y shape): every path of the elementwise kernels
    ((3, 4), (3, 4)),  # same shape: flat
    ((2, 3, 4), ()),  # number-like 0-d operand: flat, step 0
    ((1, 1), (3, 4)),  # size-1 array: flat, step 0
    ((3, 1, 4), (3, 4)),  # size-1 dims dropped by coalescing: flat
    ((2, 3, 4), (4,)),  # bias add: strided, (6, 4) after coalescing
    ((3, 1), (1, 4)),  # outer product: strided
    ((2, 1, 3, 1), (1, 4, 1, 2)),  # strided, rank 4
    ((), ()),  # 0-d
    ((0, 3), (3,)),  # size 0
    ((2, 0), (1, 1)),
]


@pytest.mark.parametrize("sx, sy", LAYOUTS)
@pytest.mark.parametrize("name", ["add", "maximum", "less", "where"])
def test_layouts(name, sx, sy):
    rng = np.random.default_rng(0)
    x = np.asarray(rng.standard_normal(sx), F32)
    y = np.asarray(rng.standard_normal(sy), F32)
    if name == "where":
        check(name, x > 0, x, y)
        check(name, y > 0, 1.5, x)
    else:
        check(name, x, y)
        check(name, y, x)


def test_pow_integer_to_negative_power_raises():
    x, y = np.array([2, 3], I32), np.array([1, -1], I64)
    check_error("pow", x, y)
    check_error("pow", x, -2)
    check_error("pow", 2, y)
    check("pow", x, np.abs(y))
    check("pow", x.astype(F32), -2)  # a float base may have negative powers
    check("pow", x, -2.0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the simulator computes with NumPy
def test_division_by_zero_gives_inf_and_nan():
    check("div", np.array([1.0, -1.0, 0.0], F32), np.array([0.0, 0.0, 0.0], F32))
    check("div", np.array([1, -1, 0], I32), 0)


def test_broadcast_mismatch_raises_value_error():
    with pytest.raises(ValueError):
        FORWARDS["add"](core.to_device(np.ones(2)), core.to_device(np.ones(3)))


@pytest.mark.parametrize("name, args", [
    ("add", (np.ones(2), 1.0)), ("neg", (np.ones(2),)), ("where", (np.ones(2), 1, 2)),
    ("sum", (np.ones(2),)), ("transpose", (np.ones(2),)), ("reshape", (np.ones(2), (2, 1))),
    ("broadcast_to", (np.ones(2), (3, 2))),
])
def test_host_arrays_are_refused(name, args):
    """No hidden uploads: a NumPy array reaching a CUDA forward is a caller's bug."""
    with pytest.raises(TypeError, match="host NumPy array"):
        FORWARDS[name](*args)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@SOME
@given(data=st.data())
def test_where(dtype, data):
    sc, sx, sy = data.draw(broadcast_shapes(3))
    cond_dtype = data.draw(st.sampled_from([BOOL, F32, I32]))  # non-bool: cast, as NumPy
    cond = values(data.draw, "ties", cond_dtype, sc)
    x, y = values(data.draw, "any", dtype, sx), values(data.draw, "any", dtype, sy)
    x = data.draw(st.sampled_from([x, 2, -0.5, True]))
    check("where", cond, x, y)


def test_where_numbers_and_nan_condition():
    cond = np.array([np.nan, 0.0, -1.0], F64)  # NaN is true, as in NumPy
    check("where", cond, 1, 0)
    check("where", cond, 1.5, np.arange(3, dtype=I32))
    check("where", True, np.arange(3, dtype=I64), -1)


@pytest.mark.parametrize("src, dst", list(itertools.product(ALL_DTYPES, ALL_DTYPES)))
def test_cast(src, dst):
    x = np.array([[-2.75, -1.0, 0.0], [0.5, 1.0, 3.25]]).astype(src)
    check("cast", x, dtype=dst)
    check("cast", x[0, 0], dtype=dst.name)  # 0-d


def test_cast_always_copies():
    x = core.to_device(np.arange(3, dtype=F32))
    out = FORWARDS["cast"](x, dtype=F32)
    assert out is not x
    np.testing.assert_array_equal(core.to_host(out), np.arange(3, dtype=F32))


def test_cast_nan_to_bool_is_true():
    check("cast", np.array([np.nan, 0.0, np.inf]), dtype=BOOL)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 3), (2, 3)])
@pytest.mark.parametrize("name", ["zeros_like", "ones_like"])
def test_fills(name, shape, dtype):
    check(name, np.full(shape, 7).astype(dtype))


def test_fills_of_numbers_take_numpy_dtypes():
    check("zeros_like", 2.5)
    check("ones_like", 3)


def test_identity_is_the_input():
    x = core.to_device(np.arange(3))
    assert FORWARDS["identity"](x) is x


# -- reductions ------------------------------------------------------------------------------
REDUCE_DTYPES = {"sum": ALL_DTYPES, "mean": FLOATS, "max": ALL_DTYPES}


@pytest.mark.parametrize("name, dtype", [(n, d) for n, ds in REDUCE_DTYPES.items()
                                         for d in ds])
@SOME
@given(data=st.data())
def test_reduction(name, dtype, data):
    shape = data.draw(small_shapes())
    x = values(data.draw, "ties" if name == "max" else "any", dtype, shape)
    axis = data.draw(reduce_axes(len(shape)))
    check(name, x, axis=axis, keepdims=data.draw(st.booleans()))


@pytest.mark.parametrize("name, dtype", [  # test_reduction covers every dtype
    (n, d) for n in ("sum", "mean", "max") for d in (F64, I32, BOOL)
    if n != "mean" or d in FLOATS])  # mean of integers raises: test_reduction_errors
@pytest.mark.parametrize("shape, axis", [
    ((), None), ((), 0), ((), ()), ((5,), ()), ((2, 3), (0, 1)), ((2, 3, 4), (0, 2)),
    ((2, 3, 4), (-1, 0)), ((2, 3, 4), 1), ((4, 1, 3), (1,)), ((2, 3), np.int64(-2)),
])
def test_reduction_axes(name, shape, axis, dtype):
    x = np.asarray(np.arange(int(np.prod(shape))).reshape(shape) % 5 - 2).astype(dtype)
    if name == "mean" and shape == () and axis == 0:
        check_error(name, x, axis=axis)  # the CPU mean indexes x.shape[0]: IndexError
        return
    for keepdims in (False, True):
        check(name, x, axis=axis, keepdims=keepdims)


def test_sum_dtypes_follow_the_cpu():
    """bools and int32 sum to int64 (PyTorch's rule: an int32 sum past 2**31 is exact)."""
    big = np.full((3, 4), 2**30, I32)
    assert check("sum", big)[()] == 12 * 2**30
    assert check("sum", big, axis=0).dtype == I64
    assert check("sum", np.full((3, 4), 2**20, I32), axis=0).dtype == I64
    assert check("sum", np.ones((2, 3), BOOL), axis=1).dtype == I64
    x = np.array([1e8, 1.0, -1e8, 1.0], F32)  # float32 sums accumulate in float64
    assert check("sum", x)[()] == 2.0


@pytest.mark.parametrize("name", ["sum", "mean"])
@pytest.mark.parametrize("shape, axis", [((0,), None), ((0, 3), 0), ((0, 3), 1),
                                         ((2, 0, 3), (1,)), ((2, 0), None), ((2, 0), 0)])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy on the empty mean
def test_reductions_over_empty_axes(name, shape, axis):
    """Sums of nothing are 0, means NaN; empty outputs are empty."""
    for dtype in (F32, I32) if name == "sum" else (F64,):
        for keepdims in (False, True):
            check(name, np.zeros(shape, dtype), axis=axis, keepdims=keepdims)


def test_reduction_errors():
    x = np.ones((2, 3), F32)
    check_error("mean", x.astype(I32))
    check_error("max", np.ones((0, 3), F32), axis=0)  # an empty axis reduced: refused
    check_error("max", np.ones((0,), F32))
    check("max", np.ones((0, 3), F32), axis=1)  # an empty axis kept: an empty result
    for name in ("sum", "mean", "max"):
        check_error(name, x, axis=2)
        check_error(name, np.array(1.0), axis=-1)
        check_error(name, x, axis=(0, -2))
        check_error(name, x, axis=1.0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_max_propagates_nan(dtype):
    x = np.arange(24, dtype=dtype).reshape(2, 3, 4)
    x[1, 2, 0] = np.nan
    for axis in (None, 0, 1, 2, (0, 2)):
        check("max", x, axis=axis)
    check("max", np.array([-np.inf, -np.inf], dtype))


@pytest.mark.parametrize("tuning", [
    # (target blocks, target threads, max blocks, min inner for the block kernel, per thread)
    (4, 16, 3, 4, 1),  # splits + second pass, grids smaller than the items (grid-stride)
    (16, 16, 5, 2, 1),  # many splits of a few elements each
    (1, 1, 1, 1, 4),  # one block, no splits
])
def test_reduction_splits_and_multi_block_grids(monkeypatch, tuning):
    """The launch planning a GPU takes (splitting outputs over blocks, partials reduced in a
    second pass, non-power-of-two blocks, grids smaller than the work), under the simulator."""
    for attr, value in zip(["_TARGET_BLOCKS", "_TARGET_THREADS", "_MAX_BLOCKS",
                            "_BLOCK_MIN_INNER", "_PER_THREAD"], tuning):
        monkeypatch.setattr(cuda_reduce, attr, value)
    rng = np.random.default_rng(1)
    x = rng.integers(-9, 9, (4, 3, 5)).astype(F64)
    x[3, 1, 2] = 20.0  # one clear maximum
    for axis in (None, 2, 0, (0, 2)):  # everything, rows, columns, both
        check("sum", x, axis=axis)
        check("max", x, axis=axis)
    check("mean", x, axis=(0, 1))
    check("sum", (x > 0), axis=(1, 2))
    x[2, 0, 4] = np.nan
    check("max", x)
    check("max", x, axis=0)


def test_one_block_walks_every_grid_stride_loop(monkeypatch):
    """Launches are capped at what fills the GPU (core.BLOCKS_PER_SM per SM), so large arrays
    reach their grid-stride loops. Capped at one block here, a GPU runs those loops on
    arrays of a few blocks' size too (the simulator always launches one block)."""
    monkeypatch.setattr(core, "BLOCKS_PER_SM", 0)
    n = 3 * core.THREADS + 5
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-2, 2, (2, n)).astype(F32), rng.uniform(-2, 2, n).astype(F32)
    check("exp", x)                   # the unary kernel
    check("mul", x, x)                # the flat binary kernel
    check("add", x, y)                # the strided one (y broadcast along rows)
    check("where", x > 0, x, y)       # ternary
    check("cast", x, dtype=F64)
    check("transpose", x)             # strided copy
    check("sum", x, axis=1)
    check("sum", x, axis=0)
    check("max", x)


@pytest.mark.skipif(core.SIMULATOR, reason="numba's CUDA simulator has no device memory")
def test_device_arrays_come_from_cudas_memory_pool():
    """On a GPU, kernelgraph's arrays come from CUDA's stream-ordered pool
    (kernels/cuda/memory.py): a freed block is handed out again, not returned to the driver."""
    from numba import cuda

    from kernelgraph.kernels.cuda import memory

    manager = cuda.current_context().memory_manager
    assert isinstance(manager, memory.StreamOrderedMemoryManager), type(manager)
    first = core.empty((1 << 20,), F32)
    address = first.device_ctypes_pointer.value
    del first
    cuda.synchronize()
    again = core.empty((1 << 20,), F32)
    assert again.device_ctypes_pointer.value == address
    np.testing.assert_array_equal(core.full((3,), 2.5, F32).copy_to_host(), [2.5] * 3)


# -- the broadcasts that undo reductions -----------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@SOME
@given(data=st.data())
def test_broadcast_reduced(dtype, data):
    shape = data.draw(small_shapes())
    axis = data.draw(reduce_axes(len(shape)))
    keepdims = data.draw(st.booleans())
    like = np.zeros(shape, dtype)
    reduced = OPS["sum"].forward(like.astype(F64), axis=axis, keepdims=keepdims).shape
    g = values(data.draw, "any", dtype, reduced)
    mean = dtype in FLOATS and data.draw(st.booleans())
    check("broadcast_reduced", g, like, axis=axis, keepdims=keepdims, mean=mean)


def test_broadcast_reduced_edge_cases():
    like = np.zeros((2, 0, 3), F32)
    check("broadcast_reduced", np.ones((2, 3), F32), like, axis=1, mean=True)
    check("broadcast_reduced", np.ones((2, 1, 3), F32), like, axis=1, keepdims=True)
    check("broadcast_reduced", np.array(4.0, F64), np.zeros((2, 3), F64), mean=True)
    check_error("broadcast_reduced", np.ones(3, F32), np.zeros((2, 3), F32), axis=1)
    check_error("broadcast_reduced", np.ones(3, I32), np.zeros((2, 3), I32), axis=0,
                mean=True)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@SOME
@given(data=st.data())
def test_sum_to_like(dtype, data):
    s_like, s_other = data.draw(broadcast_shapes(2))
    g_shape = np.broadcast_shapes(s_like, s_other)
    check("sum_to_like", values(data.draw, "any", dtype, g_shape), np.zeros(s_like, F32))


def test_sum_to_like_edge_cases():
    g = np.arange(6.0).reshape(2, 3)
    check("sum_to_like", g, np.zeros((2, 3)))
    check("sum_to_like", g, 1.0)  # a number's shape is ()
    check("sum_to_like", g, np.zeros((3, 2)))  # same size, no broadcast: NumPy reshapes
    check_error("sum_to_like", g, np.zeros((1, 2, 3)))
    check_error("sum_to_like", g, np.zeros((4,)))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@SOME
@given(case=broadcast_to_cases(), data=st.data())
def test_broadcast_like(dtype, case, data):
    source, target = case
    check("broadcast_like", values(data.draw, "any", dtype, source), np.zeros(target, BOOL))


def test_broadcast_like_edge_cases():
    check("broadcast_like", 2.5, np.zeros((2, 3)))
    check("broadcast_like", np.ones((1, 1), I32), np.zeros((2, 0, 1)))
    check_error("broadcast_like", np.ones((2, 3)), np.zeros((3, 3)))


# -- shape -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@SOME
@given(data=st.data())
def test_reshape(dtype, data):
    shape = data.draw(small_shapes())
    x = values(data.draw, "any", dtype, shape)
    target = data.draw(reshape_targets(shape))
    check("reshape", x, shape=target)
    check("reshape_like", x, np.zeros(OPS["reshape"].forward(x, target).shape, BOOL))


def test_reshape_edge_cases():
    x = np.arange(6, dtype=I32)
    check_error("reshape", x, shape=6)  # as torch.reshape(x, 6): a tuple or list only
    check("reshape", x[:1], shape=())
    check("reshape", np.zeros((2, 0), F32), shape=(0, 5, 3))
    check("reshape", np.zeros((2, 0), F32), shape=[3, 0])
    check_error("reshape", x, shape=(4, -1))
    check_error("reshape", x, shape=(-1, -1))
    check_error("reshape", x, shape=(4,))
    check_error("reshape", x, shape="ab")
    check_error("reshape", np.zeros((2, 0), F32), shape=(0, -1))
    check_error("reshape_like", x, np.zeros((4,)))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@SOME
@given(data=st.data())
def test_transpose(dtype, data):
    shape = data.draw(small_shapes())
    x = values(data.draw, "any", dtype, shape)
    perm = data.draw(st.none() | permutations(len(shape)))
    check("transpose", x, perm=perm)
    if len(shape) >= 2:
        check("matrix_transpose", x)


def test_transpose_edge_cases():
    x = np.arange(24, dtype=F32).reshape(2, 3, 4)
    check("transpose", x)
    check("transpose", x, perm=(0, 2, 1))
    check("transpose", np.zeros((2, 0, 3), I64), perm=(2, 0, 1))
    check("transpose", np.array(1.5, F64))
    check("matrix_transpose", np.zeros((0, 2, 3), BOOL))
    with pytest.raises(ShapeError):
        FORWARDS["transpose"](core.to_device(x), perm=(0, 1))
    check_error("transpose", x, perm=(0, 1, 1))
    check_error("matrix_transpose", np.arange(3.0))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@SOME
@given(case=broadcast_to_cases(), data=st.data())
def test_broadcast_to(dtype, case, data):
    source, target = case
    check("broadcast_to", values(data.draw, "any", dtype, source), shape=target)


def test_broadcast_to_edge_cases():
    check("broadcast_to", np.ones((1, 1), F32), shape=(2, 0, 1))
    check("broadcast_to", np.array(7, I64), shape=4)
    check("broadcast_to", np.arange(3, dtype=I32), shape=[2, 3])
    check_error("broadcast_to", np.ones((2, 3)), shape=(3, 3))
    check_error("broadcast_to", np.ones((2, 3)), shape=(3,))
    check_error("broadcast_to", np.ones(3), shape=(-1, 3))

