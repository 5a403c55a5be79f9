"""Per-thread state: two threads using kernelgraph at once do not disturb each other.

Grad mode is per thread, as in PyTorch (a new thread starts with grad enabled); so are the
default graph, the default session and device scopes, as in TF1. A ``kg.autobatch()`` block
defers only its own thread's ops, and a function traced by ``kg.function`` records only its
own thread's ops and reads. Barriers order the threads so that each case really overlaps:
without them the threads could run one after the other and pass by luck.
"""

import threading

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph.jit.record import Recorder

STEPS = 150  # each one overlaps the other thread's no_grad block, twice


def _run_threads(*targets):
    """Run ``targets`` each in a thread; re-raise the first error one of them raised."""
    errors = []

    def guarded(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
                errors.append(e)
                for b in _barriers:
                    b.abort()  # so the other thread does not wait forever
        return run

    threads = [threading.Thread(target=guarded(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]


_barriers: list = []


def _barrier(parties=2):
    b = threading.Barrier(parties, timeout=30)
    _barriers.append(b)
    return b


class _Model:
    """A 3 -> 4 (tanh) -> 1 MLP trained by SGD on fixed data, all eager."""

    def __init__(self, seed):
        rng = np.random.default_rng(seed)
        self.w1 = kg.tensor(rng.normal(size=(3, 4)), dtype=kg.float64, requires_grad=True)
        self.w2 = kg.tensor(rng.normal(size=(4, 1)), dtype=kg.float64, requires_grad=True)
        self.x = kg.tensor(rng.normal(size=(8, 3)), dtype=kg.float64)
        self.y = kg.tensor(rng.normal(size=(8, 1)), dtype=kg.float64)
        self.losses = []

    def forward_backward(self):
        loss = (((self.x @ self.w1).tanh() @ self.w2 - self.y) ** 2).mean()
        loss.backward()
        self.losses.append(loss.item())

    def update(self):
        assert not kg.is_grad_enabled()
        for w in (self.w1, self.w2):
            if w.grad is not None:  # (none yet when this thread's first half is the update)
                w.data = (w - 0.1 * w.grad).data
                w.grad = None

    def state(self):
        return [self.w1.detach().numpy().copy(), self.w2.detach().numpy().copy(),
                list(self.losses)]


def _train(model, sync, first):
    """SGD steps; each forward/backward runs while the other thread is inside no_grad (the
    two threads alternate: ``first`` does its forward/backward in the first half)."""
    for _ in range(STEPS):
        for half in (first, not first):
            if half:
                sync()
                model.forward_backward()
                sync()
            else:
                with kg.no_grad():
                    sync()  # the other thread computes with grad while this one is here
                    model.update()
                    sync()
                assert kg.is_grad_enabled()


def _alone(seed, first):
    model = _Model(seed)
    _train(model, lambda: None, first)
    return model.state()


def test_two_threads_train_at_once_one_in_no_grad():
    a, b, sync = _Model(0), _Model(1), _barrier()
    _run_threads(lambda: _train(a, sync.wait, True), lambda: _train(b, sync.wait, False))
    for together, alone in ((a.state(), _alone(0, True)), (b.state(), _alone(1, False))):
        np.testing.assert_array_equal(together[0], alone[0])
        np.testing.assert_array_equal(together[1], alone[1])
        assert together[2] == alone[2]
        assert together[2][-1] < together[2][0]  # it trained


def test_a_new_thread_starts_with_grad_enabled(recorded):
    seen = []
    with kg.no_grad():
        _run_threads(lambda: seen.append(kg.is_grad_enabled()))
        assert not kg.is_grad_enabled()
    assert seen == [recorded("errors")["torch"]["grad_mode"]["new_thread"]] == [True]


def test_set_grad_enabled_as_a_call_switches_only_this_thread():
    sync, seen = _barrier(), {}

    def off():
        kg.set_grad_enabled(False)  # no with: stays off in this thread
        sync.wait()
        sync.wait()
        seen["off"] = kg.is_grad_enabled()

    def on():
        sync.wait()
        w = kg.tensor([1.0], requires_grad=True)
        seen["on"] = (w * 2.0).requires_grad
        sync.wait()

    _run_threads(off, on)
    assert seen == {"off": False, "on": True}
    assert kg.is_grad_enabled()


def test_a_decorated_function_restores_each_callers_mode():
    # One decorator object serves every call: each call must restore its own caller's mode,
    # also when two threads are inside at once and leave in the other order.
    sync = _barrier()

    @kg.no_grad()
    def inside(steps):
        for _ in range(steps):
            sync.wait()
        return kg.is_grad_enabled()

    seen = {}

    def with_grad():
        seen["a"] = (inside(1), kg.is_grad_enabled())
        sync.wait()

    def without_grad():
        with kg.no_grad():
            seen["b"] = (inside(2), kg.is_grad_enabled())
        seen["b_after"] = kg.is_grad_enabled()

    _run_threads(with_grad, without_grad)
    assert seen == {"a": (False, True), "b": (False, False), "b_after": True}


def test_autobatch_defers_only_its_own_threads_ops():
    sync, seen = _barrier(), {}
    w = kg.tensor([[1.0], [2.0]], requires_grad=True)

    def batching():
        with kg.autobatch() as ab:
            ys = [kg.tensor([[float(i), 1.0]]) @ w for i in range(3)]
            sync.wait()  # the other thread computes while this block is open
            sync.wait()
        seen["ys"] = [y.item() for y in ys]
        seen["nodes"] = ab.stats.nodes

    def eager():
        sync.wait()
        z = kg.tensor([[3.0, 4.0]]) @ w
        seen["z_type"] = type(z).__name__
        seen["z"] = z.item()
        z.backward()
        with pytest.raises(RuntimeError, match="already open in another thread"):
            with kg.autobatch():
                pass
        sync.wait()

    _run_threads(batching, eager)
    assert seen["z_type"] == "Tensor" and seen["z"] == 11.0
    assert seen["ys"] == [2.0, 3.0, 4.0]
    assert seen["nodes"] == 3  # the other thread's matmul was not deferred into this block
    np.testing.assert_array_equal(w.grad.numpy(), [[3.0], [4.0]])


def test_a_trace_records_only_its_own_threads_reads_and_ops():
    sync, seen = _barrier(), {}
    x = kg.tensor([1.0, 2.0])

    def tracing():
        with Recorder() as rec:
            y = kg.relu(x) * 2.0
            sync.wait()
            sync.wait()
        seen["ops"] = [node.op.name for node, _ in rec.nodes]
        seen["reads"] = [kind for kind, *_ in rec.reads]
        seen["y"] = y.tolist()

    def other():
        sync.wait()
        other_x = kg.tensor([3.0])
        seen["other"] = (kg.exp(other_x) + 1.0).item()
        sync.wait()

    _run_threads(tracing, other)
    assert seen["ops"] == ["relu", "mul"]
    assert seen["reads"] == []
    assert seen["y"] == [2.0, 4.0]
    from kernelgraph import eager
    assert eager._tracer is None  # nothing left hooked once both are done


def test_default_graph_session_and_device_scope_are_per_thread():
    # As in TF1: a `with g.as_default()` / `with sess.as_default()` in one thread is not the
    # default of another thread, and neither is a `with kg.device(...)` scope.
    sync, seen = _barrier(), {}
    g = kg.Graph()

    def scoped():
        with g.as_default(), kg.Session() as sess, kg.device("cuda"):
            sync.wait()
            sync.wait()
            seen["here"] = (kg.get_default_graph() is g, kg.get_default_session() is sess)

    def other():
        sync.wait()
        seen["other"] = (kg.get_default_graph() is g, kg.get_default_session(),
                         kg.tensor([1.0]).device.type)
        sync.wait()

    _run_threads(scoped, other)
    assert seen == {"here": (True, True), "other": (False, None, "cpu")}


# -- grad mode's forms, against PyTorch's (tests/recorded/errors.json) -----------------------
@pytest.fixture(scope="module")
def grad_mode(recorded):
    return recorded("errors")["torch"]["grad_mode"]


def test_grad_mode_decorators_behave_as_pytorchs(grad_mode):
    @kg.no_grad
    def bare():
        return kg.is_grad_enabled()

    @kg.enable_grad
    def bare_enable():
        return kg.is_grad_enabled()

    @kg.no_grad()
    def recursive(n):
        if n:
            recursive(n - 1)
        return kg.is_grad_enabled()

    assert bare() == grad_mode["bare_no_grad"]
    with kg.no_grad():
        assert bare_enable() == grad_mode["bare_enable_grad_inside_no_grad"]
    assert recursive(3) == grad_mode["recursive_inside"]
    assert kg.is_grad_enabled() == grad_mode["after_recursive"]


def test_set_grad_enabled_as_a_call_a_block_and_a_decorator(grad_mode):
    kg.set_grad_enabled(False)
    try:
        assert kg.is_grad_enabled() == grad_mode["after_call_set_grad_enabled_false"]
    finally:
        kg.set_grad_enabled(True)

    @kg.set_grad_enabled(False)
    def decorated():
        return kg.is_grad_enabled()

    assert kg.is_grad_enabled() == grad_mode["after_decorating_with_set_grad_enabled_false"]
    assert decorated() == grad_mode["inside_set_grad_enabled_false"]
    with kg.set_grad_enabled(False):
        assert not kg.is_grad_enabled()
    assert kg.is_grad_enabled()


def test_a_decorated_generator_runs_under_the_mode_at_every_step(grad_mode):
    @kg.no_grad()
    def generator():
        w = kg.tensor(1.0, requires_grad=True)
        yield kg.is_grad_enabled()
        yield (w * 2.0).requires_grad

    it = generator()
    seen = [next(it), kg.is_grad_enabled(), next(it)]
    assert seen == grad_mode["generator"]
    assert list(generator()) == [False, False]


@pytest.mark.parametrize("value", [0, "False", None])
def test_set_grad_enabled_takes_a_bool(grad_mode, value):
    name = {0: "int", "False": "str", None: "none"}[value]
    with pytest.raises(TypeError) as e:
        kg.set_grad_enabled(value)
    assert str(e.value) == grad_mode[f"set_grad_enabled_{name}"]["error"]["message"]
    assert kg.is_grad_enabled()
