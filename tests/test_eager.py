"""Eager mode: PyTorch's tensor, autograd and error semantics (kernelgraph.eager)."""

import math

import numpy as np
import pytest

import kernelgraph as kg


def close(t, expected):
    """Assert that a tensor (or array) holds ``expected`` (float32 tolerance)."""
    got = t.detach().numpy() if isinstance(t, kg.Tensor) else np.asarray(t)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


# -- construction and dtype inference -----------------------------------------------------------
@pytest.mark.parametrize("data, dtype", [
    (2.5, kg.float32),
    ([1.0, 2.0], kg.float32),
    ([1, 2.5], kg.float32),
    (3, kg.int64),
    ([[1, 2], [3, 4]], kg.int64),
    (True, kg.bool_),
    (np.zeros(2, np.float64), kg.float64),
    (np.zeros(2, np.float32), kg.float32),
    (np.zeros(2, np.int32), kg.int32),
    (np.float64(1.5), kg.float64),
])
def test_tensor_dtype_inference(data, dtype):
    t = kg.tensor(data)
    assert t.dtype == dtype
    assert t.shape == np.shape(data)


def test_tensor_explicit_dtype_and_copy():
    src = np.array([1.0, 2.0])
    t = kg.tensor(src, dtype=kg.float32)
    assert t.dtype == kg.float32
    src[0] = 100.0
    assert t.tolist() == [1.0, 2.0]  # kg.tensor copies its data


def test_leaf_properties():
    x = kg.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    assert x.shape == (1, 3)
    assert x.dtype == kg.float32
    assert x.requires_grad is True
    assert x.is_leaf
    assert x.grad is None
    assert x.grad_fn is None
    y = x * 2.0
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None


def test_numpy_item_detach():
    t = kg.tensor([1.0, 2.0])
    arr = t.numpy()
    assert isinstance(arr, np.ndarray) and arr.dtype == np.float32
    assert kg.tensor(4.5).item() == 4.5
    assert isinstance(kg.tensor(3).item(), int)

    x = kg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert np.shares_memory(d.numpy(), x.detach().numpy())  # detach shares memory (PyTorch)
    close(d, [1.0, 2.0])


def test_item_on_multi_element_raises():
    with pytest.raises(RuntimeError, match="a Tensor with 3 elements cannot be converted to "
                                           "Scalar"):
        kg.tensor([1.0, 2.0, 3.0]).item()


def test_requires_grad_on_int_tensor_raises():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        kg.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        kg.tensor([1, 2]).requires_grad_()


def test_ragged_list_raises():
    with pytest.raises(ValueError, match="nested list of numbers with equal lengths"):
        kg.tensor([[1.0, 2.0], [3.0]])


# -- methods and operators ---------------------------------------------------------------------
def test_methods():
    m = kg.tensor([[1.0, -2.0], [3.0, -4.0]])
    close(m.relu(), [[1.0, 0.0], [3.0, 0.0]])
    close(m.sum(axis=0), [4.0, -6.0])
    close(m.sum(dim=1), [-1.0, -1.0])
    mean = m.mean(dim=1, keepdim=True)
    assert mean.shape == (2, 1)
    close(mean, [[-0.5], [-0.5]])
    close(m.mean(axis=0, keepdims=True), [[2.0, -3.0]])
    close(kg.exp(m), np.exp(m.numpy()))
    assert m.sum().shape == ()


def test_attributes_by_position():
    m = kg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    s = kg.sum(m, 1)
    close(s, [3.0, 7.0])
    s.backward(kg.tensor([1.0, 2.0]))
    close(m.grad, [[1.0, 1.0], [2.0, 2.0]])
    close(kg.mean(m, 0, True), [[2.0, 3.0]])
    assert kg.reshape(m, (4,)).shape == (4,)
    assert kg.cast(m, kg.int64).dtype == kg.int64
    with pytest.raises(TypeError, match="at most \\(axis, keepdims\\)"):
        kg.sum(m, 1, False, 3)


def test_python_operators():
    a = kg.tensor([1.0, 2.0])
    b = kg.tensor([4.0, 8.0])
    close(a + b, [5.0, 10.0])
    close(a - b, [-3.0, -6.0])
    close(a * b, [4.0, 16.0])
    close(a / b, [0.25, 0.25])
    close(a ** 2, [1.0, 4.0])
    close(-a, [-1.0, -2.0])
    m = kg.tensor([[1.0, 2.0], [3.0, 4.0]])
    close(m @ kg.tensor([[1.0], [1.0]]), [[3.0], [7.0]])


def test_reflected_operators_with_python_scalars():
    x = kg.tensor([1.0, 2.0])
    close(2.0 - x, [1.0, 0.0])
    close(3 / x, [3.0, 1.5])
    close(2 ** x, [2.0, 4.0])
    close(1 + x, [2.0, 3.0])
    close(3 * x, [3.0, 6.0])
    for result in (2.0 - x, 3 / x, 2 ** x, x * 2.0, x + 1):
        assert result.dtype == kg.float32  # a Python scalar never widens a tensor


def test_float32_stays_float32_after_float64_loops_exist():
    # A float64 op compiles a float64 kernel loop; float32 ops must not start using it.
    _ = kg.tensor(np.ones(2)) * kg.tensor(np.ones(2))
    x = kg.tensor([1.0, 2.0])
    assert (x * x).dtype == kg.float32
    assert (x * 2.0).dtype == kg.float32
    assert (x + 1).dtype == kg.float32


@pytest.mark.parametrize("fn, value, grad", [
    (lambda x: 2.0 - x, 0.5, -1.0),
    (lambda x: 3 / x, 2.0, -3.0 / 2.25),
    (lambda x: 2 ** x, 2.0 ** 1.5, 2.0 ** 1.5 * math.log(2.0)),
    (lambda x: x ** 2, 2.25, 3.0),
    (lambda x: -x, -1.5, -1.0),
    (lambda x: 1 + x, 2.5, 1.0),
    (lambda x: 2 * x, 3.0, 2.0),
    (lambda x: x / 3.0, 0.5, 1.0 / 3.0),
])
def test_operator_gradients(fn, value, grad):
    x = kg.tensor(1.5, requires_grad=True)
    y = fn(x)
    y.backward()
    assert y.item() == pytest.approx(value, rel=1e-6)
    assert x.grad.item() == pytest.approx(grad, rel=1e-6)


def test_broadcasting_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(2,\) and \(3,\) cannot be broadcast"):
        kg.tensor([1.0, 2.0]) + kg.tensor([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4,\)"):
        kg.ones(2, 3) * kg.ones(4)


def test_matmul_inner_dim_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\) @ \(4, 5\)"):
        kg.ones(2, 3) @ kg.ones(4, 5)


# -- autograd ------------------------------------------------------------------------------------
def test_backward_scalar_product():
    a = kg.tensor(15.0, requires_grad=True)
    b = kg.tensor(20.0, requires_grad=True)
    c = a * b
    c.backward()
    assert c.item() == 300.0
    assert a.grad.item() == 20.0 and b.grad.item() == 15.0
    assert a.grad.requires_grad is False


def test_backward_broadcast_and_reductions():
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    w = kg.tensor(np.ones((3, 2), np.float32), requires_grad=True)
    (x + w).sum().backward()
    assert x.grad.shape == (2,) and w.grad.shape == (3, 2)
    close(x.grad, [3.0, 3.0])
    m = kg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    m.mean(dim=1, keepdim=True).sum().backward()
    close(m.grad, np.full((2, 2), 0.5))


def test_leaf_grad_has_leaf_dtype():
    x = kg.tensor([1.0, 2.0], requires_grad=True)  # float32
    y = (x * kg.tensor(np.array([3.0, 4.0]))).sum()  # float64 result, as in PyTorch
    assert y.dtype == kg.float64
    y.backward()
    assert x.grad.dtype == kg.float32  # PyTorch: a gradient has its tensor's dtype
    close(x.grad, [3.0, 4.0])


def test_backward_with_explicit_grad():
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    (x * 2.0).backward(kg.tensor([1.0, 3.0]))
    close(x.grad, [2.0, 6.0])


def test_backward_on_non_scalar_without_grad_raises():
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                           "outputs"):
        (x * 2.0).backward()


def test_backward_grad_shape_mismatch_raises():
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        x.sum().backward(kg.tensor([1.0, 2.0]))


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        kg.tensor(2.0).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        (kg.tensor([1.0]) * 2.0).sum().backward()


def test_second_backward_through_freed_graph_raises():
    x = kg.tensor(3.0, requires_grad=True)
    y = x * x
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward_and_grads_accumulate():
    x = kg.tensor(3.0, requires_grad=True)
    y = x * x
    y.backward(retain_graph=True)
    assert x.grad.item() == 6.0
    y.backward()
    assert x.grad.item() == 12.0


def test_gradients_accumulate_into_leaves_over_two_backward_calls():
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    (x * 3.0).sum().backward()
    (x * x).sum().backward()
    close(x.grad, [3.0 + 2.0, 3.0 + 4.0])
    x.grad = None
    (x * 3.0).sum().backward()
    close(x.grad, [3.0, 3.0])


def test_a_leaf_used_many_times_sums_its_gradients_without_writing_shared_arrays():
    # backward() sums a leaf's gradients in place, in an array it made itself: a gradient
    # a rule hands to two inputs (x + x), a retained gradient or a seed is never written.
    w = kg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = w + w
    h.retain_grad()
    total = h
    for k in range(4):
        total = total + w * float(k)
    total.sum().backward()
    close(w.grad, [2.0 + 0 + 1 + 2 + 3] * 3)
    close(h.grad, [1.0, 1.0, 1.0])
    # One RNN cell over three steps: b_ih and b_hh get the same gradient (one array from
    # the rule, for both), summed over the steps into two separate arrays.
    kg.random.seed(0)
    cell = kg.nn.RNNCell(2, 3)
    h = kg.zeros(1, 3)
    for t in range(3):
        h = cell(kg.tensor([[1.0, -0.5 * t]]), h)
    h.sum().backward()
    assert np.array_equal(cell.bias_ih.grad.numpy(), cell.bias_hh.grad.numpy())
    assert not np.shares_memory(cell.bias_ih.grad.numpy(), cell.bias_hh.grad.numpy())
    w_ih, w_hh, b_ih, b_hh = (p.detach().numpy().astype(np.float64)
                              for p in cell.parameters())
    hs, xs = [np.zeros(3)], [np.array([1.0, -0.5 * t]) for t in range(3)]
    for x in xs:
        hs.append(np.tanh(w_ih @ x + b_ih + w_hh @ hs[-1] + b_hh))
    dh, db = np.ones(3), np.zeros(3)
    for t in range(2, -1, -1):
        da = dh * (1 - hs[t + 1] ** 2)
        db += da
        dh = w_hh.T @ da
    np.testing.assert_allclose(cell.bias_ih.grad.numpy(), db, rtol=1e-5)


def test_leaf_backward():
    x = kg.tensor(3.0, requires_grad=True)
    x.backward()
    assert x.grad.item() == 1.0


def test_retain_grad_on_non_leaf():
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3.0
    h.retain_grad()
    kept_not = x * 2.0
    (h * h + kept_not).sum().backward()
    close(h.grad, [6.0, 12.0])
    assert kept_not.grad is None  # non-leaf grads are not kept unless asked for
    close(x.grad, [18.0 + 2.0, 36.0 + 2.0])


def test_register_hook_sees_and_replaces_grad_and_can_be_removed():
    w = kg.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def hook(g):
        seen.append(g.numpy().copy())
        return g * 10.0

    handle = w.register_hook(hook)
    (w * w).sum().backward()
    np.testing.assert_allclose(seen[0], [2.0, 4.0])
    close(w.grad, [20.0, 40.0])  # the hook's result replaced the gradient

    handle.remove()
    w.grad = None
    (w * w).sum().backward()
    close(w.grad, [2.0, 4.0])
    assert len(seen) == 1


def test_hook_returning_none_keeps_grad():
    w = kg.tensor(2.0, requires_grad=True)
    w.register_hook(lambda g: None)
    (w * 5.0).backward()
    assert w.grad.item() == 5.0


def test_hook_on_non_leaf_changes_what_flows_on():
    w = kg.tensor([1.0, 2.0], requires_grad=True)
    m = w * 2.0
    m.register_hook(lambda g: g * 0.0 + 1.0)
    (m * m).sum().backward()
    close(w.grad, [2.0, 2.0])


def test_no_grad_records_nothing():
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    with kg.no_grad():
        y = x * 2.0
        z = kg.exp(x).sum()
        assert not kg.is_grad_enabled()
    assert kg.is_grad_enabled()
    for t in (y, z):
        assert t.requires_grad is False
        assert t.grad_fn is None and t.is_leaf

    @kg.no_grad()
    def double(t):
        return t * 2.0

    assert double(x).requires_grad is False
    assert (x * 2.0).requires_grad is True


def test_create_graph_gives_a_differentiable_grad():
    x = kg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True, retain_graph=True)
    g = x.grad
    assert g.requires_grad and g.grad_fn is not None
    close(g, [3.0, 12.0, 27.0])
    x.grad = None
    g.sum().backward()
    close(x.grad, [6.0, 12.0, 18.0])  # d2/dx2 x**3 = 6x


def test_create_graph_retains_the_graph_by_default():
    x = kg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.sum().backward()
    close(x.grad, [6.0, 12.0, 18.0])


@pytest.mark.parametrize("fn, second", [
    ("tanh", lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    ("sigmoid", lambda x: (s := 1 / (1 + np.exp(-x))) * (1 - s) * (1 - 2 * s)),
    ("exp", np.exp),
])
def test_second_derivatives_of_rules_that_read_their_output(fn, second):
    # tanh's gradient is g * (1 - y**2) with y its output: differentiating the gradient
    # must go through y too (it was taken as a constant: tanh'' came out as no gradient).
    v = np.array([-1.5, 0.2, 0.8])
    x = kg.tensor(v, requires_grad=True)
    (g,) = kg.autograd.grad(getattr(x, fn)().sum(), x, create_graph=True)
    (g2,) = kg.autograd.grad(g.sum(), x)
    close(g2, second(v))


def test_autograd_grad_first_and_second_derivative():
    x = kg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x ** 3).sum()
    (g1,) = kg.autograd.grad(y, x, create_graph=True)
    close(g1, [3.0, 12.0, 27.0])
    assert g1.requires_grad
    (g2,) = kg.autograd.grad(g1.sum(), x)
    close(g2, [6.0, 12.0, 18.0])
    assert x.grad is None  # autograd.grad does not touch .grad of its inputs


def test_autograd_grad_several_inputs_and_unused():
    a = kg.tensor(2.0, requires_grad=True)
    b = kg.tensor(3.0, requires_grad=True)
    unused = kg.tensor(1.0, requires_grad=True)
    ga, gb = kg.autograd.grad(a * b, [a, b])
    assert (ga.item(), gb.item()) == (3.0, 2.0)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        kg.autograd.grad(a * b, [a, unused])
    ga, gu = kg.autograd.grad(a * b, [a, unused], allow_unused=True)
    assert ga.item() == 3.0 and gu is None


def test_autograd_grad_leaves_other_leaves_grad_untouched():
    a = kg.tensor(2.0, requires_grad=True)
    b = kg.tensor(3.0, requires_grad=True)
    (ga,) = kg.autograd.grad(a * b, a)
    assert ga.item() == 3.0
    assert b.grad is None  # torch.autograd.grad never writes .grad


def test_autograd_grad_wrt_non_leaf_has_no_side_effects():
    x = kg.tensor(2.0, requires_grad=True)
    h = x * 3.0
    z = h * h
    (gh,) = kg.autograd.grad(z, h, retain_graph=True)
    assert gh.item() == 12.0
    assert x.grad is None
    z.backward()
    assert h.grad is None  # h never asked for retain_grad()
    assert x.grad.item() == 36.0


def test_graph_of_lists_nodes_edges_and_values():
    x = kg.tensor([1.0, -2.0], requires_grad=True)
    y = (x * 2.0).relu().sum()
    graph = kg.graph_of(y)
    ops = [n["op"] for n in graph["nodes"]]
    assert ops == ["leaf", "mul", "relu", "sum"]
    by_op = {n["op"]: n for n in graph["nodes"]}
    np.testing.assert_allclose(by_op["leaf"]["value"], [1.0, -2.0])
    np.testing.assert_allclose(by_op["mul"]["value"], [2.0, -4.0])
    np.testing.assert_allclose(by_op["relu"]["value"], [2.0, 0.0])
    assert by_op["sum"]["value"] == 2.0 and by_op["sum"]["shape"] == ()
    assert by_op["mul"]["shape"] == (2,) and by_op["mul"]["dtype"] == "float32"
    ids = {n["op"]: n["id"] for n in graph["nodes"]}
    assert sorted(graph["edges"]) == sorted([(ids["leaf"], ids["mul"]), (ids["mul"], ids["relu"]),
                                             (ids["relu"], ids["sum"])])


def test_graph_of_tensor_without_history_is_empty():
    assert kg.graph_of(kg.tensor([1.0]) * 2.0) == {"nodes": [], "edges": []}


def test_integer_to_negative_integer_power_is_refused_in_both_modes():
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        kg.tensor([2, 3]) ** -1
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        kg.tensor([2, 3]) ** kg.tensor([-1, 1])
    g = kg.Graph()
    with g.as_default():
        x = kg.placeholder(kg.int64)
        y = x ** -1
        with kg.Session() as sess, pytest.raises(kg.errors.InvalidArgumentError,
                                                 match="negative integer powers"):
            sess.run(y, {x: [2]})
    assert (kg.tensor([2, 3]) ** 2).tolist() == [4, 9]


def test_cast_refuses_unsupported_dtypes():
    with pytest.raises(TypeError, match="dtype complex64 is not supported"):
        kg.cast(kg.tensor([1.0, 2.0]), dtype="complex64")
