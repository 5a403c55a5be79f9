"""The kernels a first ``Session.run`` compiles are kept on disk for the next process, and
``explain`` says which were compiled and which came from the cache.

Each process here gets its own empty cache folders (``NUMBA_CACHE_DIR``,
``KERNELGRAPH_CACHE``), as the compile benchmark does, so nothing depends on what an earlier
test or run left behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import kernelgraph as kg
from kernelgraph.static import fusion

REPO = Path(__file__).resolve().parent.parent

# A small training step with fused groups (each variable's update), a matmul and a
# reduction: its first run compiles generated and built-in kernels alike.
_PROGRAM = """
import json
import numpy as np
import kernelgraph as kg
r = np.random.default_rng(3)
g = kg.Graph()
with g.as_default():
    x = kg.placeholder(kg.float32, shape=(None, 5))
    w = kg.Variable(r.standard_normal((5, 3)).astype(np.float32))
    b = kg.Variable(np.zeros(3, np.float32))
    y = kg.tanh(kg.matmul(x, w) + b) * 0.5 + 0.25
    loss = kg.reduce_mean(y * y)
    gw, gb = kg.gradients(loss, [w, b])
    train = kg.group(w.assign_sub(gw * 0.1), b.assign_sub(gb * 0.1))
    init = kg.global_variables_initializer()
feed = {x: r.standard_normal((4, 5)).astype(np.float32)}
with kg.Session(graph=g) as sess:
    sess.run(init)
    first = sess.run([loss, y], feed)
    sess.run(train, feed)
    after = sess.run([w, b, loss], feed)
    origins = sess.explain(train, feed).origins
    text = str(sess.explain(y, feed))
print(json.dumps({"origins": origins, "text": text,
                  "values": [np.asarray(v).tobytes().hex() for v in first + after]}))
"""


def _run_fresh_process(cache_root: Path) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_root / "numba"),
               KERNELGRAPH_CACHE=str(cache_root / "kernelgraph"), PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", _PROGRAM], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_explain_says_which_kernels_came_from_the_cache_and_values_do_not_change(tmp_path):
    cold = _run_fresh_process(tmp_path)
    warm = _run_fresh_process(tmp_path)  # the same cache folders, now filled
    assert "compiled" in cold["origins"].values()
    # The two updates share one kernel's code: the second reuses what the process has.
    assert cold["origins"]["assign_sub_1"] == "reused in this process (compiled)"
    assert warm["origins"] == {name: origin.replace("compiled", "loaded from cache")
                               for name, origin in cold["origins"].items()}
    # The text names each fused kernel and its node (explain(y) makes another plan, so
    # the kernel of y's group is one this process already has).
    assert "(add_1): reused in this process (compiled)" in cold["text"]
    assert "(add_1): reused in this process (loaded from cache)" in warm["text"]
    assert "fused kernel fused_" in cold["text"]
    # Bit for bit the same results, compiled or loaded.
    assert cold["values"] == warm["values"]


def test_the_kernel_cache_folder_is_configurable(monkeypatch, tmp_path):
    monkeypatch.setenv("KERNELGRAPH_CACHE", str(tmp_path / "mine"))
    assert fusion.cache_dir() == str(tmp_path / "mine" / "fused")
    monkeypatch.delenv("KERNELGRAPH_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert fusion.cache_dir() == str(tmp_path / "xdg" / "kernelgraph" / "fused")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert fusion.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache",
                                              "kernelgraph", "fused")


def test_explain_without_fused_kernels_has_no_cache_lines():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=(3,))
        y = kg.exp(x)  # one op: nothing to fuse
    with kg.Session(g) as sess:
        e = sess.explain(y, {x: None})
    assert e.origins == {} and "fused kernel" not in str(e)
