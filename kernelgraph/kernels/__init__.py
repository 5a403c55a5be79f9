"""Kernels: plain functions over arrays. ``cpu`` holds the numba kernels the engine runs;
``reference`` holds the NumPy versions the tests use as the oracle."""
