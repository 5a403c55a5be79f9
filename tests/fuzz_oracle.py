"""The fuzz harness's oracle (tests/fuzzing.py): what one step must give, from NumPy
(kernelgraph/kernels/reference.py) and PyTorch's dtype rules recorded in
tests/recorded/fuzz.json, or that it must be refused with a clear error; and how results
are compared (within rounding, or bit for bit)."""

from __future__ import annotations

import json
import math
import os
import re
import traceback
import warnings
from pathlib import Path

import numpy as np

from tests.fuzz_inputs import FLOAT_NAMES, SUPPORTED, decode_index

HERE = Path(__file__).resolve().parent


# Errors a user may be shown: TypeError, ValueError (ShapeError, InvalidArgumentError,
# ConversionError), IndexError, and NotImplementedError raised by kernelgraph itself (an op
# without a CUDA kernel). Anything else (RuntimeError, AttributeError, KeyError,
# OverflowError, numba's errors, SystemError ...) is a crash of the engine.
DOCUMENTED_ERRORS = (TypeError, ValueError, IndexError)
# Messages that are NumPy's or numba's words leaking through, not kernelgraph's.
INTERNAL_WORDS = ("ufunc", "did not contain a loop", "No matching definition",
                  "object has no attribute", "unsupported operand type", "Cannot cast",
                  "numba", "NoneType", "not subscriptable", "could not be coerced",
                  "object is not iterable", "invalid value encountered", "cannot reshape array",
                  "operands could not be broadcast", "zero-size array", "buffer source array",
                  "Failed in nopython mode", "LLVM", "unhashable type")


def recorded_dtypes() -> dict:
    """PyTorch's dtype table (tests/recorded/fuzz.json, written by record_fuzz.py)."""
    global _RECORDED
    if _RECORDED is None:
        path = HERE / "recorded" / "fuzz.json"
        _RECORDED = json.loads(path.read_text(encoding="utf-8"))["dtypes"]
    return _RECORDED


_RECORDED = None


# -- the oracle --------------------------------------------------------------------------------
class Refusal(Exception):
    """The oracle's verdict that the step must raise a clear error (the message says why)."""


class Expect:
    """What a step must give: ``value`` (a host array of the expected dtype) compared by
    ``tol`` ('exact', 'round': a few ulps, 'accum': relative to ``magnitude``), with
    positions in ``unchecked`` free (C's undefined float -> int casts); ``either``: the
    step may also refuse with a clear error (PyTorch has no kernel for the dtype)."""

    def __init__(self, value, tol="exact", magnitude=None, unchecked=None, either=False,
                 signed_zeros=False):
        self.value = value
        self.tol = tol
        self.magnitude = magnitude
        self.unchecked = unchecked
        self.either = either
        self.signed_zeros = signed_zeros


def _dt(name) -> np.dtype:
    return np.dtype(name)


def dtype_rule(key: str):
    """(dtype name | None, kind) from PyTorch's table: kind 'ok', 'refuse' (PyTorch raises
    RuntimeError: a rule) or 'either' (NotImplementedError: a kernel PyTorch lacks)."""
    entry = recorded_dtypes().get(key)
    if entry is None:
        return None, "either"
    if "dtype" in entry:
        return entry["dtype"], "ok"
    if entry["error"] == "NotImplementedError":
        return None, "either"
    return None, "refuse"


def _scalar_kind(v) -> str:
    return "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "float"


def operand_key(v) -> str:
    return f"scalar:{_scalar_kind(v)}" if not isinstance(v, np.ndarray) else v.dtype.name


UNARY = ("neg", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs", "square", "sign")
ARITH = ("add", "sub", "mul", "div", "pow", "maximum", "minimum")
COMPARE = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
REDUCE = ("sum", "mean", "max", "argmax")
SHAPE = ("reshape", "transpose", "broadcast_to", "getitem", "concat", "stack", "pad")
NN = ("softmax", "log_softmax", "softmax_cross_entropy", "matmul", "max_pool2d",
      "avg_pool2d", "global_avg_pool2d", "conv2d")
# Ops computed in the output dtype whose result is the correctly rounded exact value (so a
# float64 reference rounded once gives the same bits) or a data movement.
ROUNDED_ONCE = {"add", "sub", "mul", "div", "square", "sqrt", "neg", "abs", "relu", "sign",
                "maximum", "minimum", "clip", "where", "max", "max_pool2d"} | set(SHAPE) | {
                    "gather", "one_hot", "argmax", "cast"} | set(COMPARE)
MOVES = set(SHAPE) | {"gather", "where", "neg", "abs"}
# Ops that kernelgraph computes in a float dtype whatever the input (ops/conv.py, ops/nn.py).
FLOAT_COMPUTE = {"conv2d", "max_pool2d", "avg_pool2d", "global_avg_pool2d", "softmax",
                 "log_softmax"}


def _oracle(name: str):
    """The project's NumPy reference for op ``name`` (kernelgraph/kernels/reference.py)."""
    from kernelgraph.ops import REFERENCE

    if name == "sign":  # reference.py's np.sign keeps NaN; PyTorch's sign(nan) is 0
        return lambda x: np.where(np.isnan(x), 0, np.sign(x))
    if name == "square":
        return np.square
    return REFERENCE[name]


def step_dtype(op: str, args: list, attrs: dict):
    """(expected dtype name | None, 'ok' | 'refuse' | 'either', compute dtype name) of a
    step whose operands are host arrays (kernelgraph dtypes) and Python numbers."""
    keys = [operand_key(a) for a in args]
    if op in FLOAT_COMPUTE and any(k not in FLOAT_NAMES for k in keys[:2]) and \
            all(k in SUPPORTED for k in keys[:2]):
        # kernelgraph's documented rule: these compute in floats, integers as float32
        # (PyTorch has integer kernels for some, none for others).
        return "float32", "either", "float32"
    if op in UNARY or op in ("sum", "mean", "max", "argmax", "softmax", "log_softmax",
                             "max_pool2d", "avg_pool2d", "global_avg_pool2d"):
        dt, kind = dtype_rule(f"{op}({keys[0]})")
        return dt, kind, dt if op != "argmax" else keys[0]
    if op in ARITH or op in COMPARE:
        if keys[0].startswith("scalar") and keys[1].startswith("scalar"):
            return None, "either", None
        key = f"{op}({keys[0]},{keys[1]})"
        if op in ("maximum", "minimum") and "scalar" in key:
            key = f"add({keys[0]},{keys[1]})"  # kernelgraph takes numbers here (weak)
        dt, kind = dtype_rule(key)
        compute = dt
        if op in COMPARE:
            compute, _ = dtype_rule(f"add({keys[0]},{keys[1]})")
            if compute is None:  # bool with bool
                compute = "bool"
        if op == "div" and compute is not None and compute not in FLOAT_NAMES:
            compute = "float32"
        return dt, kind, compute
    if op == "where":
        dt, kind = dtype_rule(f"where(bool,{keys[1]},{keys[2]})")
        return dt, kind, dt
    if op == "clip":
        kinds = [_scalar_kind(b) for b in (attrs.get("min"), attrs.get("max")) if b is not None]
        bound = max(kinds, key=["bool", "int", "float"].index) if kinds else "int"
        dt, kind = dtype_rule(f"clip({keys[0]},scalar:{bound})")
        return dt, kind, dt
    if op in ("matmul", "conv2d"):  # PyTorch and TF1 refuse two dtypes here
        dt, kind = dtype_rule(f"{op}({keys[0]},{keys[1]})")
        return dt, kind, dt
    if op == "softmax_cross_entropy":
        dt, kind = dtype_rule(f"softmax_cross_entropy({keys[0]},int64)")
        if keys[1] not in ("int32", "int64"):
            return None, "refuse", None
        if kind == "either":
            return "float32", "either", "float32"
        return dt, kind, dt
    if op == "cast":
        return _dt(attrs["dtype"]).name, "ok", _dt(attrs["dtype"]).name
    if op == "one_hot":
        if keys[0] not in ("int32", "int64"):
            return None, "refuse", None
        return "float32", "ok", "float32"
    if op == "gather":
        if keys[1] not in ("int32", "int64"):
            return None, "refuse", None
        return keys[0], "ok", keys[0]
    if op in ("concat", "stack"):
        if len(set(keys)) != 1:
            return None, "refuse", None
        return keys[0], "ok", keys[0]
    return keys[0], "ok", keys[0]  # shape ops keep the dtype


def _as(a, dt):
    """``a`` (array or Python number) in the compute dtype, then in float64 for floats, so
    the reference rounds once at the end."""
    if isinstance(a, np.ndarray):
        arr = a.astype(dt)
    elif isinstance(a, float) and dt.kind != "f":
        raise Refusal(f"float {a!r} for an integer computation")
    else:
        try:
            arr = np.asarray(a, dt)
        except OverflowError:  # PyTorch wraps it in silence; NumPy refuses, and so must we
            raise Refusal(f"Python int {a!r} out of {dt.name}'s range") from None
    return arr.astype(np.float64) if dt.kind == "f" else arr


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _check_pool(x, kernel, padding):
    """Refuse what PyTorch refuses: a window larger than the padded input, or padding
    over half the window."""
    (kh, kw), (ph, pw) = _pair(kernel), _pair(padding)
    if 2 * ph > kh or 2 * pw > kw:
        raise Refusal("padding over half the window")
    if x.shape[2] + 2 * ph < kh or x.shape[3] + 2 * pw < kw:
        raise Refusal("pooling window larger than the padded input")


def _check_conv(x, w, stride, padding, dilation):
    (ph, pw), (dh, dw) = _pair(padding), _pair(dilation)
    if x.ndim != 4 or w.ndim != 4 or x.shape[1] != w.shape[1]:
        raise Refusal("conv2d shapes")
    kh, kw = w.shape[2:]
    if kh < 1 or kw < 1:
        raise Refusal("empty kernel")
    if x.shape[2] + 2 * ph < dh * (kh - 1) + 1 or x.shape[3] + 2 * pw < dw * (kw - 1) + 1:
        raise Refusal("kernel larger than the padded input")


def _axes(axis, ndim):
    if axis is None:
        return None
    axes = axis if isinstance(axis, tuple) else (axis,)
    for a in axes:
        if not -ndim <= a < ndim:
            raise Refusal(f"axis {a} out of range for rank {ndim}")
    norm = [a % ndim for a in axes]
    if len(set(norm)) != len(norm):
        raise Refusal("repeated axis")
    return axis


def _reference(op, args, attrs, cd):
    """The NumPy value of one step in the compute dtype ``cd`` (floats in float64)."""
    if op in UNARY:
        x = _as(args[0], cd)
        if op == "sign" and cd.kind == "b":
            return x.copy()
        if op == "neg" and cd.kind == "b":
            raise Refusal("neg of bool")
        return _oracle(op)(x)
    if op in ARITH or op in COMPARE:
        a, b = _as(args[0], cd), _as(args[1], cd)
        if op == "pow" and cd.kind in "iu" and np.any(b < 0):
            raise Refusal("integers to negative integer powers")
        try:
            np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise Refusal("shapes do not broadcast") from None
        return _oracle(op)(a, b)
    if op == "where":
        return _oracle("where")(args[0], _as(args[1], cd), _as(args[2], cd))
    if op == "cast":
        return _oracle("cast")(np.asarray(args[0]), cd)
    if op == "clip":
        lo, hi = attrs.get("min"), attrs.get("max")
        return _oracle("clip")(_as(args[0], cd), None if lo is None else _as(lo, cd),
                               None if hi is None else _as(hi, cd))
    x = args[0]
    if op in ("sum", "mean", "max", "argmax"):
        axis = _axes(attrs.get("axis"), x.ndim)
        keep = attrs.get("keepdims", False)
        if op == "argmax":
            if axis is not None and x.ndim == 0:
                raise Refusal("argmax of a 0-d tensor over an axis")
            if x.size == 0 and (axis is None or x.shape[axis] == 0):
                raise Refusal("argmax of an empty tensor")
            return np.asarray(_oracle("argmax")(x, axis=axis, keepdims=keep), np.int64)
        xs = _as(x, cd)
        if op == "max":
            axes = range(x.ndim) if axis is None else np.atleast_1d(axis)
            if any(x.shape[a] == 0 for a in axes):
                raise Refusal("max over an empty axis")
        if op == "mean" and xs.size == 0 and axis is None:
            return np.full((1,) * xs.ndim if keep else (), np.nan)
        return _oracle(op)(xs, axis=axis, keepdims=keep)
    if op == "reshape":
        shape = attrs["shape"]
        if shape.count(-1) > 1 or any(d < -1 for d in shape):
            raise Refusal("bad reshape target")
        if -1 in shape:
            rest = math.prod(d for d in shape if d != -1)
            if rest == 0 or x.size % rest:
                raise Refusal("reshape -1 ambiguous or indivisible")
        elif math.prod(shape) != x.size:
            raise Refusal("reshape size mismatch")
        return _oracle("reshape")(x, shape).copy()
    if op == "transpose":
        perm = attrs.get("perm")
        if perm is not None and sorted(p % x.ndim if -x.ndim <= p < x.ndim else 99
                                       for p in perm) != list(range(x.ndim)):
            raise Refusal("bad permutation")
        return _oracle("transpose")(x, perm).copy()
    if op == "broadcast_to":
        try:
            return _oracle("broadcast_to")(x, attrs["shape"]).copy()
        except ValueError:
            raise Refusal("not broadcastable") from None
    if op == "getitem":
        index = decode_index(attrs["index"])
        try:
            return np.asarray(_oracle("getitem")(x, index)).copy()
        except IndexError:
            raise Refusal("index out of range") from None
    if op in ("concat", "stack"):
        axis = attrs.get("axis", 0)
        rank = x.ndim + (op == "stack")
        if not -rank <= axis < rank or (op == "concat" and x.ndim == 0):
            raise Refusal("axis out of range")
        try:
            return _oracle(op)(*args, axis=axis)
        except ValueError:
            raise Refusal("shapes differ") from None
    if op == "pad":
        pairs = attrs["paddings"]
        if len(pairs) != x.ndim or any(p < 0 for pair in pairs for p in pair):
            raise Refusal("bad paddings")
        return _oracle("pad")(x, pairs)
    if op in ("softmax", "log_softmax"):
        _axes(attrs.get("axis", -1), max(x.ndim, 0) or 1)
        if x.ndim == 0:
            raise Refusal("softmax of a 0-d tensor")
        if x.size == 0:  # an empty softmax is empty, as in PyTorch
            return _as(x, cd)
        return _oracle(op)(_as(x, cd), axis=attrs.get("axis", -1))
    if op == "softmax_cross_entropy":
        labels = args[1]
        if x.ndim != 2 or labels.shape != x.shape[:1]:
            raise Refusal("cross-entropy shapes")
        if labels.size and (labels.min() < 0 or labels.max() >= x.shape[1]):
            raise Refusal("label out of range")
        if labels.size == 0:
            return np.zeros(0)
        return _oracle("softmax_cross_entropy")(_as(x, cd), labels)
    if op == "matmul":
        a, b = _as(args[0], cd), _as(args[1], cd)
        if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-2]:
            raise Refusal("matmul shapes")
        try:
            np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            raise Refusal("batch dims") from None
        return _oracle("matmul")(a, b)
    if op in ("max_pool2d", "avg_pool2d", "global_avg_pool2d"):
        if x.ndim != 4:
            raise Refusal("pooling needs rank 4")
        xs = _as(x, cd)
        if op == "global_avg_pool2d":
            return _oracle(op)(xs)
        kernel, stride, padding = attrs["kernel_size"], attrs.get("stride"), \
            attrs.get("padding", 0)
        if 0 in xs.shape[1:]:  # PyTorch: "optional 0 dim batch size" (windows of nothing)
            raise Refusal("pooling over no channels, rows or columns")
        _check_pool(xs, kernel, padding)
        if xs.size == 0:  # no batch: the reference cannot reduce nothing
            one = _oracle(op)(np.zeros((1, 1) + xs.shape[2:]), kernel, stride, padding)
            return np.zeros(xs.shape[:2] + one.shape[2:])
        return _oracle(op)(xs, kernel, stride, padding)
    if op == "conv2d":
        a, w = _as(args[0], cd), _as(args[1], cd)
        stride, padding, dilation = (attrs.get("stride", 1), attrs.get("padding", 0),
                                     attrs.get("dilation", 1))
        _check_conv(a, w, stride, padding, dilation)
        return _oracle("conv2d")(a, w, stride, padding, dilation)
    if op == "gather":
        idx, axis = np.asarray(args[1]), attrs.get("axis", 0)
        _axes(axis, x.ndim)
        if x.ndim == 0:
            raise Refusal("gather from a 0-d tensor")
        if idx.size and (idx.min() < -x.shape[axis] or idx.max() >= x.shape[axis]):
            raise Refusal("index out of range")
        if idx.size and idx.min() < 0:
            raise Refusal("negative gather index")  # TF1 and PyTorch's index_select refuse
        return _oracle("gather")(x, idx, axis=axis)
    if op == "one_hot":
        depth = attrs["depth"]
        if np.any((x < 0) | (x >= depth)):
            raise Refusal("index out of range")  # PyTorch refuses (TF1 gives a 0 row)
        return _oracle("one_hot")(x, depth)
    raise AssertionError(f"no reference for {op}")


def _magnitude(op, args, attrs, cd):
    """Per-element size of the terms an accumulating op adds up (its error scale)."""
    absargs = [np.abs(_as(a, cd)) if isinstance(a, np.ndarray) else a for a in args]
    with np.errstate(all="ignore"):
        if op in ("softmax", "log_softmax", "softmax_cross_entropy"):
            x = absargs[0]
            if x.size == 0:
                return np.zeros(x.shape[:1] if op == "softmax_cross_entropy" else x.shape)
            axis = attrs.get("axis", -1) if op != "softmax_cross_entropy" else -1
            m = np.broadcast_to(np.max(x, axis=axis, keepdims=True) + 1.0, x.shape)
            return m if op != "softmax_cross_entropy" else m[:, 0]
        if op in ("exp", "tanh", "sigmoid", "log", "pow"):
            return None
        return np.asarray(_reference(op, absargs if op != "softmax_cross_entropy" else args,
                                     attrs, cd), np.float64)


def expect(op: str, args: list, attrs: dict, kg_dtype: str | None = None) -> Expect:
    """The oracle's verdict on one step; raises :class:`Refusal` where the step must fail.

    ``args`` are the step's operands as kernelgraph holds them (host arrays of kernelgraph
    dtypes, Python numbers); ``kg_dtype`` is what kernelgraph returned, used where PyTorch
    has no kernel for the dtype and kernelgraph may pick its own."""
    out, kind, compute = step_dtype(op, args, attrs)
    if kind == "refuse":
        raise Refusal(f"PyTorch refuses {op} on {', '.join(operand_key(a) for a in args)}")
    if kind == "either":
        if kg_dtype is None:
            return Expect(None, either=True)
        if out is None or out != kg_dtype:
            out = compute = kg_dtype
    cd = _dt(compute)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "Mean of empty slice"
        value = np.asarray(_reference(op, args, attrs, cd))
        tol = "exact" if cd.kind != "f" or op in ROUNDED_ONCE else \
            "round" if op in UNARY or op in ARITH else "accum"
        magnitude = _magnitude(op, args, attrs, cd) if tol == "accum" else None
        unchecked = None
        if op == "cast" and np.asarray(args[0]).dtype.kind == "f" and cd.kind in "iu":
            # C leaves float -> int undefined for NaN, Inf and values out of range
            src = np.asarray(args[0]).astype(np.float64)
            info = np.iinfo(cd)
            unchecked = ~np.isfinite(src) | (src < info.min) | (src >= float(info.max) + 1)
        value = value.astype(_dt(out))
    return Expect(value, tol, magnitude, unchecked, either=kind == "either",
                  signed_zeros=op in MOVES)


TOLERANCE = {"float32": (4e-6, 2e-5), "float64": (1e-13, 1e-12)}  # (round, accum) rtol


def compare(got: np.ndarray, exp: Expect) -> str | None:
    """None if ``got`` is what ``exp`` allows, else what differs (one line)."""
    want = exp.value
    if got.dtype != want.dtype:
        return f"dtype {got.dtype.str!r}, expected {want.dtype.str!r}" if \
            got.dtype.name == want.dtype.name else \
            f"dtype {got.dtype.name}, expected {want.dtype.name}"
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if got.size == 0:
        return None
    g, w = got, want
    free = np.zeros(g.shape, bool) if exp.unchecked is None else \
        np.broadcast_to(exp.unchecked, g.shape)
    if g.dtype.kind != "f":
        bad = (g != w) & ~free
    else:
        gf, wf = g.astype(np.float64), w.astype(np.float64)
        nan_g, nan_w = np.isnan(gf), np.isnan(wf)
        rtol = {"exact": 0.0, "round": TOLERANCE[g.dtype.name][0],
                "accum": TOLERANCE[g.dtype.name][1]}[exp.tol]
        finfo = np.finfo(g.dtype)
        with np.errstate(all="ignore"):
            scale = np.abs(wf) if exp.magnitude is None else np.broadcast_to(
                np.asarray(exp.magnitude, np.float64), wf.shape)
            # Sums of terms beyond the dtype's range overflow or not by the order of adding.
            free = free | (scale > finfo.max / 4) if exp.tol == "accum" else free
            atol = finfo.tiny if exp.tol == "exact" else \
                finfo.tiny + rtol * scale if exp.tol == "accum" else finfo.tiny * 16
            same_inf = (gf == wf)
            near = np.abs(gf - wf) <= rtol * np.abs(wf) + atol
            # A rounding step may round just past the largest finite value.
            edge = np.isinf(gf) & (np.abs(wf) >= finfo.max * (1 - 4 * rtol)) & \
                (np.sign(gf) == np.sign(wf)) if rtol else np.zeros(g.shape, bool)
            ok = (nan_g & nan_w) | (~nan_g & ~nan_w & (same_inf | near | edge))
        if exp.signed_zeros:
            ok &= ~((gf == 0) & (wf == 0) & (np.signbit(gf) != np.signbit(wf)))
        bad = ~ok & ~free
    if not np.any(bad):
        return None
    where = tuple(int(i[0]) for i in np.nonzero(bad)) if g.ndim else ()
    return (f"{int(np.sum(bad))} of {g.size} values differ (tol {exp.tol}); at {where}: "
            f"got {g[where]!r}, expected {w[where]!r}")


def same_bits(a: np.ndarray, b: np.ndarray) -> str | None:
    """None if two results are the same: dtype, shape, bits (any NaN equals any NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        return f"dtype {a.dtype.name} vs {b.dtype.name}" if a.dtype.name != b.dtype.name \
            else f"dtype {a.dtype.str!r} vs {b.dtype.str!r}"
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    if a.dtype.kind == "f":
        both_nan = np.isnan(a) & np.isnan(b)
        diff = ~both_nan & ((a != b) | (np.signbit(a) != np.signbit(b)))
    else:
        diff = a != b
    if not np.any(diff):
        return None
    where = tuple(int(i[0]) for i in np.nonzero(diff)) if a.ndim else ()
    return f"{int(np.sum(diff))} of {a.size} differ; at {where}: {a[where]!r} vs {b[where]!r}"


def clear_error(e: BaseException) -> str | None:
    """None if ``e`` is an error a user may be shown (see DOCUMENTED_ERRORS), else why not."""
    name = f"{type(e).__module__}.{type(e).__name__}"
    text = str(e)
    frames = traceback.extract_tb(e.__traceback__)
    # kernelgraph's own: raised in its code, not a re-raise of a kernel's error
    own = bool(frames) and f"{os.sep}kernelgraph{os.sep}" in frames[-1].filename and \
        not isinstance(e.__context__, NotImplementedError)
    documented = isinstance(e, DOCUMENTED_ERRORS) or (isinstance(e, NotImplementedError) and own)
    if not documented or type(e).__module__.startswith(("numba", "llvm")):
        return f"{name}: {text[:300]}"
    if not text.strip():
        return f"{name} with an empty message"
    for word in INTERNAL_WORDS:
        if word.lower() in text.lower():
            return f"{name} in NumPy's/numba's words: {text[:300]}"
    for said in re.findall(r"dtype (\w+) is not supported", text):
        if said in SUPPORTED:  # a big-endian float32 named by NumPy's .name
            return f"{name} calls the supported dtype {said} unsupported: {text[:300]}"
    return None
