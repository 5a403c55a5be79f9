"""Shared test settings: a deterministic hypothesis profile that keeps the suite fast."""

import os

from hypothesis import HealthCheck, settings

# derandomize: the same examples on every run (no flakes, no example database on disk).
# Select a bigger run with HYPOTHESIS_PROFILE=thorough.
settings.register_profile(
    "kg", max_examples=20, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
)
settings.register_profile("thorough", parent=settings.get_profile("kg"), max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "kg"))
