"""NaN, +-Inf and -0.0 flow through kernelgraph as they flow through PyTorch 2.13.

Each case is compared with the outputs and gradients PyTorch computed on the same inputs,
recorded in ``tests/recorded/nan.json`` by ``tests/recorded/record_nan.py``: NaN at the front,
middle and end of a row, in every position of a pooling window, infinities of both signs,
signed zeros, all-NaN rows and ties. Every op runs in both modes (eager, and static through
the whole compiler, so fused kernels too) on both devices (CPU, and CUDA: numba's simulator
when there is no GPU), in float32 and float64, and the NumPy reference (the other tests'
oracle) must give PyTorch's answers too.

Gradients are of ``sum(op(x) * w)`` with the recorded weight ``w`` (distinct values), so a
gradient routed to the wrong element shows. Zeros are compared without their sign, except
relu's output (PyTorch keeps relu(-0.0) = -0.0 on every path; its maximum does not: the sign
of max(-0.0, 0.0) depends on the tensor's length there).
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.kernels import cpu
from kernelgraph.kernels.cuda import reduce as cuda_reduce
from kernelgraph.ops import reference as ref

# pytest drops the filter kernelgraph's import adds for its kernels' warnings (it restores
# the filters after collecting; test_nan_inputs_print_no_warnings checks a real import), and
# the CUDA simulator computes with NumPy scalars, which warn where a GPU does not.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
TOL = {F32: {"rtol": 2e-6, "atol": 1e-6}, F64: {"rtol": 1e-13, "atol": 1e-13}}
MODES = ("eager", "static")
DEVICES = ("cpu", "cuda")
EVERY_WAY = pytest.mark.parametrize("mode, device", [(m, d) for m in MODES for d in DEVICES])
BOTH_DTYPES = pytest.mark.parametrize("dtype", [F32, F64], ids=["f32", "f64"])


@pytest.fixture(scope="module")
def torch_(recorded):
    return recorded("nan")


def run(fn, args, mode, device, w=None, diff=(0,)):
    """``fn(*args)`` in ``mode`` on ``device``: (output, [gradient of ``sum(out * w)`` with
    respect to ``args[i]`` for i in ``diff``]) as host arrays; no gradients if ``w`` is None."""
    dev = kg.device(device)
    diff = diff if w is not None else ()
    if mode == "eager":
        ts = [kg.tensor(a, requires_grad=i in diff, device=dev) for i, a in enumerate(args)]
        out = fn(*ts)
        assert out.device == dev, out.device
        if not diff:
            return out.detach().cpu().numpy(), []
        (out * kg.tensor(np.asarray(w, out.dtype), device=dev)).sum().backward()
        return out.detach().cpu().numpy(), [ts[i].grad.cpu().numpy() for i in diff]
    graph = kg.Graph()
    with graph.as_default(), dev:
        phs = [kg.placeholder(a.dtype, shape=a.shape) for a in args]
        node = fn(*phs)
        fetches = [node]
        if diff:
            loss = kg.sum(node * kg.constant(np.asarray(w, node.dtype)))
            fetches += kg.gradients(loss, [phs[i] for i in diff])
    with kg.Session(graph) as sess:
        values = sess.run(fetches, feed_dict=dict(zip(phs, args)))
    return values[0], list(values[1:])


def like_torch(got, expected, dtype, what):
    """Same shape, NaN and +-Inf where PyTorch has them, other values close."""
    got, expected = np.asarray(got), np.asarray(expected, np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected),
                                  err_msg=f"{what}: NaN in other places than PyTorch's")
    np.testing.assert_allclose(got, expected, **TOL[dtype], err_msg=what)


def _grads_like_torch(grads, expected, dtype, what):
    for k, (g, e) in enumerate(zip(grads, expected, strict=True)):
        like_torch(g, e, dtype, f"{what}: gradient {k}")


# -- elementwise -----------------------------------------------------------------------------
@EVERY_WAY
@BOTH_DTYPES
def test_relu(torch_, mode, device, dtype):
    rec = torch_["relu"]
    x = np.array(rec["x"], dtype)
    out, grads = run(kg.relu, [x], mode, device, rec["w"])
    like_torch(out, rec["out"], dtype, "relu")
    np.testing.assert_array_equal(np.signbit(out), np.signbit(rec["out"]),
                                  err_msg="relu(-0.0) is -0.0 in PyTorch")
    _grads_like_torch(grads, [rec["grad"]], dtype, "relu")


@EVERY_WAY
@BOTH_DTYPES
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum(torch_, name, mode, device, dtype):
    """Every pair of specials: NaN on either side wins and both inputs get the whole
    gradient; ties (-0.0 and 0.0 included) split it evenly, as in PyTorch."""
    rec = torch_[name]
    x, y = np.array(rec["x"], dtype), np.array(rec["y"], dtype)
    out, grads = run(getattr(kg, name), [x, y], mode, device, rec["w"], diff=(0, 1))
    like_torch(out, rec["out"], dtype, name)
    _grads_like_torch(grads, [rec["grad_x"], rec["grad_y"]], dtype, name)


@EVERY_WAY
@BOTH_DTYPES
def test_clip(torch_, mode, device, dtype):
    """torch.clamp: NaN stays NaN, a NaN bound makes everything NaN, min > max gives max;
    the gradient passes only where min <= x <= max (never at NaN)."""
    for case in torch_["clip"]:
        x = np.array(case["x"], dtype)
        out, grads = run(lambda t, c=case: kg.clip(t, min=c["min"], max=c["max"]), [x], mode,
                         device, case["w"])
        what = f"clip(min={case['min']}, max={case['max']})"
        like_torch(out, case["out"], dtype, what)
        _grads_like_torch(grads, [case["grad"]], dtype, what)


# -- reductions ------------------------------------------------------------------------------
REDUCTIONS = [("sum", kg.sum, "sum"), ("mean", kg.mean, "mean"), ("max", kg.max, "amax")]


@EVERY_WAY
@BOTH_DTYPES
@pytest.mark.parametrize("name, op, key", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_reductions(torch_, name, op, key, layout, mode, device, dtype):
    """Over each row (the CPU's row kernel, CUDA's block kernel) and, transposed, over each
    column (the column kernel, the thread kernel). ``kg.max`` is ``torch.amax``: in a row
    with a NaN every element's gradient is NaN (mask all false, count 0)."""
    rec = torch_[key]
    x = np.array(torch_["rows"], dtype)
    axis = 1
    w = np.array(rec["w"])
    expected = np.array(rec["grad"])
    if layout == "columns":
        x, axis, expected = np.ascontiguousarray(x.T), 0, expected.T
    out, grads = run(lambda t: op(t, axis=axis), [x], mode, device, w)
    like_torch(out, rec["out"], dtype, name)
    _grads_like_torch(grads, [expected], dtype, name)


@EVERY_WAY
@BOTH_DTYPES
def test_max_of_a_whole_tensor(torch_, mode, device, dtype):
    """axis=None, as ``torch.amax`` over every dim (``torch.max(x)`` without a dim differs
    only in its gradient: that goes to the NaNs, recorded as "max_whole" for comparison)."""
    rec = torch_["amax_whole"]
    for k, row in enumerate(torch_["rows"]):
        out, grads = run(kg.max, [np.array(row, dtype)], mode, device, (k + 1) * 0.5)
        like_torch(out, rec["out"][k], dtype, f"max of row {k}")
        _grads_like_torch(grads, [rec["grad"][k]], dtype, f"max of row {k}")


@EVERY_WAY
def test_argmax(torch_, mode, device):
    """The first NaN, else the first maximum: over rows, columns and whole rows."""
    x = np.array(torch_["rows"], F64)
    expected = torch_["argmax"]["out"]
    for arg, axis in [(x, 1), (np.ascontiguousarray(x.T), 0), (x.astype(F32), -1)]:
        out, _ = run(lambda t, a=axis: kg.argmax(t, axis=a), [arg], mode, device)
        np.testing.assert_array_equal(out, expected, err_msg=f"argmax over axis {axis}")
    for k, row in enumerate(torch_["rows"]):
        out, _ = run(kg.argmax, [np.array(row)], mode, device)
        assert out == torch_["argmax_whole"]["out"][k], f"argmax of row {k}: {out}"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("where", [0, 17, 31, 32, 63, 64, 99])
def test_long_reductions_propagate_nan_from_anywhere(monkeypatch, device, where):
    """A NaN anywhere in a reduction too long for one thread: every partial of a split
    reduction and every step of a tree must pass it on (CUDA tuning shrunk to split)."""
    monkeypatch.setattr(cuda_reduce, "_TARGET_BLOCKS", 4)
    monkeypatch.setattr(cuda_reduce, "_PER_THREAD", 2)
    x = np.linspace(-3.0, 5.0, 100)
    x[where] = np.nan
    dev = kg.device(device)
    for arg, axis in [(x, None), (x.reshape(1, 100), 1), (x.reshape(100, 1), 0)]:
        t = kg.tensor(arg, device=dev)
        for op in (kg.sum, kg.mean, kg.max):
            assert np.isnan(op(t, axis=axis).cpu().numpy()).all(), (op, axis)
        assert (kg.argmax(t, axis=axis).cpu().numpy() == where).all(), axis


# -- the softmax family ----------------------------------------------------------------------
@EVERY_WAY
@BOTH_DTYPES
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_softmax_family(torch_, name, layout, mode, device, dtype):
    """A NaN or a +Inf anywhere in a row makes the whole row NaN; -Inf gives 0 (log: -Inf)
    unless the whole row is -Inf."""
    rec = torch_[name]
    x = np.array(torch_["rows"], dtype)
    w, out_e, grad_e, axis = np.array(rec["w"]), np.array(rec["out"]), np.array(rec["grad"]), -1
    if layout == "columns":  # CUDA's column kernel, the CPU's moved axis
        x, w, out_e, grad_e, axis = (np.ascontiguousarray(x.T), w.T, out_e.T, grad_e.T, 0)
    out, grads = run(lambda t: getattr(kg, name)(t, axis=axis), [x], mode, device, w)
    like_torch(out, out_e, dtype, name)
    _grads_like_torch(grads, [grad_e], dtype, name)


@EVERY_WAY
@BOTH_DTYPES
def test_softmax_cross_entropy(torch_, mode, device, dtype):
    rec = torch_["cross_entropy"]
    logits = np.array(torch_["rows"], dtype)
    labels = np.array(torch_["labels"], np.int64)
    out, grads = run(kg.softmax_cross_entropy, [logits, labels], mode, device, rec["w"])
    like_torch(out, rec["out"], dtype, "softmax_cross_entropy")
    _grads_like_torch(grads, [rec["grad"]], dtype, "softmax_cross_entropy")


# -- pooling ---------------------------------------------------------------------------------
@EVERY_WAY
@BOTH_DTYPES
@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d", "global_avg_pool2d"])
def test_pooling(torch_, name, mode, device, dtype):
    """Max pooling: a NaN in a window wins, and its gradient goes to the window's *last*
    NaN (PyTorch's ``val > max || isnan(val)`` scan), else to the first maximum."""
    x = np.array([torch_["pool_planes"]], dtype)
    cases = torch_[name] if isinstance(torch_[name], list) else [torch_[name]]
    for case in cases:
        attrs = case.get("attrs", {})
        out, grads = run(lambda t, a=attrs: getattr(kg, name)(t, **a), [x], mode, device,
                         case["w"])
        like_torch(out, case["out"], dtype, f"{name}{attrs}")
        _grads_like_torch(grads, [case["grad"]], dtype, f"{name}{attrs}")


# -- the NumPy reference (the other tests' oracle) agrees --------------------------------------
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # NumPy's, on Inf - Inf
def test_reference_agrees_with_torch(torch_):
    t = torch_
    rows = np.array(t["rows"])
    relu = ref.relu(np.array(t["relu"]["x"]))
    like_torch(relu, t["relu"]["out"], F64, "relu")
    np.testing.assert_array_equal(np.signbit(relu), np.signbit(t["relu"]["out"]))
    for name in ("maximum", "minimum"):
        x, y = np.array(t[name]["x"]), np.array(t[name]["y"])
        like_torch(ref.REFERENCE[name](x, y), t[name]["out"], F64, name)
    for case in t["clip"]:
        got = ref.REFERENCE["clip"](np.array(case["x"]), case["min"], case["max"])
        like_torch(got, case["out"], F64, f"clip {case['min']} {case['max']}")
    for name, key in [("sum", "sum"), ("mean", "mean"), ("max", "amax"), ("argmax", "argmax"),
                      ("softmax", "softmax"), ("log_softmax", "log_softmax")]:
        like_torch(ref.REFERENCE[name](rows, axis=1 if name not in ("softmax", "log_softmax")
                                       else -1), t[key]["out"], F64, name)
    like_torch(ref.sparse_softmax_cross_entropy(rows, np.array(t["labels"])),
               t["cross_entropy"]["out"], F64, "softmax_cross_entropy")
    planes = np.array([t["pool_planes"]])
    for name in ("max_pool2d", "avg_pool2d"):
        for case in t[name]:
            like_torch(ref.REFERENCE[name](planes, **case["attrs"]), case["out"], F64, name)
    like_torch(ref.global_avg_pool2d(planes), t["global_avg_pool2d"]["out"], F64, "gap")
    for case in t["max_pool2d"]:
        # The gradient is the adjoint of the reference's select: element e of it is
        # sum(select(onehot(e), x) * w).
        w = np.array(case["w"])
        grad = np.zeros(planes.size)
        for e in range(planes.size):
            onehot = np.zeros(planes.size)
            onehot[e] = 1.0
            picked = ref.max_pool2d_select(onehot.reshape(planes.shape), planes,
                                           **case["attrs"])
            grad[e] = np.sum(picked * w)
        like_torch(grad.reshape(planes.shape), case["grad"], F64, f"select {case['attrs']}")


# -- no warnings -----------------------------------------------------------------------------
_NAN_SCRIPT = """
import numpy as np, kernelgraph as kg
x = np.array([np.nan, 1.0, -1.0, 0.0, np.inf, -np.inf, np.nan, 2.0] * 4, np.float32)
t = kg.tensor(x, requires_grad=True)
y = kg.relu(t) + kg.maximum(t, 0.5) + kg.minimum(t, 0.5) + kg.clip(t, min=0.0) + t / 0.0
(y.sum() + kg.max(t) + kg.softmax(t).sum() + kg.exp(t * 1e3).sum()).backward()
g = kg.Graph()
with g.as_default():
    p = kg.placeholder(kg.float32, shape=[32])
    a = kg.relu(p * 2.0 + 1.0) + kg.maximum(p, 0.5)  # fused
    grads = kg.gradients(kg.sum(a * kg.relu(p)), [p])
with kg.Session(g) as sess:
    sess.run([a, kg.relu(p), grads], {p: x})
with kg.Session(g, skip_passes=("fuse",)) as sess:
    sess.run([a, grads], {p: x})
np.sqrt(-x)  # NumPy's own ufuncs still warn
"""


def test_nan_inputs_print_no_warnings():
    """PyTorch prints nothing for NaN (nor for 1/0 or an overflow to Inf); NumPy would print
    "RuntimeWarning: invalid value encountered in _relu": a compiled comparison raises the
    CPU's invalid flag for a NaN, and NumPy reads the flags after every ufunc loop.
    kernelgraph's import adds a filter for its own kernels; checked in a fresh interpreter,
    because pytest restores the warning filters it found before collecting the tests."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}
    run_ = subprocess.run([sys.executable, "-c", _NAN_SCRIPT], capture_output=True, text=True,
                          env=env, timeout=300, check=False)
    assert run_.returncode == 0, run_.stderr
    warned = [line for line in run_.stderr.splitlines() if "Warning" in line]
    assert len(warned) == 1 and "encountered in sqrt" in warned[0], run_.stderr


def test_the_filter_keeps_numpys_own_warnings():
    x = np.array([np.nan, -1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        cpu.ignore_fp_warnings()
        kg.relu(x)
        kg.maximum(x, 0.0)
        np.sqrt(x)
    assert [str(w.message) for w in caught] == ["invalid value encountered in sqrt"]
