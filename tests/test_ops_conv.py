"""Property tests for conv2d and pooling (kernelgraph/ops/conv.py), in both modes.

:func:`check_op` (from test_ops) checks each op against the NumPy reference, eager against
static bit for bit (with exact, partly known and unknown placeholder shapes), and float64
gradients against central finite differences. Shapes stay tiny and examples few: every
finite-difference element costs two reference convolutions.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelgraph as kg
from kernelgraph.errors import ShapeError
from kernelgraph.kernels import reference as R
from tests.test_ops import (
    F32,
    F64,
    FD_TOL,
    PLACEHOLDER_SHAPES,
    arrays,
    assert_same,
    check_op,
    finite_difference_grad,
)

FEW = settings(max_examples=6)
pair = st.integers(1, 2) | st.tuples(st.integers(1, 2), st.integers(1, 2))


def _as_pair(v):
    return (v, v) if isinstance(v, int) else v


@st.composite
def conv_cases(draw):
    """(x shape, w shape, stride, padding, dilation) with an output of at least 1x1."""
    n, c, o = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    kernel = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    stride, dilation = draw(pair), draw(pair)
    padding = draw(st.integers(0, 1) | st.tuples(st.integers(0, 2), st.integers(0, 1)))
    spatial = []
    for a in (0, 1):
        reach = _as_pair(dilation)[a] * (kernel[a] - 1) + 1 - 2 * _as_pair(padding)[a]
        spatial.append(draw(st.integers(max(1, reach), max(1, reach) + 3)))
    return (n, c, *spatial), (o, c, *kernel), stride, padding, dilation


@st.composite
def pool_cases(draw):
    """(x shape, kernel_size, stride or None, padding) with padding <= half the window."""
    kernel = draw(st.integers(1, 3) | st.tuples(st.integers(1, 3), st.integers(1, 3)))
    k = _as_pair(kernel)
    padding = draw(st.tuples(st.integers(0, k[0] // 2), st.integers(0, k[1] // 2)))
    stride = draw(st.none() | pair)
    hw = [draw(st.integers(max(1, k[a] - 2 * padding[a]), k[a] + 3)) for a in (0, 1)]
    return (draw(st.integers(1, 2)), draw(st.integers(1, 2)), *hw), kernel, stride, padding


# -- forward, gradients, eager == static -----------------------------------------------------
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype", [F32, F64])
@FEW
@given(case=conv_cases(), ph=PLACEHOLDER_SHAPES, data=st.data())
def test_conv2d(dtype, data_format, case, ph, data):
    xs, ws, stride, padding, dilation = case
    if data_format == "NHWC":  # TensorFlow's layout: x and the output (N, H, W, C)
        xs = (xs[0], xs[2], xs[3], xs[1])
    x = arrays(data.draw, "any", dtype, xs)
    w = arrays(data.draw, "any", dtype, ws)
    attrs = {"stride": stride, "padding": padding, "dilation": dilation,
             "data_format": data_format}
    check_op(lambda a, b: kg.conv2d(a, b, **attrs), lambda a, b: R.conv2d(a, b, **attrs),
             [x, w], diff=(0, 1), ph=ph)


@pytest.mark.parametrize("dtype", [F32, F64])
@FEW
@given(case=pool_cases(), ph=PLACEHOLDER_SHAPES, data=st.data())
def test_max_pool2d(dtype, case, ph, data):
    xs, kernel, stride, padding = case
    x = arrays(data.draw, "distinct", dtype, xs, unique=True)  # no ties: FD is exact
    check_op(lambda a: kg.max_pool2d(a, kernel, stride, padding),
             lambda a: R.max_pool2d(a, kernel, stride, padding), [x], diff=(0,), ph=ph)


@pytest.mark.parametrize("dtype", [F32, F64])
@FEW
@given(case=pool_cases(), ph=PLACEHOLDER_SHAPES, data=st.data())
def test_avg_pool2d(dtype, case, ph, data):
    xs, kernel, stride, padding = case
    x = arrays(data.draw, "any", dtype, xs)
    check_op(lambda a: kg.avg_pool2d(a, kernel_size=kernel, stride=stride, padding=padding),
             lambda a: R.avg_pool2d(a, kernel, stride, padding), [x], diff=(0,), ph=ph)


@pytest.mark.parametrize("dtype", [F32, F64])
@FEW
@given(shape=st.tuples(*[st.integers(1, 3)] * 4), ph=PLACEHOLDER_SHAPES, data=st.data())
def test_global_avg_pool2d(dtype, shape, ph, data):
    x = arrays(data.draw, "any", dtype, shape)
    check_op(kg.global_avg_pool2d, R.global_avg_pool2d, [x], diff=(0,), ph=ph)


def test_max_pool2d_gradient_goes_to_the_first_maximum():
    x = kg.tensor(np.ones((1, 1, 2, 2)), requires_grad=True)
    kg.max_pool2d(x, 2).sum().backward()
    assert x.grad.data.tolist() == [[[[1.0, 0.0], [0.0, 0.0]]]]


def test_conv2d_second_derivative_matches_finite_differences():
    """The backward ops are differentiable: d/dw of sum(dL/dx * v), in both modes."""
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 2, 5, 6)), rng.standard_normal((3, 2, 2, 3))
    attrs = {"stride": 2, "padding": (1, 0), "dilation": (1, 2)}
    u = rng.standard_normal(R.conv2d(x, w, **attrs).shape)
    v = rng.standard_normal(x.shape)

    def dx_dot_v(x_, w_):  # sum(v * d/dx sum(u * conv(x, w))), x_ unused: linear in x
        return float(np.sum(v * kg.ops.conv2d_backward_input(u, w_, x_, **attrs)))

    numeric = finite_difference_grad(dx_dot_v, [x, w], 1)

    xt, wt = kg.tensor(x, requires_grad=True), kg.tensor(w, requires_grad=True)
    graph = kg.Graph()
    with graph.as_default():
        xp, wp = kg.placeholder(kg.float64, shape=x.shape), kg.placeholder(kg.float64)
        (gx,) = kg.gradients(kg.sum(kg.conv2d(xp, wp, **attrs) * kg.constant(u)), [xp])
        (gw,) = kg.gradients(kg.sum(gx * kg.constant(v)), [wp])
    with kg.Session(graph) as sess:
        static = sess.run(gw, feed_dict={xp: x, wp: w})
    np.testing.assert_allclose(static, numeric, **FD_TOL)
    # eager: the same gradient rules run on arrays (backward() computes first derivatives)
    gx_eager = kg.ops.conv2d_backward_input(kg.tensor(u), wt, xt, **attrs)
    kg.sum(gx_eager * kg.tensor(v)).backward()
    assert_same(wt.grad._array, static, "eager vs static second derivative")


@pytest.mark.parametrize("dtype", [F32, F64])
@FEW
@given(case=pool_cases(), ph=PLACEHOLDER_SHAPES, data=st.data())
def test_max_pool2d_select(dtype, case, ph, data):
    """The transpose of max_pool2d_backward: g read at each window's first maximum."""
    xs, kernel, stride, padding = case
    x = arrays(data.draw, "distinct", dtype, xs, unique=True)
    g = arrays(data.draw, "any", dtype, xs)
    attrs = {"kernel_size": kernel, "stride": stride, "padding": padding}
    check_op(lambda a, b: kg.ops.max_pool2d_select(a, b, **attrs),
             lambda a, b: R.max_pool2d_select(a, b, kernel, stride, padding), [g, x],
             diff=(0,), ph=ph)


def test_max_pool2d_second_derivative_matches_finite_differences():
    """d/du of sum(v * d/dx sum(u * max_pool(x))) in both modes: max_pool2d_backward is
    linear in u, and its gradient reads v at the windows' maxima."""
    rng = np.random.default_rng(1)
    x = rng.permutation(2 * 3 * 5 * 5).reshape(2, 3, 5, 5) * 0.5  # no ties
    attrs = {"kernel_size": 3, "stride": 2, "padding": 1}
    u = rng.standard_normal(R.max_pool2d(x, 3, 2, 1).shape)
    v = rng.standard_normal(x.shape)

    def dx_dot_v(u_, x_):
        return float(np.sum(v * kg.ops.max_pool2d_backward(u_, x_, **attrs)))

    numeric = finite_difference_grad(dx_dot_v, [u, x], 0)
    np.testing.assert_allclose(numeric, R.max_pool2d_select(v, x, 3, 2, 1), **FD_TOL)
    graph = kg.Graph()
    with graph.as_default():
        xp, up = kg.placeholder(kg.float64, shape=x.shape), kg.placeholder(kg.float64)
        (gx,) = kg.gradients(kg.sum(kg.max_pool2d(xp, **attrs) * up), [xp])
        (gu,) = kg.gradients(kg.sum(gx * kg.constant(v)), [up])
    with kg.Session(graph) as sess:
        static = sess.run(gu, feed_dict={xp: x, up: u})
    np.testing.assert_allclose(static, numeric, **FD_TOL)
    xt, ut = kg.tensor(x, requires_grad=True), kg.tensor(u, requires_grad=True)
    (gxt,) = kg.autograd.grad(kg.sum(kg.max_pool2d(xt, **attrs) * ut), [xt],
                              create_graph=True)
    kg.sum(gxt * kg.tensor(v)).backward()
    assert_same(ut.grad._array, static, "eager vs static second derivative")


def test_avg_pool2d_second_derivative():
    g = np.arange(4.0).reshape(1, 1, 2, 2)
    gt = kg.tensor(g, requires_grad=True)
    like = kg.tensor(np.zeros((1, 1, 4, 4)))
    kg.sum(kg.ops.avg_pool2d_backward(gt, like, 2) * kg.tensor(np.ones((1, 1, 4, 4)))).backward()
    assert gt.grad.data.tolist() == [[[[1.0, 1.0], [1.0, 1.0]]]]


# -- errors: clear messages naming the shapes, in both modes ---------------------------------
ERRORS = [
    ("conv rank", lambda x, w: kg.conv2d(x, w), [(3, 8, 8), (4, 3, 3, 3)],
     ShapeError, r"input must have rank 4 \(N, C, H, W\), got shape \(3, 8, 8\)"),
    ("weight rank", lambda x, w: kg.conv2d(x, w), [(1, 3, 8, 8), (4, 3, 3)],
     ShapeError, r"weights must have rank 4 .* got shape \(4, 3, 3\)"),
    ("channels", lambda x, w: kg.conv2d(x, w), [(1, 3, 8, 8), (4, 2, 3, 3)],
     ShapeError, r"input \(1, 3, 8, 8\) has 3 channels but the weights \(4, 2, 3, 3\) "
                 "expect 2"),
    ("NHWC channels", lambda x, w: kg.conv2d(x, w, data_format="NHWC"),
     [(1, 8, 8, 3), (4, 2, 3, 3)],
     ShapeError, r"input \(1, 8, 8, 3\) has 3 channels but the weights \(4, 2, 3, 3\)"),
    ("NHWC rank", lambda x, w: kg.conv2d(x, w, data_format="NHWC"), [(8, 8, 3), (4, 3, 3, 3)],
     ShapeError, r"input must have rank 4 \(N, H, W, C\)"),
    ("data_format", lambda x, w: kg.conv2d(x, w, data_format="NWHC"),
     [(1, 3, 8, 8), (4, 3, 3, 3)], ValueError, "data_format must be 'NCHW' or 'NHWC', got 'NWHC'"),
    ("kernel too big", lambda x, w: kg.conv2d(x, w, padding=1), [(1, 1, 2, 2), (1, 1, 5, 5)],
     ShapeError, r"kernel 5x5 .* larger than the padded input: input \(1, 1, 2, 2\) with "
                 r"padding \(1, 1\)"),
    ("dilated kernel too big", lambda x, w: kg.conv2d(x, w, dilation=2),
     [(1, 1, 4, 4), (1, 1, 3, 3)], ShapeError, "dilation \\(2, 2\\)\\) is larger"),
    ("stride 0", lambda x, w: kg.conv2d(x, w, stride=0), [(1, 1, 4, 4), (1, 1, 3, 3)],
     ShapeError, "conv2d: stride must be positive, got 0"),
    ("negative padding", lambda x, w: kg.conv2d(x, w, padding=(0, -1)),
     [(1, 1, 4, 4), (1, 1, 3, 3)], ShapeError, "padding must be non-negative"),
    ("bad stride type", lambda x, w: kg.conv2d(x, w, stride=(1, 2, 3)),
     [(1, 1, 4, 4), (1, 1, 3, 3)], TypeError, "stride must be an int or a pair of ints"),
    ("pool rank", lambda x: kg.max_pool2d(x, 2), [(4, 4)],
     ShapeError, r"max_pool2d: the input must have rank 4 .* got shape \(4, 4\)"),
    ("pool window", lambda x: kg.avg_pool2d(x, 5), [(1, 1, 3, 3)],
     ShapeError, r"avg_pool2d: the window 5x5 is larger than the padded input: input "
                 r"\(1, 1, 3, 3\)"),
    ("pool padding", lambda x: kg.max_pool2d(x, 2, padding=2), [(1, 1, 8, 8)],
     ShapeError, r"padding \(2, 2\) must be at most half the kernel size \(2, 2\)"),
    ("pool stride", lambda x: kg.avg_pool2d(x, 2, stride=-1), [(1, 1, 8, 8)],
     ShapeError, "avg_pool2d: stride must be positive"),
    ("pool kernel missing", lambda x: kg.max_pool2d(x), [(1, 1, 8, 8)],
     TypeError, "missing required argument 'kernel_size'"),
    ("global rank", kg.global_avg_pool2d, [(2, 3, 4)],
     ShapeError, r"global_avg_pool2d: the input must have rank 4 .* got shape \(2, 3, 4\)"),
]


@pytest.mark.parametrize("name, fn, shapes, error, message", ERRORS,
                         ids=[e[0] for e in ERRORS])
def test_errors(name, fn, shapes, error, message):
    arrays_ = [np.zeros(s, np.float32) for s in shapes]
    with pytest.raises(error, match=message):  # eager
        fn(*[kg.tensor(a) for a in arrays_])
    with pytest.raises(error, match=message):  # raw arrays
        fn(*arrays_)
    with kg.Graph().as_default():  # static, when the graph is built
        with pytest.raises(error, match=message):
            fn(*[kg.placeholder(kg.float32, shape=s) for s in shapes])
    # static with unknown shapes: bad attributes still fail when the graph is built, bad
    # shapes at Session.run, naming the node
    graph = kg.Graph()
    with graph.as_default():
        phs = [kg.placeholder(kg.float32) for _ in shapes]
        if any(word in name for word in ("stride", "padding", "missing", "data_format")):
            with pytest.raises(error, match=message):
                fn(*phs)
            return
        node = fn(*phs)
    with kg.Session(graph) as sess, pytest.raises(kg.errors.InvalidArgumentError,
                                                  match=message):
        sess.run(node, feed_dict=dict(zip(phs, arrays_)))


def test_backward_ops_validate_the_gradient_shape():
    x, w = np.zeros((1, 1, 4, 4)), np.zeros((1, 1, 3, 3))
    with pytest.raises(ValueError, match=r"gradient has shape \(1, 1, 3, 3\), expected "
                                         r"\(1, 1, 2, 2\)"):
        kg.ops.conv2d_backward_input(np.zeros((1, 1, 3, 3)), w, x)
    with pytest.raises(ValueError, match="max_pool2d_backward: the gradient has shape"):
        kg.ops.max_pool2d_backward(np.zeros((1, 1, 3, 3)), x, 2)


def test_threaded_loops_give_the_serial_bits(monkeypatch):
    """Each conv/pool loop runs serially below THREADED_MIN_WORK elements and threaded
    above: both versions must compute the same bits (forward and every backward kernel)."""
    from kernelgraph.kernels import conv as K
    from kernelgraph.kernels import conv_gemm as G
    from kernelgraph.kernels import pool_index as PI

    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 2, 7, 6)).astype(np.float32)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)

    def run_all():
        x_t, w_t = kg.tensor(x, requires_grad=True), kg.tensor(w, requires_grad=True)
        y = kg.conv2d(x_t, w_t, stride=1, padding=1)
        pooled = (kg.max_pool2d(y, 2) * 2.0 + kg.avg_pool2d(y, 2, stride=1, padding=1).sum()
                  + kg.max_pool2d(y, 3, stride=2, padding=1)[..., :3, :3].sum())
        pooled.sum().backward()
        select = kg.ops.max_pool2d_select(y.detach().numpy(), y.detach().numpy(), (2, 2),
                                          stride=(2, 2), padding=(0, 0))
        return [y.detach().numpy(), pooled.detach().numpy(), x_t.grad.numpy(),
                w_t.grad.numpy(), select]

    serial = run_all()
    calls = []
    loops = {"_im2col": G, "_col2im": G, "_max_pool_indexed": PI,
             "_max_pool_unpadded_nan_free": PI, "_scatter": PI,
             "_gather": PI, "_avg_pool": K, "_avg_pool_backward": K}
    for name, module in loops.items():
        loop = getattr(module, name)
        assert loop.threshold == K.THREADED_MIN_WORK
        monkeypatch.setattr(loop, "threshold", 0)
        monkeypatch.setattr(loop, "parallel",
                            lambda *a, _k=loop.parallel, _n=name: (calls.append(_n), _k(*a))[1])
    threaded = run_all()
    assert set(calls) == set(loops)
    for a, b in zip(serial, threaded):
        assert_same(a, b, "threaded vs serial")
