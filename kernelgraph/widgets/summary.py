"""Short text for values, shapes and source locations, as the graph document shows them.

>>> import numpy as np
>>> summarize(300.0), summarize(np.float32(0.5)), summarize([1.0, 2.5])
('300', '0.5', '[1. , 2.5]')
>>> summarize(np.zeros((64, 10)))
'shape (64, 10) mean 0 std 0 min 0 max 0'
>>> summarize(np.array([0.5, -0.25, -0.25 + 1e-9] * 8, dtype=np.float32))  # mean at rounding
'shape (24,) mean 0 std 0.3536 min -0.25 max 0.5'
"""

from __future__ import annotations

import os

import numpy as np

from .. import devices
from ..eager import Tensor
from ..errors import _cell_name
from ..graph import shape_str

MAX_ITEMS = 16  # arrays with more elements are described by their statistics
MAX_CHARS = 120


def _array(value):
    if value is None:
        return None
    if isinstance(value, Tensor):
        value = value._array
    try:
        return devices.to_numpy(value)  # a GPU value is copied to the host to be shown
    except Exception:  # noqa: BLE001 - anything that is not array-like has no summary
        return None


def format_number(x) -> str:
    """A whole number in full, others in 4 significant digits: ``300``, ``0.1235``, ``1.5e-08``."""
    if isinstance(x, bool | np.bool_):
        return str(bool(x))
    if isinstance(x, int | np.integer):
        return str(int(x))
    x = float(x)
    if not np.isfinite(x):
        return str(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.4g}"


def summarize(value, max_items: int = MAX_ITEMS) -> str | None:
    """A short string for ``value`` (number, array, kg.Tensor), or None for no value.

    Scalars print as numbers, arrays of at most ``max_items`` elements in full (NumPy
    precision 4) when that fits in ``MAX_CHARS``, others as their shape and statistics.
    """
    arr = _array(value)
    if arr is None or arr.dtype == object:
        return None if arr is None else _clip(repr(value))
    if arr.size == 1 and arr.ndim == 0:
        return format_number(arr.item())
    if arr.size == 0:
        return f"shape {shape_str(arr.shape)} empty"
    if arr.size <= max_items:
        text = np.array2string(arr, precision=4, separator=", ", suppress_small=True,
                               max_line_width=10_000)
        text = " ".join(text.split())
        if len(text) <= MAX_CHARS:
            return text
    stats = arr.astype(np.float64) if arr.dtype.kind in "biu" else arr
    with np.errstate(all="ignore"):
        parts = [f"mean {format_number(_mean(stats))}", f"std {format_number(np.std(stats))}",
                 f"min {format_number(np.min(stats))}", f"max {format_number(np.max(stats))}"]
    return _clip(f"shape {shape_str(arr.shape)} " + " ".join(parts))


ROUNDING_ULPS = 16  # a mean this many float epsilons of the largest value from 0 is shown as 0


def _mean(stats):
    """The mean, or 0 where it is below the rounding of the values it averages.

    A mean that is 0 in exact arithmetic (the gradient of a softmax loss, a normalised batch)
    comes out of float arithmetic as a few epsilons of the largest value, with a sign and
    digits that depend on how a parallel loop split its sums on this machine: showing them
    would claim a precision the values do not have.
    """
    mean = np.mean(stats)
    if stats.dtype.kind == "f" and np.isfinite(mean):
        noise = ROUNDING_ULPS * np.finfo(stats.dtype).eps * np.max(np.abs(stats))
        if abs(mean) <= noise:
            return 0
    return mean


def norm(value) -> float | None:
    """The L2 norm of ``value`` as a float (None when there is no numeric value)."""
    arr = _array(value)
    if arr is None or arr.dtype.kind not in "biuf":
        return None
    with np.errstate(all="ignore"):
        n = float(np.linalg.norm(arr.astype(np.float64).ravel()))
    return n if np.isfinite(n) else None


def format_location(location) -> str:
    """``"train.py:12"``, or ``"Cell In[3], line 2"`` for a notebook cell; ``""`` for none."""
    if not location:
        return ""
    try:
        filename, line = location
    except (TypeError, ValueError):
        return str(location)
    cell = _cell_name(filename)
    if cell:
        return f"{cell}, line {line}"
    return f"{os.path.basename(filename)}:{line}"


def _clip(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 3] + "..."
