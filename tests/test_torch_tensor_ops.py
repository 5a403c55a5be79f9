"""PyTorch's tensor functions and methods of ops/torch_select.py, ops/torch_tensor_ops.py and
eager/tensor_extras.py against real PyTorch's recorded outputs
(tests/recorded/record_torch_tensor_ops.py): values, grad_fn names and gradients in eager
mode, the same values and gradients in static mode, and the gradients against finite
differences."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import kernelgraph as kg
from tests.test_ops import finite_difference_grad


@pytest.fixture(scope="module")
def rec():
    import json
    from pathlib import Path

    return json.loads((Path(__file__).parent / "recorded" / "torch_tensor_ops.json").read_text())


X = [[0.5, -1.25, 3.0, 2.0], [1.5, 4.0, -0.75, 0.25], [2.5, 2.5, -3.0, 1.0]]
W = [[1.0, -2.0, 0.5, 3.0], [0.25, 1.5, -1.0, 2.0], [-0.5, 1.0, 2.0, -1.5]]
SRC = [[10.0, 20.0, 30.0, 40.0], [50.0, 60.0, 70.0, 80.0]]
SIDX = [[1, 0, 2, 0], [0, 2, 1, 1]]
IDX = [[0, 3], [2, 2], [1, 0]]
MED = [[3.0, 1.0, 4.0, 2.0], [9.0, 2.0, 6.0, 5.0], [0.5, 7.0, 7.0, 1.0]]
MASK = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]
Y = [[3.0, 1.0, 4.0, 1.5, 5.0], [9.0, 2.0, 6.0, 5.5, 3.5]]
SQ = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.5]]

def _i(values, like):
    """An index tensor beside ``like``: a constant in a graph, an eager tensor otherwise."""
    return kg.constant(np.array(values)) if isinstance(like, kg.Node) else kg.tensor(values)


# name -> (the function of float64 tensors, its inputs, the recorded case's path)
CASES = {
    "gather_dim1": (lambda x: kg.gather(x, 1, _i(IDX, x)), [X], ("gather", "dim1")),
    "gather_dim0": (lambda x: x.gather(0, _i([[2, 0, 1, 1]], x)), [X], ("gather", "dim0")),
    "scatter_src": (lambda x, s: kg.scatter(x, 0, _i(SIDX, x), s), [X, SRC],
                    ("scatter", "src_dim0")),
    "scatter_value": (lambda x: x.scatter(0, _i(SIDX, x), 7.5), [X], ("scatter", "value")),
    "topk": (lambda x: kg.topk(x, 2).values, [Y], ("topk", "grad")),
    "tril": (lambda x: kg.tril(x), [X], ("triangles", "tril")),
    "triu1": (lambda x: kg.triu(x, 1), [X], ("triangles", "triu1")),
    "trace": (lambda x: x.trace(), [SQ], ("trace", "square")),
    "trace_wide": (lambda x: x.trace(), [X], ("trace", "wide")),
    "diag_vec": (lambda x: kg.diag(x), [[1.0, 2.0, 3.0]], ("diag", "vec")),
    "diag_mat": (lambda x: kg.diag(x), [X], ("diag", "mat")),
    "dist2": (lambda x, z: kg.dist(x, z), [X, W], ("dist", "p2")),
    "dist1": (lambda x, z: kg.dist(x, z, 1), [X, W], ("dist", "p1")),
    "masked_select": (lambda x: x.masked_select(_i(MASK, x)), [X],
                      ("masked_select", "grad")),
    "arccos": (kg.arccos, [[0.5, -0.25, 0.9]], ("arc", "arccos")),
    "arcsin": (kg.arcsin, [[0.5, -0.25, 0.9]], ("arc", "arcsin")),
    "arctan": (kg.arctan, [[0.5, -0.25, 0.9]], ("arc", "arctan")),
    "median": (lambda x: x.median(), [MED], ("median", "all")),
    "median_dim": (lambda x: x.median(0).values, [MED], ("median", "dim_grad")),
    "select": (lambda x: x.select(1, 2), [X], ("select",)),
    "cumprod1": (lambda x: kg.cumprod(x, 1), [X], ("cumprod", "dim1")),
    "cumprod0": (lambda x: x.cumprod(0), [X], ("cumprod", "dim0")),
}
# Engine cards print PyTorch's grad_fn; the compositions print their last op's.
CARDS = {"tril", "triu1", "gather_dim1", "gather_dim0", "scatter_src", "scatter_value", "topk",
         "median", "median_dim", "arccos", "arcsin", "arctan", "select"}


def _name(dtype) -> str:
    return f"torch.{dtype}"


def _case(rec, path):
    for key in path:
        rec = rec[key]
    return rec


def _weights(shape):
    n = int(np.prod(shape))
    return np.linspace(-1.0, 2.0, n).reshape(shape)


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_values_gradients_and_grad_fn(rec, name):
    fn, inputs, path = CASES[name]
    want = _case(rec, path)
    xs = [kg.tensor(v, dtype=kg.float64, requires_grad=True) for v in inputs]
    out = fn(*xs)
    np.testing.assert_allclose(out.tolist(), want["value"], rtol=1e-13, atol=1e-13)
    if name in CARDS:
        assert repr(out.grad_fn).split()[0] == f"<{want['grad_fn']}"
    (out * kg.tensor(_weights(tuple(out.shape)))).sum().backward()
    for x, g in zip(xs, want["grads"]):
        np.testing.assert_allclose(x.grad.numpy(), g, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_finite_differences(rec, name):
    fn, inputs, _ = CASES[name]
    arrays = [np.array(v, np.float64) for v in inputs]
    w = None

    def f(*arrs):
        out = fn(*[kg.tensor(a) for a in arrs]).numpy()
        return float((out * _weights(out.shape)).sum())

    xs = [kg.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*xs)
    w = _weights(tuple(out.shape))
    (out * kg.tensor(w)).sum().backward()
    for i, x in enumerate(xs):
        np.testing.assert_allclose(x.grad.numpy(), finite_difference_grad(f, arrays, i),
                                   rtol=1e-6, atol=1e-6)


STATIC = ["cumprod1", "gather_dim1", "gather_dim0", "scatter_src", "scatter_value", "topk", "tril",
          "triu1", "trace", "diag_vec", "diag_mat", "dist2", "median", "median_dim", "select",
          "arccos"]


@pytest.mark.parametrize("name", STATIC)
def test_static_mode_gives_the_same_values_and_gradients(rec, name):
    fn, inputs, path = CASES[name]
    want = _case(rec, path)
    arrays = [np.array(v, np.float64) for v in inputs]
    with kg.Graph().as_default() as g:
        phs = [kg.placeholder(kg.float64, shape=a.shape) for a in arrays]
        out = fn(*phs)
        loss = kg.reduce_sum(out * kg.constant(_weights(tuple(out.shape))))
        grads = kg.gradients(loss, phs)
    with kg.Session(g) as sess:
        value, *got = sess.run([out, *grads], dict(zip(phs, arrays)))
    np.testing.assert_allclose(value, want["value"], rtol=1e-13, atol=1e-13)
    for a, b in zip(got, want["grads"]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_gather_matches_pytorch(rec):
    r = rec["gather"]
    assert kg.gather(kg.tensor(X), -1, kg.tensor(IDX)).tolist() == r["neg"]
    assert kg.gather(kg.tensor([[1, 2], [3, 4]]), 1, kg.tensor([[0, 0], [1, 0]])).tolist() == \
        r["int"]
    with pytest.raises(RuntimeError) as e:
        kg.gather(kg.tensor(X), 1, kg.tensor([[4]]))
    assert str(e.value) == r["out_of_range"]["message"]
    # TF's spelling still gives TF's gather (slices along an axis)
    assert kg.gather(kg.tensor(X), kg.tensor([2, 0])).tolist() == [X[2], X[0]]
    assert kg.gather(kg.tensor(X), kg.tensor([1]), axis=1).tolist() == [[r[1]] for r in X]


def test_scatter_matches_pytorch(rec):
    r = rec["scatter"]
    out = kg.zeros(2, 5, dtype=kg.float64).scatter(1, kg.tensor([[4, 0], [1, 3]]),
                                                   kg.tensor([[1.0, 2.0], [3.0, 4.0]],
                                                             dtype=kg.float64))
    assert out.tolist() == r["dim1"]
    x = kg.tensor(X, dtype=kg.float64)
    assert x.scatter_(0, kg.tensor(SIDX), kg.tensor(SRC, dtype=kg.float64),
                      reduce="add") is x
    assert x.tolist() == r["add_"]
    y = kg.tensor(X, dtype=kg.float64)
    y.scatter_(0, kg.tensor(SIDX), kg.tensor(SRC, dtype=kg.float64), reduce="multiply")
    assert y.tolist() == r["multiply_"]
    z = kg.tensor(X, dtype=kg.float64)
    z.scatter_(1, kg.tensor([[3], [0], [1]]), -2.0)
    assert z.tolist() == r["value_"]
    assert kg.zeros(3, 4).scatter_(1, kg.tensor([[2], [0], [3]]), 1).tolist() == r["one_hot"]
    with pytest.raises(RuntimeError) as e:
        kg.tensor(X).scatter_(0, kg.tensor(SIDX), kg.tensor(SRC), reduce="max")
    assert str(e.value) == r["bad_reduce"]["message"]
    with pytest.raises(RuntimeError) as e:
        kg.tensor(X).scatter(0, kg.tensor([[3]]), 1.0)
    assert str(e.value) == r["out_of_range"]["message"]


@pytest.mark.parametrize("case,call", [
    ("gather_rank", lambda z: z.gather(1, kg.tensor([0, 1]))),
    ("gather_size", lambda z: z.gather(0, kg.tensor([[0, 1, 2, 0, 1]]))),
    ("scatter_rank", lambda z: z.scatter(1, kg.tensor([0, 1]), 1.0)),
    ("scatter_size", lambda z: z.scatter(0, kg.tensor([[0, 1, 2, 0, 1]]), 1.0)),
    ("scatter_src", lambda z: z.scatter(0, kg.tensor([[0, 1, 2]]), kg.zeros(1, 2)))])
def test_an_index_that_does_not_fit_is_refused_in_pytorchs_words(rec, case, call):
    want = rec["shape_errors"][case]
    with pytest.raises(RuntimeError) as e:
        call(kg.zeros(3, 4))
    assert str(e.value) == want["message"] and want["type"] == "RuntimeError"


def test_scatter_in_place_is_recorded_for_autograd():
    x = kg.tensor(X, dtype=kg.float64, requires_grad=True)
    y = x * 1.0
    y.scatter_(1, kg.tensor([[3], [0], [1]]), 0.0)
    assert repr(y.grad_fn).startswith("<ScatterBackward1 ")
    y.sum().backward()
    want = np.ones((3, 4))
    want[0, 3] = want[1, 0] = want[2, 1] = 0.0
    np.testing.assert_array_equal(x.grad.numpy(), want)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.scatter_(1, kg.tensor([[0], [0], [0]]), 1.0)


def test_topk_matches_pytorch(rec):
    r = rec["topk"]
    y = kg.tensor(Y, dtype=kg.float64)
    values, indices = kg.topk(y, 3)
    assert values.tolist() == r["values"] and indices.tolist() == r["indices"]
    assert [a.tolist() for a in kg.topk(y, 2, largest=False)] == r["smallest"]
    assert [a.tolist() for a in y.topk(1, dim=0)] == r["dim0"]
    assert repr(kg.topk(kg.tensor([3.0, 1.0, 2.0]), 2)) == r["repr"]
    assert type(kg.topk(y, 1)).__name__ == r["type"]
    assert kg.topk(y, 1).indices.dtype == kg.int64
    with pytest.raises(RuntimeError) as e:
        kg.topk(y, 6)
    assert str(e.value) == r["k_too_big"]["message"]


def test_topk_keeps_ties_in_index_order_and_nan_as_largest():
    x = kg.tensor([1.0, float("nan"), 3.0, 3.0])
    assert x.topk(3).indices.tolist() == [1, 2, 3]
    assert x.topk(2, largest=False).indices.tolist() == [0, 2]


def test_median_matches_pytorch(rec):
    r = rec["median"]
    m = kg.tensor(MED, dtype=kg.float64)
    values, indices = m.median(1)
    assert values.tolist() == r["values"] and indices.tolist() == r["indices"]
    assert type(m.median(1)).__name__ == r["dim_type"]
    assert list(m.median(1, keepdim=True).values.shape) == r["keepdim"]


def test_views_strides_and_pointers_match_pytorch(rec):
    r = rec["views"]
    a = kg.arange(12.0).reshape(3, 4)
    assert list(a.stride()) == r["stride"] and list(a.t().stride()) == r["t_stride"]
    assert list(a[1:, ::2].stride()) == r["slice_stride"]
    assert a[1:, ::2].storage_offset() == r["slice_offset"]
    assert a[2].storage_offset() == r["row_offset"] and a.storage_offset() == r["offset"]
    assert a.stride(0) == r["stride0"] and a.stride(-1) == r["stride_neg"]
    assert a[1].data_ptr() - a.data_ptr() == r["row_ptr_bytes"]
    assert (a.t().data_ptr() == a.data_ptr()) == r["t_ptr_same"]
    assert a.get_device() == r["get_device"]
    assert a.t().ravel().tolist() == r["ravel"]
    assert (a.ravel().data_ptr() == a.data_ptr()) == r["ravel_shares"]


def test_storage_is_the_shared_memory_as_pytorch_shows_it(rec):
    r = rec["storage"]
    st = kg.arange(4.0).reshape(2, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        storage = st.t().storage()
    assert [str(w.message) for w in caught] == r["warning"]
    assert repr(storage) == r["repr"] and len(storage) == r["len"]
    assert storage.tolist() == r["list"] and storage[1] == r["item"]
    assert storage.element_size() == r["element_size"]
    assert (storage.data_ptr() == st.data_ptr()) == r["same_ptr"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert (st[1].storage().data_ptr() == st.data_ptr()) == r["row_same_ptr"]


def test_shape_changes_in_place_match_pytorch(rec):
    r = rec["inplace_shape"]
    b = kg.zeros(2, 3)
    assert b.unsqueeze_(1) is b and list(b.shape) == r["unsqueeze_"]
    c = kg.zeros(2, 1, 3, 1)
    c.squeeze_()
    assert list(c.shape) == r["squeeze_"]
    d = kg.zeros(2, 1, 3)
    d.squeeze_(1)
    assert list(d.shape) == r["squeeze_dim"]
    e = kg.arange(6.0).reshape(2, 3)
    e.transpose_(0, 1)
    assert e.tolist() == r["transpose_"] and list(e.stride()) == r["transpose_stride"]
    with pytest.raises(RuntimeError, match="leaf Variable"):
        kg.ones(2, 3, requires_grad=True).unsqueeze_(0)
    x = kg.ones(2, 3, requires_grad=True)
    y = x * 2.0
    y.unsqueeze_(0)
    (y * kg.tensor(np.arange(6.0).reshape(1, 2, 3))).sum().backward()
    assert list(y.shape) == [1, 2, 3] and x.grad.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]


def test_resize_matches_pytorch(rec):
    r = rec["resize"]
    f = kg.arange(6.0)
    f.resize_(2, 2)
    assert f.tolist() == r["shrink"]
    g = kg.arange(6.0).reshape(2, 3)
    g.resize_(3, 2)
    assert g.tolist() == r["same"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        h = kg.arange(6.0).resize(3, 2)
    assert h.tolist() == r["resize"] and [str(w.message) for w in caught] == r["warning"]
    grown = kg.arange(2.0).resize_(2, 3)
    assert list(grown.shape) == r["grow_shape"]
    assert grown.reshape(-1)[:2].tolist() == r["grow_prefix"]
    with pytest.raises(RuntimeError) as e:
        kg.tensor([1.0, 2.0], requires_grad=True).resize_(1)
    assert str(e.value) == r["leaf"]["message"]


def test_new_matches_pytorch(rec):
    r = rec["new"]
    n = kg.tensor([1, 2], dtype=kg.int32)
    assert list(n.new(2, 3).shape) == r["shape"] and _name(n.new(2, 3).dtype) == r["dtype"]
    assert n.new([5, 6, 7]).tolist() == r["data"] and _name(n.new([5, 6]).dtype) == \
        r["data_dtype"]
    assert list(n.new().shape) == r["empty"] and list(n.new(kg.Size([4])).shape) == r["size"]


def test_triangles_with_offsets(rec):
    r = rec["triangles"]
    assert kg.tril(kg.tensor(X, dtype=kg.float64), -1).tolist() == r["tril_neg"]
    assert kg.tensor(X, dtype=kg.float64).triu(-1).tolist() == r["triu_m"]


def test_diag_offsets_and_dist_norms(rec):
    r = rec["diag"]
    assert kg.diag(kg.tensor([1.0, 2.0], dtype=kg.float64), 1).tolist() == r["vec1"]
    assert kg.diag(kg.tensor(X, dtype=kg.float64), -1).tolist() == r["mat_neg"]
    assert kg.diag(kg.tensor(X, dtype=kg.float64), 2).tolist() == r["mat_2"]
    d = rec["dist"]
    x, w = kg.tensor(X, dtype=kg.float64), kg.tensor(W, dtype=kg.float64)
    assert kg.dist(x, w, float("inf")).item() == d["pinf"]
    assert kg.dist(x, w, 3).item() == pytest.approx(d["p3"], rel=1e-14)


def test_masked_select_broadcasts_the_mask(rec):
    row = kg.tensor([True, False, True, True])
    assert kg.masked_select(kg.tensor(X, dtype=kg.float64), row).tolist() == \
        rec["masked_select"]["row"]


def test_unique_and_nonzero_match_pytorch(rec):
    u = rec["unique"]
    q = kg.tensor(u["input"])
    values, inverse, counts = kg.unique(q, return_inverse=True, return_counts=True)
    assert (values.tolist(), inverse.tolist(), counts.tolist()) == (
        u["values"], u["inverse"], u["counts"])
    assert kg.tensor([2.5, 1.0, 2.5]).unique().tolist() == u["float"]
    assert [a.tolist() for a in q.unique(return_inverse=True)] == u["only_inverse"]
    assert kg.unique(kg.tensor([[1, 3], [3, 2]]), return_inverse=True)[1].tolist() == \
        u["matrix_inverse"]
    nz = rec["nonzero"]
    t = kg.tensor(nz["input"])
    assert t.nonzero().tolist() == nz["index"] and _name(t.nonzero().dtype) == nz["dtype"]
    assert [a.tolist() for a in t.nonzero(as_tuple=True)] == nz["tuple"]
    assert kg.nonzero(kg.tensor([0, 3, 0, 4])).tolist() == nz["vec"]
    with kg.Graph().as_default(), pytest.raises(TypeError, match="eager tensor"):
        kg.unique(kg.placeholder(kg.int64, shape=[3]))


def test_range_fmod_meshgrid_addc_match_pytorch(rec):
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        r = kg.range(1, 4)
    assert r.tolist() == rec["range"]["int"] and _name(r.dtype) == rec["range"]["dtype"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert kg.range(0, 1, 0.25).tolist() == rec["range"]["step"]
    assert kg.fmod(kg.tensor([-3.0, -2.5, 2.5, 3.0]), 2).tolist() == rec["fmod"]["f"]
    assert kg.fmod(kg.tensor([-7, 7, -3]), kg.tensor([3, -3, 2])).tolist() == rec["fmod"]["i"]
    m = rec["meshgrid"]
    for indexing in ("ij", "xy"):
        grids = kg.meshgrid(kg.tensor([1, 2, 3]), kg.tensor([4, 5]), indexing=indexing)
        assert [g.tolist() for g in grids] == m[indexing]
    with pytest.warns(UserWarning, match="indexing argument"):
        kg.meshgrid(kg.tensor([1, 2]), kg.tensor([3]))
    x = kg.tensor(X, dtype=kg.float64)
    w = kg.tensor(W, dtype=kg.float64)
    assert x.clone().addcmul_(w, x, value=0.5).tolist() == rec["addc"]["addcmul_"]
    np.testing.assert_allclose(x.clone().addcdiv_(x, w, value=-2).tolist(),
                               rec["addc"]["addcdiv_"], rtol=1e-15)


def test_bitwise_bincount_histc_match_pytorch(rec):
    b = rec["bitwise_and"]
    assert kg.bitwise_and(kg.tensor([12, 10, -1]), kg.tensor([10, 6, 5])).tolist() == b["i"]
    assert kg.tensor([True, False, True]).bitwise_and(kg.tensor([True, True, False])).tolist() \
        == b["b"]
    with pytest.raises(NotImplementedError, match="not implemented for 'Float'"):
        kg.bitwise_and(kg.tensor([1.0]), kg.tensor([2.0]))
    c = rec["bincount"]
    assert kg.bincount(kg.tensor([1, 1, 3, 0, 1])).tolist() == c["plain"]
    assert kg.bincount(kg.tensor([1, 2]), minlength=5).tolist() == c["minlength"]
    assert kg.bincount(kg.tensor([0, 2, 2]),
                       weights=kg.tensor([0.5, 1.0, 2.0], dtype=kg.float64)).tolist() == \
        c["weights"]
    h = rec["histc"]
    assert kg.histc(kg.tensor([1.0, 2.0, 1.0, 4.0]), bins=4).tolist() == h["plain"]
    assert kg.histc(kg.tensor([0.0, 0.5, 1.0, 2.5, 3.0]), bins=3, min=0, max=3).tolist() == \
        h["range"]


def test_multinomial_method_is_the_function():
    p = kg.tensor([0.1, 0.0, 0.9])
    kg.manual_seed(3)
    a = p.multinomial(4, replacement=True).tolist()
    kg.manual_seed(3)
    assert kg.multinomial(p, 4, replacement=True).tolist() == a and 1 not in a


@pytest.mark.parametrize("key,dtype,args", [
    ("from_to", kg.float32, (0, 10)), ("to", kg.float32, (7,)), ("f32", kg.float32, ()),
    ("f64", kg.float64, ()), ("i64", kg.int64, ()), ("i32_from_to", kg.int32, (-5, 5))])
def test_random_draws_pytorchs_numbers(rec, key, dtype, args):
    kg.manual_seed(0)
    assert kg.zeros(5, dtype=dtype).random_(*args).tolist() == rec["random_"][key]


def test_set_num_threads_sets_numbas():
    import numba

    before = kg.get_num_threads()
    try:
        kg.set_num_threads(1)
        assert numba.get_num_threads() == 1 == kg.get_num_threads()
    finally:
        kg.set_num_threads(before)
    with pytest.raises(RuntimeError, match="positive"):
        kg.set_num_threads(0)


@pytest.mark.skipif(not kg.cuda.is_available(), reason="no CUDA (or simulator)")
def test_on_cuda_the_functions_agree_with_the_cpu():
    x = np.array(X)
    cpu = kg.tensor(x)
    gpu = kg.tensor(x, device="cuda")
    idx = np.array(IDX)
    assert kg.gather(gpu, 1, kg.tensor(idx, device="cuda")).cpu().tolist() == \
        kg.gather(cpu, 1, kg.tensor(idx)).tolist()
    assert [a.cpu().tolist() for a in kg.topk(gpu, 2)] == [a.tolist() for a in kg.topk(cpu, 2)]
    assert kg.tril(gpu).cpu().tolist() == kg.tril(cpu).tolist()
    assert kg.diag(gpu).cpu().tolist() == kg.diag(cpu).tolist()
    s = kg.tensor(np.array(SRC), device="cuda")
    assert gpu.scatter(0, kg.tensor(np.array(SIDX), device="cuda"), s,
                       reduce="multiply").cpu().tolist() == \
        cpu.scatter(0, kg.tensor(np.array(SIDX)), kg.tensor(np.array(SRC)),
                    reduce="multiply").tolist()
    with pytest.raises(RuntimeError, match="out of bounds for dimension 1 with size 4"):
        kg.gather(gpu, 1, kg.tensor([[4]], device="cuda"))
