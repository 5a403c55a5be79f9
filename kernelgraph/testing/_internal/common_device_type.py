"""PyTorch's ``torch.testing._internal.common_device_type``: a generic test class whose tests
take ``device`` (and ``dtype`` under ``@dtypes(...)``) becomes one class per device,
``TestFooCPU`` (and ``TestFooCUDA`` where a GPU is here), with tests named
``test_bar_cpu_float32`` as PyTorch names them.

>>> import kernelgraph as torch
>>> from kernelgraph.testing._internal.common_utils import TestCase
>>> class TestOnes(TestCase):
...     @dtypes(torch.float32, torch.float64)
...     def test_ones(self, device, dtype):
...         self.assertEqual(torch.ones(2, device=device, dtype=dtype).dtype, dtype)
>>> scope = {"TestOnes": TestOnes}
>>> instantiate_device_type_tests(TestOnes, scope, only_for="cpu")
>>> import unittest
>>> sorted(scope), unittest.defaultTestLoader.getTestCaseNames(scope["TestOnesCPU"])
(['TestOnesCPU'], ['test_ones_cpu_float32', 'test_ones_cpu_float64'])
>>> suite = unittest.defaultTestLoader.loadTestsFromTestCase(scope["TestOnesCPU"])
>>> unittest.TextTestRunner(stream=open("/dev/null", "w")).run(suite).wasSuccessful()
True
"""

from __future__ import annotations

import numpy as np

from ... import devices

__all__ = [
    "dtypes", "dtypesIfCPU", "dtypesIfCUDA", "instantiate_device_type_tests", "onlyCPU",
    "onlyCUDA", "skipCUDAIfNoCudnn", "skipMeta",
]


def dtypes(*args):
    """The dtypes a device-generic test runs with (one test per dtype)."""
    def wrap(fn):
        fn._kg_dtypes = args
        return fn
    return wrap


def dtypesIfCPU(*args):  # noqa: N802 - PyTorch's name
    """The dtypes on the CPU (the tests here run on the CPU with these)."""
    return dtypes(*args)


def dtypesIfCUDA(*args):  # noqa: N802 - PyTorch's name
    """The dtypes on a GPU: kept for the CUDA class only."""
    def wrap(fn):
        fn._kg_cuda_dtypes = args
        return fn
    return wrap


def onlyCPU(fn):  # noqa: N802 - PyTorch's name
    """Run only in the CPU class."""
    fn._kg_only = "cpu"
    return fn


def onlyCUDA(fn):  # noqa: N802 - PyTorch's name
    """Run only in the CUDA class (made only where a GPU is here)."""
    fn._kg_only = "cuda"
    return fn


def skipCUDAIfNoCudnn(fn):  # noqa: N802 - PyTorch's name
    """kernelgraph needs no cuDNN: the test runs."""
    return fn


def skipMeta(fn):  # noqa: N802 - PyTorch's name
    """kernelgraph has no meta device: the test runs on the real ones."""
    return fn


def _dtype_name(dtype) -> str:
    return str(getattr(dtype, "name", None) or np.dtype(dtype).name)


def _device_test(fn, device: str, dtype=None):
    if dtype is None:
        def case(self):
            return fn(self, device)
    else:
        def case(self):
            return fn(self, device, dtype)
    case.__name__ = fn.__name__
    case.__doc__ = fn.__doc__
    return case


def instantiate_device_type_tests(generic_test_class, scope: dict, except_for=None,
                                  only_for=None, allow_mps: bool = False,
                                  allow_xpu: bool = False) -> None:
    """Put ``<Name>CPU`` (and ``<Name>CUDA`` where a GPU is here) into ``scope`` in place of
    ``generic_test_class``, each test bound to its device (and dtype), as PyTorch does."""
    kinds = ["cpu"] + (["cuda"] if devices.cuda_is_available() else [])
    only = [only_for] if isinstance(only_for, str) else only_for
    skip = [except_for] if isinstance(except_for, str) else (except_for or [])
    kinds = [k for k in kinds if (only is None or k in only) and k not in skip]
    scope.pop(generic_test_class.__name__, None)
    tests = {name: fn for name, fn in vars(generic_test_class).items()
             if name.startswith("test") and callable(fn)}
    for kind in kinds:
        members = {"device_type": kind}
        for name, fn in tests.items():
            members[name] = _NotATest()  # the generic test itself does not run
            if getattr(fn, "_kg_only", kind) != kind:
                continue
            device = "cuda:0" if kind == "cuda" else "cpu"
            kinds_dtypes = getattr(fn, "_kg_cuda_dtypes", None) if kind == "cuda" else None
            dts = kinds_dtypes or getattr(fn, "_kg_dtypes", None)
            if dts is None:
                members[f"{name}_{kind}"] = _device_test(fn, device)
            else:
                for dt in dts:
                    members[f"{name}_{kind}_{_dtype_name(dt)}"] = _device_test(fn, device, dt)
        cls_name = f"{generic_test_class.__name__}{kind.upper()}"
        cls = type(cls_name, (generic_test_class,), members)
        cls.__module__ = generic_test_class.__module__
        scope[cls_name] = cls


class _NotATest:
    """Hides a generic test in a device class (not callable: unittest's loader skips it)."""

    def __get__(self, obj, cls=None):
        return self
