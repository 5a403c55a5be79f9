"""The common unary math of PyTorch's beginner material, and ``atan2``: each a full
elementwise op (a scalar body in :mod:`kernelgraph.kernels.cpu`, a card made by
:func:`~kernelgraph.ops.elementwise.unary`, its CUDA map, a NumPy reference and a gradient
written with the public ops).

Dtypes as PyTorch's: the trigonometric, hyperbolic, logarithmic and exponential functions,
``erf``, ``reciprocal`` and ``rsqrt`` compute integers and bools in float32; ``floor ceil
round trunc`` keep integers as they are (a copy) and refuse bools, in PyTorch's words. Their
gradient is zero, as PyTorch's is. :mod:`.elementwise` re-exports every name here, so
``kg.sin`` and ``kg.ops.sin`` are these cards.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from ..kernels import cpu
from ..kernels import reference as R
from .elementwise import (
    _TORCH_NAMES,
    _binary_forward,
    _floating,
    abs,
    add,
    binary,
    div,
    equal,
    exp,
    greater,
    greater_equal,
    less,
    less_equal,
    mul,
    neg,
    not_equal,
    sub,
    unary,
    zeros_like,
)

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_MATH = ("fusable", "transcendental", "method")


class NotImplementedForDtype(D.DtypeError, NotImplementedError):
    """A dtype an op has no kernel for: PyTorch raises NotImplementedError (a RuntimeError)
    for these, and kernelgraph's DtypeError is a TypeError too."""


def _integral(name: str):
    """The dtype rule of the rounding ops: floats and integers keep their dtype (an integer
    is its own floor), bools are refused as PyTorch refuses them."""
    def rule(dt):
        if dt is D.bool_:
            raise NotImplementedForDtype(f'"{name}_vml_cpu" not implemented for '
                               f"'{_TORCH_NAMES[D.bool_]}'")
        return dt
    return rule


def _zero_grad(g, out, needs, attrs, x):
    return (zeros_like(g),)  # piecewise constant: PyTorch's gradient is zero everywhere


def _one_minus_square(x):
    return sub(1.0, mul(x, x))


sin = unary("sin", cpu.sin, _floating, lambda g, out, needs, attrs, x: (mul(g, cos(x)),),
            "Sine (radians).", _MATH, np.sin, saves=(0,))
cos = unary("cos", cpu.cos, _floating,
            lambda g, out, needs, attrs, x: (neg(mul(g, sin(x))),), "Cosine (radians).",
            _MATH, np.cos, saves=(0,))
tan = unary("tan", cpu.tan, _floating,
            lambda g, out, needs, attrs, x: (mul(g, add(mul(out, out), 1.0)),),
            "Tangent (radians); its gradient is 1 + tan(x)**2, from the result, as PyTorch's.",
            _MATH, np.tan, saves=("out",))
asin = unary("asin", cpu.asin, _floating,
             lambda g, out, needs, attrs, x: (mul(g, rsqrt(_one_minus_square(x))),),
             "Arcsine; NaN outside [-1, 1].", _MATH, np.arcsin, saves=(0,))
acos = unary("acos", cpu.acos, _floating,
             lambda g, out, needs, attrs, x: (neg(mul(g, rsqrt(_one_minus_square(x)))),),
             "Arccosine; NaN outside [-1, 1].", _MATH, np.arccos, saves=(0,))
atan = unary("atan", cpu.atan, _floating,
             lambda g, out, needs, attrs, x: (div(g, add(mul(x, x), 1.0)),), "Arctangent.",
             _MATH, np.arctan, saves=(0,))
sinh = unary("sinh", cpu.sinh, _floating,
             lambda g, out, needs, attrs, x: (mul(g, cosh(x)),), "Hyperbolic sine.",
             _MATH, np.sinh, saves=(0,))
cosh = unary("cosh", cpu.cosh, _floating,
             lambda g, out, needs, attrs, x: (mul(g, sinh(x)),), "Hyperbolic cosine.",
             _MATH, np.cosh, saves=(0,))
erf = unary("erf", cpu.erf, _floating,
            lambda g, out, needs, attrs, x: (mul(g, mul(exp(neg(mul(x, x))),
                                                        _TWO_OVER_SQRT_PI)),),
            "The error function, 2/sqrt(pi) * integral of exp(-t**2) from 0 to x.",
            _MATH, R.erf, saves=(0,))
reciprocal = unary("reciprocal", cpu.reciprocal, _floating,
                   lambda g, out, needs, attrs, x: (neg(mul(g, mul(out, out))),),
                   "1 / x (integers and bools in float32, as in PyTorch); inf at 0.",
                   ("fusable", "method"), np.reciprocal, saves=("out",))
rsqrt = unary("rsqrt", cpu.rsqrt, _floating,
              lambda g, out, needs, attrs, x: (mul(g, mul(mul(out, mul(out, out)), -0.5)),),
              "1 / sqrt(x); inf at 0, NaN below.", _MATH, R.rsqrt, saves=("out",))
log2 = unary("log2", cpu.log2, _floating,
             lambda g, out, needs, attrs, x: (div(g, mul(x, _LN2)),),
             "Base-2 logarithm (-inf at 0, NaN below).", _MATH, np.log2, saves=(0,))
log10 = unary("log10", cpu.log10, _floating,
              lambda g, out, needs, attrs, x: (div(g, mul(x, _LN10)),),
              "Base-10 logarithm (-inf at 0, NaN below).", _MATH, np.log10, saves=(0,))
log1p = unary("log1p", cpu.log1p, _floating,
              lambda g, out, needs, attrs, x: (div(g, add(x, 1.0)),),
              "log(1 + x), exact for small x (-inf at -1, NaN below).", _MATH, np.log1p, saves=(0,))
expm1 = unary("expm1", cpu.expm1, _floating,
              lambda g, out, needs, attrs, x: (mul(g, add(out, 1.0)),),
              "e**x - 1, exact for small x.", _MATH, np.expm1, saves=("out",))

floor = unary("floor", cpu.floor, _integral("floor"), _zero_grad,
              "The largest integer <= x (integers unchanged; bools refused, as in PyTorch); "
              "its gradient is zero.", ("fusable", "method"), np.floor, saves=())
ceil = unary("ceil", cpu.ceil, _integral("ceil"), _zero_grad,
             "The smallest integer >= x (integers unchanged); its gradient is zero.",
             ("fusable", "method"), np.ceil, saves=())
trunc = unary("trunc", cpu.trunc, _integral("trunc"), _zero_grad,
              "x rounded towards zero (integers unchanged); its gradient is zero.",
              ("fusable", "method"), np.trunc, saves=())
round_op = unary("round", cpu.round, _integral("round"), _zero_grad,
              "x rounded to the nearest integer, halves to even (0.5 -> 0, 1.5 -> 2), as "
              "torch.round and np.round; integers unchanged; its gradient is zero.",
              ("fusable", "method"), np.round, saves=())


def round(input, *, decimals: int = 0):  # noqa: A001, A002 - PyTorch's names
    """``torch.round``: to the nearest integer, halves to even (the card ``round``), or with
    ``decimals`` to that many decimal places (negative: tens, hundreds ...), as PyTorch
    computes it: ``round(x * 10**d) / 10**d`` in x's dtype; floats only then.

    >>> import kernelgraph as kg
    >>> kg.round(kg.tensor([0.5, 1.5, -0.4])).tolist()
    [0.0, 2.0, -0.0]
    >>> kg.round(kg.tensor([1.2345]), decimals=2).tolist()
    [1.2300000190734863]
    """
    if not decimals:
        return round_op(input)
    dt = getattr(input, "dtype", None)
    if dt is not None and D.as_dtype(dt) not in D.FLOATS:
        raise NotImplementedForDtype(f'"round_cpu" not implemented for '
                                     f"'{_TORCH_NAMES.get(D.as_dtype(dt), dt)}'")
    scale = 10.0 ** builtins_abs(decimals)
    if decimals > 0:
        return div(round_op(mul(input, scale)), scale)
    return mul(round_op(div(input, scale)), scale)


def builtins_abs(n: int) -> int:
    """Python's ``abs`` of an int (this module's ``abs`` is the op)."""
    return -n if n < 0 else n


def _atan2_grad(g, out, needs, attrs, y, x):
    scale = div(g, add(mul(x, x), mul(y, y)))
    return ((mul(scale, x) if needs[0] else None),
            (neg(mul(scale, y)) if needs[1] else None))


atan2 = binary("atan2", cpu.atan2, _floating, _atan2_grad,
               "The angle of the point (x, y): atan2(y, x), broadcasting, in (-pi, pi].",
               ("fusable", "transcendental", "method"), np.arctan2, saves=(0, 1))

# -- floor division and remainder (the // and % of both frameworks) --------------------------
class IntegerDivisionByZero(ZeroDivisionError, RuntimeError):
    """An integer divided by zero: PyTorch raises a RuntimeError ("ZeroDivisionError") and
    TF1 an error too; Python's own is a ZeroDivisionError."""


def _no_bool(name: str):
    def rule(dt):
        if dt is D.bool_:
            raise NotImplementedForDtype(f'"{name}_cpu" not implemented for \'Bool\'')
        return dt
    return rule


def _divisor_checked(loop_forward, has_zero):
    def forward(x, y):
        if D.operand_dtype((x, y)).kind in "iu" and has_zero(y):
            raise IntegerDivisionByZero("ZeroDivisionError (an integer divided by zero)")
        return loop_forward(x, y)
    return forward


def _host_has_zero(y) -> bool:
    return bool(np.any(np.asarray(y) == 0))


def _divisor_checked_cuda(body, rule):
    def build(k):
        return _divisor_checked(k.elementwise.binary(body, rule), k.elementwise.has_zero)
    return build


_FLOOR_RULE, _REMAINDER_RULE = _no_bool("div_floor"), _no_bool("remainder")
floor_divide = binary(
    "floor_divide", cpu.floor_divide, _FLOOR_RULE, None,
    "x // y rounded down (Python's and PyTorch's floor division; TF1's floordiv), "
    "broadcasting; an integer divided by zero is refused, a float gives inf or NaN; no "
    "gradient, as in both.", ("fusable", "method"), np.floor_divide,
    forward=_divisor_checked(_binary_forward(cpu.floor_divide, _FLOOR_RULE), _host_has_zero),
    cuda=_divisor_checked_cuda(cpu._floor_divide, _FLOOR_RULE))


def _remainder_grad(g, out, needs, attrs, x, y):
    return ((g if needs[0] else None),
            (neg(mul(g, floor_divide(x, y))) if needs[1] else None))


remainder = binary(
    "remainder", cpu.remainder, _REMAINDER_RULE, _remainder_grad,
    "x % y with the sign of y (Python's, torch.remainder, TF1's floormod), broadcasting; an "
    "integer divided by zero is refused.", ("fusable", "method"), np.remainder,
    forward=_divisor_checked(_binary_forward(cpu.remainder, _REMAINDER_RULE), _host_has_zero),
    cuda=_divisor_checked_cuda(cpu._remainder, _REMAINDER_RULE), saves=(0, 1))

# PyTorch's other names for the same cards.
eq, ne, lt, le, gt, ge = equal, not_equal, less, less_equal, greater, greater_equal
true_divide = div


def isnan(input):  # noqa: A002 - PyTorch's names
    """``torch.isnan``: where ``input`` is NaN (bool; integers never are).

    >>> import kernelgraph as kg
    >>> kg.isnan(kg.tensor([1.0, float("nan")])).tolist()
    [False, True]
    """
    return not_equal(input, input)


def isinf(input):  # noqa: A002
    """``torch.isinf``: where ``input`` is +inf or -inf (bool).

    >>> import kernelgraph as kg
    >>> kg.isinf(kg.tensor([1.0, -float("inf"), float("nan")])).tolist()
    [False, True, False]
    """
    if getattr(input, "dtype", None) not in D.FLOATS:
        return not_equal(input, input) if input.dtype != D.bool_ else logical_and(input, False)
    return equal(abs(input), math.inf)


def isfinite(input):  # noqa: A002
    """``torch.isfinite``: where ``input`` is neither NaN nor infinite (bool).

    >>> import kernelgraph as kg
    >>> kg.isfinite(kg.tensor([1.0, float("inf"), float("nan")])).tolist()
    [True, False, False]
    """
    if getattr(input, "dtype", None) not in D.FLOATS:
        return equal(input, input)
    return less(abs(input), math.inf)  # False for NaN, which compares false


def logical_not(input):  # noqa: A002
    """``torch.logical_not``: where ``input`` is zero (bool), for any dtype.

    >>> import kernelgraph as kg
    >>> kg.logical_not(kg.tensor([0, 3])).tolist()
    [True, False]
    """
    return equal(input, 0)


def _truth(v):
    return v if getattr(v, "dtype", None) == D.bool_ else not_equal(v, 0)


def logical_and(input, other):  # noqa: A002
    """``torch.logical_and``: where both are nonzero (bool).

    >>> import kernelgraph as kg
    >>> kg.logical_and(kg.tensor([1, 0, 2]), kg.tensor([True, True, False])).tolist()
    [True, False, False]
    """
    return mul(_truth(input), _truth(other))  # bool * bool: a logical and


def logical_or(input, other):  # noqa: A002
    """``torch.logical_or``: where either is nonzero (bool).

    >>> import kernelgraph as kg
    >>> kg.logical_or(kg.tensor([1, 0, 0]), kg.tensor([0.0, 0.0, 2.0])).tolist()
    [True, False, True]
    """
    return add(_truth(input), _truth(other))  # bool + bool: a logical or


def logical_xor(input, other):  # noqa: A002
    """``torch.logical_xor``: where exactly one is nonzero (bool).

    >>> import kernelgraph as kg
    >>> kg.logical_xor(kg.tensor([1, 0, 3]), kg.tensor([1, 1, 0])).tolist()
    [False, True, True]
    """
    return not_equal(_truth(input), _truth(other))


__all__ = ["acos", "asin", "atan", "atan2", "ceil", "cos", "cosh", "erf", "expm1", "floor",
           "floor_divide", "log10", "log1p", "log2", "reciprocal", "remainder", "round",
           "rsqrt", "sin", "sinh", "tan", "trunc",
           "eq", "ne", "lt", "le", "gt", "ge", "true_divide", "isnan", "isinf", "isfinite",
           "logical_not", "logical_and", "logical_or", "logical_xor"]
