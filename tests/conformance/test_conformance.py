"""Conformance: real-framework programs run on kernelgraph with only their imports swapped,
and print what the real framework printed.

Each program in programs/ is written once against PyTorch (``import torch``) or TF1
(``import tensorflow as tf`` / ``import tensorflow.compat.v1 as tf``) in the manner of public
material a learner brings (its docstring names which). tests/recorded/record_conformance.py
ran each with real torch 2.13.0 and TensorFlow's compat.v1 and stored its stdout in
tests/recorded/conformance.json. Here each runs in a fresh process on kernelgraph, with the
import swap of runner.py (docs/compatibility.md), and its stdout is compared number by number
(1e-4 relative + 1e-5 absolute, runner.RTOL/ATOL) and text by text (whitespace aside).
"""

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("conformance_runner",
                                               Path(__file__).parent / "runner.py")
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)

NAMES = runner.program_names()


def test_every_program_is_recorded(recorded):
    """A new program needs its reference output: run record_conformance.py."""
    assert sorted(recorded("conformance")["programs"]) == NAMES


def test_each_program_names_its_material():
    for name in NAMES:
        text = (runner.PROGRAMS / f"{name}.py").read_text(encoding="utf-8")
        assert text.startswith('"""'), f"{name}: the docstring names the material it mirrors"
        assert ("import torch" in text) == name.startswith("torch_"), name
        assert ("import tensorflow" in text) == name.startswith("tf1_"), name


@pytest.mark.parametrize("name", NAMES)
def test_program(name, recorded):
    reference = recorded("conformance")["programs"][name]
    result = runner.run_program(name, "kernelgraph", env={"PYTHONPATH": str(
        Path(__file__).resolve().parents[2])})
    error, expected_error = result["error"], reference["error"]
    if error is not None and (expected_error is None or error["type"] != expected_error["type"]):
        tail = "\n".join(result["stderr"].strip().splitlines()[-25:])
        real = f"raised {expected_error['type']}" if expected_error else "ran to the end"
        pytest.fail(f"{name} raised {error['type']} on kernelgraph: {error['message']}\n"
                    f"(the real framework {real})\n"
                    f"--- last lines of its traceback ---\n{tail}\n"
                    f"--- what it printed before ---\n{result['stdout'][-1500:]}",
                    pytrace=False)
    if expected_error is not None and error is None:
        pytest.fail(f"{name}: the real framework raised {expected_error['type']}: "
                    f"{expected_error['message']}; kernelgraph ran to the end", pytrace=False)
    diff = runner.compare(reference["stdout"], result["stdout"])
    if diff is not None:
        pytest.fail(f"{name} printed something else on kernelgraph: {diff}", pytrace=False)


@pytest.mark.parametrize("source, expected", [
    ("import torch", "import kernelgraph as torch"),
    ("import torch.nn as nn", "import kernelgraph.nn as nn"),
    ("import torch.nn.functional as F", "import kernelgraph.nn.functional as F"),
    ("from torch import nn, optim", "from kernelgraph import nn, optim"),
    ("from torch.autograd import Function", "from kernelgraph.autograd import Function"),
    ("from torch.utils.data import DataLoader, TensorDataset",
     "from kernelgraph.utils.data import DataLoader, TensorDataset"),
    ("from torch.optim.lr_scheduler import StepLR",
     "from kernelgraph.optim.lr_scheduler import StepLR"),
    ("import torch.nn", "import kernelgraph.nn; import kernelgraph as torch"),
    ("import tensorflow as tf", "import kernelgraph.compat.v1 as tf"),
    ("import tensorflow.compat.v1 as tf", "import kernelgraph.compat.v1 as tf"),
    ("from tensorflow.compat import v1 as tf", "from kernelgraph.compat import v1 as tf"),
    ("import numpy as np, torch", "import numpy as np; import kernelgraph as torch"),
    ("if True:\n    import torch  # c\nx = 'import torch'",
     "if True:\n    import kernelgraph as torch  # c\nx = 'import torch'"),
])
def test_import_swap(source, expected):
    assert runner.rewrite_imports(source, "kernelgraph") == expected


def test_reference_swap_runs_tf1_code_on_compat_v1():
    assert runner.rewrite_imports("import tensorflow as tf\nimport torch", "reference") == (
        "import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()\nimport torch")


@pytest.mark.parametrize("expected, actual, same", [
    ("tensor([0.1235, 2.0000])", "tensor([0.1235, 2.])", True),
    ("loss 0.12345678", "loss 0.12345", True),
    ("loss 0.1234", "loss 0.1235", True),            # a rounding boundary, 4 decimals
    ("loss 0.12", "loss 0.13", False),
    ("3", "4", False),
    ("[ 1. -4.]", "[1. -4.]", True),                  # spacing is not compared
    ("x 1.5e-09", "x 0.0", True),                     # near 0: absolute tolerance
    ("float32 7", "float64 7", False),                # text matters
    ("nan inf", "nan inf", True),
    ("nan", "0.0", False),
    ("a 1 2", "a 1", False),
])
def test_compare(expected, actual, same):
    assert (runner.compare(expected, actual) is None) is same
