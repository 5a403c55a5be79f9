"""The event bus (kernelgraph.trace): node_added, node_executed and gradient events."""

import inspect
import os

import numpy as np
import pytest

import kernelgraph as kg

HERE = os.path.basename(__file__)


def here() -> int:
    """The caller's line number (``line, node = here(), kg.op(...)``)."""
    return inspect.currentframe().f_back.f_lineno


class Recorder:
    """A listener that keeps every event as (kind, info)."""

    def __init__(self):
        self.events = []

    def __call__(self, kind, **info):
        self.events.append((kind, info))

    def of(self, kind):
        return [info for k, info in self.events if k == kind]


@pytest.fixture
def graph():
    g = kg.Graph()
    with g.as_default():
        yield g


def assert_located(location, line):
    filename, lineno = location
    assert os.path.basename(filename) == HERE
    assert lineno == line


def test_no_listener_means_inactive_and_nothing_recorded():
    assert kg.trace.active is False
    x = kg.tensor([1.0, 2.0])
    y = x * 2.0
    z = kg.exp(y).sum()
    for t in (y, z):
        assert t.grad_fn is None and not t.requires_grad
    with kg.trace.listening(Recorder()):
        assert kg.trace.active is True
    assert kg.trace.active is False


def test_add_and_remove_listener():
    rec = Recorder()
    kg.trace.add_listener(rec)
    try:
        kg.tensor([1.0]) + 1.0
    finally:
        kg.trace.remove_listener(rec)
    assert kg.trace.active is False
    count = len(rec.events)
    kg.tensor([1.0]) + 1.0
    assert count == 2 and len(rec.events) == count  # nothing after removal


def test_static_node_added_with_source_location(graph):
    rec = Recorder()
    with kg.trace.listening(rec):
        line_a, a = here(), kg.placeholder(kg.float32, shape=[None, 2], name="a")
        line_c, c = here(), kg.reduce_sum(a * 2.0, axis=1, name="total")
    added = rec.of("node_added")
    assert [info["node"].name for info in added] == ["a", "Const", "mul", "total"]
    assert all(info["mode"] == "static" for info in added)
    assert added[0]["node"] is a and added[-1]["node"] is c
    assert_located(added[0]["location"], line_a)
    for info in added[1:]:
        assert_located(info["location"], line_c)
        assert info["node"].location == info["location"]
    assert rec.of("node_executed") == []  # building runs nothing


def test_eager_node_added_and_executed_with_location():
    x = kg.tensor([1.0, -2.0])  # no requires_grad: watched ops are still recorded
    rec = Recorder()
    with kg.trace.listening(rec):
        line, y = here(), (x * 3.0).relu()
    assert [k for k, _ in rec.events] == ["node_added", "node_executed"] * 2
    added = rec.of("node_added")
    assert [info["node"].op.name for info in added] == ["mul", "relu"]
    for info in added:
        assert info["mode"] == "eager"
        assert_located(info["location"], line)
    assert y.grad_fn is added[1]["node"]
    assert y.requires_grad is False  # recording for the listener does not change autograd
    executed = rec.of("node_executed")
    assert [info["node"] for info in executed] == [info["node"] for info in added]
    for info in executed:
        assert isinstance(info["seconds"], float) and info["seconds"] >= 0.0
    np.testing.assert_allclose(executed[1]["node"].value, [3.0, 0.0])


def test_session_run_emits_node_executed_with_durations(graph):
    a = kg.placeholder(kg.float32, shape=[2], name="a")
    b = kg.exp(a, name="e")
    c = kg.reduce_sum(b * b, name="s")
    rec = Recorder()
    with kg.Session() as sess:
        sess.run(c, {a: [0.0, 1.0]})  # compiled before anyone listened
        with kg.trace.listening(rec):
            out = sess.run(c, {a: [0.0, 1.0]})
        after = len(rec.events)
        sess.run(c, {a: [0.0, 1.0]})  # not listening any more: the plain plan again
    assert len(rec.events) == after
    executed = rec.of("node_executed")
    assert [info["node"].name for info in executed] == ["e", "mul", "s"]
    for info in executed:
        assert info["mode"] == "static"
        assert isinstance(info["seconds"], float) and info["seconds"] >= 0.0
    np.testing.assert_allclose(executed[-1]["value"], out)
    np.testing.assert_allclose(executed[0]["value"], np.exp([0.0, 1.0]), rtol=1e-6)


def test_runtime_error_while_traced_still_names_the_node(graph):
    a = kg.placeholder(kg.float32, shape=[None, None])
    b = kg.placeholder(kg.float32, shape=[None, None])
    line, c = here(), kg.matmul(a, b, name="product")
    with kg.Session() as sess, kg.trace.listening(Recorder()):
        with pytest.raises(kg.errors.InvalidArgumentError) as info:
            sess.run(c, {a: np.ones((2, 3)), b: np.ones((4, 5))})
    msg = str(info.value)
    assert "'product'" in msg and "(2, 3)" in msg and "(4, 5)" in msg
    assert f'{HERE}", line {line}' in msg


def test_eager_backward_emits_gradients():
    a = kg.tensor([1.0, 2.0], requires_grad=True)
    b = kg.tensor([3.0, 4.0], requires_grad=True)
    prod = a * b
    total = prod.sum()
    rec = Recorder()
    with kg.trace.listening(rec):
        total.backward()
    grads = rec.of("gradient")
    by_node = {info["node"]: info["grad"] for info in grads}
    assert set(by_node) == {total.grad_fn, prod.grad_fn, a, b}
    np.testing.assert_allclose(np.asarray(by_node[total.grad_fn]), 1.0)
    np.testing.assert_allclose(np.asarray(by_node[prod.grad_fn]), [1.0, 1.0])
    # The gradients arrive at the leaves too, with the values backward() stores in .grad.
    np.testing.assert_allclose(np.asarray(by_node[a]), [3.0, 4.0])
    np.testing.assert_allclose(np.asarray(by_node[b]), [1.0, 2.0])
    order = [info["node"] for info in grads]
    assert order[:2] == [total.grad_fn, prod.grad_fn]  # output first, leaves last
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 4.0])


def test_static_gradients_emit_gradient_nodes(graph):
    x = kg.placeholder(kg.float32, shape=[2])
    y = kg.reduce_sum(x * x)
    rec = Recorder()
    with kg.trace.listening(rec):
        (gx,) = kg.gradients(y, [x])
    grads = rec.of("gradient")
    assert [info["node"] for info in grads] == [y, y.inputs[0]]
    assert all(isinstance(info["grad"], kg.Node) for info in grads)
    assert all(info["node"].name.startswith("gradients/") for info in rec.of("node_added"))
    with kg.Session() as sess:
        np.testing.assert_allclose(sess.run(gx, {x: [1.0, 2.0]}), [2.0, 4.0])


def test_eager_autograd_ops_while_traced():
    a = kg.tensor([1.0, 2.0], requires_grad=True)
    b = kg.tensor([3.0, 4.0], requires_grad=True)
    rec = Recorder()
    with kg.trace.listening(rec):
        line, prod = here(), a * b
        total = prod.sum()
        total.backward()
    added = rec.of("node_added")
    assert [info["node"] for info in added] == [prod.grad_fn, total.grad_fn]
    assert_located(added[0]["location"], line)
    reached = [info["node"] for info in rec.of("gradient")]
    assert reached[:2] == [total.grad_fn, prod.grad_fn]
    assert {id(t) for t in reached[2:]} == {id(a), id(b)}
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 4.0])
