"""Property tests for every op, in every mode.

For each op and generated inputs (shapes of rank 0-3 with dims 1-4, broadcasting for
binary ops) :func:`check_op` checks that
- the eager result matches the NumPy reference (``kernels/reference.py``) in value, shape
  and dtype, and the raw-NumPy front-end gives the very same bits;
- the static graph infers a shape/dtype that fits what ``Session.run`` returns (with fully
  known, partly known and unknown placeholder shapes), and returns the eager bits exactly;
- the same on CUDA (numba's simulator without a GPU) for every third example: results and
  gradients stay on the device and agree with the CPU ones (:func:`check_on_cuda`);
- gradients of ``sum(op(x) * w)`` (``w`` a fixed random weight, so the upstream gradient
  is not all ones) have each input's shape and dtype, agree bit-for-bit between
  ``backward()`` and ``kg.gradients``, and in float64 match central finite differences of
  the NumPy reference.

Inputs stay in safe domains: positive arguments for log/sqrt/pow, values on grids that
keep away from the kinks of relu/abs/maximum/minimum and from ties for max.
"""

from __future__ import annotations

import itertools
import math
import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kernelgraph as kg
from kernelgraph.ops.reference import REFERENCE, sum_to_shape

F32, F64, I32, I64 = (np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))
BOOL = np.dtype(np.bool_)
FLOATS = (F32, F64)
INTS = (I32, I64)
MAX_SIDE = 4

# Forward tolerances against the float64 reference (float32 kernels round each step).
FWD_TOL = {F32: {"rtol": 2e-5, "atol": 1e-5}, F64: {"rtol": 1e-10, "atol": 1e-12}}
FD_TOL = {"rtol": 1e-5, "atol": 1e-6}
PLACEHOLDER_SHAPES = st.sampled_from(["exact", "dims", "rank"])


# -- helpers ---------------------------------------------------------------------------------
def finite_difference_grad(f, args, i, eps=1e-6):
    """Central finite differences of the scalar ``f(*args)`` with respect to ``args[i]``,
    computed in float64 one element at a time."""
    args = [np.array(a, copy=True) for a in args]
    x = args[i] = args[i].astype(np.float64)
    grad = np.zeros(x.shape, np.float64)
    for idx in np.ndindex(x.shape):
        orig = x[idx]
        x[idx] = orig + eps
        hi = f(*args)
        x[idx] = orig - eps
        lo = f(*args)
        x[idx] = orig
        grad[idx] = (hi - lo) / (2 * eps)
    return grad


def numeric_grad(f, x, eps=1e-6):
    """Central finite differences of the scalar ``f(x)`` at ``x`` (float64)."""
    return finite_difference_grad(f, [x], 0, eps)


def weights(shape, dtype):
    """A fixed, shape-seeded upstream weight with values of both signs away from 0."""
    rng = np.random.default_rng(1000 + 10 * len(shape) + sum(shape))
    w = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return np.asarray(w, dtype=dtype)


def assert_same(a, b, what):
    """Bit-for-bit equality of two arrays (dtype, shape and every byte)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != {b.dtype}"
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes(), (
        f"{what}: values differ\n{a!r}\n{b!r}")


def assert_close(got, expected, dtype, what):
    if dtype in FLOATS:
        np.testing.assert_allclose(got, expected, **FWD_TOL[dtype], err_msg=what)
    else:
        assert np.array_equal(got, expected), f"{what}: {got!r} != {expected!r}"


def placeholder_shape(shape, mode):
    return {"exact": tuple(shape), "dims": (None,) * len(shape), "rank": None}[mode]


def shape_fits(declared, actual):
    if declared is None:
        return True
    return len(declared) == len(actual) and all(
        d is None or d == a for d, a in zip(declared, actual))


def check_op(fn, ref, args, *, diff=(), out_dtype=None, ph="exact", fd=True):
    """Run ``fn`` eagerly, on raw arrays and in a static graph, check it against ``ref`` and
    (for the float inputs listed in ``diff``) check its gradients, against finite
    differences too in float64 unless ``fd`` is false (at kinks, where the op picks a
    subgradient); returns ``(eager output array, [eager gradient arrays])``."""
    args = [np.asarray(a) for a in args]
    out_dtype = np.dtype(out_dtype if out_dtype is not None else args[0].dtype)
    diff = tuple(i for i in diff if args[i].dtype in FLOATS)
    if out_dtype not in FLOATS:
        diff = ()
    ref_args = [a.astype(F64) if a.dtype == F32 else a for a in args]
    expected = np.asarray(ref(*ref_args))

    # eager
    tensors = [kg.tensor(a, requires_grad=i in diff) for i, a in enumerate(args)]
    for t, a in zip(tensors, args):
        assert t.dtype == a.dtype
    out = fn(*tensors)
    assert isinstance(out, kg.Tensor), type(out)
    assert type(out._array) is np.ndarray, type(out._array)
    assert out.dtype == out_dtype, f"eager dtype {out.dtype}, expected {out_dtype}"
    assert out.shape == expected.shape, f"eager shape {out.shape}, expected {expected.shape}"
    assert_close(out._array, expected, out_dtype, "eager forward vs reference")

    # raw NumPy arrays: the same kernels, so the same bits
    raw = fn(*[a.copy() for a in args])
    assert isinstance(raw, np.ndarray), type(raw)
    assert_same(raw, out._array, "raw vs eager forward")

    # static
    w = weights(expected.shape, out_dtype)
    graph = kg.Graph()
    with graph.as_default():
        phs = [kg.placeholder(a.dtype, shape=placeholder_shape(a.shape, ph)) for a in args]
        node = fn(*phs)
        assert isinstance(node, kg.Node), type(node)
        assert node.dtype == out_dtype, f"static dtype {node.dtype}, expected {out_dtype}"
        assert shape_fits(node.shape, expected.shape), (node.shape, expected.shape)
        fetches = [node]
        if diff:
            loss = kg.sum(node * kg.constant(w))
            grads = kg.gradients(loss, [phs[i] for i in diff])
            assert all(g is not None for g in grads)
            for i, g in zip(diff, grads):
                assert g.dtype == args[i].dtype, (g.dtype, args[i].dtype)
            fetches += grads
    with kg.Session(graph) as sess:
        values = sess.run(fetches, feed_dict=dict(zip(phs, args)))
    assert_same(values[0], out._array, "static vs eager forward")
    if not diff:
        _maybe_on_cuda(fn, args, diff, out._array, [], w, ph)
        return out._array, []

    # gradients
    loss = (out * kg.tensor(w)).sum()
    loss.backward()
    eager_grads = []
    for k, i in enumerate(diff):
        assert tensors[i].grad is not None, f"no eager gradient for input {i}"
        eg, sg = tensors[i].grad._array, values[1 + k]
        assert type(eg) is np.ndarray, f"grad {i} is a {type(eg).__name__}, not an ndarray"
        assert eg.shape == args[i].shape, f"grad {i} shape {eg.shape} != {args[i].shape}"
        assert eg.dtype == args[i].dtype, f"grad {i} dtype {eg.dtype} != {args[i].dtype}"
        assert_same(sg, eg, f"static vs eager gradient of input {i}")
        if fd and out_dtype == F64 and args[i].dtype == F64:
            numeric = finite_difference_grad(
                lambda *a: float(np.sum(np.asarray(ref(*a), F64) * w)), ref_args, i)
            np.testing.assert_allclose(eg, numeric, **FD_TOL,
                                       err_msg=f"gradient of input {i} vs finite differences")
        eager_grads.append(eg)
    _maybe_on_cuda(fn, args, diff, out._array, eager_grads, w, ph)
    return out._array, eager_grads


# -- the same checks on the GPU --------------------------------------------------------------
CUDA = kg.cuda.is_available()  # numba's simulator when there is no GPU (see ../conftest.py)
CUDA_EVERY = int(os.environ.get("KG_CUDA_EVERY", "3"))  # the simulator is slow
GRAD_TOL = {F32: {"rtol": 1e-4, "atol": 1e-5}, F64: {"rtol": 1e-9, "atol": 1e-11}}
_check_count = itertools.count()


def to_device(v):
    """A host array copied to the CUDA device (numbers stay numbers)."""
    from kernelgraph.kernels.cuda import core

    return core.to_device(v) if isinstance(v, np.ndarray) else v


def run_cuda(name, *args, **attrs) -> np.ndarray:
    """The CUDA forward of op ``name`` on device copies of ``args``, checked to return a new
    C-contiguous device array, copied back to the host."""
    from kernelgraph.ops import CUDA_KERNELS as FORWARDS

    out = FORWARDS[name](*[to_device(a) for a in args], **attrs)
    assert kg.devices.is_cuda_array(out), f"{name}: returned {type(out).__name__}, not a " \
        "device array"
    assert out.is_c_contiguous(), f"{name}: output is not C-contiguous"
    return out.copy_to_host()


def _maybe_on_cuda(fn, args, diff, cpu_out, cpu_grads, w, ph):
    if CUDA and next(_check_count) % CUDA_EVERY == 0:
        check_on_cuda(fn, args, diff, cpu_out, cpu_grads, w, ph)


def check_on_cuda(fn, args, diff, cpu_out, cpu_grads, w, ph="exact"):
    """The op on CUDA, eager and static: results stay on the device, agree with the CPU
    results and each other up to float rounding (GPU kernels sum in another order, and
    atomic adds in no fixed order), and gradients have the inputs' shapes and dtypes."""
    dev = kg.device("cuda")
    tensors = [kg.tensor(a, requires_grad=i in diff, device=dev) for i, a in enumerate(args)]
    out = fn(*tensors)
    assert out.device == dev and kg.devices.is_cuda_array(out._array), out.device
    assert out.dtype == cpu_out.dtype and out.shape == cpu_out.shape, (out.dtype, out.shape)
    got = out.detach().cpu().numpy()
    assert_close(got, cpu_out, cpu_out.dtype, "cuda vs cpu forward")

    raw = fn(*[t.detach()._array for t in tensors])  # gradient rules call ops on device arrays
    assert kg.devices.is_cuda_array(raw), type(raw)
    assert_same(raw.copy_to_host(), got, "raw device arrays vs eager cuda")

    graph = kg.Graph()
    with graph.as_default(), dev:
        phs = [kg.placeholder(a.dtype, shape=placeholder_shape(a.shape, ph)) for a in args]
        node = fn(*phs)
        assert node.device == dev, node.device
        fetches = [node]
        if diff:
            loss = kg.sum(node * kg.constant(w))
            fetches += kg.gradients(loss, [phs[i] for i in diff])
    with kg.Session(graph) as sess:
        values = sess.run(fetches, feed_dict=dict(zip(phs, args)))
    assert_close(values[0], got, got.dtype, "static vs eager on cuda")

    if not diff:
        return
    (out * kg.tensor(w, device=dev)).sum().backward()
    for k, i in enumerate(diff):
        g = tensors[i].grad
        assert g is not None and g.device == dev, f"gradient {i} not on cuda"
        eg = g.cpu().numpy()
        assert eg.shape == args[i].shape and eg.dtype == args[i].dtype, (eg.shape, eg.dtype)
        np.testing.assert_allclose(values[1 + k], eg, **GRAD_TOL[eg.dtype],
                                   err_msg=f"static vs eager cuda gradient of input {i}")
        np.testing.assert_allclose(eg, cpu_grads[k], **GRAD_TOL[eg.dtype],
                                   err_msg=f"cuda vs cpu gradient of input {i}")


# -- strategies ------------------------------------------------------------------------------
def _grid(lo, hi, step, offset):
    return st.integers(lo, hi).map(lambda i: i * step + offset)


def elements(kind, dtype):
    """Element strategies per input domain (all values exact in float32)."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return st.booleans()
    if kind == "distinct":  # with unique=True: no ties, and gaps far above the FD step
        return st.integers(-100, 100) if dtype in INTS else _grid(-100, 100, 0.25, 0.0)
    if dtype in INTS:
        return st.integers(-6, 6)
    width = 32 if dtype == F32 else 64

    def floats(lo, hi):
        return st.floats(lo, hi, width=width, allow_subnormal=False)

    return {
        "any": floats(-3.0, 3.0),
        "wide": floats(-500.0, 500.0),
        "positive": floats(0.25, 4.0),
        "base": floats(0.5, 2.0),
        "exponent": floats(-2.0, 2.0),
        "nonzero": floats(0.5, 3.0) | floats(-3.0, -0.5),
        "kinkless": _grid(-6, 5, 0.5, 0.25),  # never 0: relu / abs are smooth here
        "grid_a": _grid(-6, 6, 0.5, 0.125),  # grid_a - grid_b is never within 0.25 of 0
        "grid_b": _grid(-6, 6, 0.5, 0.375),
        "ties": _grid(-4, 4, 0.5, 0.0),  # comparisons: equal values happen often
    }[kind]


def arrays(draw, kind, dtype, shape, unique=False):
    return draw(hnp.arrays(dtype, shape, elements=elements(kind, dtype), unique=unique))


def small_shapes(min_dims=0, max_dims=3):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1,
                            max_side=MAX_SIDE)


def broadcast_shapes(n):
    return hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=3, min_side=1,
                                             max_side=MAX_SIDE).map(lambda s: s.input_shapes)


@st.composite
def reduce_axes(draw, ndim):
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none" or (kind == "int" and ndim == 0):
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    return draw(hnp.valid_tuple_axes(ndim))


@st.composite
def reshape_targets(draw, shape):
    """A shape with the same number of elements as ``shape``, maybe with one -1."""
    size = math.prod(shape)
    factors, n = [], size
    for p in (2, 3):
        while n % p == 0:
            factors.append(p)
            n //= p
    assert n == 1, size  # dims <= 4 have no other prime factors
    rank = draw(st.integers(0 if size == 1 else 1, 3))
    dims = [1] * rank
    for f in factors:
        dims[draw(st.integers(0, rank - 1))] *= f
    if rank and draw(st.booleans()):
        dims[draw(st.integers(0, rank - 1))] = -1
    return tuple(dims)


@st.composite
def broadcast_to_cases(draw):
    """(source shape, target shape) with the source broadcastable to the target."""
    target = draw(small_shapes())
    keep = draw(st.integers(0, len(target)))
    source = [1 if draw(st.booleans()) else d for d in target[len(target) - keep:]]
    return tuple(source), target


@st.composite
def permutations(draw, ndim):
    perm = draw(st.permutations(range(ndim)))
    # Negative axes are accepted too, as in NumPy.
    return tuple(p - ndim if draw(st.booleans()) else p for p in perm)


# -- elementwise -----------------------------------------------------------------------------
UNARY = {  # name: (op, input domain, also test integer dtypes)
    "neg": (kg.neg, "any", True),
    "exp": (kg.exp, "any", False),
    "log": (kg.log, "positive", False),
    "sqrt": (kg.sqrt, "positive", False),
    "tanh": (kg.tanh, "any", False),
    "sigmoid": (kg.sigmoid, "any", False),
    "relu": (kg.relu, "kinkless", False),
    "abs": (kg.abs, "kinkless", True),
    "square": (kg.square, "any", False),
}
UNARY_REF = dict(REFERENCE, square=np.square)

BINARY = {  # name: (op, domain of x, domain of y, also test integer dtypes)
    "add": (kg.add, "any", "any", True),
    "sub": (kg.sub, "any", "any", True),
    "mul": (kg.mul, "any", "any", True),
    "div": (kg.div, "any", "nonzero", False),
    "pow": (kg.pow, "base", "exponent", False),
    "maximum": (kg.maximum, "grid_a", "grid_b", True),
    "minimum": (kg.minimum, "grid_a", "grid_b", True),
}

COMPARISONS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


def _cases(table):
    return [(name, dt) for name, spec in table.items()
            for dt in FLOATS + (INTS if spec[-1] else ())]


@pytest.mark.parametrize("name, dtype", _cases(UNARY))
@given(data=st.data())
def test_unary(name, dtype, data):
    op, kind, _ = UNARY[name]
    x = arrays(data.draw, kind, dtype, data.draw(small_shapes()))
    check_op(op, UNARY_REF[name], [x], diff=(0,), ph=data.draw(PLACEHOLDER_SHAPES))


@pytest.mark.parametrize("name, dtype", _cases(BINARY))
@given(data=st.data())
def test_binary(name, dtype, data):
    op, kind_x, kind_y, _ = BINARY[name]
    sx, sy = data.draw(broadcast_shapes(2))
    x = arrays(data.draw, kind_x, dtype, sx)
    y = arrays(data.draw, kind_y, dtype, sy)
    check_op(op, REFERENCE[name], [x, y], diff=(0, 1), ph=data.draw(PLACEHOLDER_SHAPES))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("name", COMPARISONS)
@given(data=st.data())
def test_comparison(name, dtype, data):
    sx, sy = data.draw(broadcast_shapes(2))
    x = arrays(data.draw, "ties", dtype, sx)
    y = arrays(data.draw, "ties", dtype, sy)
    out, grads = check_op(getattr(kg.ops, name), REFERENCE[name], [x, y], out_dtype=BOOL,
                          ph=data.draw(PLACEHOLDER_SHAPES))
    assert grads == []


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@given(data=st.data())
def test_where(dtype, data):
    sc, sx, sy = data.draw(broadcast_shapes(3))
    cond = arrays(data.draw, "any", BOOL, sc)
    x = arrays(data.draw, "any", dtype, sx)
    y = arrays(data.draw, "any", dtype, sy)
    check_op(kg.where, REFERENCE["where"], [cond, x, y], diff=(1, 2), out_dtype=dtype,
             ph=data.draw(PLACEHOLDER_SHAPES))


@pytest.mark.parametrize("src, dst", [(s, d) for s in FLOATS + INTS for d in FLOATS + INTS])
@given(data=st.data())
def test_cast(src, dst, data):
    x = arrays(data.draw, "any", src, data.draw(small_shapes()))
    out, grads = check_op(lambda t: kg.cast(t, dtype=dst), lambda a: a.astype(dst), [x],
                          diff=(0,), out_dtype=dst, ph=data.draw(PLACEHOLDER_SHAPES))
    if grads:  # float -> float: d/dx sum(cast(x) * w) is w, in x's dtype
        w = weights(x.shape, dst)
        np.testing.assert_allclose(grads[0], w.astype(src), rtol=1e-6)


# -- reductions ------------------------------------------------------------------------------
REDUCTIONS = {"sum": (kg.sum, "any", True), "mean": (kg.mean, "any", False),
              "max": (kg.max, "distinct", True)}


@pytest.mark.parametrize("name, dtype", _cases(REDUCTIONS))
@given(data=st.data())
def test_reduction(name, dtype, data):
    op, kind, _ = REDUCTIONS[name]
    shape = data.draw(small_shapes())
    x = arrays(data.draw, kind, dtype, shape, unique=kind == "distinct")
    axis = data.draw(reduce_axes(len(shape)))
    keepdims = data.draw(st.booleans())
    ref = REFERENCE[name]
    # Also reduce a transposed (non-contiguous) view: the kernels' other memory layouts.
    view = data.draw(st.sampled_from([lambda t: t, kg.transpose]))
    # Integer and bool sums are int64, as in PyTorch (an int32 sum does not wrap).
    out_dtype = np.dtype(np.int64) if name == "sum" and np.dtype(dtype).kind in "bi" else None
    check_op(lambda t: op(view(t), axis=axis, keepdims=keepdims),
             lambda a: ref(np.transpose(a) if view is kg.transpose else a, axis=axis,
                           keepdims=keepdims), [x], diff=(0,), out_dtype=out_dtype,
             ph=data.draw(PLACEHOLDER_SHAPES))


def test_threaded_sums_and_integer_products_give_the_serial_bits(monkeypatch):
    """Row sums and integer matmul run threaded from PARALLEL_MIN_WORK multiply-adds on,
    serially below: both versions of each loop compute the same bits."""
    from kernelgraph.kernels import cpu

    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 9, 7)).astype(np.float32)
    a, b = rng.integers(-9, 9, (3, 20, 6)), rng.integers(-9, 9, (3, 6, 11))
    serial = [cpu.reduce_sum(x, axis=(1, 2)), cpu.reduce_sum(x, axis=(0, 2)), cpu.matmul(a, b)]
    calls = []
    for loop in (cpu._sum_rows, cpu._sum_middle, cpu._matmul_batched):
        assert loop.threshold == cpu.PARALLEL_MIN_WORK
        monkeypatch.setattr(loop, "threshold", 0)
        monkeypatch.setattr(loop, "parallel",
                            lambda *args, _k=loop.parallel: (calls.append(_k), _k(*args))[1])
    threaded = [cpu.reduce_sum(x, axis=(1, 2)), cpu.reduce_sum(x, axis=(0, 2)),
                cpu.matmul(a, b)]
    assert len(calls) == 3
    for s, t in zip(serial, threaded):
        assert_same(s, t, "threaded vs serial")
    np.testing.assert_array_equal(threaded[2], a @ b)


@pytest.mark.parametrize("dtype", FLOATS + INTS + (BOOL,))
def test_sums_over_axes_of_size_one_give_the_kernels_bits(dtype):
    """Sums over axes of size 1 skip the reduction kernel: the same bits as the kernel
    (which adds each element to a zero accumulator, so -0.0 comes out as 0.0)."""
    from kernelgraph.kernels import cpu

    x = np.array([[[-0.0, 1.5, -2.0]], [[3.0, 7.0, 0.0]]]).astype(dtype)  # (2, 1, 3)
    acc = np.zeros(6, np.int64 if dtype in INTS + (BOOL,) else np.float64)
    cpu._sum_rows.serial(x.reshape(6, 1).astype(acc.dtype), acc)  # the kernel: a row a sum
    kernel = acc.astype(np.int64 if dtype == BOOL else dtype)
    for axis, keepdims, shape in [(1, False, (2, 3)), (1, True, (2, 1, 3)),
                                  ((1,), False, (2, 3))]:
        got = cpu.reduce_sum(x, axis=axis, keepdims=keepdims)
        assert_same(got, kernel.reshape(shape), f"sum over axis {axis}")
    if dtype in FLOATS:  # the bias-gradient path (floats only)
        assert_same(cpu.sum_leading(x.reshape(1, 6), 1), kernel, "sum_leading")


@pytest.mark.parametrize("dtype", FLOATS)
@given(data=st.data())
def test_max_gradient_splits_ties_evenly(dtype, data):
    shape = data.draw(small_shapes(min_dims=1))
    x = arrays(data.draw, "ties", dtype, shape)  # few distinct values: many ties
    axis = data.draw(reduce_axes(len(shape)))
    keepdims = data.draw(st.booleans())
    ref = REFERENCE["max"]
    out, (grad,) = check_op(lambda t: kg.max(t, axis=axis, keepdims=keepdims),
                            lambda a: ref(a, axis=axis, keepdims=keepdims), [x], diff=(0,),
                            ph=data.draw(PLACEHOLDER_SHAPES), fd=False)
    w = weights(out.shape, dtype)
    top = ref(x, axis=axis, keepdims=True)
    hit = (x == top).astype(dtype)
    expected = hit * np.reshape(w, top.shape) / np.sum(hit, axis=axis, keepdims=True)
    np.testing.assert_allclose(grad, expected, **FWD_TOL[dtype])


@pytest.mark.parametrize("name", ["maximum", "minimum"])
@given(data=st.data())
def test_maximum_minimum_ties_split_the_gradient(name, data):
    """At x == y the gradient is split evenly between x and y (PyTorch's rule; NaN and the
    other specials: tests/test_nan.py)."""
    sx, sy = data.draw(broadcast_shapes(2))
    x, y = arrays(data.draw, "ties", F64, sx), arrays(data.draw, "ties", F64, sy)
    out, (gx, gy) = check_op(getattr(kg, name), REFERENCE[name], [x, y], diff=(0, 1),
                             ph=data.draw(PLACEHOLDER_SHAPES), fd=False)
    w = weights(out.shape, F64)
    take_x = (x > y) if name == "maximum" else (x < y)
    share_x = np.where(x == y, w / 2, np.where(take_x, w, 0.0))
    share_y = np.where(x == y, w / 2, np.where(take_x, 0.0, w))
    np.testing.assert_allclose(gx, sum_to_shape(share_x, x.shape), atol=1e-12)
    np.testing.assert_allclose(gy, sum_to_shape(share_y, y.shape), atol=1e-12)


# -- linalg ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS + INTS)
@given(data=st.data())
def test_matmul(dtype, data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(
        signature="(m,k),(k,n)->(m,n)", max_dims=2, min_side=1, max_side=MAX_SIDE))
    sa, sb = shapes.input_shapes
    a = arrays(data.draw, "any", dtype, sa)
    b = arrays(data.draw, "any", dtype, sb)
    check_op(kg.matmul, REFERENCE["matmul"], [a, b], diff=(0, 1),
             ph=data.draw(PLACEHOLDER_SHAPES))


def _rnn_tanh_cell_reference(x, h, w_ih, w_hh, b_ih, b_hh):
    return np.tanh(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)


@pytest.mark.parametrize("dtype", FLOATS)
@given(data=st.data())
def test_rnn_tanh_cell(dtype, data):
    batch, inputs, hidden = (data.draw(st.integers(1, MAX_SIDE)) for _ in range(3))
    shapes = [(batch, inputs), (batch, hidden), (hidden, inputs), (hidden, hidden), (hidden,),
              (hidden,)]
    args = [arrays(data.draw, "exponent", dtype, s) for s in shapes]
    check_op(kg.ops.rnn_tanh_cell, _rnn_tanh_cell_reference, args, diff=range(6),
             ph=data.draw(PLACEHOLDER_SHAPES))


def _lstm_cell_reference(x, h, c, w_ih, w_hh, b_ih, b_hh):
    i, f, g, o = np.split(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, axis=1)
    i, f, g, o = 1 / (1 + np.exp(-i)), 1 / (1 + np.exp(-f)), np.tanh(g), 1 / (1 + np.exp(-o))
    c_next = f * c + i * g
    return np.concatenate([o * np.tanh(c_next), c_next, i, f, g, o], axis=1)


@pytest.mark.parametrize("dtype", FLOATS)
@given(data=st.data())
def test_lstm_cell(dtype, data):
    batch, inputs, hidden = (data.draw(st.integers(1, MAX_SIDE)) for _ in range(3))
    shapes = [(batch, inputs), (batch, hidden), (batch, hidden), (4 * hidden, inputs),
              (4 * hidden, hidden), (4 * hidden,), (4 * hidden,)]
    args = [arrays(data.draw, "exponent", dtype, s) for s in shapes]
    check_op(kg.ops.lstm_cell, _lstm_cell_reference, args, diff=range(7),
             ph=data.draw(PLACEHOLDER_SHAPES))


# -- shape ops -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS + INTS)
@given(data=st.data())
def test_reshape(dtype, data):
    shape = data.draw(small_shapes())
    target = data.draw(reshape_targets(shape))
    x = arrays(data.draw, "any", dtype, shape)
    check_op(lambda t: kg.reshape(t, shape=target), lambda a: np.reshape(a, target), [x],
             diff=(0,), ph=data.draw(PLACEHOLDER_SHAPES))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@given(data=st.data())
def test_transpose(dtype, data):
    shape = data.draw(small_shapes())
    perm = data.draw(st.none() | permutations(len(shape)))
    x = arrays(data.draw, "any", dtype, shape)
    kw = {} if perm is None else {"perm": perm}
    check_op(lambda t: kg.transpose(t, **kw), lambda a: REFERENCE["transpose"](a, perm), [x],
             diff=(0,), ph=data.draw(PLACEHOLDER_SHAPES))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@given(data=st.data())
def test_broadcast_to(dtype, data):
    source, target = data.draw(broadcast_to_cases())
    x = arrays(data.draw, "any", dtype, source)
    check_op(lambda t: kg.broadcast_to(t, shape=target),
             lambda a: REFERENCE["broadcast_to"](a, target), [x], diff=(0,),
             ph=data.draw(PLACEHOLDER_SHAPES))


# -- nn --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@given(data=st.data())
def test_softmax(name, dtype, data):
    shape = data.draw(small_shapes(min_dims=1))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = arrays(data.draw, "any", dtype, shape)
    op, ref = getattr(kg, name), REFERENCE[name]
    if data.draw(st.booleans()):  # a transposed (non-contiguous) view
        check_op(lambda t: op(kg.transpose(t), axis=axis),
                 lambda a: ref(np.transpose(a), axis=axis), [x], diff=(0,),
                 ph=data.draw(PLACEHOLDER_SHAPES))
    else:
        check_op(lambda t: op(t, axis=axis), lambda a: ref(a, axis=axis), [x], diff=(0,),
                 ph=data.draw(PLACEHOLDER_SHAPES))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmax_cross_entropy"])
@given(data=st.data())
def test_softmax_family_is_stable(name, dtype, data):
    """Logits in the hundreds overflow a naive exp; the kernels subtract the max first.
    (Forward and mode agreement only: finite differences lose digits at this scale.)"""
    if name == "softmax_cross_entropy":
        args = list(data.draw(classification(dtype, I64, kind="wide")))
    else:
        args = [arrays(data.draw, "wide", dtype, data.draw(small_shapes(min_dims=1)))]
    out, _ = check_op(getattr(kg, name), REFERENCE[name], args, diff=(0,), fd=False,
                      ph=data.draw(PLACEHOLDER_SHAPES))
    assert np.all(np.isfinite(out))


@st.composite
def classification(draw, dtype, label_dtype, kind="any"):
    n, c = draw(st.integers(1, MAX_SIDE)), draw(st.integers(1, MAX_SIDE))
    logits = arrays(draw, kind, dtype, (n, c))
    labels = draw(hnp.arrays(label_dtype, (n,), elements=st.integers(0, c - 1)))
    return logits, labels


@pytest.mark.parametrize("label_dtype", INTS)
@pytest.mark.parametrize("dtype", FLOATS)
@given(data=st.data())
def test_softmax_cross_entropy(dtype, label_dtype, data):
    logits, labels = data.draw(classification(dtype, label_dtype))
    check_op(kg.softmax_cross_entropy, REFERENCE["softmax_cross_entropy"], [logits, labels],
             diff=(0,), ph=data.draw(PLACEHOLDER_SHAPES))


@pytest.mark.parametrize("label_dtype", INTS)
@pytest.mark.parametrize("dtype", FLOATS)
@given(data=st.data())
def test_cross_entropy(dtype, label_dtype, data):
    logits, labels = data.draw(classification(dtype, label_dtype))
    ref = REFERENCE["softmax_cross_entropy"]
    check_op(kg.cross_entropy, lambda lg, lb: np.mean(ref(lg, lb)), [logits, labels],
             diff=(0,), ph=data.draw(PLACEHOLDER_SHAPES))


@pytest.mark.parametrize("dtype", FLOATS)
@given(data=st.data())
def test_mse_loss(dtype, data):
    sp, st_ = data.draw(broadcast_shapes(2))
    prediction = arrays(data.draw, "any", dtype, sp)
    target = arrays(data.draw, "any", dtype, st_)
    check_op(kg.mse_loss, lambda p, t: np.mean(np.square(p - t)), [prediction, target],
             diff=(0, 1), ph=data.draw(PLACEHOLDER_SHAPES))


# -- mixed dtypes and Python scalars ---------------------------------------------------------
ALL_DTYPES = (BOOL, I32, I64, F32, F64)
MIXED = {  # name: (op, domain of x, domain of y, output dtype rule for the promoted dtype)
    "add": (kg.add, "any", "any", "logical"),
    "sub": (kg.sub, "any", "any", "arith"),  # bools are refused (tests/test_shapes_dtypes.py)
    "mul": (kg.mul, "any", "any", "logical"),
    "div": (kg.div, "any", "nonzero", "floating"),
    "maximum": (kg.maximum, "grid_a", "grid_b", "logical"),
    "minimum": (kg.minimum, "grid_a", "grid_b", "logical"),
    **{name: (getattr(kg.ops, name), "ties", "ties", "bool") for name in COMPARISONS},
}


def result_dtype(a, b, rule):
    """PyTorch promotion (bool < ints < floats, then width), then the op's compute rule
    ("logical": two bools stay bool, as ``b + b`` is a logical or in PyTorch)."""
    rank = {BOOL: 0, I32: 1, I64: 2, F32: 3, F64: 4}
    dt = max(a, b, key=rank.get)
    if rule == "bool" or rule == "logical":
        return BOOL if rule == "bool" else dt
    if rule == "floating" and dt not in FLOATS:
        return F32
    return I64 if dt == BOOL else dt


def mixed_arrays(draw, kind, dtype, shape):
    """Values of ``kind`` for floats; for ints and bools, integers that avoid 0 where
    ``kind`` does (so int divisors are never 0)."""
    if dtype in FLOATS:
        return arrays(draw, kind, dtype, shape)
    if dtype == BOOL:
        elements = st.just(True) if kind == "nonzero" else st.booleans()
    else:
        elements = st.integers(1, 4) | st.integers(-4, -1) if kind == "nonzero" else \
            st.integers(-4, 4)
    return draw(hnp.arrays(dtype, shape, elements=elements))


@pytest.mark.parametrize("name", list(MIXED))
@given(data=st.data())
def test_binary_mixed_dtypes(name, data):
    """Promotion and gradient dtypes agree in every mode (a gradient has its input's dtype)."""
    op, kind_x, kind_y, rule = MIXED[name]
    dtypes = ALL_DTYPES[1:] if name == "sub" else ALL_DTYPES  # b - x is refused, as in PyTorch
    dx, dy = data.draw(st.sampled_from(dtypes)), data.draw(st.sampled_from(dtypes))
    sx, sy = data.draw(broadcast_shapes(2))
    x, y = mixed_arrays(data.draw, kind_x, dx, sx), mixed_arrays(data.draw, kind_y, dy, sy)
    out_dtype = result_dtype(dx, dy, rule)
    ref = REFERENCE[name]

    def reference(a, b):
        if out_dtype in FLOATS:
            return ref(a.astype(F64), b.astype(F64))
        if out_dtype == BOOL:
            return ref(a, b)
        return ref(a.astype(out_dtype), b.astype(out_dtype))

    check_op(op, reference, [x, y], diff=(0, 1), out_dtype=out_dtype,
             ph=data.draw(PLACEHOLDER_SHAPES))


SCALARS = [2, -3, 0.5, -1.25, True]


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "maximum", "minimum",
                                  "less", "greater_equal"])
@given(data=st.data())
def test_python_scalar_operand(name, side, data):
    """A Python number is a 'weak' operand: it keeps the tensor's dtype unless it changes
    its kind (int tensor * 0.5 is float32), identically in eager, static and raw mode."""
    dtype = data.draw(st.sampled_from((I32, I64, F32, F64)))
    scalar = data.draw(st.sampled_from(SCALARS))
    kind = {"pow": "base" if side == "right" else "nonzero",
            "maximum": "grid_a", "minimum": "grid_a"}.get(name, "nonzero")  # grid_a: no ties
    if name == "pow" and side == "left":
        scalar = abs(scalar) or 2
    if name == "sub" and scalar is True:
        scalar = 2  # x - True is refused, as in PyTorch (tests/test_shapes_dtypes.py)
    x = mixed_arrays(data.draw, kind, dtype, data.draw(small_shapes()))
    if dtype in INTS and name in ("pow", "div"):
        # no integer 0 base or divisor; no integer to a negative integer power
        x = (np.abs(x) + 1).astype(dtype)
        if name == "pow" and side == "right" and type(scalar) is int and scalar < 0:
            scalar = 3
    if isinstance(scalar, float):
        out_dtype = dtype if dtype in FLOATS else F32
    else:
        out_dtype = dtype
    if name == "div" and out_dtype in INTS:
        out_dtype = F32
    if name in ("less", "greater_equal"):
        out_dtype = BOOL
    op, ref = getattr(kg, name), REFERENCE[name]
    fn = (lambda t: op(t, scalar)) if side == "right" else (lambda t: op(scalar, t))

    def reference(a):
        a = a.astype(F64)
        r = np.asarray(ref(a, scalar) if side == "right" else ref(scalar, a))
        return r.astype(out_dtype) if out_dtype in INTS else r

    check_op(fn, reference, [x], diff=(0,), out_dtype=out_dtype,
             ph=data.draw(PLACEHOLDER_SHAPES))


@pytest.mark.parametrize(("shape", "axis"), [((0,), None), ((0, 3), 0), ((0, 3), 1),
                                             ((2, 0, 3), (1,)), ((2, 0), None)])
def test_sum_over_empty_axes_is_zero_in_both_modes(shape, axis):
    x = np.zeros(shape, np.float32)
    expected = np.sum(x, axis=axis)
    eager = kg.sum(kg.tensor(x), axis=axis).numpy()
    g = kg.Graph()
    with g.as_default():
        p = kg.placeholder(kg.float32, shape=[None] * len(shape))
        s = kg.sum(p, axis=axis)
        with kg.Session() as sess:
            static = sess.run(s, {p: x})
    assert eager.shape == static.shape == expected.shape
    assert np.array_equal(eager, expected) and np.array_equal(static, expected)
