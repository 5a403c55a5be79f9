"""softplus, the worked example of docs/contributing.md, against the real frameworks.

Eager mode matches PyTorch's ``torch.nn.functional.softplus`` (beta 1, threshold 20) and
static mode TF1's ``tf.nn.softplus``, in value and gradient, on both devices, and both refuse
integers and bools as PyTorch does (recorded by tests/recorded/record_softplus.py). The op's
card checks (reference, finite differences, fusion, in-place) are in tests/test_op_cards.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.compat.v1 as tf

DEVICES = ["cpu", "cuda"]


def _close(got, want, dtype):
    tol = {"float32": dict(rtol=2e-7, atol=1e-30), "float64": dict(rtol=1e-15, atol=1e-300)}
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               equal_nan=True, **tol[dtype])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_eager_softplus_is_pytorchs(recorded, dtype, device):
    case = recorded("softplus")
    want = case["torch_cases"][dtype]
    x = kg.tensor(np.array(case["values"], dtype), requires_grad=True, device=device)
    y = kg.softplus(x)
    assert y.dtype == dtype and y.device == device
    y.backward(kg.ones_like(y))
    _close(y.to("cpu").detach().numpy(), want["out"], dtype)
    _close(x.grad.to("cpu").numpy(), want["grad"], dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_static_softplus_is_tf1s(recorded, dtype, device):
    case = recorded("softplus")
    want = case["tf1_cases"][dtype]
    graph = kg.Graph()
    with graph.as_default(), kg.device(device):
        x = tf.placeholder(dtype, [len(case["values"])])
        y = tf.nn.softplus(x)
        (g,) = tf.gradients(y, [x])
    with kg.Session(graph) as sess:
        out, grad = sess.run([y, g], {x: np.array(case["values"], dtype)})
    # One op serves both modes, with PyTorch's threshold (x itself past 20). TF1 switches at
    # a threshold of the dtype's (about 34 in float64), so between 20 and 34 float64 results
    # differ by log1p(exp(-x)) < 2.1e-9 (the op's docstring says so), and their gradients,
    # sigmoid(x) against 1, by as much; in float32 that is below a rounding.
    tol = {"float32": dict(rtol=1e-6, atol=1e-38), "float64": dict(rtol=2.1e-9, atol=1e-300)}
    np.testing.assert_allclose(out, want["out"], equal_nan=True, **tol[dtype])
    np.testing.assert_allclose(grad, want["grad"], equal_nan=True, **tol[dtype])


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_integers_and_bools_are_refused_in_pytorchs_words(recorded, dtype):
    refused = recorded("softplus")["refused"][dtype]
    with pytest.raises(kg.dtypes.DtypeError) as info:
        kg.softplus(kg.tensor(np.array([1, 0], dtype)))
    assert refused["message"] in str(info.value)
    graph = kg.Graph()
    with graph.as_default(), pytest.raises(kg.dtypes.DtypeError) as info:
        kg.softplus(kg.placeholder(dtype, [2]))
    assert refused["message"] in str(info.value)


def test_softplus_fuses_with_its_neighbours_in_a_static_plan():
    graph = kg.Graph()
    with graph.as_default():
        x = kg.placeholder(kg.float32, [3])
        y = kg.softplus(x * 2.0) - 1.0
    feed = {x: np.array([-30.0, 0.5, 40.0], np.float32)}
    with kg.Session(graph) as sess:
        fused = [n for n in sess.explain(y, feed).after if n.op.members is not None]
        got = sess.run(y, feed)
    assert fused and any("softplus" in m for m in fused[0].op.members)
    with kg.Session(graph, optimize=False) as sess:
        np.testing.assert_array_equal(got, sess.run(y, feed))
