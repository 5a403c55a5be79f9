"""``kg.serialization`` (PyTorch's ``torch.serialization`` allow-list) against recorded
PyTorch: the case of tests/recorded/record_torch_serialization.py run on kernelgraph."""

from __future__ import annotations

import kernelgraph as kg
from tests.recorded.record_torch_serialization import Foo, case


def _sorted(entries):
    # PyTorch keeps the list in a set: its order is no part of the behaviour
    return sorted(entries, key=repr)


def test_allow_list_matches_pytorch(recorded):
    want = recorded("torch_serialization")["case"]
    got = case(kg, kg.serialization)
    assert set(got) == set(want)
    for key in want:
        if isinstance(want[key], list):
            assert _sorted(got[key]) == _sorted(want[key]), key
        else:
            assert got[key] == want[key], key


def test_the_allow_list_changes_no_load(tmp_path):
    path = tmp_path / "w.npz"
    kg.save({"w": kg.ones(3)}, path)
    plain = kg.load(path)["w"].tolist()
    with kg.serialization.safe_globals([Foo]):
        assert kg.load(path, weights_only=True)["w"].tolist() == plain == [1.0, 1.0, 1.0]
    assert kg.serialization.get_safe_globals() == []
