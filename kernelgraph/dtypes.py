"""The dtypes kernelgraph supports and how they combine.

Dtypes are plain NumPy dtype objects, so ``kg.float32 is np.dtype('float32')``. Promotion
follows PyTorch rather than NumPy: an integer tensor meeting a float tensor takes the float
dtype (NumPy would widen int32 + float32 to float64), and a Python scalar never widens a
tensor (``float32_tensor * 2.0`` stays float32).
"""

from __future__ import annotations

import numpy as np

from . import devices
from .errors import shown

float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
bool_ = np.dtype(np.bool_)
# Storage dtypes (TF1 tutorials' uint8 images, int8/int16 data, float16 casts): nodes and
# tensors may hold them (constants, placeholders, Variables, feeds, fetches, casts), and an
# op computes on them in the kept dtype of their kind (:data:`WIDE`: int64, float32), as a
# NumPy array of them is read. A graph stores an elementwise result of operands that share
# one storage dtype in that dtype again (:func:`kept_narrow`): ``int8 + int8`` is int8,
# wrapping at 127, and float16 math is rounded to float16, as TF1 and PyTorch do.
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
uint8 = np.dtype(np.uint8)
float16 = np.dtype(np.float16)
#: TF1's ``tf.string``: a tensor of ``bytes`` objects (constants, feeds and fetches only).
string = np.dtype(object)

SUPPORTED = (float32, float64, int32, int64, bool_)
STORAGE = (int8, int16, uint8, float16)
#: PyTorch's names of dtypes (``torch.float``, ``torch.long``, ``torch.half`` ...), which
#: kernelgraph's package exports: kernelgraph is the ``torch`` namespace of ported code.
TORCH_NAMES = {"float": float32, "double": float64, "half": float16, "long": int64,
               "int": int32, "short": int16, "bool": bool_, "uint8": uint8, "int8": int8,
               "int16": int16, "float16": float16, "float32": float32, "float64": float64,
               "int32": int32, "int64": int64}
#: The dtype an op computes in for each storage dtype.
WIDE = {int8: int64, int16: int64, uint8: int64, float16: float32}
# The same, as a set for the hot paths' one membership test: an array of one of these (in
# the machine's byte order: '>f4' is not in it) needs no conversion.
KEPT = frozenset(SUPPORTED)
FLOATS = frozenset((float32, float64))
INTS = frozenset((int32, int64))
DEFAULT_FLOAT = float32
DEFAULT_INT = int64

_ALIASES = {
    float: float32, int: int64, bool: bool_, str: string, bytes: string,
    "float": float32, "int": int64, "bool": bool_, "float32": float32, "float64": float64,
    "int32": int32, "int64": int64, "double": float64, "int8": int8, "int16": int16,
    "uint8": uint8, "float16": float16, "half": float16, "string": string, "long": int64,
    "short": int16,
}


def as_dtype(value) -> np.dtype:
    """Return the kernelgraph dtype named by ``value`` (a dtype, a name, or a Python type).

    >>> as_dtype("float32") is float32
    True
    """
    if id(value) in _ALL:
        return value
    if value is None:
        return DEFAULT_FLOAT
    hit = _ALIASES.get(value) if isinstance(value, str | type) else None
    if hit is not None:
        return hit
    try:
        dt = np.dtype(value)
    except TypeError:
        raise TypeError(f"expected a dtype such as kg.float32, got {shown(value)}") from None
    if dt.byteorder not in "=|":
        dt = dt.newbyteorder("=")  # '>f4' holds float32 values: the same dtype, native
    if dt.kind in "SUO":
        return string
    if dt not in SUPPORTED and dt not in STORAGE:
        names = ", ".join(d.name for d in SUPPORTED + STORAGE)
        raise TypeError(f"dtype {dt.name} is not supported; expected one of {names}")
    return np.dtype(dt.name)  # the canonical instance, so `is` comparisons work


_CANONICAL = {id(d) for d in SUPPORTED}
_ALL = {id(d) for d in SUPPORTED + STORAGE + (string,)}


def is_floating(dt) -> bool:
    return dt in FLOATS


def _kind_rank(dt):
    return (0 if dt is bool_ else 1 if dt in INTS else 2), dt.itemsize


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """The dtype of a binary op between tensors of dtypes ``a`` and ``b`` (PyTorch rules);
    a storage dtype counts as the dtype it computes in (:data:`WIDE`)."""
    if a is b:
        return WIDE.get(a, a)
    if a.kind in "OSU" or b.kind in "OSU":
        _no_strings(a, b)
    return max(WIDE.get(a, a), WIDE.get(b, b), key=_kind_rank)


def _no_strings(*dts):
    if string in dts:
        raise DtypeError("string tensors are held, fed and fetched, but kernelgraph has no "
                         "string math: this op takes numbers")


def kept_narrow(input_dtypes, out: np.dtype) -> np.dtype | None:
    """The storage dtype an elementwise result of dtype ``out`` is cast back to, else
    None: when every tensor operand shares one storage dtype ``dt`` and the op computed in
    ``WIDE[dt]``. So int16 + int16 is int16 again (wrapping, as TF1 and PyTorch do) and
    float16 math is rounded to float16 after each op (as both do on a CPU).

    >>> kept_narrow([uint8, uint8], int64).name, kept_narrow([uint8, int32], int64)
    ('uint8', None)
    """
    dts = set(input_dtypes)
    if len(dts) != 1:
        return None
    (dt,) = dts
    return dt if dt in WIDE and out is WIDE[dt] else None


def wide(dt: np.dtype) -> np.dtype:
    """The dtype an op computes in for tensors of ``dt``: itself, or for a storage dtype
    the kept dtype of its kind (int8 -> int64, float16 -> float32); strings are refused."""
    if dt.kind in "OSU":  # (checked by kind first: comparing dtypes is slow on this path)
        _no_strings(dt)
    return WIDE.get(dt, dt)


def scalar_dtype(value) -> np.dtype | None:
    """Dtype a bare Python scalar would take on its own, or None if it is not a scalar."""
    t = type(value)
    if t is bool or t is np.bool_:
        return bool_
    if t is int or isinstance(value, np.integer):
        return DEFAULT_INT
    if t is float or isinstance(value, np.floating):
        return DEFAULT_FLOAT
    return None


def promote_with_scalar(tensor_dtype: np.dtype, value) -> np.dtype:
    """A Python scalar is 'weak': it keeps the tensor's dtype unless it changes its kind."""
    sd = scalar_dtype(value)
    if sd is None:
        raise TypeError(f"expected a tensor or a Python number, got {type(value).__name__}")
    if _kind_rank(sd)[0] <= _kind_rank(tensor_dtype)[0]:
        return tensor_dtype
    return DEFAULT_FLOAT if sd is DEFAULT_FLOAT else DEFAULT_INT


# -- compute rules: the dtype an op computes in, after promotion -----------------------------
# Each elementwise op's card names one (kernelgraph.ops.elementwise): the CPU and CUDA
# kernels both apply it, so every device gives the same dtypes and refuses the same bools.
def floating(dt: np.dtype) -> np.dtype:
    """Integers and bools compute in float32, as PyTorch's ``exp`` or true division do."""
    dt = wide(dt)
    return dt if dt in FLOATS else float32


def arith(dt: np.dtype) -> np.dtype:
    """Bools count as int64 (``relu_grad`` of a bool mask)."""
    dt = wide(dt)
    return int64 if dt is bool_ else dt


def same(dt: np.dtype) -> np.dtype:
    """The promoted dtype itself: bools stay bools (``b + b`` is a logical or, as the bool
    loop of a scalar body stores any nonzero result as True), and comparisons compare in it."""
    return wide(dt)


def refuse_bool(message: str):
    """A compute rule that keeps the dtype but refuses bools, with ``message`` (PyTorch's)."""
    def rule(dt):
        dt = wide(dt)
        if dt is bool_:
            raise DtypeError(message)
        return dt
    return rule


def sum_dtype(dt: np.dtype) -> np.dtype:
    """PyTorch's ``torch.sum``: bools and every integer dtype sum to int64 (an int32 sum
    past 2**31 is exact, not wrapped); floats keep their dtype. TF1 keeps int32 and
    refuses bools; both modes follow PyTorch here (one op set)."""
    return wide(dt) if dt in FLOATS or dt is float16 else int64


def is_array(v) -> bool:
    """Whether ``v`` is an array (host or device), not a Python number."""
    return isinstance(v, np.ndarray) or devices.is_cuda_array(v)


def operand_dtype(values) -> np.dtype:
    """The promoted dtype of arrays (host or device) and weak Python scalars: what an
    elementwise op computes in before its compute rule."""
    # An array of a dtype kernelgraph does not keep (a raw '>i4' or float16 array) counts
    # as the kept dtype that holds its values (the op converts it exactly or refuses).
    arrays = [_kept(v.dtype) for v in values if is_array(v)]
    if not arrays:
        scalar = [scalar_dtype(v) for v in values]
        if None in scalar:
            bad = next(v for v in values if scalar_dtype(v) is None)
            raise TypeError(f"expected tensors or Python numbers, got {type(bad).__name__}")
        arrays = scalar
    dt = arrays[0]
    for d in arrays[1:]:
        dt = promote(dt, d)
    for v in values:
        if not is_array(v):
            dt = promote_with_scalar(dt, v)
    return as_dtype(dt)


def _kept(dt):
    if dt in KEPT:
        return as_dtype(dt)
    return kept_dtype(dt) or as_dtype(dt)  # as_dtype names what is not supported


# -- errors ----------------------------------------------------------------------------------
class DtypeError(TypeError, RuntimeError):
    """Operands whose dtypes an op does not take (``b - b`` on bools, ``mean`` of ints).
    A TypeError, as TF1 raises, and a RuntimeError, as PyTorch raises."""


class ConversionError(DtypeError, ValueError):
    """A value kernelgraph cannot hold exactly in the dtype asked for (an int beyond int64,
    complex numbers, text): it is refused rather than wrapped or rounded in silence. Also a
    ValueError, as PyTorch raises for an int it cannot unpack."""


# -- converting values into arrays of the kept dtypes ----------------------------------------
_INT64_LIMIT = 2 ** 63
_FLOAT_LIMIT = float(_INT64_LIMIT)  # compared with a float, NumPy stays on its fast path
_DEFAULTS = {float: DEFAULT_FLOAT, int: DEFAULT_INT, bool: bool_}


def kept_dtype(dt: np.dtype) -> np.dtype | None:
    """The kernelgraph dtype that holds the values of NumPy dtype ``dt``: itself when kept,
    else the kept dtype of the same kind that holds every value exactly (float16 -> float32;
    int8, int16 and unsigned ints -> int64; byte-swapped '>f4' -> float32). uint64 and
    long double are converted only when the values fit (see :func:`convert`). None for
    dtypes that hold no plain numbers (complex, text, objects, dates).

    >>> kept_dtype(np.dtype(np.float16)).name, kept_dtype(np.dtype(">i4")).name
    ('float32', 'int32')
    """
    kind, size = dt.kind, dt.itemsize
    if kind == "b":
        return bool_
    if kind == "f":
        return float32 if size <= 4 else float64
    if kind == "i":
        return int32 if size == 4 else int64
    if kind == "u":
        return int64
    return None


def _describe(kind: str) -> str | None:
    return {"c": "complex numbers", "U": "text", "S": "bytes", "O": "Python objects",
            "M": "dates", "m": "time spans", "V": "structured records"}.get(kind)


def _refuse_kind(arr: np.ndarray, what: str):
    names = ", ".join(d.name for d in SUPPORTED)
    hint = " (take .real or abs() first)" if arr.dtype.kind == "c" else ""
    raise ConversionError(f"{what} cannot hold {_describe(arr.dtype.kind)} ({arr.dtype}); "
                          f"kernelgraph keeps {names}{hint}")


def _python_int_out_of_range(value):
    """(the first Python int in nested lists ``value`` that int64 cannot hold, else None;
    whether ``value`` holds a float)."""
    stack, big, floats = [value], None, False
    while stack:
        v = stack.pop()
        if type(v) is int:
            if big is None and not -_INT64_LIMIT <= v < _INT64_LIMIT:
                big = v
        elif isinstance(v, float | np.floating):
            floats = True
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return big, floats


def _from_python(value, what: str, to_float: bool = False) -> np.ndarray:
    try:
        arr = np.array(value)
    except (ValueError, TypeError) as e:
        raise ConversionError(f"{what} expects a number, an array, or a nested list of "
                              f"numbers with equal lengths: {e}") from None
    kind = arr.dtype.kind
    # A Python int beyond int64 makes NumPy choose uint64 or objects, or, next to other
    # ints, float64: rounded in silence. PyTorch refuses it ("Overflow when unpacking")
    # where the data are integers, and rounds it to the float dtype where a float is among
    # them (``[2.5, 2**70]``) or a float dtype is asked for, as it rounds any float.
    if kind in "uO" or (kind == "f" and arr.size and not np.abs(arr).max() < _FLOAT_LIMIT):
        big, floats = _python_int_out_of_range(value)
        if big is not None and (floats or to_float):
            try:
                return np.array(value, dtype=float64)
            except OverflowError:
                raise ConversionError(f"{what}: the Python int {shown(big)} is beyond every "
                                      "float dtype (int too large to convert to float)") from None
            except (ValueError, TypeError):
                pass  # not numbers only: refused below, naming what is not a number
        elif big is not None:
            raise ConversionError(f"{what}: the Python int {shown(big)} does not fit int64, "
                                  "the widest integer dtype (Overflow when unpacking long long)")
    if kind == "O":
        bad = next((v for v in arr.flat if not isinstance(v, int | float | bool | np.number)),
                   None)
        raise ConversionError(f"{what} expects numbers, got {type(bad).__name__}"
                              + (f" ({bad!r:.40})" if bad is not None else ""))
    return arr


def _overflow(arr: np.ndarray, target: np.dtype, what: str, bad) -> ConversionError:
    return ConversionError(f"{what}: value cannot be converted to type {target.name} "
                           f"without overflow: {bad!r} ({arr.dtype})")


def _check_int_range(arr: np.ndarray, target: np.dtype, what: str) -> None:
    info = np.iinfo(target)
    if arr.dtype.kind in "iu":
        src = np.iinfo(arr.dtype)
        if src.min >= info.min and src.max <= info.max:
            return  # every value of the source dtype fits
        bad = (arr < info.min) | (arr > info.max)
    else:  # floats: finite and in range once truncated toward zero
        with np.errstate(invalid="ignore"):
            t = np.trunc(arr)
            bad = ~np.isfinite(arr) | (t < info.min) | (t >= float(info.max) + 1)
    if bad.any():
        raise _overflow(arr, target, what, arr[bad].flat[0].item())


def _check_exact_float(arr: np.ndarray, out: np.ndarray, what: str) -> None:
    """Long double to float64 only when nothing is rounded away."""
    same = (out == arr) | (np.isnan(arr) & np.isnan(out))
    if not same.all():
        bad = arr[~same].flat[0]
        raise ConversionError(f"{what}: the value {bad!r} ({arr.dtype}) is not exactly "
                              f"representable as {out.dtype.name}; round it first")


def convert(value, dtype=None, *, what: str = "kg.tensor", parse: bool = False) -> np.ndarray:
    """``value`` (a number, a nested list of numbers, or a NumPy array or scalar) as a new,
    C-contiguous, native-byte-order NumPy array of a kernelgraph dtype.

    Without ``dtype``, values are never wrapped or rounded: Python floats become float32
    and Python ints int64 (PyTorch's and TF's defaults); an array keeps its dtype when
    kernelgraph keeps it, else takes the kept dtype of its kind that holds every value
    exactly (:func:`kept_dtype`), and uint64 values above int64's range, Python ints beyond
    int64, complex numbers, text, objects and dates are refused with a
    :class:`ConversionError` naming the value's dtype and what was expected. Python data
    holding a float are floats, as in PyTorch: a big Python int among them (``[2.5,
    2**70]``) is rounded to the float dtype like any float, and so it is when a float dtype
    is asked for.

    With ``dtype`` (an explicit request, a placeholder's or a Variable's dtype), values are
    converted as PyTorch's ``torch.tensor(data, dtype=...)`` and TF1's ``feed_dict``
    convert them: floats are rounded to a float dtype, truncated toward zero for an integer
    dtype, and anything nonzero is True. An integer out of the dtype's range (``2**40`` for
    int32) or a NaN or infinity for an integer dtype is refused, where PyTorch and TF1 wrap
    a NumPy array's values in silence. ``parse``: text and objects are read by NumPy
    (``'1.5'`` for float32), as TF1's ``feed_dict`` reads them.

    >>> convert([1, 2]).dtype.name, convert(np.float16(0.5)).dtype.name
    ('int64', 'float32')
    >>> convert(np.array([2**63 + 1], np.uint64))
    Traceback (most recent call last):
    ...
    kernelgraph.dtypes.ConversionError: kg.tensor: value cannot be converted to type int64 \
without overflow: 9223372036854775809 (uint64)
    """
    t = type(value)
    if dtype is string or (dtype is not None and dtype is not float32 and as_dtype(dtype)
                           is string):
        return to_bytes(value, what)
    if (t is float or t is bool or (t is int and -_INT64_LIMIT <= value < _INT64_LIMIT)) \
            and (dtype is None or dtype is _DEFAULTS[t]):
        return np.array(value, _DEFAULTS[t])  # a Python number: its kind's default dtype
    python = not isinstance(value, np.ndarray | np.generic)
    if python and not parse:
        arr = _from_python(value, what, dtype is not None and as_dtype(dtype).kind == "f")
    else:
        arr = np.asarray(value)
    kind = arr.dtype.kind
    if kind not in "biuf" and not (parse and kind in "USO"):
        _refuse_kind(arr, what)
    if dtype is not None:
        target = as_dtype(dtype)
    elif kind not in "biuf":
        raise ConversionError(f"{what}: a value of {arr.dtype} needs a dtype to convert to")
    elif python and kind == "f":
        target = DEFAULT_FLOAT
    else:
        target = kept_dtype(arr.dtype)
    if kind in "USO":  # parse: NumPy reads the text; what it cannot read raises ValueError
        arr = np.asarray(arr, dtype={"f": float64, "i": int64}.get(target.kind, bool_))
        kind = arr.dtype.kind
    if target.kind in "iu" and kind in "iuf" and arr.dtype != target:
        _check_int_range(arr, target, what)
    # Python data was read into a new array already; an array the caller owns is copied.
    out = arr.astype(target, order="C", copy=not python)
    if kind == "f" and arr.dtype.itemsize > 8 and target in FLOATS:
        _check_exact_float(arr, out, what)
    return out


def to_bytes(value, what: str = "a string tensor") -> np.ndarray:
    """``value`` (a str, bytes, or nested lists or an array of them) as an array of
    ``bytes`` objects (dtype object), as TF1 holds a ``tf.string`` tensor: text is
    encoded as UTF-8.

    >>> to_bytes(["ab", b"c"])
    array([b'ab', b'c'], dtype=object)
    """
    arr = np.array(value, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    for index, v in np.ndenumerate(arr):
        if isinstance(v, str):
            v = v.encode("utf-8")
        elif isinstance(v, np.bytes_ | np.str_):
            v = bytes(v) if isinstance(v, np.bytes_) else str(v).encode("utf-8")
        elif not isinstance(v, bytes):
            raise ConversionError(f"{what} holds strings (str or bytes), got "
                                  f"{type(v).__name__} ({shown(v, 40)})")
        out[index] = v
    return out


def operand(arr: np.ndarray, op: str = "", position: int = 0) -> np.ndarray:
    """A NumPy array handed straight to an op (``kg.sum(array)``, ``kg.add(tensor,
    array)``), as the op reads it: the array itself where kernelgraph keeps its dtype in the
    machine's byte order (callers check that first, one dtype check: gradient rules hand the
    engine's own arrays through them), else converted as :func:`convert` converts it for
    ``kg.tensor`` (float16 -> float32, int16 -> int64, '>f8' -> float64 ...) or refused the
    same way, naming the op and the argument's ``position`` (0-based).

    >>> operand(np.array([32767, 1], np.int16), "sum").dtype.name
    'int64'
    """
    dt = arr.dtype
    if id(dt) in _CANONICAL:
        return arr
    if dt.isnative and dt in SUPPORTED:  # an equal dtype object of its own (unpickled)
        return arr.view(as_dtype(dt))
    return convert(arr, what=f"{op}(): argument {position + 1}" if op else "an operand")


def scalar_overflow(value: int, dtype: np.dtype, op: str) -> ConversionError:
    """The error for a Python int meeting an integer tensor whose dtype cannot hold it
    (``int32_tensor > 2**31``): refused, where NumPy raises OverflowError and PyTorch and
    TF1 wrap arithmetic in silence."""
    return ConversionError(f"{op}: the Python int {shown(value)} does not fit the tensor's "
                           f"dtype {np.dtype(dtype).name} (value cannot be converted to type "
                           f"{np.dtype(dtype).name} without overflow)")


def int_beyond(values, dtype: np.dtype):
    """The first Python int among ``values`` that integer ``dtype`` cannot hold, else None."""
    info = np.iinfo(dtype)
    return next((v for v in values if type(v) is int and not info.min <= v <= info.max), None)
