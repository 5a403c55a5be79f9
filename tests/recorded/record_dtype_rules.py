"""Record the dtype rules of reductions, products, constants, Python ints meeting tensors
and text feeds, in PyTorch (eager mode's model) and TF1 (static mode's), into
``dtype_rules.json`` (read by tests/test_shapes_dtypes.py).

Run with an environment that has torch and tensorflow-cpu (see README.md here)::

    python tests/recorded/record_dtype_rules.py

Each case is recorded as ``{"dtype": name, "value": nested list}`` or ``{"error": {"type":
name, "message": first line}}``, under ``torch`` and, where TF1 has the same call, ``tf1``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

DTYPES = ["bool", "int8", "int16", "int32", "int64", "float32", "float64"]
# Values every dtype holds: the sums of int16 and int32 overflow their own dtype.
REDUCED = {"bool": [True, True, False], "int8": [127, 1, 0], "int16": [32767, 1, 0],
           "int32": [2 ** 31 - 1, 1, 0], "int64": [2, 1, 0], "float32": [1.5, 2.0, 0.0],
           "float64": [1.5, 2.0, 0.0]}
PRODUCT_DTYPES = ["int32", "int64", "float32", "float64"]
# Python ints beyond a tensor's dtype: (tensor dtype, op, the int).
BIG_INTS = [("int32", "greater", 2 ** 31), ("int32", "add", 2 ** 31),
            ("int32", "mul", -2 ** 31 - 1), ("int64", "add", 2 ** 63),
            ("int64", "less", -2 ** 63 - 1), ("int32", "equal", 2 ** 40)]
# Data with a Python int that int64 cannot hold.
BIG_INT_DATA = {"floats_then_int": [2.5, 2 ** 70], "int_then_float": [2 ** 70, 2.5],
                "nested": [[2.5], [2 ** 70]], "ints_only": [1, 2 ** 70],
                "bool_and_int": [True, 2 ** 70], "negative": [-(2 ** 65), 0.5],
                "beyond_float32": [0.5, 2 ** 200], "beyond_float64": [0.5, 2 ** 1030]}
# Values fed to a float32 placeholder (TF1 only).
# Integer powers (base dtype, base, exponent): overflow wraps; negative exponents.
INT_POWERS = {"wrap_int32": ("int32", [2 ** 31 - 1, 3], [2 ** 31 - 1, 21]),
              "wrap_int64": ("int64", [3, -1, 2], [40, 2 ** 63 - 1, 64]),
              "zero_power": ("int64", [0, -5], [0, 0]),
              "bool_base": ("bool", [True, False], [3, 2]),
              "negative_exponent": ("int64", [3], [-1])}
TEXT_FEEDS = {"text_array": ("float32", lambda: np.array(["1.5", "-2"])),
              "text_list": ("float32", lambda: ["1.5"]),
              "bytes_array": ("float32", lambda: np.array([b"1.5"])),
              "object_text": ("float32", lambda: np.array(["1.5"], dtype=object)),
              "unreadable_text": ("float32", lambda: np.array(["a"])),
              "empty_text": ("float32", lambda: np.array([""])),
              "text_to_int32": ("int32", lambda: np.array(["7"])),
              "text_float_to_int32": ("int32", lambda: np.array(["1.5"])),
              "text_to_bool": ("bool", lambda: np.array(["True", ""])),
              "dates": ("float32", lambda: np.array(["2020-01-01"], "datetime64[D]"))}


def _outcome(fn, convert) -> dict:
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - a refusal is what we record
        # TF's run-time errors start with "Graph execution error:" and a blank line.
        text = [line for line in str(e).strip().splitlines()
                if line.strip() and line != "Graph execution error:"]
        return {"error": {"type": type(e).__name__, "message": text[0][:300] if text else ""}}
    arr = convert(out)
    return {"dtype": arr.dtype.name, "value": arr.tolist()}


def _torch_cases(torch) -> dict:
    import torch.nn.functional as F  # noqa: N812 - PyTorch's own spelling

    def run(fn):
        return _outcome(fn, lambda t: t.detach().numpy())

    def t(values, dtype):
        return torch.tensor(np.array(values, dtype=dtype))

    cases = {}
    for d in DTYPES:
        x = REDUCED[d]
        cases[f"sum({d})"] = run(lambda d=d, x=x: torch.sum(t(x, d)))
        cases[f"sum_axis({d})"] = run(lambda d=d, x=x: torch.sum(t([x, x], d), dim=0))
        cases[f"mean({d})"] = run(lambda d=d, x=x: torch.mean(t(x, d)))
        cases[f"max({d})"] = run(lambda d=d, x=x: torch.amax(t(x, d)))
        cases[f"argmax({d})"] = run(lambda d=d, x=x: torch.argmax(t(x, d)))
        cases[f"argmax_axis({d})"] = run(lambda d=d, x=x: torch.argmax(t([x, x], d), dim=1))
    for a in PRODUCT_DTYPES:
        for b in PRODUCT_DTYPES:
            cases[f"matmul({a},{b})"] = run(
                lambda a=a, b=b: torch.matmul(t([[1, 2], [3, 4]], a), t([[1, 0], [0, 1]], b)))
            cases[f"batched_matmul({a},{b})"] = run(
                lambda a=a, b=b: torch.matmul(t(np.ones((2, 1, 2)), a),
                                              t(np.ones((2, 2, 1)), b)))
            cases[f"conv2d({a},{b})"] = run(
                lambda a=a, b=b: F.conv2d(t(np.ones((1, 1, 2, 2)), a),
                                          t(np.ones((1, 1, 1, 1)), b)))
            cases[f"linear({a},{b})"] = run(
                lambda a=a, b=b: F.linear(t([[1, 2]], a), t([[1, 0], [0, 1]], b)))
    for dtype, op, value in BIG_INTS:
        fn = {"greater": torch.gt, "add": torch.add, "mul": torch.mul, "less": torch.lt,
              "equal": torch.eq}[op]
        cases[f"{op}({dtype},{value})"] = run(lambda fn=fn, d=dtype, v=value: fn(t([1], d), v))
    for name, data in BIG_INT_DATA.items():
        cases[f"tensor:{name}"] = run(lambda data=data: torch.tensor(data))
    for name, (dtype, base, exponent) in INT_POWERS.items():
        cases[f"pow:{name}"] = run(lambda d=dtype, b=base, e=exponent: torch.pow(
            t(b, d), t(e, "int64" if d == "bool" else d)))
    cases["pow:negative_number_exponent"] = run(lambda: torch.pow(t([3], "int64"), -1))
    for e in (True, False):
        cases[f"pow:bool_to_python_bool_{e}"] = run(lambda e=e: torch.pow(t([True, False],
                                                                         "bool"), e))
    cases["pow:bool_to_bool_tensor"] = run(lambda: torch.pow(t([True], "bool"),
                                                             t([True], "bool")))
    cases["pow:bool_negative_number_exponent"] = run(lambda: torch.pow(t([True], "bool"), -1))
    cases["tensor:ints_only_float32"] = run(lambda: torch.tensor([1, 2 ** 70],
                                                                 dtype=torch.float32))
    return cases


def _tf1_cases(tf) -> dict:
    def run(build):
        def go():
            graph = tf.Graph()
            with graph.as_default():
                fetch, feeds = build()
                with tf.Session(graph=graph) as sess:
                    return sess.run(fetch, feeds)
        return _outcome(go, np.asarray)

    def const(values, dtype):
        return tf.constant(np.array(values, dtype=dtype))

    cases = {}
    for d in DTYPES:
        x = REDUCED[d]
        cases[f"sum({d})"] = run(lambda d=d, x=x: (tf.reduce_sum(const(x, d)), None))
        cases[f"argmax({d})"] = run(lambda d=d, x=x: (tf.argmax(const(x, d)), None))
    for a in PRODUCT_DTYPES:
        for b in PRODUCT_DTYPES:
            cases[f"matmul({a},{b})"] = run(
                lambda a=a, b=b: (tf.matmul(const([[1, 2], [3, 4]], a),
                                            const([[1, 0], [0, 1]], b)), None))
            cases[f"conv2d({a},{b})"] = run(
                lambda a=a, b=b: (tf.nn.conv2d(const(np.ones((1, 2, 2, 1)), a),
                                               const(np.ones((1, 1, 1, 1)), b),
                                               strides=1, padding="VALID"), None))
    for name, value in {"numpy_int32": np.int32(1), "numpy_float64_nan": np.float64("nan"),
                        "numpy_float16": np.float16(0.5), "numpy_bool": np.bool_(True),
                        "python_int": 1, "python_float": 1.5}.items():
        cases[f"constant:{name}"] = run(lambda v=value: (tf.constant(v), None))
    for dtype, op, value in BIG_INTS:
        fn = {"greater": tf.greater, "add": tf.add, "mul": tf.multiply, "less": tf.less,
              "equal": tf.equal}[op]
        def build(fn=fn, d=dtype, v=value):
            x = tf.placeholder(d, [1])
            return fn(x, v), {x: np.array([1], d)}
        cases[f"{op}({dtype},{value})"] = run(build)
    for name, (dtype, base, exponent) in INT_POWERS.items():
        if dtype != "bool":  # tf.pow has no bool kernel
            cases[f"pow:{name}"] = run(lambda d=dtype, b=base, e=exponent: (
                tf.pow(const(b, d), const(e, d)), None))
    for name, (dtype, make) in TEXT_FEEDS.items():
        def build(dtype=dtype, make=make):
            x = tf.placeholder(dtype, [None])
            return tf.identity(x), {x: make()}
        cases[f"feed:{name}"] = run(build)
    return cases


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow.compat.v1 as tf
    import torch

    tf.disable_eager_execution()
    record = {"versions": {"torch": torch.__version__, "tensorflow": tf.__version__,
                           "numpy": np.__version__},
              "torch": _torch_cases(torch), "tf1": _tf1_cases(tf)}
    path = Path(__file__).with_name("dtype_rules.json")
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(record['torch'])} PyTorch and {len(record['tf1'])} TF1 cases)")


if __name__ == "__main__":
    main()
