"""Elementwise ops: arithmetic, math functions, comparisons, ``where`` and ``cast``.

All broadcast like NumPy. Each op's card names its scalar body (:mod:`kernelgraph.kernels.cpu`),
the CPU ufuncs built from it, its CUDA map of the same body, its NumPy reference and its
*compute* rule (:mod:`kernelgraph.dtypes`), applied after PyTorch-style promotion
(:func:`kernelgraph.dtypes.promote`) before any kernel runs: ``floating`` makes integers and
bools float32, as PyTorch does for ``exp`` or true division; ``same`` keeps bools bool, so
``b + b`` is a logical or and ``b * b`` a logical and (the bool loop of the same scalar body
stores any nonzero result as True); ``arith`` counts bools as int64. Bools are refused
where PyTorch refuses them: ``b - x``, ``x - b``, ``-b``, ``abs``, ``relu`` and ``b ** b``
raise :class:`kernelgraph.dtypes.DtypeError` with PyTorch's message.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as D
from ..errors import UnimplementedError
from ..kernels import cpu
from ..kernels import reference as R
from ..kernels import reference_grads as RG
from ..shapes import broadcast, broadcast_all
from .registry import define

ndarray = np.ndarray

# The compute rules (kernelgraph.dtypes), under the names the other op modules import.
_arith, _floating, _logical, _any = D.arith, D.floating, D.same, D.same
_NEG_RULE = D.refuse_bool("Negation, the `-` operator, on a bool tensor is not supported. If "
                          "you are trying to invert a mask, use the `~` or `logical_not()` "
                          "operator instead.")
_ABS_RULE = D.refuse_bool('"abs_cpu" not implemented for \'Bool\'')
_RELU_RULE = D.refuse_bool("Boolean inputs not supported for relu")
_POW_RULE = D.refuse_bool('"pow" not implemented for \'Bool\'')
_is_array = D.is_array
_operand_dtype = D.operand_dtype
_TORCH_NAMES = {D.bool_: "Bool", D.int32: "Int", D.int64: "Long"}


def _floats_only(name: str):
    """A compute rule that refuses integers and bools, in PyTorch's words (softplus)."""
    def rule(dt):
        if dt not in D.FLOATS:
            raise D.DtypeError(f'"{name}_cpu" not implemented for '
                               f"'{_TORCH_NAMES.get(dt, dt.name)}'")
        return dt
    return rule


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

    return forward


def _unary_infer(compute):
    def infer(shapes_, dtypes, attrs):
        return shapes_[0], compute(dtypes[0])
    return infer


def _binary_infer(name, compute, out=None):
    def infer(shapes_, dtypes, attrs):
        cd = compute(D.promote(dtypes[0], dtypes[1]))
        return broadcast(shapes_[0], shapes_[1], name), out or cd
    return infer


def _cuda_map(body, compute, out=None, arity=2):
    """The card's ``cuda``: the CUDA map of the scalar body with the same compute rule."""
    if arity == 1:
        return lambda k: k.elementwise.unary(body, compute)
    return lambda k: k.elementwise.binary(body, compute, out)


def unary(name, loops, compute, grad, doc, traits=(), reference=None, **card):
    """The card of an elementwise op of one input: the scalar body ``loops.fn`` on every
    device (its CPU ufuncs ``loops``), dtype rule ``compute``; its result is a new array."""
    return define(name, _unary_forward(loops, compute), _unary_infer(compute), grad,
                  traits=("elementwise", "fresh", *traits), scalar=loops.fn, compute=compute,
                  loops=loops, reference=reference, cuda=_cuda_map(loops.fn, compute, arity=1),
                  inputs=1, doc=doc, **card)


def binary(name, loops, compute, grad, doc, traits=(), reference=None, out=None, *,
           forward=None, infer=None, cuda=None, **card):
    """The card of a broadcasting elementwise op of two inputs (``out``: bool for the
    comparisons, else the compute dtype); ``forward``/``infer``/``cuda`` replace the plain
    promote-and-map ones where the op checks more (sub, pow)."""
    return define(name, forward or _binary_forward(loops, compute),
                  infer or _binary_infer(name, compute, out), grad,
                  traits=("elementwise", "fresh", *traits), scalar=loops.fn, compute=compute,
                  loops=loops, reference=reference,
                  cuda=cuda or _cuda_map(loops.fn, compute, out), inputs=2, doc=doc, **card)


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


# -- sub and pow: their checks before the loop, on both devices ------------------------------
_sub_loop_forward = _binary_forward(cpu.sub, _arith)
_sub_loop_infer = _binary_infer("sub", _arith)


def _sub_forward(x, y):
    # The common case, two non-bool host arrays or a float, in a few type checks.
    tx, ty = type(x), type(y)
    if not ((tx is float or (tx is ndarray and x.dtype.kind != "b")) and
            (ty is float or (ty is ndarray and y.dtype.kind != "b"))):
        check_sub((x, y))
    return _sub_loop_forward(x, y)


def _sub_infer(shapes_, dtypes, attrs):
    bools = (dtypes[0] is D.bool_) + (dtypes[1] is D.bool_)
    if bools:
        _refuse_sub(bools)
    return _sub_loop_infer(shapes_, dtypes, attrs)


def _sub_cuda(k):
    subtract = k.elementwise.binary(cpu._sub, _arith)

    def sub(x, y):
        check_sub((x, y))  # a bool operand is refused, as on the CPU (PyTorch's rule)
        return subtract(x, y)

    return sub


def _is_int(v, or_bool: bool = False):
    """Whether ``v`` is an integer array (host or device) or Python int (or a bool one, with
    ``or_bool``)."""
    if _is_array(v):
        return v.dtype.kind in ("iub" if or_bool else "iu")
    return isinstance(v, int) and (or_bool or not isinstance(v, bool))


def _negative_power():
    return IntegerPowerError("Integers to negative integer powers are not allowed. Cast the "
                             "base to a float dtype first.")


_pow_loop_forward = _binary_forward(cpu.pow, _POW_RULE)
_ipow_loop_forward = _binary_forward(cpu.ipow, _POW_RULE)


def _pow_forward(x, y):
    if type(y) is bool and _is_array(x) and x.dtype == D.bool_:
        # PyTorch computes a bool tensor to a Python bool power (x, or all True) while it
        # refuses a bool tensor exponent; a graph node follows TF1, which has no bool pow.
        return x.copy() if y else np.ones(x.shape, D.bool_)
    if _is_int(x, True) and _is_int(y):
        # An integer (or bool) to a negative integer power has no integer answer; PyTorch
        # (for a number exponent) and TF1 refuse it.
        if np.any(np.asarray(y) < 0):
            raise _negative_power()
        return _ipow_loop_forward(x, y)
    return _pow_loop_forward(x, y)


def _pow_cuda(k):
    E, core = k.elementwise, k.core
    power, ipower = E.binary(cpu._pow, _POW_RULE), E.binary(cpu._ipow, _POW_RULE)

    def pow(x, y):  # noqa: A001 - the op's name
        for v in (x, y):
            E.check_operand(v)
        if type(y) is bool and _is_array(x) and x.dtype == np.bool_:  # as on the CPU
            return core.copy(x) if y else core.full(x.shape, True, np.bool_)
        if _is_int(x, True) and _is_int(y):
            if E.has_negative(y):  # checked on the device: one int read back
                raise _negative_power()
            return ipower(x, y)  # wrapping on overflow, as on the CPU
        return power(x, y)

    return pow




# -- the cards -------------------------------------------------------------------------------
add = binary("add", cpu.add, _logical, _add_grad,
             "x + y, broadcasting; for two bools a logical or, as in PyTorch.",
             ("fusable", "logical", "method"), np.add, saves=(), grad_fn="AddBackward0")
sub = binary("sub", cpu.sub, _arith, _sub_grad,
             "x - y, broadcasting; a bool operand is refused, as in PyTorch.",
             ("fusable", "method"), np.subtract,
             forward=_sub_forward, infer=_sub_infer, cuda=_sub_cuda, saves=(),
             grad_fn="SubBackward0")
mul = binary("mul", cpu.mul, _logical, _mul_grad,
             "x * y, broadcasting; for two bools a logical and, as in PyTorch.",
             ("fusable", "logical", "method"), np.multiply, saves=((1, 0), (0, 1)),
             grad_fn="MulBackward0")
div = binary("div", cpu.div, _floating, _div_grad, "x / y (true division), broadcasting.",
             ("fusable", "method"), np.true_divide,
             saves=((0, 1), (1, 0), (1, 1), ("out", 1)), grad_fn="DivBackward0")
def _pow_grad_fn(node) -> str:
    """PyTorch's name of pow's backward: by which operands are tensors."""
    base, exponent = node.inputs[0], node.inputs[1]
    if not hasattr(base, "requires_grad"):
        return "PowBackward2"  # a number to a tensor's power: torch's pow.Scalar
    return "PowBackward1" if hasattr(exponent, "requires_grad") else "PowBackward0"


pow = binary("pow", cpu.pow, _POW_RULE, _pow_grad,  # noqa: A001
             "x ** y, broadcasting; a bool to a bool tensor's power is refused, as in "
             "PyTorch (a bool tensor to a Python bool power is computed, as PyTorch does, in "
             "eager mode; a graph node refuses it, as TF1 has no bool pow); integer powers "
             "wrap on overflow and refuse negative exponents.",
             ("fusable", "transcendental", "method"), np.power,
             forward=_pow_forward, cuda=_pow_cuda, saves=("out", 0, 1), grad_fn=_pow_grad_fn)
maximum = binary("maximum", cpu.maximum, _logical, _maximum_grad,
                 "Elementwise max of x, y; NaN if either is NaN. As in PyTorch, a tie splits "
                 "the gradient evenly, and at a NaN both inputs get all of it.",
                 ("fusable", "logical", "method"), np.maximum, saves=(0, 1),
                 grad_fn="MaximumBackward0")
minimum = binary("minimum", cpu.minimum, _logical, _minimum_grad,
                 "Elementwise min of x, y; NaN if either is NaN. As in PyTorch, a tie splits "
                 "the gradient evenly, and at a NaN both inputs get all of it.",
                 ("fusable", "logical", "method"), np.minimum, saves=(0, 1),
                 grad_fn="MinimumBackward0")

neg = unary("neg", cpu.neg, _NEG_RULE, lambda g, out, needs, attrs, x: (neg(g),),
            "-x (a bool is refused, as in PyTorch).", ("fusable", "method"), np.negative,
            saves=(), grad_fn="NegBackward0")
exp = unary("exp", cpu.exp, _floating, lambda g, out, needs, attrs, x: (mul(g, out),), "e**x.",
            ("fusable", "transcendental", "method"), np.exp, saves=("out",), grad_fn="ExpBackward0")
log = unary("log", cpu.log, _floating, lambda g, out, needs, attrs, x: (div(g, x),),
            "Natural logarithm (-inf at 0, nan below).",
            ("fusable", "transcendental", "method"), np.log, saves=(0,), grad_fn="LogBackward0")
sqrt = unary("sqrt", cpu.sqrt, _floating,
             lambda g, out, needs, attrs, x: (div(g, mul(out, 2.0)),), "Square root.",
             ("fusable", "transcendental", "method"), np.sqrt, saves=("out",),
             grad_fn="SqrtBackward0")
tanh = unary("tanh", cpu.tanh, _floating,
             lambda g, out, needs, attrs, x: (tanh_grad(out, g),), "Hyperbolic tangent.",
             ("fusable", "transcendental", "method"), np.tanh, saves=("out",),
             grad_fn="TanhBackward0")
sigmoid = unary("sigmoid", cpu.sigmoid, _floating,
                lambda g, out, needs, attrs, x: (sigmoid_grad(out, g),), "1 / (1 + e**-x).",
                ("fusable", "transcendental", "method"), R.sigmoid, saves=("out",),
                grad_fn="SigmoidBackward0")
softplus = unary(
    "softplus", cpu.softplus, _floats_only("softplus"),
    lambda g, out, needs, attrs, x: (where(greater(x, 20.0), g, mul(g, sigmoid(x))),),
    "log(1 + e**x), a smooth relu: PyTorch's softplus (beta 1, threshold 20: x itself past "
    "20) in both modes; TF1's tf.nn.softplus switches to x at about 34 in float64, so there "
    "results differ by under 2.1e-9 between 20 and 34. Floats only, as in both.",
    ("fusable", "transcendental"), lambda x: np.logaddexp(0.0, x), saves=(0,),
    grad_fn="SoftplusBackward0")
relu = unary("relu", cpu.relu, _RELU_RULE,
             lambda g, out, needs, attrs, x: (relu_grad(x, g),),
             "max(x, 0); NaN stays NaN and -0.0 stays -0.0, as in PyTorch.",
             ("fusable", "method"), R.relu, saves=(0, "out"), grad_fn="ReluBackward0")
abs = unary("abs", cpu.abs, _ABS_RULE,  # noqa: A001
            lambda g, out, needs, attrs, x: (mul(g, sign(x)),), "|x|.",
            ("fusable", "method"), np.abs, saves=(0,), grad_fn="AbsBackward0")
# Not fusable: its body subtracts two bools, which a fused body would not store as a bool.
sign = unary("sign", cpu.sign, _logical,
             lambda g, out, needs, attrs, x: (zeros_like(g),),
             "-1, 0 or 1 by the sign of x (a zero gradient, as PyTorch's); a bool stays "
             "bool.",
             ("logical", "method"), np.sign, saves=(), grad_fn="SignBackward0")

# Fused gradient ops (TensorFlow has the same: TanhGrad, SigmoidGrad, ReluGrad): one kernel
# instead of three for the backward pass, and differentiable again for second derivatives.
tanh_grad = binary(
    "tanh_grad", cpu.tanh_grad, _floating,
    lambda gg, out, needs, attrs, y, g: (mul(mul(gg, g), mul(y, -2.0)), tanh_grad(y, gg)),
    "g * (1 - y**2): the gradient of tanh given its output y.", ("fusable",), RG.tanh_grad,
    saves=(0, 1))
sigmoid_grad = binary(
    "sigmoid_grad", cpu.sigmoid_grad, _floating,
    lambda gg, out, needs, attrs, y, g: (mul(mul(gg, g), sub(1.0, mul(y, 2.0))),
                                         sigmoid_grad(y, gg)),
    "g * y * (1 - y): the gradient of sigmoid given its output y.", ("fusable",),
    RG.sigmoid_grad, saves=(0, 1))
relu_grad = binary(
    "relu_grad", cpu.relu_grad, _arith,
    lambda gg, out, needs, attrs, x, g: (None, relu_grad(x, gg)),
    "0 where x <= 0, else g (so g at NaN, as in PyTorch): the gradient of relu.",
    ("fusable",), RG.relu_grad, saves=(0,))

equal = binary("equal", cpu.equal, _any, None, "x == y elementwise (bool).", ("fusable",),
               np.equal, out=D.bool_)
not_equal = binary("not_equal", cpu.not_equal, _any, None, "x != y (bool).", ("fusable",),
                   np.not_equal, out=D.bool_)
less = binary("less", cpu.less, _any, None, "x < y (bool).", ("fusable",), np.less,
              out=D.bool_)
less_equal = binary("less_equal", cpu.less_equal, _any, None, "x <= y (bool).", ("fusable",),
                    np.less_equal, out=D.bool_)
greater = binary("greater", cpu.greater, _any, None, "x > y (bool).", ("fusable",),
                 np.greater, out=D.bool_)
greater_equal = binary("greater_equal", cpu.greater_equal, _any, None, "x >= y (bool).",
                       ("fusable",), np.greater_equal, out=D.bool_)


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
    shape = broadcast_all(shapes_, "where")
    return shape, D.promote(dtypes[1], dtypes[2])


def _where_grad(g, out, needs, attrs, cond, x, y):
    return (None, (where(cond, g, 0) if needs[1] else None),
            (where(cond, 0, g) if needs[2] else None))


# Its condition is read as bools and its values in their promoted dtype: no compute rule.
where = define("where", _where_forward, _where_infer, _where_grad,
               traits=("elementwise", "fusable", "fresh"), scalar=cpu._where,
               reference=np.where, cuda=lambda k: k.elementwise.where, inputs=3, saves=(0,),
               doc="Elementwise choice: x where cond is true, else y (broadcasting).",
               grad_fn="WhereBackward0")


# -- cast ------------------------------------------------------------------------------------
def _cast_forward(x, dtype):
    x, dt = np.asarray(x), D.as_dtype(dtype)  # as_dtype: only the dtypes we support
    if (x.dtype.kind in "OSU") != (dt is D.string):
        # Text is no number and a number no text: NumPy would make an object array of the
        # numbers (or parse the text); both frameworks refuse, as TF1 does when it runs.
        names = ["string" if d.kind in "OSU" else d.name for d in (x.dtype, dt)]
        raise UnimplementedError(f"Cast {names[0]} to {names[1]} is not supported")
    return x.astype(dt)


def _cast_grad(g, out, needs, attrs, x):
    return (cast(g, dtype=x.dtype) if x.dtype in D.FLOATS else None),


cast = define("cast", _cast_forward, lambda s, d, attrs: (s[0], D.as_dtype(attrs["dtype"])),
              _cast_grad, traits=("elementwise",), reference=R.cast,
              cuda=lambda k: k.elementwise.cast, attr_names=("dtype",), saves=(),
              doc="Convert to ``dtype`` (a copy).", grad_fn="ToCopyBackward0")


def _like_forward(fill):
    return lambda x: np.full(np.shape(x), fill, dtype=np.asarray(x).dtype)


zeros_like = define("zeros_like", _like_forward(0), lambda s, d, attrs: (s[0], d[0]), None,
                    shape_inputs=(0,), reference=RG.zeros_like,
                    cuda=lambda k: k.elementwise.like(0),
                    doc="Zeros of x's shape and dtype.", batch="elementwise")
ones_like = define("ones_like", _like_forward(1), lambda s, d, attrs: (s[0], d[0]), None,
                   shape_inputs=(0,), reference=RG.ones_like,
                   cuda=lambda k: k.elementwise.like(1),
                   doc="Ones of x's shape and dtype.", batch="elementwise")
identity = define("identity", lambda x: x, lambda s, d, attrs: (s[0], d[0]),
                  lambda g, out, needs, attrs, x: (g,), traits=("view",),
                  reference=RG.identity, cuda=lambda k: k.elementwise.identity, saves=(),
                  doc="x itself.", grad_fn="AliasBackward0", batch="elementwise")


def square(x):
    """x * x; a bool squares to int64, as ``torch.square`` (b ** 2) does, not to b * b."""
    if getattr(x, "dtype", None) == D.bool_:
        x = cast(x, dtype=D.int64)
    return mul(x, x)

# The public elementwise ops: kernelgraph and kernelgraph.ops export exactly these, so a new
# op is exported by adding its name here.
__all__ = [
    "abs", "add", "cast", "div", "equal", "exp", "greater", "greater_equal", "identity",
    "less", "less_equal", "log", "maximum", "minimum", "mul", "neg", "not_equal", "ones_like",
    "pow", "relu", "sigmoid", "sign", "softplus", "sqrt", "square", "sub", "tanh", "where",
    "zeros_like",
]

# The unary math of issue 21 (sin, floor, rsqrt ...) lives in its own module, which builds
# its cards with unary() above: imported last, so that everything it imports exists.
from .elementwise_math import *  # noqa: E402, F403 - its cards, exported with ours
from .elementwise_math import __all__ as _math_names  # noqa: E402

__all__ += _math_names
