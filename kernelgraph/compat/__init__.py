"""Compatibility layers: ``import kernelgraph.compat.v1 as tf`` for TensorFlow 1 code."""
