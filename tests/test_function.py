"""``@kg.function``: eager code traced into a static plan per input signature.

Every result is checked against the same Python function run eagerly (bit for bit on the
CPU: both modes call the same kernels, and fusion is bit-identical), and gradients against
eager ``backward()`` and finite differences.
"""

import collections
import gc
import inspect
import os
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kernelgraph as kg
from kernelgraph import eager, trace
from kernelgraph.errors import InvalidArgumentError, TraceError, TraceWarning

HERE = os.path.basename(__file__)
RNG = np.random.default_rng(0)


def here() -> int:
    """The caller's line number."""
    return inspect.currentframe().f_back.f_lineno


def rand(*shape, dtype=np.float32, grad=False):
    return kg.tensor(RNG.standard_normal(shape).astype(dtype), requires_grad=grad)


def same(a, b):
    """Tensors (or nested structures of them) with bit-identical values."""
    if isinstance(a, kg.Tensor):
        assert isinstance(b, kg.Tensor)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.detach().cpu().numpy(), b.detach().cpu().numpy())
    elif isinstance(a, list | tuple):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            same(a[k], b[k])
    else:
        assert a == b


@pytest.fixture
def quiet():
    """Record TraceWarnings instead of printing them; the test asserts on them."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def trace_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, TraceWarning)]


# -- same results as eager -------------------------------------------------------------------
W1, B1 = rand(64, 128) * 0.1, rand(128) * 0.1
W2, B2 = rand(128, 10) * 0.1, rand(10) * 0.1


def chain(x, y):
    return kg.sigmoid(kg.tanh(x * y + 1.5) - x / 3.0) * kg.exp(-kg.abs(y))


def mlp(x):
    return kg.relu(x @ W1 + B1) @ W2 + B2


def loss(x, labels):
    return kg.softmax_cross_entropy(mlp(x), labels).mean()


def shapes(x, y):
    parts = kg.split(kg.concat([x, y], axis=0), 2, axis=0)
    s = kg.stack([parts[0], parts[1] * 2.0])
    return {"sum": kg.sum(s, axis=1), "max": s.max(), "row": x[1:, ::2].T}


CASES = {
    "chain float32": (chain, lambda: (rand(3, 4), rand(4))),
    "chain float64": (chain, lambda: (rand(3, 4, dtype=np.float64), rand(4, dtype=np.float64))),
    "mlp": (mlp, lambda: (rand(5, 64),)),
    "softmax cross-entropy": (loss, lambda: (rand(8, 64), kg.tensor(RNG.integers(0, 10, 8)))),
    "concat split stack getitem": (shapes, lambda: (rand(2, 3), rand(2, 3))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_values_as_eager_on_every_call(name):
    fn, make = CASES[name]
    compiled = kg.function(fn)
    for _ in range(3):  # the trace call, then calls that run the compiled plan
        args = make()
        same(compiled(*args), fn(*args))
    assert compiled.trace_count == 1


@given(
    x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                 elements=st.floats(-3, 3)),
    scale=st.floats(-2, 2))
def test_broadcasting_chain_matches_eager_and_numpy(x, scale):
    f = kg.function(lambda a, b: kg.tanh(a * b + a) * 2.0)
    a, b = kg.tensor(x), kg.tensor(np.float64(scale) * np.ones(x.shape[-1:]))
    f(a, b)
    out = f(a, b)  # the compiled plan
    same(out, kg.tanh(a * b + a) * 2.0)
    np.testing.assert_allclose(out.numpy(), np.tanh(x * scale + x) * 2.0, rtol=1e-12)


def test_python_arguments_and_non_tensor_outputs():
    Pair = collections.namedtuple("Pair", "a b")

    @kg.function
    def f(x, scale, opts=None):
        return {"y": x * scale, "rest": [None, 3, "ok"], "pair": Pair(x + 1.0, scale)}

    x = rand(3)
    for _ in range(2):
        out = f(x, 2.0, opts=("a", 1))
        assert isinstance(out["pair"], Pair) and out["pair"].b == 2.0
        assert out["rest"] == [None, 3, "ok"]
        same(out["y"], x * 2.0)
        same(out["pair"].a, x + 1.0)
    assert f.trace_count == 1


def test_returning_an_input_or_a_capture_gives_a_copy_with_the_same_values():
    w = rand(2)
    f = kg.function(lambda x: (x, w))
    x = rand(2)
    f(x)
    a, b = f(x)
    same(a, x)
    same(b, w)
    a.data[0] = 99.0  # the result is the caller's own array
    assert x.data[0] != 99.0


# -- the cache ------------------------------------------------------------------------------
def test_one_trace_per_signature_and_retrace_on_shape_dtype_and_values():
    f = kg.function(lambda x, n: x * n)
    f(rand(3), 2)
    f(rand(3), 2)
    assert f.trace_count == 1
    f(rand(4), 2)  # shape
    f(rand(4, dtype=np.float64), 2)  # dtype
    f(rand(4, dtype=np.float64, grad=True), 2)  # requires_grad
    f(rand(4, dtype=np.float64), 3)  # a Python value
    assert f.trace_count == 5
    f(rand(3), 2), f(rand(4), 2)  # every earlier signature is still cached
    assert f.trace_count == 5
    with kg.no_grad():
        f(rand(3), 2)  # grad mode is part of the signature
    assert f.trace_count == 6


def test_side_effects_happen_only_while_tracing():
    seen = []

    @kg.function
    def f(x):
        seen.append("traced")
        return x + 1.0

    for _ in range(4):
        f(rand(2))
    assert seen == ["traced"]


def test_the_same_tensor_twice_is_part_of_the_signature():
    f = kg.function(lambda a, b: a - b)
    x, y = rand(3), rand(3)
    same(f(x, x), x - x)
    same(f(x, y), x - y)  # not the trace of f(x, x), which read one placeholder twice
    assert f.trace_count == 2


def test_too_many_traces_warn_naming_the_argument_that_changed(quiet):
    f = kg.function(lambda x, n: x * n, max_traces=3)
    x = rand(2)
    for n in range(4):
        f(x, n)
    messages = trace_warnings(quiet)
    assert len(messages) == 1
    assert "traced 4 times (max_traces=3)" in messages[0]
    assert "n: 2 -> 3" in messages[0]
    assert quiet[0].filename.endswith(HERE)  # attributed to the caller's line
    for n in range(4, 9):
        f(x, n)
    # warned again at 5, 7 and 11 ... traces, not on every call
    assert len(trace_warnings(quiet)) == 3


def test_shape_change_is_named_in_the_retrace_warning(quiet):
    f = kg.function(lambda x: x * 2.0, max_traces=1)
    f(rand(2, 3))
    f(rand(5, 3))
    (message,) = trace_warnings(quiet)
    assert "x: shape (2, 3) -> (5, 3)" in message


# -- guards ----------------------------------------------------------------------------------
def test_a_branch_on_a_tensor_warns_naming_the_line_and_value(quiet):
    @kg.function
    def f(x):
        if x.sum() > 0:
            return x * 2.0
        return -x

    line = here() - 4
    same(f(kg.tensor([1.0, 2.0])), kg.tensor([2.0, 4.0]))
    (message,) = trace_warnings(quiet)
    assert f'{HERE}", line {line}:  if x.sum() > 0:' in message
    assert "bool() of a tensor computed from argument 'x' gave True" in message
    assert "kg.where" in message and "kg.cond" in message
    assert "'f'" in message or "f'" in message


def test_guard_recheck_retraces_when_the_branch_flips_and_results_stay_right(quiet):
    def f(x):
        if x.sum() > 0:
            return x * 2.0
        return x - 1.0

    line = here() - 4
    compiled = kg.function(f)
    inputs = [[1.0, 2.0], [3.0, 4.0], [-5.0, 1.0], [-1.0, 0.0], [2.0, 2.0]]
    for values in inputs:
        x = kg.tensor(values)
        same(compiled(x), f(x))
    assert compiled.trace_count == 2  # one trace per outcome, both kept
    messages = trace_warnings(quiet)
    assert len(messages) == 2
    assert f'line {line}:  if x.sum() > 0:' in messages[1]
    assert "gave True when traced, False now" in messages[1]


def test_a_loop_count_read_with_item_is_guarded(quiet):
    @kg.function
    def f(x):
        y = x
        for _ in range(int(x.sum().item())):
            y = y * 2.0
        return y

    same(f(kg.tensor([1.0, 1.0])), kg.tensor([4.0, 4.0]))
    same(f(kg.tensor([0.5, 1.5])), kg.tensor([2.0, 6.0]))  # same sum: the plan
    same(f(kg.tensor([1.0, 2.0])), kg.tensor([8.0, 16.0]))  # new count: traced again
    assert f.trace_count == 2
    assert "item() of a tensor computed from argument 'x' gave 2.0" in trace_warnings(quiet)[0]


@pytest.mark.parametrize("read", ["numpy", "tolist", "float", "asarray"])
def test_every_kind_of_value_read_is_guarded(read, quiet):
    reads = {"numpy": lambda t: t.numpy()[0], "tolist": lambda t: t.tolist()[0],
             "float": lambda t: float(t[0]), "asarray": lambda t: np.asarray(t)[0]}

    @kg.function
    def f(x):
        return x * float(reads[read](x.sum(keepdims=True)))

    for values in ([1.0, 2.0], [1.0, 2.0], [2.0, 2.0]):
        x = kg.tensor(values)
        same(f(x), x * float(sum(values)))
    assert f.trace_count == 2
    assert trace_warnings(quiet)


def test_reading_a_constant_or_a_shape_is_not_a_guard(quiet):
    @kg.function
    def f(x):
        if kg.tensor(2.0).item() > 1 and x.shape[0] == 2:
            return x * 2.0
        return x

    for _ in range(3):
        f(rand(2))
    assert f.trace_count == 1
    assert trace_warnings(quiet) == []


def test_a_value_read_of_a_captured_tensor_is_guarded(quiet):
    flag = kg.tensor(1.0)
    f = kg.function(lambda x: x * 2.0 if flag > 0 else x * 3.0)
    x = kg.tensor([1.0])
    same(f(x), kg.tensor([2.0]))
    flag.data[...] = -1.0
    same(f(x), kg.tensor([3.0]))
    assert "captured tensor 'flag'" in trace_warnings(quiet)[0]


def test_strict_mode_raises_instead_of_warning():
    @kg.function(strict=True)
    def f(x):
        return x if x.sum() > 0 else -x

    line = here() - 2
    with pytest.raises(TraceError, match=rf'{HERE}", line {line}:  return x if x.sum\(\) > 0'):
        f(kg.tensor([1.0]))
    assert f.trace_count == 0
    g = kg.function(lambda x: x * 2.0, strict=True)  # nothing frozen: fine
    same(g(kg.tensor([1.0])), kg.tensor([2.0]))


# -- captured tensors ------------------------------------------------------------------------
def test_captured_parameters_updated_in_place_are_seen():
    w = kg.tensor([1.0, 2.0])
    f = kg.function(lambda x: x * w)
    x = kg.tensor([3.0, 4.0])
    same(f(x), kg.tensor([3.0, 8.0]))
    w.data[:] = [5.0, 6.0]
    same(f(x), kg.tensor([15.0, 24.0]))
    assert f.trace_count == 1


CAPTURED = kg.tensor([1.0, 2.0])


def _uses_global(x):
    return x * CAPTURED


def test_a_rebound_global_is_looked_up_again():
    global CAPTURED
    f = kg.function(_uses_global)
    x = kg.tensor([3.0, 4.0])
    same(f(x), kg.tensor([3.0, 8.0]))
    saved = CAPTURED
    try:
        CAPTURED = kg.tensor([10.0, 20.0])
        same(f(x), kg.tensor([30.0, 80.0]))
        assert f.trace_count == 1
        CAPTURED = kg.tensor([1.0, 2.0, 3.0])  # a new shape: traced again
        same(f(kg.tensor([1.0, 1.0, 1.0])), kg.tensor([1.0, 2.0, 3.0]))
    finally:
        CAPTURED = saved


def test_methods_and_rebound_attributes():
    class Model:
        def __init__(self):
            self.layer = {"w": kg.tensor([[1.0], [2.0]], requires_grad=True)}

        @kg.function
        def __call__(self, x):
            return (x @ self.layer["w"]).sum()

    m = Model()
    x = kg.tensor([[1.0, 1.0]])
    same(m(x), kg.tensor(3.0))
    m.layer["w"] = kg.tensor([[3.0], [4.0]], requires_grad=True)
    y = m(x)
    same(y, kg.tensor(7.0))
    y.backward()
    same(m.layer["w"].grad, kg.tensor([[1.0], [1.0]]))
    assert Model.__call__.trace_count == 1
    cf = m.__call__.get_concrete_function(x)
    assert [c.name for c in cf.captures] == ["self.layer['w']"]


def test_a_capture_in_a_list_reached_through_a_helper_is_looked_up_again():
    holder = [kg.tensor([2.0])]
    f = kg.function(lambda x: x * _first(holder))
    x = kg.tensor([3.0])
    same(f(x), kg.tensor([6.0]))
    holder[0] = kg.tensor([5.0])
    same(f(x), kg.tensor([15.0]))
    assert f.trace_count == 1
    assert [c.name for c in f.get_concrete_function(x).captures] == ["holder[0]"]


def _first(holder):
    return holder[0]


def test_a_capture_found_on_no_path_is_held_by_reference_and_retraced_when_gone():
    class Store:  # class attributes are not searched: the capture is held by reference
        w = kg.tensor([2.0])

    f = kg.function(lambda x: x * Store.w)
    x = kg.tensor([3.0])
    same(f(x), kg.tensor([6.0]))
    assert f.get_concrete_function(x).captures[0].name is None
    Store.w.data[0] = 4.0  # in place: seen
    same(f(x), kg.tensor([12.0]))
    Store.w = kg.tensor([5.0])  # the old tensor is gone: the trace is stale
    gc.collect()
    same(f(x), kg.tensor([15.0]))
    assert f.trace_count == 2


def test_the_plan_never_writes_into_inputs_or_parameters():
    w = rand(4, 4)
    f = kg.function(lambda x: kg.relu(kg.exp(x @ w) * 2.0) - 1.0)
    x = rand(3, 4)
    before_x, before_w = x._array.copy(), w._array.copy()
    for _ in range(3):
        f(x)
    np.testing.assert_array_equal(x._array, before_x)
    np.testing.assert_array_equal(w._array, before_w)


# -- gradients -------------------------------------------------------------------------------
def _grads_of(params):
    out = [p.grad.numpy().copy() for p in params]
    for p in params:
        p.grad = None
    return out


def test_backward_through_a_kg_function_matches_eager():
    params = [rand(6, 8, grad=True), rand(8, grad=True), rand(8, 3, grad=True)]

    def model(x, labels):
        h = kg.tanh(x @ params[0] + params[1])
        return kg.softmax_cross_entropy(h @ params[2], labels).mean()

    compiled = kg.function(model)
    for _ in range(3):
        x, labels = rand(5, 6, grad=True), kg.tensor(RNG.integers(0, 3, 5))
        compiled(x, labels).backward()
        got = _grads_of(params + [x])
        model(x, labels).backward()
        want = _grads_of(params + [x])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    assert compiled.trace_count == 1


def test_gradient_matches_finite_differences():
    w = kg.tensor(RNG.standard_normal((3, 2)), requires_grad=True)  # float64
    f = kg.function(lambda x: (kg.sigmoid(x @ w) ** 2).sum())
    x = kg.tensor(RNG.standard_normal((4, 3)))
    f(x)
    f(x).backward()
    eps, numeric = 1e-6, np.zeros((3, 2))
    for i in np.ndindex(3, 2):
        for sign in (1, -1):
            w.data[i] += sign * eps
            numeric[i] += sign * f(x).item() / (2 * eps)
            w.data[i] -= sign * eps
    np.testing.assert_allclose(w.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_each_output_backpropagates_and_the_input_itself_can_be_an_output():
    x = rand(3, grad=True)
    f = kg.function(lambda x: (x * 2.0, kg.exp(x), x))
    f(x)
    a, b, c = f(x)
    (a.sum() + b.sum() * 3.0 + (c * c).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0 + 3.0 * np.exp(x.data) + 2.0 * x.data,
                               rtol=1e-6)


def test_detach_and_no_grad_inside_stop_the_gradient_as_in_eager():
    def f(x):
        s = x.detach().sum()
        with kg.no_grad():
            m = x.mean()
        return (x * s + x * m + kg.tensor(x) * x).sum()

    compiled = kg.function(f)
    x = rand(4, grad=True)
    for _ in range(2):
        compiled(x).backward()
        (got,) = _grads_of([x])
        f(x).backward()
        (want,) = _grads_of([x])
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_outputs_that_do_not_need_gradients_are_plain_tensors():
    x = rand(3, grad=True)
    f = kg.function(lambda x: (kg.argmax(x), x > 0, x * 2.0))
    for _ in range(2):
        i, s, y = f(x)
        assert not i.requires_grad and not s.requires_grad and y.requires_grad
        assert i.is_leaf and s.is_leaf
    with kg.no_grad():
        assert not f(x)[2].requires_grad


def test_training_loop_with_a_kg_function_forward_matches_eager():
    def train(use_function):
        rng = np.random.default_rng(1)
        w1 = kg.tensor(rng.standard_normal((4, 16)) * 0.5, dtype=kg.float32, requires_grad=True)
        w2 = kg.tensor(rng.standard_normal((16, 3)) * 0.5, dtype=kg.float32, requires_grad=True)

        def forward(x, labels):
            return kg.cross_entropy(kg.relu(x @ w1) @ w2, labels)

        step = kg.function(forward) if use_function else forward
        losses = []
        for _ in range(15):
            x = kg.tensor(rng.standard_normal((8, 4)), dtype=kg.float32)
            labels = kg.tensor(rng.integers(0, 3, 8))
            loss = step(x, labels)
            loss.backward()
            losses.append(loss.item())
            with kg.no_grad():
                w1.data -= 0.1 * w1.grad.data  # in place: the capture sees it
                w2 = (w2 - 0.1 * w2.grad).detach().requires_grad_()  # rebound closure
                w1.grad = None
        return losses, w1.data, w2.data, getattr(step, "trace_count", None)

    eager_run, compiled_run = train(False), train(True)
    np.testing.assert_allclose(compiled_run[0], eager_run[0], rtol=1e-5)
    np.testing.assert_allclose(compiled_run[1], eager_run[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(compiled_run[2], eager_run[2], rtol=1e-5, atol=1e-6)
    assert eager_run[0][-1] < eager_run[0][0]
    assert compiled_run[3] == 1


def test_dropout_draws_as_eager_and_backward_uses_the_same_mask():
    kg.random.seed(0)
    f = kg.function(lambda x: kg.dropout(x, 0.5, seed=7))
    x = kg.ones(8, requires_grad=True)
    outs = []
    for _ in range(3):
        y = f(x)
        y.backward(kg.ones(8))
        np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())  # grad == mask
        x.grad = None
        outs.append(y.detach().numpy())
    kg.random.seed(0)
    for got in outs:
        np.testing.assert_array_equal(got, kg.dropout(kg.ones(8), 0.5, seed=7).numpy())
    for reseed in (0, 3):  # kg.random.seed restarts the stream the trace shares with eager
        kg.random.seed(reseed)
        got = [f(x).detach().numpy() for _ in range(2)]
        kg.random.seed(reseed)
        for g in got:
            np.testing.assert_array_equal(g, kg.dropout(kg.ones(8), 0.5, seed=7).numpy())
    assert f.trace_count == 2  # a new global seed is a new trace


def test_higher_order_gradients_are_refused_clearly():
    x = rand(2, grad=True)
    f = kg.function(lambda x: (x * x).sum())
    f(x)
    with pytest.raises(TraceError, match="create_graph=True"):
        f(x).backward(create_graph=True)


# -- reduce_retracing ------------------------------------------------------------------------
def test_reduce_retracing_makes_one_trace_for_every_batch_size():
    w = rand(3, 2, grad=True)
    f = kg.function(lambda x: kg.relu(x @ w).mean(axis=0), reduce_retracing=True)
    for batch in (1, 2, 3, 7):
        x = rand(batch, 3)
        y = f(x)
        same(y, kg.relu(x @ w).mean(axis=0))
        y.sum().backward()
        (got,) = _grads_of([w])
        kg.relu(x @ w).mean(axis=0).sum().backward()
        (want,) = _grads_of([w])
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert f.trace_count == 2  # exact for the first, then one with the batch dim unknown
    assert f.graph(rand(9, 3)).nodes[0].shape == (None, 3)


def test_reduce_retracing_keeps_exact_shapes_when_the_code_reads_one(quiet):
    @kg.function(reduce_retracing=True)
    def f(x):
        return x.sum() / x.shape[0]

    line = here() - 2
    for batch in (1, 2, 3):
        same(f(kg.ones(batch, 2)), kg.tensor(2.0))
    assert f.trace_count == 3
    assert f'line {line}:  return x.sum() / x.shape[0]' in trace_warnings(quiet)[0]


# -- errors ----------------------------------------------------------------------------------
def test_the_users_exception_comes_through_and_nothing_is_left_hooked():
    @kg.function
    def f(x):
        raise KeyError("mine")

    with pytest.raises(KeyError, match="mine"):
        f(rand(2))
    assert eager._tracer is None and not trace.active
    assert f.trace_count == 0
    same(kg.function(lambda x: x + 1.0)(kg.tensor([1.0])), kg.tensor([2.0]))


def test_a_run_time_error_in_a_later_call_points_at_the_users_line():
    @kg.function
    def f(p, idx):
        return kg.gather(p, idx) * 2.0

    line = here() - 2
    p = kg.tensor([1.0, 2.0, 3.0])
    f(p, kg.tensor([0, 2]))
    with pytest.raises(InvalidArgumentError, match="index 7 is out of range") as info:
        f(p, kg.tensor([1, 7]))
    assert f'{HERE}", line {line}:  return kg.gather(p, idx)' in str(info.value)


@pytest.mark.parametrize("arg, match", [
    ({1, 2}, "argument 'x' of type set is not hashable"),
    (np.ones(2), "argument 'x' is an array; pass a tensor"),
    ({"a": [1, {2}]}, r"argument 'x\['a'\]\[1\]' of type set"),
])
def test_bad_arguments_are_named(arg, match):
    f = kg.function(lambda x: x)
    with pytest.raises(TypeError, match=match):
        f(arg)


def test_bad_use_is_refused_clearly():
    with pytest.raises(TypeError, match="expects a Python function"):
        kg.function(3)
    with pytest.raises(ValueError, match="max_traces must be an int >= 1"):
        kg.function(lambda x: x, max_traces=0)
    g = kg.Graph()
    with g.as_default():
        node = kg.placeholder(kg.float32, name="p")
    with pytest.raises(TypeError, match="graph node 'p'"):
        kg.function(lambda x: x)(node)
    with pytest.raises(TypeError, match="returned a object"):
        kg.function(lambda x: object())(rand(1))


def test_backward_inside_a_traced_function_is_refused():
    w = rand(2, grad=True)

    @kg.function
    def f(x):
        (x * w).sum().backward()
        return x

    with pytest.raises(TraceError, match="called backward"):
        f(rand(2))


# -- nesting and introspection ---------------------------------------------------------------
def test_a_kg_function_called_while_tracing_runs_inline():
    inner = kg.function(lambda x: kg.exp(x))
    outer = kg.function(lambda x: inner(x) + 1.0)
    x = rand(3)
    for _ in range(2):
        same(outer(x), kg.exp(x) + 1.0)
    assert inner.trace_count == 0 and outer.trace_count == 1
    assert [n.op.name for n in outer.graph(x).nodes] == ["placeholder", "exp", "const", "add"]


def test_graph_explain_source_and_concrete_function():
    w = rand(4, 2)
    f = kg.function(lambda x: kg.relu(x @ w) * 2.0 + 1.0)
    x = rand(3, 4)
    graph = f.graph(x)
    assert isinstance(graph, kg.Graph)
    assert [n.op.name for n in graph.nodes][:3] == ["placeholder", "placeholder", "matmul"]
    cf = f.get_concrete_function(x)
    assert "x: float32(3, 4)" in repr(cf) and "1 captured" in repr(cf)
    assert "fuse" in f.explain(x).summary()
    assert f.source(x).startswith("def _run(")
    assert f.trace_count == 1  # introspection reused the one trace


# -- devices ---------------------------------------------------------------------------------
def test_cuda_tensors_stay_on_the_gpu_with_gradients():
    # (numba's CUDA simulator runs this when the machine has no GPU: tiny shapes)
    w = kg.tensor([[1.0, -2.0], [3.0, 0.5]]).to("cuda").requires_grad_()
    f = kg.function(lambda x: (kg.tanh(x @ w) * kg.tensor(x.detach()) + 1.0).sum())
    x = kg.tensor([[0.1, 0.2]]).to("cuda")
    for _ in range(2):
        y = f(x)
        assert y.device == "cuda:0"
        y.backward()
        assert w.grad.device == "cuda:0"
        got = w.grad.cpu().numpy().copy()
        w.grad = None
        (kg.tanh(x @ w) * kg.tensor(x.detach()) + 1.0).sum().backward()
        np.testing.assert_allclose(got, w.grad.cpu().numpy(), rtol=1e-6)
        w.grad = None
        want = (kg.tanh(x @ w) * x + 1.0).sum().item()
        np.testing.assert_allclose(y.detach().cpu().numpy(), want, rtol=1e-6)
