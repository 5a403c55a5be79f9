"""PyTorch's ``torch.testing``: :func:`assert_close` (PyTorch's default tolerances per dtype
and its failure message) and the old :func:`assert_allclose`; ``_internal.common_utils``
holds the ``TestCase`` and ``run_tests`` of PyTorch's own test suite, so a test written
against them runs with only its import changed.

>>> import kernelgraph as torch
>>> torch.testing.assert_close(torch.tensor([0.1 + 0.2]), torch.tensor([0.3]))
"""

from ._comparison import assert_allclose, assert_close

__all__ = ["assert_allclose", "assert_close"]
