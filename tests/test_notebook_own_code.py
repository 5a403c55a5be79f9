"""Notebook 11 ("Your own code") runs two conformance programs with only their imports changed:
its program cells are those programs after the conformance runner's import swap, and the
outputs it stores are what the real TensorFlow and PyTorch printed for them (recorded in
tests/recorded/conformance.json), compared as the conformance test compares them. Strict
nbval then checks that a fresh run prints the stored outputs again."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "11_your_own_code.ipynb"
PROGRAMS = ("tf1_mnist_cnn_scopes", "torch_mnist_cnn_batchnorm")

_spec = importlib.util.spec_from_file_location("conformance_runner",
                                               REPO / "tests" / "conformance" / "runner.py")
runner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runner)


def _program_cell(name: str):
    source = (runner.PROGRAMS / f"{name}.py").read_text(encoding="utf-8")
    swapped = runner.rewrite_imports(source, "kernelgraph").rstrip("\n")
    cells = [c for c in nbformat.read(NOTEBOOK, as_version=4).cells
             if c.cell_type == "code" and c.source.rstrip("\n") == swapped]
    return source, swapped, cells


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_cell_is_the_program_with_its_imports_changed(name):
    source, swapped, cells = _program_cell(name)
    assert len(cells) == 1, f"notebook 11 holds {name}.py (imports swapped) once, unchanged"
    changed = [(a, b) for a, b in zip(source.splitlines(), swapped.splitlines()) if a != b]
    assert changed and all(a.lstrip().startswith(("import ", "from ")) for a, _ in changed)
    assert all("kernelgraph" in b for _, b in changed)


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_stored_output_is_what_the_real_framework_printed(name, recorded):
    _, _, cells = _program_cell(name)
    printed = "".join(out.get("text", "") for out in cells[0].outputs
                      if out.output_type == "stream" and out.name == "stdout")
    assert not [out for out in cells[0].outputs if out.output_type == "error"]
    reference = recorded("conformance")["programs"][name]["stdout"]
    assert runner.compare(reference, printed) is None, runner.compare(reference, printed)
