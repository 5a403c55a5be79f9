"""The pool-of-devices benchmark rows (20a-d) run end to end on a real two-worker Dask
LocalCluster, check their outputs, derive the speed-up and close the cluster; without Dask
they read n/a. Speed itself is never asserted here (``python -m kernelgraph.bench`` reports
it)."""

import json
import sys

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph import bench
from kernelgraph.bench import cases
from kernelgraph.bench import distributed as D

ROWS = ["20a", "20b", "20c", "20d", "20e"]
TINY = ["--quick", "--number", "1", "--repeat", "1", "--quiet", "--frameworks", "kernelgraph"]


def _run(tmp_path, capsys):
    path = tmp_path / "bench.json"
    try:
        status = bench.main([*TINY, "--json", str(path), "--rows", "20"])
    finally:
        D.close_pool()
    return status, json.loads(path.read_text()), capsys.readouterr().out


def test_rows_are_registered():
    assert [c.id for c in cases.CASES][-5:] == ROWS
    selected, _ = bench.runner.select_rows("20")
    assert [c.id for c in selected] == ROWS


def test_reference_step_matches_one_process():
    """The float64 reference of 20c/20d is the gradient kernelgraph computes in one process
    (so a mismatch in the rows is the pool's, not the reference's)."""
    x0, y0, values = D.dp_data()
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=list(x0.shape))
        labels = kg.placeholder(kg.int64, shape=[len(y0)])
        params = [kg.Variable(v) for v in values]
        loss = D._dp_model(kg, x, labels, *params)
        grads = kg.gradients(loss, params)
        init = kg.global_variables_initializer()
    with kg.Session(graph=g) as sess:
        sess.run(init)
        got = sess.run([loss, grads], {x: x0, labels: y0})
    assert cases.check(got, D.reference_dp_step(), rtol=1e-3) is None
    # and the check would notice a wrong gradient
    got[1][2] = got[1][2] * 1.01
    assert cases.check(got, D.reference_dp_step(), rtol=1e-3) is not None


def test_towers_split_the_batch_and_average_on_worker_0():
    g, feeds, loss, grads, train, _ = D.build_data_parallel(kg, 2)
    assert [tuple(x.shape) for x, _ in feeds] == [(128, 1, 8, 8), (128, 1, 8, 8)]
    assert [x.device.worker for x, _ in feeds] == ["worker:0", "worker:1"]
    assert {gr.device.worker for gr in grads} == {"worker:0"}
    assert loss.device.worker == "worker:0"
    with pytest.raises(ValueError, match="does not split"):
        D.build_data_parallel(kg, 3)


def test_finish_derives_the_speedup_and_net_transfer_cost():
    def row(row_id, us):
        return {"id": row_id, "results": {"kernelgraph": {"us": us}}, "target": None,
                "pass": None, "unchecked": []}

    rows = [row("20a", 1000.0), row("20b", 1600.0), row("20c", 9000.0), row("20d", 5000.0)]
    D.finish(rows)
    by_id = {r["id"]: r for r in rows}
    assert by_id["20d"]["speedup"] == pytest.approx(1.8)
    assert by_id["20d"]["pass"] is True and by_id["20d"]["unchecked"] == []
    assert by_id["20a"]["net_us_per_mb"] == pytest.approx(900.0)
    notes = D.footnotes({"rows": rows})
    assert "row 20d: 1.80x the throughput of row 20c" in notes[-1]
    rows = [row("20c", None), row("20d", 5000.0)]  # 20c n/a: nothing to compare with
    D.finish(rows)
    assert rows[1]["pass"] is None and rows[1]["unchecked"]


def test_rows_run_on_a_local_cluster(tmp_path, capsys):
    pytest.importorskip("distributed")
    status, doc, out = _run(tmp_path, capsys)
    assert status == 0, out
    assert [row["id"] for row in doc["rows"]] == ROWS
    for row in doc["rows"]:
        cell = row["results"]["kernelgraph"]
        assert cell["us"] is not None and cell["us"] > 0, row
        assert cell["check"] == "ok", row
        for other in ("numpy", "torch", "tensorflow"):
            assert row["results"][other]["us"] is None
    by_id = {row["id"]: row for row in doc["rows"]}
    assert by_id["20d"]["speedup"] == pytest.approx(
        by_id["20c"]["results"]["kernelgraph"]["us"] / by_id["20d"]["results"]["kernelgraph"]["us"])
    assert by_id["20d"]["pass"] in (True, False)
    assert by_id["20b"]["pass"] in (True, False)  # the 5 ms target was evaluated
    assert by_id["20d"]["results"]["kernelgraph"]["towers"] == 2
    assert "the throughput of row 20c" in out
    assert not D._POOL  # the cluster was closed at the end of the run


def test_rows_without_dask_are_na(tmp_path, capsys, monkeypatch):
    # A None entry in sys.modules makes `import distributed` raise ImportError, as if absent.
    monkeypatch.setitem(sys.modules, "distributed", None)
    status, doc, out = _run(tmp_path, capsys)
    assert status == 0
    for row in doc["rows"]:
        cell = row["results"]["kernelgraph"]
        assert cell["us"] is None and not cell.get("error"), row
        assert "kernelgraph[distributed]" in cell["reason"]
    assert doc["rows"][3]["pass"] is None
    assert "n/a kernelgraph (rows 20a, 20b, 20c, 20d, 20e)" in out


def test_transfer_reference_is_exact():
    assert float(np.float32(D._transfer_reference())) == 0.5 * D.TRANSFER_N
