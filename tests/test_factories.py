"""PyTorch's tensor factories on kernelgraph: signatures, dtype rules and values, against
NumPy (and, for linspace/arange/full/eye bit for bit, against torch's recorded values in
tests/test_torch_random.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import kernelgraph as kg


def values(t):
    return t.detach().numpy() if t.requires_grad else t.numpy()


@pytest.mark.parametrize("make, fill", [(kg.zeros, 0), (kg.ones, 1), (kg.empty, 0)])
def test_constant_factories_take_varargs_a_tuple_or_a_shape(make, fill):
    for args in [(2, 3), ((2, 3),), ([2, 3],), (kg.zeros(2, 3).shape,)]:
        t = make(*args)
        assert tuple(t.shape) == (2, 3) and t.dtype == kg.float32
        np.testing.assert_array_equal(values(t), np.full((2, 3), fill, np.float32))
    assert make(()).shape == () and make(0, 3).numpy().shape == (0, 3)
    assert make(2, dtype=kg.int64).dtype == kg.int64
    t = make(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    with pytest.raises(RuntimeError, match="floating point"):
        make(2, dtype=kg.int64, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-negative"):
        make(-1)
    with pytest.raises(TypeError, match="out="):
        make(2, out=kg.zeros(2))


def test_full_follows_the_fill_values_type():
    assert kg.full((2, 2), 7).dtype == kg.int64
    assert kg.full((2,), 1.5).dtype == kg.float32
    assert kg.full((2,), True).dtype == kg.bool_
    assert kg.full((3,), 2, dtype=kg.float64).tolist() == [2.0, 2.0, 2.0]
    np.testing.assert_array_equal(kg.full([2, 3], -1.25).numpy(), np.full((2, 3), -1.25))


def test_eye():
    np.testing.assert_array_equal(kg.eye(3).numpy(), np.eye(3, dtype=np.float32))
    np.testing.assert_array_equal(kg.eye(2, 4, dtype=kg.int64).numpy(), np.eye(2, 4, dtype=int))
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        kg.eye(-1)


def test_arange_counts_and_dtypes_as_pytorch():
    assert kg.arange(5).tolist() == [0, 1, 2, 3, 4] and kg.arange(5).dtype == kg.int64
    assert kg.arange(1, 4).tolist() == [1, 2, 3]
    assert kg.arange(-5, 5, 3).tolist() == [-5, -2, 1, 4]
    assert kg.arange(5.0).dtype == kg.float32
    assert kg.arange(0, 5, dtype=kg.float64).dtype == kg.float64
    # ceil((end - start) / step) values: 1.0 is not reached even where the sum rounds to it
    t = kg.arange(0, 1, 0.1)
    assert len(t.tolist()) == 10
    np.testing.assert_allclose(t.numpy(), np.arange(10) * 0.1, rtol=1e-6)
    assert kg.arange(10, 0, -1.5).numel() == math.ceil(10 / 1.5)
    assert kg.arange(start=2, end=5).tolist() == [2, 3, 4]
    assert kg.arange(kg.tensor(3)).tolist() == [0, 1, 2]
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        kg.arange(0, 1, 0)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        kg.arange(1, 0, 1)


def test_linspace():
    np.testing.assert_allclose(kg.linspace(-3, 7, 11).numpy(), np.linspace(-3, 7, 11),
                               rtol=1e-6)
    t = kg.linspace(0, 1, 100)
    assert t.dtype == kg.float32 and t.tolist()[0] == 0.0 and t.tolist()[-1] == 1.0
    assert kg.linspace(2, 5, 1).tolist() == [2.0]
    assert kg.linspace(0, 1, 0).tolist() == []
    assert kg.linspace(0, 10, 6, dtype=kg.int64).tolist() == [0, 2, 4, 6, 8, 10]
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        kg.linspace(0, 1, -2)


def test_like_factories_keep_shape_dtype_and_device():
    x = kg.tensor([[1, 2, 3]])
    for make, fill in [(kg.zeros_like, 0), (kg.ones_like, 1), (kg.empty_like, 0)]:
        t = make(x)
        assert tuple(t.shape) == (1, 3) and t.dtype == kg.int64 and t.device == x.device
        assert (t.numpy() == fill).all()
    assert kg.full_like(x, 2.7).tolist() == [[2, 2, 2]]  # PyTorch casts to the int dtype
    assert kg.full_like(kg.zeros(2), 3).tolist() == [3.0, 3.0]
    assert kg.zeros_like(x, dtype=kg.float64).dtype == kg.float64
    r = kg.rand_like(kg.zeros(3, 4, dtype=kg.float64))
    assert r.dtype == kg.float64 and ((r.numpy() >= 0) & (r.numpy() < 1)).all()
    assert tuple(kg.randn_like(kg.zeros(2, 5)).shape) == (2, 5)
    ri = kg.randint_like(kg.zeros(50), 2, 5)
    assert ri.dtype == kg.float32 and set(ri.tolist()) <= {2.0, 3.0, 4.0}
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        kg.rand_like(x)
    with pytest.raises(TypeError, match="must be Tensor"):
        kg.zeros_like([1, 2])


def test_random_factories_ranges_and_forms():
    kg.manual_seed(0)
    u = kg.rand(1000).numpy()
    assert u.dtype == np.float32 and u.min() >= 0 and u.max() < 1
    n = kg.randn(4000, dtype=kg.float64).numpy()
    assert abs(n.mean()) < 0.1 and abs(n.std() - 1) < 0.1
    assert kg.randint(10, (3, 4)).numpy().max() < 10
    r = kg.randint(-2, 3, (200,)).numpy()
    assert r.dtype == np.int64 and r.min() == -2 and r.max() == 2
    assert kg.randint(low=1, high=3, size=(5,)).numpy().min() >= 1
    kg.manual_seed(3)
    a = kg.randint(0, 10, size=(4,)).tolist()
    kg.manual_seed(3)
    assert kg.randint(10, (4,)).tolist() == a
    assert tuple(kg.rand(size=(2, 3)).shape) == (2, 3)
    assert tuple(kg.zeros(size=[4]).shape) == (4,)
    with pytest.raises(TypeError, match="both by position and as size="):
        kg.ones(2, size=(2,))
    assert kg.randint(0, 5, (2,), dtype=kg.float32).dtype == kg.float32
    assert sorted(kg.randperm(20).tolist()) == list(range(20))
    m = kg.normal(kg.tensor([0.0, 100.0]), kg.tensor([1.0, 0.0]))
    assert m.tolist()[1] == 100.0
    assert tuple(kg.normal(0.0, 1.0, (3, 2)).shape) == (3, 2)
    assert kg.randn(2, 3, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="expects 'from' to be less than 'to'"):
        kg.randint(3, 3, (1,))
    with pytest.raises(TypeError, match="give a size"):
        kg.normal(0.0, 1.0)


def test_from_numpy_and_as_tensor_share_memory():
    a = np.arange(4, dtype=np.float32)
    t = kg.from_numpy(a)
    a[0] = 9
    assert t.tolist()[0] == 9.0
    b = np.zeros(3)
    s = kg.as_tensor(b)
    b[1] = 2
    assert s.tolist() == [0.0, 2.0, 0.0] and s.dtype == kg.float64
    assert kg.as_tensor(b, dtype=kg.float32).dtype == kg.float32
    x = kg.tensor([1.0, 2.0])
    assert kg.as_tensor(x) is x
    assert kg.as_tensor([1, 2]).dtype == kg.int64
    with pytest.raises(TypeError, match="expected np.ndarray"):
        kg.from_numpy([1, 2])


def test_nn_init_formulas_and_errors():
    init = kg.nn.init
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("selu") == 0.75
    assert init._calculate_fan_in_and_fan_out(kg.zeros(4, 3, 2, 2)) == (12, 16)
    w = kg.zeros(64, 100)
    init.kaiming_uniform_(w, a=math.sqrt(5))
    bound = math.sqrt(3.0) * init.calculate_gain("leaky_relu", math.sqrt(5)) / math.sqrt(100)
    assert np.abs(w.numpy()).max() <= bound
    assert init.kaiming_uniform_(kg.zeros(0, 3)).numel() == 0  # a no-op, as in PyTorch
    g1 = kg.Generator().manual_seed(4)
    g2 = kg.Generator().manual_seed(4)
    a = init.normal_(kg.zeros(20), generator=g1).tolist()
    assert init.normal_(kg.zeros(20), generator=g2).tolist() == a
    assert init.eye_(kg.zeros(2, 2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(RuntimeError, match="floating point"):
        init.uniform_(kg.zeros(3, dtype=kg.int64))


def test_linear_init_matches_pytorch_after_manual_seed():
    # torch.manual_seed(0); torch.nn.Linear(3, 2): recorded from torch 2.13
    kg.manual_seed(0)
    lin = kg.nn.Linear(3, 2)
    np.testing.assert_array_equal(
        lin.weight.detach().numpy(),
        np.array([[-0.004322517663240433, 0.3097158372402191, -0.4751853346824646],
                  [-0.4248946011066437, -0.2223689705133438, 0.15482072532176971]],
                 np.float32))
    np.testing.assert_array_equal(
        lin.bias.detach().numpy(),
        np.array([-0.011439144611358643, 0.45777493715286255], np.float32))


def test_static_models_still_build_from_the_eager_initial_values():
    kg.manual_seed(0)
    lin = kg.nn.Linear(3, 2)
    x = np.ones((1, 3), np.float32)
    eager = lin(kg.tensor(x)).detach().numpy()
    g = kg.Graph()
    with g.as_default():
        ph = kg.placeholder(kg.float32, shape=[None, 3])
        out = lin(ph)
        with kg.Session(g) as sess:
            sess.run(kg.global_variables_initializer())
            np.testing.assert_allclose(sess.run(out, {ph: x}), eager, rtol=1e-6)


def test_random_factories_refuse_to_be_frozen_by_kg_function():
    @kg.function
    def noisy(x):
        return x + kg.randn(2)

    with pytest.raises(RuntimeError, match="cannot run inside kg.function"):
        noisy(kg.zeros(2))

    @kg.function
    def plain(x):
        return x + kg.zeros(2)  # a constant factory is a fine constant of the trace

    assert plain(kg.ones(2)).tolist() == [1.0, 1.0]
