"""PyTorch's ``torch.testing.assert_close``: tensors (or NumPy arrays, or Python numbers, or
sequences and mappings of them) compared with PyTorch's default tolerances for their dtype,
failing with PyTorch's message ("Tensor-likes are not close! ...").

>>> import kernelgraph as kg
>>> assert_close(kg.tensor([1.0, 2.0]), kg.tensor([1.0, 2.0000001]))
>>> try:
...     assert_close(kg.tensor([1.0, 2.0, 3.0]), kg.tensor([1.0, 2.5, 3.0]))
... except AssertionError as e:
...     print(e)
Tensor-likes are not close!
<BLANKLINE>
Mismatched elements: 1 / 3 (33.3%)
Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..eager import Tensor

__all__ = ["assert_allclose", "assert_close", "default_tolerances"]

#: PyTorch's default (rtol, atol) per dtype; every other dtype compares exactly.
_TOLERANCES = {
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
}


def default_tolerances(*dtypes) -> tuple[float, float]:
    """PyTorch's default ``(rtol, atol)``: the loosest of the given dtypes'.

    >>> default_tolerances(np.float32), default_tolerances(np.float64, np.float16)
    ((1.3e-06, 1e-05), (0.001, 1e-05))
    """
    pairs = [_TOLERANCES.get(np.dtype(d).name, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


class _Mismatch(AssertionError):
    """A failed comparison; ``path`` is the item of the nested inputs where it happened."""


def _torch_dtype(d) -> str:
    return f"torch.{np.dtype(d).name}"


def _size(shape) -> str:
    return f"torch.Size([{', '.join(map(str, shape))}])"


def _tolerances(rtol, atol, *dtypes):
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, "
                         f"but got no {missing}.")
    if rtol is None:
        return default_tolerances(*dtypes)
    return rtol, atol


def _diff_lines(equality, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol) -> str:
    out = []
    for kind, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol),
                                 ("relative", rel_diff, rel_idx, rtol)):
        line = (f"{kind.title()} difference: {diff}" if idx is None
                else f"Greatest {kind} difference: {diff} at index {idx}")
        out.append(line if equality else f"{line} (up to {tol} allowed)")
    return "\n".join(out)


def _scalar_message(actual, expected, rtol, atol, identifier="Scalars") -> str:
    equality = rtol == 0 and atol == 0
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return (f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
            f"Expected {expected} but got {actual}.\n"
            + _diff_lines(equality, abs_diff, None, atol, rel_diff, None, rtol))


def _matches(a: np.ndarray, b: np.ndarray, rtol, atol, equal_nan) -> np.ndarray:
    if a.dtype.kind == "b" or (rtol == 0 and atol == 0 and a.dtype.kind in "iu"):
        return a == b
    with np.errstate(invalid="ignore", over="ignore"):
        close = a == b
        if equal_nan and a.dtype.kind in "fc":
            close |= np.isnan(a) & np.isnan(b)
        diff = np.abs(a - b)
        close |= np.isfinite(diff) & (diff <= atol + np.abs(rtol * b))
    return close


def _tensor_message(a, b, matches, rtol, atol) -> str:
    equality = rtol == 0 and atol == 0
    total = matches.size
    bad = total - int(matches.sum())
    fa, fb, fm = a.ravel(), b.ravel(), matches.ravel()
    if a.dtype.kind not in "fc":
        fa, fb = fa.astype(np.int64), fb.astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        abs_diff = np.abs(fa - fb)
        abs_diff[fm] = 0
        rel_diff = abs_diff / np.abs(fb)
        if a.dtype.kind not in "fc":  # PyTorch divides integers into its default float32
            rel_diff = rel_diff.astype(np.float32)
        rel_diff[fm] = 0
    i, j = _argmax(abs_diff), _argmax(rel_diff)
    return (f"Tensor-likes are not {'equal' if equality else 'close'}!\n\n"
            f"Mismatched elements: {bad} / {total} ({bad / total:.1%})\n"
            + _diff_lines(equality, abs_diff[i].item(), _index(i, a.shape), atol,
                          rel_diff[j].item(), _index(j, a.shape), rtol))


def _index(flat: int, shape) -> tuple:
    return tuple(int(k) for k in np.unravel_index(flat, shape))


def _argmax(x: np.ndarray) -> int:
    # torch.max propagates NaN: the first NaN is the maximum
    nan = np.flatnonzero(np.isnan(x)) if x.dtype.kind == "f" else ()
    return int(nan[0]) if len(nan) else int(np.argmax(x))


def _values(t) -> np.ndarray:
    if isinstance(t, Tensor):
        return t.detach().cpu().numpy()
    return np.asarray(t)


def compare_arrays(actual, expected, *, rtol=None, atol=None, equal_nan=False,
                   check_dtype=True, check_device=False) -> None:
    """One pair of tensors or arrays, as ``assert_close`` compares them (raises
    :class:`AssertionError` with PyTorch's message)."""
    if check_device and isinstance(actual, Tensor) and isinstance(expected, Tensor) \
            and str(actual.device) != str(expected.device):
        raise _Mismatch("The values for attribute 'device' do not match: "
                        f"{actual.device} != {expected.device}.")
    a, b = _values(actual), _values(expected)
    if a.shape != b.shape:
        raise _Mismatch("The values for attribute 'shape' do not match: "
                        f"{_size(a.shape)} != {_size(b.shape)}.")
    if check_dtype and a.dtype != b.dtype:
        raise _Mismatch("The values for attribute 'dtype' do not match: "
                        f"{_torch_dtype(a.dtype)} != {_torch_dtype(b.dtype)}.")
    rtol, atol = _tolerances(rtol, atol, a.dtype, b.dtype)
    if a.dtype != b.dtype:
        common = np.promote_types(a.dtype, b.dtype)
        a, b = a.astype(common), b.astype(common)
    matches = _matches(a, b, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.ndim == 0:
        raise _Mismatch(_scalar_message(a.item(), b.item(), rtol, atol))
    raise _Mismatch(_tensor_message(a, b, matches, rtol, atol))


def _compare_numbers(actual, expected, rtol, atol, equal_nan) -> None:
    kind = (complex if isinstance(actual, complex) or isinstance(expected, complex) else
            float if isinstance(actual, float) or isinstance(expected, float) else int)
    dtype = {complex: np.complex128, float: np.float64, int: np.int64}[kind]
    rtol, atol = _tolerances(rtol, atol, dtype)
    if bool(_matches(np.asarray(actual, dtype), np.asarray(expected, dtype), rtol, atol,
                     equal_nan)):
        return
    raise _Mismatch(_scalar_message(actual, expected, rtol, atol))


_NUMBER = (numbers.Number, np.number, np.bool_)


def _compare(actual, expected, path: tuple, kw: dict, relaxed: bool) -> None:
    try:
        if isinstance(actual, str | bytes) or isinstance(expected, str | bytes):
            if actual != expected:
                raise _Mismatch(f"{actual!r} != {expected!r}")
            return
        arrays = (Tensor, np.ndarray)
        if isinstance(actual, arrays) and isinstance(expected, arrays):
            if not relaxed and type(actual) is not type(expected) and not (
                    isinstance(actual, Tensor) and isinstance(expected, Tensor)):
                raise TypeError(f"No comparison pair was able to handle inputs of type "
                                f"{type(actual)} and {type(expected)}.")
            compare_arrays(actual, expected, **kw)
            return
        if relaxed and isinstance(actual, arrays) != isinstance(expected, arrays) and \
                isinstance(expected if isinstance(actual, arrays) else actual,
                           (*_NUMBER, Sequence)):
            # PyTorch's TestCase: a number or list against a tensor takes the tensor's dtype
            t, other = (actual, expected) if isinstance(actual, arrays) else (expected, actual)
            like = np.asarray(other).astype(_values(t).dtype)
            pair = (actual, like) if t is actual else (like, expected)
            compare_arrays(*pair, **{**kw, "check_dtype": False})
            return
        if isinstance(actual, Mapping) and isinstance(expected, Mapping):
            if set(actual) != set(expected):
                raise _Mismatch(f"The keys of the mappings do not match:\n"
                                f"Missing keys in the actual mapping: "
                                f"{sorted(set(expected) - set(actual), key=str)}\n"
                                f"Extra keys in the actual mapping: "
                                f"{sorted(set(actual) - set(expected), key=str)}")
            for key in actual:
                _compare(actual[key], expected[key], (*path, key), kw, relaxed)
            return
        if isinstance(actual, Sequence) and isinstance(expected, Sequence):
            if len(actual) != len(expected):
                raise _Mismatch(f"The length of the sequences mismatch: "
                                f"{len(actual)} != {len(expected)}")
            for i, (x, y) in enumerate(zip(actual, expected, strict=True)):
                _compare(x, y, (*path, i), kw, relaxed)
            return
        if isinstance(actual, _NUMBER) and isinstance(expected, _NUMBER):
            if not relaxed and kw["check_dtype"] and type(actual) is not type(expected):
                raise _Mismatch(f"The values for attribute 'dtype' do not match: "
                                f"{type(actual)} != {type(expected)}.")
            _compare_numbers(actual, expected, kw["rtol"], kw["atol"], kw["equal_nan"])
            return
        if relaxed:
            if actual != expected:
                raise _Mismatch(f"{actual!r} != {expected!r}")
            return
        raise TypeError(f"No comparison pair was able to handle inputs of type "
                        f"{type(actual)} and {type(expected)}.")
    except _Mismatch as e:
        if path and not getattr(e, "located", False):
            e = _Mismatch(f"{e}\n\nThe failure occurred for item "
                          f"{''.join(f'[{p!r}]' for p in path)}")
            e.located = True
            raise e from None
        raise


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg: str | Callable | None = None) -> None:
    """Raise :class:`AssertionError` unless ``actual`` and ``expected`` are close, as
    ``torch.testing.assert_close``: equal shapes (and dtypes with ``check_dtype``), values
    within ``atol + rtol * |expected|`` with PyTorch's defaults per dtype (float32:
    ``rtol=1.3e-6, atol=1e-5``; float64: ``1e-7, 1e-7``; integers and bools exactly).
    Sequences and mappings are compared item by item.

    >>> import kernelgraph as kg
    >>> assert_close([kg.tensor(1.0), 2.0], [kg.tensor(1.0), 2.0])
    >>> assert_close(kg.tensor([1.0]), kg.tensor([1.1]), rtol=0.2, atol=0.0)
    """
    kw = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype,
              check_device=check_device)
    try:
        _compare(actual, expected, (), kw, relaxed=False)
    except _Mismatch as e:
        text = str(e)
        if msg is not None:
            text = msg(text) if callable(msg) else msg
        raise AssertionError(text) from None


def assert_allclose(actual, expected, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """PyTorch's deprecated ``torch.testing.assert_allclose``: ``expected`` may be a number
    or a list (taken in ``actual``'s dtype), dtypes are not compared, NaNs are equal.

    >>> import kernelgraph as kg
    >>> assert_allclose(kg.tensor([1.0, 2.0]), [1.0, 2.00001])  # a FutureWarning, as PyTorch
    """
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor | np.ndarray):
        actual = np.asarray(actual)
    if not isinstance(expected, Tensor | np.ndarray):
        expected = np.asarray(expected, dtype=_values(actual).dtype)
    if rtol is None and atol is None:
        a, b = _values(actual), _values(expected)
        rtol, atol = default_tolerances(a.dtype, b.dtype)
    try:
        compare_arrays(_values(actual), _values(expected), rtol=rtol, atol=atol,
                       equal_nan=equal_nan, check_dtype=False)
    except _Mismatch as e:
        raise AssertionError(msg or str(e)) from None
