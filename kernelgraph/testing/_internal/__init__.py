"""PyTorch's ``torch.testing._internal``: :mod:`.common_utils` (``TestCase``, ``run_tests``)."""
