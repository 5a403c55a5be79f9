"""Row 16: one training step of a 2-layer ``nn.LSTM``, eagerly, as a learner writes it.

A word-level language model's recurrent core at a tutorial's sizes: ``nn.LSTM(128, 128,
num_layers=2)`` over a (35 steps, batch 20, 128 features) input (PyTorch's word-language-model
example uses 35 steps and batch 20), loss = the mean of the squared outputs, ``backward()``
and an SGD step (lr 0.1), ``kg.nn.LSTM`` + ``kg.optim.SGD`` against ``torch.nn.LSTM`` +
``torch.optim.SGD`` from the same weights. The output checked is the loss, every weight's
gradient and every weight after the step, against a float64 NumPy step (forward, BPTT
through both layers, the update).
"""

from __future__ import annotations

import numpy as np

from .cases import NO_AUTOGRAD_NP, NO_EAGER_TF, Case, Impl, _rng

LSTM_STEPS, LSTM_BATCH, LSTM_FEATURES, LSTM_HIDDEN, LSTM_LAYERS = 35, 20, 128, 128, 2
LSTM_LR = 0.1
_NAMES = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def lstm_step_data():
    """(inputs (steps, batch, features) float32, {PyTorch parameter name: float32 array})."""
    r = _rng(16)
    x = r.standard_normal((LSTM_STEPS, LSTM_BATCH, LSTM_FEATURES), dtype=np.float32)
    k, rows = 1.0 / np.sqrt(LSTM_HIDDEN), 4 * LSTM_HIDDEN
    weights = {}
    for layer in range(LSTM_LAYERS):
        fan_in = LSTM_FEATURES if layer == 0 else LSTM_HIDDEN
        for name, shape in zip(_NAMES, ((rows, fan_in), (rows, LSTM_HIDDEN), (rows,), (rows,))):
            weights[f"{name}_l{layer}"] = r.uniform(-k, k, shape).astype(np.float32)
    return x, weights


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _layer_forward(xs, w_ih, w_hh, b_ih, b_hh):
    """One LSTM layer over xs (steps, batch, n) in float64: (outputs, what BPTT reads)."""
    hidden = w_hh.shape[1]
    h = c = np.zeros((xs.shape[1], hidden))
    outs, saved = [], []
    for x in xs:
        a = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        i, f, o = (_sigmoid(a[:, k * hidden:(k + 1) * hidden]) for k in (0, 1, 3))
        g = np.tanh(a[:, 2 * hidden:3 * hidden])
        saved.append((x, h, c, i, f, g, o))
        c = f * c + i * g
        h = o * np.tanh(c)
        outs.append(h)
    return np.stack(outs), saved


def _layer_backward(d_out, saved, w_ih, w_hh):
    """BPTT of one layer: (d inputs (steps, batch, n), [d w_ih, d w_hh, d b_ih, d b_hh])."""
    hidden = w_hh.shape[1]
    grads = [np.zeros_like(w_ih), np.zeros_like(w_hh), np.zeros(4 * hidden),
             np.zeros(4 * hidden)]
    dh_next = dc_next = np.zeros(d_out.shape[1:])
    d_in = []
    for t in range(len(saved) - 1, -1, -1):
        x, h, c, i, f, g, o = saved[t]
        c_new = f * c + i * g
        tc = np.tanh(c_new)
        dh = d_out[t] + dh_next
        dc = dc_next + dh * o * (1 - tc ** 2)
        da = np.concatenate([dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g ** 2),
                             dh * tc * o * (1 - o)], axis=1)
        grads[0] += da.T @ x
        grads[1] += da.T @ h
        grads[2] += da.sum(0)
        grads[3] += da.sum(0)
        d_in.append(da @ w_ih)
        dh_next, dc_next = da @ w_hh, dc * f
    return np.stack(d_in[::-1]), grads


def lstm_forward(x, w):
    """(loss, the top layer's outputs, what BPTT reads per layer) of the 2-layer LSTM in
    float64, for inputs ``x`` and weights ``w`` ({PyTorch name: array})."""
    layer_in, saved = x, []
    for layer in range(LSTM_LAYERS):
        layer_in, kept = _layer_forward(layer_in, *(w[f"{n}_l{layer}"] for n in _NAMES))
        saved.append(kept)
    return float(np.mean(layer_in ** 2)), layer_in, saved


def reference_lstm_step():
    """[loss, [every weight's gradient], [every weight after the SGD step]] in float64, the
    weights in PyTorch's order (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, ...)."""
    x, weights = lstm_step_data()
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    loss, out, saved = lstm_forward(x.astype(np.float64), w)
    d = 2 * out / out.size
    grads = {}
    for layer in range(LSTM_LAYERS - 1, -1, -1):
        d, layer_grads = _layer_backward(d, saved[layer], w[f"weight_ih_l{layer}"],
                                         w[f"weight_hh_l{layer}"])
        grads.update({f"{n}_l{layer}": g for n, g in zip(_NAMES, layer_grads)})
    return [np.array(loss), [grads[k] for k in w], [w[k] - LSTM_LR * grads[k] for k in w]]


def _lstm_step(x0, weights):
    """setup(framework) -> Impl for kg or torch (the same PyTorch-style code): the LSTM, SGD,
    the step, and an output that restores the weights first (so it is the first step)."""
    def setup(fw):
        x = fw.from_numpy(x0) if hasattr(fw, "from_numpy") else fw.tensor(x0)
        lstm = fw.nn.LSTM(LSTM_FEATURES, LSTM_HIDDEN, num_layers=LSTM_LAYERS)
        params = [getattr(lstm, name) for name in weights]
        opt = fw.optim.SGD(lstm.parameters(), lr=LSTM_LR)

        def restore():
            with fw.no_grad():
                for p, w in zip(params, weights.values()):
                    p.copy_(fw.from_numpy(w) if hasattr(fw, "from_numpy") else fw.tensor(w))

        def step():
            opt.zero_grad()
            out, _ = lstm(x)
            loss = (out * out).mean()
            loss.backward()
            opt.step()
            return loss

        def output():
            restore()
            loss = step()
            return [loss.detach().numpy(), [p.grad.numpy() for p in params],
                    [p.detach().numpy() for p in params]]

        restore()
        return Impl("step()", {"step": step}, output)
    return setup


def _lstm_step_kg(kg):
    x0, weights = lstm_step_data()
    return _lstm_step(x0, weights)(kg)


def _lstm_step_torch(torch):
    x0, weights = lstm_step_data()
    return _lstm_step(x0, weights)(torch)


CASES = (
    Case("16", "2-layer nn.LSTM step, eager", "us",
         f"nn.LSTM({LSTM_FEATURES}, {LSTM_HIDDEN}, num_layers={LSTM_LAYERS}) over "
         f"({LSTM_STEPS} steps, batch {LSTM_BATCH}, {LSTM_FEATURES} features), loss = mean of "
         f"the squared outputs, backward() and an SGD step (lr {LSTM_LR}), from the same "
         "weights (kg.nn.LSTM + kg.optim.SGD against torch.nn.LSTM + torch.optim.SGD).",
         reference_lstm_step,
         {"kernelgraph": _lstm_step_kg, "numpy": NO_AUTOGRAD_NP, "torch": _lstm_step_torch,
          "tensorflow": NO_EAGER_TF}, rtol=1e-3),
)
