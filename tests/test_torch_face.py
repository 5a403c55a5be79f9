"""What PyTorch's tensors mean to tutorial code, as kernelgraph's eager tensors give it:
``t.data`` a tensor sharing storage that autograd does not watch, ``.grad`` accumulated in
place (``g = w.grad`` sees later sums), a checkpoint loaded between forward and backward
refused by the version counter, and backward from two threads into one leaf losing nothing.
Compared with real PyTorch's recorded outputs (tests/recorded/record_torch_face.py)."""

import importlib.util
import math
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import kernelgraph as kg

_spec = importlib.util.spec_from_file_location(
    "record_torch_face", Path(__file__).parent / "recorded" / "record_torch_face.py")
R = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(R)


def same(want, got) -> bool:
    """Recorded ``want`` and kernelgraph's ``got`` agree (numbers within 1e-5 relative)."""
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(same(a, b) for a, b in zip(want, got))
    if isinstance(want, float) and isinstance(got, float | int) and not isinstance(got, bool):
        return math.isclose(want, got, rel_tol=1e-5, abs_tol=1e-7)
    return want == got


@pytest.mark.parametrize("name", list(R.CASES))
def test_as_pytorch(recorded, name):
    want = recorded("torch_face")["cases"][name]
    got = R.run(kg, name)
    if want[0] == "ok":
        assert got[0] == "ok", f"{name}: PyTorch computed {want[1]}, kernelgraph raised {got}"
        assert same(want[1], got[1]), f"{name}: PyTorch {want[1]}, kernelgraph {got[1]}"
    else:
        assert got[0] == want[0], f"{name}: PyTorch raised {want}, kernelgraph gave {got}"
        # (the version error names PyTorch's own tensor types: compared up to them)
        assert got[1].split(":")[0] == want[1].split(":")[0], (name, got[1], want[1])


def test_backward_from_two_threads_into_one_leaf_loses_nothing():
    # Threads switched often, so that two sums into .grad overlap (without the lock about a
    # third of them were lost).
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    w = kg.tensor(np.zeros(1000), requires_grad=True)
    steps = 900

    def work():
        for _ in range(steps):
            (w * 1.0).sum().backward()

    threads = [threading.Thread(target=work) for _ in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    np.testing.assert_array_equal(w.grad.numpy(), np.full(1000, 2.0 * steps))


def test_checkpoint_loaded_into_a_module_between_forward_and_backward(tmp_path):
    model = kg.nn.Sequential(kg.nn.Linear(3, 4), kg.nn.Tanh(), kg.nn.Linear(4, 1))
    kg.save(model, tmp_path / "m.kgz")
    out = model(kg.ones(2, 3)).sum()
    kg.load(tmp_path / "m.kgz", into=model)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()
    model(kg.ones(2, 3)).sum().backward()  # a new forward pass is fine
    assert model[0].weight.grad is not None


def test_data_is_a_detached_alias_with_pytorchs_methods():
    w = kg.nn.Parameter(kg.tensor([1.0, 2.0]))
    d = w.data
    assert type(d) is kg.Tensor and not isinstance(d, kg.nn.Parameter)
    assert d.numpy().base is w.detach().numpy().base or d.numpy() is w.detach().numpy()
    w.data = kg.tensor([[5.0]], dtype=kg.float64)
    assert w.shape == (1, 1) and w.dtype == kg.float64 and w.requires_grad
