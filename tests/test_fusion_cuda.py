"""Elementwise fusion on CUDA: groups of elementwise nodes placed on the GPU become one
generated numba.cuda kernel with the same bits as the op-by-op CUDA run, and the same values
as the CPU run.

Without a GPU these run on numba's CUDA simulator (see ../conftest.py): shapes stay tiny.
On the simulator the bodies run as Python on NumPy scalars, so CPU and CUDA agree to the
bit for arithmetic (+, *, max, where, relu) and to a few ulps for math functions (exp,
tanh, sigmoid: libm's float32 functions against Python's float64 ones, rounded).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelgraph as kg
from kernelgraph.kernels.cpu import _add
from kernelgraph.static import fusion, passes
from tests.test_ops import assert_same, broadcast_shapes

cuda_core = pytest.importorskip("kernelgraph.kernels.cuda.core")
from kernelgraph.kernels.cuda import elementwise as E  # noqa: E402
from kernelgraph.kernels.cuda.fused import FusedCudaKernel  # noqa: E402
from kernelgraph.ops import CUDA_KERNELS as FORWARDS  # noqa: E402

TOL = {np.dtype(np.float32): {"rtol": 1e-6, "atol": 1e-7},
       np.dtype(np.float64): {"rtol": 1e-14, "atol": 1e-15}}


@pytest.fixture(autouse=True)
def _kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELGRAPH_CACHE", str(tmp_path))


def _build(device, make):
    """``make()`` inside a new graph on ``device``: (graph, placeholders, fetches)."""
    g = kg.Graph()
    with g.as_default(), kg.device(device):
        feeds, fetches = make()
    return g, feeds, fetches


def _run_three_ways(make, values):
    """(fused CUDA, unfused CUDA, CPU) results of the graph ``make`` builds, and the CUDA
    explanation."""
    out = []
    for device, skip in (("cuda", ()), ("cuda", ("fuse",)), ("cpu", ())):
        g, feeds, fetches = _build(device, make)
        feed = dict(zip(feeds, values))
        with kg.Session(g, skip_passes=skip) as sess:
            if not out:
                explained = sess.explain(fetches, feed)
            out.append(sess.run(fetches, feed))
    return (*out, explained)


def _fused_nodes(explained):
    return [n for n in explained.after if hasattr(n.op.forward, "members")]


def _mlp_layer():
    x = kg.placeholder(kg.float32, shape=[None, 4], name="x")
    w = kg.placeholder(kg.float32, shape=[4], name="w")
    b = kg.placeholder(kg.float32, shape=[None, 1], name="b")
    return [x, w, b], [kg.relu(x * w + b), kg.maximum(x - b, w) * 0.5]


def test_a_cuda_group_is_one_kernel_with_the_bits_of_the_unfused_run():
    rng = np.random.default_rng(0)
    values = [rng.standard_normal((3, 4)).astype(np.float32),
              rng.standard_normal(4).astype(np.float32),
              rng.standard_normal((3, 1)).astype(np.float32)]
    fused, unfused, cpu, e = _run_three_ways(_mlp_layer, values)
    fuse = next(r for r in e.passes if r.name == "fuse")
    assert fuse.changes == ["relu <- mul add", "mul_1 <- sub maximum"]
    nodes = _fused_nodes(e)
    assert [n.name for n in nodes] == ["relu", "mul_1"]
    assert all(n.device == "cuda:0" and isinstance(n.op.forward, FusedCudaKernel)
               for n in nodes)
    assert "_cuda(" in e.source and "_relu_cuda" not in e.source
    kernel = e.kernels["relu"]
    assert "@cuda.jit(device=True)\ndef fused(x0, x1, x2):" in kernel
    assert "keep(float32(_mul(x0, x1)))  # mul" in kernel  # no FMA across nodes on a GPU
    for f, u, c in zip(fused, unfused, cpu):
        assert type(f) is np.ndarray
        assert_same(f, u, "fused vs op-by-op on CUDA")
        assert_same(f, c, "CUDA vs CPU")  # +, *, relu, max: the same IEEE operations
    np.testing.assert_array_equal(
        fused[0], np.maximum(values[0] * values[1] + values[2], 0))


def _math_chain():
    x = kg.placeholder(kg.float64, shape=[None], name="x")
    y = kg.placeholder(kg.float32, shape=[None], name="y")
    return [x, y], kg.sigmoid(y) * kg.tanh(x) - kg.exp(-y)


def test_math_functions_match_the_cpu_within_ulps():
    values = [np.linspace(-3, 3, 7), np.linspace(-2, 2, 7).astype(np.float32)]
    fused, unfused, cpu, e = _run_three_ways(_math_chain, values)
    assert len(_fused_nodes(e)) == 1 and fused.dtype == np.float64
    assert_same(fused, unfused, "fused vs op-by-op on CUDA")
    np.testing.assert_allclose(fused, cpu, rtol=1e-6, atol=1e-7)  # float32 exp, sigmoid


@settings(max_examples=5)
@given(shapes=broadcast_shapes(3), data=st.data())
def test_group_inputs_broadcast_like_numpy(shapes, data):
    def make():
        a, b, c = (kg.placeholder(kg.float64, shape=[None] * len(s)) for s in shapes)
        return [a, b, c], kg.where(a > b, a * c, b - c) + 1.0

    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    values = [rng.integers(-3, 4, s).astype(np.float64) for s in shapes]
    fused, unfused, cpu, e = _run_three_ways(make, values)
    a, b, c = values
    expected = np.where(a > b, a * c, b - c) + 1.0
    assert_same(fused, unfused, "fused vs op-by-op on CUDA")
    assert_same(fused, cpu, "CUDA vs CPU")
    assert_same(fused, expected, "fused vs NumPy")
    assert [n.name for n in _fused_nodes(e)] == ["add"]


def _mixed():
    x = kg.placeholder(kg.float32, shape=[None, 3], name="x")
    w = kg.placeholder(kg.float64, shape=[3], name="w")
    k = kg.placeholder(kg.int32, shape=[None, 1], name="k")
    flag = kg.placeholder(kg.bool_, shape=[None, 3], name="flag")
    scaled = x * w  # float32 * float64: float64
    chosen = kg.where(flag, scaled, kg.cast(k, kg.float64))
    return [x, w, k, flag], [kg.abs(chosen) / 3.0, (k + 2) * 2 > 5]  # int32 arithmetic


def test_mixed_dtypes_cast_inside_the_group_as_op_by_op():
    rng = np.random.default_rng(1)
    values = [rng.standard_normal((2, 3)).astype(np.float32), np.array([0.1, -2.0, 3.0]),
              np.array([[1], [-7]], np.int32), np.array([[True, False, True]] * 2)]
    fused, unfused, cpu, e = _run_three_ways(_mixed, values)
    div, greater = e.kernels["div"], e.kernels["greater"]
    assert "t0 = keep(float64(_mul(float64(x0), x1)))" in div  # float32 x converted first
    assert "t0 = int32(_add(x0, x1))" in greater  # no barrier: integers do not round
    assert [r.changes for r in e.passes if r.name == "fuse"] == [
        ["div <- mul where abs", "greater <- add mul_1"]]
    for f, u, c in zip(fused, unfused, cpu):
        assert_same(f, u, "fused vs op-by-op on CUDA")
        assert_same(f, c, "CUDA vs CPU")
    assert fused[0].dtype == np.float64 and fused[1].dtype == np.bool_


def test_groups_next_to_transfers_stay_on_their_device():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None], name="x")  # fed on the host
        with kg.device("cuda"):
            y = kg.relu(x * 2.0 - 1.0)  # reads x through one to_device node
        with kg.device("cpu"):
            z = kg.exp(-y) * 3.0  # reads y through a transfer back
    feed = {x: np.linspace(-1, 1, 5, dtype=np.float32)}
    with kg.Session(g) as sess:
        e = sess.explain(z, feed)
        fused = sess.run(z, feed)
    with kg.Session(g, skip_passes=("fuse",)) as sess:
        unfused = sess.run(z, feed)
    nodes = _fused_nodes(e)
    assert [(n.name, str(n.device)) for n in nodes] == [("relu", "cuda:0"), ("mul_1", "cpu")]
    assert [n.inputs[0].op.name for n in nodes] == ["to_device", "to_device"]
    assert sum(n.op.name == "to_device" for n in e.after) == 2  # transfers are not fused
    assert_same(fused, unfused, "fused vs op-by-op")
    v = feed[x]
    np.testing.assert_allclose(fused, np.exp(-np.maximum(v * 2 - 1, 0)) * 3, rtol=1e-6)


def test_a_fetched_intermediate_is_computed_once_and_not_inside_the_group():
    def make():
        x = kg.placeholder(kg.float32, shape=[None], name="x")
        h = kg.tanh(x * 3.0)
        return [x], [h, h * h + 1.0]

    fused, unfused, cpu, e = _run_three_ways(make, [np.linspace(-1, 1, 4, dtype=np.float32)])
    assert [r.changes for r in e.passes if r.name == "fuse"] == [
        ["tanh <- mul", "add <- mul_1"]]
    add = _fused_nodes(e)[1]
    assert [i.name for i in add.inputs][0] == "tanh"  # reads the fetched value
    for f, u, c in zip(fused, unfused, cpu):
        assert_same(f, u, "fused vs op-by-op on CUDA")
        np.testing.assert_allclose(f, c, **TOL[f.dtype])


def test_run_time_errors_name_the_fused_members_and_the_users_line():
    # Shapes are checked when the plan is made for the fed shapes; what can still fail in
    # the kernel is the device: here the broadcast result (2**48 floats, a petabyte) cannot
    # be allocated. Nothing is launched; the group's own nodes are named.
    g = kg.Graph()
    with g.as_default(), kg.device("cuda"):
        a, b, c = (kg.placeholder(kg.float32, shape=[None, None, None]) for _ in range(3))
        y = kg.tanh(a + b) * c
    side = np.zeros(1 << 16, np.float32)
    feed = {a: side.reshape(-1, 1, 1), b: side.reshape(1, -1, 1), c: side.reshape(1, 1, -1)}
    with kg.Session(g) as sess:
        assert [r.changes for r in sess.explain(y, feed).passes if r.name == "fuse"] == [
            ["mul <- add tanh"]]
        with pytest.raises(kg.errors.InvalidArgumentError,
                           match=r"in node 'mul' \(op fused_\w+, fused from add, tanh, mul\)"
                                 r"(.|\n)*y = kg.tanh\(a \+ b\) \* c"):
            sess.run(y, feed)


def test_integer_powers_stay_unfused_and_still_refuse_negative_exponents():
    g = kg.Graph()
    with g.as_default(), kg.device("cuda"):
        k = kg.placeholder(kg.int64, shape=[None])
        e = kg.placeholder(kg.int64, shape=[None])
        y = (k + 1) ** e * 2
    with kg.Session(g) as sess:
        changes = next(r for r in sess.explain(y, {k: None, e: None}).passes
                       if r.name == "fuse").changes
        assert changes == []  # pow on ints checks its exponents first; add and mul are alone
        np.testing.assert_array_equal(sess.run(y, {k: [1, 2], e: [3, 0]}), [16, 2])
        with pytest.raises(kg.errors.InvalidArgumentError,
                           match=r"node 'pow'(.|\n)*negative integer powers"):
            sess.run(y, {k: [1, 2], e: [3, -1]})


def _only_here():
    x = kg.placeholder(kg.float64, shape=[None], name="x")
    return [x], [kg.minimum(kg.abs(x) - 3.0, x)]  # a pattern no other test compiles


def test_a_pattern_compiles_once_per_process_and_its_source_is_kept(tmp_path):
    kernels = []
    for _ in range(2):
        g, feeds, fetches = _build("cuda", _only_here)
        with kg.Session(g) as sess:
            kernels.append(_fused_nodes(sess.explain(fetches, dict.fromkeys(feeds)))[0])
    first, second = (n.op.forward for n in kernels)
    assert first.kernels is second.kernels  # the same compiled (flat, strided) pair
    assert kernels[0].op.name == kernels[1].op.name and kernels[0].op.name not in FORWARDS
    assert kg.devices.forward_for(kernels[0].op, kg.device("cuda")) is first
    # numba's disk cache checks only this file's date: a changed body must change the file.
    assert "# scalar bodies: kernelgraph/kernels/cpu.py " in first.source
    files = {f.name: f.read_text() for f in (tmp_path / "fused").glob("cuda_*.py")}
    assert f"cuda_{first.key}.py" in files and files[f"cuda_{first.key}.py"] == first.source


def test_a_group_never_spans_two_devices():
    g, (x,), (y,) = _build("cuda", lambda: ([x := kg.placeholder(kg.float32, [None])],
                                            [kg.relu(x * 2.0)]))
    mul = y.inputs[0]
    on_cpu = passes._clone(y, y.inputs, device=kg.device("cpu"))  # read without a transfer
    program = passes.Program([x, mul.inputs[1], mul, on_cpu], [on_cpu], frozenset({id(x)}))
    nodes, _, changes = fusion.fuse(program, {id(on_cpu)})
    assert changes == [] and nodes == program.nodes


# -- the kernels themselves ------------------------------------------------------------------
def _kernel_pair(fn, arity):
    from numba import cuda

    scope = {"cuda": cuda, "f": cuda.jit(device=True)(fn)}
    exec(E.nary_kernel_source(arity, cache=False), scope)  # noqa: S102 - the kernels under test
    return scope["flat"], scope["strided"]


def _four(a, b, c, d):  # plain operators: a GPU's device code cannot call Python functions
    return a * b + c - d


@settings(max_examples=6)
@given(shapes=broadcast_shapes(4), data=st.data())
def test_the_launcher_maps_any_number_of_broadcast_operands(shapes, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    values = [rng.integers(-5, 6, s).astype(np.float64) for s in shapes]
    out_shape = np.broadcast_shapes(*shapes)
    out = cuda_core.empty(out_shape, np.float64)
    E.launch_map(_kernel_pair(_four, 4), out, [cuda_core.to_device(v) for v in values],
                 shapes)
    a, b, c, d = values
    assert_same(out.copy_to_host(), a * b + c - d, "4 operands vs NumPy")


def test_a_fused_kernel_checks_its_operands():
    k = FusedCudaKernel("k" * 20, "", _kernel_pair(_add, 2), ["add"],
                        (np.float32, np.float32), np.float32)
    x = cuda_core.to_device(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(k(x, 1.5).copy_to_host(), [1.5, 2.5, 3.5])
    assert k(cuda_core.to_device(np.ones((0, 3), np.float32)), x).shape == (0, 3)
    with pytest.raises(TypeError, match="host NumPy array"):
        k(np.ones(3, np.float32), x)
    with pytest.raises(TypeError, match="operand 1 of .* is float64; the kernel was "
                                        "generated for float32"):
        k(x, cuda_core.to_device(np.ones(3)))
    with pytest.raises(TypeError, match="takes 2 operands, got 1"):
        k(x)
    with pytest.raises(ValueError, match=r"could not be broadcast .* \(3,\) \(2,\)"):
        k(x, cuda_core.to_device(np.ones(2, np.float32)))
