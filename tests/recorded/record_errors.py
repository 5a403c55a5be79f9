"""Record how PyTorch and TF1 refuse bad input, and what they do at the edges kernelgraph must
match, into ``errors.json`` (read by tests/test_errors.py and tests/test_threads.py):

- PyTorch: a hook that returns a gradient of the wrong size, dtype or type; ``.grad``
  assigned a tensor of the wrong size, dtype or device, or a list, an int, an array; an axis
  (``dim``) of the wrong type; softmax and log_softmax over an empty axis (and their
  gradients); grad mode per thread and its decorator forms;
- TF1: a placeholder's malformed ``shape``; ``dynamic_rnn``'s ``sequence_length`` of the
  wrong size or rank; softmax and log_softmax over an empty axis (and their gradients).

Run with an environment that has tensorflow-cpu, tf-keras and torch (see README.md here)::

    python tests/recorded/record_errors.py

An error is recorded as ``{"error": {"type": ..., "message": ...}}`` (whitespace folded); a
result as ``{"value": ...}``.
"""

from __future__ import annotations

import json
from pathlib import Path

# (name, shape, axis): softmax over an empty axis, and over a non-empty axis of an empty tensor
EMPTY_SOFTMAX = [("rows_of_nothing", (2, 0), -1), ("no_rows", (0, 3), 0),
                 ("empty_vector", (0,), 0)]
# placeholder shapes TF1 refuses, and ones it accepts (for kernelgraph's shape)
PLACEHOLDER_SHAPES = {"str_dim": [2, "a"], "float": 2.5, "negative": [-3], "str": "x",
                      "float_dim": [2.5], "bool_dim": [True], "nested": [[2]],
                      "int": 2, "unknown": [None, 3], "scalar": []}
# dynamic_rnn on inputs (3, 4, 2) (batch 3): sequence_length of the wrong size or rank
SEQUENCE_LENGTHS = {"too_short": [4, 2], "too_long": [4, 2, 1, 0], "matrix": [[4, 2, 1]],
                    "one": [4], "scalar": 3}
# axis arguments of the wrong type, per op (PyTorch's dim)
BAD_AXES = {"float": 1.5, "str": "0", "bool": True, "list": [0, 0]}
SINGLE_AXIS_OPS = ("softmax", "log_softmax", "cat", "stack", "argmax")


def _error(e: Exception) -> dict:
    return {"error": {"type": type(e).__name__, "message": " ".join(str(e).split())}}


def _attempt(fn) -> dict:
    try:
        return {"value": fn()}
    except Exception as e:  # noqa: BLE001 - recorded: the tests compare it
        return _error(e)


# -- PyTorch ----------------------------------------------------------------------------------
def _record_torch() -> tuple[dict, str]:
    import threading

    import numpy as np
    import torch

    out: dict = {}

    def hooked(hook, leaf):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        if leaf:
            x.register_hook(hook)
            y = x * 2
        else:
            y = x * 2
            y.register_hook(hook)
        y.sum().backward()
        return x.grad.tolist()

    def named(g):
        return torch.ones(3)

    out["hook"] = {
        "size": _attempt(lambda: hooked(lambda g: torch.ones(3), False)),
        "size_leaf": _attempt(lambda: hooked(lambda g: torch.ones(3), True)),
        "size_named": _attempt(lambda: hooked(named, True)),
        "scalar": _attempt(lambda: hooked(lambda g: torch.ones(()), False)),
        "dtype": _attempt(lambda: hooked(lambda g: g.double(), False)),
        "dtype_leaf": _attempt(lambda: hooked(lambda g: g.double(), True)),
        "int_dtype": _attempt(lambda: hooked(lambda g: g.int(), False)),
        "list": _attempt(lambda: hooked(lambda g: [1.0, 2.0], True)),
        "int": _attempt(lambda: hooked(lambda g: 3, False)),
        "replaces": _attempt(lambda: hooked(lambda g: g * 3.0, True)),
    }

    def assign(value):
        x = torch.ones(2, requires_grad=True)
        x.grad = value
        return None if x.grad is None else x.grad.tolist()

    out["grad_assign"] = {
        "size": _attempt(lambda: assign(torch.ones(3))),
        "size_2d": _attempt(lambda: assign(torch.ones(2, 1))),
        "dtype": _attempt(lambda: assign(torch.ones(2, dtype=torch.float64))),
        "int_dtype": _attempt(lambda: assign(torch.ones(2, dtype=torch.int64))),
        "device": _attempt(lambda: assign(torch.ones(2, device="meta"))),
        "list": _attempt(lambda: assign([1.0, 2.0])),
        "int": _attempt(lambda: assign(1)),
        "ndarray": _attempt(lambda: assign(np.ones(2, np.float32))),
        "none": _attempt(lambda: assign(None)),
        "ok": _attempt(lambda: assign(torch.full((2,), 3.0))),
    }

    x = torch.ones(2, 3)
    calls = {"softmax": lambda d: torch.softmax(x, dim=d),
             "log_softmax": lambda d: torch.log_softmax(x, dim=d),
             "cat": lambda d: torch.cat([x, x], dim=d),
             "stack": lambda d: torch.stack([x, x], dim=d),
             "argmax": lambda d: torch.argmax(x, dim=d),
             "amax": lambda d: torch.amax(x, dim=d),
             "sum": lambda d: torch.sum(x, dim=d)}
    out["axis"] = {op: {case: _attempt(lambda f=f, v=v: list(f(v).shape))
                        for case, v in BAD_AXES.items()} for op, f in calls.items()}

    empty = {}
    for name, shape, axis in EMPTY_SOFTMAX:
        for op in ("softmax", "log_softmax"):
            def run(op=op, shape=shape, axis=axis):
                e = torch.ones(shape, requires_grad=True)
                y = getattr(torch, op)(e, axis)
                y.sum().backward()
                return {"shape": list(y.shape), "grad_shape": list(e.grad.shape)}
            empty[f"{op}/{name}"] = _attempt(run)
    out["empty_softmax"] = empty

    # grad mode: per thread, and its decorator forms (is_grad_enabled where noted)
    seen: dict = {}
    with torch.no_grad():
        t = threading.Thread(target=lambda: seen.setdefault("new_thread", torch.is_grad_enabled()))
        t.start()
        t.join()

    @torch.no_grad
    def bare():
        return torch.is_grad_enabled()

    @torch.enable_grad
    def bare_enable():
        return torch.is_grad_enabled()

    @torch.no_grad()
    def recursive(n):
        if n:
            recursive(n - 1)
        return torch.is_grad_enabled()

    @torch.no_grad()
    def generator():
        yield torch.is_grad_enabled()
        yield torch.is_grad_enabled()

    seen["bare_no_grad"] = bare()
    with torch.no_grad():
        seen["bare_enable_grad_inside_no_grad"] = bare_enable()
    seen["recursive_inside"] = recursive(3)
    seen["after_recursive"] = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    seen["after_call_set_grad_enabled_false"] = torch.is_grad_enabled()
    torch.set_grad_enabled(True)

    @torch.set_grad_enabled(False)
    def decorated():
        return torch.is_grad_enabled()

    seen["after_decorating_with_set_grad_enabled_false"] = torch.is_grad_enabled()
    seen["inside_set_grad_enabled_false"] = decorated()
    it = generator()
    seen["generator"] = [next(it), torch.is_grad_enabled(), next(it)]
    for name, v in (("int", 0), ("str", "False"), ("none", None)):
        seen[f"set_grad_enabled_{name}"] = _attempt(lambda v=v: torch.set_grad_enabled(v)
                                                    and None)
    torch.set_grad_enabled(True)
    out["grad_mode"] = seen
    return out, torch.__version__


# -- TF1 --------------------------------------------------------------------------------------
def _record_tf() -> tuple[dict, str]:
    import os
    import warnings

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    warnings.simplefilter("ignore")
    import numpy as np
    import tensorflow as tf2
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    out: dict = {}

    def placeholder(shape):
        with tf.Graph().as_default():
            s = tf.placeholder(tf.float32, shape=shape).shape
            return None if s.rank is None else [d for d in s.as_list()]

    out["placeholder"] = {name: _attempt(lambda s=s: placeholder(s))
                          for name, s in PLACEHOLDER_SHAPES.items()}

    def rnn(sequence_length):
        with tf.Graph().as_default():
            cell = tf.nn.rnn_cell.BasicRNNCell(5)
            inputs = tf.placeholder(tf.float32, [3, 4, 2])
            tf.nn.dynamic_rnn(cell, inputs, sequence_length=sequence_length, dtype=tf.float32)
            return "built"

    out["sequence_length"] = {name: _attempt(lambda v=v: rnn(v))
                              for name, v in SEQUENCE_LENGTHS.items()}

    empty = {}
    for name, shape, axis in EMPTY_SOFTMAX:
        for op in ("softmax", "log_softmax"):
            def run(op=op, shape=shape, axis=axis):
                with tf.Graph().as_default():
                    e = tf.placeholder(tf.float32, shape)
                    y = getattr(tf.nn, op)(e, axis=axis)
                    g = tf.gradients(tf.reduce_sum(y), e)[0]
                    with tf.Session() as sess:
                        yv, gv = sess.run([y, g], {e: np.ones(shape, np.float32)})
                return {"shape": list(yv.shape), "grad_shape": list(gv.shape)}
            empty[f"{op}/{name}"] = _attempt(run)
    out["empty_softmax"] = empty
    return out, tf2.__version__


def main() -> None:
    import numpy as np

    torch_cases, torch_version = _record_torch()
    tf_cases, tf_version = _record_tf()
    rec = {"versions": {"torch": torch_version, "tensorflow": tf_version,
                        "numpy": np.__version__},
           "torch": torch_cases, "tf1": tf_cases}
    path = Path(__file__).with_name("errors.json")
    path.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
