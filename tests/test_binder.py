"""Binder, checked without Docker.

repo2docker builds a Binder image from ``binder/`` alone: a Python from ``runtime.txt`` with
the base image's Jupyter, ``pip install -r binder/requirements.txt`` from the repository root
(which installs ``.``, building the JupyterLab extension with the node that pip's build
environment takes from PyPI), then
``binder/postBuild``, and it starts the server through ``binder/start``. This test does the
same steps outside Docker: a fresh virtual environment holding the base image's Jupyter
versions, a copy of the repository as Binder would clone it (files git tracks, plus new
ones it does not ignore), the requirements (and ``pip check``), postBuild with a fresh home;
then it opens notebook 01 in headless Chromium through ``binder/start jupyter lab``, runs it,
and checks its widgets render (the browser helpers of ``labdriver.py``). pip's cache is used
as usual, so a second run is quicker.

It needs what the README's test command needs: network access to the package registries
and Debian's chromium; nothing is skipped. When
``repo2docker`` is installed, the Dockerfile it would build is checked too (that the steps
above are Binder's); it is not required, since without Docker it can do no more than print
that.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import labdriver  # noqa: E402
from labdriver import Lab, check_rendered, run_notebook, wait_for  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BINDER = REPO / "binder"
NOTEBOOK = "notebooks/01_two_ways_to_build_a_graph.ipynb"
# Jupyter in Binder's base image (repo2docker 2026.4's environment.py-3.11 lock)
BASE_IMAGE = ["jupyterlab==4.4.9", "notebook==7.4.7", "ipywidgets==8.1.7"]
# what a copy leaves out when git cannot say what is tracked (e.g. an unpacked sdist)
UNTRACKED = ("node_modules", ".venv*", ".git", ".yarn", "lib", "lib-test", "labextension",
             "__pycache__", ".ci-tools", "build", "dist", "*.egg-info", ".pytest_cache",
             ".hypothesis", ".ruff_cache", "screenshots")


@pytest.fixture(scope="module")
def browser():
    yield from labdriver.launch_browser()


def test_binder_files():
    """The shape repo2docker expects, and the pins the notebooks need."""
    assert re.fullmatch(r"python-3\.\d+\s*", (BINDER / "runtime.txt").read_text())
    requirements = [ln.split("#")[0].strip()
                    for ln in (BINDER / "requirements.txt").read_text().splitlines()]
    assert "." in requirements  # the project itself, with its extension
    assert any(re.fullmatch(r"jupyterlab==4\.6\.\d+", r) for r in requirements), requirements
    # the base image's notebook 7.4 does not go with JupyterLab 4.6
    assert any(re.fullmatch(r"notebook==7\.(6|[7-9])\.\d+", r) for r in requirements)
    for script in ("postBuild", "start"):
        path = BINDER / script
        assert path.stat().st_mode & stat.S_IXUSR, f"binder/{script} is not executable"
        assert path.read_text().startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in (BINDER / "postBuild").read_text()
    assert (BINDER / "start").read_text().rstrip().endswith('exec "$@"')


def _copy_repo(dest: Path) -> None:
    """The repository as a fresh clone has it: git's files, nothing built."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=REPO, capture_output=True)
    if listed.returncode == 0 and listed.stdout:
        dest.mkdir()
        for name in listed.stdout.decode().split("\0"):
            src = REPO / name
            if name and src.is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / name)
    else:
        shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns(*UNTRACKED))


def _run(args, **kwargs) -> subprocess.CompletedProcess:
    start = time.time()
    done = subprocess.run(args, capture_output=True, text=True, **kwargs)
    print(f"{time.time() - start:6.1f} s  {' '.join(map(str, args))[-90:]}")  # shown with -s
    assert done.returncode == 0, (f"{' '.join(map(str, args))} failed ({done.returncode}):\n"
                                  f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done


def test_binder_build_and_notebook_01(browser, tmp_path):
    repo = tmp_path / "repo"
    _copy_repo(repo)
    repo2docker = shutil.which("repo2docker")
    if repo2docker:  # optional: without Docker it can only print the Dockerfile it would build
        out = _run([repo2docker, "--no-build", "--debug", "--no-run", str(repo)], timeout=300)
        plan = out.stdout + out.stderr
        version = (BINDER / "runtime.txt").read_text().strip().removeprefix("python-")
        for step in (f"python={version}", 'pip install --no-cache-dir -r "binder/requirements.txt"',
                     "./binder/postBuild", 'R2D_ENTRYPOINT="${REPO_DIR}/binder/start"'):
            assert step in plan, f"repo2docker's plan lacks {step!r}:\n{plan}"
    home = tmp_path / "home"  # a fresh user, as in the image; pip's own cache is kept
    home.mkdir()
    venv = tmp_path / "env"
    _run([sys.executable, "-m", "venv", str(venv)])
    env = {k: v for k, v in labdriver.learner_env().items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "NUMBA_CACHE_DIR", "JUPYTER_PATH",
                        "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)

    # The image's base environment has Jupyter already, older than ours (the versions of
    # repo2docker's conda lock for Python 3.11); requirements.txt must upgrade it consistently.
    _run([venv / "bin" / "pip", "install", "-q", *BASE_IMAGE], env=env, timeout=900)
    # repo2docker: pip install -r binder/requirements.txt, from the repository root
    _run([venv / "bin" / "pip", "install", "-q", "-r", "binder/requirements.txt"], cwd=repo,
         env=env, timeout=900)
    _run([venv / "bin" / "pip", "check"], env=env)
    labext = _run([venv / "bin" / "jupyter", "labextension", "list"], env=env)
    assert re.search(r"kernelgraph-extension .*enabled.*OK", labext.stdout + labext.stderr)

    # then postBuild, as the image's user, with a home of its own
    env["HOME"] = str(home)
    _run([repo / "binder" / "postBuild"], cwd=repo, env=env, timeout=600)
    # numba keeps its compiled kernels there; kernelgraph its elementwise loops and fused
    # kernels in its own cache (the demo's step may need only those)
    warmed = [*(home / ".cache" / "numba").rglob("*.nbi"),
              *(p for p in (home / ".cache" / "kernelgraph").rglob("*") if p.is_file())]
    assert warmed, "postBuild warmed no numba or kernelgraph cache"

    # then the server, through binder/start; the kernel is the environment's python
    lab = Lab(repo, save_widget_state=True, cwd=repo, env=env,
              command=[str(repo / "binder" / "start"), "jupyter", "lab"])
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        executed = run_notebook(page, lab, NOTEBOOK)
        want = check_rendered(page, executed, NOTEBOOK)
        assert want["kg"] >= 3 and want["plotly"] >= 1, want
        views = page.locator(".kg-graph")
        wait_for(lambda: views.nth(0).locator("g.kg-node").count() >= 3, 30, "graph nodes")
        page.close()
    finally:
        lab.stop()
