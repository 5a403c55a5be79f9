"""Run the cases of a ``tests/recorded/record_tf_*.py`` script on kernelgraph and compare
them with what TF1 gave (the ``recorded`` JSON): the same functions of ``tf``, with
``kernelgraph.compat.v1`` for ``tensorflow.compat.v1``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

import kernelgraph.compat.v1 as tf

RECORDED = Path(__file__).parent / "recorded"


def load_cases(name: str):
    """The module ``tests/recorded/record_<name>.py`` (its CASES and encode)."""
    if str(RECORDED) not in sys.path:  # the record scripts import their shared helpers
        sys.path.insert(0, str(RECORDED))
    spec = importlib.util.spec_from_file_location(f"record_{name}",
                                                  RECORDED / f"record_{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_case(case):
    """What ``case(tf)`` returns on kernelgraph, in a fresh graph (an error as TF's
    recording writes one)."""
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        try:
            return case(tf)
        except Exception as e:  # noqa: BLE001 - compared with what TF raised
            return {"error": type(e).__name__, "message": str(e).splitlines()[0]}


def assert_matches(got, want, where="result", rtol=1e-4, atol=1e-6):
    """``got`` (kernelgraph's, encoded) equals ``want`` (TF's, encoded): structure, shapes,
    dtypes (integers by kind: TF1's default int32 and kernelgraph's int64 both pass) and
    values within ``rtol``."""
    if "error" in want:
        assert isinstance(got, dict) and got.get("error") == want["error"], \
            f"{where}: TF raised {want['error']}: {want['message']}; kernelgraph gave {got}"
        return
    assert set(got) == set(want), f"{where}: kernelgraph gave {got}, TF {want}"
    for kind in ("list", "tuple"):
        if kind in want:
            assert len(got[kind]) == len(want[kind]), f"{where}: {got} vs {want}"
            for k, (a, b) in enumerate(zip(got[kind], want[kind])):
                assert_matches(a, b, f"{where}[{k}]", rtol, atol)
            return
    if "dict" in want:
        assert set(got["dict"]) == set(want["dict"]), f"{where}: {got} vs {want}"
        for k in want["dict"]:
            assert_matches(got["dict"][k], want["dict"][k], f"{where}[{k!r}]", rtol, atol)
        return
    if "py" in want:
        assert got["py"] == want["py"], f"{where}: kernelgraph {got['py']!r}, TF {want['py']!r}"
        return
    a, b = np.dtype(got["dtype"]), np.dtype(want["dtype"])
    assert a == b or (a.kind in "iu" and b.kind in "iu"), \
        f"{where}: kernelgraph dtype {a}, TF {b}"
    assert got["shape"] == want["shape"], \
        f"{where}: kernelgraph shape {got['shape']}, TF {want['shape']}"
    np.testing.assert_allclose(np.asarray(got["value"], dtype=float),
                               np.asarray(want["value"], dtype=float), rtol=rtol, atol=atol,
                               err_msg=where)
