"""Training benchmarks of the models issue: eager MLP steps and the variable-length RNN task.

Rows 12a-c time the MLP of rows 11a-c (64 -> 128 relu -> 10, mean softmax cross-entropy,
SGD lr 0.1) as an *eager* train step: forward, ``backward()``, ``opt.step()`` with
``kg.optim.SGD`` against ``torch.optim.SGD``, from the same weights.

Rows 13a-c time the RNN task: 32 sequences of lengths 5..50 (seeded), 16 input features, a
tanh RNN cell with 64 hidden units (PyTorch's ``nn.RNNCell`` layout), loss = the sum over
the sequences of the squared final state, forward and backward to every weight:

- 13a, eager per sample: a Python loop over the sequences and their steps, one
  ``cell(x_t, h)`` per step (a new graph per sample), against the same loop in PyTorch;
- 13b, the same per-sample code under ``kg.autobatch()`` (DyNet's autobatching);
- 13c, static: one ``kg.nn.dynamic_rnn`` over the padded batch with ``sequence_length``, in a
  ``Session``, against TF1's ``tf.nn.dynamic_rnn`` with a ``BasicRNNCell``.

Rows 14a-b time the same task with an LSTM cell (PyTorch's ``nn.LSTMCell``; the loss reads
the final ``h``): eager per sample against PyTorch, and under ``kg.autobatch()``.

Every framework's loss and gradients are checked against a float64 NumPy BPTT first.
"""

from __future__ import annotations

import numpy as np

from .cases import (
    MLP_LR,
    NO_AUTOGRAD_NP,
    NO_EAGER_TF,
    NO_SESSION_TORCH,
    Case,
    Impl,
    Target,
    _mlp_data,
    _mlp_reference,
    _rng,
)

RNN_SEQUENCES, RNN_MIN_LEN, RNN_MAX_LEN, RNN_IN, RNN_HIDDEN = 32, 5, 50, 16, 64
NO_AUTOBATCH = "no autobatching (DyNet's, 2.7 ms on this task, is not installed here)"


# -- eager MLP train step ---------------------------------------------------------------------
def _mlp_eager_kg(batch):
    def setup(kg):
        x0, y0, w0 = _mlp_data(batch)
        x, labels = kg.tensor(x0), kg.tensor(y0)
        params = [kg.tensor(w, requires_grad=True) for w in w0]
        opt = kg.optim.SGD(params, lr=MLP_LR)

        def step():
            w1, b1, w2, b2 = params
            opt.zero_grad()
            loss = kg.cross_entropy(kg.relu(x @ w1 + b1) @ w2 + b2, labels)
            loss.backward()
            opt.step()
            return loss

        def output():
            with kg.no_grad():
                for w, w_init in zip(params, w0):
                    w._array[...] = w_init
            loss = step()
            return [loss.detach().numpy(), [w.detach().numpy() for w in params]]

        return Impl("step()", {"step": step}, output)
    return setup


def _mlp_eager_torch(batch):
    def setup(torch):
        import torch.nn.functional as F

        x0, y0, w0 = _mlp_data(batch)
        x, labels = torch.from_numpy(x0), torch.from_numpy(y0)
        params = [torch.tensor(w, requires_grad=True) for w in w0]
        opt = torch.optim.SGD(params, lr=MLP_LR)

        def step():
            w1, b1, w2, b2 = params
            opt.zero_grad()
            loss = F.cross_entropy(torch.relu(x @ w1 + b1) @ w2 + b2, labels)
            loss.backward()
            opt.step()
            return loss

        def output():
            with torch.no_grad():
                for w, w_init in zip(params, w0):
                    w.copy_(torch.from_numpy(w_init))
            loss = step()
            return [loss.detach().numpy(), [w.detach().numpy() for w in params]]

        return Impl("step()", {"step": step}, output)
    return setup


def _mlp_eager_case(case_id, batch):
    return Case(case_id, f"eager MLP SGD step, batch {batch}", "us",
                f"The MLP step of row 11 on a batch of {batch}, eagerly: forward, backward() "
                "and an SGD optimiser step (kg.optim.SGD against torch.optim.SGD).",
                _mlp_reference(batch),
                {"kernelgraph": _mlp_eager_kg(batch), "numpy": NO_AUTOGRAD_NP,
                 "torch": _mlp_eager_torch(batch), "tensorflow": NO_EAGER_TF})


# -- the RNN task -----------------------------------------------------------------------------
def rnn_data():
    """(sequences, lengths, [w_ih, w_hh, b_ih, b_hh]): the task's inputs and weights."""
    r = _rng(13)
    lengths = r.integers(RNN_MIN_LEN, RNN_MAX_LEN + 1, RNN_SEQUENCES)
    seqs = [r.standard_normal((int(n), RNN_IN), dtype=np.float32) for n in lengths]
    k = 1.0 / np.sqrt(RNN_HIDDEN)
    weights = [r.uniform(-k, k, shape).astype(np.float32)
               for shape in ((RNN_HIDDEN, RNN_IN), (RNN_HIDDEN, RNN_HIDDEN), (RNN_HIDDEN,),
                             (RNN_HIDDEN,))]
    return seqs, lengths.astype(np.int64), weights


def reference_rnn():
    """[loss, [d w_ih, d w_hh, d b_ih, d b_hh]] in float64, by backpropagation through time."""
    seqs, _, weights = rnn_data()
    w_ih, w_hh, b_ih, b_hh = (w.astype(np.float64) for w in weights)
    grads = [np.zeros_like(w) for w in (w_ih, w_hh, b_ih, b_hh)]
    loss = 0.0
    for xs in seqs:
        xs = xs.astype(np.float64)
        hs = [np.zeros(RNN_HIDDEN)]
        for x in xs:
            hs.append(np.tanh(w_ih @ x + b_ih + w_hh @ hs[-1] + b_hh))
        loss += float(hs[-1] @ hs[-1])
        dh = 2 * hs[-1]
        for t in range(len(xs) - 1, -1, -1):
            da = dh * (1 - hs[t + 1] ** 2)
            grads[0] += np.outer(da, xs[t])
            grads[1] += np.outer(da, hs[t])
            grads[2] += da
            grads[3] += da
            dh = w_hh.T @ da
    return [np.array(loss), grads]


def lstm_weights():
    """[w_ih, w_hh, b_ih, b_hh] of the LSTM rows, in PyTorch's layout (gates i, f, g, o)."""
    r = _rng(14)
    k, rows = 1.0 / np.sqrt(RNN_HIDDEN), 4 * RNN_HIDDEN
    return [r.uniform(-k, k, shape).astype(np.float32)
            for shape in ((rows, RNN_IN), (rows, RNN_HIDDEN), (rows,), (rows,))]


def reference_lstm():
    """[loss, [d w_ih, d w_hh, d b_ih, d b_hh]] of the LSTM rows in float64, by BPTT."""
    seqs, _, _ = rnn_data()
    w_ih, w_hh, b_ih, b_hh = (w.astype(np.float64) for w in lstm_weights())
    grads = [np.zeros_like(w) for w in (w_ih, w_hh, b_ih, b_hh)]
    hidden = RNN_HIDDEN

    def sigmoid(v):
        return 1.0 / (1.0 + np.exp(-v))

    loss = 0.0
    for xs in seqs:
        xs = xs.astype(np.float64)
        hs, cs, saved = [np.zeros(hidden)], [np.zeros(hidden)], []
        for x in xs:
            a = w_ih @ x + b_ih + w_hh @ hs[-1] + b_hh
            i, f, o = (sigmoid(a[k * hidden:(k + 1) * hidden]) for k in (0, 1, 3))
            g = np.tanh(a[2 * hidden:3 * hidden])
            cs.append(f * cs[-1] + i * g)
            hs.append(o * np.tanh(cs[-1]))
            saved.append((i, f, g, o))
        loss += float(hs[-1] @ hs[-1])
        dh, dc = 2 * hs[-1], np.zeros(hidden)
        for t in range(len(xs) - 1, -1, -1):
            i, f, g, o = saved[t]
            tc = np.tanh(cs[t + 1])
            dc = dc + dh * o * (1 - tc ** 2)
            da = np.concatenate([dc * g * i * (1 - i), dc * cs[t] * f * (1 - f),
                                 dc * i * (1 - g ** 2), dh * tc * o * (1 - o)])
            grads[0] += np.outer(da, xs[t])
            grads[1] += np.outer(da, hs[t])
            grads[2] += da
            grads[3] += da
            dh, dc = w_hh.T @ da, dc * f
    return [np.array(loss), grads]


def _kg_cell(kg, weights, lstm=False):
    cell = (kg.nn.LSTMCell if lstm else kg.nn.RNNCell)(RNN_IN, RNN_HIDDEN)
    cell.load_state_dict(dict(zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh"), weights)))
    return cell


def _rnn_per_sample_kg(autobatch: bool, lstm: bool = False):
    def setup(kg):
        seqs, _, weights = rnn_data()
        cell = _kg_cell(kg, lstm_weights() if lstm else weights, lstm)
        params = list(cell.parameters())
        steps = [[kg.tensor(x[t:t + 1]) for t in range(len(x))] for x in seqs]
        zeros = kg.zeros(1, RNN_HIDDEN)
        start = (zeros, zeros) if lstm else zeros

        def forward_backward():
            for p in params:
                p.grad = None
            loss = 0.0
            for xs in steps:
                state = start
                for x in xs:
                    state = cell(x, state)
                h = state[0] if lstm else state
                loss = loss + (h * h).sum()
            loss.backward()
            return loss

        if autobatch:
            def step():
                with kg.autobatch():
                    return forward_backward()
        else:
            step = forward_backward

        def output():
            loss = step()
            return [loss.detach().numpy(), [p.grad.numpy() for p in params]]

        return Impl("step()", {"step": step}, output)
    return setup


def _rnn_per_sample_torch(torch, lstm=False):
    seqs, _, weights = rnn_data()
    cell = (torch.nn.LSTMCell if lstm else torch.nn.RNNCell)(RNN_IN, RNN_HIDDEN)
    with torch.no_grad():
        for p, w in zip((cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh),
                        lstm_weights() if lstm else weights):
            p.copy_(torch.from_numpy(w))
    params = list(cell.parameters())
    steps = [[torch.from_numpy(x[t:t + 1]) for t in range(len(x))] for x in seqs]
    zeros = torch.zeros(1, RNN_HIDDEN)
    start = (zeros, zeros) if lstm else zeros

    def step():
        for p in params:
            p.grad = None
        loss = 0.0
        for xs in steps:
            state = start
            for x in xs:
                state = cell(x, state)
            h = state[0] if lstm else state
            loss = loss + (h * h).sum()
        loss.backward()
        return loss

    def output():
        loss = step()
        return [loss.detach().numpy(), [p.grad.numpy() for p in params]]

    return Impl("step()", {"step": step}, output)


def _lstm_per_sample_torch(torch):
    return _rnn_per_sample_torch(torch, lstm=True)


def _padded():
    seqs, lengths, weights = rnn_data()
    batch = np.zeros((RNN_SEQUENCES, int(lengths.max()), RNN_IN), np.float32)
    for i, x in enumerate(seqs):
        batch[i, :len(x)] = x
    return batch, lengths, weights


def _rnn_static_kg(kg):
    batch, lengths, weights = _padded()
    cell = _kg_cell(kg, weights)
    g = kg.Graph()
    with g.as_default():
        inputs = kg.placeholder(kg.float32, shape=(None, None, RNN_IN))
        lens = kg.placeholder(kg.int64, shape=(None,))
        _, h = kg.nn.dynamic_rnn(cell, inputs, sequence_length=lens)
        loss = kg.reduce_sum(h * h)
        grads = kg.gradients(loss, cell.variables(g))
        init = kg.global_variables_initializer()
    sess, feed = kg.Session(graph=g), {inputs: batch, lens: lengths}
    sess.run(init)
    fetches = [loss, grads]
    return Impl("sess.run(fetches, feed)", {"sess": sess, "fetches": fetches, "feed": feed},
                lambda: sess.run(fetches, feed), close=sess.close)


class _TFBasicRNNCell:
    """TF1's ``BasicRNNCell`` (tanh of ``[x, h] @ kernel + bias``), with the cell interface
    ``tf.compat.v1.nn.dynamic_rnn`` asks for."""

    def __init__(self, tf, kernel, bias):
        self.tf, self.kernel, self.bias = tf, kernel, bias
        self.state_size = self.output_size = RNN_HIDDEN

    def zero_state(self, batch_size, dtype):
        return self.tf.zeros((batch_size, RNN_HIDDEN), dtype)

    def __call__(self, x, h, scope=None):
        h = self.tf.tanh(self.tf.matmul(self.tf.concat([x, h], 1), self.kernel) + self.bias)
        return h, h


def _rnn_static_tf(tf):
    v1 = tf.compat.v1
    batch, lengths, (w_ih, w_hh, b_ih, b_hh) = _padded()
    g = tf.Graph()
    with g.as_default():
        inputs = v1.placeholder(tf.float32, shape=(None, None, RNN_IN))
        lens = v1.placeholder(tf.int64, shape=(None,))
        # BasicRNNCell's formula, [x, h] @ kernel + bias (Keras 3 dropped the class itself)
        kernel = v1.get_variable("kernel", initializer=np.concatenate([w_ih.T, w_hh.T]))
        bias = v1.get_variable("bias", initializer=b_ih + b_hh)
        cell = _TFBasicRNNCell(tf, kernel, bias)
        _, h = v1.nn.dynamic_rnn(cell, inputs, sequence_length=lens, dtype=tf.float32)
        loss = tf.reduce_sum(h * h)
        grads = v1.gradients(loss, [kernel, bias])
        init = v1.global_variables_initializer()
    sess = v1.Session(graph=g)
    sess.run(init)
    fetches, feed = [loss, grads], {inputs: batch, lens: lengths}

    def output():  # TF's one kernel and bias, split into PyTorch's four gradients
        value, (d_kernel, d_bias) = sess.run(fetches, feed)
        return [value, [d_kernel[:RNN_IN].T, d_kernel[RNN_IN:].T, d_bias, d_bias]]

    return Impl("sess.run(fetches, feed)", {"sess": sess, "fetches": fetches, "feed": feed},
                output, close=sess.close)


_RNN_TASK = (f"{RNN_SEQUENCES} sequences of lengths {RNN_MIN_LEN}..{RNN_MAX_LEN}, {RNN_IN} "
             f"features, tanh RNN cell with {RNN_HIDDEN} hidden units; loss = sum of the "
             "squared final states; forward + backward to every weight")
_LSTM_TASK = (f"The task of rows 13 with an LSTM cell of {RNN_HIDDEN} hidden units (PyTorch's "
              "LSTMCell; loss = sum of the squared final h)")

CASES = (
    _mlp_eager_case("12a", 1),
    _mlp_eager_case("12b", 64),
    _mlp_eager_case("12c", 1024),
    Case("13a", "RNN task, eager per sample", "us",
         f"{_RNN_TASK}. A Python loop over the sequences and their steps, one cell call per "
         "step: a new graph per sample.",
         reference_rnn,
         {"kernelgraph": _rnn_per_sample_kg(autobatch=False), "numpy": NO_AUTOGRAD_NP,
          "torch": _rnn_per_sample_torch, "tensorflow": NO_EAGER_TF},
         Target(max_us=9000.0), rtol=1e-3),
    Case("13b", "RNN task, eager autobatched", "us",
         f"{_RNN_TASK}. The per-sample code of 13a inside `with kg.autobatch():`.",
         reference_rnn,
         {"kernelgraph": _rnn_per_sample_kg(autobatch=True), "numpy": NO_AUTOGRAD_NP,
          "torch": NO_AUTOBATCH, "tensorflow": NO_EAGER_TF},
         Target(max_us=3000.0), rtol=1e-3),
    Case("13c", "RNN task, static dynamic_rnn", "us",
         f"{_RNN_TASK}. One Session.run of dynamic_rnn over the padded batch with "
         "sequence_length (TF1: tf.nn.dynamic_rnn with a BasicRNNCell).",
         reference_rnn,
         {"kernelgraph": _rnn_static_kg, "numpy": NO_AUTOGRAD_NP,
          "torch": NO_SESSION_TORCH, "tensorflow": _rnn_static_tf},
         Target(max_us=2000.0), rtol=1e-3),
    Case("14a", "LSTM task, eager per sample", "us",
         f"{_LSTM_TASK}. The per-sample loop of 13a: one cell call per step.",
         reference_lstm,
         {"kernelgraph": _rnn_per_sample_kg(autobatch=False, lstm=True),
          "numpy": NO_AUTOGRAD_NP, "torch": _lstm_per_sample_torch,
          "tensorflow": NO_EAGER_TF}, rtol=1e-3),
    Case("14b", "LSTM task, eager autobatched", "us",
         f"{_LSTM_TASK}. The per-sample code of 14a inside `with kg.autobatch():`.",
         reference_lstm,
         {"kernelgraph": _rnn_per_sample_kg(autobatch=True, lstm=True),
          "numpy": NO_AUTOGRAD_NP, "torch": NO_AUTOBATCH, "tensorflow": NO_EAGER_TF},
         rtol=1e-3),
)
