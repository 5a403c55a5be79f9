"""Row 16's float64 reference step (a 2-layer LSTM's BPTT and SGD update) is right: its
gradients match finite differences of its own forward loss."""

import numpy as np

from kernelgraph.bench import lstm_step as L


def test_reference_gradients_match_finite_differences():
    x, weights = L.lstm_step_data()
    x = x.astype(np.float64)
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    loss, grads, updated = L.reference_lstm_step()
    assert float(loss) == L.lstm_forward(x, w)[0]
    rng = np.random.default_rng(0)
    eps = 1e-6
    for (name, value), grad, new in zip(w.items(), grads, updated):
        np.testing.assert_array_equal(new, value - L.LSTM_LR * grad)
        for _ in range(2):  # two entries of every weight, in both layers
            at = tuple(int(rng.integers(n)) for n in value.shape)
            moved = {k: v.copy() for k, v in w.items()}
            moved[name][at] += eps
            up = L.lstm_forward(x, moved)[0]
            moved[name][at] -= 2 * eps
            down = L.lstm_forward(x, moved)[0]
            np.testing.assert_allclose((up - down) / (2 * eps), grad[at], rtol=1e-4,
                                       atol=1e-9, err_msg=f"{name}{at}")
