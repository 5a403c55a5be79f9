"""Empty tensors in the reductions and the ops that reduce, as PyTorch 2.13 handles them.

A reduction of an empty tensor has a value wherever no output element reduces over nothing:
``max`` of a (0, 3) tensor over axis 1 is empty (shape (0,)), its ``sum`` over axis 0 is
three zeros and its ``mean`` three NaNs. A reduction with no identity (``max``, ``argmax``)
over an empty dimension is refused in PyTorch's words; so is pooling over no channels, rows
or columns (a window of padding alone). A cross-entropy over a batch of no rows is empty
(its mean NaN), with or without classes. Each case is compared with what PyTorch computed,
recorded in ``tests/recorded/empty.json`` by ``tests/recorded/record_empty.py``, in both
modes (static with the shape known when the graph is built, and known only when it runs), on
both devices, gradients included (empty, of the input's shape); and with NumPy, the
reference the other tests use.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernelgraph as kg
from kernelgraph.errors import ShapeError
from kernelgraph.kernels import reference as ref

# The static modes: "static" declares the placeholder's shape, so a refusal comes from the
# line that builds the node; "unknown" declares no dims, so it comes when the plan is made.
MODES = ("eager", "static", "unknown")
EVERY_WAY = pytest.mark.parametrize("mode, device", [(m, d) for m in MODES
                                                     for d in ("cpu", "cuda")])
REDUCTIONS = {"max": kg.max, "argmax": kg.argmax, "mean": kg.mean, "sum": kg.sum}


@pytest.fixture(scope="module")
def torch_(recorded):
    return recorded("empty")["torch"]


def run(fn, args, mode, device, grad=False):
    """``fn(*args)`` in ``mode`` on ``device``: (output, gradient of ``sum(output)`` with
    respect to ``args[0]``, or None) as host arrays."""
    dev = kg.device(device)
    if mode == "eager":
        ts = [kg.tensor(a, requires_grad=grad and k == 0, device=dev)
              for k, a in enumerate(args)]
        out = fn(*ts)
        if not grad:
            return out.cpu().numpy(), None
        out.sum().backward()
        return out.detach().cpu().numpy(), ts[0].grad.cpu().numpy()
    graph = kg.Graph()
    with graph.as_default(), dev:
        phs = [kg.placeholder(a.dtype, shape=a.shape if mode == "static" else [None] * a.ndim)
               for a in args]
        node = fn(*phs)
        fetches = [node] + (kg.gradients(kg.sum(node), [phs[0]]) if grad else [])
    with kg.Session(graph) as sess:
        values = sess.run(fetches, feed_dict=dict(zip(phs, args)))
    return values[0], (values[1] if grad else None)


def _words(case: dict, op: str) -> str:
    """PyTorch's message as kernelgraph words it: its op's name, ``axis`` for ``dim``, the
    first sentence."""
    message = case["error"]["message"].replace("amax()", "max()").replace("dim", "axis")
    return message.split(". ")[0].rstrip(".")


def _assert_like_torch(got, case, what):
    got = np.asarray(got)
    assert list(got.shape) == case["shape"], f"{what}: shape {got.shape}, PyTorch {case}"
    assert got.dtype.name == case["dtype"], f"{what}: dtype {got.dtype}, PyTorch {case}"
    expected = np.array(case["value"], got.dtype).reshape(case["shape"])  # [[]] is (1, 0)
    np.testing.assert_array_equal(got, expected, err_msg=what)


def _kwargs(case):
    kw = dict(case["kwargs"])
    if isinstance(kw.get("axis"), list):
        kw["axis"] = tuple(kw["axis"])
    return kw


@EVERY_WAY
@pytest.mark.parametrize("op", REDUCTIONS)
def test_reductions_of_empty_tensors_as_pytorch(torch_, op, mode, device):
    for case in torch_[op]:
        x = np.zeros(case["input"], case["input_dtype"])
        kw = _kwargs(case)
        what = f"{op}({x.dtype} {x.shape}, {kw}) {mode} on {device}"
        grad = "grad" in case

        def call(t, kw=kw):
            return REDUCTIONS[op](t, **kw)

        if "error" in case:
            with pytest.raises(ValueError) as e:
                run(call, [x], mode, device)
            assert _words(case, op) in str(e.value), (what, str(e.value))
            if mode != "eager":  # the user's line, at build time or when the plan is made
                assert "test_empty.py" in str(e.value), (what, str(e.value))
            continue
        out, g = run(call, [x], mode, device, grad)
        _assert_like_torch(out, case, what)
        if op != "argmax":  # NumPy's argmax has no keepdims over a tuple; PyTorch is enough
            np.testing.assert_array_equal(out, _numpy(op, x, kw), err_msg=f"{what}: NumPy")
        if grad:
            assert list(g.shape) == case["grad_shape"], (what, g.shape)
            assert g.dtype == x.dtype, (what, g.dtype)


def _numpy(op, x, kw):
    """The NumPy reference of a reduction (mean: NaN over nothing, without its warning)."""
    fn = {"max": np.max, "mean": np.mean, "sum": np.sum}[op]
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "Mean of empty slice"
        return np.asarray(fn(x, axis=kw.get("axis"), keepdims=kw.get("keepdims", False)),
                          x.dtype if op != "sum" or x.dtype.kind == "f" else np.int64)


@EVERY_WAY
@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
def test_pooling_empty_tensors_as_pytorch(torch_, op, mode, device):
    """The batch may be empty; channels, rows or columns may not (PyTorch's check: with no
    rows, every window of a padded input would hold padding alone, a max of nothing)."""
    for case in torch_[op]:
        x = np.zeros(case["input"], np.float32)
        what = f"{op}({x.shape}) {mode} on {device}"

        def call(t, case=case):
            return getattr(kg, op)(t, case["kernel_size"], padding=case["padding"])

        if "error" in case:
            assert "optional 0 dim batch size" in case["error"]["message"]
            with pytest.raises(ValueError, match="optional 0 dim batch size") as e:
                run(call, [x], mode, device)
            assert str(list(x.shape)) in case["error"]["message"]
            assert str(x.shape) in str(e.value), (what, str(e.value))
            continue
        out, g = run(call, [x], mode, device, grad=True)
        _assert_like_torch(out, case, what)
        assert list(g.shape) == case["grad_shape"], (what, g.shape)


@EVERY_WAY
def test_cross_entropy_of_no_rows_as_pytorch(torch_, mode, device):
    """An empty loss (``reduction='none'``) and a NaN mean, with or without classes; rows
    with no classes are refused (PyTorch: the label is out of range)."""
    for case in torch_["cross_entropy"]:
        logits = np.zeros(case["input"], np.float32)
        labels = np.zeros(case["input"][:1], np.int64)
        op = kg.softmax_cross_entropy if case["reduction"] == "none" else kg.cross_entropy
        what = f"cross_entropy({logits.shape}, {case['reduction']}) {mode} on {device}"
        if "error" in case:
            assert case["error"]["type"] == "IndexError"  # "Target 0 is out of bounds."
            with pytest.raises(ValueError, match="at least one class"):
                run(op, [logits, labels], mode, device)
            continue
        out, g = run(op, [logits, labels], mode, device, grad=True)
        _assert_like_torch(out, case, what)
        assert list(g.shape) == case["grad_shape"], (what, g.shape)


def test_the_error_names_the_line_that_built_the_node():
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float32, shape=[0, 3])
        with pytest.raises(ShapeError, match="reduction axis 0 to have non-zero size") as e:
            kg.max(x, axis=0)  # the line named
    assert "kg.max(x, axis=0)  # the line named" in str(e.value)


def test_the_numpy_reference_agrees():
    """The reference the op tests use computes the same empty results."""
    x = np.zeros((0, 1, 2, 2), np.float32)
    assert ref.max_pool2d(x, 2).shape == (0, 1, 1, 1)
    assert ref.sparse_softmax_cross_entropy(np.zeros((0, 0)), np.zeros(0, int)).shape == (0,)


# -- property: refused exactly where NumPy refuses ----------------------------------------------
@st.composite
def _empty_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 2), min_size=1, max_size=3)))
    axes = draw(st.none() | st.integers(-len(shape), len(shape) - 1) |
                st.lists(st.integers(0, len(shape) - 1), unique=True).map(tuple))
    return shape, axes, draw(st.booleans())


@given(case=_empty_cases(), mode=st.sampled_from(["eager", "unknown"]))
def test_max_is_refused_exactly_where_numpy_refuses(case, mode):
    """Over shapes with zeros and any axes: a value where NumPy has one (the same shape and
    values), a refusal where NumPy has none ("zero-size array to reduction operation maximum
    which has no identity")."""
    shape, axis, keepdims = case
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    try:
        expected = np.max(x, axis=axis, keepdims=keepdims)
    except ValueError:
        with pytest.raises(ValueError, match="non-zero size|to be specified"):
            run(lambda t: kg.max(t, axis=axis, keepdims=keepdims), [x], mode, "cpu")
        return
    out, _ = run(lambda t: kg.max(t, axis=axis, keepdims=keepdims), [x], mode, "cpu")
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)
