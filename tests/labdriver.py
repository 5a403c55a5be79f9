"""Driving JupyterLab in headless Debian Chromium (Playwright), shared by the browser tests
(``test_browser.py``) and the Binder test (``test_binder.py``).

A notebook is run the way a learner runs it: opened in JupyterLab, Run > Run All Cells, then
saved from the UI. The saved file is the executed notebook; its outputs say what the page must
show (:func:`expected_views`), and :func:`check_rendered` checks that the page shows it.
The test servers save widget state into the notebook (JupyterLab's "Save Jupyter widget
state" setting), only so a widget output can be told apart: a kernelgraph view, a plotly
``FigureWidget``, a progress bar.

Needs Debian's ``chromium`` and the ``playwright`` package; never ``playwright install``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
TOKEN = "kernelgraph-test"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

GRAPH_MIME = "application/vnd.kernelgraph.graph+json"
PLOTLY_MIME = "application/vnd.plotly.v1+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
KG_MODULE = "kernelgraph-extension"
ERROR_SELECTOR = ".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']"
STDERR_SELECTOR = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
PROGRESS_SELECTOR = ".widget-hprogress, .widget-vprogress"


def launch_browser() -> Iterator:
    """A headless Chromium (a generator for a pytest fixture)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (the README's test "
                    "command does this)")
    from playwright import sync_api as playwright_api

    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_settings(settings: Path, save_widget_state: bool) -> None:
    files = {
        # no "Jupyter news" toast over the page
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
            {"fetchNews": "false", "checkForUpdates": False},
        # every cell in the DOM, so outputs can be counted wherever the page is scrolled
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
        "@jupyter-widgets/jupyterlab-manager/plugin.jupyterlab-settings":
            {"saveState": save_widget_state},
    }
    for name, value in files.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))


class Lab:
    """A JupyterLab server on 127.0.0.1 serving ``root``, stopped by :meth:`stop`.

    ``command`` replaces ``python -m jupyterlab`` (the Binder test starts
    ``binder/start jupyter lab``); ``env`` replaces the environment; ``kernels=False`` gives a
    server that can start no kernel (outputs must stand on their own)."""

    def __init__(self, root: Path, *, kernels: bool = True, save_widget_state: bool = False,
                 command: Sequence[str] | None = None, env: dict | None = None,
                 cwd: Path | None = None, timeout: float = 120):
        self.root = root
        self.port = _free_port()
        state = root.parent / f"lab-{self.port}"
        settings = state / "settings"
        _write_settings(settings, save_widget_state)
        args = list(command or [sys.executable, "-m", "jupyterlab"]) + [
            "--no-browser", "--allow-root", f"--port={self.port}", "--ip=127.0.0.1",
            f"--ServerApp.token={TOKEN}", f"--ServerApp.root_dir={root}",
            f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={state / 'workspaces'}"]
        if not kernels:
            args.append("--KernelSpecManager.allowed_kernelspecs=no-such-kernel")
        self.log_path = state / "lab.log"
        self.log = open(self.log_path, "w")  # noqa: SIM115
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env,
                                     cwd=cwd)
        deadline = time.time() + timeout
        while time.time() < deadline and self.proc.poll() is None:
            try:
                urllib.request.urlopen(self.url("api/status"), timeout=2)
                return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"JupyterLab did not start:\n{self.log_path.read_text()[-3000:]}")

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}?token={TOKEN}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def learner_env() -> dict:
    """This process's environment without what the test suite sets for itself: the root
    conftest switches numba's CUDA simulator on for every test on a machine without a GPU,
    but a learner's JupyterLab has no such switch (a notebook that needs it sets it)."""
    return {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}


# -- the UI -------------------------------------------------------------------------------------
def wait_for(predicate, timeout: float = 15.0, what: str = "condition") -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def open_notebook(page, lab: Lab, name: str) -> None:
    page.goto(lab.url(f"lab/tree/{name}"))
    page.locator(".jp-Notebook").first.wait_for(timeout=120_000)


def wait_kernel_idle(page, timeout: float = 120_000) -> None:
    # The status bar names the kernel and its state; the notebook toolbar says "idle" before
    # the kernel even exists (and Run All then does nothing), so wait for the status bar.
    page.locator(".jp-StatusBar-TextItem", has_text="Idle").first.wait_for(timeout=timeout)


def run_all(page) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()


def wait_all_executed(page, timeout: float = 180, allowed_errors: int = 0) -> None:
    """Until every code cell has an execution count; fails at once when a cell raised (Run
    All stops there, so the rest would never run)."""
    deadline = time.time() + timeout
    errors = page.locator(ERROR_SELECTOR)
    prompts: list[str] = []
    while time.time() < deadline:
        if errors.count() > allowed_errors:
            raise AssertionError("a cell raised:\n" + "\n".join(errors.all_text_contents()))
        prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()
        if prompts and all("[*]" not in p and p.strip() not in ("[ ]:", "") for p in prompts):
            return
        time.sleep(0.5)
    raise AssertionError(f"cells did not finish in {timeout} s: prompts {prompts}")


def save(page, path: Path, timeout: float = 60) -> dict:
    """Save the notebook from the UI (Ctrl+S) and return the saved file's contents."""
    before = path.stat().st_mtime_ns
    page.locator(".jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    wait_for(lambda: path.stat().st_mtime_ns != before, timeout, "the notebook to be saved")
    for _ in range(20):  # the server writes atomically; this is only a second line of defence
        try:
            return json.loads(path.read_text())
        except json.JSONDecodeError:
            time.sleep(0.5)
    return json.loads(path.read_text())


def run_notebook(page, lab: Lab, name: str, timeout: float = 600) -> dict:
    """Open ``name`` in JupyterLab, Run All, wait for every cell and the kernel, save; the
    executed notebook as saved."""
    open_notebook(page, lab, name)
    wait_kernel_idle(page)
    path = lab.root / name
    expected_errors = sum(1 for c in json.loads(path.read_text())["cells"]
                          if "raises-exception" in c.get("metadata", {}).get("tags", []))
    run_all(page)
    wait_all_executed(page, timeout, allowed_errors=expected_errors)
    wait_kernel_idle(page, timeout * 1000)
    return save(page, path)


# -- what the executed notebook says the page must show ------------------------------------------
def _models(nb: dict) -> dict:
    state = nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {})
    return state.get("state", {})


def _widget_tree(models: dict, model_id: str, seen: set | None = None) -> Iterator[dict]:
    """The model and every model it shows (``children``, ``IPY_MODEL_`` references)."""
    seen = set() if seen is None else seen
    if model_id in seen or model_id not in models:
        return
    seen.add(model_id)
    model = models[model_id]
    yield model
    for value in model.get("state", {}).values():
        refs = value if isinstance(value, list) else [value]
        for ref in refs:
            if isinstance(ref, str) and ref.startswith("IPY_MODEL_"):
                yield from _widget_tree(models, ref[len("IPY_MODEL_"):], seen)


def expected_views(nb: dict) -> dict:
    """What the outputs of an executed notebook make the page draw: ``kg`` kernelgraph views
    (the MIME output or a kernelgraph widget view), ``plotly`` figures (plotly's MIME output
    or a ``FigureWidget``), ``progress`` bars (tqdm's or any ipywidgets progress bar),
    ``errors`` (error outputs, with the cell source), ``unknown_widgets`` (widget outputs
    whose model the saved state does not hold)."""
    models = _models(nb)
    found = {"kg": 0, "plotly": 0, "progress": 0, "errors": [], "unknown_widgets": 0}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                if "raises-exception" not in cell.get("metadata", {}).get("tags", []):
                    found["errors"].append(f"{out.get('ename')}: {out.get('evalue')}\n  in "
                                           f"{''.join(cell['source'])[:300]}")
                continue
            data = out.get("data", {})
            if WIDGET_MIME in data:
                model_id = data[WIDGET_MIME].get("model_id")
                if model_id not in models:
                    found["unknown_widgets"] += 1
                    found["kg"] += GRAPH_MIME in data
                    found["plotly"] += PLOTLY_MIME in data
                    continue
                for model in _widget_tree(models, model_id):
                    state = model.get("state", {})
                    # (saved state leaves out values equal to the model's defaults, such
                    # as a kernelgraph model's _view_module)
                    found["kg"] += model.get("model_module") == KG_MODULE
                    found["plotly"] += ("plotly" in str(state.get("_anywidget_id", ""))
                                        or "_widget_data" in state)  # a FigureWidget
                    found["progress"] += model.get("model_name") in ("IntProgressModel",
                                                                     "FloatProgressModel")
            else:
                found["kg"] += GRAPH_MIME in data
                found["plotly"] += PLOTLY_MIME in data
    return found


def check_rendered(page, nb: dict, name: str) -> dict:
    """No cell raised, and the page shows every kernelgraph view, plotly figure and progress
    bar that the executed notebook's outputs hold. Returns :func:`expected_views`."""
    want = expected_views(nb)
    assert not want["errors"], f"{name}: cells raised:\n" + "\n".join(want["errors"])
    # A closed widget (tqdm's leave=False) leaves an output whose model is gone and which
    # shows nothing; but no saved state at all means the test setting did not work.
    saved = WIDGET_STATE in nb.get("metadata", {}).get("widgets", {})
    assert want["unknown_widgets"] == 0 or saved, f"{name}: no widget state was saved"
    tracebacks = page.locator(ERROR_SELECTOR)
    allowed = sum(1 for c in nb["cells"]
                  if "raises-exception" in c.get("metadata", {}).get("tags", []))
    assert tracebacks.count() <= allowed, tracebacks.all_text_contents()
    stderr = page.locator(STDERR_SELECTOR).all_text_contents()
    assert all("Traceback" not in t for t in stderr), stderr

    counts = {
        "kg": lambda: page.locator(".kg-graph").count(),
        "plotly": lambda: page.locator(".js-plotly-plot").count(),
        "progress": lambda: page.locator(PROGRESS_SELECTOR).count(),
    }
    for what, count in counts.items():
        try:
            wait_for(lambda c=count, w=what: c() >= want[w], 60, f"{want[what]} {what} views")
        except AssertionError:
            raise AssertionError(f"{name}: the page shows {count()} {what} views, the "
                                 f"outputs hold {want[what]}") from None
    # every plotly output is one figure: no more, no less
    assert counts["plotly"]() == want["plotly"], (name, counts["plotly"](), want)
    return want


def screenshot(element, name: str) -> Path | None:
    """Save an element screenshot as ``$KG_SCREENSHOTS/<name>.png`` when KG_SCREENSHOTS is
    set (the README's tour uses them)."""
    shots = os.environ.get("KG_SCREENSHOTS")
    if not shots:
        return None
    path = Path(shots) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    element.scroll_into_view_if_needed()
    element.screenshot(path=str(path))
    return path
