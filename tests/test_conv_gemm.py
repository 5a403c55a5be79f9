"""The CPU convolution as one GEMM over the batch (kernels/conv_gemm.py) and max pooling
with its picks kept from the forward (kernels/pool_index.py), against the NumPy references."""

from __future__ import annotations

import gc
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.kernels import conv as K
from kernelgraph.kernels import conv_gemm as G
from kernelgraph.kernels import pool_index as PI
from kernelgraph.kernels import records
from kernelgraph.kernels import reference as R
from kernelgraph.kernels import reference_grads as RG

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [  # x shape, w shape, stride, padding, dilation
    ((7, 3, 9, 8), (5, 3, 3, 3), (1, 1), (1, 1), (1, 1)),
    ((6, 2, 11, 10), (4, 2, 3, 2), (2, 3), (1, 0), (1, 1)),
    ((5, 3, 12, 9), (2, 3, 3, 3), (1, 2), (2, 1), (2, 3)),
    ((4, 1, 10, 10), (6, 1, 5, 5), (1, 1), (2, 2), (1, 1)),  # one input channel
    ((3, 4, 5, 5), (3, 4, 5, 5), (1, 1), (0, 0), (1, 1)),  # a 1x1 output
    ((2, 2, 4, 6), (3, 2, 2, 2), (3, 3), (1, 1), (1, 1)),  # stride past the kernel
    ((3, 2, 9, 8), (2, 2, 3, 3), (1, 1), (2, 2), (2, 2)),  # dilated, output as large as x
    ((2, 3, 6, 7), (4, 3, 3, 5), (1, 1), (0, 2), (1, 1)),  # as wide as x, fewer rows
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_conv_and_its_gradients_match_the_reference(case, dtype):
    xs, ws, stride, padding, dilation = case
    rng = np.random.default_rng(len(xs) + sum(ws))
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    attrs = dict(stride=stride, padding=padding, dilation=dilation)
    want = R.conv2d(x, w, **attrs)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(K.conv2d(x, w, stride, padding, dilation), want, **tol)
    g = rng.standard_normal(want.shape).astype(dtype)
    np.testing.assert_allclose(K.conv2d_backward_input(g, w, xs, stride, padding, dilation),
                               RG.conv2d_backward_input(g, w, x, **attrs), **tol)
    np.testing.assert_allclose(K.conv2d_backward_filter(x, g, ws, stride, padding, dilation),
                               RG.conv2d_backward_filter(x, g, w, **attrs), **tol)


def test_conv_reads_strided_views_and_leaves_no_alias_to_its_scratch():
    rng = np.random.default_rng(1)
    base = rng.standard_normal((4, 6, 9, 3)).astype(np.float32)
    x = base.transpose(0, 3, 1, 2)  # (4, 3, 6, 9), not contiguous
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    first = K.conv2d(x, w, (1, 1), (1, 1), (1, 1))
    kept = first.copy()
    K.conv2d(-x, w, (1, 1), (1, 1), (1, 1))  # the scratch buffer is reused here
    np.testing.assert_array_equal(first, kept)
    np.testing.assert_allclose(first, R.conv2d(np.ascontiguousarray(x), w, 1, 1), rtol=1e-5,
                               atol=1e-5)
    assert not np.shares_memory(first, G.scratch(first.size, first.dtype))


def test_scratch_is_reused_up_to_its_cap():
    a = G.scratch(1000, np.float32)
    assert np.shares_memory(a, G.scratch(500, np.float32))
    assert not np.shares_memory(a, G.scratch(500, np.float64))
    big = G.SCRATCH_MAX_BYTES // 4 + 1
    assert not np.shares_memory(G.scratch(big, np.float32), G.scratch(big, np.float32))


POOLS = [  # kernel, stride, padding
    ((2, 2), (2, 2), (0, 0)),
    ((2, 2), (1, 1), (0, 0)),  # the unrolled 2x2 window, overlapping
    ((3, 3), (1, 1), (1, 1)),  # overlapping windows: picks shared between windows
    ((3, 2), (2, 1), (1, 0)),
]


def _with_ties_and_nans(rng, shape, nans=True):
    x = rng.integers(0, 3, shape).astype(np.float32)  # many ties
    if nans:
        x.reshape(-1)[rng.choice(x.size, x.size // 9, replace=False)] = np.nan
    return x


@pytest.mark.parametrize("nans", [True, False], ids=["nans", "ties"])  # two kernels
@pytest.mark.parametrize("pool", POOLS)
def test_max_pool_picks_are_pytorchs_and_feed_the_backward(pool, nans):
    kernel, stride, padding = pool
    rng = np.random.default_rng(2)
    x = _with_ties_and_nans(rng, (3, 2, 7, 8), nans)
    attrs = dict(kernel_size=kernel, stride=stride, padding=padding)
    out, idx = PI.max_pool2d_indexed(x, K.pool2d_shape(x.shape, kernel, stride, padding),
                                     kernel, stride, padding)
    np.testing.assert_array_equal(out, R.max_pool2d(x, **attrs))
    g = rng.standard_normal(out.shape).astype(np.float32)
    np.testing.assert_allclose(PI.scatter(g, idx, x.shape), RG.max_pool2d_backward(g, x, **attrs),
                               rtol=1e-6, atol=1e-6)
    gx = rng.standard_normal(x.shape).astype(np.float32)
    np.testing.assert_array_equal(PI.gather(gx, idx), R.max_pool2d_select(gx, x, **attrs))


@pytest.mark.parametrize("pool", POOLS)
def test_eager_backward_reads_the_forward_picks(pool):
    kernel, stride, padding = pool
    rng = np.random.default_rng(3)
    xv = _with_ties_and_nans(rng, (2, 3, 8, 7))
    x = kg.tensor(xv, requires_grad=True)
    h = x * 1.0
    y = kg.max_pool2d(h, kernel, stride=stride, padding=padding)
    assert records.recorded(h.detach().numpy(), ("max_pool2d", kernel, stride, padding)) \
        is not None
    g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    (y * kg.tensor(g)).sum().backward()
    want = RG.max_pool2d_backward(g, xv, kernel, stride=stride, padding=padding)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6, atol=1e-6)


def test_second_derivative_through_the_recorded_picks():
    rng = np.random.default_rng(4)
    xv = rng.standard_normal((2, 2, 6, 6)).astype(np.float32)
    x = kg.tensor(xv, requires_grad=True)
    y = kg.max_pool2d(x * x, 2)
    (gx,) = kg.autograd.grad(y.sum(), x, create_graph=True)
    gx.sum().backward()  # d/dx sum(2 x at each pick) = 2 at each pick
    picks = RG.max_pool2d_backward(np.ones((2, 2, 3, 3), np.float32), xv * xv, 2)
    np.testing.assert_allclose(x.grad.numpy(), 2 * picks)


def test_records_hold_only_the_same_array_and_attributes():
    x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    K.max_pool2d(x, (2, 2), (2, 2), (0, 0))
    what = ("max_pool2d", (2, 2), (2, 2), (0, 0))
    assert records.recorded(x, what) is not None
    assert records.recorded(x, ("max_pool2d", (2, 2), (1, 1), (0, 0))) is None  # other attrs
    assert records.recorded(x.copy(), what) is None  # another array
    records.record(x, ("other",), 1)  # a second record of the same array keeps the first
    assert records.recorded(x, what) is not None and records.recorded(x, ("other",)) == 1
    key = id(x)
    del x
    gc.collect()
    assert key not in records._RECORDS  # forgotten with its array


def test_eager_filter_gradient_reads_the_forward_im2col():
    rng = np.random.default_rng(5)
    xv = rng.standard_normal((3, 2, 6, 5)).astype(np.float32)
    wv = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    x, w = kg.tensor(xv, requires_grad=True), kg.tensor(wv, requires_grad=True)
    y = kg.conv2d(x, w, padding=1, stride=(1, 2))
    what = ("im2col", (3, 3), (1, 2), (1, 1), (1, 1), False)  # False: NCHW
    cols = records.recorded(x.detach().numpy(), what)
    assert cols is not None and cols.shape == (2 * 9, 3 * 6 * 3)
    g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    (y * kg.tensor(g)).sum().backward()
    attrs = dict(stride=(1, 2), padding=1)
    np.testing.assert_allclose(w.grad.numpy(), RG.conv2d_backward_filter(xv, g, wv, **attrs),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), RG.conv2d_backward_input(g, wv, xv, **attrs),
                               rtol=1e-5, atol=1e-5)


def test_a_recorded_im2col_is_never_overwritten_while_its_input_lives():
    rng = np.random.default_rng(6)
    w = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    a = rng.standard_normal((2, 2, 5, 5)).astype(np.float32)
    K.conv2d(a, w, (1, 1), (1, 1), (1, 1))
    what = ("im2col", (3, 3), (1, 1), (1, 1), (1, 1), False)  # False: NCHW
    kept = records.recorded(a, what).copy()
    for _ in range(3):  # other inputs of the same size: other buffers
        K.conv2d(rng.standard_normal(a.shape).astype(np.float32), w, (1, 1), (1, 1), (1, 1))
    np.testing.assert_array_equal(records.recorded(a, what), kept)
    K.conv2d(a * 2, w, (1, 1), (1, 1), (1, 1))
    K.conv2d(a, w, (1, 1), (1, 1), (1, 1))  # a's own record is replaced by the same values
    np.testing.assert_array_equal(records.recorded(a, what), kept)


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="glibc's malloc thresholds")
def test_arrays_of_activation_size_reuse_heap_memory_once_conv_is_imported():
    # In a fresh process: importing the conv kernels lets glibc's malloc serve a 4 MB array
    # from memory already mapped, instead of new pages faulted in on every allocation.
    code = (
        "import resource, numpy as np\n"
        "import kernelgraph.kernels.conv_gemm\n"
        "a = np.ones(1 << 20, np.float32); del a\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "for _ in range(5):\n"
        "    a = np.ones(1 << 20, np.float32); del a\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n")
    faults = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True, env={**os.environ, "PYTHONPATH": ROOT}).stdout)
    assert faults < 100  # 5 x 1024 pages when each array is a fresh mapping


def test_static_backward_reads_only_what_its_own_run_recorded(monkeypatch):
    """A static backward op reuses the im2col matrix and the pool picks its run's forward
    recorded; a variable updated in place between runs must not be answered with what an
    earlier run recorded of its array."""
    rng = np.random.default_rng(7)
    v0 = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    graph = kg.Graph()
    with graph.as_default():
        v = kg.Variable(v0)
        y = kg.conv2d(v, kg.constant(w), padding=1)
        pooled = kg.max_pool2d(v, 2)
        gy = kg.placeholder(kg.float32, shape=(2, 4, 6, 6))
        gp = kg.placeholder(kg.float32, shape=(2, 3, 3, 3))
        both = kg.gradients([y, pooled], [v], grad_ys=[gy, gp])[0]
        wgrad = kg.ops.conv2d_backward_filter(v, gy, kg.constant(w), padding=1)
        bump = v.assign_add(kg.constant(rng.standard_normal(v0.shape).astype(np.float32)))
        init = kg.global_variables_initializer()
    g_y = rng.standard_normal((2, 4, 6, 6)).astype(np.float32)
    g_p = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    with kg.Session(graph) as sess:
        sess.run(init)
        fed = {gy: g_y, gp: g_p}
        scans = []  # im2col matrices built and pooling windows scanned
        for module, name in ((G, "im2col"), (PI, "max_pool2d_indexed")):
            real = getattr(module, name)
            monkeypatch.setattr(
                module, name, lambda *a, _r=real, _n=name, **k: (scans.append(_n), _r(*a, **k))[1])
        # forward and backward in one run: the backward ops read the forward's records
        together = sess.run([y, pooled, both, wgrad], feed_dict=fed)
        assert sorted(scans) == ["im2col", "max_pool2d_indexed"]
        np.testing.assert_allclose(together[3], RG.conv2d_backward_filter(v0, g_y, w, padding=1),
                                   rtol=1e-4, atol=1e-4)
        sess.run(bump)  # v's array changes in place
        v1 = sess.run(v)
        # the backward ops alone: the forward does not run, its records are an earlier run's
        scans.clear()
        alone = sess.run([both, wgrad], feed_dict=fed)
        assert sorted(scans) == ["im2col", "max_pool2d_indexed"]  # found afresh
    want = (RG.conv2d_backward_input(g_y, w, v1, padding=1)
            + RG.max_pool2d_backward(g_p, v1, 2))
    np.testing.assert_allclose(alone[0], want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(alone[1], RG.conv2d_backward_filter(v1, g_y, w, padding=1),
                               rtol=1e-4, atol=1e-4)
