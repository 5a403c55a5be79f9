"""The scalar bodies of the elementwise ops, and the CPU's elementwise kernels built from them.

Each elementwise op is one scalar function here (``_add``, ``_exp``, ``_relu`` ...), its
*body*. Every backend is built from these same bodies, as minitorch builds its backends
from one scalar function: numba compiles a body into *real NumPy ufuncs* for the CPU
(:class:`UfuncKernel`, below), into a ``cuda.jit(device=True)`` function for CUDA
(:mod:`kernelgraph.kernels.cuda.elementwise`), and a fused group's generated kernel calls
the bodies of its members (:mod:`kernelgraph.static.fusion`, which hashes this file into
the names of the kernels it generates). An op's card names its body and its ufuncs
(``op.scalar``, ``op.loops``).

As ufuncs, NumPy does broadcasting, strides and dispatch (~230 ns a call, less than numba's
own dispatcher), while the loop body is numba code. Loops are compiled per dtype on first
use, because compiling every op for every dtype at import would take seconds.

The CPU's other kernels live by family next to this module (:mod:`.reduce`, :mod:`.linalg`,
:mod:`.nn`, :mod:`.rnn`, :mod:`.conv`, :mod:`.indexing`, :mod:`.lstm`, :mod:`.rnn_scan`);
the names compiled plans and tests read as ``kernels.cpu.X`` are re-exported here.
"""

from __future__ import annotations

import math
import warnings

import numba
import numpy as np

# The other families, re-exported for the compiled plans and tests that read kernels.cpu.X.
from ..shapes import normalize_axes, reduced_shape  # noqa: F401
from . import ufunc_cache
from .linalg import BLAS_DTYPES, _matmul_batched, matmul, matmul_2d, matmul_shape  # noqa: F401
from .loops import PARALLEL_MIN_WORK, ByWork, by_work  # noqa: F401
from .reduce import (  # noqa: F401
    _sum_middle,
    _sum_rows,
    reduce_max,
    reduce_mean,
    reduce_sum,
    sum_leading,
    sum_rows_2d,
)

ndarray = np.ndarray
# The builtin, saved before the `abs` kernel below shadows it (numba resolves `_abs`'s
# global at compile time, when the module-level name is already the kernel).
_builtin_abs = abs


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
        # A plain NumPy ufunc (numba's DUFunc around it costs ~4x as much a call), kept whole
        # on disk: the next process loads it instead of compiling its loop (ufunc_cache).
        ufunc = ufunc_cache.build(self.fn, sig)[0]
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


def _softplus(a):
    # PyTorch's threshold (beta 1): past 20, log1p(exp(a)) equals a to float64's precision,
    # and exp would overflow long before a reaches float32's largest values.
    return a if a > 20 else math.log1p(math.exp(a))


# The math of PyTorch's beginner material (issue 21). The guards give NaN or -inf outside
# a function's domain where Python's math (the CUDA simulator's) would raise.
def _sin(a): return math.sin(a)
def _cos(a): return math.cos(a)
def _tan(a): return math.tan(a)
def _asin(a): return math.asin(a) if -1 <= a <= 1 else math.nan
def _acos(a): return math.acos(a) if -1 <= a <= 1 else math.nan
def _atan(a): return math.atan(a)
def _sinh(a): return math.sinh(a)
def _cosh(a): return math.cosh(a)
def _erf(a): return math.erf(a)
def _atan2(a, b): return math.atan2(a, b)
def _reciprocal(a): return 1 / a
def _rsqrt(a): return 1 / math.sqrt(a) if a >= 0 else math.nan
def _log2(a): return math.log2(a) if a > 0 else (-math.inf if a == 0 else math.nan)
def _log10(a): return math.log10(a) if a > 0 else (-math.inf if a == 0 else math.nan)
def _log1p(a): return math.log1p(a) if a > -1 else (-math.inf if a == -1 else math.nan)
def _expm1(a): return math.expm1(a)


# Rounding. Not math.floor/trunc: numba types those as integers (NaN and Inf would not
# survive). Floor division by 1 is floor in floats (and the identity on integers); Inf and
# NaN come back as they are; the sign of a zero result follows the input, as in PyTorch.
def _floor(a): return a if a - a != 0 else a // 1
def _ceil(a): return a if a - a != 0 else -((-a) // 1)


def _trunc(a):
    if a - a != 0:
        return a
    return a // 1 if a >= 0 else -((-a) // 1)


def _round(a):
    # Half to even, as torch.round (and np.round): 0.5 -> 0, 1.5 -> 2, -0.4 -> -0.0.
    if a - a != 0:
        return a
    r = a // 1
    d = a - r
    if d > 0.5 or (d == 0.5 and r % 2 != 0):
        r = r + 1
        if r == 0:
            return a * 0  # -0.0 for a negative a
    return r


def _floor_divide(a, b): return a // b  # Python's (and PyTorch's) floor, for any dtype


def _remainder(a, b):
    # Python's %: the sign of the divisor, as torch.remainder; but a zero result takes the
    # sign of a, as PyTorch's (C's fmod, then adjusted) does, where Python's takes b's.
    r = a % b
    return r if r != 0 else a * 0


def _invert(a): return ~a  # integers only: order-reversing, no overflow (argmin)


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
softplus = UfuncKernel("softplus", _softplus, _same(1))
relu = UfuncKernel("relu", _relu, _same(1))
sin = UfuncKernel("sin", _sin, _same(1))
cos = UfuncKernel("cos", _cos, _same(1))
tan = UfuncKernel("tan", _tan, _same(1))
asin = UfuncKernel("asin", _asin, _same(1))
acos = UfuncKernel("acos", _acos, _same(1))
atan = UfuncKernel("atan", _atan, _same(1))
sinh = UfuncKernel("sinh", _sinh, _same(1))
cosh = UfuncKernel("cosh", _cosh, _same(1))
erf = UfuncKernel("erf", _erf, _same(1))
floor_divide = UfuncKernel("floor_divide", _floor_divide, _same(2))
remainder = UfuncKernel("remainder", _remainder, _same(2))
atan2 = UfuncKernel("atan2", _atan2, _same(2))
reciprocal = UfuncKernel("reciprocal", _reciprocal, _same(1))
rsqrt = UfuncKernel("rsqrt", _rsqrt, _same(1))
log2 = UfuncKernel("log2", _log2, _same(1))
log10 = UfuncKernel("log10", _log10, _same(1))
log1p = UfuncKernel("log1p", _log1p, _same(1))
expm1 = UfuncKernel("expm1", _expm1, _same(1))
floor = UfuncKernel("floor", _floor, _same(1))
ceil = UfuncKernel("ceil", _ceil, _same(1))
trunc = UfuncKernel("trunc", _trunc, _same(1))
round = UfuncKernel("round", _round, _same(1))  # noqa: A001 - the op's name
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


