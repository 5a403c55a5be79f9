"""Record what ``torch.tensor(data)`` and ``torch.tensor(data, dtype=...)`` make of values
kernelgraph must convert or refuse (dtypes it does not keep, ints beyond int64, explicit
dtype requests), into ``dtypes.json`` (read by tests/test_shapes_dtypes.py).

Run with an environment that has torch (see README.md here)::

    python tests/recorded/record_dtypes.py

The values are built by :data:`CASES` here (NumPy only), which the test imports, so both
see the very same arrays (a byte-swapped or complex array does not survive JSON).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

# name -> (a function making the data, the dtype asked for or None)
CASES = {
    "float_list": (lambda: [1.5, -2.0], None),
    "int_list": (lambda: [1, -2], None),
    "bool_and_int": (lambda: [True, 2], None),
    "int_and_float": (lambda: [1, 2.5], None),
    "python_int_too_big": (lambda: 2 ** 63, None),
    "python_int_too_small": (lambda: [-2 ** 63 - 1], None),
    "python_ints_too_big_beside_small": (lambda: [2 ** 63, 1], None),
    "python_int_max": (lambda: [2 ** 63 - 1, -2 ** 63], None),
    "uint8": (lambda: np.array([0, 255], np.uint8), None),
    "uint16": (lambda: np.array([0, 65535], np.uint16), None),
    "uint32": (lambda: np.array([0, 2 ** 32 - 1], np.uint32), None),
    "uint64_small": (lambda: np.array([0, 2 ** 63 - 1], np.uint64), None),
    "uint64_big": (lambda: np.array([1, 2 ** 63 + 1], np.uint64), None),
    "int8": (lambda: np.array([-128, 127], np.int8), None),
    "int16": (lambda: np.array([-32768, 32767], np.int16), None),
    "float16": (lambda: np.array([0.1, -65504.0], np.float16), None),
    "float16_scalar": (lambda: np.float16(1.5), None),
    "float32": (lambda: np.array([0.1, 3e38], np.float32), None),
    "float64": (lambda: np.array([0.1, 1e300]), None),
    "big_endian_float32": (lambda: np.array([0.1, -2.5], ">f4"), None),
    "big_endian_int64": (lambda: np.array([2 ** 40, -3], ">i8"), None),
    "non_contiguous": (lambda: np.arange(12.0).reshape(3, 4)[:, ::2], None),
    "read_only": (lambda: _read_only(np.array([1, 2, 3], np.int32)), None),
    "complex": (lambda: np.array([1 + 2j]), None),
    "complex_python": (lambda: 1 + 2j, None),
    "text": (lambda: np.array(["a"]), None),
    "text_python": (lambda: "abc", None),
    "objects": (lambda: np.array([1, 2], object), None),
    "none": (lambda: None, None),
    "ragged": (lambda: [[1, 2], [3]], None),
    "datetime": (lambda: np.array(["2020-01-01"], "datetime64[D]"), None),
    "long_double": (lambda: np.array([1.5], np.longdouble), None),
    "float_to_int64": (lambda: [1.5, -1.5, 2.9], "int64"),
    "float_array_to_int32": (lambda: np.array([1.5, -1.5]), "int32"),
    "int_too_big_for_int32": (lambda: [2 ** 40], "int32"),
    "int_array_too_big_for_int32": (lambda: np.array([2 ** 40]), "int32"),
    "uint64_big_to_int64": (lambda: np.array([2 ** 63 + 1], np.uint64), "int64"),
    "nan_to_int64": (lambda: [float("nan")], "int64"),
    "nan_array_to_int64": (lambda: np.array([1.5, np.nan]), "int64"),
    "inf_to_int32": (lambda: [float("inf")], "int32"),
    "float_too_big_for_int32": (lambda: [3e9], "int32"),
    "int_to_bool": (lambda: [2, 0], "bool"),
    "float_to_bool": (lambda: [-1.5, 0.0], "bool"),
    "float_overflow_to_float32": (lambda: [1e300], "float32"),
    "int64_to_float32": (lambda: [2 ** 24 + 1], "float32"),
    "int_array_to_float64": (lambda: np.array([3, -4], np.int16), "float64"),
}


def _read_only(a):
    a.setflags(write=False)
    return a


def _plain(v):
    """``v`` for JSON: a complex number as [real, imag]."""
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return [v.real, v.imag] if isinstance(v, complex) else v


def main() -> None:
    import warnings

    import torch

    warnings.simplefilter("ignore")  # torch warns about read-only arrays; recorded anyway
    cases = {}
    for name, (make, dtype) in CASES.items():
        try:
            t = torch.tensor(make(), dtype=None if dtype is None else getattr(torch, dtype))
            cases[name] = {"dtype": str(t.dtype).replace("torch.", ""),
                           "value": _plain(t.tolist())}
        except Exception as e:  # noqa: BLE001 - recorded: the tests compare it
            cases[name] = {"error": {"type": type(e).__name__,
                                     "message": str(e).splitlines()[0]}}
    rec = {"versions": {"torch": torch.__version__, "numpy": np.__version__}, "cases": cases}
    path = Path(__file__).with_name("dtypes.json")
    path.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
