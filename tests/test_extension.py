"""The extension's own node tests (layout, scope collapsing, step state; 2,000 nodes), run by
``jlpm test`` in ``extension/``. ``pip install .`` of the project installs its node modules."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

EXTENSION = Path(__file__).resolve().parents[1] / "extension"


def test_extension_node_tests_pass():
    jlpm = shutil.which("jlpm", path=str(Path(sys.executable).parent)) or shutil.which("jlpm")
    assert jlpm, "jlpm comes with jupyterlab: pip install '.[test]'"
    assert (EXTENSION / "node_modules").is_dir(), (
        "extension/node_modules is missing: `pip install .` (or `cd extension && jlpm install`) "
        "installs it")
    out = subprocess.run([jlpm, "test"], cwd=EXTENSION, capture_output=True, text=True,
                         timeout=300)
    report = out.stdout + out.stderr
    assert out.returncode == 0, report
    assert "# fail 0" in report and "# pass " in report, report
