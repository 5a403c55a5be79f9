"""Indexing with tensors, lists and masks (kernelgraph/ops/advanced_index.py): NumPy's
(and PyTorch's) advanced indexing, values and gradients, in both modes."""

import numpy as np
import pytest

import kernelgraph as kg

X = np.arange(24, dtype=np.float32).reshape(4, 6) / 7.0
INDICES = {
    "int tensor": lambda kg_: kg_.tensor([2, 0, 2]),
    "int tensor 2-D": lambda kg_: kg_.tensor([[1, 3], [0, 0]]),
    "after a full slice": lambda kg_: (slice(None), kg_.tensor([5, 1])),
    "mask": lambda kg_: kg_.tensor(X > 1.5),
    "row mask": lambda kg_: kg_.tensor([True, False, True, True]),
    "two lists": lambda kg_: ([0, 1, 3], [5, 4, 0]),
    "range and tensor": lambda kg_: (range(4), kg_.tensor([0, 5, 2, 2])),
    "list": lambda kg_: [3, 3, 1],
}


def _numpy_index(index):
    items = index if isinstance(index, tuple) else (index,)
    out = tuple(np.asarray(it.numpy()) if isinstance(it, kg.Tensor) else
                np.arange(it.start, it.stop) if isinstance(it, range) else it for it in items)
    return out if isinstance(index, tuple) else out[0]


@pytest.mark.parametrize("name", list(INDICES))
def test_values_and_gradients_are_numpys(name):
    index = INDICES[name](kg)
    x = kg.tensor(X, requires_grad=True)
    got = x[index]
    want = X[_numpy_index(index)]
    np.testing.assert_array_equal(got.detach().numpy(), want)
    weights = np.random.default_rng(0).normal(size=want.shape).astype(np.float32)
    (got * kg.tensor(weights)).sum().backward()
    expected = np.zeros_like(X)
    np.add.at(expected, _numpy_index(index), weights)  # repeated picks add up
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_a_graph_node_indexes_a_graph_tensor():
    """TF1's ``xs[i]`` with ``i`` a scalar tensor (a while_loop counter): one gather."""
    xs = kg.placeholder(kg.float32, [4, 6])
    i = kg.placeholder(kg.int32, [])
    cols = kg.placeholder(kg.int64, [2])
    with kg.Session() as sess:
        row, picked = sess.run([xs[i], xs[:, cols]], {xs: X, i: 2, cols: [5, 0]})
    np.testing.assert_array_equal(row, X[2])
    np.testing.assert_array_equal(picked, X[:, [5, 0]])


def test_what_a_graph_cannot_index_with_is_refused_by_name():
    xs = kg.placeholder(kg.float32, [4, 6])
    mask = kg.placeholder(kg.bool_, [4, 6])
    with pytest.raises(TypeError, match="graph node 'Placeholder.*' can only be one integer"):
        xs[mask]
    with pytest.raises(IndexError, match="long, int, byte or bool"):
        kg.tensor(X)[kg.tensor([0.5])]
