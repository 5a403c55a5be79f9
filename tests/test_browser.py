"""A real browser test: JupyterLab in headless Chromium runs the tutorial notebooks.

For notebook 01 it runs every cell through the UI (Run > Run All Cells), then checks that the
graph views rendered the expected nodes, that the animation advances, that the gradient view
shows 20 and 15, and that after saving and reopening with no kernel at all (a second server
that offers no kernelspec) the saved MIME outputs still draw the graph. It saves a screenshot
(``KG_SCREENSHOTS=dir`` keeps it; the README's comes from here).

Needs Debian's ``chromium`` (``apt-get install chromium``) and the ``playwright`` package;
never ``playwright install``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright import sync_api as playwright_api

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
TOKEN = "kernelgraph-test"
NOTEBOOK = "01_two_ways_to_build_a_graph.ipynb"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on 127.0.0.1 serving ``root``, stopped by :meth:`stop`."""

    def __init__(self, root: Path, *, kernels: bool = True):
        self.root = root
        self.port = _free_port()
        settings = root.parent / f"settings-{self.port}"
        apputils = settings / "@jupyterlab" / "apputils-extension"
        apputils.mkdir(parents=True)
        (apputils / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        args = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
                f"--port={self.port}", "--ip=127.0.0.1", f"--ServerApp.token={TOKEN}",
                f"--ServerApp.root_dir={root}", f"--LabApp.user_settings_dir={settings}",
                f"--LabApp.workspaces_dir={root.parent / f'workspaces-{self.port}'}"]
        if not kernels:  # a server that can start no kernel: outputs must stand on their own
            args.append("--KernelSpecManager.allowed_kernelspecs=no-such-kernel")
        self.log = open(root.parent / f"lab-{self.port}.log", "w")  # noqa: SIM115
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"{self.url('api/status')}", timeout=2)
                return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"JupyterLab did not start; see {self.log.name}")

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}?token={TOKEN}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (the README's test "
                    "command does this)")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()


@pytest.fixture()
def workdir(tmp_path):
    root = tmp_path / "notebooks"
    root.mkdir()
    shutil.copy(REPO / "notebooks" / NOTEBOOK, root / NOTEBOOK)
    return root


def _open_notebook(page, lab: Lab, name: str) -> None:
    page.goto(lab.url(f"lab/tree/{name}"))
    page.locator(".jp-Notebook").first.wait_for(timeout=60_000)


def _wait_kernel_idle(page, timeout=90_000) -> None:
    # The status bar names the kernel and its state; the notebook toolbar says "idle" before
    # the kernel even exists, so the status bar is what to wait for.
    page.locator(".jp-StatusBar-TextItem", has_text="Idle").first.wait_for(timeout=timeout)


def _run_all(page) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()


def _wait_all_executed(page, timeout=180) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()
        if prompts and all("[*]" not in p and p.strip() not in ("[ ]:", "") for p in prompts):
            return
        time.sleep(0.5)
    raise AssertionError(f"cells did not finish: prompts {prompts}")


def _graph_names(view) -> set[str]:
    return {n.get_attribute("data-name") for n in view.locator("g.kg-node").all()}


def test_notebook_01_in_jupyterlab(browser, workdir):
    lab = Lab(workdir)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        _open_notebook(page, lab, NOTEBOOK)
        _wait_kernel_idle(page)
        _run_all(page)
        _wait_all_executed(page)
        _wait_kernel_idle(page)

        errors = page.locator(".jp-OutputArea-output[data-mime-type="
                              "'application/vnd.jupyter.stderr']")
        tracebacks = page.locator(".jp-RenderedText[data-mime-type="
                                  "'application/vnd.jupyter.error']")
        assert tracebacks.count() == 0, tracebacks.all_text_contents()
        assert errors.count() == 0 or all("Traceback" not in t
                                          for t in errors.all_text_contents())

        views = page.locator(".kg-graph")
        views.first.wait_for(timeout=30_000)
        assert views.count() >= 3
        static_view = views.nth(0)
        assert {"a", "b", "c"} <= _graph_names(static_view)

        # The animation advances: the step counter and the highlighted node change over time.
        run_view = views.nth(1)
        counter = run_view.locator(".kg-step-counter")
        before = counter.text_content()
        run_view.locator(".kg-play").click()
        deadline = time.time() + 10
        while counter.text_content() == before and time.time() < deadline:
            time.sleep(0.2)
        assert counter.text_content() != before

        # Scrubbed to the end, the backward pass has delivered dc/da = 20 and dc/db = 15.
        scrub = run_view.locator(".kg-scrub")
        scrub.evaluate("(el) => { el.value = el.max; el.dispatchEvent(new Event('input')); }")
        time.sleep(1.0)
        grads = " ".join(run_view.locator("text.kg-grad").all_text_contents())
        assert "20" in grads and "15" in grads, grads

        shots = os.environ.get("KG_SCREENSHOTS")
        target = Path(shots) if shots else workdir.parent
        target.mkdir(parents=True, exist_ok=True)
        run_view.scroll_into_view_if_needed()
        page.screenshot(path=str(target / "01_two_ways_to_build_a_graph.png"))

        page.keyboard.press("Control+s")
        time.sleep(2.0)
        page.close()
    finally:
        lab.stop()

    saved = json.loads((workdir / NOTEBOOK).read_text())
    mime_outputs = [o for cell in saved["cells"] for o in cell.get("outputs", [])
                    if "application/vnd.kernelgraph.graph+json" in o.get("data", {})]
    assert mime_outputs, "the saved notebook holds no kernelgraph graph output"
    assert "widgets" not in saved.get("metadata", {}), "widget state must not be stored"

    # Reopen on a server that has no kernel to give: the saved outputs alone draw the graph.
    offline = Lab(workdir, kernels=False)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        _open_notebook(page, offline, NOTEBOOK)
        page.keyboard.press("Escape")  # dismiss a kernel-selection dialog, if one opens
        views = page.locator(".kg-graph")
        views.first.wait_for(timeout=30_000)
        assert {"a", "b", "c"} <= _graph_names(views.nth(0))
        page.close()
    finally:
        offline.stop()


def test_extension_is_installed_and_enabled():
    out = subprocess.run([sys.executable, "-m", "jupyterlab.labextensions", "list"],
                         capture_output=True, text=True, check=True)
    text = out.stdout + out.stderr
    line = next((ln for ln in text.splitlines() if "kernelgraph-extension" in ln), "")
    assert "enabled" in line and "OK" in line, text


XSS_NAME = '<img src=x onerror="window.kgXss=1">'


def test_names_are_text_in_widget_and_mime_views(browser, tmp_path):
    """A node named like an HTML tag is drawn as those characters by the MIME renderer and
    by the widget view, and runs nothing (the SVG fallback is checked in test_widgets)."""
    import nbformat

    root = tmp_path / "xss"
    root.mkdir()
    source = (
        "import kernelgraph as kg\n"
        "g = kg.Graph()\n"
        "with g.as_default():\n"
        f"    x = kg.placeholder(kg.float32, name={XSS_NAME!r})\n"
        "    y = kg.multiply(x, 2.0, name='<script>window.kgXss=2</script>')\n"
        "kg.show(g)\n"
        "kg.widgets.GraphWidget(g)\n"
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nbformat.write(nb, root / "xss.ipynb")
    lab = Lab(root)
    try:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        _open_notebook(page, lab, "xss.ipynb")
        _wait_kernel_idle(page)
        _run_all(page)
        _wait_all_executed(page)
        views = page.locator(".kg-graph")
        deadline = time.time() + 30
        while views.count() < 2 and time.time() < deadline:
            time.sleep(0.3)
        assert views.count() == 2  # the MIME output of kg.show and the widget view
        for i in range(2):
            view = views.nth(i)
            node = view.locator("g.kg-node", has_text="onerror")
            assert node.count() == 1
            assert node.first.get_attribute("data-name") == XSS_NAME
            assert node.first.locator("text.kg-label").text_content().startswith("<img src=x")
            assert view.locator("img").count() == 0
            assert view.locator("script").count() == 0
        assert page.evaluate("window.kgXss") is None
        page.close()
    finally:
        lab.stop()


COMPILER_SOURCE = (
    "import numpy as np\n"
    "import kernelgraph as kg\n"
    "from kernelgraph.static.stepper import Stepper\n"
    "g = kg.Graph()\n"
    "with g.as_default():\n"
    f"    x = kg.placeholder(kg.float32, shape=[None, 3], name={XSS_NAME!r})\n"
    "    scale = kg.constant(2.0) * kg.constant(3.0)\n"
    "    y = kg.relu(x * scale) * 1.0\n"
    "    z = kg.relu(x * scale)\n"
    "    unused = kg.exp(x)\n"
    "sess = kg.Session(g)\n"
    "feed = {x: np.ones((2, 3), np.float32)}\n"
    "kg.show(sess.explain([y, z], feed))\n"
)
STEPPER_SOURCE = (
    "kg.show(kg.Session(g, skip_passes=('cse',)).explain([y, z], feed))\n"
    "w = kg.widgets.StepWidget(Stepper(sess, [y, z], feed))\n"
    "w\n"
)


def _node_names(view) -> list[str]:
    return [n.get_attribute("data-name") for n in view.locator("g.kg-node").all()]


def _wait_for(predicate, timeout=15.0, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_compiler_view_and_step_through_in_jupyterlab(browser, tmp_path):
    """The compiler view switches passes (the drawn graph changes), outlines the fused
    group and shows its kernel; the step widget's Step button advances the highlighted
    node; the saved notebook redraws the compiler view with no kernel."""
    import nbformat

    root = tmp_path / "compiler"
    root.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(COMPILER_SOURCE),
                                         nbformat.v4.new_code_cell(STEPPER_SOURCE)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nbformat.write(nb, root / "compiler.ipynb")
    lab = Lab(root)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        _open_notebook(page, lab, "compiler.ipynb")
        _wait_kernel_idle(page)
        _run_all(page)
        _wait_all_executed(page)
        views = page.locator(".kg-graph")
        _wait_for(lambda: views.count() >= 3, 30, "three graph views")
        tracebacks = page.locator(".jp-RenderedText[data-mime-type="
                                  "'application/vnd.jupyter.error']")
        assert tracebacks.count() == 0, tracebacks.all_text_contents()

        # -- the compiler view: one button per stage, the last pass shown first
        view = views.nth(0)
        panel = view.locator(".kg-compiler")
        assert panel.get_attribute("data-stage") == "dce"
        stages = view.locator("button.kg-stage").all_text_contents()
        assert stages[0].startswith("as written") and stages[-1].startswith("dce"), stages
        compiled = _node_names(view)
        view.locator("button.kg-stage[data-stage='as written']").click()
        _wait_for(lambda: len(_node_names(view)) != len(compiled), what="a redrawn graph")
        written = _node_names(view)
        assert len(written) == 11 and "exp" in written  # the whole graph, as written
        assert panel.get_attribute("data-stage") == "as written"
        view.locator("button.kg-stage[data-stage='fold_constants']").click()
        _wait_for(lambda: view.locator("g.kg-node[data-mark='folded']").count() == 1,
                  what="the folded constant marked")
        view.locator("button.kg-stage[data-stage='dce']").click()
        _wait_for(lambda: view.locator("g.kg-fused-group").count() == 1,
                  what="the fused group outlined")
        assert view.locator("g.kg-node[data-mark='removed']").count() >= 1  # dce's ghosts
        view.locator("g.kg-fused-group text.kg-cluster-label").click()
        source = view.locator("details.kg-kernel[open] pre.kg-source")
        source.wait_for(timeout=5_000)
        assert "def fused(" in source.text_content()
        # names are data: the hostile placeholder name is drawn as text and runs nothing
        assert view.locator("img").count() == 0
        assert any(n == XSS_NAME for n in _node_names(view))
        timing = view.locator(".kg-timing").text_content()
        assert "compile" in timing and "run" in timing
        # a session with cse switched off shows it as skipped
        skipped = views.nth(1).locator("button.kg-stage[data-stage='cse']")
        assert skipped.is_disabled()

        # -- the step widget: Step advances the highlighted node
        stepper = page.locator(".kg-step-widget .kg-graph").first
        stepper.wait_for(timeout=30_000)
        status = stepper.locator(".kg-stepper-status")
        assert status.text_content().startswith("0 / ")
        first_next = stepper.locator("g.kg-node.kg-next").get_attribute("data-name")
        stepper.locator("button.kg-step-next").click()
        _wait_for(lambda: status.text_content().startswith("1 / "), what="one step")
        active = stepper.locator("g.kg-node.kg-active")
        _wait_for(lambda: active.count() == 1, what="a highlighted node")
        assert active.get_attribute("data-name") == first_next
        stepper.locator("button.kg-step-next").click()
        _wait_for(lambda: status.text_content().startswith("2 / "), what="a second step")
        _wait_for(lambda: active.count() == 1 and active.get_attribute("data-name")
                  != first_next, what="the highlight to move on")
        assert stepper.locator("g.kg-node.kg-executed").count() == 2
        shots = os.environ.get("KG_SCREENSHOTS")
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            stepper.screenshot(path=str(Path(shots) / "step_through.png"))
        stepper.locator("button.kg-step-run").click()
        _wait_for(lambda: "done" in status.text_content(), what="the run to finish")
        stepper.locator("button.kg-step-reset").click()
        _wait_for(lambda: status.text_content().startswith("0 / "), what="a reset")
        assert page.evaluate("window.kgXss") is None

        if shots:
            view.screenshot(path=str(Path(shots) / "compiler_view.png"))
        page.keyboard.press("Control+s")
        time.sleep(2.0)
        page.close()
    finally:
        lab.stop()

    # The saved outputs alone redraw the compiler view, passes switchable, with no kernel.
    offline = Lab(root, kernels=False)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        _open_notebook(page, offline, "compiler.ipynb")
        view = page.locator(".kg-graph").first
        view.wait_for(timeout=30_000)
        dialog = page.locator(".jp-Dialog")  # "select a kernel": there is none to select
        for _ in range(20):
            if dialog.count() and dialog.first.is_visible():
                page.keyboard.press("Escape")
            elif _ > 5:
                break
            time.sleep(0.3)
        view.locator("button.kg-stage[data-stage='as written']").click()
        _wait_for(lambda: len(_node_names(view)) == 11, what="the graph as written, offline")
        page.close()
    finally:
        offline.stop()
