"""The ``resize`` op (kernelgraph/ops/resize.py) in every sampling rule and both layouts:
eager, plain arrays and a static graph against the NumPy reference, gradients against
finite differences, and the CUDA kernels (numba's simulator without a GPU) against the CPU;
and PyTorch's ``F.interpolate`` rules against recorded/resize.json (record_resize.py).
tests/test_op_cards.py checks one sample of the card; tests/test_tf_image.py compares the
rules with TensorFlow's recorded resizes."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.kernels.resize import reference_resize, source_tables
from kernelgraph.ops.resize import resize, resize_backward
from tests.test_ops import check_on_cuda, check_op, weights

CUDA = kg.cuda.is_available()
RULES = [dict(), dict(align_corners=True), dict(half_pixel=True),
         dict(half_pixel=True, scales=(2.5, 0.75))]
_rng = np.random.default_rng(3)


def _case(mode, layout, rule):
    x = _rng.uniform(-1, 1, (2, 3, 4, 5) if layout == "NCHW" else (2, 4, 5, 3))
    attrs = dict(size=(7, 3), mode=mode, layout=layout, **rule)
    return x, attrs


@pytest.mark.parametrize("rule", RULES, ids=lambda r: "-".join(r) or "legacy")
@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_resize_modes_layouts_and_devices(mode, layout, rule):
    if mode == "nearest" and rule.get("align_corners") and layout == "NCHW":
        rule = dict(half_pixel=True)  # (one nearest align-corners case is enough)
    x, attrs = _case(mode, layout, rule)
    out, grads = check_op(lambda t: resize(t, **attrs),
                          lambda a: reference_resize(a, **attrs), [x], diff=(0,))
    assert out.shape == ((2, 3, 7, 3) if layout == "NCHW" else (2, 7, 3, 3))
    if CUDA:
        check_on_cuda(lambda t: resize(t, **attrs), [x], (0,), out, grads,
                      weights(out.shape, out.dtype))


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_one_image_of_three_dims(layout):
    x = _rng.uniform(-1, 1, (4, 5, 3))
    attrs = dict(size=(6, 2), layout=layout, half_pixel=True)
    out, grads = check_op(lambda t: resize(t, **attrs),
                          lambda a: reference_resize(a, **attrs), [x], diff=(0,))
    np.testing.assert_array_equal(out, resize(x[None], **attrs)[0])
    if CUDA:
        check_on_cuda(lambda t: resize(t, **attrs), [x], (0,), out, grads,
                      weights(out.shape, out.dtype))


def test_nearest_keeps_integers_and_bilinear_makes_float32():
    x = np.arange(2 * 3 * 4 * 1, dtype=np.int64).reshape(2, 3, 4, 1)
    near = resize(x, size=(5, 6), mode="nearest")
    assert near.dtype == np.int64
    np.testing.assert_array_equal(near, reference_resize(x, size=(5, 6), mode="nearest"))
    lin = resize(x.astype(np.int32), size=(5, 6))
    assert lin.dtype == np.float32
    np.testing.assert_allclose(lin, reference_resize(x, size=(5, 6)), rtol=1e-6)


def test_second_derivative_runs_through_resize_again():
    x = kg.tensor(_rng.uniform(size=(1, 3, 3, 2)), requires_grad=True)
    y = resize(x, size=(5, 4), half_pixel=True)
    (g,) = kg.autograd.grad((y * y).sum(), [x], create_graph=True)
    (gg,) = kg.autograd.grad(g.sum(), [x])
    # d/dx sum_j 2 * R^T (R x) = 2 R^T R 1: the backward of the backward is resize again
    ones = np.ones((1, 3, 3, 2))
    want = 2 * resize_backward(resize(ones, size=(5, 4), half_pixel=True), ones,
                               size=(5, 4), half_pixel=True)
    np.testing.assert_allclose(gg.detach().numpy(), want, rtol=1e-12)


def test_pytorch_interpolate_rules(recorded):
    """F.interpolate's modes as resize attributes (NCHW): nearest is the legacy rule,
    nearest-exact and bilinear (align_corners=False) the half-pixel one; a scale_factor
    gives the size floor(in * s) and the ratio 1 / s. Values, input gradients and grad_fn."""
    rec = recorded("resize")
    x = np.array(rec["x"], np.float32)
    for case in rec["cases"]:
        mode, kw = case["mode"], case["kwargs"]
        sf = kw.get("scale_factor")
        if sf is not None:
            sf = tuple(sf) if isinstance(sf, list) else (sf, sf)
            size = tuple(int(np.floor(n * s)) for n, s in zip(x.shape[2:], sf))
        else:
            size = tuple(kw["size"])
        align = kw.get("align_corners", False)
        attrs = dict(size=size, layout="NCHW", scales=sf, align_corners=align,
                     mode="bilinear" if mode == "bilinear" else "nearest",
                     half_pixel=mode == "nearest-exact" or (mode == "bilinear" and not align))
        t = kg.tensor(x, requires_grad=True)
        y = resize(t, **attrs)
        w = np.linspace(-1, 1, y.numel(), dtype=np.float32).reshape(y.shape)
        (y * kg.tensor(w)).sum().backward()
        np.testing.assert_allclose(y.detach().numpy(), case["y"], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(t.grad.numpy(), case["dx"], rtol=1e-5, atol=1e-6)
        assert repr(y.grad_fn).startswith(f"<{case['grad_fn']} "), (mode, repr(y.grad_fn))


def test_sampling_tables_follow_the_frameworks_rules():
    # TF1 legacy: i * in/out; align corners: i * (in-1)/(out-1); half pixel: (i+.5)*r - .5
    lo, hi, frac = source_tables(3, 6, "bilinear", False, False)
    assert frac.tolist() == [0, .5, 0, .5, 0, .5] and hi.tolist() == [1, 1, 2, 2, 2, 2]
    lo, hi, frac = source_tables(3, 5, "bilinear", True, False)
    assert lo.tolist() == [0, 0, 1, 1, 2] and frac.tolist() == [0, .5, 0, .5, 0]
    assert source_tables(4, 3, "nearest", False, True)[0].tolist() == [0, 2, 3]
    assert source_tables(4, 3, "nearest", False, False)[0].tolist() == [0, 1, 2]


def test_bad_attributes_and_shapes_are_refused():
    x = np.zeros((1, 4, 4, 3))
    with pytest.raises(ValueError, match="size must be 2 positive integers"):
        resize(x, size=(0, 2))
    with pytest.raises(ValueError, match="mode must be one of"):
        resize(x, size=(2, 2), mode="bicubic")
    with pytest.raises(ValueError, match="cannot both be set"):
        resize(x, size=(2, 2), align_corners=True, half_pixel=True)
    with pytest.raises(kg.errors.ShapeError, match="must be 4-D"):
        resize(np.zeros((4, 3)), size=(2, 2))
    with pytest.raises(kg.errors.ShapeError, match="non-zero height and width"):
        resize(np.zeros((1, 0, 4, 3)), size=(2, 2))
