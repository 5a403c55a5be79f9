"""One method table for both kinds of tensor (kernelgraph/ops/methods.py) and PyTorch's shape
functions (kernelgraph/ops/shape_functions.py), in both modes.

A function written once with methods computes eagerly on tensors and builds a graph on
placeholders; the Session's result equals the eager result. Shape functions are checked
against NumPy's equivalents and their gradients against what the copies and sums they stand
for give."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg
import kernelgraph.compat.v1 as tf1

RNG = np.random.default_rng(21)
X = RNG.standard_normal((3, 4)).astype(np.float32)
Y = RNG.standard_normal((4, 3)).astype(np.float32)
MASK = RNG.random((3, 4)) > 0.5

# name -> a function of tensors written with methods only (each is one "program").
PROGRAMS = {
    "relu_sum_dim": lambda x, y: x.relu().sum(dim=0),
    "sum_axis": lambda x, y: x.sum(axis=1),
    "sum_keepdim": lambda x, y: x.sum(dim=0, keepdim=True),
    "tanh_mean": lambda x, y: x.tanh().mean(),
    "exp_max": lambda x, y: x.exp().max(),
    "max_dim_values": lambda x, y: x.max(dim=1).values,
    "max_dim_indices": lambda x, y: x.max(1)[1],
    "min_dim": lambda x, y: x.min(dim=0)[0],
    "reshape_view": lambda x, y: x.reshape(6, 2).view(2, -1) * 2.0,
    "permute_transpose": lambda x, y: x.permute(1, 0).transpose(0, 1).t(),
    "T_matmul": lambda x, y: x.T.matmul(y.T),
    "pow_abs": lambda x, y: x.pow(2).abs() + x.square(),
    "unsqueeze_squeeze": lambda x, y: x.unsqueeze(1).squeeze(),
    "flatten": lambda x, y: x.flatten(),
    "softmax": lambda x, y: x.softmax(dim=1),
    "log_softmax": lambda x, y: x.log_softmax(-1),
    "clamp": lambda x, y: x.clamp(min=-0.5) + x.clamp(max=0.2) + x.clamp(-0.1, 0.1),
    "casts": lambda x, y: x.double().float() + x.long().float() + x.int().double().float(),
    "bool_cast": lambda x, y: (x > 0).float().sum(0),
    "sigmoid_neg": lambda x, y: x.sigmoid().neg().add(1.0).mul(y.t()),
    "expand_repeat": lambda x, y: x[:, :1].expand(3, 4) + x.repeat(1, 2)[:, :4],
    "narrow_chunk": lambda x, y: x.narrow(1, 1, 2) + x.chunk(2, dim=1)[1],
    "split_cat": lambda x, y: kg.cat(x.split([1, 3], dim=1)[::-1], dim=1),
    "clone_view_as": lambda x, y: x.clone().view_as(y).reshape_as(x),
    "expand_as": lambda x, y: x.sum(1, keepdim=True).expand_as(x),
    "detach": lambda x, y: (x * 2.0).detach() + x,
    "size_numel": lambda x, y: x * float(x.numel() + x.size(1) + x.dim() + x.size()[0]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_one_function_both_modes(name):
    program = PROGRAMS[name]
    eager = program(kg.tensor(X), kg.tensor(Y))
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[3, 4])
        y = kg.placeholder(kg.float32, shape=[4, 3])
        node = program(x, y)
        assert isinstance(node, kg.Node)
        with kg.Session() as sess:
            static = sess.run(node, {x: X, y: Y})
    np.testing.assert_allclose(static, eager.numpy(), rtol=1e-6)
    assert static.dtype == eager.dtype


def test_same_gradient_both_modes():
    def loss(w, x):
        return (x.matmul(w).tanh() - 1.0).pow(2).mean()

    w0 = RNG.standard_normal((4, 2)).astype(np.float32)
    w = kg.tensor(w0, requires_grad=True)
    loss(w, kg.tensor(X)).backward()
    g = kg.Graph()
    with g.as_default():
        pw = kg.placeholder(kg.float32, shape=[4, 2])
        px = kg.placeholder(kg.float32, shape=[None, 4])
        (grad,) = kg.gradients(loss(pw, px), [pw])
        with kg.Session() as sess:
            got = sess.run(grad, {pw: w0, px: X})
    np.testing.assert_allclose(got, w.grad.numpy(), rtol=1e-5)


def test_detach_is_stop_gradient_in_static_mode():
    x = kg.placeholder(kg.float32, shape=[2])
    (grad,) = kg.gradients((x * x).detach().sum() + x.sum(), [x])
    with kg.Session() as sess:
        np.testing.assert_array_equal(sess.run(grad, {x: [3.0, 4.0]}), [1.0, 1.0])


def test_methods_on_unknown_batch():
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.float32, shape=[None, 4])
        out = x.unsqueeze(1).flatten(1).view(-1, 2, 2).sum(dim=(1, 2))
        assert out.shape == (None,)
        with kg.Session() as sess:
            got = sess.run(out, {x: X})
    np.testing.assert_allclose(got, X.sum(1), rtol=1e-6)


@pytest.mark.parametrize("name", ["item", "tolist", "numpy", "backward", "add_", "zero_",
                                  "cuda"])
def test_eager_only_methods_name_static_mode(name):
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float32, shape=[2], name="x")
    with pytest.raises(TypeError, match="'x'") as e:
        getattr(x, name)()
    assert "static mode" in str(e.value)


def test_graph_node_keeps_its_own_attributes():
    x = tf1.placeholder(tf1.float32, shape=[2])
    assert x.op.type == "Placeholder"  # TF1's op type, on its Operation
    assert x.name.endswith(":0") and x.shape.as_list() == [2]  # TF1's, by x's type
    assert callable(x.eval)


def test_card_methods_come_for_free():
    named = [op.name for op in kg.ops.OPS.values() if "method" in op.traits]
    for name in named:
        assert callable(getattr(kg.Tensor, name)), name
        assert callable(getattr(kg.Node, name)), name


# -- shape functions ------------------------------------------------------------------------
def test_split_is_pytorchs_and_tf1s_by_call():
    t = kg.tensor(np.arange(10.0))
    assert [p.tolist() for p in kg.split(t, 4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert isinstance(kg.split(t, 4), tuple)
    assert [len(p) for p in kg.split(t, [3, 7])] == [3, 7]
    assert [len(p) for p in kg.split(t, 5, axis=0)] == [2, 2, 2, 2, 2]  # TF1: 5 pieces
    assert [len(p) for p in tf1.split(t, 5)] == [2, 2, 2, 2, 2]
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum"):
        kg.split(t, [3, 3])


def test_chunk_sizes_as_pytorch():
    assert [len(p) for p in kg.chunk(kg.arange(5), 3)] == [2, 2, 1]
    assert [len(p) for p in kg.arange(6).chunk(4)] == [2, 2, 2]
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0"):
        kg.chunk(kg.arange(5), 0)


def test_transpose_is_pytorchs_and_tf1s_by_call():
    a = RNG.standard_normal((2, 3, 4))
    t = kg.tensor(a)
    np.testing.assert_array_equal(kg.transpose(t, 0, 2).numpy(), a.swapaxes(0, 2))
    np.testing.assert_array_equal(kg.transpose(t, dim0=1, dim1=2).numpy(), a.swapaxes(1, 2))
    np.testing.assert_array_equal(kg.transpose(t, (1, 2, 0)).numpy(), a.transpose(1, 2, 0))
    np.testing.assert_array_equal(kg.transpose(t).numpy(), a.transpose())
    np.testing.assert_array_equal(kg.permute(t, (2, 0, 1)).numpy(), a.transpose(2, 0, 1))
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions"):
        kg.t(t)


@pytest.mark.parametrize("fn, ref", [
    (lambda t: kg.unsqueeze(t, -1), lambda a: a[..., None]),
    (lambda t: kg.squeeze(kg.unsqueeze(t, 0)), lambda a: a),
    (lambda t: kg.squeeze(t[:1], 0), lambda a: a[0]),
    (lambda t: kg.squeeze(t, 1), lambda a: a),  # dim 1 is not 1: kept
    (lambda t: kg.flatten(t), lambda a: a.reshape(-1)),
    (lambda t: kg.flatten(kg.unsqueeze(t, 0), 1), lambda a: a.reshape(1, -1)),
    (lambda t: kg.unflatten(t, 1, (2, -1)), lambda a: a.reshape(3, 2, 2)),
    (lambda t: kg.narrow(t, 1, -3, 2), lambda a: a[:, 1:3]),
    (lambda t: kg.expand(t[:, :1], 2, 3, -1), lambda a: np.broadcast_to(a[:, :1], (2, 3, 1))),
    (lambda t: kg.repeat(t, 2, 1, 3), lambda a: np.tile(a, (2, 1, 3))),
    (lambda t: kg.cat([t, t * 2], dim=-1), lambda a: np.concatenate([a, a * 2], -1)),
    (lambda t: kg.concat([t, t], 0), lambda a: np.concatenate([a, a])),
    (lambda t: kg.stack([t, t], dim=2), lambda a: np.stack([a, a], 2)),
    (lambda t: kg.swapaxes(t, 0, 1), lambda a: a.T),
    (lambda t: kg.clone(t) * 1.0, lambda a: a),
    (lambda t: kg.stack(kg.unbind(t, 1)), lambda a: np.stack(list(a.T))),
    (lambda t: kg.flip(t, (0, 1)), lambda a: a[::-1, ::-1]),
    (lambda t: t.masked_fill(kg.tensor(MASK), 0.5), lambda a: np.where(MASK, 0.5, a)),
    (lambda t: t.index_select(1, kg.tensor([3, 0, 3])), lambda a: a[:, [3, 0, 3]]),
])
def test_shape_functions_match_numpy_with_gradients(fn, ref):
    a = RNG.standard_normal((3, 4))
    t = kg.tensor(a, requires_grad=True)
    out = fn(t)
    want = ref(a)
    np.testing.assert_array_equal(out.detach().numpy(), want)
    # d(sum(out * w))/da by finite differences of the NumPy reference (linear: exact).
    w = RNG.standard_normal(want.shape)
    (out * kg.tensor(w)).sum().backward()
    grad = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[i] = 1.0
        grad[i] = (ref(a + e) * w).sum() - (ref(a) * w).sum()
    np.testing.assert_allclose(t.grad.numpy(), grad, rtol=1e-9, atol=1e-9)


def test_clone_is_a_copy():
    a = np.arange(4.0)
    c = kg.clone(kg.tensor(a))
    assert not np.shares_memory(c.numpy(), a)
    assert c.tolist() == a.tolist()


def test_shape_errors_as_pytorch():
    x = kg.ones(2, 3)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                         r"of \[-3, 2\], but got 3\)"):
        kg.unsqueeze(x, 3)
    with pytest.raises(IndexError, match=r"\[-2, 1\], but got 2"):
        x.squeeze(2)
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims"):
        x.repeat(2)
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        x.narrow(1, 2, 2)


def test_static_shapes_known_where_they_can_be():
    x = kg.placeholder(kg.float32, shape=[None, 3])
    assert kg.unsqueeze(x, 0).shape == (1, None, 3)
    assert x.flatten().shape == (None,)
    assert x.t().shape == (3, None)
    assert x.size() == (None, 3) and x.dim() == 2
    with pytest.raises(kg.errors.ShapeError, match="unknown"):
        x.chunk(2)
    with pytest.raises(kg.errors.ShapeError, match="unknown"):
        x.numel()


def test_casts_and_type_methods():
    t = kg.tensor([1.7, -2.2])
    assert t.long().dtype == kg.int64 and t.long().tolist() == [1, -2]
    assert t.int().dtype == kg.int32
    assert t.double().dtype == kg.float64
    assert t.bool().tolist() == [True, True]
    assert t.float() is t  # already float32: itself, as in PyTorch
    assert t.to(kg.float64).dtype == kg.float64
    assert t.type_as(kg.tensor([1])).dtype == kg.int64


def test_one_element_integer_tensor_is_an_index():
    # as PyTorch's quickstart does: classes[pred[0].argmax(0)]
    classes = ["a", "b", "c"]
    pred = kg.tensor([[0.1, 0.7, 0.2]])
    assert classes[pred[0].argmax(0)] == "b"
    assert classes[kg.tensor(2)] == "c" and classes[kg.tensor(True)] == "b"
    assert list(range(kg.tensor(3))) == [0, 1, 2]
    for bad in (kg.tensor(1.0), kg.tensor([1, 2])):
        with pytest.raises(TypeError, match="only integer tensors of a single element"):
            classes[bad]


def test_matmul_out_writes_into_the_given_tensor():
    a = kg.tensor(X)
    out = kg.zeros(3, 3)
    result = kg.matmul(a, a.T, out=out)
    assert result is out
    np.testing.assert_allclose(out.numpy(), X @ X.T, rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        kg.matmul(kg.tensor(X, requires_grad=True), a.T, out=kg.zeros(3, 3))
    with pytest.raises(RuntimeError, match="does not resize out="):
        kg.matmul(a, a.T, out=kg.zeros(2))


def test_new_factories_keep_dtype_and_device():
    ints = kg.tensor([1, 2])
    assert ints.new_ones(2, 3).tolist() == [[1, 1, 1], [1, 1, 1]]
    assert ints.new_ones(2).dtype == kg.int64
    assert ints.new_zeros((2,)).tolist() == [0, 0]
    assert ints.new_full((2,), 3.5).tolist() == [3, 3]  # PyTorch: x's dtype wins
    assert ints.new_tensor([1.5]).tolist() == [1]
    assert ints.new_empty(4).shape == (4,)
    floats = kg.tensor([1.0], requires_grad=True)
    made = floats.new_ones(2, dtype=kg.float64)
    assert made.dtype == kg.float64 and not made.requires_grad
    assert floats.new_zeros(1, requires_grad=True).requires_grad


def test_backward_takes_pytorchs_gradient_keyword():
    a = kg.tensor([2.0, 3.0], requires_grad=True)
    q = 3 * a ** 3
    q.backward(gradient=kg.tensor([1.0, 0.5]))
    np.testing.assert_allclose(a.grad.numpy(), [36.0, 40.5])
    with pytest.raises(NotImplementedError, match="autograd.grad"):
        (a * 2).sum().backward(inputs=[a])


def test_torch_softmax_takes_dim_positionally_and_dtype():
    x = kg.tensor(X)
    e = np.exp(X - X.max(axis=1, keepdims=True))
    np.testing.assert_allclose(kg.softmax(x, dim=1).numpy(), e / e.sum(1, keepdims=True),
                               rtol=1e-5)
    np.testing.assert_allclose(kg.log_softmax(x, 1).numpy(),
                               np.log(e / e.sum(1, keepdims=True)), rtol=1e-5, atol=1e-6)
    assert kg.softmax(kg.tensor([1, 2]), 0, dtype=kg.float64).dtype == kg.float64
    p = kg.placeholder(kg.float32, shape=[None, 4])  # the cards' axis= still builds graphs
    with kg.Session() as sess:
        got = sess.run(kg.softmax(p, axis=1), {p: X})
    np.testing.assert_allclose(got, e / e.sum(1, keepdims=True), rtol=1e-5)
