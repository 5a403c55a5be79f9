"""The API census (tests/conformance/census/): its committed table and summary are what
kernelgraph, as it is now, gives for the committed per-repository name sets, and the coverage
that docs/compatibility.md states is the table's.

Collecting the name sets needs the public repositories and real PyTorch / TensorFlow, so it
is a manual step (census.py's docstring); everything after it is checked here.
"""
from __future__ import annotations

import ast
import csv
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CENSUS_DIR = ROOT / "tests" / "conformance" / "census"


def _load_census():
    spec = importlib.util.spec_from_file_location("kg_census", CENSUS_DIR / "census.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


census = _load_census()
NAMES = json.loads((CENSUS_DIR / "names.json").read_text())
REPOS = json.loads((CENSUS_DIR / "repositories.json").read_text())["repositories"]


def test_repository_list_and_name_sets_agree():
    assert len(REPOS) >= 30
    assert len({r["name"] for r in REPOS}) == len(REPOS)
    assert len({r["name"].split("/")[0] for r in REPOS}) >= 10, "several authors"
    assert set(NAMES) == {r["name"] for r in REPOS}
    prefixes = {"tf1": "tf.", "torch": "torch.", "tensor": "Tensor."}
    for repo in REPOS:
        entry = NAMES[repo["name"]]
        assert re.fullmatch(r"[0-9a-f]{40}", repo["commit"])
        assert entry["commit"] == repo["commit"]
        for fw, prefix in prefixes.items():
            assert entry[fw] == sorted(set(entry[fw])), (repo["name"], fw)
            assert all(n.startswith(prefix) for n in entry[fw]), (repo["name"], fw)
    # Both frameworks are there, each in many repositories.
    for fw in ("tf1", "torch"):
        assert sum(1 for e in NAMES.values() if e[fw]) >= 12, fw


def test_committed_table_and_summary_are_kernelgraph_as_it_is():
    table, summary = census.build(NAMES)
    committed = (CENSUS_DIR / "table.csv").read_text()
    assert committed == table, (
        "kernelgraph's statuses changed: run "
        "`python tests/conformance/census/census.py table` and commit table.csv and summary.md")
    assert (CENSUS_DIR / "summary.md").read_text() == summary


def test_table_is_well_formed():
    rows = list(csv.DictReader((CENSUS_DIR / "table.csv").open()))
    assert rows and set(rows[0]) == {"name", "framework", "repositories", "kernelgraph"}
    seen = set()
    for row in rows:
        assert row["framework"] in census.FRAMEWORKS
        assert row["kernelgraph"] in {"yes", "no", "differs"}
        assert 1 <= int(row["repositories"]) <= len(REPOS)
        assert (row["framework"], row["name"]) not in seen
        seen.add((row["framework"], row["name"]))
    expected = {(fw, n) for e in NAMES.values() for fw in census.FRAMEWORKS for n in e[fw]}
    assert seen == expected


def _coverage_section() -> str:
    text = (ROOT / "docs" / "compatibility.md").read_text()
    match = re.search(r"^## Coverage\n(.*?)(?=^## )", text, re.M | re.S)
    assert match, "docs/compatibility.md has a '## Coverage' section"
    return match.group(1)


def test_compatibility_page_states_the_tables_coverage():
    section = _coverage_section()
    summary = (CENSUS_DIR / "summary.md").read_text()
    coverage_rows = [line for line in summary.splitlines() if line.endswith(" % |")]
    assert len(coverage_rows) == len(census.FRAMEWORKS)
    for line in coverage_rows:
        assert line in section, f"docs/compatibility.md should show: {line}"
    assert f"{len(REPOS)} public" in section


def test_compatibility_page_missing_names_match_the_table():
    rows = {r["name"]: r for r in csv.DictReader((CENSUS_DIR / "table.csv").open())}
    quoted = re.findall(r"`((?:tf|torch|Tensor)\.[\w.]+)` \((\d+)\)", _coverage_section())
    assert len(quoted) >= 20
    for name, count in quoted:
        assert rows[name]["kernelgraph"] == "no", f"{name} is no longer missing"
        assert rows[name]["repositories"] == count, name


# The static resolution itself, on small programs written the way tutorials write them.

def _uses(source: str, path: str = "x.py"):
    trees, skipped = census.parse_trees(path, source)
    assert skipped == 0
    return census.file_uses(trees)


def test_aliases_of_both_frameworks_resolve_to_full_names():
    tf, torch, methods = _uses(
        "import tensorflow.compat.v1 as tf\n"
        "import torch.nn as nn\nimport torch.nn.functional as F\n"
        "from torch import optim\nfrom torch.utils.data import DataLoader\n"
        "x = tf.placeholder(tf.float32)\nopt = tf.train.AdamOptimizer(0.1).minimize(x)\n"
        "net = nn.Linear(2, 3); y = F.relu(net(x)).view(-1)\n"
        "o = optim.SGD(net.parameters(), lr=0.1); y.backward()\n")
    assert {"tf.placeholder", "tf.float32", "tf.train.AdamOptimizer", "tf.compat"} <= tf
    assert {"torch.nn.Linear", "torch.nn.functional.relu", "torch.optim.SGD",
            "torch.utils.data.DataLoader"} <= torch
    assert {"view", "backward", "parameters"} <= methods


def test_tf2_code_and_module_receivers_are_left_out():
    tf, _, _ = _uses("import tensorflow as tf\nm = tf.keras.Sequential()\n")
    assert tf == set(), "a file without TF1 graph-mode names is not TF1 code"
    tf, _, _ = _uses("import tensorflow as tf\ns = tf.Session()\n")
    assert tf == {"tf", "tf.Session"}
    _, _, methods = _uses("import torch\nimport numpy as np\na = np.zeros(3)\n")
    assert "zeros" not in methods


def test_notebook_cells_magics_and_python2():
    nb = {"cells": [
        {"cell_type": "code", "source": ["%matplotlib inline\n", "import torch\n"]},
        {"cell_type": "code", "source": "!pip install x\nx = torch.ones(2)\n"},
        {"cell_type": "markdown", "source": "torch.never"},
        {"cell_type": "code", "source": "y = (x.sum()\n     % 2)\n"},  # % continues a line
        {"cell_type": "code", "source": "model = # TODO\n"},  # an exercise: skipped
    ]}
    trees, skipped = census.parse_trees("a.ipynb", json.dumps(nb))
    assert skipped == 1 and len(trees) == 3
    _, torch, methods = census.file_uses(trees)
    assert torch == {"torch", "torch.ones"} and "sum" in methods
    trees, skipped = census.parse_trees("old.py", "import tensorflow as tf\nprint tf.Session\n")
    assert skipped == 0 and isinstance(trees[0].body[1].value, ast.Call)


def test_status_is_looked_up_on_kernelgraph():
    assert census.kernelgraph_status("tf1", "tf.Session") == "yes"
    assert census.kernelgraph_status("torch", "torch.nn.functional.relu") == "yes"
    assert census.kernelgraph_status("tensor", "Tensor.backward") == "yes"
    assert census.kernelgraph_status("tf1", "tf.no_such_name") == "no"


def test_names_once_marked_differs_now_agree_with_the_recorded_framework():
    """``torch.gather`` was marked ``differs`` (kernelgraph's gather was TF's): it is
    PyTorch's now, so the census counts it, and it gives real PyTorch's recorded result. A
    name marked ``differs`` again must come with a recorded case in differs.json."""
    import kernelgraph as kg

    recorded = json.loads((CENSUS_DIR / "differs.json").read_text())
    assert census.DIFFERS == {}
    case = recorded["torch.gather"]
    assert census.kernelgraph_status("torch", "torch.gather") == "yes"
    got = kg.gather(kg.tensor(case["input"]), case["dim"], kg.tensor(case["index"])).tolist()
    assert got == case["result"]
    import kernelgraph.compat.v1 as tf  # TF1's face keeps TF's gather(params, indices, axis)

    with tf.Session() as sess:
        rows = sess.run(tf.gather(tf.constant(case["input"]), tf.constant([1, 0])))
    assert rows.tolist() == [case["input"][1], case["input"][0]]


def test_refused_names_count_as_missing_and_do_refuse():
    import kernelgraph.compat.v1 as tf

    assert census.kernelgraph_status("tf1", "tf.enable_eager_execution") == "no"
    with pytest.raises(NotImplementedError, match="graph mode"):
        tf.enable_eager_execution()


@pytest.mark.parametrize("fw", census.FRAMEWORKS)
def test_coverage_is_weighted_by_repositories(fw):
    rows = [{"name": "a", "framework": fw, "repositories": 3, "kernelgraph": "yes"},
            {"name": "b", "framework": fw, "repositories": 1, "kernelgraph": "no"}]
    assert census.coverage(rows, fw) == (75.0, 2, 1)
