"""Fuzz tests: random programs over odd inputs, in every mode, on every device.

Where tests/test_ops.py checks every op on safe inputs, these draw what a user may hand in
-- 0-sized dims, NaN, +-Inf, -0.0, 1e38, 1e-45 and int64's extremes, negative strides,
transposed, strided, broadcast, unaligned and read-only arrays, every NumPy dtype in both
byte orders, complex, object, strings -- and short programs (chains and DAGs of 1-6 ops
from the elementwise, reduction, shape, indexing, matmul, softmax, pooling and conv
families) over them. Each case must give the NumPy oracle's answer (values, shape, PyTorch's
dtype) or a clear error, the same bits in eager and static mode (placeholders and
constants, raw NumPy arrays too; a fed input or step winning over what computes it), the
same answer on the CUDA device, and the same gradients from ``backward()`` and
``kg.gradients``. See tests/fuzzing.py for the harness and tests/fuzz_oracle.py for the
oracle.

Cases run in one worker process per test module (tests/fuzzing.py's :class:`Worker`): a
segfault or a hang fails the case that caused it, named as a program to paste, and the next
case gets a new worker. ``HYPOTHESIS_PROFILE=thorough`` draws more cases.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests import fuzzing
from tests.fuzz_inputs import ingestion_cases
from tests.fuzz_programs import programs, render


@pytest.fixture(scope="module")
def worker():
    w = fuzzing.Worker()
    yield w
    w.stop()


def check(worker, cases) -> None:
    """Run each case in the worker; fail with the findings of those that fail, each with a
    program that shows them."""
    reports = []
    for case in cases if isinstance(cases, list) else [cases]:
        findings = worker.run(case)
        if findings and report(case, findings) not in reports:
            reports.append(report(case, findings))
    if reports:
        pytest.fail("\n\n".join(reports), pytrace=False)


def report(case: dict, findings: list) -> str:
    """The findings of one case and the case as a program to paste, in the mode the
    findings name (static over raw over eager; cuda over cpu)."""
    modes = {f.split("]")[0].lstrip("[") for f in findings}
    mode = "placeholder" if any(m.startswith("static/placeholder") for m in modes) else \
        "constant" if any(m.startswith("static/constant") for m in modes) else \
        "raw" if any("/raw/" in m for m in modes) else \
        "mixed" if any("/mixed/" in m for m in modes) else "eager"
    device = "cuda" if any(m.endswith("cuda") for m in modes) else "cpu"
    program = render(case, mode, device) if case["steps"] else \
        render(case, "eager")
    return (f"{len(findings)} finding(s):\n" + "\n".join(findings) +
            f"\n\nThe case ({mode}, {device}):\n{program}")


def batches(strategy, size=3):
    """``size`` cases an example: more programs for one example's fixed costs."""
    return st.lists(strategy, min_size=size, max_size=size)


@given(case=ingestion_cases())
def test_odd_inputs_are_taken_exactly_or_refused(worker, case):
    """kg.tensor, kg.constant and fed placeholders keep an odd array's values exactly, in a
    kernelgraph dtype of the same kind, or refuse it naming its dtype."""
    check(worker, case)


@given(case=ingestion_cases(cuda=True))
def test_odd_inputs_reach_the_cuda_device_exactly_or_are_refused(worker, case):
    check(worker, case)


@given(cases=batches(programs(("elementwise",))))
def test_elementwise_programs(worker, cases):
    check(worker, cases)


@given(cases=batches(programs(("reduce", "elementwise"))))
def test_reduction_programs(worker, cases):
    check(worker, cases)


@given(cases=batches(programs(("shape", "reduce"))))
def test_shape_and_indexing_programs(worker, cases):
    check(worker, cases)


@given(cases=batches(programs(("nn",))))
def test_nn_programs(worker, cases):
    """matmul, the softmax family, pooling and conv2d over odd inputs."""
    check(worker, cases)


@given(cases=batches(programs()))
def test_mixed_programs(worker, cases):
    check(worker, cases)


@given(cases=batches(programs(max_steps=3, cuda=True, entries=())))
def test_programs_on_cuda(worker, cases):
    """The same programs on the CUDA device (numba's simulator without a GPU: small)."""
    check(worker, cases)


def test_a_crash_in_the_worker_fails_the_case_not_the_run():
    """The harness itself: a worker that dies or hangs mid-case reports it, and the next
    case runs in a new worker."""
    w = fuzzing.Worker(timeout=60)
    try:
        crash = {"inputs": {}, "steps": [], "fetch": [], "crash": True}
        findings = w.run(crash)
        assert len(findings) == 1 and "died" in findings[0], findings
        assert w.run({"inputs": {}, "steps": [], "fetch": []}) == []
        w.timeout = 1
        findings = w.run({"inputs": {}, "steps": [], "fetch": [], "hang": 30})
        assert len(findings) == 1 and "no answer" in findings[0], findings
        w.timeout = 60
        assert w.run({"inputs": {}, "steps": [], "fetch": []}) == []
    finally:
        w.stop()
