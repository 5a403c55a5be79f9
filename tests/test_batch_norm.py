"""Batch normalisation's fused ops (kernelgraph/ops/batch_norm.py) behind nn.BatchNorm1d/2d:
PyTorch's recorded outputs, running statistics and gradients (tests/recorded/batchnorm.json),
finite differences of the module (first and second derivatives), both modes, and the errors.
The op cards themselves (reference, finite differences, CUDA) are checked in
tests/test_op_cards.py."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph import nn
from kernelgraph.kernels import batch_norm as K
from kernelgraph.ops import batch_norm as B
from tests.test_ops import FD_TOL, finite_difference_grad

CASES = ["bn1d_nc", "bn1d_ncl", "bn2d", "bn2d_momentum_none", "bn2d_affine_false",
         "bn2d_no_running", "bn2d_eval", "bn1d_eval", "bn2d_float64"]


def _close(got, want, dtype, what):
    tol = {"rtol": 1e-12, "atol": 1e-12} if dtype == "float64" else {"rtol": 2e-5, "atol": 2e-5}
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               err_msg=what, **tol)


@pytest.mark.parametrize("name", CASES)
def test_matches_recorded_torch(name, recorded):
    case = recorded("batchnorm")["cases"][name]
    assert name in recorded("batchnorm")["cases"] and len(CASES) == len(
        recorded("batchnorm")["cases"])
    dtype = case["dtype"]
    bn = getattr(nn, case["module"])(len(case["steps"][0]["x"][0]), dtype=getattr(kg, dtype),
                                     **case["kwargs"])
    if bn.affine:
        bn.weight.data = kg.tensor(np.array(case["weight"], dtype))
        bn.bias.data = kg.tensor(np.array(case["bias"], dtype))
    elif dtype == "float64":
        pytest.fail("the float64 case has parameters")
    for k, step in enumerate(case["steps"]):
        if case["mode"] == "eval" and k == 1:
            bn.eval()
        x = kg.tensor(np.array(step["x"], dtype), requires_grad=True)
        y = bn(x)
        assert step["grad_fn"] == "NativeBatchNormBackward0"
        assert repr(y.grad_fn).startswith(f"<{step['grad_fn']} ")
        y.backward(kg.tensor(np.array(step["g"], dtype)))
        where = f"{name} step {k}"
        assert y.dtype == np.dtype(dtype)
        _close(y.detach().numpy(), step["y"], dtype, f"{where}: output")
        _close(x.grad.numpy(), step["dx"], dtype, f"{where}: x's gradient")
        if bn.affine:
            _close(bn.weight.grad.numpy(), step["dweight"], dtype, f"{where}: weight's gradient")
            _close(bn.bias.grad.numpy(), step["dbias"], dtype, f"{where}: bias's gradient")
            bn.weight.grad = bn.bias.grad = None
        if bn.track_running_stats:
            _close(bn.running_mean.numpy(), step["running_mean"], dtype, f"{where}: mean")
            _close(bn.running_var.numpy(), step["running_var"], dtype, f"{where}: var")
            assert int(bn.num_batches_tracked.item()) == step["num_batches_tracked"]


def test_statistics_summed_in_float64():
    """A float32 batch whose mean is large against its spread: float32 sums would lose the
    variance; the kernel's float64 sums give the float64 reference rounded."""
    x = (np.random.default_rng(1).normal(size=(64, 2, 32)) + 3000.0).astype(np.float32)
    got = B.batch_norm_stats(x, eps=1e-5)
    x64 = x.astype(np.float64)
    var = x64.var(axis=(0, 2))
    np.testing.assert_array_equal(got[0], x64.mean(axis=(0, 2)).astype(np.float32))
    np.testing.assert_allclose(got[1], var, rtol=1e-6)
    np.testing.assert_allclose(got[2], 1 / np.sqrt(var + 1e-5), rtol=1e-6)


def _module(x0, w0, b0, training=True):
    bn = nn.BatchNorm2d(x0.shape[1], dtype=kg.float64)
    bn.weight.data, bn.bias.data = kg.tensor(w0), kg.tensor(b0)
    if not training:
        bn.running_mean.data = kg.tensor(np.array([0.3, -0.2]))
        bn.running_var.data = kg.tensor(np.array([1.5, 0.7]))
        bn.eval()
    return bn


_r = np.random.default_rng(7)
X0, G0 = _r.normal(size=(3, 2, 2, 3)) * 1.5 + 0.5, _r.normal(size=(3, 2, 2, 3))
W0, B0 = _r.uniform(0.5, 1.5, 2), _r.uniform(-0.5, 0.5, 2)


def _loss_np(x, w, b, training):
    bn = _module(x, w, b, training)
    with kg.no_grad():
        return float((bn(kg.tensor(x)).numpy() * G0).sum())


@pytest.mark.parametrize("training", [True, False])
def test_gradients_match_finite_differences(training):
    bn = _module(X0, W0, B0, training)
    x = kg.tensor(X0, requires_grad=True)
    (bn(x) * kg.tensor(G0)).sum().backward()
    args = [X0, W0, B0]
    for i, got in enumerate((x.grad, bn.weight.grad, bn.bias.grad)):
        want = finite_difference_grad(lambda *a: _loss_np(*a, training), args, i)
        np.testing.assert_allclose(got.numpy(), want, **FD_TOL)


@pytest.mark.parametrize("training", [True, False])
def test_second_derivatives_match_finite_differences(training):
    """create_graph=True records the backward as elementwise and reduce ops: the gradient's
    own gradient (of |dx|**2 + dweight) matches finite differences of the first gradients."""
    def first(x0, w0):
        bn = _module(x0, w0, B0, training)
        x = kg.tensor(x0, requires_grad=True)
        dx, dw = kg.autograd.grad((bn(x) * kg.tensor(G0)).sum(), [x, bn.weight],
                                  create_graph=True)
        return x, bn, (dx * dx).sum() + (dw * dw).sum()

    x, bn, total = first(X0, W0)
    total.backward()

    def value(x0, w0):
        return float(first(x0, w0)[2].detach().numpy())

    for i, got in enumerate((x.grad, bn.weight.grad)):
        want = finite_difference_grad(value, [X0, W0], i)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("training", [True, False])
def test_static_mode_gives_eager_bits(training):
    """In a graph (running statistics or none tracked) the same ops give the same bits,
    forward and gradients."""
    bn = _module(X0, W0, B0, training)
    if training:
        bn = nn.BatchNorm2d(2, dtype=kg.float64, track_running_stats=False)
        bn.weight.data, bn.bias.data = kg.tensor(W0), kg.tensor(B0)
    x = kg.tensor(X0, requires_grad=True)
    y = bn(x)
    (y * kg.tensor(G0)).sum().backward()
    with kg.Graph().as_default() as g:
        xp = kg.placeholder(kg.float64, shape=X0.shape)
        yp = bn(xp)
        assert "batch_norm" in {n.op.name for n in g.nodes}
        dxp = kg.gradients(kg.sum(yp * kg.constant(G0)), [xp])[0]
        init = kg.global_variables_initializer()
    with kg.Session(g) as sess:
        sess.run(init)
        yv, dxv = sess.run([yp, dxp], {xp: X0})
    np.testing.assert_array_equal(yv, y.detach().numpy())
    np.testing.assert_array_equal(dxv, x.grad.numpy())


def test_second_gradients_in_a_graph_are_refused():
    with kg.Graph().as_default():
        xp = kg.placeholder(kg.float64, shape=X0.shape)
        y = B.batch_norm(xp, B.batch_norm_stats(xp), kg.constant(W0), kg.constant(B0))
        dx = kg.gradients(kg.sum(y * kg.constant(G0)), [xp])[0]
        with pytest.raises(NotImplementedError, match="batch_norm_grad_input: the gradient"):
            kg.gradients(kg.sum(dx * dx), [xp])


def test_mixed_dtypes_keep_the_elementwise_path():
    """A float64 input to float32 parameters (which the fused kernels do not take) still
    normalises, as before, with the promoted elementwise ops."""
    bn = nn.BatchNorm1d(2)
    y = bn(kg.tensor(np.array([[1.0, 2.0], [3.0, 6.0]])))
    assert y.dtype == kg.float64 and not repr(y.grad_fn).startswith("<NativeBatchNorm")
    np.testing.assert_allclose(y.detach().numpy(), [[-1.0, -1.0], [1.0, 1.0]], rtol=1e-4)


def test_errors_name_what_was_expected():
    x = np.ones((2, 3, 4))
    with pytest.raises(kg.errors.ShapeError, match=r"stats of shape \(3, 3\)"):
        B.batch_norm(x, np.ones((3, 2)), np.ones(3), np.zeros(3))
    with pytest.raises(kg.errors.ShapeError, match=r"weight of shape \(3,\)"):
        B.batch_norm(x, np.ones((3, 3)), np.ones(4), np.zeros(3))
    with pytest.raises(kg.errors.ShapeError, match="at least 2 dims"):
        B.batch_norm_stats(np.ones(3))
    with pytest.raises(TypeError, match="floating inputs of one dtype"):
        B.batch_norm(x, np.ones((3, 3), np.float32), np.ones(3), np.zeros(3))
    with pytest.raises(TypeError, match="floating"):
        B.batch_norm_stats(np.ones((2, 3), np.int64))
    with pytest.raises(kg.errors.ShapeError, match="one shape"):
        B.batch_norm_grad_sums(np.ones((2, 3, 5)), x, np.ones((3, 3)))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm2d(3)(kg.ones(1, 3, 1, 1))


def test_kernels_take_strided_inputs():
    """A transposed (non-contiguous) input gives the contiguous copy's numbers."""
    x = np.random.default_rng(3).normal(size=(5, 4, 3)).transpose(2, 1, 0)
    s = B.batch_norm_stats(x)
    np.testing.assert_array_equal(s, B.batch_norm_stats(np.ascontiguousarray(x)))
    np.testing.assert_allclose(B.batch_norm(x, s, np.ones(4), np.zeros(4)),
                               K.reference(x, s, np.ones(4), np.zeros(4)), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.skipif(not kg.cuda.is_available(), reason="no CUDA")
def test_cuda_sums_give_the_cpu_bits():
    """The CUDA kernels sum in the CPU loops' two levels and order: the same statistics and
    backward sums, bit for bit (a module step on the GPU then matches the CPU's closely)."""
    r = np.random.default_rng(5)
    x, g = (r.normal(size=(3, 2, 2, 3)) + 4.0).astype(np.float32), r.normal(size=(3, 2, 2, 3))
    g = g.astype(np.float32)
    s = B.batch_norm_stats(x)
    on = [kg.tensor(a).to("cuda") for a in (x, g, s)]
    np.testing.assert_array_equal(B.batch_norm_stats(on[0]).cpu().numpy(), s)
    np.testing.assert_array_equal(B.batch_norm_grad_sums(on[1], on[0], on[2]).cpu().numpy(),
                                  B.batch_norm_grad_sums(g, x, s))
    bn = nn.BatchNorm2d(2)
    xt = kg.tensor(x, requires_grad=True)
    bn(xt).backward(kg.tensor(g))
    bn_gpu = nn.BatchNorm2d(2).to("cuda")
    xg = kg.tensor(x).to("cuda").requires_grad_(True)
    bn_gpu(xg).backward(kg.tensor(g).to("cuda"))
    np.testing.assert_allclose(xg.grad.cpu().numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(bn_gpu.running_var.cpu().numpy(), bn.running_var.numpy())


@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
def test_tf1_fused_batch_norm_matches_recorded_tf(layout, recorded):
    """tf.nn.fused_batch_norm and tf.layers.batch_normalization (training, 4-D: TF's fused
    kernel) give TF's outputs, batch statistics (the variance unbiased), gradients and
    moving averages, and run on the fused ops."""
    import kernelgraph.compat.v1 as tf

    case = recorded("batchnorm")["tf1"][layout]
    x0, g0 = np.array(case["x"], np.float32), np.array(case["g"], np.float32)
    axis = 3 if case["data_format"] == "NHWC" else 1
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, x0.shape)
        y, mean, var = tf.nn.fused_batch_norm(x, np.array(case["scale"], np.float32),
                                              np.array(case["offset"], np.float32),
                                              epsilon=1e-3, data_format=case["data_format"])
        (dx,) = tf.gradients(y, [x], grad_ys=[tf.constant(g0)])
        ly = tf.layers.batch_normalization(x, axis=axis, training=True, momentum=0.9)
        lgrads = tf.gradients(ly, [x] + tf.trainable_variables(), grad_ys=[tf.constant(g0)])
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        moving = [v for v in tf.global_variables() if "moving" in v.name]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run([y, mean, var, dx, ly, lgrads], {x: x0})
            sess.run(updates, {x: x0})
            got_moving = sess.run(moving)
    names = [n.op.name for n in graph.nodes]
    assert names.count("batch_norm") == 2 and names.count("batch_norm_grad_input") == 2
    want = [case["y"], case["batch_mean"], case["batch_var"], case["dx"], case["layer_y"]]
    for k, (a, b) in enumerate(zip(got[:5], want)):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5, err_msg=f"value {k}")
    for a, b in zip(got[5], case["layer_grads"]):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-4)
    np.testing.assert_allclose(got_moving[0], case["moving_mean"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_moving[1], case["moving_variance"], rtol=1e-5, atol=1e-6)


def test_tf1_fused_batch_norm_inference_and_errors():
    import kernelgraph.compat.v1 as tf

    x0 = np.random.default_rng(4).normal(size=(2, 3, 2, 2)).astype(np.float32)
    m, v = np.array([0.1, -0.2, 0.3], np.float32), np.array([1.5, 0.5, 2.0], np.float32)
    s, o = np.array([1.0, 2.0, 0.5], np.float32), np.array([0.0, 0.1, -0.1], np.float32)
    with tf.Graph().as_default():
        y, _, _ = tf.nn.fused_batch_norm(tf.constant(x0), s, o, mean=m, variance=v,
                                         data_format="NCHW", is_training=False)
        with tf.Session() as sess:
            got = sess.run(y)
        with pytest.raises(ValueError, match="both mean and variance"):
            tf.nn.fused_batch_norm(tf.constant(x0), s, o, is_training=False)
        with pytest.raises(ValueError, match="4-D input"):
            tf.nn.fused_batch_norm(tf.constant(x0[0]), s, o)
    view = (1, 3, 1, 1)
    want = (x0 - m.reshape(view)) / np.sqrt(v.reshape(view) + 1e-3) * s.reshape(view) \
        + o.reshape(view)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_rows_of_channels_give_the_channel_loops_bits():
    """(N, C) inputs (and NHWC ones as rows) run loops over rows in memory order; they sum in
    the channel loops' order, so both give the same bits."""
    r = np.random.default_rng(6)
    x, g = (r.normal(size=(9, 3)) + 5.0).astype(np.float32), r.normal(size=(9, 3))
    g, w, b = g.astype(np.float32), r.uniform(size=3).astype(np.float32), np.ones(3, np.float32)
    x3, g3 = x[:, :, None], g[:, :, None]
    s, s3 = K.stats(x, 1e-5), np.empty((3, 3))
    K._stats.serial(x3, 1e-5, s3)
    np.testing.assert_array_equal(s, s3.astype(np.float32))
    sums, sums3 = K.grad_sums(g, x, s), np.empty((2, 3))
    K._grad_sums.serial(g3, x3, s, sums3)
    np.testing.assert_array_equal(sums, sums3.astype(np.float32))
    for training in (True, False):
        dx3 = np.empty_like(x3)
        K._grad_input.serial(g3, x3, s, w, sums, training, dx3)
        np.testing.assert_array_equal(K.grad_input(g, x, s, w, sums, training), dx3[:, :, 0])
    y3 = np.empty_like(x3)
    K._apply.serial(x3, s, w, b, y3)
    np.testing.assert_array_equal(K.apply(x, s, w, b), y3[:, :, 0])
    np.testing.assert_allclose(K.apply(x, s, w, b), K.reference(x, s, w, b), rtol=1e-5)


@pytest.mark.parametrize("shape", [(0, 3), (2, 3, 0), (0, 3, 4)])
def test_empty_inputs_give_empty_outputs_and_gradients(shape):
    x = kg.tensor(np.ones(shape, np.float32), requires_grad=True)
    y = nn.BatchNorm1d(3, track_running_stats=False)(x)
    y.sum().backward()
    assert y.shape == x.grad.shape == shape


def test_unknown_channels_in_a_graph_keep_the_elementwise_path():
    """A placeholder whose channels are unknown: no per-channel ones to build, so the
    elementwise ops normalise it, as before."""
    x0 = np.random.default_rng(8).normal(size=(4, 2, 3, 3)).astype(np.float32)
    with kg.Graph().as_default() as g:
        x = kg.placeholder(kg.float32, shape=(None, None, 3, 3))
        y = nn.BatchNorm2d(2, affine=False, track_running_stats=False)(x)
    assert "batch_norm" not in {n.op.name for n in g.nodes}
    with kg.Session(g) as sess:
        got = sess.run(y, {x: x0})
    want = K.reference(x0, None, np.ones(2), np.zeros(2))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
