"""The CUDA device computes what a GPU computes, under numba's simulator too.

The simulator runs kernels as Python, where ``math.exp(1000.0)`` raises OverflowError and
storing NaN into an integer array raises ValueError; a GPU (and the CPU kernels) give inf,
and a GPU converts NaN to 0. Every transcendental scalar body runs here on values that
overflow, underflow or leave its domain, op by op (eager) and inside generated fused kernels
(static), and must give the CPU's values: NaN where the CPU has NaN (its sign and payload
are the device's own), the same infinities and zeros, other values within a few roundings
(a GPU's ``expf`` is not the CPU's). With a GPU these run on it, unchanged.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.kernels.cuda import simulator

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy, on the CPU side
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
TOL = {F32: {"rtol": 1e-5, "atol": 0}, F64: {"rtol": 1e-12, "atol": 0}}


def _specials(dtype) -> np.ndarray:
    """Values at every edge of exp, log, sqrt, tanh, sigmoid and their gradients."""
    info = np.finfo(dtype)
    return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -2.5, 1.5, 88.8, 89.0, 709.0, 710.0,
                     1e3, -1e3, -750.0, 1e30, -1e30, info.smallest_subnormal, info.tiny,
                     info.max, -info.max], dtype)


def assert_like_cpu(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got, want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: NaNs")
    finite = np.isfinite(want) & (want != 0)
    exact = ~np.isnan(want) & ~finite  # infinities and zeros, with their signs
    np.testing.assert_array_equal(got[exact], want[exact], err_msg=f"{what}: inf or 0")
    np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]),
                                  err_msg=f"{what}: the sign of a zero or an infinity")
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got[finite], want[finite], **TOL[want.dtype], err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _eager(fn, args, device):
    return fn(*[kg.tensor(a, device=device) for a in args]).cpu().numpy()


def _static(fn, args, device):
    """``fn(*args)`` in static mode; its elementwise ops must have fused into one kernel."""
    graph = kg.Graph()
    with graph.as_default(), kg.device(device):
        phs = [kg.placeholder(a.dtype, shape=a.shape) for a in args]
        y = fn(*phs)
    with kg.Session(graph) as sess:
        feed = dict(zip(phs, args))
        assert len(sess.explain(y, feed).kernels) == 1, "not fused"
        return sess.run(y, feed)


UNARY = {name: getattr(kg, name) for name in ("exp", "log", "sqrt", "tanh", "sigmoid")}
# Each body inside a fused group (a multiply before it and after it), as the generated CUDA
# kernels call it.
FUSED = {name: (lambda x, f=f: f(x * 2.0) * 0.5) for name, f in UNARY.items()}
BINARY = {
    "pow": kg.pow, "div": kg.div, "mul": kg.mul,
    "tanh_grad": kg.ops.tanh_grad, "sigmoid_grad": kg.ops.sigmoid_grad,
}


@pytest.mark.parametrize("dtype", [F32, F64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", list(UNARY))
def test_transcendental_bodies_on_the_cuda_device_as_on_the_cpu(name, dtype):
    x = _specials(dtype)
    want = _eager(UNARY[name], [x], "cpu")
    assert_like_cpu(_eager(UNARY[name], [x], "cuda"), want, f"{name} eager")
    fused_want = _static(FUSED[name], [x], "cpu")
    assert_like_cpu(_static(FUSED[name], [x], "cuda"), fused_want, f"{name} fused")


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_bodies_at_overflow_on_the_cuda_device_as_on_the_cpu(name):
    """Powers past the range (of both signs), 0 to a negative power, a negative base to a
    fraction, division by zeros, products and gradients that overflow."""
    x = np.array([10.0, -10.0, 0.0, -8.0, 2.0, 1e200, -1e200, np.inf, np.nan, 1.0], F64)
    y = np.array([400.0, 401.0, -1.0, 1 / 3, -1100.0, 1e200, 0.0, 0.0, 2.0, np.inf], F64)
    for dtype in (F32, F64):
        args = [x.astype(dtype), y.astype(dtype)]
        want = _eager(BINARY[name], args, "cpu")
        assert_like_cpu(_eager(BINARY[name], args, "cuda"), want, f"{name} {dtype}")


def test_exp_of_integer_extremes():
    """int64's extremes become floats first (exp computes in float32, as PyTorch's)."""
    x = np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min, 0, 100], np.int64)
    assert_like_cpu(_eager(kg.exp, [x], "cuda"), _eager(kg.exp, [x], "cpu"), "exp int64")


def test_examples_from_the_issue():
    assert kg.exp(kg.tensor([1000.0], device="cuda")).cpu().numpy()[0] == math.inf
    assert kg.exp(kg.tensor(np.array([710.0]), device="cuda")).cpu().numpy()[0] == math.inf


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_float_to_integer_casts_convert_as_a_gpu_does(dtype):
    """Where C leaves the conversion undefined (NaN, infinities, out of range), a GPU's
    ``cvt.rzi`` clamps to the type's range and turns NaN into 0; in range it truncates
    toward zero. The simulator converts so too, instead of raising ValueError."""
    info = np.iinfo(dtype)
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 2.9, -2.9, -0.0], np.float32)
    got = kg.cast(kg.tensor(x, device="cuda"), dtype).cpu().numpy()
    np.testing.assert_array_equal(got, [0, info.max, info.min, info.max, info.min, 2, -2, 0])


def test_gpu_math_returns_ieee_values_where_python_raises():
    m = simulator.GPU_MATH
    assert m.exp(1000.0) == math.inf and m.exp(-1000.0) == 0.0 and m.exp(1.0) == math.e
    assert m.log(0.0) == -math.inf and math.isnan(m.log(-1.0)) and m.log(math.e) == 1.0
    assert math.isnan(m.sqrt(-1.0)) and m.sqrt(4.0) == 2.0 and m.tanh is math.tanh
    assert simulator.float_to_int(float("nan"), np.iinfo(np.int8)) == 0
    assert simulator.float_to_int(1e9, np.iinfo(np.int8)) == 127
