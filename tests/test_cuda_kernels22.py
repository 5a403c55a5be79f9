"""Issue 22, "kernels that earn their place": the CUDA reductions, softmax / cross-entropy,
bias-gradient sums and the GEMM (``kernelgraph/kernels/cuda/{reduce,nn,linalg}.py``).

- every launch goes through :func:`launcher.launch`, so a recording replays them: replayed
  on new input data written into the same device arrays, they give what a fresh call gives;
- reductions over strided axes (a bias gradient ``sum(g, axis=0)``) take the *column*
  kernel, split into partials and reduced again when there are few outputs; the launch plans
  a GPU would get fill it (checked with the GPU's tuning, without running them);
- a mean divides in the reduction's last pass, bit for bit as the CPU divides;
- row launches (softmax, cross-entropy) give blocks as few rows as keep the GPU busy;
- the GEMM reads its shared tiles as 16-byte quads: checked exactly (integer-valued data)
  on geometries where a thread owns one and two quads each way, every operand layout;
- where NVIDIA's NVVM is installed (no GPU needed), the kernels compile for sm_90 with
  numba's real typing, which the simulator skips, and the GEMM's shared loads are vectors.

Without a GPU all of this runs on numba's simulator (../conftest.py): shapes stay tiny.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from kernelgraph.kernels.cuda import core, launcher
from kernelgraph.kernels.cuda import linalg as CL
from kernelgraph.kernels.cuda import nn as CN
from kernelgraph.kernels.cuda import reduce as CR
from kernelgraph.ops.registry import OPS
from tests.test_cuda_elementwise import FORWARDS
from tests.test_cuda_elementwise import check as check_reduce
from tests.test_cuda_nn import check as check_nn
from tests.test_cuda_nn import check_error, rand
from tests.test_ops import BOOL, F32, F64, I32, I64, assert_same, to_device

ROOT = Path(__file__).resolve().parents[1]
CUDA_DIR = ROOT / "kernelgraph" / "kernels" / "cuda"
MY_FILES = ("reduce.py", "nn.py", "linalg.py")


# -- every launch through the launcher, and replayable ------------------------------------
@pytest.mark.parametrize("name", MY_FILES)
def test_no_launch_bypasses_the_launcher(name):
    """``kernel[blocks, threads](...)`` is a call of a subscript; none may remain."""
    tree = ast.parse((CUDA_DIR / name).read_text(encoding="utf-8"))
    direct = [n.lineno for n in ast.walk(tree)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)]
    assert direct == [], f"{name}: direct kernel launches at lines {direct}"
    assert "launcher.launch(" in (CUDA_DIR / name).read_text(encoding="utf-8")


def _split_tuning(monkeypatch):
    """Tuning that makes the simulator split outputs and run second passes."""
    for attr, value in (("_TARGET_BLOCKS", 8), ("_TARGET_THREADS", 16), ("_MAX_BLOCKS", 3),
                        ("_PER_THREAD", 2), ("_COL_X", 3), ("_COL_Y", 3)):
        monkeypatch.setattr(CR, attr, value)


REPLAYED = {  # name -> (function of device arrays, host inputs)
    "bias gradient": (lambda x, _: CR.sum_to_like(x, np.zeros(5, F32)),
                      (rand((13, 5), F32, 1), None)),
    "sum axis 0": (lambda x, _: CR.reduce_sum(x, 0), (rand((9, 4), F64, 2), None)),
    "mean": (lambda x, _: CR.reduce_mean(x, (0, 2)), (rand((5, 2, 3), F32, 3), None)),
    "max": (lambda x, _: CR.reduce_max(x), (rand((7, 3), I32, 4), None)),
    "softmax": (lambda x, _: CN.softmax(x), (rand((5, 6), F32, 5), None)),
    "log_softmax axis 0": (lambda x, _: CN.log_softmax(x, 0), (rand((4, 3), F64, 6), None)),
    "gemm": (lambda x, y: CL.gemm(x, y, trans_b=True), (rand((6, 5), F32, 7),
                                                        rand((7, 5), F32, 8))),
    "cumsum": (lambda x, _: CR.cumsum(x, 1), (rand((3, 5), I64, 9), None)),
}


@pytest.mark.parametrize("name", sorted(REPLAYED))
def test_recorded_launches_replay_on_new_data(monkeypatch, name):
    """Record a call's launches, write new values into its input arrays, replay: the
    output array the call returned now holds what a fresh call on the new values gives
    (bit for bit), so replays reuse every buffer, partials included."""
    _split_tuning(monkeypatch)
    fn, host = REPLAYED[name]
    dev = [core.to_device(h) if h is not None else None for h in host]
    with launcher.recording() as launches:
        out = fn(*dev)
    assert launches and not launches.blockers, name
    assert all(one.kernel is not None for one in launches)
    fresh_host = [None if h is None else (h[::-1] * 2 + 1).astype(h.dtype) for h in host]
    for d, h in zip(dev, fresh_host):
        if d is not None:
            d.copy_to_device(np.ascontiguousarray(h))
    launcher.replay(launches)
    want = fn(*[core.to_device(h) if h is not None else None for h in fresh_host])
    assert_same(core.to_host(out), core.to_host(want), name)


def test_cross_entropy_tells_a_recording_it_checks_labels_on_the_host():
    logits, labels = core.to_device(rand((4, 3), F32, 1)), core.to_device(np.array([0, 2, 1, 2]))
    with launcher.recording() as launches:
        CN.softmax_cross_entropy(logits, labels)
    assert launches and launches.blockers == ["checks its labels on the host"]


# -- reductions ----------------------------------------------------------------------------
STRIDED = [((13, 5), 0), ((3, 7, 5), (0, 1)), ((3, 7, 5), 1), ((4, 3, 5), (0, 2)),
           ((11, 1, 2), 0)]


@pytest.mark.parametrize("shape, axis", STRIDED)
@pytest.mark.parametrize("dtype", [F32, F64, I32, I64, BOOL])
def test_strided_reductions_against_the_cpu(monkeypatch, shape, axis, dtype):
    """sum/max/min/prod/all/any (and mean of floats) over leading or middle axes, split
    into partials whenever the tuning says so, every dtype the kernels take."""
    _split_tuning(monkeypatch)
    x = rand(shape, dtype, 17)
    names = ["sum", "max", "min", "prod", "all", "any"] + (["mean"] if dtype in (F32, F64)
                                                          else [])
    for name in names:
        check_reduce(name, x, axis=axis)


def test_the_column_kernel_splits_and_reduces_its_partials_again(monkeypatch):
    _split_tuning(monkeypatch)
    kind, blocks, threads, splits = CR.reduce_plan(((5,), (1,)), ((13,), (5,)), 5, 13)
    # 2 tiles of 3 columns x 3 chunks of 5 rows (pieces of >= 3 lanes x 2): 6 items, 3 blocks
    assert (kind, blocks, threads, splits) == ("column", 3, (3, 3), 3)
    x = np.random.default_rng(3).integers(-9, 9, (13, 5)).astype(F64)
    assert np.array_equal(core.to_host(CR.reduce_sum(core.to_device(x), 0)),
                          OPS["sum"].forward(x, axis=0))  # integer-valued: exact


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("shape, axis", [((7, 5), 0), ((7, 5), 1), ((37,), None),
                                         ((3, 7, 5), (0, 2))])
def test_mean_divides_like_the_cpu_bit_for_bit(monkeypatch, dtype, shape, axis):
    """The mean is the CUDA sum divided as the CPU divides, ``np.divide(total, count,
    dtype=x.dtype)``, to the bit (the sums themselves may differ from the CPU's in the last
    place: they add in another order)."""
    _split_tuning(monkeypatch)
    x = np.random.default_rng(5).normal(size=shape).astype(dtype)
    got = core.to_host(CR.reduce_mean(core.to_device(x), axis))
    total = core.to_host(CR.reduce_sum(core.to_device(x), axis))
    count = x.size // max(total.size, 1)
    assert_same(got, np.asarray(np.divide(total, count, dtype=x.dtype)), f"mean{shape}")
    np.testing.assert_allclose(got, OPS["mean"].forward(x, axis=axis),
                               rtol=4 * np.finfo(dtype).eps)
    # Same bits run after run: no atomics, an order fixed by the shapes and launch sizes.
    assert_same(core.to_host(CR.reduce_mean(core.to_device(x), axis)), got, "again")


def test_mean_over_an_empty_axis_is_nan():
    got = core.to_host(CR.reduce_mean(core.to_device(np.zeros((0, 3), F32)), 0))
    assert got.dtype == F32 and got.shape == (3,) and np.isnan(got).all()


GPU_REDUCE_TUNING = {"_TARGET_BLOCKS": 1024, "_TARGET_THREADS": 1 << 18,
                     "_MAX_BLOCKS": 65535 * 4, "_BLOCK_MIN_INNER": 32, "_PER_THREAD": 16,
                     "_COL_X": 32, "_COL_Y": 8}


@pytest.mark.parametrize("rows, cols, kind, blocks, splits", [
    (512, 1024, "column", 128, 4),   # the MLP's bias gradient at batch 512: 4 chunks of 128
    (64, 1024, "column", 32, 1),     # at batch 64: one launch, 32 blocks of 32 x 8
    (512, 10, "column", 4, 4),       # the head's bias: 4 blocks, then one
])
def test_bias_gradient_plans_fill_a_gpu(monkeypatch, rows, cols, kind, blocks, splits):
    """With a GPU's tuning, a bias gradient sum(g, axis=0) gets a grid of 32 x 8 blocks
    over its columns (a thread per column gave 1024 columns 4 blocks)."""
    for attr, value in GPU_REDUCE_TUNING.items():
        monkeypatch.setattr(CR, attr, value)
    got = CR.reduce_plan(((cols,), (1,)), ((rows,), (cols,)), cols, rows)
    assert got == (kind, blocks, (32, 8), splits)


def test_a_whole_array_sum_plans_many_blocks_then_one(monkeypatch):
    for attr, value in GPU_REDUCE_TUNING.items():
        monkeypatch.setattr(CR, attr, value)
    monkeypatch.setattr(core, "SIMULATOR", False)  # block sizes a GPU would get
    monkeypatch.setattr(core, "THREADS", 256)
    kind, blocks, threads, splits = CR.reduce_plan(((), ()), ((1 << 20,), (1,)), 1, 1 << 20)
    assert (kind, blocks, threads, splits) == ("block", 256, 256, 256)
    assert CR.reduce_plan(((1,), (256,)), ((256,), (1,)), 1, 256, split=False) == \
        ("block", 1, 256, 1)


# -- row launches: softmax and cross-entropy ------------------------------------------------
def test_row_launch_with_a_gpus_tuning(monkeypatch):
    for attr, value in (("BLOCK", 256), ("ROW_SLOTS", 1024), ("_TARGET_BLOCKS", 264),
                        ("_WARP", 32)):
        monkeypatch.setattr(CN, attr, value)
    # 64 rows of 10 classes: 32 blocks of two rows (a warp each), not 4 blocks of 16 rows.
    assert CN.row_launch(64, 10, 1024) == (32, 32, 16)
    assert CN.row_launch(512, 10, 1024) == (256, 32, 16)
    assert CN.row_launch(8, 100000, 1024)[1:] == (1024, 1024)  # few long rows: wide groups
    assert CN.row_launch(8, 100000, 256)[1:] == (256, 256)  # conv's kernels: BLOCK slots


@pytest.mark.parametrize("nrows", [1, 2, 3, 7, 40])
@pytest.mark.parametrize("length", [1, 3, 8, 9, 40])
def test_row_launch_invariants(nrows, length):
    for most in (CN.BLOCK, CN.ROW_SLOTS):
        blocks, threads, group = CN.row_launch(nrows, length, most)
        assert group & (group - 1) == 0 and threads % group == 0 and threads <= most
        assert blocks >= 1 and group <= most


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(7, 3), (2, 40), (9, 1), (3, 17)])
def test_softmax_over_several_rows_per_block_and_wide_groups(name, shape):
    for dtype in (F32, F64):
        check_nn(name, rand(shape, dtype, 21, scale=20.0), terms=shape[-1])


@pytest.mark.parametrize("rows, classes", [(7, 3), (2, 40), (9, 10)])
@pytest.mark.parametrize("dl, dy", [(F32, I64), (F64, I32)])
def test_cross_entropy_over_several_rows_per_block(rows, classes, dl, dy):
    logits = rand((rows, classes), dl, 22, scale=10.0)
    labels = np.random.default_rng(23).integers(0, classes, rows).astype(dy)
    check_nn("softmax_cross_entropy", logits, labels, terms=classes)
    check_nn("softmax_cross_entropy_grad", logits, labels, rand((rows,), dl, 24),
             terms=classes)
    bad = labels.copy()
    bad[-1] = classes
    check_error("softmax_cross_entropy", logits, bad)


# -- the GEMM's quads ------------------------------------------------------------------------
QUAD_TILES = [(32, 32, 8, 4, 8), (32, 32, 8, 8, 4), (16, 16, 8, 4, 4)]


@pytest.mark.parametrize("tiles", QUAD_TILES)
@pytest.mark.parametrize("dtype", [F32, F64, I32, I64])
def test_gemm_quads_exact(tiles, dtype):
    """Geometries where a thread owns 8 rows (two quads) or 4 (one), partial tiles each
    way, every layout, a broadcast batch: integer-valued data, so the products are exact."""
    rng = np.random.default_rng(31)
    m, k, n = 37, 19, 41
    for trans_a in (False, True):
        for trans_b in (False, True):
            a = rng.integers(-4, 5, (2, m, k)).astype(dtype)
            b = rng.integers(-4, 5, (k, n)).astype(dtype)
            sa = np.ascontiguousarray(np.swapaxes(a, -1, -2)) if trans_a else a
            sb = np.ascontiguousarray(b.T) if trans_b else b
            got = CL.gemm(to_device(sa), to_device(sb), trans_a, trans_b, tiles=tiles)
            assert_same(core.to_host(got), a @ b, f"{tiles} {dtype} {trans_a} {trans_b}")


@pytest.mark.parametrize("tiles", [(24, 16, 8, 4, 4), (16, 16, 8, 8, 4), (16, 16, 8, 4, 8)])
def test_gemm_refuses_tiles_without_whole_quads(tiles):
    with pytest.raises(ValueError, match="split the tiles evenly"):
        CL._gemm_kernel(np.dtype(F32), False, True, tiles)


@pytest.mark.parametrize("dtype", [F32, I32, I64])
def test_gemm_split_k_sums_its_slices(monkeypatch, dtype):
    """A product with too few output tiles is cut into K slices (computed as a batch, then
    summed as columns): integer-valued data, so exact, every layout; a batched product,
    and a K with no divisor, are not cut."""
    monkeypatch.setattr(CL, "_TARGET_BLOCKS", 8)
    monkeypatch.setattr(CL, "_MIN_SLICE_K", 4)
    assert CL.gemm_plan(5, 7, 24, 1, dtype)[1] == 6
    assert CL.gemm_plan(5, 7, 19, 1, dtype)[1] == 1 and CL.gemm_plan(5, 7, 24, 2, dtype)[1] == 1
    rng = np.random.default_rng(51)
    for (sa, sb), (trans_a, trans_b) in [(((5, 24), (24, 7)), (False, False)),
                                         (((24, 5), (24, 7)), (True, False)),
                                         (((5, 24), (7, 24)), (False, True)),
                                         (((2, 3, 24), (24, 7)), (False, False)),  # folded
                                         (((2, 5, 24), (2, 24, 7)), (False, False))]:
        a, b = rng.integers(-4, 5, sa).astype(dtype), rng.integers(-4, 5, sb).astype(dtype)
        with launcher.recording() as launches:
            got = CL.gemm(to_device(a), to_device(b), trans_a, trans_b)
        want = (np.swapaxes(a, -1, -2) if trans_a else a) @ (b.T if trans_b else b)
        assert_same(core.to_host(got), want, f"{sa} {sb} {trans_a} {trans_b}")
        assert (len(launches) > 1) == (len(sb) == 2), "split exactly the 2-D products"


@pytest.mark.parametrize("m, n, k, tiles, splits", [
    (4096, 4096, 4096, (128, 128, 32, 16, 16), 1),
    (512, 1024, 784, (64, 64, 32, 16, 16), 1),   # the MLP's first layer at batch 512
    (64, 1024, 784, (32, 32, 32, 8, 8), 2),      # at batch 64: 128 blocks, not 8
    (64, 10, 1024, (32, 32, 32, 8, 8), 8),       # the head at batch 64: 16 blocks, not 1
])
def test_gemm_plans_fill_a_gpu(monkeypatch, m, n, k, tiles, splits):
    monkeypatch.setattr(core, "SIMULATOR", False)  # the geometries a GPU would get
    monkeypatch.setattr(CL, "_TARGET_BLOCKS", 128)
    assert CL.gemm_plan(m, n, k, 1, F32) == (tiles, splits)


def test_matmul_forward_still_matches_the_cpu():
    a, b = rand((3, 9, 6), F32, 41, scale=1.0), rand((6, 11), F32, 42, scale=1.0)
    np.testing.assert_allclose(core.to_host(FORWARDS["sum"](to_device(a), axis=None)),
                               OPS["sum"].forward(a), rtol=1e-6)
    check_nn("matmul", a, b, terms=6)


# -- the real GPU's compiler (no GPU needed) -------------------------------------------------
_COMPILE = textwrap.dedent("""
    import sys
    import numpy as np
    import numba
    from numba import cuda, types as T
    try:
        from numba.cuda.cudadrv import nvvm
        nvvm.NVVM()
        import numba.cuda.dispatcher as dispatcher
        dispatcher.get_current_device  # device functions ask the device's capability
    except Exception as exc:  # no NVVM here: nothing to compile with
        print("SKIP", type(exc).__name__, exc)
        sys.exit(0)

    class _Sm90:  # what a device function asks of the current device, without one
        compute_capability = (9, 0)

    dispatcher.get_current_device = lambda: _Sm90()
    from kernelgraph.kernels import cpu
    from kernelgraph.kernels.cuda import linalg as L, nn as N, reduce as R

    i64, f64, b1 = T.int64, T.float64, T.boolean
    def arr(dt):
        return numba.from_dtype(np.dtype(dt))[::1]
    def tup(n):
        return T.UniTuple(i64, n)
    def ptx(kernel, *sig):
        return cuda.compile_ptx(kernel.py_func, sig, cc=(9, 0))[0]

    dims = (tup(1), tup(1), tup(2), tup(2))
    ptx(R._column_kernel(cpu._add, np.dtype("f8")), arr("f4"), arr("f4"), *dims, i64, i64,
        i64, f64, f64)
    ptx(R._block_kernel(cpu._add, np.dtype("i8")), arr("i4"), arr("i8"), *dims, i64, i64,
        i64, f64)
    ptx(R._thread_kernel(cpu._maximum), arr("?"), arr("?"), *dims, i64, i64, i64, b1, f64)
    rows, columns = N._softmax_kernels(np.dtype("f4"))
    ptx(rows, arr("f4"), arr("f4"), i64, i64, i64, b1)
    ptx(N._xent_kernel(np.dtype("f4")), arr("f4"), arr("i8"), arr("f4"), arr("f4"),
        arr("f4"), i64, i64, i64, i64, i64, b1, arr("i8"))
    gemm_sig = (i64,) * 3 + (tup(1),) * 3 + (i64,) * 4
    for dt, vec, tiles in (("f4", "ld.shared.v4.f32", None), ("f8", "ld.shared.v2.f64", None),
                           ("f4", "ld.shared.v4.f32", (32, 32, 32, 8, 8))):
        text = ptx(L._gemm_kernel(np.dtype(dt), False, True, tiles), arr(dt), arr(dt),
                   arr(dt), *gemm_sig)
        assert vec in text, f"{dt} {tiles}: the shared tiles are not read as vectors"
    print("OK")
""")


def test_kernels_compile_for_sm90_with_numbas_real_typing():
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}
    run = subprocess.run([sys.executable, "-c", _COMPILE], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    if run.stdout.startswith("SKIP"):
        pytest.skip(f"no NVIDIA NVVM to compile with: {run.stdout.strip()}")
    assert run.returncode == 0 and run.stdout.strip().endswith("OK"), run.stderr[-3000:]
