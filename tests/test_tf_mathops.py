"""TF1's math and ``tf.nn`` functions through ``kernelgraph.compat.v1`` (``tf.div``,
``tf.clip_by_global_norm``, ``tf.nn.nce_loss`` with fixed sampled values, ``tf.nn.top_k``
...), values and gradients against TF1's recorded results (the cases:
tests/recorded/record_tf_mathops.py, written once against TF1's API)."""

from __future__ import annotations

import pytest

from tests.tf_recorded_cases import assert_matches, load_cases, run_case

CASES = load_cases("tf_mathops")


@pytest.mark.parametrize("case", CASES.CASES, ids=lambda c: c.__name__)
def test_like_tf1(case, recorded):
    want = recorded("tf_mathops")["cases"][case.__name__]
    got = run_case(case)
    got = got if isinstance(got, dict) and "error" in got else CASES.encode(got)
    assert_matches(got, want, case.__name__, rtol=2e-4, atol=2e-5)
