"""``tf.cond``, ``tf.while_loop``, ``tf.case`` and ``tf.switch_case`` as TF1's own tests use
them, run with ``kernelgraph.compat.v1`` and compared with TF1's recorded results (the
cases: tests/recorded/record_tf_control_flow21.py, written once against TF1's API)."""

from __future__ import annotations

import pytest

from tests.tf_recorded_cases import assert_matches, load_cases, run_case

CASES = load_cases("tf_control_flow21")


@pytest.mark.parametrize("case", CASES.CASES, ids=lambda c: c.__name__)
def test_like_tf1(case, recorded):
    want = recorded("tf_control_flow21")["cases"][case.__name__]
    got = run_case(case)
    got = got if _is_error(got) else CASES.encode(got)
    assert_matches(got, want, case.__name__)


def _is_error(value) -> bool:
    return isinstance(value, dict) and "error" in value
