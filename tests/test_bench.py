"""The benchmark command runs end to end (a smoke test: speed itself is never asserted)."""

import json
import sys

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.kernels.cuda.core  # noqa: F401 - for REAL_GPU
from kernelgraph import bench
from kernelgraph.bench import cases

ROW_IDS = [c.id for c in cases.CASES]
GPU_ROWS = ("9", "10")  # n/a without a GPU (and on numba's simulator, as in CI)
REAL_GPU = kg.cuda.is_available() and not kg.kernels.cuda.core.SIMULATOR
TINY = ["--quick", "--number", "2", "--repeat", "1", "--quiet"]


def _run(tmp_path, *extra):
    path = tmp_path / "bench.json"
    status = bench.main([*TINY, "--json", str(path), *extra])
    return status, json.loads(path.read_text())


def test_quick_run_writes_every_row(tmp_path, capsys):
    status, doc = _run(tmp_path, "--frameworks", "kernelgraph,numpy")
    assert status == 0
    assert [row["id"] for row in doc["rows"]] == ROW_IDS
    for row in doc["rows"]:
        kg = row["results"]["kernelgraph"]
        if row["id"] in GPU_ROWS and not REAL_GPU:
            assert kg["us"] is None and ("GPU" in kg["reason"] or "simulator" in kg["reason"])
            assert row["pass"] is None
            continue
        assert kg["us"] > 0, row
        assert kg["check"] == "ok", row
    for key in ("python", "numpy", "numba", "cpu_count"):
        assert doc["machine"][key]
    # The first run in new processes, cold (empty caches) and warm (caches the cold run
    # filled): the warm one must not compile again, so it is faster.
    cold, warm = doc["compile"]["cold"], doc["compile"]["warm"]
    assert cold["first_run_s"] > warm["first_run_s"] > 0, doc["compile"]
    out = capsys.readouterr().out
    assert "kernelgraph" in out and "target" in out
    rows = {row["id"]: row for row in doc["rows"]}
    # The memory-bound row reports GB/s next to a copy timed in the same run, and its target
    # is evaluated against that copy even when NumPy is not a selected column.
    bw = rows["7"]["bandwidth"]
    assert bw["bytes_per_call"] == 4 * 4 * cases.FMA_N
    assert bw["gbps"]["kernelgraph"] > 0 and bw["baseline"]["gbps"] > 0
    assert bw["kernelgraph_vs_baseline"] > 0
    assert rows["7"]["pass"] is not None and "bandwidth" not in rows["7"]["unchecked"]
    assert "GB/s" in out and "row 7 GB/s" in out
    assert rows["6"]["pass"] is not None  # the ratio to numpy could be checked
    for row_id in ("8a", "8b"):  # the CNN rows compare with TF1, absent here
        assert rows[row_id]["pass"] is None
        assert rows[row_id]["unchecked"] == ["ratio to tensorflow"]


def test_missing_torch_and_tensorflow_are_na(tmp_path, monkeypatch):
    # A None entry in sys.modules makes `import torch` raise ImportError, as if absent.
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    status, doc = _run(tmp_path)
    assert status == 0
    for row in doc["rows"]:
        assert row["id"] in GPU_ROWS or row["results"]["kernelgraph"]["us"] > 0
        for name in ("torch", "tensorflow"):
            assert row["results"][name]["us"] is None
            assert row["ratios"][name] is None
    add = doc["rows"][0]
    assert "ratio to torch" in add["unchecked"]
    assert doc["frameworks_missing"]["torch"].startswith("torch is not installed")


def test_help_exits_cleanly(capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(["--help"])
    assert e.value.code == 0
    assert "--quick" in capsys.readouterr().out


def test_chain_is_the_same_for_every_framework():
    assert len(cases.CHAIN) == 100
    chain = cases.make_chain(np.tanh, lambda x: 1 / (1 + np.exp(-x)))
    got = chain(cases.CHAIN_INPUT)
    assert cases.check(got, cases.reference_chain(cases.CHAIN_INPUT)) is None
    assert cases.check(got * 1.01, cases.reference_chain(cases.CHAIN_INPUT)) is not None


def test_bandwidth_target():
    target = cases.Target(min_bandwidth=0.85)
    assert target.describe("us") == ">= 0.85x copy GB/s"
    assert target.evaluate(10.0, {}, 0.9) == (True, [])
    assert target.evaluate(10.0, {}, 0.8) == (False, [])
    assert target.evaluate(10.0, {}, None) == (None, ["bandwidth"])


def test_cnn_reference_and_tf_layout():
    loss, grads = cases.reference_cnn_step()
    assert [g.shape for g in grads] == [(8, 1, 3, 3), (8, 8, 3, 3), (2048, 10), (10,)]
    assert 0 < float(loss) < 10
    # The bias gradient of a mean cross-entropy sums to zero over the classes.
    assert abs(grads[3].sum()) < 1e-12
    w = np.arange(2048 * 10, dtype=np.float32).reshape(2048, 10)
    assert np.array_equal(cases._from_nhwc_order(cases._to_nhwc_order(w)), w)
    # Flattening NHWC activations against the reordered w3 gives the NCHW logits.
    h = np.random.default_rng(0).standard_normal((2, 8, 16, 16))
    nchw = h.reshape(2, -1) @ w
    nhwc = h.transpose(0, 2, 3, 1).reshape(2, -1) @ cases._to_nhwc_order(w)
    assert np.allclose(nchw, nhwc)


def test_mnist_reference_step_matches_finite_differences():
    from kernelgraph.bench import cnn

    x, labels, weights = cnn.data()
    x, labels = x[:4], labels[:4]  # a small batch keeps the float64 step quick
    _, grads = cnn.loss_and_gradients(x, labels, weights)
    assert set(grads) == set(weights)
    for name, index in [("layer1.0.weight", (3, 0, 2, 1)), ("layer1.1.weight", (5,)),
                        ("layer2.0.weight", (7, 4, 0, 3)), ("layer2.1.bias", (2,)),
                        ("fc.weight", (1, 100)), ("fc.bias", (9,))]:
        h = 1e-6
        up, down = dict(weights), dict(weights)
        for side, sign in ((up, 1), (down, -1)):
            side[name] = weights[name].astype(np.float64).copy()
            side[name][index] += sign * h
        numeric = (cnn.loss_and_gradients(x, labels, up)[0]
                   - cnn.loss_and_gradients(x, labels, down)[0]) / (2 * h)
        assert numeric == pytest.approx(grads[name][index], rel=1e-5, abs=1e-9), name
    # the TF1 program's dense kernel, NHWC-flattened, gives the NCHW program's logits
    h = np.random.default_rng(0).standard_normal((2, 32, 7, 7)).astype(np.float32)
    nchw = h.reshape(2, -1) @ weights["fc.weight"].T
    nhwc = h.transpose(0, 2, 3, 1).reshape(2, -1) @ cnn._fc_nhwc(weights["fc.weight"])
    assert np.allclose(nchw, nhwc, atol=1e-5)


def test_rows_selects_cases_by_id_and_prefix(tmp_path):
    status, doc = _run(tmp_path, "--frameworks", "kernelgraph", "--rows", "3,11")
    assert status == 0
    assert [row["id"] for row in doc["rows"]] == ["3", "11a", "11b", "11c"]
    assert doc["compile"] is None  # not asked for
    cases_, with_compile = bench.runner.select_rows("compile,1")
    assert [c.id for c in cases_] == ["1"] and with_compile
    with pytest.raises(ValueError, match=r"unknown rows \['99'\]"):
        bench.runner.select_rows("99")
    assert bench.main(["--rows", "99", "--quiet"]) == 2
