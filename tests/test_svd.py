"""PyTorch's ``torch.svd`` / ``Tensor.svd`` (the svd cards of kernelgraph/ops/matrix.py),
``torch.eig``'s removal error and ``torch.ops.profiler._record_function_enter`` /
``_record_function_exit``, against tests/recorded/torch_svd.json
(tests/recorded/record_torch_svd.py). The card checks (eager, static, finite differences,
CUDA) are tests/test_op_cards.py's; here are PyTorch's values and gradients. Singular vectors
are signed by the solver, so U and V are compared through ``U diag(S) V^T``, ``|U|`` and
``|V|``, and the recorded gradient is of a loss that does not depend on their signs."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.compat import v1 as tf

CASES = ("tall", "wide", "square", "batch")


def _abs_loss(u, s, v, case):
    """The recorded loss: S, U U^T, V V^T, |U| and |V| weighted (signs cancel in each)."""
    w = {k: kg.tensor(np.array(case[k])) for k in ("w_u", "w_s", "w_v", "w_uu", "w_vv")}
    return ((s * w["w_s"]).sum() + ((u @ u.mT) * w["w_uu"]).sum()
            + ((v @ v.mT) * w["w_vv"]).sum() + (kg.abs(u) * w["w_u"]).sum()
            + (kg.abs(v) * w["w_v"]).sum())


@pytest.mark.parametrize("name", CASES)
def test_svd_matches_pytorch(recorded, name):
    case = recorded("torch_svd")["cases"][name]
    a = np.array(case["a"])
    x = kg.tensor(a, requires_grad=True)
    u, s, v = kg.svd(x)
    np.testing.assert_allclose(s.detach().numpy(), case["s"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.abs(u.detach().numpy()), np.abs(case["u"]), atol=1e-12)
    np.testing.assert_allclose(np.abs(v.detach().numpy()), np.abs(case["v"]), atol=1e-12)
    rebuilt = (u * s.unsqueeze(-2)) @ v.mT
    np.testing.assert_allclose(rebuilt.detach().numpy(), a, atol=1e-12)
    assert case["grad_fn"] == "LinalgSvdBackward0"
    assert repr(u.grad_fn).startswith(f"<{case['grad_fn']} object at ")
    _abs_loss(u, s, v, case).backward()
    np.testing.assert_allclose(x.grad.numpy(), case["grad"], rtol=1e-9, atol=1e-10)


def test_svd_in_static_mode(recorded):
    case = recorded("torch_svd")["cases"]["tall"]
    a = np.array(case["a"])
    with kg.Graph().as_default():
        x = tf.placeholder(tf.float64, (4, 3))
        u, s, v = kg.svd(x)
        grad = tf.gradients(tf.reduce_sum(s * np.array(case["w_s"])), [x])[0]
        with tf.Session() as sess:
            got_u, got_s, got_v, got_grad = sess.run([u, s, v, grad], {x: a})
    np.testing.assert_allclose(got_s, case["s"], rtol=1e-12)
    np.testing.assert_allclose((got_u * got_s) @ got_v.T, a, atol=1e-12)
    # d (S . w) / dA = U diag(w) V^T
    np.testing.assert_allclose(got_grad, (got_u * np.array(case["w_s"])) @ got_v.T, atol=1e-12)


def test_svd_method_float32(recorded):
    rec = recorded("torch_svd")["method"]
    out = kg.tensor(np.array(rec["a"], np.float32)).svd()
    assert rec["dtypes"] == ["torch.float32"] * 3
    assert [t.dtype for t in out] == [kg.float32] * 3
    assert [list(t.shape) for t in out] == rec["shapes"]
    assert out.U is out[0] and out.S is out[1] and out.V is out[2]
    assert repr(out).startswith("torch.return_types.svd(\nU=tensor(")


def test_svd_without_uv_gives_zeros(recorded):
    rec = recorded("torch_svd")["no_uv"]
    u, s, v = kg.svd(kg.tensor(np.array(rec["a"])), compute_uv=False)
    np.testing.assert_array_equal(u.numpy(), rec["u"])
    np.testing.assert_array_equal(v.numpy(), rec["v"])
    np.testing.assert_allclose(s.numpy(), rec["s"], rtol=1e-12)


def test_svd_bad_input():
    with pytest.raises(NotImplementedError, match="some=True"):
        kg.svd(kg.ones(3, 2, dtype=kg.float64), some=False)
    assert [tuple(t.shape) for t in kg.svd(kg.ones(2, 2), some=False)] == [(2, 2), (2,), (2, 2)]
    with kg.Graph().as_default():  # an open static dimension may be square: decided at run
        u, s, vh = kg.linalg.svd(tf.placeholder(tf.float64, (None, 3)))
        assert tuple(vh.shape) == (None, 3)  # k = min(m, 3) is open too
    with pytest.raises(TypeError, match="float32 or float64"):
        kg.svd(kg.tensor([[1, 2], [3, 4]]))
    with pytest.raises(kg.errors.ShapeError, match=r"\[\.\.\., m, n\]"):
        kg.svd(kg.ones(3))


def test_eig_raises_pytorchs_removal_error(recorded):
    rec = recorded("torch_svd")["eig"]
    assert rec["type"] == "RuntimeError"
    with pytest.raises(RuntimeError) as err:
        kg.eig(kg.eye(2))
    assert str(err.value) == rec["message"]


def test_record_function_enter_and_exit_record_a_range(recorded):
    rec = recorded("torch_svd")["profiler"]
    with kg.profiler.profile() as prof:
        handle = kg.ops.profiler._record_function_enter("my_range")
        kg.ones(3) + 1
        kg.ops.profiler._record_function_exit(handle)
    counts = {e.key: e.count for e in prof.key_averages()}
    assert ("my_range" in counts) == rec["names_has_range"]
    assert counts["my_range"] == rec["count"]
    with pytest.raises(TypeError, match="handle"):
        kg.ops.profiler._record_function_exit("my_range")


def test_linalg_svd_and_svdvals_match_pytorch(recorded):
    rec = recorded("torch_svd")["linalg"]
    x = kg.tensor(np.array(rec["tall"]), requires_grad=True)
    u, s, vh = kg.linalg.svd(x, full_matrices=False)
    np.testing.assert_allclose(s.detach().numpy(), rec["s"], rtol=1e-12)
    np.testing.assert_allclose(np.abs(u.detach().numpy()), np.abs(rec["u"]), atol=1e-12)
    np.testing.assert_allclose(np.abs(vh.detach().numpy()), np.abs(rec["vh"]), atol=1e-12)
    np.testing.assert_allclose(((u * s.unsqueeze(-2)) @ vh).detach().numpy(), rec["tall"],
                               atol=1e-12)
    assert repr(u.grad_fn).startswith(f"<{rec['grad_fn']} object at ")  # (Vh: V transposed)
    (s * kg.tensor(np.array(rec["w_s"]))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), rec["grad"], rtol=1e-10, atol=1e-12)
    vals = kg.linalg.svdvals(x)
    np.testing.assert_allclose(vals.detach().numpy(), rec["svdvals"], rtol=1e-12)
    assert repr(vals.grad_fn).startswith(f"<{rec['svdvals_grad_fn']} object at ")
    out = kg.linalg.svd(kg.tensor(np.array(rec["square"])))  # full_matrices=True, square
    assert rec["fields"] == ["U", "S", "Vh"]
    assert out.U is out[0] and out.S is out[1] and out.Vh is out[2] and not hasattr(out, "V")
    np.testing.assert_allclose(out.S.numpy(), rec["square_s"], rtol=1e-12)
    np.testing.assert_allclose(np.abs(out.Vh.numpy()), np.abs(rec["square_vh"]), atol=1e-12)
    np.testing.assert_allclose(np.abs(out.U.numpy()), np.abs(rec["square_u"]), atol=1e-12)
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        kg.linalg.svd(x)


@pytest.mark.skipif(not kg.cuda.is_available(), reason="no CUDA (nor numba's simulator)")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cuda_jacobi_gives_the_cpus_decomposition(recorded, dtype):
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for name in CASES:
        a = np.array(recorded("torch_svd")["cases"][name]["a"], dtype)
        on_cpu = kg.svd(kg.tensor(a))
        on_gpu = kg.svd(kg.tensor(a, device="cuda"))
        for c, g in zip(on_cpu, on_gpu):
            assert g.device.type == "cuda" and g.dtype == c.dtype
            np.testing.assert_allclose(g.cpu().numpy(), c.numpy(), atol=tol, rtol=tol)
