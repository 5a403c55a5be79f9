"""numba CPU kernels.

Elementwise kernels are scalar functions that numba compiles into *real NumPy ufuncs*
(:class:`UfuncKernel`): NumPy then does broadcasting, strides and dispatch (~230 ns a call,
less than numba's own dispatcher), while the loop body is numba code. Loops are compiled per
dtype on first use, because compiling every op for every dtype at import would take seconds.

Reductions, matmul and the softmax family are ``@njit(cache=True)`` kernels over 2-D
row-major views; their Python wrappers validate shapes first, so a kernel never reads out of
bounds whatever a user passes.
"""

from __future__ import annotations

import math
import types
import warnings

import numba
import numpy as np
from numba import njit, prange, vectorize

ndarray = np.ndarray
# The builtin, saved before the `abs` kernel below shadows it (numba resolves `_abs`'s
# global at compile time, when the module-level name is already the kernel).
_builtin_abs = abs

# Work below this many multiply-adds is not worth waking numba's thread pool for.
PARALLEL_MIN_WORK = 1 << 18


class ByWork:
    """A loop nest compiled twice, with ``prange`` threads and without; a call passes how
    many elements of ``work`` it does first, and runs threaded only from ``threshold`` on.
    Below that, waking numba's thread pool costs more than it gains, and its threads,
    spinning between calls, fight BLAS's own threads for the cores (kernels/conv.py says
    how much that cost a CNN step). Each ``prange`` iteration writes its own part of the
    output in the same order either way, so the two versions compute the same bits."""

    def __init__(self, fn, threshold: int):
        self.threshold = threshold
        self.parallel = njit(cache=True, parallel=True)(fn)
        # A copy under its own name, so the two compiled versions get their own cache files.
        serial = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + "_serial",
                                    fn.__defaults__, fn.__closure__)
        serial.__qualname__ = fn.__qualname__ + "_serial"
        self.serial = njit(cache=True)(serial)

    def __call__(self, work: int, *args):
        (self.parallel if work >= self.threshold else self.serial)(*args)


def by_work(threshold: int):
    """Decorator: the loop nest as a :class:`ByWork` with that ``threshold``."""
    return lambda fn: ByWork(fn, threshold)


class UfuncKernel:
    """A scalar function compiled by numba into NumPy ufuncs, one ufunc (one loop) per dtype.

    ``by_dtype[dt]`` is the ufunc for dtype ``dt`` once compiled; callers look it up and
    call ``compile(dt)`` on a miss. ``signature(dt)`` gives (input dtypes, output dtype).

    One loop per ufunc, not one ufunc with a loop per dtype: NumPy picks the *first* loop that
    the inputs cast to safely, so with a float64 loop added before the float32 one, float32
    inputs would silently run (and return) float64, depending on what ran first.
    """

    __slots__ = ("name", "fn", "signature", "by_dtype")

    def __init__(self, name, fn, signature):
        self.name = name
        self.fn = fn
        self.signature = signature
        self.by_dtype: dict[np.dtype, np.ufunc] = {}

    def compile(self, dt: np.dtype) -> np.ufunc:
        ins, out = self.signature(dt)
        sig = numba.from_dtype(out)(*[numba.from_dtype(d) for d in ins])
        # numba wraps the ufunc in a DUFunc whose own dispatch costs ~0.9 us a call; the plain
        # NumPy ufunc inside costs ~0.23 us, so that is what we keep.
        ufunc = vectorize([sig], cache=True)(self.fn).ufunc
        self.by_dtype[dt] = ufunc
        return ufunc

    def __call__(self, *args):
        """Convenience for tests: call with arrays that already share dtype ``args[-1].dtype``."""
        dt = np.result_type(*args)
        u = self.by_dtype.get(dt) or self.compile(dt)
        return u(*args)


_BOOL = np.dtype(np.bool_)


def _same(n):
    return lambda dt: ((dt,) * n, dt)


def _compare(dt):
    return ((dt, dt), _BOOL)


def _where_sig(dt):
    return ((_BOOL, dt, dt), dt)


# -- scalar bodies --------------------------------------------------------------------------
def _add(a, b): return a + b
def _sub(a, b): return a - b
def _mul(a, b): return a * b
def _div(a, b): return a / b
def _pow(a, b): return a ** b
def _neg(a): return -a
def _exp(a): return math.exp(a)
def _log(a): return math.log(a) if a > 0 else (-math.inf if a == 0 else math.nan)
def _sqrt(a): return math.sqrt(a) if a >= 0 else math.nan
def _tanh(a): return math.tanh(a)
def _abs(a): return _builtin_abs(a)
def _sign(a): return (a > 0) - (a < 0)
def _relu(a): return 0 if 0 > a else a  # NaN and -0.0 pass, as in PyTorch
def _eq(a, b): return a == b
def _ne(a, b): return a != b
def _lt(a, b): return a < b
def _le(a, b): return a <= b
def _gt(a, b): return a > b
def _ge(a, b): return a >= b
def _where(c, a, b): return a if c else b
def _maximum(a, b): return a if (a >= b or a != a) else b
def _minimum(a, b): return a if (a <= b or a != a) else b


def _sigmoid(a):
    # Two forms so that exp never overflows: exp(-a) for a >= 0, exp(a) otherwise.
    if a >= 0:
        return 1.0 / (1.0 + math.exp(-a))
    e = math.exp(a)
    return e / (1.0 + e)


def _tanh_grad(y, g): return g * (1 - y * y)
def _sigmoid_grad(y, g): return g * y * (1 - y)
def _relu_grad(x, g): return 0 if x <= 0 else g  # PyTorch's: g at NaN


def _ipow(a, b):
    # An integer power by squaring, wrapping on overflow as PyTorch's does: numba's own
    # integer ``**`` goes through floating point for large exponents (int32 max ** int32 max
    # comes out 0, -1 ** (2**63 - 1) as 1). The forwards refuse negative exponents first.
    result = a - a + 1
    while b > 0:
        if b & 1:
            result *= a
        b >>= 1
        a *= a
    return result


add = UfuncKernel("add", _add, _same(2))
sub = UfuncKernel("sub", _sub, _same(2))
mul = UfuncKernel("mul", _mul, _same(2))
div = UfuncKernel("div", _div, _same(2))
pow = UfuncKernel("pow", _pow, _same(2))  # noqa: A001 - the op's name
ipow = UfuncKernel("ipow", _ipow, _same(2))
neg = UfuncKernel("neg", _neg, _same(1))
exp = UfuncKernel("exp", _exp, _same(1))
log = UfuncKernel("log", _log, _same(1))
sqrt = UfuncKernel("sqrt", _sqrt, _same(1))
tanh = UfuncKernel("tanh", _tanh, _same(1))
sigmoid = UfuncKernel("sigmoid", _sigmoid, _same(1))
relu = UfuncKernel("relu", _relu, _same(1))
abs = UfuncKernel("abs", _abs, _same(1))  # noqa: A001
sign = UfuncKernel("sign", _sign, _same(1))
maximum = UfuncKernel("maximum", _maximum, _same(2))
minimum = UfuncKernel("minimum", _minimum, _same(2))
equal = UfuncKernel("equal", _eq, _compare)
not_equal = UfuncKernel("not_equal", _ne, _compare)
less = UfuncKernel("less", _lt, _compare)
less_equal = UfuncKernel("less_equal", _le, _compare)
greater = UfuncKernel("greater", _gt, _compare)
greater_equal = UfuncKernel("greater_equal", _ge, _compare)
where = UfuncKernel("where", _where, _where_sig)
tanh_grad = UfuncKernel("tanh_grad", _tanh_grad, _same(2))
sigmoid_grad = UfuncKernel("sigmoid_grad", _sigmoid_grad, _same(2))
relu_grad = UfuncKernel("relu_grad", _relu_grad, _same(2))


def ignore_fp_warnings() -> None:
    """Drop NumPy's "invalid value / divide by zero / overflow encountered in ..." warnings
    for kernelgraph's own computations (run once at import; calling it again is harmless).

    NumPy reads the CPU's floating-point flags after every ufunc loop and cast, and a
    compiled comparison raises the "invalid" flag for any NaN operand: ``relu(nan)``,
    ``cast(nan, int32)`` or a float32 sum past 3.4e38 would warn where PyTorch computes the
    same NaN or Inf and prints nothing. ``np.errstate`` around each call would cost more
    than a small call itself; a warnings filter is consulted only when a warning is raised,
    so it costs a call without one nothing. Two filters: one by the module that made the
    call (any ``kernelgraph.*`` module: casts, ``np.divide`` and ufuncs called from
    kernelgraph's code), one by ufunc name for the calls a static plan's generated code
    makes itself: the scalar bodies' (``_relu``, ``_add``...) and ``fused``, the name of
    every fused kernel (static/fusion.py builds them from these bodies). The same NumPy
    calls in the user's own code still warn. A ``warnings.catch_warnings()`` block restores
    the filters it found, so a filter added inside one (``import kernelgraph`` there) is gone
    after it.
    """
    fp = r"(invalid value|divide by zero|overflow|underflow) encountered in "
    names = sorted(k.fn.__name__ for k in globals().values() if isinstance(k, UfuncKernel))
    warnings.filterwarnings("ignore", category=RuntimeWarning,
                            message=rf"{fp}({'|'.join(names)}|fused)$")
    warnings.filterwarnings("ignore", category=RuntimeWarning, message=fp,
                            module=r"kernelgraph(\.|$)")


ignore_fp_warnings()


# -- reductions ------------------------------------------------------------------------------
# A reduction over some axes is reshaped to one of two 2-D forms without copying when it can:
# reducing the trailing axes of a C-contiguous array gives (outer, inner) "rows"; reducing
# the leading axes gives "columns". Anything else is transposed into rows first (one copy).

@by_work(PARALLEL_MIN_WORK)
def _sum_rows(a, acc):
    for i in prange(a.shape[0]):
        s = acc[i]
        for k in range(a.shape[1]):
            s += a[i, k]
        acc[i] = s


@njit(cache=True)
def _sum_cols(a, acc):
    for i in range(a.shape[0]):
        for k in range(a.shape[1]):
            acc[k] += a[i, k]


@njit(cache=True)
def _max_rows(a, out):
    for i in range(a.shape[0]):
        m = a[i, 0]
        for k in range(1, a.shape[1]):
            v = a[i, k]
            if v > m or v != v:
                m = v
                if m != m:
                    break
        out[i] = m


@njit(cache=True)
def _max_cols(a, out):
    for k in range(a.shape[1]):
        out[k] = a[0, k]
    for i in range(1, a.shape[0]):
        for k in range(a.shape[1]):
            v = a[i, k]
            if v > out[k] or v != v:
                out[k] = v


_COMMON_AXES: dict = {}  # (axis, ndim) -> normalize_axes' answer, for None or an int axis


def normalize_axes(axis, ndim: int) -> tuple:
    """Sorted positive axes to reduce; ``None`` means all. Raises for axes out of range."""
    if axis is None or type(axis) is int:  # not bool (True == 1), not a tuple holding bools
        known = _COMMON_AXES.get((axis, ndim))
        if known is None:
            known = _COMMON_AXES[(axis, ndim)] = _normalize_axes(axis, ndim)
        return known
    return _normalize_axes(axis, ndim)


def _normalize_axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    out = []
    for a in axes:
        if not isinstance(a, int | np.integer) or isinstance(a, bool):
            raise TypeError(f"axis must be an int or a tuple of ints, got {axis!r}")
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"axis {a} is out of range for a tensor of rank {ndim}")
        out.append(int(a) % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"axis {axis!r} names the same dimension twice")
    return tuple(sorted(out))


def reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _as_2d(x: ndarray, axes):
    """(2-D view, 'rows' or 'cols'): reduced axes become axis 1 for rows, axis 0 for cols."""
    nd = x.ndim
    nred = len(axes)
    inner = outer = 1
    for i, d in enumerate(x.shape):
        if i in axes:
            inner *= d
        else:
            outer *= d  # not size // inner: with an empty reduced axis that would be 0 rows
    if nd == 0:
        return x.reshape(1, 1), "rows"
    if axes == tuple(range(nd - nred, nd)):  # trailing axes
        return np.ascontiguousarray(x).reshape(outer, inner), "rows"
    if axes == tuple(range(nred)) and x.flags.c_contiguous:  # leading axes
        return x.reshape(inner, outer), "cols"
    keep = [i for i in range(nd) if i not in axes]
    return np.ascontiguousarray(x.transpose(keep + list(axes))).reshape(outer, inner), "rows"


def _accumulator(dt):
    return np.float64 if dt.kind == "f" else np.int64


def reduce_sum(x: ndarray, axis=None, keepdims=False) -> ndarray:
    axes = normalize_axes(axis, x.ndim)
    out_shape = reduced_shape(x.shape, axes, keepdims)
    # Sums of one element each (a bias gradient at batch 1) skip the kernel; a 0-d x
    # "reduced over axis 0" has no axis 0 to look at, and takes the kernel's path.
    if x.ndim and all(x.shape[a] == 1 for a in axes):
        return _sum_of_one(x, out_shape)
    a2, form = _as_2d(x, axes)
    if a2.dtype == _BOOL:
        a2 = a2.astype(np.int64)
    if form == "rows":
        acc = np.zeros(a2.shape[0], _accumulator(x.dtype))
        _sum_rows(a2.size if a2.shape[0] > 1 else 0, a2, acc)
    else:
        acc = np.zeros(a2.shape[1], _accumulator(x.dtype))
        _sum_cols(a2, acc)
    out_dt = np.int64 if x.dtype == _BOOL else x.dtype
    return acc.astype(out_dt, copy=False).reshape(out_shape)


def _sum_of_one(x: ndarray, out_shape: tuple) -> ndarray:
    """What the kernels return for sums over axes of size 1, without running them: each
    element itself (plus 0, which turns -0.0 into 0.0 as the kernels' 0 + x does)."""
    if x.dtype == _BOOL:
        return x.astype(np.int64).reshape(out_shape)
    if x.dtype.kind == "f":
        return np.add(x.reshape(out_shape), x.dtype.type(0), out=np.empty(out_shape, x.dtype))
    return x.reshape(out_shape).copy()


def sum_leading(x: ndarray, lead: int) -> ndarray:
    """``x`` (floating point) summed over its first ``lead`` axes: ``reduce_sum(x,
    range(lead))`` with the same kernel and order, for the bias-gradient hot path."""
    if all(d == 1 for d in x.shape[:lead]):
        return _sum_of_one(x, x.shape[lead:])
    a2, form = _as_2d(x, tuple(range(lead)))
    acc = np.zeros(a2.shape[1] if form == "cols" else a2.shape[0], np.float64)
    (_sum_cols if form == "cols" else _sum_rows.serial)(a2, acc)
    return acc.astype(x.dtype).reshape(x.shape[lead:])


@njit(cache=True)
def sum_rows_2d(a):
    """A 2-D float matrix summed over its rows (axis 0), accumulated in float64 in row order
    like :func:`reduce_sum`, returned in ``a``'s dtype: a bias gradient in one call."""
    acc = np.zeros(a.shape[1], np.float64)
    _sum_cols(a, acc)
    return acc.astype(a.dtype)


def reduce_mean(x: ndarray, axis=None, keepdims=False) -> ndarray:
    axes = normalize_axes(axis, x.ndim)
    count = 1
    for a in axes:
        count *= x.shape[a]
    total = reduce_sum(x, axes, keepdims)
    if not count:
        return np.full_like(total, np.nan)
    return np.asarray(np.divide(total, count, dtype=x.dtype))


def reduce_max(x: ndarray, axis=None, keepdims=False) -> ndarray:
    axes = normalize_axes(axis, x.ndim)
    out_shape = reduced_shape(x.shape, axes, keepdims)
    a2, form = _as_2d(x, axes)
    if a2.size == 0:
        raise ValueError(f"max of an empty tensor (shape {x.shape}) over axis {axis!r} has no "
                         "value; reduce over a non-empty dimension")
    if form == "rows":
        out = np.empty(a2.shape[0], x.dtype)
        _max_rows(a2, out)
    else:
        out = np.empty(a2.shape[1], x.dtype)
        _max_cols(a2, out)
    return out.reshape(out_shape)


# -- matmul ----------------------------------------------------------------------------------
@by_work(PARALLEL_MIN_WORK)
def _matmul_batched(a, b, out):  # integer dtypes (floats go to BLAS, below)
    nb, m, kk = a.shape
    n = b.shape[2]
    for p in prange(nb * m):
        bi = p // m
        i = p % m
        row = out[bi, i]
        row[:] = 0
        for k in range(kk):
            aik = a[bi, i, k]
            brow = b[bi, k]
            for j in range(n):
                row[j] += aik * brow[j]


# Floating-point matmul goes to BLAS: numba compiles ``np.dot`` into a call to the sgemm/dgemm
# that SciPy ships (hence the scipy dependency), on contiguous 2-D slices, one per batch entry.
# The loops above stay for integer dtypes, which BLAS does not do.
@njit(cache=True)
def _matmul_batched_blas(a, b, out):
    for i in range(a.shape[0]):
        np.dot(a[i], b[i], out[i])


@njit(cache=True)
def _matmul_2d_blas(a, b, out):
    np.dot(a, b, out)


BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _blas_layout(x: ndarray) -> ndarray:
    """``x`` itself when BLAS can read it (C or Fortran order: a transposed matrix is
    passed with BLAS's transpose flag, not copied), else a C-ordered copy."""
    flags = x.flags
    return x if flags.c_contiguous or flags.f_contiguous else np.ascontiguousarray(x)


def matmul_shape(sa: tuple, sb: tuple) -> tuple:
    """Output shape of ``a @ b`` for tensors of rank >= 2 (batch dims broadcast)."""
    if len(sa) < 2 or len(sb) < 2:
        raise ValueError(f"matmul expects tensors of rank >= 2, got shapes {sa} and {sb}")
    if sa[-1] != sb[-2]:
        raise ValueError(f"matmul: the inner dimensions differ: {sa} @ {sb} "
                         f"({sa[-1]} != {sb[-2]})")
    batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    return (*batch, sa[-2], sb[-1])


def matmul_2d(a: ndarray, b: ndarray) -> ndarray:
    """``a @ b`` for non-empty 2-D float matrices of one dtype whose shapes are known to fit
    (a compiled plan checked them): :func:`matmul` without its checks."""
    out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    _matmul_2d_blas(_blas_layout(a), _blas_layout(b), out)
    return out


def matmul(a: ndarray, b: ndarray) -> ndarray:
    # The common case first, with no broadcasting bookkeeping: for small matrices (a batch-1
    # MLP layer) that bookkeeping cost ten times the product itself.
    if a.ndim == 2 and b.ndim == 2 and a.dtype in BLAS_DTYPES and b.dtype == a.dtype:
        (m, k), n = a.shape, b.shape[1]
        if k == b.shape[0] and m and n and k:
            out = np.empty((m, n), a.dtype)
            _matmul_2d_blas(_blas_layout(a), _blas_layout(b), out)
            return out
    shape = matmul_shape(a.shape, b.shape)
    batch = shape[:-2]
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    nb = int(np.prod(batch, dtype=np.int64)) if batch else 1
    if b.ndim == 2 and a.ndim > 2:  # fold a's batch into its rows: one big 2-D product
        a3 = np.ascontiguousarray(a).reshape(1, nb * m, k)
        b3 = np.ascontiguousarray(b).reshape(1, k, n)
    else:
        a3 = np.ascontiguousarray(np.broadcast_to(a, (*batch, m, k))).reshape(nb, m, k)
        b3 = np.ascontiguousarray(np.broadcast_to(b, (*batch, k, n))).reshape(nb, k, n)
    out = np.empty((a3.shape[0], a3.shape[1], n), a.dtype)
    if a3.dtype in BLAS_DTYPES and out.size and k:
        _matmul_batched_blas(a3, b3, out)
    else:
        _matmul_batched(nb * m * k * n if a3.shape[0] * a3.shape[1] > 1 else 0, a3, b3, out)
    return out.reshape(shape)


# -- fused recurrent cell ---------------------------------------------------------------------
def check_cell_shapes(x, h, w_ih, w_hh, b_ih, b_hh) -> None:
    """Eager calls skip the op's shape rule, and the kernels index the biases by the hidden
    unit without bounds checks: a ValueError unless x (batch, input), h (batch, hidden),
    w_ih (hidden, input), w_hh (hidden, hidden), b_ih and b_hh (hidden,)."""
    if x.ndim == 2 and w_ih.ndim == 2:
        (batch, inputs), hidden = x.shape, w_ih.shape[0]
        if (tuple(h.shape) == (batch, hidden) and tuple(w_ih.shape) == (hidden, inputs)
                and tuple(w_hh.shape) == (hidden, hidden)
                and tuple(b_ih.shape) == tuple(b_hh.shape) == (hidden,)):
            return
    raise ValueError("rnn_tanh_cell: the inputs' shapes do not fit together")


@njit(cache=True)
def _rnn_preactivation(x, h, w_ih, w_hh, b_ih, b_hh, out):
    np.dot(x, w_ih.T, out)  # BLAS reads the transposed weights in place (its transpose flag)
    hw = np.dot(h, w_hh.T)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = out[i, j] + b_ih[j] + hw[i, j] + b_hh[j]


def rnn_tanh_cell(x: ndarray, h: ndarray, w_ih: ndarray, w_hh: ndarray, b_ih: ndarray,
                  b_hh: ndarray) -> ndarray:
    """``tanh(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)`` for 2-D float ``x`` (batch, input)
    and ``h`` (batch, hidden) of one dtype: one compiled call for the two BLAS products and
    the adds (the per-step cost of an eager RNN is the number of calls, not the
    arithmetic), then NumPy's tanh in place -- its SIMD loop is ~20x faster than a compiled
    loop of scalar ``math.tanh`` calls, which made the tanh most of a batch-32 step."""
    check_cell_shapes(x, h, w_ih, w_hh, b_ih, b_hh)
    out = np.empty((x.shape[0], w_ih.shape[0]), x.dtype)
    if out.size == 0:
        return out
    if x.shape[1] == 0 or h.shape[1] == 0:  # an empty product: BLAS wants k >= 1
        return np.tanh(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh).astype(x.dtype)
    _rnn_preactivation(_blas_layout(x), _blas_layout(h), _blas_layout(w_ih),
                       _blas_layout(w_hh), b_ih, b_hh, out)
    return np.tanh(out, out=out)


_tanh_grad_scalar = njit(cache=True)(_tanh_grad)  # the tanh_grad ufunc's body, same typing


@njit(cache=True)
def _rnn_cell_input_grads(g, y, w_ih, w_hh, need_x, need_h, da, dx, dh):
    # Writes into arrays the caller made: a compiled function that returns new arrays pays
    # for boxing each of them, a quarter of this call's time at an RNN step's sizes.
    batch, hidden = y.shape
    for i in range(batch):
        for j in range(hidden):
            da[i, j] = _tanh_grad_scalar(y[i, j], g[i, j])
    if need_x:
        np.dot(da, w_ih, dx)
    if need_h:
        np.dot(da, w_hh, dh)


@njit(cache=True)
def _rnn_cell_backward(g, y, x, h, w_ih, w_hh, need_x, need_h, need_w, need_b):
    batch, hidden = y.shape
    da = np.empty((batch, hidden), y.dtype)
    dx = np.empty((batch, w_ih.shape[1] if need_x else 0), y.dtype)
    dh = np.empty((batch, hidden if need_h else 0), y.dtype)
    _rnn_cell_input_grads(g, y, w_ih, w_hh, need_x, need_h, da, dx, dh)
    dw_ih = np.empty((hidden if need_w else 0, x.shape[1]), y.dtype)
    dw_hh = np.empty((hidden if need_w else 0, hidden), y.dtype)
    if need_w:
        np.dot(da.T, x, dw_ih)  # da.T is F-ordered: BLAS's transpose flag, as matmul's call
        np.dot(da.T, h, dw_hh)
    acc = np.zeros(hidden if need_b else 0, np.float64)
    if need_b:
        _sum_cols(da, acc)  # reduce_sum's column sum: float64, rows in order
    return dx, dh, dw_ih, dw_hh, acc.astype(y.dtype)


def rnn_tanh_cell_grad(g: ndarray, y: ndarray, x: ndarray, h: ndarray, w_ih: ndarray,
                       w_hh: ndarray, needs) -> tuple:
    """The gradients of :func:`rnn_tanh_cell` w.r.t. (x, h, w_ih, w_hh, b_ih, b_hh), None
    where ``needs`` says no, from the output ``y`` and its gradient ``g`` (2-D float arrays
    of one dtype, no empty dim): one compiled call doing what the op's gradient rule does
    with five ops (tanh_grad, three BLAS products, a column sum), with the same arithmetic
    in the same order, so the same bits. Eager ``backward()`` runs it once per RNN step when
    a weight is not a leaf (leaf weights go to sinks: :func:`rnn_tanh_cell_input_grads`)."""
    need_w, need_b = needs[2] or needs[3], needs[4] or needs[5]
    dx, dh, dw_ih, dw_hh, db = _rnn_cell_backward(
        _blas_layout(g), y, _blas_layout(x), _blas_layout(h), _blas_layout(w_ih),
        _blas_layout(w_hh), bool(needs[0]), bool(needs[1]), bool(need_w), bool(need_b))
    return (dx if needs[0] else None, dh if needs[1] else None,
            dw_ih if needs[2] else None, dw_hh if needs[3] else None,
            db if needs[4] else None, db if needs[5] else None)


def rnn_tanh_cell_input_grads(g: ndarray, y: ndarray, w_ih: ndarray, w_hh: ndarray,
                              need_x: bool, need_h: bool) -> tuple:
    """``(da, dx, dh)`` of :func:`rnn_tanh_cell_grad` (dx, dh None when not needed), where
    ``da = g * (1 - y**2)`` is the gradient at the pre-activation: for a caller that sums
    the weights' gradients itself, from ``da`` and the inputs (ops/products.py)."""
    batch, hidden = y.shape
    da = np.empty((batch, hidden), y.dtype)
    dx = np.empty((batch, w_ih.shape[1]), y.dtype) if need_x else None
    dh = np.empty((batch, hidden), y.dtype) if need_h else None
    _rnn_cell_input_grads(_blas_layout(g), y, _blas_layout(w_ih), _blas_layout(w_hh),
                          need_x, need_h, da, da if dx is None else dx,
                          da if dh is None else dh)  # (da: a stand-in never written)
    return da, dx, dh


# -- softmax family --------------------------------------------------------------------------
@njit(cache=True)
def _softmax_rows(x, out, log):
    for i in range(x.shape[0]):
        m = x[i, 0]
        for k in range(1, x.shape[1]):
            if x[i, k] > m:
                m = x[i, k]
        s = 0.0
        for k in range(x.shape[1]):
            s += math.exp(x[i, k] - m)
        if log:
            ls = math.log(s)
            for k in range(x.shape[1]):
                out[i, k] = x[i, k] - m - ls
        else:
            for k in range(x.shape[1]):
                out[i, k] = math.exp(x[i, k] - m) / s


def _rows_last(x: ndarray, axis: int):
    axis = normalize_axes(axis, x.ndim)[0]
    moved = np.moveaxis(x, axis, -1)
    return np.ascontiguousarray(moved).reshape(-1, x.shape[axis]), moved.shape, axis


def _softmax_like(x: ndarray, axis: int, log: bool) -> ndarray:
    if x.ndim == 0:
        raise ValueError("softmax needs a tensor of rank >= 1")
    rows, moved_shape, ax = _rows_last(x, axis)
    out = np.empty_like(rows)
    if rows.size:
        _softmax_rows(rows, out, log)
    return np.moveaxis(out.reshape(moved_shape), -1, ax)


def softmax(x: ndarray, axis: int = -1) -> ndarray:
    return _softmax_like(x, axis, False)


def log_softmax(x: ndarray, axis: int = -1) -> ndarray:
    return _softmax_like(x, axis, True)


@njit(cache=True)
def _sparse_xent_rows(logits, labels, loss, grad, want_grad):
    """Per-row -log softmax(logits)[label]; grad = softmax - onehot. Returns a bad label or -1."""
    c = logits.shape[1]
    for i in range(logits.shape[0]):
        lab = labels[i]
        if lab < 0 or lab >= c:
            return i
        m = logits[i, 0]
        for k in range(1, c):
            if logits[i, k] > m:
                m = logits[i, k]
        s = 0.0
        for k in range(c):
            s += math.exp(logits[i, k] - m)
        ls = math.log(s)
        loss[i] = ls + m - logits[i, lab]
        if want_grad:
            for k in range(c):
                grad[i, k] = math.exp(logits[i, k] - m - ls)
            grad[i, lab] -= 1.0
    return -1


def _check_xent(logits: ndarray, labels: ndarray):
    if logits.ndim != 2:
        raise ValueError(f"logits must have shape (batch, classes), got {logits.shape}")
    if labels.shape != logits.shape[:1]:
        raise ValueError(f"labels must have shape ({logits.shape[0]},) to match logits "
                         f"{logits.shape}, got {labels.shape}")
    if labels.dtype.kind not in "iu":
        raise TypeError(f"labels must be integers (class indices), got {labels.dtype}")
    if logits.shape[1] == 0:
        raise ValueError("logits must have at least one class")


@njit(cache=True)
def _sparse_xent_grad_rows(logits, labels, g, grad):
    """(softmax(logits) - one_hot(labels)) * g[:, None] row by row; -1, or the first row
    whose label is out of range. Each value is rounded to the logits' dtype before it is
    scaled, exactly as computing the gradient and then multiplying by g would."""
    c = logits.shape[1]
    for i in range(logits.shape[0]):
        lab = labels[i]
        if lab < 0 or lab >= c:
            return i
        m = logits[i, 0]
        for k in range(1, c):
            if logits[i, k] > m:
                m = logits[i, k]
        s = 0.0
        for k in range(c):
            s += math.exp(logits[i, k] - m)
        ls = math.log(s)
        for k in range(c):
            grad[i, k] = math.exp(logits[i, k] - m - ls)
        grad[i, lab] -= 1.0
        for k in range(c):
            grad[i, k] *= g[i]
    return -1


def sparse_softmax_cross_entropy_grad(logits: ndarray, labels: ndarray, g: ndarray) -> ndarray:
    """The gradient of the per-row loss scaled by the incoming gradient ``g`` (batch,)."""
    _check_xent(logits, labels)
    logits = np.ascontiguousarray(logits)
    if labels.dtype != np.int64:
        labels = labels.astype(np.int64)
    g = np.asarray(g)
    if g.shape != logits.shape[:1] or g.dtype != logits.dtype:
        # Any other g broadcasts as NumPy would against (batch, 1), possibly adding rows.
        _, grad = sparse_softmax_cross_entropy(logits, labels, want_grad=True)
        return np.multiply(grad, np.reshape(g, (-1, 1)), dtype=grad.dtype)
    grad = np.empty_like(logits)
    bad = _sparse_xent_grad_rows(logits, labels, g, grad)
    if bad >= 0:
        raise ValueError(f"Received a label value of {labels[bad]} which is outside the valid "
                         f"range of [0, {logits.shape[1]}) (row {bad})")
    return grad


def sparse_softmax_cross_entropy(logits, labels, want_grad=False):
    _check_xent(logits, labels)
    logits = np.ascontiguousarray(logits)
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    loss = np.empty(logits.shape[0], logits.dtype)
    grad = np.empty_like(logits) if want_grad else np.empty((0, 0), logits.dtype)
    bad = _sparse_xent_rows(logits, labels, loss, grad, want_grad)
    if bad >= 0:
        raise ValueError(f"Received a label value of {labels[bad]} which is outside the valid "
                         f"range of [0, {logits.shape[1]}) (row {bad})")
    return (loss, grad) if want_grad else loss
