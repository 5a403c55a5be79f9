"""Training targets on the digits, both ways: a 64-128-10 MLP reaches >= 95 % test accuracy
and a small CNN >= 97 %, each trained eagerly (``zero_grad / backward / step``) and as a
static graph (``opt.minimize`` + ``Session.run``) over the same ``DataLoader`` batches from
the same initial weights, with the same per-step losses in both modes; a checkpoint saved
after eager training gives the same predictions when it is loaded into a graph.

Fixed seeds make every number here reproducible. Measured on the development machine
(seed 0): MLP 96.7 % and CNN 97.8 % in both modes (over seeds 0..4: MLP 96.4-97.2 %, CNN
96.9-97.8 %); the whole file takes about 15 s.
"""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph as kg

# kind -> how it is built and trained, and the test accuracy it must reach
SETUPS = {
    "mlp": dict(flat=True, epochs=15, batch_size=32, lr=0.01, target=0.95),
    "cnn": dict(flat=False, epochs=15, batch_size=32, lr=0.005, target=0.97),
}


def make_model(kind: str, seed: int = 0) -> kg.nn.Module:
    kg.random.seed(seed)  # the same seed, the same initial weights
    if kind == "mlp":
        return kg.nn.Sequential(kg.nn.Linear(64, 128), kg.nn.ReLU(), kg.nn.Linear(128, 10))
    return kg.nn.Sequential(                                  # (N, 1, 8, 8)
        kg.nn.Conv2d(1, 32, kernel_size=3, padding=1), kg.nn.ReLU(),  # (N, 32, 8, 8)
        kg.nn.MaxPool2d(2), kg.nn.Flatten(),                  # (N, 32 * 4 * 4)
        kg.nn.Linear(32 * 4 * 4, 10))


def digits(kind: str, split: str):
    return kg.data.load_digits(split, flat=SETUPS[kind]["flat"])


def loader(kind: str) -> kg.data.DataLoader:
    """A fresh loader with seed 0: every call walks the same sequence of batches."""
    return kg.data.DataLoader(digits(kind, "train"), batch_size=SETUPS[kind]["batch_size"],
                              shuffle=True, seed=0)


def accuracy(logits: np.ndarray, y: np.ndarray) -> float:
    return float((np.argmax(logits, axis=1) == y).mean())


def train_eager(kind: str) -> dict:
    setup, model = SETUPS[kind], make_model(kind)
    criterion = kg.nn.CrossEntropyLoss()
    opt = kg.optim.Adam(model.parameters(), lr=setup["lr"])
    batches, losses = loader(kind), []
    for _ in range(setup["epochs"]):
        for xb, yb in batches:
            opt.zero_grad()
            loss = criterion(model(kg.tensor(xb)), kg.tensor(yb))
            loss.backward()
            opt.step()
            losses.append(loss.item())
    X, y = digits(kind, "test")
    with kg.no_grad():
        logits = model(kg.tensor(X)).numpy()
    return dict(model=model, losses=np.array(losses), logits=logits, accuracy=accuracy(logits, y))


def train_static(kind: str) -> dict:
    setup, model = SETUPS[kind], make_model(kind)
    criterion = kg.nn.CrossEntropyLoss()
    opt = kg.optim.Adam(model.parameters(), lr=setup["lr"])
    X, y = digits(kind, "test")
    graph = kg.Graph()
    with graph.as_default():
        x = kg.placeholder(kg.float32, shape=[None, *X.shape[1:]], name="x")
        labels = kg.placeholder(kg.int64, shape=[None], name="labels")
        logits = model(x)                     # reads Variables made from the model's weights
        loss = criterion(logits, labels)
        train_op = opt.minimize(loss)
        init = kg.global_variables_initializer()  # after minimize: Adam's moments too
    batches, losses = loader(kind), []
    with kg.Session(graph) as sess:
        sess.run(init)
        for _ in range(setup["epochs"]):
            for xb, yb in batches:
                value, _ = sess.run([loss, train_op], {x: xb, labels: yb})
                losses.append(float(value))
        test_logits = sess.run(logits, {x: X})
    return dict(losses=np.array(losses), logits=test_logits,
                accuracy=accuracy(test_logits, y))


@pytest.fixture(scope="module", params=sorted(SETUPS))
def trained(request):
    """Each model trained once per test session, in both modes."""
    kind = request.param
    return kind, train_eager(kind), train_static(kind)


def test_both_modes_take_the_same_steps(trained):
    kind, eager, static = trained
    setup = SETUPS[kind]
    assert len(eager["losses"]) == setup["epochs"] * len(loader(kind))
    np.testing.assert_allclose(static["losses"], eager["losses"], rtol=1e-5, atol=1e-6)
    assert eager["losses"][-20:].mean() < 0.25 * eager["losses"][:20].mean()  # it learned
    np.testing.assert_allclose(static["logits"], eager["logits"], rtol=1e-4, atol=1e-4)


def test_both_modes_reach_the_target_accuracy(trained):
    kind, eager, static = trained
    target = SETUPS[kind]["target"]
    assert eager["accuracy"] >= target, f"{kind} eager: {eager['accuracy']:.2%}"
    assert static["accuracy"] >= target, f"{kind} static: {static['accuracy']:.2%}"


def test_an_eager_checkpoint_runs_in_a_graph(trained, tmp_path):
    kind, eager, _ = trained
    path = tmp_path / f"{kind}.npz"
    kg.save(path, eager["model"])

    model = make_model(kind, seed=1)         # other, untrained weights
    X, y = digits(kind, "test")
    graph = kg.Graph()
    with graph.as_default():
        x = kg.placeholder(kg.float32, shape=[None, *X.shape[1:]], name="x")
        logits = model(x)
        init = kg.global_variables_initializer()
    with kg.Session(graph) as sess:
        sess.run(init)
        assert accuracy(sess.run(logits, {x: X}), y) < 0.5      # untrained: near chance
        kg.load(path, into=sess, module=model)
        loaded = sess.run(logits, {x: X})
    np.testing.assert_allclose(loaded, eager["logits"], rtol=1e-5, atol=1e-5)
    assert accuracy(loaded, y) == eager["accuracy"]
