"""The benchmark command runs end to end (a smoke test: speed itself is never asserted)."""

import json
import sys

import numpy as np
import pytest

from kernelgraph import bench
from kernelgraph.bench import cases

ROW_IDS = [c.id for c in cases.CASES]
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
        assert kg["us"] > 0, row
        assert kg["check"] == "ok", row
    for key in ("python", "numpy", "numba", "cpu_count"):
        assert doc["machine"][key]
    out = capsys.readouterr().out
    assert "kernelgraph" in out and "target" in out


def test_missing_torch_and_tensorflow_are_na(tmp_path, monkeypatch):
    # A None entry in sys.modules makes `import torch` raise ImportError, as if absent.
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    status, doc = _run(tmp_path)
    assert status == 0
    for row in doc["rows"]:
        assert row["results"]["kernelgraph"]["us"] > 0
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
