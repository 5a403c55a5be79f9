"""Elementwise ops: arithmetic, math functions, comparisons, ``where`` and ``cast``.

All broadcast like NumPy. Dtypes: each op has a *compute* rule applied after PyTorch-style
promotion (:func:`kernelgraph.dtypes.promote`): ``_floating`` makes integers and bools
float32, as PyTorch does for ``exp`` or true division; ``_logical`` keeps bools bool, so
``b + b`` is a logical or and ``b * b`` a logical and (the bool loop of the same scalar body
stores any nonzero result as True); ``_arith`` counts bools as int64. Bools are refused
where PyTorch refuses them: ``b - x``, ``x - b``, ``-b``, ``abs``, ``relu`` and ``b ** b``
raise :class:`kernelgraph.dtypes.DtypeError` with PyTorch's message.
"""

from __future__ import annotations

import numpy as np

from .. import devices
from .. import dtypes as D
from ..kernels import cpu
from . import shapes
from .registry import define

ndarray = np.ndarray


def _arith(dt):
    return D.int64 if dt is D.bool_ else dt


def _logical(dt):
    return dt


def _refuse_bool(message: str):
    """A compute rule that keeps the dtype but refuses bools, in PyTorch's words."""
    def rule(dt):
        if dt is D.bool_:
            raise D.DtypeError(message)
        return dt
    return rule


_NEG_RULE = _refuse_bool("Negation, the `-` operator, on a bool tensor is not supported. If "
                         "you are trying to invert a mask, use the `~` or `logical_not()` "
                         "operator instead.")
_ABS_RULE = _refuse_bool('"abs_cpu" not implemented for \'Bool\'')
_RELU_RULE = _refuse_bool("Boolean inputs not supported for relu")
_POW_RULE = _refuse_bool('"pow" not implemented for \'Bool\'')


class IntegerPowerError(ValueError, RuntimeError):
    """An integer to a negative integer power: a RuntimeError, as PyTorch raises, and a
    ValueError (the values, not the dtypes, are at fault)."""


def _is_bool(v) -> bool:
    return v.dtype == D.bool_ if _is_array(v) else isinstance(v, bool | np.bool_)


def check_sub(values) -> None:
    """PyTorch refuses a subtraction with any bool operand, tensor or Python bool."""
    bools = sum(1 for v in values if _is_bool(v))
    if bools:
        _refuse_sub(bools)


def _refuse_sub(bools: int):
    if bools == 2:
        raise D.DtypeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    raise D.DtypeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                       "If you are trying to invert a mask, use the `~` or `logical_not()` "
                       "operator instead.")


def _floating(dt):
    return dt if dt in D.FLOATS else D.float32


def _any(dt):
    return dt


def _is_array(v) -> bool:
    return isinstance(v, ndarray) or devices.is_cuda_array(v)


def _operand_dtype(values):
    """The promoted dtype of arrays (host or device) and weak Python scalars."""
    # An array of a dtype kernelgraph does not keep (a raw '>i4' or float16 array) counts
    # as the kept dtype that holds its values (_to converts it exactly or refuses).
    arrays = [_kept(v.dtype) for v in values if _is_array(v)]
    if not arrays:
        scalar = [D.scalar_dtype(v) for v in values]
        if None in scalar:
            bad = next(v for v in values if D.scalar_dtype(v) is None)
            raise TypeError(f"expected tensors or Python numbers, got {type(bad).__name__}")
        arrays = scalar
    dt = arrays[0]
    for d in arrays[1:]:
        dt = D.promote(dt, d)
    for v in values:
        if not _is_array(v):
            dt = D.promote_with_scalar(dt, v)
    return D.as_dtype(dt)


def _kept(dt):
    if dt in D.KEPT:
        return D.as_dtype(dt)
    return D.kept_dtype(dt) or D.as_dtype(dt)  # as_dtype names what is not supported


def _to(value, dt):
    if isinstance(value, ndarray):
        if value.dtype not in D.KEPT:
            return D.convert(value, dt, what="an operand")  # exactly, or refused
        return value if value.dtype == dt else value.astype(dt)
    return value if isinstance(value, float | int | bool) else np.asarray(value, dt)


def _call_kernel(kernel, compute, values):
    """The general path: promote, cast to the compute dtype, compile the loop if new, run."""
    cd = compute(_operand_dtype(values))
    args = [_to(v, cd) for v in values]
    if not any(isinstance(a, ndarray) for a in args):
        args[0] = np.asarray(args[0], cd)
    u = kernel.by_dtype.get(cd) or kernel.compile(cd)
    out = u(*args)
    return out if type(out) is ndarray else np.asarray(out)


def _unary_forward(kernel, compute):
    by = kernel.by_dtype

    def forward(x):
        if type(x) is ndarray:  # fast path: a dtype the loop already exists for
            u = by.get(x.dtype)
            if u is not None:
                out = u(x)
                return out if type(out) is ndarray else np.asarray(out)
        return _call_kernel(kernel, compute, (x,))

    forward.kernel = kernel  # a compiled plan calls the ufunc loops directly
    return forward


def _binary_forward(kernel, compute):
    by = kernel.by_dtype

    def forward(x, y):
        # Fast paths: two arrays of one dtype, or an array and a Python number that cannot
        # change its dtype (NumPy treats Python numbers as "weak", as kernelgraph does).
        if type(x) is ndarray:
            ty, dt = type(y), x.dtype
            if (ty is ndarray and y.dtype is dt) or (ty is float and dt.kind == "f") or (
                    ty is int and dt.kind in "fi"):
                u = by.get(dt)
                if u is not None:
                    out = u(x, y)
                    return out if type(out) is ndarray else np.asarray(out)
        return _call_kernel(kernel, compute, (x, y))

    forward.kernel = kernel  # the eager hot path reads the ufunc loops directly
    return forward


def _unary_infer(compute, out=None):
    def infer(shapes_, dtypes, attrs):
        cd = compute(dtypes[0])
        return shapes_[0], out or cd
    return infer


def _binary_infer(name, compute, out=None):
    def infer(shapes_, dtypes, attrs):
        cd = compute(D.promote(dtypes[0], dtypes[1]))
        return shapes.broadcast(shapes_[0], shapes_[1], name), out or cd
    return infer


def unary(name, kernel, compute, grad, doc):
    return define(name, _unary_forward(kernel, compute), _unary_infer(compute), grad,
                  elementwise=True, doc=doc)


def binary(name, kernel, compute, grad, doc, out=None):
    return define(name, _binary_forward(kernel, compute), _binary_infer(name, compute, out),
                  grad, elementwise=True, doc=doc)


def _is_tensor(v):
    return not isinstance(v, int | float | bool)


# -- gradient rules: (g, out, needs, attrs, *inputs) -> one gradient (or None) per input -----
def _add_grad(g, out, needs, attrs, x, y):
    return g, g


def _sub_grad(g, out, needs, attrs, x, y):
    return g, (neg(g) if needs[1] else None)


def _mul_grad(g, out, needs, attrs, x, y):
    return (mul(g, y) if needs[0] else None), (mul(g, x) if needs[1] else None)


def _div_grad(g, out, needs, attrs, x, y):
    return ((div(g, y) if needs[0] else None),
            (neg(div(mul(g, out), y)) if needs[1] else None))


def _pow_grad(g, out, needs, attrs, x, y):
    gx = gy = None
    if needs[0]:
        if _is_tensor(y) and y.dtype == D.bool_:
            y = cast(y, dtype=x.dtype)  # a bool exponent is 0 or 1; bool - 1 is refused
        y_minus_1 = sub(y, 1) if _is_tensor(y) else y - 1
        gx = mul(g, mul(y, pow(x, y_minus_1)))
    if needs[1]:
        # A Python-number base (eager ``2 ** t``) stays a number: ``log(2)`` would dispatch
        # to the eager front-end and hand a Tensor to an array computation.
        log_x = log(x) if _is_tensor(x) else _scalar_log(x)
        gy = mul(g, mul(out, log_x))
    return gx, gy


def _scalar_log(x) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.log(np.float64(x)))  # -inf at 0 and nan below, like the log op


def _tie_share(g, x, y):
    # PyTorch's rule for maximum and minimum: a tie splits g evenly between x and y, and
    # where either is NaN (neither compares smaller) both get all of it. The zeros are an
    # array, not the number 0: numba's ufunc loop for a broadcast (stride 0) operand does
    # not vectorize, and where() then branches on every element of random data.
    share = where(equal(x, y), mul(g, 0.5), g)
    return share, zeros_like(share)


def _maximum_grad(g, out, needs, attrs, x, y):
    share, zero = _tie_share(g, x, y)
    return ((where(less(x, y), zero, share) if needs[0] else None),
            (where(greater(x, y), zero, share) if needs[1] else None))


def _minimum_grad(g, out, needs, attrs, x, y):
    share, zero = _tie_share(g, x, y)
    return ((where(greater(x, y), zero, share) if needs[0] else None),
            (where(less(x, y), zero, share) if needs[1] else None))


add = binary("add", cpu.add, _logical, _add_grad,
             "x + y, broadcasting; for two bools a logical or, as in PyTorch.")
sub = binary("sub", cpu.sub, _arith, _sub_grad,
             "x - y, broadcasting; a bool operand is refused, as in PyTorch.")
mul = binary("mul", cpu.mul, _logical, _mul_grad,
             "x * y, broadcasting; for two bools a logical and, as in PyTorch.")
div = binary("div", cpu.div, _floating, _div_grad, "x / y (true division), broadcasting.")
pow = binary("pow", cpu.pow, _POW_RULE, _pow_grad,  # noqa: A001
             "x ** y, broadcasting; a bool to a bool tensor's power is refused, as in "
             "PyTorch (a bool tensor to a Python bool power is computed, as PyTorch does, in "
             "eager mode; a graph node refuses it, as TF1 has no bool pow); integer powers "
             "wrap on overflow and refuse negative exponents.")
_pow_kernel_forward = pow.forward
_sub_kernel_forward = sub.forward
_sub_infer = sub.infer


def _sub_forward(x, y):
    # The common case, two non-bool host arrays or a float, in a few type checks.
    tx, ty = type(x), type(y)
    if not ((tx is float or (tx is ndarray and x.dtype.kind != "b")) and
            (ty is float or (ty is ndarray and y.dtype.kind != "b"))):
        check_sub((x, y))
    return _sub_kernel_forward(x, y)


def _sub_checked_infer(shapes_, dtypes, attrs):
    bools = (dtypes[0] is D.bool_) + (dtypes[1] is D.bool_)
    if bools:
        _refuse_sub(bools)
    return _sub_infer(shapes_, dtypes, attrs)


_sub_forward.kernel = _sub_kernel_forward.kernel
sub.forward = _sub_forward
sub.infer = _sub_checked_infer


def _pow_forward(x, y):
    if type(y) is bool and _is_array(x) and x.dtype == D.bool_:
        # PyTorch computes a bool tensor to a Python bool power (x, or all True) while it
        # refuses a bool tensor exponent; a graph node follows TF1, which has no bool pow.
        return x.copy() if y else np.ones(x.shape, D.bool_)
    if _is_int(x, True) and _is_int(y):
        # An integer (or bool) to a negative integer power has no integer answer; PyTorch
        # (for a number exponent) and TF1 refuse it.
        if np.any(np.asarray(y) < 0):
            raise IntegerPowerError("Integers to negative integer powers are not allowed. "
                                    "Cast the base to a float dtype first.")
        return _ipow_kernel_forward(x, y)
    return _pow_kernel_forward(x, y)


def _is_int(v, or_bool: bool = False):
    """Whether ``v`` is an integer array or Python int (or a bool one, with ``or_bool``)."""
    if isinstance(v, ndarray):
        return v.dtype.kind in ("iub" if or_bool else "iu")
    return isinstance(v, int) and (or_bool or not isinstance(v, bool))


_ipow_kernel_forward = _binary_forward(cpu.ipow, _POW_RULE)


_pow_forward.kernel = _pow_kernel_forward.kernel
pow.forward = _pow_forward
maximum = binary("maximum", cpu.maximum, _logical, _maximum_grad,
                 "Elementwise max of x, y; NaN if either is NaN. As in PyTorch, a tie splits "
                 "the gradient evenly, and at a NaN both inputs get all of it.")
minimum = binary("minimum", cpu.minimum, _logical, _minimum_grad,
                 "Elementwise min of x, y; NaN if either is NaN. As in PyTorch, a tie splits "
                 "the gradient evenly, and at a NaN both inputs get all of it.")

neg = unary("neg", cpu.neg, _NEG_RULE, lambda g, out, needs, attrs, x: (neg(g),),
            "-x (a bool is refused, as in PyTorch).")
exp = unary("exp", cpu.exp, _floating, lambda g, out, needs, attrs, x: (mul(g, out),), "e**x.")
log = unary("log", cpu.log, _floating, lambda g, out, needs, attrs, x: (div(g, x),),
            "Natural logarithm (-inf at 0, nan below).")
sqrt = unary("sqrt", cpu.sqrt, _floating,
             lambda g, out, needs, attrs, x: (div(g, mul(out, 2.0)),), "Square root.")
tanh = unary("tanh", cpu.tanh, _floating,
             lambda g, out, needs, attrs, x: (tanh_grad(out, g),), "Hyperbolic tangent.")
sigmoid = unary("sigmoid", cpu.sigmoid, _floating,
                lambda g, out, needs, attrs, x: (sigmoid_grad(out, g),), "1 / (1 + e**-x).")
relu = unary("relu", cpu.relu, _RELU_RULE,
             lambda g, out, needs, attrs, x: (relu_grad(x, g),),
             "max(x, 0); NaN stays NaN and -0.0 stays -0.0, as in PyTorch.")
abs = unary("abs", cpu.abs, _ABS_RULE,  # noqa: A001
            lambda g, out, needs, attrs, x: (mul(g, sign(x)),), "|x|.")
sign = unary("sign", cpu.sign, _logical, None,
             "-1, 0 or 1 by the sign of x (no gradient); a bool stays bool.")

# Fused gradient ops (TensorFlow has the same: TanhGrad, SigmoidGrad, ReluGrad): one kernel
# instead of three for the backward pass, and differentiable again for second derivatives.
tanh_grad = binary(
    "tanh_grad", cpu.tanh_grad, _floating,
    lambda gg, out, needs, attrs, y, g: (mul(mul(gg, g), mul(y, -2.0)), tanh_grad(y, gg)),
    "g * (1 - y**2): the gradient of tanh given its output y.")
sigmoid_grad = binary(
    "sigmoid_grad", cpu.sigmoid_grad, _floating,
    lambda gg, out, needs, attrs, y, g: (mul(mul(gg, g), sub(1.0, mul(y, 2.0))),
                                         sigmoid_grad(y, gg)),
    "g * y * (1 - y): the gradient of sigmoid given its output y.")
relu_grad = binary(
    "relu_grad", cpu.relu_grad, _arith,
    lambda gg, out, needs, attrs, x, g: (None, relu_grad(x, gg)),
    "0 where x <= 0, else g (so g at NaN, as in PyTorch): the gradient of relu.")

equal = binary("equal", cpu.equal, _any, None, "x == y elementwise (bool).", out=D.bool_)
not_equal = binary("not_equal", cpu.not_equal, _any, None, "x != y (bool).", out=D.bool_)
less = binary("less", cpu.less, _any, None, "x < y (bool).", out=D.bool_)
less_equal = binary("less_equal", cpu.less_equal, _any, None, "x <= y (bool).", out=D.bool_)
greater = binary("greater", cpu.greater, _any, None, "x > y (bool).", out=D.bool_)
greater_equal = binary("greater_equal", cpu.greater_equal, _any, None, "x >= y (bool).",
                       out=D.bool_)


# -- where -----------------------------------------------------------------------------------
def _where_forward(cond, x, y):
    if type(cond) is ndarray and cond.dtype == D.bool_ and type(x) is ndarray:
        # Fast path (a masked RNN state): y an array of x's dtype, or a Python number that
        # cannot change it; bool x takes the general path.
        dt, ty = x.dtype, type(y)
        if dt.kind in "fi" and ((ty is ndarray and y.dtype is dt) or (ty is float and
                                                                     dt.kind == "f")):
            u = cpu.where.by_dtype.get(dt)
            if u is not None:
                out = u(cond, x, y)
                return out if type(out) is ndarray else np.asarray(out)
    if not (isinstance(cond, ndarray) and cond.dtype == D.bool_):
        cond = np.asarray(cond).astype(D.bool_)
    cd = _operand_dtype((x, y))  # bools stay bool, as in PyTorch
    # Python numbers as 0-d arrays: the loop's dtype is chosen, not NumPy's for a number.
    x, y = (v.astype(cd, copy=False) if isinstance(v, ndarray) else np.asarray(v, cd)
            for v in (x, y))
    u = cpu.where.by_dtype.get(cd) or cpu.where.compile(cd)
    out = u(cond, x, y)
    return out if type(out) is ndarray else np.asarray(out)


def _where_infer(shapes_, dtypes, attrs):
    shape = shapes.broadcast_all(shapes_, "where")
    return shape, D.promote(dtypes[1], dtypes[2])


def _where_grad(g, out, needs, attrs, cond, x, y):
    return (None, (where(cond, g, 0) if needs[1] else None),
            (where(cond, 0, g) if needs[2] else None))


where = define("where", _where_forward, _where_infer, _where_grad, elementwise=True,
               doc="Elementwise choice: x where cond is true, else y (broadcasting).")


# -- cast ------------------------------------------------------------------------------------
def _cast_forward(x, dtype):
    return np.asarray(x).astype(D.as_dtype(dtype))  # as_dtype: only the dtypes we support


def _cast_grad(g, out, needs, attrs, x):
    return (cast(g, dtype=x.dtype) if x.dtype in D.FLOATS else None),


cast = define("cast", _cast_forward, lambda s, d, attrs: (s[0], D.as_dtype(attrs["dtype"])),
              _cast_grad, elementwise=True, attr_names=("dtype",),
              doc="Convert to ``dtype`` (a copy).")


def _like_forward(fill):
    return lambda x: np.full(np.shape(x), fill, dtype=np.asarray(x).dtype)


zeros_like = define("zeros_like", _like_forward(0), lambda s, d, attrs: (s[0], d[0]), None,
                    doc="Zeros of x's shape and dtype.")
ones_like = define("ones_like", _like_forward(1), lambda s, d, attrs: (s[0], d[0]), None,
                   doc="Ones of x's shape and dtype.")
identity = define("identity", lambda x: x, lambda s, d, attrs: (s[0], d[0]),
                  lambda g, out, needs, attrs, x: (g,), view=True, doc="x itself.")


def square(x):
    """x * x; a bool squares to int64, as ``torch.square`` (b ** 2) does, not to b * b."""
    if getattr(x, "dtype", None) == D.bool_:
        x = cast(x, dtype=D.int64)
    return mul(x, x)
