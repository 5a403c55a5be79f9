"""Real browser tests: JupyterLab in headless Chromium runs the tutorial notebooks.

Every notebook in ``notebooks/`` is run through the UI (Run > Run All Cells) and saved; no cell
may raise, and the page must show every kernelgraph view, plotly figure and progress bar that
the executed notebook's outputs hold (``labdriver.check_rendered``). Notebook 01 is looked at
closely: the graph views draw the expected nodes, the animation advances, the gradient view
shows 20 and 15, and after reopening with no kernel at all (a second server that offers no
kernelspec) the saved MIME outputs still draw the graph. ``KG_SCREENSHOTS=dir`` saves each
notebook's first kernelgraph view as ``dir/<notebook>.png`` (the README's tour uses them).

Needs Debian's ``chromium`` (``apt-get install chromium``) and the ``playwright`` package;
never ``playwright install``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import labdriver  # noqa: E402
from labdriver import (  # noqa: E402
    ERROR_SELECTOR,
    Lab,
    check_rendered,
    open_notebook,
    run_all,
    run_notebook,
    screenshot,
    wait_all_executed,
    wait_for,
    wait_kernel_idle,
)

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
NOTEBOOK_01 = "01_two_ways_to_build_a_graph.ipynb"


@pytest.fixture(scope="module")
def browser():
    yield from labdriver.launch_browser()


def _graph_names(view) -> set[str]:
    return {n.get_attribute("data-name") for n in view.locator("g.kg-node").all()}


def _check_notebook_01(page) -> None:
    views = page.locator(".kg-graph")
    assert views.count() >= 3
    static_view = views.nth(0)
    assert {"a", "b", "c"} <= _graph_names(static_view)

    # The animation advances: the step counter and the highlighted node change over time.
    run_view = views.nth(1)
    counter = run_view.locator(".kg-step-counter")
    before = counter.text_content()
    run_view.locator(".kg-play").click()
    wait_for(lambda: counter.text_content() != before, 10, "the animation to advance")

    # Scrubbed to the end, the backward pass has delivered dc/da = 20 and dc/db = 15.
    scrub = run_view.locator(".kg-scrub")
    scrub.evaluate("(el) => { el.value = el.max; el.dispatchEvent(new Event('input')); }")
    time.sleep(1.0)
    grads = " ".join(run_view.locator("text.kg-grad").all_text_contents())
    assert "20" in grads and "15" in grads, grads
    screenshot(run_view, "01_two_ways_to_build_a_graph_backward")


DETAILED = {NOTEBOOK_01: _check_notebook_01}


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_in_jupyterlab(browser, tmp_path, name):
    """Run All in JupyterLab: no cell raises, every view the outputs hold is drawn."""
    root = tmp_path / "notebooks"
    root.mkdir()
    shutil.copy(REPO / "notebooks" / name, root / name)
    # notebook 11 shows the real frameworks' recorded output beside its own, read from the
    # repository (../tests/recorded/, as in a clone and on Binder)
    recorded = tmp_path / "tests" / "recorded"
    recorded.mkdir(parents=True)
    shutil.copy(REPO / "tests" / "recorded" / "conformance.json", recorded)
    lab = Lab(root, save_widget_state=True, env=labdriver.learner_env())
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        executed = run_notebook(page, lab, name)
        want = check_rendered(page, executed, name)
        print(name, {k: v for k, v in want.items() if k != "errors"})  # shown with -s
        if want["kg"]:
            screenshot(page.locator(".kg-graph").first, Path(name).stem)
        if name in DETAILED:
            DETAILED[name](page)
        page.close()
    finally:
        lab.stop()

    if name != NOTEBOOK_01:
        return
    # Reopen on a server that has no kernel to give: the saved outputs alone draw the graph.
    offline = Lab(root, kernels=False)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        open_notebook(page, offline, name)
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
        open_notebook(page, lab, "xss.ipynb")
        wait_kernel_idle(page)
        run_all(page)
        wait_all_executed(page)
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
        open_notebook(page, lab, "compiler.ipynb")
        wait_kernel_idle(page)
        run_all(page)
        wait_all_executed(page)
        views = page.locator(".kg-graph")
        wait_for(lambda: views.count() >= 3, 30, "three graph views")
        tracebacks = page.locator(ERROR_SELECTOR)
        assert tracebacks.count() == 0, tracebacks.all_text_contents()

        # -- the compiler view: one button per stage, the last pass shown first
        view = views.nth(0)
        panel = view.locator(".kg-compiler")
        assert panel.get_attribute("data-stage") == "dce"
        stages = view.locator("button.kg-stage").all_text_contents()
        assert stages[0].startswith("as written") and stages[-1].startswith("dce"), stages
        compiled = _node_names(view)
        view.locator("button.kg-stage[data-stage='as written']").click()
        wait_for(lambda: len(_node_names(view)) != len(compiled), what="a redrawn graph")
        written = _node_names(view)
        assert len(written) == 11 and "exp" in written  # the whole graph, as written
        assert panel.get_attribute("data-stage") == "as written"
        view.locator("button.kg-stage[data-stage='fold_constants']").click()
        wait_for(lambda: view.locator("g.kg-node[data-mark='folded']").count() == 1,
                  what="the folded constant marked")
        view.locator("button.kg-stage[data-stage='dce']").click()
        wait_for(lambda: view.locator("g.kg-fused-group").count() == 1,
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
        wait_for(lambda: status.text_content().startswith("1 / "), what="one step")
        active = stepper.locator("g.kg-node.kg-active")
        wait_for(lambda: active.count() == 1, what="a highlighted node")
        assert active.get_attribute("data-name") == first_next
        stepper.locator("button.kg-step-next").click()
        wait_for(lambda: status.text_content().startswith("2 / "), what="a second step")
        wait_for(lambda: active.count() == 1 and active.get_attribute("data-name")
                  != first_next, what="the highlight to move on")
        assert stepper.locator("g.kg-node.kg-executed").count() == 2
        screenshot(stepper, "step_through")
        stepper.locator("button.kg-step-run").click()
        wait_for(lambda: "done" in status.text_content(), what="the run to finish")
        stepper.locator("button.kg-step-reset").click()
        wait_for(lambda: status.text_content().startswith("0 / "), what="a reset")
        assert page.evaluate("window.kgXss") is None

        screenshot(view, "compiler_view")
        page.keyboard.press("Control+s")
        time.sleep(2.0)
        page.close()
    finally:
        lab.stop()

    # The saved outputs alone redraw the compiler view, passes switchable, with no kernel.
    offline = Lab(root, kernels=False)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        open_notebook(page, offline, "compiler.ipynb")
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
        wait_for(lambda: len(_node_names(view)) == 11, what="the graph as written, offline")
        page.close()
    finally:
        offline.stop()
