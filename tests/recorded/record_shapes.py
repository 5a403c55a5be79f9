"""Record what PyTorch's ``reshape``/``permute``/``transpose``/``zeros`` and TF1's
``tf.transpose`` accept and what they raise, into ``shapes.json`` (read by
tests/test_shapes_dtypes.py).

Run with an environment that has torch and tensorflow-cpu (see README.md here)::

    python tests/recorded/record_shapes.py

Each case's arguments are written into the JSON too, tagged with their Python type (an int,
a NumPy int, a float, a bool, a tuple or a list ...), so the test rebuilds exactly what was
passed. A result is ``{"shape": [...]}`` or ``{"error": {"type", "message"}}``: PyTorch's
message is its first line; TF1's is the part that names the problem (without the node
description TF appends, or, for an error at run time, the line before ``[[{{node ...}}]]``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

# (name, input shape, form, args): "method" is x.reshape(*args), "function" is
# torch.reshape(x, *args).
RESHAPES = [
    ("two_ints", (2, 3), "method", (3, 2)),
    ("tuple", (2, 3), "method", ((3, 2),)),
    ("list", (2, 3), "method", ([3, 2],)),
    ("one_int", (2, 3), "method", (6,)),
    ("infer", (2, 3), "method", (-1,)),
    ("infer_middle", (2, 3), "method", (1, -1, 2)),
    ("two_inferred", (2, 3), "method", (-1, -1)),
    ("negative", (2, 3), "method", (-2, -3)),
    ("float", (2, 3), "method", (2, 3.0)),
    ("float_alone", (2, 3), "method", (6.0,)),
    ("bool_in_tuple", (2, 3), "method", ((True, 6),)),
    ("numpy_ints", (2, 3), "method", (np.int64(2), np.int32(3))),
    ("numpy_float_in_tuple", (2, 3), "method", ((np.float32(2), 3),)),
    ("numpy_bool_in_tuple", (2, 3), "method", ((np.bool_(True), 6),)),
    ("count_mismatch", (2, 3), "method", (4, 2)),
    ("inferred_mismatch", (2, 3), "method", (4, -1)),
    ("zero_and_inferred", (2, 3), "method", (0, -1)),
    ("zero_size_ambiguous", (0, 3), "method", (-1, 0)),
    ("zero_size_inferred", (0, 3), "method", (-1, 5)),
    ("zero_size_plain", (0, 3), "method", (5, 0)),
    ("to_0d", (1,), "method", ((),)),
    ("to_0d_too_many", (2, 3), "method", ((),)),
    ("from_0d", (), "method", (1, 1)),
    ("from_0d_inferred", (), "method", (-1,)),
    ("none", (2, 3), "method", (None,)),
    ("string", (2, 3), "method", ("6",)),
    ("numpy_array", (2, 3), "method", (np.array([2, 3]),)),
    ("nested_tuple", (2, 3), "method", (2, (3,))),
    ("huge", (2, 3), "method", (-1, 2 ** 62)),
    ("f_tuple", (2, 3), "function", ((3, 2),)),
    ("f_list", (2, 3), "function", ([6],)),
    ("f_bare_int", (2, 3), "function", (6,)),
    ("f_infer", (2, 3), "function", ((-1, 3),)),
    ("f_two_inferred", (2, 3), "function", ((-1, -1),)),
    ("f_negative", (2, 3), "function", ((-2, 3),)),
    ("f_float", (2, 3), "function", ((2, 3.0),)),
    ("f_bool", (2, 3), "function", ((True, 6),)),
    ("f_numpy_ints", (2, 3), "function", ((np.int64(3), np.int64(2)),)),
    ("f_count_mismatch", (2, 3), "function", ((4, 2),)),
    ("f_inferred_mismatch", (2, 3), "function", ((4, -1),)),
    ("f_zero_and_inferred", (2, 3), "function", ((0, -1),)),
    ("f_zero_size_ambiguous", (0, 3), "function", ((-1, 0),)),
    ("f_zero_size_ambiguous_3d", (0, 3), "function", ((5, -1, 0),)),
    ("f_zero_size_inferred", (0, 3), "function", ((-1, 5),)),
    ("f_to_0d", (1, 1), "function", ((),)),
    ("f_to_0d_too_many", (2, 3), "function", ((),)),
    ("f_empty_list", (1,), "function", ([],)),
    ("f_numpy_array", (2, 3), "function", (np.array([3, 2]),)),
    ("f_none_dim", (2, 3), "function", ((None, 3),)),
    ("f_3d", (2, 3, 4), "function", ((4, -1, 2),)),
]

# (name, input shape, perm): torch.permute(x, perm) and tf.transpose(x, perm).
PERMS = [
    ("swap", (2, 3), (1, 0)),
    ("identity", (2, 3), (0, 1)),
    ("list", (2, 3), [1, 0]),
    ("negative", (2, 3), (0, -1)),
    ("negative_swap", (2, 3), (1, -2)),
    ("out_of_range", (2, 3), (0, 5)),
    ("out_of_range_negative", (2, 3), (-3, 1)),
    ("too_long", (2, 3), (0, 1, 2)),
    ("too_short", (2, 3), (1,)),
    ("duplicate", (2, 3), (0, 0)),
    ("duplicate_by_wrapping", (2, 3), (1, -1)),
    ("float", (2, 3), (0.0, 1)),
    ("float_fraction", (2, 3), (1.5, 0)),
    ("bool", (2, 3), (True, False)),
    ("numpy_ints", (2, 3), (np.int64(1), 0)),
    ("numpy_array", (2, 3), np.array([1, 0])),
    ("bare_int", (2, 3), 1),
    ("rank3", (2, 3, 4), (2, 0, 1)),
    ("rank3_negative", (2, 3, 4), (2, -3, 1)),
    ("rank3_duplicate", (2, 3, 4), (0, 2, 2)),
    ("rank3_out_of_range", (2, 3, 4), (0, 1, 3)),
    ("scalar_empty", (), ()),
    ("scalar_one", (), (0,)),
]

# (name, input shape, dim0, dim1): x.transpose(dim0, dim1) (PyTorch's method).
TRANSPOSES = [
    ("swap", (2, 3), 0, 1),
    ("negative", (2, 3), -1, 0),
    ("same", (2, 3, 4), 1, 1),
    ("out_of_range", (2, 3), 0, 5),
    ("out_of_range_negative", (2, 3), -3, 0),
    ("float", (2, 3), 0, 1.0),
    ("scalar", (), 0, -1),
    ("scalar_out_of_range", (), 0, 1),
]

# (name, args): torch.zeros(*args) (kg.zeros and kg.ones take sizes the same way).
SIZES = [
    ("ints", (2, 3)),
    ("tuple", ((2, 3),)),
    ("list", ([2],)),
    ("empty_tuple", ((),)),
    ("numpy_int", (np.int64(2),)),
    ("zero", (0, 3)),
    ("negative", (2, -1)),
    ("float", (2, 3.0)),
    ("bool_in_tuple", ((True, 2),)),
]


def encode(v):
    """A JSON value that says exactly what ``v`` was (decoded by the test)."""
    if isinstance(v, np.ndarray):
        return {"ndarray": v.tolist(), "dtype": v.dtype.name}
    if isinstance(v, np.generic):
        return {"numpy": v.item(), "dtype": v.dtype.name}
    if isinstance(v, tuple | list):
        return {type(v).__name__: [encode(x) for x in v]}
    if v is None:
        return {"none": None}
    return {type(v).__name__: v}  # bool, int, float, str


def _torch_error(e) -> dict:
    return {"type": type(e).__name__, "message": str(e).splitlines()[0]}


def _tf_core(message: str) -> str:
    lines = message.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("[[") and i:
            return lines[i - 1].strip()  # a run-time error: the line naming the problem
    return lines[0].split(" for '{{node")[0]


def _torch(fn) -> dict:
    try:
        return {"shape": list(fn().shape)}
    except Exception as e:  # noqa: BLE001 - recorded: the tests compare it
        return {"error": _torch_error(e)}


def _tf_transpose(tf, shape, perm, known: bool) -> dict:
    graph = tf.Graph()
    with graph.as_default():
        try:
            x = tf.placeholder(tf.float32, shape if known else None)
            y = tf.transpose(x, perm)
            with tf.Session() as sess:
                out = sess.run(y, {x: np.zeros(shape, np.float32)})
            return {"shape": list(out.shape)}
        except Exception as e:  # noqa: BLE001 - recorded: the tests compare it
            return {"error": {"type": type(e).__name__, "message": _tf_core(str(e))}}


def main() -> None:
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf2
    import tensorflow.compat.v1 as tf
    import torch

    tf.disable_eager_execution()
    reshapes = []
    for name, shape, form, args in RESHAPES:
        x = torch.zeros(shape)
        fn = (lambda x=x, args=args: x.reshape(*args)) if form == "method" else \
            (lambda x=x, args=args: torch.reshape(x, *args))
        reshapes.append({"name": name, "input": list(shape), "form": form,
                         "args": encode(list(args)), "torch": _torch(fn)})
    perms = []
    for name, shape, perm in PERMS:
        x = torch.zeros(shape)
        perms.append({
            "name": name, "input": list(shape), "perm": encode(perm),
            "torch": _torch(lambda x=x, perm=perm: torch.permute(x, perm)),
            "tf": _tf_transpose(tf, shape, perm, known=True),
            "tf_unknown_rank": _tf_transpose(tf, shape, perm, known=False)})
    transposes = []
    for name, shape, d0, d1 in TRANSPOSES:
        x = torch.zeros(shape)
        transposes.append({"name": name, "input": list(shape), "dims": encode([d0, d1]),
                           "torch": _torch(lambda x=x, d0=d0, d1=d1: x.transpose(d0, d1))})
    sizes = [{"name": name, "args": encode(list(args)),
              "torch": _torch(lambda args=args: torch.zeros(*args))} for name, args in SIZES]
    rec = {"versions": {"torch": torch.__version__, "tensorflow": tf2.__version__,
                        "numpy": np.__version__},
           "reshape": reshapes, "permute": perms, "transpose": transposes, "zeros": sizes}
    path = Path(__file__).with_name("shapes.json")
    path.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
