"""The RNN task as a model for the timing widget: sequences of different lengths.

Each sample is a sequence of ``min_len..max_len`` steps (default 5..50) of ``inputs``
features; a tanh :class:`kernelgraph.nn.RNNCell` with ``hidden`` units reads it, and the
loss is the squared final state, summed over the step's ``batch`` sequences.

- eager: a Python loop over the sequences and their own lengths, one cell call per step (a
  new graph per sample; under ``"autobatch"`` the same code, batched by kg.autobatch);
- static: one ``kg.nn.dynamic_rnn`` over the padded batch with ``sequence_length``.

>>> rows = measure(rnn_model(), {"samples": 2, "batch": 2, "inputs": 3, "hidden": 4,
...                              "max_len": 6, "seed": 0}, modes=("static", "eager"))
>>> abs(rows[0]["loss"] - rows[1]["loss"]) < 1e-5 * abs(rows[1]["loss"])
True
"""

from __future__ import annotations

import numpy as np

import kernelgraph as kg

from .timing import Model, measure, steps_of  # noqa: F401 - measure: the doctest

__all__ = ["rnn_model"]


def _data(cfg):
    rng = np.random.default_rng(cfg.get("seed", 0))
    n = steps_of(cfg) * cfg["batch"]
    lengths = rng.integers(cfg.get("min_len", 5), cfg.get("max_len", 50) + 1, n)
    seqs = [rng.standard_normal((int(t), cfg["inputs"])).astype(np.float32) for t in lengths]
    hidden, k = cfg["hidden"], 1.0 / np.sqrt(cfg["hidden"])
    weights = {name: rng.uniform(-k, k, shape).astype(np.float32)
               for name, shape in (("weight_ih", (hidden, cfg["inputs"])),
                                   ("weight_hh", (hidden, hidden)), ("bias_ih", (hidden,)),
                                   ("bias_hh", (hidden,)))}
    return seqs, lengths.astype(np.int64), weights


def _cell(cfg, weights):
    cell = kg.nn.RNNCell(cfg["inputs"], cfg["hidden"])
    cell.load_state_dict(weights)
    return cell


def _static(cfg, data):
    seqs, lengths, weights = data
    b = cfg["batch"]
    cell = _cell(cfg, weights)
    inputs = kg.placeholder(kg.float32, shape=[None, None, cfg["inputs"]], name="inputs")
    lens = kg.placeholder(kg.int64, shape=[None], name="lengths")
    _, h = kg.nn.dynamic_rnn(cell, inputs, sequence_length=lens)
    loss = kg.reduce_sum(h * h, name="loss")
    grads = kg.gradients(loss, cell.variables(kg.get_default_graph()))

    def feed_for(step):
        batch = seqs[step * b:(step + 1) * b]
        padded, step_lengths = kg.data.pad_sequences(batch)
        return {inputs: padded, lens: step_lengths}

    return [loss, grads], feed_for


def _eager(cfg, data):
    seqs, _, weights = data
    b = cfg["batch"]
    cell = _cell(cfg, weights)
    per_step = [[kg.tensor(x[t:t + 1]) for t in range(len(x))] for x in seqs]
    zeros = kg.zeros(1, cfg["hidden"])

    def forward(step):
        loss = None
        for xs in per_step[step * b:(step + 1) * b]:
            h = zeros
            for x in xs:
                h = cell(x, h)
            term = (h * h).sum()
            loss = term if loss is None else loss + term
        return loss

    return forward


def rnn_model() -> Model:
    """The RNN task (see the module docstring) as a :class:`~kernelgraph.widgets.Model`."""
    return Model("RNN", _data, _static, _eager)
