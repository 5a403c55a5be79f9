"""The fuzz harness behind tests/test_fuzz.py: odd inputs, random programs, a NumPy oracle,
and a worker process that runs them, so that a crash is a failed test naming its case.

A *case* is plain data (picklable, no arrays): the program's inputs as recipes (dtype,
base shape, values, a view such as ``[::-1]`` or ``.T``, read-only or not, handed in as an
array, a nested list or a Python scalar) and 1-6 steps, each an op with its operands (earlier
values, new inputs, Python numbers) and attributes. :func:`run_case` runs a case in every
mode -- eager on kg.tensor inputs, eager on raw NumPy arrays, static with placeholders fed the
arrays or with constants, on the CPU and the CUDA device (numba's simulator without a GPU) --
and returns a list of *findings*, one line each; an empty list is a pass. The checks:

- ingestion: ``kg.tensor`` / ``kg.constant`` / a fed placeholder keep every value exactly (a
  kernelgraph dtype of the same kind) or refuse with an error naming the value's dtype;
- each eager step against the NumPy oracle (:func:`expect`), computed from the step's own
  eager inputs, so a finding names one op: the same values (exactly, or within rounding for
  transcendental and accumulating ops), shape and dtype; or, where the oracle refuses, an
  error of a documented type (TypeError, ValueError and kernelgraph's errors, IndexError)
  whose message is kernelgraph's own, never NumPy's or numba's;
- the dtype rules are PyTorch's, recorded in tests/recorded/fuzz.json (a PyTorch refusal
  with RuntimeError is a rule; NotImplementedError is a gap in PyTorch's kernels, where
  kernelgraph may compute or refuse);
- static mode returns the eager bits (NaN payloads aside), also where an input or a step is
  fed another value (which must win over what computes it, as in TF1); raw NumPy arrays give
  the eager bits or a clear error; CUDA agrees with the oracle; gradients of
  ``sum(out * w)`` agree between eager (``backward()``, ``kg.autograd.grad`` for an
  intermediate) and ``kg.gradients``;
- with ``KG_FUZZ_WARNINGS=1``, a NumPy RuntimeWarning printed by a step is a finding too
  (PyTorch prints nothing for NaN or overflow).

The parent process never runs a kernel: :class:`Worker` sends cases to a child process
(``python tests/fuzzing.py``) and reads back the findings, restarting it after a crash or a
hang, which becomes a finding too.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import re
import select
import struct
import subprocess
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SUPPORTED = ("float32", "float64", "int64", "int32", "bool")  # the first is drawn most
FLOAT_NAMES = ("float32", "float64")
# What a user may hand in: every NumPy numeric dtype, both byte orders, and some that no
# tensor can hold.
CONVERTIBLE = ("float16", ">f4", ">f8", "uint64", "uint8", "int8", "int16", "uint16", "uint32",
               ">i4", ">i8", ">u8", "float32", "float64", "int32", "int64", "bool")
FOREIGN = ("complex64", "complex128", "object", "<U3", "datetime64[D]")
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


# -- inputs ------------------------------------------------------------------------------------
def _views():
    def unaligned(b):
        raw = np.frombuffer(b"\0" + b.tobytes(), dtype=np.uint8, offset=1)
        return raw.view(b.dtype).reshape(b.shape) if b.size else b

    return {
        "c": lambda b, shape: b,
        "flip0": lambda b, shape: b[::-1],
        "flipL": lambda b, shape: b[..., ::-1],
        "T": lambda b, shape: b.T,
        "step": lambda b, shape: b[..., ::2],
        "bcast": lambda b, shape: np.broadcast_to(b, shape),
        "F": lambda b, shape: np.asfortranarray(b),
        "unaligned": lambda b, shape: unaligned(b),
    }


VIEWS = _views()
VIEW_TEXT = {"c": "{}", "flip0": "{}[::-1]", "flipL": "{}[..., ::-1]", "T": "{}.T",
             "step": "{}[..., ::2]", "bcast": "np.broadcast_to({}, {shape})",
             "F": "np.asfortranarray({})",
             "unaligned": "np.frombuffer(b'\\0' + {}.tobytes(), np.uint8, offset=1)"
                          ".view({dtype!r}).reshape({shape})"}


def base_shape(shape: tuple, layout: str, mask=()) -> tuple:
    """The shape of the contiguous array that ``layout`` views as ``shape``."""
    if layout == "T":
        return tuple(reversed(shape))
    if layout == "step":
        return shape[:-1] + (2 * shape[-1],)
    if layout == "bcast":
        return tuple(1 if i in mask else d for i, d in enumerate(shape))
    return tuple(shape)


def build_array(spec: dict) -> np.ndarray:
    """The odd array an input spec describes (its view, flags and dtype as a user has it)."""
    base = np.array(spec["values"], dtype=np.dtype(spec["dtype"]))
    base = base.reshape(spec["base_shape"])
    arr = VIEWS[spec["layout"]](base, tuple(spec["shape"]))
    if spec["readonly"] and arr.flags.writeable:
        arr.setflags(write=False)
    return arr


def user_value(spec: dict):
    """What the user hands to kernelgraph: the array, ``array.tolist()`` or a scalar."""
    arr = build_array(spec)
    if spec["source"] == "list":
        return arr.tolist()
    if spec["source"] == "scalar":
        return arr[()] if spec.get("numpy_scalar") else arr.item()
    return arr


def _literal(v) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "np.nan"
        if math.isinf(v):
            return "np.inf" if v > 0 else "-np.inf"
    if isinstance(v, complex):
        return f"complex({_literal(v.real)}, {_literal(v.imag)})"
    return repr(v)


def render_input(name: str, spec: dict) -> str:
    values = "[" + ", ".join(_literal(v) for v in spec["values"]) + "]"
    text = f"np.array({values}, dtype={spec['dtype']!r})"
    if tuple(spec["base_shape"]) != (len(spec["values"]),):
        text += f".reshape({tuple(spec['base_shape'])})"
    text = VIEW_TEXT[spec["layout"]].format(text, shape=tuple(spec["shape"]),
                                            dtype=spec["dtype"])
    lines = [f"{name} = {text}"]
    if spec["readonly"]:
        lines.append(f"{name}.setflags(write=False)")
    if spec["source"] == "list":
        lines.append(f"{name} = {name}.tolist()")
    elif spec["source"] == "scalar":
        lines.append(f"{name} = {name}[()]" if spec.get("numpy_scalar") else
                     f"{name} = {name}.item()")
    return "\n".join(lines)


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
    from kernelgraph.kernels.reference import REFERENCE

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
        _check_pool(xs, kernel, padding)
        if xs.size == 0:  # no batch or no channel: the reference cannot reduce nothing
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


# -- steps: calling kernelgraph --------------------------------------------------------------
OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**", "less": "<",
             "less_equal": "<=", "greater": ">", "greater_equal": ">="}


def call_step(kg, step: dict, values: list, raw: bool = False):
    """Run one step on kernelgraph values (tensors, graph nodes, raw arrays, numbers)."""
    op, attrs = step["op"], dict(step["attrs"])
    # A Python operator or x[...] on raw arrays and numbers alone is NumPy's, not ours.
    raw = raw or all(isinstance(v, np.ndarray | int | float) for v in values)
    if op == "getitem":
        if raw:
            return kg.ops.getitem(values[0], index=kg.ops.normalize_index(decode_index(
                attrs["index"])))
        return values[0][decode_index(attrs["index"])]
    if op in ("concat", "stack"):
        return getattr(kg, op)(values, **attrs)
    if step.get("form") == "operator" and not raw and op in OPERATORS:
        a, b = values
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                "/": lambda: a / b, "**": lambda: a ** b, "<": lambda: a < b,
                "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b}[
                    OPERATORS[op]]()
    if op == "cast":
        attrs["dtype"] = getattr(kg, {"bool": "bool_"}.get(attrs["dtype"], attrs["dtype"]))
    return getattr(kg, op)(*values, **attrs)


def decode_index(index):
    return tuple(Ellipsis if i == "..." else slice(*i) if isinstance(i, list | tuple) else i
                 for i in index)


def render_step(step: dict, names: list, raw: bool = False) -> str:
    op, attrs = step["op"], step["attrs"]
    args = [n if isinstance(n, str) else _literal(n) for n in names]
    if op == "getitem":
        idx = ", ".join("..." if i == "..." else "None" if i is None else
                        ":".join("" if p is None else str(p) for p in i)
                        if isinstance(i, list | tuple) else str(i) for i in attrs["index"]
                        ) or "()"
        if raw:
            return f"kg.ops.getitem({args[0]}, index=kg.ops.normalize_index(np.s_[{idx}]))"
        return f"{args[0]}[{idx}]"
    if step.get("form") == "operator" and op in OPERATORS and not raw:
        return f"{args[0]} {OPERATORS[op]} {args[1]}"
    kw = "".join(f", {k}={v!r}" if k != "dtype" else f", dtype=kg.{v}"
                 for k, v in attrs.items())
    if op in ("concat", "stack"):
        return f"kg.{op}([{', '.join(args)}]{kw})"
    return f"kg.{op}({', '.join(args)}{kw})"


def render(case: dict, mode: str = "eager", device: str = "cpu") -> str:
    """The case as a short program a person can paste (``mode``: eager, raw, mixed,
    placeholder, constant)."""
    lines = ["import numpy as np", "import kernelgraph as kg"]
    inputs = case["inputs"]
    for name, spec in inputs.items():
        lines.append(render_input(name, spec))
    dev = "" if device == "cpu" else f", device={device!r}"
    static = mode in ("placeholder", "constant")
    if static:
        lines.append("g = kg.Graph()")
        lines.append("with g.as_default()" + (f", kg.device({device!r}):" if dev else ":"))
    ind = "    " if static else ""
    feeds = []
    for i, name in enumerate(inputs):
        if mode == "eager" or (mode == "mixed" and i > 0):
            grad = ", requires_grad=True" if name in case.get("grad_inputs", ()) else ""
            lines.append(f"{name} = kg.tensor({name}{grad}{dev})")
        elif mode == "placeholder":
            shape = tuple(inputs[name]["shape"])
            declared = {"exact": shape, "dims": (None,) * len(shape), "rank": None}[
                case["ph_shapes"].get(name, "exact")]
            lines.append(f"{ind}{name}_p = kg.placeholder(kg.{case['ph_dtypes'].get(name, '?')}"
                         f", shape={declared!r})")
            feeds.append(name)
        elif mode == "constant":
            lines.append(f"{ind}{name}_p = kg.constant({name})")
    raw_names = set(inputs) if mode == "raw" else set(list(inputs)[:1]) if mode == "mixed" \
        else set()
    for step in case["steps"]:
        names = [(a + "_p" if static and a in inputs else a) if isinstance(a, str) else a
                 for a in step["args"]]
        raw = all(a in raw_names for a in step["args"] if isinstance(a, str))
        if raw and mode in ("raw", "mixed"):
            raw_names.add(step["out"])
        lines.append(f"{ind}{step['out']} = {render_step(step, names, raw=raw)}")
    fetch = case["fetch"] or list(inputs)
    if case.get("feed_step"):
        lines.append(f"# a finding marked 'fed {case['feed_step']} = ...' feeds that value "
                     f"to {case['feed_step']} too")
    if case.get("grad_inputs"):
        wrt = ", ".join(list(case["grad_inputs"]) + [case["grad_through"]]
                        if case.get("grad_through") else list(case["grad_inputs"]))
        lines.append(f"# a 'grad' finding: gradients of sum({fetch[0]} * w) with respect to "
                     f"{wrt} (w: test_ops.weights)")
    if static:
        feed = "{" + ", ".join(f"{n}_p: {n}" for n in feeds) + "}"
        lines.append(f"{ind}print(kg.Session().run([{', '.join(fetch)}], {feed}))")
    else:
        lines.append(f"print({', '.join(fetch)})")
    return "\n".join(lines)


# -- running a case (in the worker) ------------------------------------------------------------
def _host(v) -> np.ndarray:
    """A kernelgraph result as a host array."""
    if hasattr(v, "detach"):
        v = v.detach().cpu().data
    if hasattr(v, "copy_to_host"):
        v = v.copy_to_host()
    return np.asarray(v) if not isinstance(v, np.ndarray) else v


def _kind(dt: np.dtype) -> str:
    return {"b": "b", "i": "i", "u": "i", "f": "f"}.get(dt.kind, "?")


def check_exact(got: np.ndarray, source) -> str | None:
    """None if ``got`` holds exactly the values of ``source`` (an array or nested list)."""
    src = np.asarray(source) if not isinstance(source, np.ndarray) else source
    if got.shape != src.shape:
        return f"shape {got.shape}, expected {src.shape}"
    if src.dtype.kind == "f" or got.dtype.kind == "f":
        a = got.astype(np.float64)
        b = src.astype(np.float64)
        same = (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))
    else:
        same = got.astype(object) == src.astype(object)
    if np.all(same):
        return None
    where = tuple(int(i[0]) for i in np.nonzero(~np.asarray(same))) if got.ndim else ()
    return f"values changed: {src[where]!r} became {got[where]!r} at {where}"


def _natural(spec: dict, value) -> np.dtype:
    """The kernelgraph dtype a placeholder fed ``value`` would be declared with."""
    src = np.asarray(value)
    kind = src.dtype.kind
    if kind == "b":
        return np.dtype(np.bool_)
    if kind in "iu":
        return np.dtype(np.int32) if src.dtype == np.dtype(">i4") or src.dtype == np.int32 \
            else np.dtype(np.int64)
    if kind == "f":
        return np.dtype(np.float64) if src.dtype.itemsize == 8 else np.dtype(np.float32)
    return np.dtype(np.float32)


class Runner:
    """Runs one case in one process and collects its findings."""

    def __init__(self, case: dict):
        import kernelgraph as kg

        self.kg = kg
        self.case = case
        self.findings: list[str] = []
        self.cuda = "cuda" in case.get("devices", ()) and kg.cuda.is_available()

    def note(self, where: str, text: str) -> None:
        self.findings.append(f"[{where}] {text}")

    def guarded(self, where: str, fn):
        """``fn()``, or None after noting an error that is not a clear one."""
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - the error itself is checked
            why = clear_error(e)
            if why is not None:
                self.note(where, f"unclear error: {why}\n{_short_tb(e)}")
            return None

    # -- ingestion -----------------------------------------------------------------------------
    def ingest(self) -> dict:
        """kg.tensor, kg.constant and fed placeholders on each input; returns {name: host
        array that kg.tensor made} for the inputs kernelgraph accepted."""
        kg = self.kg
        accepted = {}
        for name, spec in self.case["inputs"].items():
            value = user_value(spec)
            src = value if isinstance(value, np.ndarray) else _python_numbers(value)
            t, err = None, None
            try:
                t = kg.tensor(value)
            except Exception as e:  # noqa: BLE001
                err = e
            if err is not None:
                why = clear_error(err)
                if why is not None:
                    self.note(f"ingest {name}", f"kg.tensor: unclear error: {why}")
                elif src is not None and src.dtype.kind in "biuf" and not _lossy(src):
                    self.note(f"ingest {name}", f"kg.tensor refused exactly representable "
                              f"{src.dtype} values: {err}")
                elif src is not None and not _from_python(spec) and \
                        src.dtype.name not in str(err) and src.dtype.str not in str(err):
                    self.note(f"ingest {name}", f"kg.tensor's refusal does not name the dtype "
                              f"{src.dtype}: {str(err)[:200]}")
            else:
                got = t.data
                self._check_ingested(f"ingest {name}", "kg.tensor", got, value, src, spec)
                if isinstance(value, np.ndarray) and got.size and np.shares_memory(got, value):
                    self.note(f"ingest {name}", "kg.tensor shares memory with the array")
                accepted[name] = got
            self._ingest_static(name, spec, value, accepted.get(name), err)
            if self.cuda and spec.get("cuda_ingest", True):
                self._ingest_cuda(name, value, accepted.get(name))
        return accepted

    def _check_ingested(self, where, how, got, value, src, spec):
        if got.dtype.name not in SUPPORTED:
            self.note(where, f"{how} made a {got.dtype} array (not a kernelgraph dtype)")
            return
        if src is None:
            return
        if _from_python(spec) and src.dtype.kind == "f" and got.dtype.kind == "f":
            # Python floats become float32 (PyTorch's default): rounded, as there.
            want = src.astype(np.float32) if got.dtype == np.float32 else src
            why = check_exact(got, want)
        elif src.dtype.kind in "biuf" and _kind(src.dtype) != _kind(got.dtype):
            why = f"kind changed: {src.dtype} became {got.dtype}"
        else:
            why = check_exact(got, src) if src.dtype.kind in "biuf" else None
            if src.dtype.kind not in "biuf":
                why = check_exact(got, _object_numbers(src)) if _object_numbers(src) \
                    is not None else f"{src.dtype} values became {got.dtype}"
        if why is not None:
            self.note(where, f"{how}: {why}")

    def _ingest_static(self, name, spec, value, eager, eager_err):
        kg = self.kg
        # kg.constant(value) must agree with kg.tensor(value)
        try:
            g = kg.Graph()
            with g.as_default():
                c = kg.constant(value)
                with kg.Session(g) as sess:
                    got = np.asarray(sess.run(c))
        except Exception as e:  # noqa: BLE001
            why = clear_error(e)
            if why is not None:
                self.note(f"ingest {name}", f"kg.constant: unclear error: {why}")
            elif eager is not None:
                self.note(f"ingest {name}", f"kg.constant refused what kg.tensor took: {e}")
        else:
            if eager is None:
                self.note(f"ingest {name}", f"kg.constant took what kg.tensor refused "
                          f"({eager_err}): gave {got.dtype} {got!r:.80}")
            elif (why := same_bits(got, eager)) is not None:
                self.note(f"ingest {name}", f"kg.constant differs from kg.tensor: {why}")
        # a placeholder of the natural dtype fed the value
        declared = eager.dtype if eager is not None else _natural(spec, value)
        try:
            g = kg.Graph()
            with g.as_default():
                p = kg.placeholder(declared, shape=None)
                with kg.Session(g) as sess:
                    got = np.asarray(sess.run(kg.identity(p), {p: value}))
        except Exception as e:  # noqa: BLE001
            why = clear_error(e)
            if why is not None:
                self.note(f"ingest {name}", f"feed to a {declared} placeholder: unclear error: "
                          f"{why}")
            elif eager is not None:
                self.note(f"ingest {name}", f"a {declared} placeholder refused what "
                          f"kg.tensor took: {e}")
        else:
            src = value if isinstance(value, np.ndarray) else _python_numbers(value)
            why = None
            if eager is None and np.asarray(value).dtype.kind in "USM":
                why = f"took the {np.asarray(value).dtype} values kg.tensor refused"
            elif got.dtype != declared:
                why = f"fetched {got.dtype} from a {declared} placeholder"
            elif src is not None and src.dtype.kind in "biuf" and not (
                    src.dtype.kind == "f" and _from_python(spec)):
                why = check_exact(got, src)
            if why is not None:
                self.note(f"ingest {name}", f"feed to a {declared} placeholder: {why}")

    def _ingest_cuda(self, name, value, eager):
        try:
            t = self.kg.tensor(value, device="cuda")
        except Exception as e:  # noqa: BLE001
            why = clear_error(e)
            if why is not None:
                self.note(f"ingest {name} cuda", f"unclear error: {why}")
            elif eager is not None:
                self.note(f"ingest {name} cuda", f"refused what the CPU took: {e}")
            return
        if eager is None:
            self.note(f"ingest {name} cuda", "took what the CPU refused")
        elif (why := same_bits(_host(t), eager)) is not None:
            self.note(f"ingest {name} cuda", f"differs from the CPU tensor: {why}")

    # -- programs ------------------------------------------------------------------------------
    def operands(self, step, env):
        return [env[a] if isinstance(a, str) else a for a in step["args"]]

    def eager(self, accepted: dict, device: str = "cpu", entry: str = "tensor",
              override=None):
        """Each step eagerly, checked against the oracle; returns ({id: host value},
        {id: error}) for the comparison with the other modes. ``override`` ({step: array})
        replaces steps' results, as a feed replaces a node's value in a graph."""
        kg = self.kg
        case = self.case
        override = override or {}
        where = f"eager/{entry}/{device}" + "".join(
            f" (with {k} = {v!r:.100})" for k, v in override.items())
        env, host, errors = {}, {}, {}
        dev = None if device == "cpu" else device
        for i, (name, spec) in enumerate(case["inputs"].items()):
            if name not in accepted:
                return host, {"ingest": name}
            host[name] = accepted[name]
            if name in override:
                host[name] = override[name]
                env[name] = kg.tensor(override[name], device=dev)
            elif entry == "raw" or (entry == "mixed" and i == 0):
                env[name] = user_value(spec)
            else:
                env[name] = kg.tensor(user_value(spec), device=dev,
                                      requires_grad=name in case.get("grad_inputs", ()) and
                                      entry == "tensor")
        for step in case["steps"]:
            out = step["out"]
            if out in override:
                host[out] = override[out]
                env[out] = kg.tensor(override[out], device=dev)
                continue
            args = self.operands(step, env)
            ref_args = [host[a] if isinstance(a, str) else a for a in step["args"]]
            if step["op"] in ("concat", "stack"):
                ref_args = [host[a] for a in step["args"]]
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    result = call_step(kg, step, args, raw=entry == "raw")
            except Exception as e:  # noqa: BLE001
                errors[out] = e
                foreign = [a for a in args if isinstance(a, np.ndarray) and not _native(a)]
                if not override:  # a replaced run only makes values for static mode's
                    self._judge_error(where, step, ref_args, e, may_refuse=bool(foreign))
                return host, errors
            if caught and os.environ.get("KG_FUZZ_WARNINGS"):
                # PyTorch prints nothing for NaN or overflow; kernelgraph should not either.
                self.note(where, f"{out} = {step['op']} warned: "
                          f"{'; '.join(sorted({str(w.message) for w in caught}))}")
            if entry == "raw" and not isinstance(result, np.ndarray) and device == "cpu":
                self.note(where, f"{out}: raw arrays gave a {type(result).__name__}")
                return host, errors
            got = _host(result)
            host[out] = got
            env[out] = result
            if dev is not None and not _on_cuda(result):
                self.note(where, f"{out} = {step['op']}: result left the device "
                          f"({type(result).__name__})")
            if not override:
                self._judge_value(where, step, ref_args, got)
        return host, errors

    def _judge_error(self, where, step, ref_args, e, may_refuse=False):
        """A step raised: fine if it must (the oracle refuses it), or if it may (a raw
        array of a dtype kernelgraph does not keep), and the error is a clear one."""
        why = clear_error(e)
        if why is not None:
            self.note(where, f"{step['out']} = {step['op']}: unclear error: {why}\n"
                      f"{_short_tb(e)}")
            return
        try:
            exp = expect(step["op"], ref_args, step["attrs"])
        except Refusal:
            return
        except Exception as oracle_error:  # noqa: BLE001 - a bug of this harness
            self.note(where, f"oracle failed on {step['op']}: {oracle_error!r}")
            return
        if not exp.either and not may_refuse:
            self.note(where, f"{step['out']} = {step['op']} raised {type(e).__name__}: "
                      f"{str(e)[:300]}; NumPy computes it")

    def _judge_value(self, where, step, ref_args, got):
        if any(isinstance(a, np.ndarray) and not _native(a) for a in ref_args):
            return  # a raw array kept its foreign dtype: the comparison with eager says so
        try:
            exp = expect(step["op"], ref_args, step["attrs"], kg_dtype=got.dtype.name)
        except Refusal as r:
            self.note(where, f"{step['out']} = {step['op']} returned {got.dtype} "
                      f"{got.shape} where an error was expected ({r})")
            return
        except Exception as oracle_error:  # noqa: BLE001
            self.note(where, f"oracle failed on {step['op']}: {oracle_error!r}")
            return
        why = compare(got, exp)
        if why is not None:
            self.note(where, f"{step['out']} = {step['op']}: {why}")

    def static(self, accepted: dict, eager_host: dict, eager_errors: dict, feed: str,
               device: str = "cpu", override=None):
        """The program as a graph (placeholders fed the user's arrays, or constants; and
        the steps in ``override`` fed their replacement): the fetched values must be
        eager's (bit for bit on the CPU)."""
        kg = self.kg
        case = self.case
        override = override or {}
        where = f"static/{feed}/{device}" + "".join(
            f" (fed {k} = {v!r:.100})" for k, v in override.items())
        if "ingest" in eager_errors:
            return
        g = kg.Graph()
        env, feeds = {}, {}
        fetch = [f for f in case["fetch"] if f in eager_host]
        failed = next(iter(eager_errors), None)
        if failed is not None:
            fetch = [failed]
        running = False
        try:
            with g.as_default(), kg.device(device):
                for name, spec in case["inputs"].items():
                    if feed == "placeholder":
                        shape = case["ph_shapes"].get(name, "exact")
                        declared = {"exact": tuple(accepted[name].shape),
                                    "dims": (None,) * accepted[name].ndim, "rank": None}[shape]
                        env[name] = kg.placeholder(accepted[name].dtype, shape=declared)
                        feeds[env[name]] = user_value(spec)
                    else:
                        env[name] = kg.constant(user_value(spec))
                    if name in override:
                        feeds[env[name]] = override[name]
                for step in case["steps"]:
                    env[step["out"]] = call_step(kg, step, self.operands(step, env))
                    if step["out"] in override:
                        feeds[env[step["out"]]] = override[step["out"]]
                    if all(f in env for f in fetch):
                        break
                nodes = [env[f] for f in fetch]
                grads = [] if override else self._static_grads(env, feed, fetch, eager_host)
                with kg.Session(g) as sess:
                    running = True
                    values = sess.run(nodes + [x for x in grads if x is not None],
                                      feeds or None)
        except Exception as e:  # noqa: BLE001
            why = clear_error(e)
            if why is None and running and isinstance(e, kg.errors.OpError) and \
                    Path(__file__).name not in str(e):
                why = f"a run-time error that does not name the line that made the node: {e}"
            if why is not None:
                self.note(where, f"unclear error: {why}\n{_short_tb(e)}")
            elif failed is None:
                self.note(where, f"raised {type(e).__name__} where eager computed: "
                          f"{str(e)[:300]}")
            return
        if failed is not None:
            self.note(where, f"computed {fetch[0]} where eager raised "
                      f"{type(eager_errors[failed]).__name__}: {eager_errors[failed]}")
            return
        for f, v in zip(fetch, values):
            node = env[f]
            v = np.asarray(v)
            if node.dtype != v.dtype:
                self.note(where, f"{f}: node dtype {node.dtype} but ran {v.dtype}")
            if node.shape is not None and (len(node.shape) != v.ndim or any(
                    d is not None and d != s for d, s in zip(node.shape, v.shape))):
                self.note(where, f"{f}: node shape {node.shape} but ran {v.shape}")
            why = same_bits(v, eager_host[f]) if device == "cpu" else \
                _close(v, eager_host[f])
            if why is not None:
                self.note(where, f"{f} differs from eager: {why}")
        if not override:
            self.static_grads = (grads, values[len(fetch):])

    def _static_grads(self, env, feed, fetch, eager_host):
        case = self.case
        if feed != "placeholder" or not case.get("grad_inputs") or len(fetch) != 1 or \
                fetch[0] not in eager_host:
            return []
        kg = self.kg
        out = env[fetch[0]]
        if out.dtype.name not in FLOAT_NAMES:
            return []
        w = kg.constant(grad_weight(eager_host[fetch[0]].shape, out.dtype))
        return kg.gradients(kg.sum(out * w), [env[n] for n in self.grad_wrt()])

    def grad_wrt(self) -> list:
        """The inputs, and maybe one intermediate step, to differentiate with respect to
        (an intermediate one checks total derivatives: the inputs' gradients flow through
        it too)."""
        mid = self.case.get("grad_through")
        return list(self.case["grad_inputs"]) + ([mid] if mid else [])

    def eager_grads(self, device="cpu"):
        """Gradients of sum(out * w) on fresh tensors, {name: host gradient or None}:
        the inputs' by backward(), an intermediate's by kg.autograd.grad."""
        kg = self.kg
        case = self.case
        dev = None if device == "cpu" else device
        env = {}
        for name, spec in case["inputs"].items():
            env[name] = kg.tensor(user_value(spec), device=dev,
                                  requires_grad=name in case["grad_inputs"])
        for step in case["steps"]:
            env[step["out"]] = call_step(kg, step, self.operands(step, env))
        out = env[case["fetch"][0]]
        if out.dtype.name not in FLOAT_NAMES or not out.requires_grad:
            return {n: None for n in case["grad_inputs"]}
        loss = (out * kg.tensor(grad_weight(out.shape, out.dtype), device=dev)).sum()
        grads = {}
        mid = case.get("grad_through")
        if mid and env[mid].requires_grad:
            (g,) = kg.autograd.grad(loss, [env[mid]], retain_graph=True, allow_unused=True)
            grads[mid] = None if g is None else _host(g)
        loss.backward()
        for n in case["grad_inputs"]:
            grads[n] = None if env[n].grad is None else _host(env[n].grad)
        return grads

    def check_grads(self, accepted, device="cpu"):
        where = f"grad/{device}"
        grads = self.guarded(where + " eager", lambda: self.eager_grads(device))
        static = getattr(self, "static_grads", None)
        if grads is None or static is None:
            return
        nodes, values = static
        it = iter(values)
        for name, node in zip(self.grad_wrt(), nodes):
            s = None if node is None else np.asarray(next(it))
            if name not in grads:  # an intermediate that needs no gradient in eager mode
                continue
            e = grads[name]
            if e is None and s is not None and np.any(s != 0):
                self.note(where, f"d/d{name}: static {s!r:.80} but eager None")
            elif e is not None and s is None:
                self.note(where, f"d/d{name}: eager {e!r:.80} but static None")
            elif e is not None and s is not None:
                x = accepted.get(name)
                if x is not None and (e.shape != x.shape or e.dtype != x.dtype):
                    self.note(where, f"d/d{name}: {e.dtype}{e.shape}, input {x.dtype}{x.shape}")
                why = same_bits(s, e) if device == "cpu" else _close(s, e)
                if why is not None:
                    self.note(where, f"d/d{name}: static vs eager: {why}")

    def run(self) -> list[str]:
        case = self.case
        accepted = self.ingest()
        if not case["steps"]:
            return self.findings
        host, errors = self.eager(accepted)
        for entry in case.get("entries", ()):
            raw_host, raw_errors = self.eager(accepted, entry=entry)
            for k, v in raw_host.items():
                if k in host and (why := same_bits(v, host[k])) is not None:
                    self.note(f"eager/{entry}/cpu", f"{k} differs from kg.tensor inputs: {why}")
        for feed in case.get("feeds", ("placeholder",)):
            self.static(accepted, host, errors, feed)
            if feed == "placeholder" and not errors and case.get("grad_inputs"):
                self.check_grads(accepted)
        fed = case.get("feed_step")
        if fed in host and fed not in errors:
            # A fed node's value wins over what its inputs compute (TF1): replace it by
            # its own values reversed, and compare with eager code doing the same.
            value = host[fed]
            override = {fed: np.ascontiguousarray(np.flip(value)) if value.ndim else
                        np.asarray(~value if value.dtype.kind == "b" else value * 2)}
            ohost, oerrors = self.eager(accepted, override=override)
            for feed in case.get("feeds", ("placeholder",)):
                self.static(accepted, ohost, oerrors, feed, override=override)
        if self.cuda:
            chost, cerrors = self.eager(accepted, device="cuda")
            for k in set(host) & set(chost):
                if host[k].dtype != chost[k].dtype or host[k].shape != chost[k].shape:
                    self.note("eager/tensor/cuda", f"{k}: {chost[k].dtype}{chost[k].shape} "
                              f"on cuda, {host[k].dtype}{host[k].shape} on cpu")
            if set(errors) != set(cerrors):
                self.note("eager/tensor/cuda", f"errors differ from the CPU: cuda "
                          f"{ {k: repr(v)[:120] for k, v in cerrors.items()} }, cpu "
                          f"{ {k: repr(v)[:120] for k, v in errors.items()} }")
            self.static_grads = None
            self.static(accepted, chost, cerrors, "placeholder", device="cuda")
            if not cerrors and case.get("grad_inputs"):
                self.check_grads(accepted, device="cuda")
        return self.findings


def _native(a: np.ndarray) -> bool:
    """True for an array of a kernelgraph dtype in the machine's byte order."""
    return a.dtype.name in SUPPORTED and a.dtype.isnative


def _on_cuda(v) -> bool:
    return getattr(getattr(v, "device", None), "type", "cpu") == "cuda"


def _close(a, b) -> str | None:
    """Two results of one device in two modes: same dtype/shape, values within float
    rounding of each other (GPU sums run in no fixed order)."""
    a, b = np.asarray(a), np.asarray(b)
    return compare(a, Expect(b, "accum" if a.dtype.kind == "f" else "exact",
                             magnitude=np.abs(b.astype(np.float64)) + 1.0
                             if b.dtype.kind == "f" else None))


def _lossy(src: np.ndarray) -> bool:
    """True where no kernelgraph dtype holds these values exactly."""
    if src.dtype.kind in "uiO" and src.size:
        ints = [int(v) for v in src.ravel().tolist() if not isinstance(v, float)]
        return any(not -2 ** 63 <= v < 2 ** 63 for v in ints)
    return src.dtype.kind in "f" and src.dtype.itemsize > 8


def _from_python(spec: dict) -> bool:
    """True where the user hands in Python numbers (a list, ``.item()``), not NumPy's."""
    return spec["source"] == "list" or (spec["source"] == "scalar" and
                                        not spec.get("numpy_scalar"))


def _python_numbers(value):
    """Python numbers (a nested list or a scalar) as the array they denote: bools, ints
    (an object array where one is beyond int64), or floats; None for anything else."""
    if isinstance(value, np.generic):
        return np.asarray(value)
    flat = np.asarray(value, dtype=object).ravel().tolist() if isinstance(value, list) \
        else [value]
    if not all(isinstance(v, bool | int | float) for v in flat):
        return None
    shape = np.shape(np.asarray(value, dtype=object))
    if not flat:  # [] is float32 in PyTorch
        return np.zeros(shape, np.float64)
    if all(isinstance(v, bool) for v in flat):
        return np.asarray(value, dtype=bool).reshape(shape)
    if all(isinstance(v, int) for v in flat):
        if any(not -2 ** 63 <= v < 2 ** 63 for v in flat):
            return np.asarray(value, dtype=object).reshape(shape)
        return np.asarray(value, dtype=np.int64).reshape(shape)
    return np.asarray([float(v) for v in flat], dtype=np.float64).reshape(shape)


def _object_numbers(src):
    """An object array of plain numbers as the array NumPy would infer, else None."""
    if src.dtype.kind != "O":
        return None
    try:
        arr = np.array(src.tolist())
    except Exception:  # noqa: BLE001
        return None
    return arr if arr.dtype.kind in "biuf" else None


def grad_weight(shape, dtype) -> np.ndarray:
    """The upstream weight of gradient checks: tests/test_ops.py's (fixed, shape-seeded,
    both signs, away from 0), so that a gradient routed to the wrong element shows."""
    from test_ops import weights  # tests/ is on the path: this file's folder

    return weights(tuple(shape), dtype)


def _short_tb(e: BaseException) -> str:
    frames = traceback.extract_tb(e.__traceback__)[-3:]
    return "  " + " <- ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}"
                              for f in reversed(frames))


def run_case(case: dict) -> list[str]:
    """The findings of one case (empty: it passed), in this process. ``crash`` and
    ``hang`` make the harness's own test cases: a segfault and a sleep."""
    if case.get("crash"):
        import signal

        os.kill(os.getpid(), signal.SIGSEGV)
    if case.get("hang"):
        import time

        time.sleep(case["hang"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return Runner(case).run()
        except Exception as e:  # noqa: BLE001 - a harness error is a finding too
            return [f"[harness] {type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}"]


# -- the worker process ----------------------------------------------------------------------
def _send(stream, obj) -> None:
    data = pickle.dumps(obj)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream):
    head = stream.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(n))


def serve() -> None:
    """The worker's loop: read a case from stdin, write its findings to the real stdout
    (anything the engine prints goes to stderr)."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    stdin = sys.stdin.buffer
    while True:
        case = _receive(stdin)
        if case is None:
            return
        _send(out, run_case(case))


class WorkerDied(Exception):
    pass


class Worker:
    """A child process that runs cases; a crash or hang there fails the case, not pytest."""

    def __init__(self, timeout: float = 120.0):
        self.timeout = timeout
        self.proc = None
        self.log = None

    def start(self) -> None:
        """A fresh worker (its stderr kept in a temporary file, for a crash's report)."""
        self.log = tempfile.TemporaryFile()
        env = dict(os.environ, PYTHONFAULTHANDLER="1")
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve())],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, env=env)

    def run(self, case: dict) -> list[str]:
        """The case's findings; a crash or timeout becomes the only finding (and the next
        case gets a fresh worker)."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        try:
            _send(self.proc.stdin, case)
            ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
            if not ready:
                self.stop()
                return [f"[worker] no answer within {self.timeout:.0f} s (a hang?)"]
            result = _receive(self.proc.stdout)
            if result is None:
                raise WorkerDied
            return result
        except (WorkerDied, BrokenPipeError):
            code = self.proc.wait()
            self.log.seek(0)
            tail = self.log.read()[-3000:].decode("utf-8", "replace")
            self.stop()
            return [f"[worker] the process died (exit code {code}) running this case; its "
                    f"last output:\n{tail}"]

    def stop(self) -> None:
        """End the worker (killed if it still runs) and close its pipes and log."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.proc.stdin.close()
            self.proc.stdout.close()
            self.proc = None
        if self.log is not None:
            self.log.close()
            self.log = None


if __name__ == "__main__":
    serve()


# -- generating cases (hypothesis strategies; the parent process only) -------------------------
def _strategies():
    from hypothesis import strategies as st

    return st


def _float_extremes(dt: np.dtype) -> list:
    fi = np.finfo(dt)
    vals = [float(fi.max), -float(fi.max), float(fi.tiny), float(fi.smallest_subnormal),
            -float(fi.smallest_subnormal), 1e38, -1e38, 1e-45, 3e38, 1e308, 65504.0, 0.1, 100.0]
    return [v for v in vals if abs(v) <= float(fi.max)]


def value_strategy(dtype: str):
    """Python values for ``dtype``: mostly plain, often extreme or special."""
    st = _strategies()
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return st.booleans()
    if dt.kind in "iu":
        info = np.iinfo(dt)
        odd = [int(info.min), int(info.max), int(info.max) - 1, int(info.min) + 1, 0]
        if dt.kind == "u" and info.max > 2 ** 63:
            odd += [2 ** 63, 2 ** 63 - 1]
        plain = st.integers(max(int(info.min), -3), 3)
        return st.one_of(plain, plain, st.sampled_from(odd))
    if dt.kind == "f":
        plain = st.sampled_from([-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0])
        special = st.sampled_from([math.nan, math.inf, -math.inf, -0.0])
        return st.one_of(special, plain, special, st.sampled_from(_float_extremes(dt)))
    if dt.kind == "c":
        return st.sampled_from([1 + 2j, 0j, complex(math.nan, 1.0), 2 + 0j])
    if dt.kind == "O":
        return st.sampled_from([1, 2.5, 2 ** 70, -(2 ** 65), True, 3])
    if dt.kind == "U":
        return st.sampled_from(["a", "1.5", ""])
    return st.integers(0, 3)  # datetime64 days


SIDES = (0, 1, 1, 2, 2, 3)


def shapes(min_rank=0, max_rank=3, sides=SIDES):
    st = _strategies()
    return st.lists(st.sampled_from(sides), min_size=min_rank, max_size=max_rank).map(tuple)


def input_spec(draw, shape: tuple, dtypes, sources=("array",)) -> dict:
    """An odd array of ``shape``: a dtype from ``dtypes``, a layout, flags, a source."""
    st = _strategies()
    dtype = draw(st.sampled_from(dtypes))
    numeric = np.dtype(dtype).kind in "biufc"
    layouts = ["c", "c", "F"] + (["flip0", "flipL", "step", "bcast"] if shape else []) + \
        (["T"] if len(shape) >= 2 else []) + (["unaligned"] if numeric else [])
    layout = draw(st.sampled_from(layouts))
    mask = ()
    if layout == "bcast":
        mask = tuple(i for i in range(len(shape)) if draw(st.booleans()))
    bshape = base_shape(shape, layout, mask)
    n = math.prod(bshape)
    values = draw(st.lists(value_strategy(dtype), min_size=n, max_size=n))
    source = draw(st.sampled_from(sources)) if not shape else \
        draw(st.sampled_from([s for s in sources if s != "scalar"] or ["array"]))
    return {"dtype": dtype, "shape": shape, "base_shape": bshape, "values": values,
            "layout": layout, "readonly": draw(st.booleans()), "source": source,
            "numpy_scalar": draw(st.booleans()) if source == "scalar" else False}


def ingestion_cases(cuda: bool = False):
    """Cases of odd inputs alone (no steps): every dtype, layout and source."""
    st = _strategies()

    @st.composite
    def build(draw):
        inputs = {}
        for i in range(draw(st.integers(1, 3))):
            shape = draw(shapes(0, 3))
            dtypes = CONVERTIBLE + FOREIGN if draw(st.booleans()) else CONVERTIBLE
            inputs[f"x{i}"] = input_spec(draw, shape, dtypes, ("array", "list", "scalar"))
        return {"inputs": inputs, "steps": [], "fetch": [],
                "devices": ("cpu", "cuda") if cuda else ("cpu",)}

    return build()


def _natural_name(dtype: str) -> str:
    """The kernelgraph dtype an input of ``dtype`` is expected to become (guides choices)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return "bool"
    if dt.kind in "iu":
        return "int32" if dt.kind == "i" and dt.itemsize == 4 else "int64"
    return "float64" if dt.itemsize == 8 else "float32"


# Identities first and often: the static compiler simplifies x + 0, x * 1, x ** 1 ...
IDENTITIES = [0, 1, -0.0, 0.0, 1.0, True, False]
SCALARS = [-1, 2, -3, 0.5, 2.5, 1e38, math.nan, math.inf, -math.inf, 2 ** 31, 1e-45, -2.0]
FAMILIES = {
    "elementwise": UNARY + ARITH + COMPARE + ("where", "cast", "clip"),
    "reduce": REDUCE,
    "shape": SHAPE + ("gather", "one_hot"),
    "nn": NN,
}


class _Program:
    """The state of a program being drawn: its inputs, steps and the abstract (shape,
    dtype) of every value."""

    def __init__(self, draw, dtypes, odd_share):
        self.draw = draw
        self.dtypes = dtypes
        self.odd_share = odd_share
        self.inputs, self.steps, self.abstract = {}, [], {}
        self.done = False

    def new_input(self, shape, dtype=None) -> str:
        st = _strategies()
        if dtype is None:
            odd = self.draw(st.integers(0, 99)) < self.odd_share
            dtypes = self.dtypes if odd else SUPPORTED
        else:
            dtypes = (dtype,)
        name = f"x{len(self.inputs)}"
        self.inputs[name] = input_spec(self.draw, tuple(shape), dtypes)
        self.abstract[name] = (tuple(shape), _natural_name(self.inputs[name]["dtype"]))
        return name

    def int_input(self, shape, low, high) -> str:
        st = _strategies()
        name = f"x{len(self.inputs)}"
        n = math.prod(shape)
        dtype = self.draw(st.sampled_from(["int64", "int32", "int64", "uint8"] if low >= 0
                                          else ["int64", "int32"]))
        values = self.draw(st.lists(st.integers(low, high), min_size=n, max_size=n))
        self.inputs[name] = {"dtype": dtype, "shape": tuple(shape), "base_shape": tuple(shape),
                             "values": values, "layout": "c", "readonly": False,
                             "source": "array", "numpy_scalar": False}
        self.abstract[name] = (tuple(shape), _natural_name(dtype))
        return name

    def pick(self) -> str:
        st = _strategies()
        ids = list(self.abstract)
        last = ids[-1]
        return self.draw(st.sampled_from([last, last, last] + ids))

    def zeros(self, vid):
        shape, dt = self.abstract[vid]
        return np.zeros(shape, dt)

    def add(self, op, args, attrs, form="fn"):
        out = f"v{len(self.steps)}"
        step = {"op": op, "args": args, "attrs": attrs, "out": out, "form": form}
        self.steps.append(step)
        ref_args = [self.zeros(a) if isinstance(a, str) else a for a in args]
        try:
            exp = expect(op, ref_args, attrs)
        except (Refusal, Exception):  # noqa: BLE001 - the step is expected to fail: last one
            self.done = True
            return out
        if exp.value is None:
            self.done = True
            return out
        self.abstract[out] = (exp.value.shape, exp.value.dtype.name)
        return out


def _broadcastable_shape(draw, shape):
    st = _strategies()
    keep = draw(st.integers(0, len(shape)))
    tail = [1 if draw(st.booleans()) else d for d in shape[len(shape) - keep:]]
    lead = draw(st.lists(st.sampled_from([1, 2]), max_size=1)) if len(shape) < 3 and \
        keep == len(shape) else []
    return tuple(lead + tail)


def _axis(draw, rank, allow_none=True, allow_tuple=True, bad=True):
    st = _strategies()
    choices = ["int"] * 3 + (["none"] if allow_none else []) + (["tuple"] if allow_tuple else [])
    kind = draw(st.sampled_from(choices)) if rank else ("none" if allow_none else "int")
    if kind == "none":
        return None
    if bad and draw(st.integers(0, 19)) == 0:
        return rank + draw(st.integers(0, 1))  # out of range: a clear error is expected
    if kind == "int":
        return draw(st.integers(-rank, rank - 1)) if rank else 0
    # Not (): NumPy and TF1 reduce over no axis there, PyTorch over every axis.
    axes = draw(st.lists(st.integers(0, rank - 1), unique=True, min_size=1, max_size=rank))
    return tuple(a - rank if draw(st.booleans()) else a for a in axes)


def _reshape_target(draw, shape):
    st = _strategies()
    size = math.prod(shape)
    if draw(st.integers(0, 14)) == 0:
        return (size + 1,)  # wrong size
    if size == 0:
        dims = list(draw(shapes(1, 3, (0, 1, 2, 3))))
        if 0 not in dims:
            dims[0] = 0
        return tuple(dims)
    factors, n = [], size
    for p in (2, 3, 5, 7):
        while n % p == 0:
            factors.append(p)
            n //= p
    if n > 1:
        factors.append(n)
    rank = draw(st.integers(0 if size == 1 else 1, 3))
    dims = [1] * rank
    for f in factors:
        dims[draw(st.integers(0, rank - 1))] *= f
    if rank and draw(st.booleans()):
        dims[draw(st.integers(0, rank - 1))] = -1
    return tuple(dims)


def _index(draw, shape):
    st = _strategies()
    items, rank = [], len(shape)
    dim = 0
    used_ellipsis = False
    while dim < rank and draw(st.integers(0, 3)):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis"]))
        d = shape[dim]
        if kind == "int":
            if d == 0 or draw(st.integers(0, 19)) == 0:
                items.append(d + draw(st.integers(0, 1)))  # out of range
            else:
                items.append(draw(st.integers(-d, d - 1)))
            dim += 1
        elif kind == "slice":
            step = draw(st.sampled_from([None, 1, 2, -1, -2]))
            start = draw(st.one_of(st.none(), st.integers(-d - 1, d + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-d - 1, d + 1)))
            items.append([start, stop, step])
            dim += 1
        elif kind == "none":
            items.append(None)
        elif not used_ellipsis:
            items.append("...")
            used_ellipsis = True
            dim = rank - draw(st.integers(0, rank - dim))
    return items


def _draw_step(draw, prog: _Program, op: str) -> None:
    """Append one step of ``op`` to ``prog``, choosing operands and attributes that fit
    (and now and then ones that must be refused)."""
    st = _strategies()
    x = prog.pick()
    shape, dt = prog.abstract[x]
    rank = len(shape)
    if op in UNARY:
        prog.add(op, [x], {})
    elif op in ARITH or op in COMPARE:
        kind = draw(st.sampled_from(["same", "pool", "new", "scalar", "scalar"]))
        if kind == "pool":
            others = [v for v, (s, _) in prog.abstract.items() if _broadcasts(s, shape)]
            y = draw(st.sampled_from(others))
        elif kind == "new":
            y = prog.new_input(_broadcastable_shape(draw, shape))
        elif kind == "scalar":
            y = draw(st.one_of(st.sampled_from(IDENTITIES), st.sampled_from(SCALARS)))
        else:
            y = x
        args = [x, y] if draw(st.booleans()) or kind != "scalar" else [y, x]
        form = draw(st.sampled_from(["fn", "operator"])) if op in OPERATORS else "fn"
        prog.add(op, args, {}, form)
    elif op == "where":
        conds = [v for v, (s, d) in prog.abstract.items() if d == "bool" and _broadcasts(s,
                                                                                       shape)]
        cond = draw(st.sampled_from(conds)) if conds and draw(st.booleans()) else \
            prog.new_input(_broadcastable_shape(draw, shape), "bool")
        other = draw(st.one_of(st.just(x), st.sampled_from(list(prog.abstract))))
        if not _broadcasts(prog.abstract[other][0], shape):
            other = x
        prog.add("where", [cond, x, other], {})
    elif op == "cast":
        prog.add("cast", [x], {"dtype": draw(st.sampled_from(SUPPORTED))})
    elif op == "clip":
        lo = draw(st.sampled_from([None, -1, 0, 0.5, -1e38, -0.0]))
        hi = draw(st.sampled_from([None, 1, 2, 1.5, 1e38])) if lo is not None else \
            draw(st.sampled_from([1, 2, 1.5, 1e38]))
        prog.add("clip", [x], {"min": lo, "max": hi})
    elif op in ("sum", "mean", "max"):
        prog.add(op, [x], {"axis": _axis(draw, rank), "keepdims": draw(st.booleans())})
    elif op == "argmax":
        prog.add(op, [x], {"axis": _axis(draw, rank, allow_tuple=False),
                           "keepdims": draw(st.booleans())})
    elif op == "reshape":
        prog.add(op, [x], {"shape": _reshape_target(draw, shape)})
    elif op == "transpose":
        perm = None
        if draw(st.booleans()):
            perm = tuple(p - rank if draw(st.booleans()) else p
                         for p in draw(st.permutations(range(rank))))
            if draw(st.integers(0, 14)) == 0:
                perm = perm + (0,) if perm else (1,)  # a wrong permutation
        prog.add(op, [x], {"perm": perm} if perm is not None else {})
    elif op == "broadcast_to":
        target = [draw(st.sampled_from([0, 2, 3])) if d == 1 and draw(st.booleans()) else d
                  for d in shape]
        lead = draw(st.lists(st.sampled_from([0, 1, 2]), max_size=1 if rank < 3 else 0))
        prog.add(op, [x], {"shape": tuple(lead + target)})
    elif op == "getitem":
        prog.add(op, [x], {"index": _index(draw, shape)})
    elif op in ("concat", "stack"):
        same = [v for v, (s, d) in prog.abstract.items() if s == shape and d == dt]
        parts = draw(st.lists(st.sampled_from(same), min_size=1, max_size=3))
        r = rank + (op == "stack")
        axis = draw(st.integers(-r, r - 1)) if r else 0
        prog.add(op, parts, {"axis": axis})
    elif op == "pad":
        pairs = [[draw(st.integers(0, 2)), draw(st.integers(0, 2))] for _ in shape]
        prog.add(op, [x], {"paddings": pairs})
    elif op == "gather":
        if rank == 0:
            x = prog.new_input(draw(shapes(1, 3)))
            shape = prog.abstract[x][0]
            rank = len(shape)
        axis = draw(st.integers(-rank, rank - 1))
        d = shape[axis]
        bad = draw(st.integers(0, 9)) == 0
        idx = prog.int_input(draw(shapes(0, 2)), -1 if bad else 0, d if bad else max(d - 1, 0))
        if d == 0 and not bad:
            idx = prog.int_input((0,), 0, 0)
        prog.add(op, [x, idx], {"axis": axis})
    elif op == "one_hot":
        depth = draw(st.integers(0, 4))
        idx = prog.int_input(draw(shapes(0, 2)), -1, depth)
        prog.add(op, [idx], {"depth": depth})
    elif op in ("softmax", "log_softmax"):
        if rank == 0:
            x = prog.new_input(draw(shapes(1, 3)))
            rank = len(prog.abstract[x][0])
        prog.add(op, [x], {"axis": draw(st.integers(-rank, rank - 1))})
    elif op == "softmax_cross_entropy":
        n, c = draw(st.sampled_from([0, 1, 2, 3])), draw(st.sampled_from([0, 1, 2, 3]))
        if rank == 2 and dt in FLOAT_NAMES:
            n, c = shape
        else:
            x = prog.new_input((n, c))
        bad = draw(st.integers(0, 9)) == 0
        labels = prog.int_input((n,), -1 if bad else 0, c if bad else max(c - 1, 0))
        prog.add(op, [x, labels], {})
    elif op == "matmul":
        if rank < 2:
            x = prog.new_input(draw(shapes(2, 3)))
            shape, dt = prog.abstract[x]
        k = shape[-1]
        n = draw(st.sampled_from(SIDES))
        lead = list(shape[:-2]) if draw(st.booleans()) else []
        b = prog.new_input(tuple(lead) + (k, n), dt if draw(st.integers(0, 4)) else None)
        prog.add(op, [x, b] if draw(st.integers(0, 3)) else [b, x] if rank >= 2 else [x, b],
                 {})
    elif op in ("max_pool2d", "avg_pool2d", "global_avg_pool2d", "conv2d"):
        if rank != 4:
            x = prog.new_input((draw(st.sampled_from([0, 1, 2])), draw(st.sampled_from(
                [0, 1, 2])), draw(st.integers(1, 4)), draw(st.integers(1, 4))))
            shape, dt = prog.abstract[x]
        if op == "global_avg_pool2d":
            prog.add(op, [x], {})
        elif op == "conv2d":
            kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
            w = prog.new_input((draw(st.integers(1, 2)), shape[1], kh, kw),
                               dt if draw(st.integers(0, 4)) else None)
            attrs = {"stride": draw(st.sampled_from([1, 2, (1, 2)])),
                     "padding": draw(st.sampled_from([0, 1, (0, 1)])),
                     "dilation": draw(st.sampled_from([1, 1, 2]))}
            prog.add(op, [x, w], attrs)
        else:
            k = draw(st.sampled_from([1, 2, 3, (2, 1)]))
            attrs = {"kernel_size": k, "stride": draw(st.sampled_from([None, 1, 2])),
                     "padding": draw(st.sampled_from([0, 0, 1]))}
            prog.add(op, [x], attrs)
    else:
        raise AssertionError(op)


def _broadcasts(a, b) -> bool:
    try:
        return np.broadcast_shapes(tuple(a), tuple(b)) == tuple(b)
    except ValueError:
        return False


def programs(families=tuple(FAMILIES), max_steps: int = 6, cuda: bool = False,
             entries=("raw", "mixed"), odd_share: int = 40, grads: bool = True):
    """Cases of 1-``max_steps`` ops from ``families`` over odd inputs (``odd_share`` percent
    of inputs get a non-kernelgraph dtype), a chain or a DAG; ``cuda`` adds the device."""
    st = _strategies()
    ops = tuple(op for f in families for op in FAMILIES[f])

    @st.composite
    def build(draw):
        prog = _Program(draw, CONVERTIBLE, odd_share)
        first = draw(st.sampled_from(ops))
        rank = (4,) if first in ("max_pool2d", "avg_pool2d", "global_avg_pool2d",
                                 "conv2d") else (2,) if first in (
                                     "matmul", "softmax_cross_entropy") else None
        prog.new_input(draw(shapes(*(rank * 2 if rank else (0, 3)))) if not rank or rank !=
                       (4,) else (draw(st.sampled_from([0, 1, 2])), draw(st.sampled_from(
                           [0, 1, 2])), draw(st.integers(1, 4)), draw(st.integers(1, 4))))
        n = draw(st.integers(1, max_steps))
        for i in range(n):
            op = first if i == 0 else draw(st.sampled_from(ops))
            _draw_step(draw, prog, op)
            if prog.done:
                break
        last = prog.steps[-1]["out"]
        fetch = [last]
        extra = [s["out"] for s in prog.steps[:-1] if s["out"] in prog.abstract]
        if extra and draw(st.booleans()):
            fetch.append(draw(st.sampled_from(extra)))
        grad_inputs, through = (), None
        if grads and len(fetch) == 1 and not prog.done:
            floats = [k for k, (_, d) in prog.abstract.items()
                      if k in prog.inputs and d in FLOAT_NAMES]
            grad_inputs = tuple(k for k in floats if draw(st.booleans()))
            mids = [s["out"] for s in prog.steps
                    if prog.abstract.get(s["out"], (0, ""))[1] in FLOAT_NAMES]
            if grad_inputs and mids and draw(st.booleans()):
                through = draw(st.sampled_from(mids))
        computed = list(prog.inputs) + [s["out"] for s in prog.steps
                                        if s["out"] in prog.abstract]
        fed = draw(st.sampled_from(computed)) if draw(st.booleans()) else None
        return {
            "inputs": prog.inputs, "steps": prog.steps, "fetch": fetch,
            "grad_inputs": grad_inputs, "grad_through": through, "feed_step": fed,
            "ph_shapes": {k: draw(st.sampled_from(["exact", "dims", "rank"]))
                          for k in prog.inputs},
            "ph_dtypes": {k: prog.abstract[k][1] for k in prog.inputs},
            "feeds": ("placeholder", "constant"),
            "entries": entries,
            "devices": ("cpu", "cuda") if cuda else ("cpu",),
        }

    return build()
