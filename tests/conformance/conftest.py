"""The programs under programs/ are data for test_conformance.py, not tests: each one is a
whole script written against real PyTorch or TensorFlow (``import torch``), so pytest must
neither collect it nor import it for doctests."""

collect_ignore_glob = ["programs/*"]
