"""Record PyTorch's recurrent modules (``nn.RNN``, ``nn.LSTM``, ``nn.GRU``, the cells),
``nn.utils.rnn`` (packed sequences, ``pad_sequence``) and ``nn.utils.clip_grad_*`` into
``torch_rnn.json`` (read by tests/test_nn_recurrent.py).

Each case is written once against PyTorch's API and takes the framework's namespace ``T``
(``T.torch``, ``T.nn``, ``T.rnn`` for ``nn.utils.rnn``, ``T.optim``), so the tests run the
very same code on kernelgraph. Run with an environment that has torch (see README.md)::

    python tests/recorded/record_torch_rnn.py
"""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np


def L(t):  # noqa: N802 - a short name for "as a list"
    return t.detach().tolist()


def namespaces(torch, nn, rnn, optim):
    return types.SimpleNamespace(torch=torch, nn=nn, rnn=rnn, optim=optim)


def data(seed: int, *shape) -> np.ndarray:
    """Inputs from NumPy (not from either framework's generator)."""
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def run_module(T, kind: str, kwargs: dict, x_shape: tuple, state: bool = False,
               lengths=None, enforce_sorted: bool = True, train: bool = False) -> dict:
    """Build ``nn.<kind>(**kwargs)`` after ``manual_seed(0)``, run it, and backpropagate
    sum(out**2) + sum(h_n**2) (+ sum(c_n**2)): parameters, outputs, final states and every
    gradient."""
    T.torch.manual_seed(0)
    m = getattr(T.nn, kind)(**kwargs)
    m.train(train)
    x = T.torch.tensor(data(1, *x_shape), requires_grad=True)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    batch = x_shape[0] if kwargs.get("batch_first") else x_shape[1]
    if len(x_shape) == 2:
        batch = None
    hshape = (layers, kwargs["hidden_size"]) if batch is None else \
        (layers, batch, kwargs["hidden_size"])
    args = []
    if state:
        h0 = T.torch.tensor(data(2, *hshape), requires_grad=True)
        args = [(h0, T.torch.tensor(data(3, *hshape), requires_grad=True))
                if kind == "LSTM" else h0]
    inp = x
    if lengths is not None:
        inp = T.rnn.pack_padded_sequence(x, lengths, batch_first=kwargs.get("batch_first",
                                                                            False),
                                         enforce_sorted=enforce_sorted)
    out, hn = m(inp, *args)
    rec = {"params": {k: L(p) for k, p in m.named_parameters()}}
    if lengths is not None:
        rec["packed_data"] = L(out.data)
        rec["batch_sizes"] = out.batch_sizes.tolist()
        out, out_lengths = T.rnn.pad_packed_sequence(out, batch_first=kwargs.get(
            "batch_first", False))
        rec["lengths"] = out_lengths.tolist()
    rec["output"] = L(out)
    states = hn if kind == "LSTM" else (hn,)
    rec["h_n"] = L(states[0])
    if kind == "LSTM":
        rec["c_n"] = L(states[1])
    loss = (out * out).sum()
    for s in states:
        loss = loss + (s * s).sum()
    loss.backward()
    rec["loss"] = loss.item()
    rec["grads"] = {k: L(p.grad) for k, p in m.named_parameters()}
    rec["grad_x"] = L(x.grad)
    if state:
        rec["grad_h0"] = L(args[0][0].grad if kind == "LSTM" else args[0].grad)
    return rec


MODULE_CASES = {
    "lstm": ("LSTM", {"input_size": 3, "hidden_size": 4}, (5, 2, 3), {}),
    "lstm_batch_first_2layers_state": (
        "LSTM", {"input_size": 3, "hidden_size": 4, "num_layers": 2, "batch_first": True},
        (2, 5, 3), {"state": True}),
    "lstm_bidirectional_2layers": (
        "LSTM", {"input_size": 3, "hidden_size": 2, "num_layers": 2, "bidirectional": True},
        (4, 3, 3), {"state": True}),
    "lstm_no_bias_unbatched": ("LSTM", {"input_size": 3, "hidden_size": 4, "bias": False},
                               (5, 3), {"state": True}),
    "lstm_packed": ("LSTM", {"input_size": 3, "hidden_size": 4, "batch_first": True},
                    (3, 5, 3), {"lengths": [5, 3, 2]}),
    "lstm_packed_unsorted_bidirectional": (
        "LSTM", {"input_size": 3, "hidden_size": 3, "bidirectional": True, "num_layers": 2},
        (5, 4, 3), {"lengths": [2, 5, 1, 3], "enforce_sorted": False, "state": True}),
    "lstm_dropout_train": (
        "LSTM", {"input_size": 3, "hidden_size": 4, "num_layers": 3, "dropout": 0.5},
        (4, 2, 3), {"train": True}),
    "lstm_packed_dropout_train": (
        "LSTM", {"input_size": 2, "hidden_size": 3, "num_layers": 2, "dropout": 0.4,
                 "bidirectional": True}, (4, 3, 2), {"lengths": [4, 2, 3],
                                                     "enforce_sorted": False, "train": True}),
    "gru_dropout_train_batch_first": (
        "GRU", {"input_size": 2, "hidden_size": 3, "num_layers": 2, "dropout": 0.3,
                "batch_first": True}, (3, 4, 2), {"train": True}),
    "gru": ("GRU", {"input_size": 3, "hidden_size": 4}, (5, 2, 3), {}),
    "gru_batch_first_2layers_bidirectional": (
        "GRU", {"input_size": 3, "hidden_size": 3, "num_layers": 2, "batch_first": True,
                "bidirectional": True}, (2, 4, 3), {"state": True}),
    "gru_packed_no_bias": ("GRU", {"input_size": 2, "hidden_size": 3, "bias": False},
                           (4, 3, 2), {"lengths": [4, 4, 1], "state": True}),
    "rnn_tanh": ("RNN", {"input_size": 3, "hidden_size": 4}, (5, 2, 3), {"state": True}),
    "rnn_relu_2layers_batch_first": (
        "RNN", {"input_size": 3, "hidden_size": 4, "num_layers": 2, "nonlinearity": "relu",
                "batch_first": True}, (3, 4, 3), {}),
    "rnn_relu_packed_bidirectional": (
        "RNN", {"input_size": 2, "hidden_size": 3, "nonlinearity": "relu",
                "bidirectional": True}, (4, 3, 2),
        {"lengths": [3, 4, 2], "enforce_sorted": False}),
}


def cell_case(T, kind: str, kwargs: dict, state: bool) -> dict:
    T.torch.manual_seed(0)
    cell = getattr(T.nn, kind)(**kwargs)
    x = T.torch.tensor(data(4, 3, kwargs["input_size"]), requires_grad=True)
    h = T.torch.tensor(data(5, 3, kwargs["hidden_size"]))
    args = [] if not state else [(h, h * 0.5) if kind == "LSTMCell" else h]
    out = cell(x, *args)
    outs = out if kind == "LSTMCell" else (out,)
    loss = sum((o * o).sum() for o in outs)
    loss.backward()
    return {"params": {k: L(p) for k, p in cell.named_parameters()},
            "out": [L(o) for o in outs],
            "grads": {k: L(p.grad) for k, p in cell.named_parameters()}, "grad_x": L(x.grad)}


CELL_CASES = {
    "gru_cell": ("GRUCell", {"input_size": 3, "hidden_size": 4}, True),
    "gru_cell_zero_state_no_bias": ("GRUCell", {"input_size": 3, "hidden_size": 4,
                                                "bias": False}, False),
    "lstm_cell": ("LSTMCell", {"input_size": 3, "hidden_size": 4}, True),
    "rnn_cell": ("RNNCell", {"input_size": 3, "hidden_size": 4}, True),
    "rnn_cell_relu": ("RNNCell", {"input_size": 3, "hidden_size": 4,
                                  "nonlinearity": "relu"}, True),
}


def utils_case(T) -> dict:
    """pad_sequence, pack_padded_sequence / pad_packed_sequence and pack_sequence."""
    seqs = [T.torch.tensor(data(6 + k, n, 2)) for k, n in enumerate([2, 4, 3])]
    rec = {}
    rec["pad"] = L(T.rnn.pad_sequence(seqs))
    rec["pad_batch_first"] = L(T.rnn.pad_sequence(seqs, batch_first=True, padding_value=-1.0))
    padded = T.rnn.pad_sequence(seqs, batch_first=True)
    packed = T.rnn.pack_padded_sequence(padded, [2, 4, 3], batch_first=True,
                                        enforce_sorted=False)
    rec["packed"] = {"data": L(packed.data), "batch_sizes": packed.batch_sizes.tolist(),
                     "sorted_indices": packed.sorted_indices.tolist(),
                     "unsorted_indices": packed.unsorted_indices.tolist()}
    back, lengths = T.rnn.pad_packed_sequence(packed, batch_first=True, total_length=6)
    rec["unpacked"] = {"data": L(back), "lengths": lengths.tolist()}
    seq_packed = T.rnn.pack_sequence(sorted(seqs, key=len, reverse=True))
    rec["pack_sequence"] = {"data": L(seq_packed.data),
                            "batch_sizes": seq_packed.batch_sizes.tolist(),
                            "sorted_indices": seq_packed.sorted_indices}
    try:
        T.rnn.pack_padded_sequence(padded, [2, 4, 3], batch_first=True)
    except RuntimeError as e:
        rec["unsorted_error"] = str(e)
    return rec


def clip_case(T) -> dict:
    rec = {}
    for name, kwargs in {"norm": {"max_norm": 1.0}, "norm_inf": {"max_norm": 0.5,
                                                                   "norm_type": float("inf")},
                         "norm_1_large": {"max_norm": 100.0, "norm_type": 1}}.items():
        a = T.torch.tensor(data(10, 3, 2), requires_grad=True)
        b = T.torch.tensor(data(11, 4), requires_grad=True)
        ((a * a * a).sum() + (b * 3).sum()).backward()
        total = T.nn.utils.clip_grad_norm_([a, b], **kwargs)
        rec[name] = {"total": float(total), "a": L(a.grad), "b": L(b.grad)}
    a = T.torch.tensor(data(10, 3, 2), requires_grad=True)
    ((a * a * a).sum()).backward()
    T.nn.utils.clip_grad_value_(a, 0.5)
    rec["value"] = L(a.grad)
    return rec


def training_case(T) -> dict:
    """A tutorial's sequence classifier: Embedding -> LSTM -> Linear on the last state,
    CrossEntropyLoss, Adam, clip_grad_norm_; the losses of a few steps."""
    nn = T.nn

    class Classifier(nn.Module):
        def __init__(self, vocab, embed, hidden, classes):
            super().__init__()
            self.embedding = nn.Embedding(vocab, embed)
            self.lstm = nn.LSTM(embed, hidden, batch_first=True)
            self.fc = nn.Linear(hidden, classes)

        def forward(self, tokens):
            out, (h, c) = self.lstm(self.embedding(tokens))
            return self.fc(h[-1])

    T.torch.manual_seed(0)
    model = Classifier(10, 5, 6, 3)
    opt = T.optim.Adam(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(12)
    tokens = T.torch.tensor(rng.integers(0, 10, (8, 7)))
    labels = T.torch.tensor(rng.integers(0, 3, 8))
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = loss_fn(model(tokens), labels)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "fc_bias": L(model.fc.bias)}


def packed_training_case(T) -> dict:
    """Padded token sequences of different lengths, packed (unsorted) into a bidirectional
    GRU whose two last states feed a Linear; SGD with momentum and clip_grad_value_."""
    nn = T.nn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(12, 4)
            self.gru = nn.GRU(4, 5, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(10, 2)

        def forward(self, tokens, lengths):
            packed = T.rnn.pack_padded_sequence(self.embedding(tokens), lengths,
                                                batch_first=True, enforce_sorted=False)
            _, h = self.gru(packed)
            return self.fc(T.torch.cat([h[-2], h[-1]], dim=1))

    T.torch.manual_seed(1)
    model = Classifier()
    opt = T.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    rng = np.random.default_rng(13)
    lengths = [3, 6, 2, 5, 6, 1]
    tokens = rng.integers(1, 12, (6, 6))
    for k, n in enumerate(lengths):
        tokens[k, n:] = 0
    tokens = T.torch.tensor(tokens)
    labels = T.torch.tensor(rng.integers(0, 2, 6))
    losses = []
    for _ in range(4):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(tokens, lengths), labels)
        loss.backward()
        nn.utils.clip_grad_value_(model.parameters(), 0.5)
        opt.step()
        losses.append(loss.item())
    return {"losses": losses}


def char_rnn_case(T) -> dict:
    """A character-level RNN trained on chunks of one text, its hidden state carried from
    chunk to chunk and detached (truncated backpropagation), as char-RNN tutorials do."""
    nn = T.nn
    text = "hello world, hello recurrent world"
    chars = sorted(set(text))
    ids = [chars.index(c) for c in text]
    T.torch.manual_seed(2)
    embed = nn.Embedding(len(chars), 6)
    rnn = nn.RNN(6, 8, num_layers=2, batch_first=True)
    head = nn.Linear(8, len(chars))
    params = [*embed.parameters(), *rnn.parameters(), *head.parameters()]
    opt = T.optim.Adam(params, lr=0.02)
    hidden = None
    losses = []
    for start in range(0, len(ids) - 9, 8):
        x = T.torch.tensor([ids[start:start + 8]])
        y = T.torch.tensor(ids[start + 1:start + 9])
        out, hidden = rnn(embed(x), hidden)
        hidden = hidden.detach()
        loss = nn.functional.cross_entropy(head(out[0]), y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(params, 5.0)
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "hidden": L(hidden)}


def all_cases(T) -> dict:
    out = {}
    for name, (kind, kwargs, shape, extra) in MODULE_CASES.items():
        out[name] = run_module(T, kind, kwargs, shape, **extra)
    for name, (kind, kwargs, state) in CELL_CASES.items():
        out[name] = cell_case(T, kind, kwargs, state)
    out["utils"] = utils_case(T)
    out["clip"] = clip_case(T)
    out["training"] = training_case(T)
    out["packed_training"] = packed_training_case(T)
    out["char_rnn"] = char_rnn_case(T)
    return out


def main() -> None:
    import torch
    import torch.nn.utils.rnn as rnn
    from torch import nn, optim

    T = namespaces(torch, nn, rnn, optim)
    out = {"torch": torch.__version__, "cases": all_cases(T)}
    path = Path(__file__).with_name("torch_rnn.json")
    path.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(out['cases'])} cases)")


if __name__ == "__main__":
    main()
