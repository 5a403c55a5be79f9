"""CUDA forwards of matmul, the softmax family, conv2d and pooling
(``kernelgraph/kernels/cuda/{linalg,nn,conv}.py``) against their CPU forwards.

Each case runs the CUDA forward on device copies of NumPy inputs and the CPU forward
(``OPS[name].forward``) on the inputs themselves: same shape, same dtype, values equal
(integers exactly; floats to a few roundings, since sums run in another order; pooling and
its gradients bit for bit, since their kernels add in the CPU's order), and bad inputs raise
the same error with the same message. Without an NVIDIA GPU the kernels run on numba's
simulator (the root conftest), which pays per thread: shapes stay tiny, examples few.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelgraph.errors import ShapeError
from kernelgraph.kernels.cuda import core
from kernelgraph.kernels.cuda import linalg as CL
from kernelgraph.ops import conv, cuda_kernels, linalg, nn
from kernelgraph.ops.registry import OPS
from tests.test_ops import BOOL, F32, F64, I32, I64, arrays, assert_same, run_cuda, to_device
from tests.test_ops_conv import conv_cases, pool_cases

FEW = settings(max_examples=5)
CUDA = cuda_kernels(linalg, nn, conv)
EPS = {F32: 2.0 ** -23, F64: 2.0 ** -52}


# -- helpers ---------------------------------------------------------------------------------
def check(name, *args, terms=1, exact=False, **attrs) -> np.ndarray:
    """CUDA forward == CPU forward: same dtype and shape; integer values (and ``exact``
    results) bit for bit, floats within a few roundings of sums of ``terms`` products."""
    got = run_cuda(name, *args, **attrs)
    want = OPS[name].forward(*args, **attrs)
    what = f"{name}{tuple(np.shape(a) for a in args)} {attrs}"
    if exact or want.dtype not in EPS:
        assert_same(got, want, what)
        return got
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    eps = EPS[want.dtype]
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0, where=np.isfinite(want))))
    np.testing.assert_allclose(got, want, rtol=16 * eps, atol=8 * eps * terms * scale,
                               equal_nan=True, err_msg=what)
    return got


def check_error(name, *args, **attrs):
    """Both forwards raise the same exception type with the same message."""
    with pytest.raises(Exception) as cpu:
        OPS[name].forward(*args, **attrs)
    dev_args = [to_device(a) for a in args]
    with pytest.raises(cpu.type) as dev:
        CUDA[name](*dev_args, **attrs)
    assert str(dev.value) == str(cpu.value)


def rand(shape, dtype, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == BOOL:
        return rng.random(shape) < 0.5
    if np.dtype(dtype) in (I32, I64):
        return rng.integers(-6, 7, shape).astype(dtype)
    return (rng.uniform(-scale, scale, shape)).astype(dtype)


# -- matmul ----------------------------------------------------------------------------------
@pytest.mark.parametrize("sa, sb", [
    ((1, 1), (1, 1)),
    ((5, 7), (7, 3)),
    ((17, 19), (19, 23)),  # several tiles each way, partial edge tiles, several K steps
    ((2, 1, 3, 5), (4, 5, 2)),  # batch dims broadcast both ways
    ((3, 5, 4), (4, 6)),  # a 2-D b: a's batch folds into its rows
    ((4, 6), (2, 6, 3)),  # a 2-D a broadcast over b's batch
    ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((0, 2, 3), (3, 4)),  # empty: no rows, K = 0, batch
])
def test_matmul_shapes(sa, sb):
    check("matmul", rand(sa, F32, 1), rand(sb, F32, 2), terms=sa[-1])


def test_matmul_32x32():
    check("matmul", rand((32, 32), F32, 3), rand((32, 32), F32, 4), terms=32)


@pytest.mark.parametrize("dtype", [F32, F64, I32, I64])
def test_matmul_dtypes(dtype):
    """Each dtype as the CPU forward: ints stay ints (exact)."""
    check("matmul", rand((2, 3, 5), dtype, 5), rand((5, 4), dtype, 6), terms=5)


@pytest.mark.parametrize("da, db", [(BOOL, BOOL), (BOOL, I32), (I32, F32), (F32, F64)])
def test_matmul_refuses_bools_and_mixed_dtypes(da, db):
    """As the CPU forward (and PyTorch): no matmul of bools or of two dtypes."""
    check_error("matmul", rand((2, 3, 5), da, 5), rand((5, 4), db, 6))


@FEW
@given(m=st.integers(1, 20), k=st.integers(1, 20), n=st.integers(1, 20),
       batch=st.sampled_from([((), ()), ((2,), ()), ((), (3,)), ((2, 1), (3,))]),
       dtype=st.sampled_from([F32, F64, I64]), data=st.data())
def test_matmul_random(m, k, n, batch, dtype, data):
    a = arrays(data.draw, "any", dtype, (*batch[0], m, k))
    b = arrays(data.draw, "any", dtype, (*batch[1], k, n))
    check("matmul", a, b, terms=k)


@pytest.mark.parametrize("trans_a, trans_b", [(True, False), (False, True), (True, True)])
def test_gemm_transposed_operands(trans_a, trans_b):
    a, b = rand((2, 9, 6), F64, 7), rand((6, 11), F64, 8)  # the logical operands
    stored_a = np.ascontiguousarray(np.swapaxes(a, -1, -2)) if trans_a else a
    stored_b = np.ascontiguousarray(b.T) if trans_b else b
    got = CL.gemm(to_device(stored_a), to_device(stored_b), trans_a=trans_a, trans_b=trans_b)
    assert core.is_device_array(got) and got.is_c_contiguous()
    np.testing.assert_allclose(core.to_host(got), a @ b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm_crosses_every_tile_edge(trans_a, trans_b, dtype):
    """Sizes just past whole tiles of the geometry that runs (``CL.tiles_for``: 128x128 by
    32 or 16 deep on a GPU, 16x16x8 on the simulator): partial tiles in M, N and K, several
    K steps (the kernel loads each step while multiplying the last), each operand layout's
    load order."""
    bm, bn, bk = CL.tiles_for(dtype)[:3]
    m, n, k = bm + 3, 2 * bn - 5, 2 * bk + 3
    a, b = rand((m, k), dtype, 9, scale=1.0), rand((k, n), dtype, 10, scale=1.0)
    stored_a = np.ascontiguousarray(a.T) if trans_a else a
    stored_b = np.ascontiguousarray(b.T) if trans_b else b
    got = core.to_host(CL.gemm(to_device(stored_a), to_device(stored_b), trans_a=trans_a,
                               trans_b=trans_b))
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=16 * EPS[dtype], atol=4 * k * EPS[dtype])


def test_gemm_refuses_tiles_the_threads_cannot_split():
    with pytest.raises(ValueError, match="split the tiles evenly"):
        CL._gemm_kernel(np.dtype(F32), False, True, (16, 16, 8, 3, 4))


@pytest.mark.parametrize("sa, sb", [((3,), (3, 2)), ((2, 3), (4, 2)), ((2, 2, 3), (3, 3, 1))])
def test_matmul_errors(sa, sb):
    check_error("matmul", rand(sa, F32), rand(sb, F32))


# -- softmax / log_softmax -------------------------------------------------------------------
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, axis", [
    ((5,), 0), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1), ((2, 3, 4), -3), ((2, 3, 4), None),
    ((2, 40), 1),  # rows longer than a thread group
    ((0, 3), -1),
])
def test_softmax_axes(name, shape, axis):
    for dtype in (F32, F64):
        check(name, rand(shape, dtype, 9, scale=50.0), axis=axis, terms=shape[axis or 0])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [I32, I64, BOOL])
def test_softmax_non_float_inputs_compute_in_float32(name, dtype):
    check(name, rand((3, 4), dtype, 10), terms=4)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_extremes(name):
    """Huge logits stay finite (the max is subtracted); -inf entries get probability 0."""
    x = np.array([[1000.0, 999.0, -1000.0], [-np.inf, 0.0, 1.0], [3.0, 3.0, 3.0]], F32)
    check(name, x, terms=3)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("x, attrs", [(np.float32(1.0), {}), (np.ones((2, 3), F32), {"axis": 2}),
                                      (np.ones((2, 3), F32), {"axis": 1.0})])
def test_softmax_errors(name, x, attrs):
    check_error(name, np.asarray(x), **attrs)


# -- softmax cross-entropy -------------------------------------------------------------------
@pytest.mark.parametrize("rows, classes", [(5, 7), (1, 1), (3, 12), (0, 4)])
@pytest.mark.parametrize("dl, dy", [(F32, I64), (F64, I32), (I32, I64)])
def test_softmax_cross_entropy(rows, classes, dl, dy):
    logits = rand((rows, classes), dl, 11, scale=10.0)
    labels = np.random.default_rng(12).integers(0, classes, rows).astype(dy)
    check("softmax_cross_entropy", logits, labels, terms=classes)
    g = rand((rows,), F64 if dl == F32 else dl, 13)  # a float64 g rounds to float32 logits
    check("softmax_cross_entropy_grad", logits, labels, g, terms=classes)


@pytest.mark.parametrize("g", [2.5, np.float64(-1.0)])
def test_softmax_cross_entropy_grad_scalar_g(g):
    logits, labels = rand((4, 3), F32, 14), np.array([0, 2, 1, 2])
    check("softmax_cross_entropy_grad", logits, labels, g, terms=3)


def test_softmax_cross_entropy_grad_broadcasts_like_numpy():
    # grad (1, C) * g.reshape(-1, 1) with 3 g's: three rows, as np.multiply gives.
    logits, labels = rand((1, 4), F32, 15), np.array([3])
    check("softmax_cross_entropy_grad", logits, labels, rand((3,), F32, 16), terms=4)
    check_error("softmax_cross_entropy_grad", rand((2, 4), F32), np.array([0, 1]),
                rand((3,), F32))


@pytest.mark.parametrize("logits, labels", [
    (np.zeros((3, 4), F32), np.array([0, 4, -1])),  # out of range: the first bad row
    (np.zeros((3, 4), F32), np.array([0, 1, -1], I32)),
    (np.zeros((3, 4), F32), np.array([0.0, 1.0, 2.0])),  # float labels
    (np.zeros((3, 4), F32), np.array([True, False, True])),
    (np.zeros((4,), F32), np.array([0, 1, 2, 3])),  # logits not 2-D
    (np.zeros((3, 4), F32), np.array([0, 1])),  # one label per row
    (np.zeros((3, 0), F32), np.array([0, 0, 0])),  # no classes
])
def test_softmax_cross_entropy_errors(logits, labels):
    check_error("softmax_cross_entropy", logits, labels)
    check_error("softmax_cross_entropy_grad", logits, labels, np.ones(logits.shape[:1], F32))


# -- conv2d and its gradients ----------------------------------------------------------------
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype", [F32, F64])
@FEW
@given(case=conv_cases(), data=st.data())
def test_conv2d_and_gradients(dtype, data_format, case, data):
    xs, ws, stride, padding, dilation = case
    attrs = {"stride": stride, "padding": padding, "dilation": dilation,
             "data_format": data_format}
    if data_format == "NHWC":
        xs = (xs[0], xs[2], xs[3], xs[1])
    x, w = arrays(data.draw, "any", dtype, xs), arrays(data.draw, "any", dtype, ws)
    out = check("conv2d", x, w, terms=int(np.prod(ws[1:])), **attrs)
    g = arrays(data.draw, "any", dtype, out.shape)
    check("conv2d_backward_input", g, w, x, terms=int(np.prod(ws[:1] + ws[2:])), **attrs)
    check("conv2d_backward_filter", x, g, w, terms=int(xs[0] * out.size // out.shape[0]
                                                        // ws[0]), **attrs)


def test_conv2d_dtypes_as_the_cpu():
    x, w = rand((2, 2, 4, 5), I32, 17), rand((3, 2, 2, 2), F64, 18)
    check_error("conv2d", x, w, padding=1)  # two dtypes: refused, as in PyTorch
    check("conv2d", x, rand((3, 2, 2, 2), I32, 19), terms=8)  # ints -> float32
    check("conv2d", x.astype(F64), w, terms=8, padding=1)
    g = rand((2, 3, 3, 4), F32, 20)
    check("conv2d_backward_input", g, w, x, terms=12)  # w cast to g's dtype
    check("conv2d_backward_filter", x, g, w, terms=24)


def test_conv2d_empty_batch_and_channels():
    x, w = np.zeros((0, 2, 4, 4), F32), rand((3, 2, 3, 3), F32)
    check("conv2d", x, w)
    check("conv2d_backward_input", np.zeros((0, 3, 2, 2), F32), w, x)
    check("conv2d_backward_filter", x, np.zeros((0, 3, 2, 2), F32), w)


@pytest.mark.parametrize("op, args, attrs", [
    ("conv2d", [(2, 3, 5, 5), (2, 2, 3, 3)], {}),  # channels differ
    ("conv2d", [(2, 3, 2, 2), (2, 3, 3, 3)], {}),  # kernel larger than the input
    ("conv2d", [(3, 5, 5), (2, 3, 3, 3)], {}),  # not rank 4
    ("conv2d", [(1, 1, 5, 5), (1, 1, 3, 3)], {"stride": 0}),
    ("conv2d", [(1, 1, 5, 5), (1, 1, 3, 3)], {"padding": (1, 2, 3)}),
    ("conv2d_backward_input", [(1, 1, 2, 2), (1, 1, 3, 3), (1, 1, 5, 5)], {}),  # g's shape
    ("conv2d_backward_filter", [(1, 1, 5, 5), (1, 1, 2, 2), (1, 1, 3, 3)], {}),
])
def test_conv2d_errors(op, args, attrs):
    check_error(op, *[np.zeros(s, F32) for s in args], **attrs)


# -- pooling ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F32, F64])
@FEW
@given(case=pool_cases(), nan=st.booleans(), data=st.data())
def test_pooling_and_gradients(dtype, case, nan, data):
    """Bit for bit: ties (a grid of values) and NaN go to the element the CPU picks."""
    xs, kernel, stride, padding = case
    attrs = {"kernel_size": kernel, "stride": stride, "padding": padding}
    x = arrays(data.draw, "ties", dtype, xs)
    if nan:
        x.flat[data.draw(st.integers(0, x.size - 1))] = np.nan
    out = check("max_pool2d", x, exact=True, **attrs)
    g = arrays(data.draw, "any", dtype, out.shape)
    check("max_pool2d_backward", g, x, exact=True, **attrs)
    check("avg_pool2d", x, exact=True, **attrs)
    check("avg_pool2d_backward", g, x, exact=True, **attrs)


def test_max_pool2d_gradient_goes_to_the_first_maximum():
    x = np.ones((1, 1, 3, 3), F32)
    dx = check("max_pool2d_backward", np.ones((1, 1, 2, 2), F32), x, exact=True,
               kernel_size=2, stride=1)
    assert dx[0, 0].tolist() == [[1, 1, 0], [1, 1, 0], [0, 0, 0]]


def test_pooling_non_float_inputs():
    x = rand((2, 2, 4, 4), I64, 21)
    check("max_pool2d", x, exact=True, kernel_size=2)
    check("avg_pool2d", x, exact=True, kernel_size=3, stride=1, padding=1)
    check("global_avg_pool2d", x, terms=16)


@pytest.mark.parametrize("op, attrs", [
    ("max_pool2d", {"kernel_size": 2, "padding": 2}),  # padding over half the window
    ("avg_pool2d", {}),  # no kernel_size
    ("max_pool2d", {"kernel_size": 7}),  # window larger than the input
    ("avg_pool2d", {"kernel_size": (2, 2, 2)}),
])
def test_pooling_errors(op, attrs):
    check_error(op, np.zeros((1, 1, 4, 4), F32), **attrs)


def test_pooling_backward_checks_g():
    check_error("max_pool2d_backward", np.zeros((1, 1, 3, 3), F32), np.zeros((1, 1, 4, 4), F32),
                kernel_size=2)
    check_error("avg_pool2d_backward", np.zeros((1, 1, 3, 3), F32), np.zeros((1, 1, 4, 4), F32),
                kernel_size=2)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 1, 1, 1), (2, 2, 6, 6), (0, 2, 3, 3),
                                   (2, 2, 0, 3)])
def test_global_avg_pool2d(shape):
    for dtype in (F32, F64):
        check("global_avg_pool2d", rand(shape, dtype, 22), terms=int(np.prod(shape[2:])))


def test_global_avg_pool2d_needs_rank_4():
    with pytest.raises(ShapeError):
        CUDA["global_avg_pool2d"](to_device(np.zeros((2, 3, 4), F32)))
    check_error("global_avg_pool2d", np.zeros((2, 3, 4), F32))
