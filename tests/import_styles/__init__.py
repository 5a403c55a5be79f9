"""Three programs that import kernelgraph three ways (TF1's face only, kernelgraph only, and
both, as a notebook may): each tensor must mean what its framework says, whatever else the
module imported (tests/test_tf_import_styles.py)."""
