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

import numba
import numpy as np
import pytest
from numba import vectorize

import kernelgraph as kg
from kernelgraph.kernels import cpu, gemm, linalg, ufunc_cache
from kernelgraph.static import fusion

REPO = Path(__file__).resolve().parent.parent

# A small training step with fused groups (each variable's update), a matmul and a
# reduction: its first run compiles generated and built-in kernels alike.
_PROGRAM = """
import json, sys
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
imported = [m for m in sys.modules if m.startswith("kernelgraph_fused_")]
print(json.dumps({"origins": origins, "text": text, "imported": imported,
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
    # A loop kept whole on disk is loaded without importing its generated module.
    assert cold["imported"] and not warm["imported"]
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


_EDGES = [0.0, -0.0, 1e-30, 0.5, -0.7, 3.0, 25.0, -25.0, 1e30, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("body", ["_tanh", "_sigmoid", "_log", "_softplus", "_div",
                                  "_maximum", "_relu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_cached_loop_computes_what_numbas_vectorize_computes(body, dtype, monkeypatch,
                                                              tmp_path):
    monkeypatch.setenv("KERNELGRAPH_CACHE", str(tmp_path))
    fn = getattr(cpu, body)
    t = numba.from_dtype(np.dtype(dtype))
    sig = t(*[t] * fn.__code__.co_argcount)
    compiled, first = ufunc_cache.build(fn, sig)
    loaded, second = ufunc_cache.build(fn, sig)  # read back from the file just written
    assert (first, second) == ("compiled", "loaded from cache")
    numbas = vectorize([sig])(fn).ufunc
    x = np.array(_EDGES, dtype)
    args = [x] if fn.__code__.co_argcount == 1 else [x, x[::-1].copy()]
    expected = numbas(*args)
    for ufunc in (compiled, loaded):
        assert ufunc.types == numbas.types
        assert ufunc(*args).tobytes() == expected.tobytes()
        # strided operands and scalars take the loop's other path
        assert ufunc(*[a[::2] for a in args]).tobytes() == numbas(*[a[::2] for a in args]
                                                                  ).tobytes()


def test_a_damaged_or_foreign_cache_file_is_compiled_again(monkeypatch, tmp_path):
    monkeypatch.setenv("KERNELGRAPH_CACHE", str(tmp_path))
    sig = numba.float64(numba.float64, numba.float64)
    ufunc_cache.build(cpu._sub, sig)
    (path,) = (tmp_path / "ufuncs").glob("*.ufunc")
    data = path.read_bytes()
    header, _, code = data.partition(b"\n")
    x = np.array([1.0, 2.5, -3.0])
    for damaged in (data[:-10],  # cut short
                    header + b"\n" + code[:-1] + bytes([code[-1] ^ 1]),  # a flipped bit
                    json.dumps(dict(json.loads(header), cpu="another-cpu")).encode() + b"\n"
                    + code,  # made for another CPU
                    b"not a cache file"):
        path.write_bytes(damaged)
        ufunc, origin = ufunc_cache.build(cpu._sub, sig)
        assert origin == "compiled"
        np.testing.assert_array_equal(ufunc(x, x[::-1]), x - x[::-1])
        assert ufunc_cache.build(cpu._sub, sig)[1] == "loaded from cache"  # written again


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_compiled_product_serves_every_layout_with_numbas_bits(dtype):
    rng = np.random.default_rng(7)
    before = set(gemm._gemm.signatures)  # other tests' products (read-only arrays ...)
    for m, k, n in [(64, 64, 128), (64, 128, 10), (2, 1, 2), (100, 100, 100), (7, 300, 9)]:
        for a_t in (False, True):
            for b_t in (False, True):
                a = rng.standard_normal((k, m) if a_t else (m, k)).astype(dtype)
                b = rng.standard_normal((n, k) if b_t else (k, n)).astype(dtype)
                a, b = (a.T if a_t else a), (b.T if b_t else b)
                a[0, 0] = -0.0
                numbas = np.empty((m, n), dtype)
                linalg._matmul_2d_blas(a, b, numbas)  # numba's np.dot, compiled per layout
                out = np.full((m, n), np.nan, dtype)
                gemm.gemm(a, b, out)
                assert out.tobytes() == numbas.tobytes(), (m, k, n, a_t, b_t)
                assert cpu.matmul(a, b).tobytes() == numbas.tobytes()
    # every layout pair above used one compiled signature (numba compiles np.dot for each)
    assert len(set(gemm._gemm.signatures) - before) <= 1
