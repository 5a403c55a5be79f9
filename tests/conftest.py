"""Shared test settings: a deterministic hypothesis profile that keeps the suite fast."""

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# A program run as its own process by its test and record script (it reads its settings
# from the environment when imported), not a module of tests or doctests to collect.
collect_ignore = ["recorded/tf_flags_program.py"]

# derandomize: the same examples on every run (no flakes, no example database on disk).
# Select a bigger run with HYPOTHESIS_PROFILE=thorough.
settings.register_profile(
    "kg", max_examples=20, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)
settings.register_profile("thorough", parent=settings.get_profile("kg"), max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "kg"))


# -- recorded outputs of the real frameworks ---------------------------------------------------
# Where PyTorch or TF1 define a behaviour, tests compare kernelgraph with what the real
# framework printed, recorded once into tests/recorded/<name>.json by the script
# tests/recorded/record_<name>.py (run by hand in an environment that has torch /
# tensorflow-cpu; never a dependency of the test run). See tests/recorded/README.md.
RECORDED = Path(__file__).parent / "recorded"


@pytest.fixture(scope="session")
def recorded():
    """``recorded("nan")`` -> the parsed ``tests/recorded/nan.json`` (NaN and Infinity as
    Python's json writes them)."""
    def load(name: str):
        return json.loads((RECORDED / f"{name}.json").read_text(encoding="utf-8"))

    return load
