"""Feeding an LSTM's state tuple back into ``Session.run`` (``feed_dict={init_state:
final_state}``) through ``kernelgraph.compat.v1``, against TF1's recorded results (the
cases: tests/recorded/record_tf_state_tuples.py, written once against TF1's API)."""

from __future__ import annotations

import pytest

from tests.tf_recorded_cases import assert_matches, load_cases, run_case

CASES = load_cases("tf_state_tuples")


@pytest.mark.parametrize("case", CASES.CASES, ids=lambda c: c.__name__)
def test_like_tf1(case, recorded):
    want = recorded("tf_state_tuples")["cases"][case.__name__]
    got = run_case(case)
    got = got if isinstance(got, dict) and "error" in got else CASES.encode(got)
    assert_matches(got, want, case.__name__)
    if "error" in want:
        assert got["message"].split(" Key:")[0] == want["message"].split(" Key:")[0]
