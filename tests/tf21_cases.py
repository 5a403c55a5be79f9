"""Shared by tests/test_tf_session21.py and tests/test_tf_tensors.py: run a case of
tests/recorded/record_tf21.py on ``kernelgraph.compat.v1`` and compare it with what real TF1
answered (tf21.json)."""

from __future__ import annotations

import math

import kernelgraph.compat.v1 as tf
from tests.recorded.record_tf21 import CASES, run_case

#: Where kernelgraph deliberately answers another dtype than TF1, by case and leaf path
#: (the values are compared all the same). Storage dtypes compute in the kept dtype of their
#: kind (int8 + int8 is int64, float16 math float32: see kernelgraph/dtypes.py's WIDE).
DTYPES = {}


def run_kg(name: str) -> dict:
    with tf.Graph().as_default():
        return run_case(CASES[name], tf)


def same(got, want, path="", dtypes=()):
    """Whether the plain values ``got`` (kernelgraph's) and ``want`` (TF1's) agree: equal
    structure, numbers within 1e-6 relative, dtype names equal unless ``path`` is allowed
    to differ. Raises AssertionError naming the first difference."""
    if isinstance(want, dict) and isinstance(got, dict):
        assert set(got) == set(want), f"{path}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            if k == "dtype" and path in dtypes:
                continue
            same(got[k], want[k], f"{path}.{k}", dtypes)
        return
    if isinstance(want, list) and isinstance(got, list):
        assert len(got) == len(want), f"{path}: {len(got)} items != {len(want)}: {got}"
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{path}[{i}]", dtypes)
        return
    if isinstance(want, float) or isinstance(got, float):
        assert isinstance(got, int | float) and isinstance(want, int | float), (path, got, want)
        assert math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-7), f"{path}: {got} != {want}"
        return
    assert type(got) is type(want) and got == want, f"{path}: {got!r} != {want!r}"


def check(name: str, recorded, dtypes=()) -> None:
    """Case ``name`` on kernelgraph answers what TF1 answered (its value, or its error's
    type and message)."""
    want = recorded("tf21")["cases"][name]
    got = run_kg(name)
    if "error" in want:
        assert "error" in got, f"TF1 raised {want['error']}, kernelgraph gave {got}"
        assert got["error"]["type"] == want["error"]["type"], (got, want)
        assert got["error"]["message"].startswith(want["error"]["message"][:60]), (got, want)
        return
    assert "value" in got, f"kernelgraph raised {got['error']}"
    same(got["value"], want["value"], dtypes=dtypes)
