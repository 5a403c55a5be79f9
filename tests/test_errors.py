"""Errors a learner can act on: bad input is refused with PyTorch's (eager) or TF1's (static)
words, recorded from the real frameworks (tests/recorded/record_errors.py -> errors.json),
naming the argument and what was expected; no message quotes a whole fed value; softmax over
an empty axis gives an empty result; checkpoints refuse names the file cannot hold and clean
up after a save that was killed.

Where kernelgraph's words differ from the recorded ones on purpose, the test says how:
kernelgraph's ``axis`` is PyTorch's ``dim``, its dtypes print as ``float32``, and a hook's
message says ``Tensor`` where PyTorch still says ``Variable`` (kernelgraph's ``Variable`` is
the static-mode one).
"""

import os
import re
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kernelgraph as kg
from kernelgraph import checkpoint
from kernelgraph.errors import InvalidArgumentError, ShapeError, shown

DEVICES = ["cpu", "cuda"]
_TORCH_TYPES = {"torch.FloatTensor": "float32", "torch.DoubleTensor": "float64",
                "torch.IntTensor": "int32", "Variable": "Tensor"}


@pytest.fixture(scope="module")
def rec(recorded):
    return recorded("errors")


def _message(entry) -> str:
    assert "error" in entry, entry
    return entry["error"]["message"]


def _raised(excinfo) -> str:
    return " ".join(str(excinfo.value).split())


def _here() -> str:
    return os.path.basename(__file__)


# -- hooks and .grad (PyTorch's words) --------------------------------------------------------
def _hooked(hook, leaf, device="cpu"):
    x = kg.tensor([1.0, 2.0], requires_grad=True, device=device)
    if leaf:
        x.register_hook(hook)
        y = x * 2.0
    else:
        y = x * 2.0
        y.register_hook(hook)
    y.sum().backward()
    return x.grad.cpu().tolist()


def named(g):
    return kg.ones(3)


HOOKS = {"size": (lambda g: kg.ones(3), False), "size_leaf": (lambda g: kg.ones(3), True),
         "size_named": (named, True), "scalar": (lambda g: kg.ones(()), False),
         "dtype": (lambda g: g.double(), False), "dtype_leaf": (lambda g: g.double(), True),
         "int_dtype": (lambda g: g.int(), False), "list": (lambda g: [1.0, 2.0], True),
         "int": (lambda g: 3, False), "replaces": (lambda g: g * 3.0, True)}


@pytest.mark.parametrize("case", HOOKS)
def test_a_hook_may_replace_a_gradient_only_by_one_like_it(rec, case):
    want = rec["torch"]["hook"][case]
    hook, leaf = HOOKS[case]
    if "value" in want:
        assert _hooked(hook, leaf) == want["value"]
        return
    words = _message(want)
    for torch_word, ours in _TORCH_TYPES.items():
        words = words.replace(torch_word, ours)
    kind = {"RuntimeError": RuntimeError, "TypeError": TypeError}[want["error"]["type"]]
    with pytest.raises(kind) as e:
        _hooked(hook, leaf)
    assert _raised(e) == words


def test_a_hook_may_not_move_a_gradient_to_another_device():
    with pytest.raises(RuntimeError, match=re.escape(
            "hook '<lambda>' has changed the type of value (was cuda:0 float32 got float32)")):
        _hooked(lambda g: g.cpu(), True, device="cuda")
    assert _hooked(lambda g: g * 3.0, True, device="cuda") == [6.0, 6.0]


def test_a_hook_under_create_graph_is_checked_too():
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.register_hook(lambda g: kg.ones(3))
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        y.sum().backward(create_graph=True)


def _assign(value, device="cpu"):
    x = kg.ones(2, requires_grad=True, device=device)
    x.grad = value
    return None if x.grad is None else x.grad.cpu().tolist()


GRADS = {"size": lambda: kg.ones(3), "size_2d": lambda: kg.ones(2, 1),
         "dtype": lambda: kg.ones(2, dtype=kg.float64),
         "int_dtype": lambda: kg.ones(2, dtype=kg.int64), "list": lambda: [1.0, 2.0],
         "int": lambda: 1, "ndarray": lambda: np.ones(2, np.float32), "none": lambda: None,
         "ok": lambda: kg.tensor([3.0, 3.0])}


@pytest.mark.parametrize("case", GRADS)
def test_grad_assignment_takes_a_tensor_like_the_one_it_belongs_to(rec, case):
    want = rec["torch"]["grad_assign"][case]
    if "value" in want:
        assert _assign(GRADS[case]()) == want["value"]
        return
    words = _message(want)
    if "grad_dtype" in words:  # kernelgraph has no grad_dtype: the first sentence, dtype's
        words = words.split(" (defaults")[0].replace("grad_dtype", "dtype")
        words = words.replace("'double'", "'float64'").replace("'long int'", "'int64'")
        words = words.replace("'Float'", "'float32'")
    kind = {"RuntimeError": RuntimeError, "TypeError": TypeError}[want["error"]["type"]]
    with pytest.raises(kind) as e:
        _assign(GRADS[case]())
    assert _raised(e) == words


def test_grad_assignment_names_the_device_types(rec):
    words = _message(rec["torch"]["grad_assign"]["device"])  # a 'meta' grad for a cpu tensor
    with pytest.raises(RuntimeError) as e:
        _assign(kg.ones(2), device="cuda")
    assert _raised(e) == words.replace("'cpu'", "'cuda'").replace("'meta'", "'cpu'")
    assert _assign(kg.tensor([3.0, 3.0], device="cuda"), device="cuda") == [3.0, 3.0]


def test_backward_still_accumulates_into_grad():
    x = kg.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(2):
        (x * x).sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]


# -- axis arguments ---------------------------------------------------------------------------
BAD_AXES = {"float": 1.5, "str": "0", "bool": True, "list": [0, 0]}
SINGLE = {"softmax": ("softmax", lambda x, a: kg.softmax(x, axis=a)),
          "log_softmax": ("log_softmax", lambda x, a: kg.log_softmax(x, axis=a)),
          "concat": ("cat", lambda x, a: kg.concat([x, x], axis=a)),
          "stack": ("stack", lambda x, a: kg.stack([x, x], axis=a)),
          "argmax": ("argmax", lambda x, a: kg.argmax(x, axis=a)),
          "split": (None, lambda x, a: kg.split(x, 1, axis=a)),
          "gather": (None, lambda x, a: kg.gather(x, kg.tensor([0], device=x.device)
                                                   if isinstance(x, kg.Tensor)
                                                   else kg.constant([0]), axis=a))}
REDUCTIONS = {"sum": lambda x, a: kg.reduce_sum(x, axis=a),
              "mean": lambda x, a: kg.reduce_mean(x, axis=a),
              "max": lambda x, a: kg.reduce_max(x, axis=a)}


def _operand(mode, device, shape=(2, 3)):
    if mode == "eager":
        return kg.tensor(np.ones(shape, np.float32), device=device)
    with kg.device(device):
        return kg.placeholder(kg.float32, shape=shape)


def _in_mode(mode, fn):
    if mode == "eager":
        return fn()
    with kg.Graph().as_default():
        return fn()


@pytest.mark.parametrize("mode", ["eager", "static"])
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", SINGLE)
@pytest.mark.parametrize("case", BAD_AXES)
def test_an_axis_of_the_wrong_type_is_refused_naming_it(rec, mode, device, op, case):
    torch_name, call = SINGLE[op]
    if torch_name is not None:
        words = _message(rec["torch"]["axis"][torch_name][case])
        words = words.replace(f"{torch_name}()", f"{op}()").replace("'dim'", "'axis'")
    else:  # PyTorch's split and gather list every overload: the form of the others
        words = f"{op}(): argument 'axis' must be int, not {type(BAD_AXES[case]).__name__}"
    with pytest.raises(TypeError) as e:
        _in_mode(mode, lambda: call(_operand(mode, device), BAD_AXES[case]))
    assert _raised(e).split(" File ")[0] == words


@pytest.mark.parametrize("mode", ["eager", "static"])
@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("case", ["float", "str", "bool"])
def test_a_reduction_axis_of_the_wrong_type_is_refused(rec, mode, op, case):
    words = _message(rec["torch"]["axis"]["amax"][case])
    words = words.replace("amax()", f"{op}()").replace("'dim'", "'axis'")
    with pytest.raises(TypeError) as e:
        _in_mode(mode, lambda: REDUCTIONS[op](_operand(mode, "cpu"), BAD_AXES[case]))
    assert _raised(e).split(" File ")[0] == words


@pytest.mark.parametrize("mode", ["eager", "static"])
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("axis", [[0, 0], (1, -1)])
def test_a_reduction_axis_named_twice_is_refused(rec, mode, device, axis):
    words = _message(rec["torch"]["axis"]["sum"]["list"])  # dim 0 appears multiple times ...
    dim = axis[0] % 2
    words = words.replace("dim 0", f"sum: axis {dim}").replace("dims", "axes")
    with pytest.raises(ShapeError) as e:
        _in_mode(mode, lambda: kg.reduce_sum(_operand(mode, device), axis=axis))
    assert _raised(e).split(" File ")[0] == words
    with pytest.raises(ShapeError, match="appears multiple times"):
        kg.ones(2, 3).sum(dim=list(axis))  # the method form, PyTorch's spelling


def test_static_axis_errors_point_at_the_users_line():
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float32, shape=[2, 3])
        with pytest.raises(TypeError) as e:
            kg.reduce_sum(x, axis=1.5)  # the line named
    assert _here() in str(e.value) and "kg.reduce_sum(x, axis=1.5)  # the line named" in str(
        e.value)


@pytest.mark.parametrize("call", [lambda x: kg.reduce_sum(x, axis=1.5),
                                  lambda x: kg.softmax(x, axis="0"),
                                  lambda x: kg.concat([x, x], axis=[0]),
                                  lambda x: kg.argmax(x, axis=0.0)])
def test_an_axis_is_checked_before_the_rank_is_known(call):
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float32)  # any shape: nothing waits for Session.run
        with pytest.raises(TypeError, match="argument 'axis' must be"):
            call(x)


@pytest.mark.parametrize("mode", ["eager", "static"])
@pytest.mark.parametrize("device", DEVICES)
def test_softmax_axis_none_is_the_last_axis_in_both_modes(mode, device):
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]], np.float32)
    want = np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)
    if mode == "eager":
        got = kg.softmax(kg.tensor(x, device=device), axis=None).cpu().numpy()
    else:
        with kg.Graph().as_default(), kg.device(device):
            p = kg.placeholder(kg.float32, shape=[2, 3])
            with kg.Session() as sess:
                got = sess.run(kg.softmax(p, axis=None), {p: x})
    np.testing.assert_allclose(got, want, rtol=1e-6)


# -- softmax over an empty axis ---------------------------------------------------------------
EMPTY = [("rows_of_nothing", (2, 0), -1), ("no_rows", (0, 3), 0), ("empty_vector", (0,), 0)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("name, shape, axis", EMPTY)
def test_softmax_of_an_empty_axis_is_empty_eager(rec, device, op, name, shape, axis):
    want = rec["torch"]["empty_softmax"][f"{op}/{name}"]["value"]
    x = kg.tensor(np.ones(shape, np.float32), requires_grad=True, device=device)
    y = getattr(kg, op)(x, axis=axis)
    y.sum().backward()
    assert [list(y.shape), list(x.grad.shape)] == [want["shape"], want["grad_shape"]]
    assert y.dtype == kg.float32 and y.device.type == device


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("name, shape, axis", EMPTY)
def test_softmax_of_an_empty_axis_is_empty_static(rec, device, op, name, shape, axis):
    want = rec["tf1"]["empty_softmax"][f"{op}/{name}"]["value"]
    with kg.Graph().as_default(), kg.device(device):
        x = kg.placeholder(kg.float32, shape=shape)
        y = getattr(kg, op)(x, axis=axis)
        (g,) = kg.gradients(kg.reduce_sum(y), [x])
        with kg.Session() as sess:
            yv, gv = sess.run([y, g], {x: np.ones(shape, np.float32)})
    assert [list(yv.shape), list(gv.shape)] == [want["shape"], want["grad_shape"]]


def test_softmax_of_a_0d_tensor_is_still_refused():
    with pytest.raises(ShapeError, match="out of range"):
        kg.softmax(kg.tensor(1.0))


# -- placeholder shapes (TF1's words) ---------------------------------------------------------
SHAPES = {"str_dim": [2, "a"], "float": 2.5, "negative": [-3], "str": "x", "float_dim": [2.5],
          "bool_dim": [True], "nested": [[2]], "int": 2, "unknown": [None, 3], "scalar": []}


@pytest.mark.parametrize("case", SHAPES)
def test_a_malformed_placeholder_shape_is_refused_with_tf1s_words(rec, case):
    want = rec["tf1"]["placeholder"][case]
    with kg.Graph().as_default():
        if "value" in want:
            assert list(kg.placeholder(kg.float32, shape=SHAPES[case]).shape) == want["value"]
            return
        kind = {"TypeError": TypeError, "ValueError": ValueError}[want["error"]["type"]]
        with pytest.raises(kind) as e:
            kg.placeholder(kg.float32, shape=SHAPES[case])  # the user's line
    text = str(e.value)
    assert text.splitlines()[-1].endswith("kg.placeholder(kg.float32, shape=SHAPES[case])  # "
                                          "the user's line")
    got = " ".join(text.splitlines()[0].split())
    words = _message(want)
    if case == "str":  # TF1's own typos: a missing space and a doubled full stop
        words = words.replace("''could", "'' could").rstrip(".") + "."
    if case == "bool_dim":  # TF1 fails in its proto conversion; the value's type instead
        words = ("Error converting shape to a TensorShape: Dimension value must be integer "
                 "or None or have an __index__ method, got value 'True' with type "
                 "'<class 'bool'>'.")
    assert got == f"placeholder: {words}"


def test_placeholder_shape_accepts_numpy_ints_and_minus_one_as_unknown():
    with kg.Graph().as_default():
        assert kg.placeholder(kg.float32, shape=[np.int64(3), -1]).shape == (3, None)
        assert kg.placeholder(kg.float32, shape=np.array([2, 3])).shape == (2, 3)


# -- dynamic_rnn sequence_length --------------------------------------------------------------
LENGTHS = {"too_short": [4, 2], "too_long": [4, 2, 1, 0], "matrix": [[4, 2, 1]], "one": [4],
           "scalar": 3}
_TF_SIZE_WORDS = "Argument sequence_length must be a vector of length batch_size"


def _rnn(mode, sequence_length, batch_known=True):
    x = np.ones((3, 4, 2), np.float32)
    if mode == "eager":
        return kg.nn.dynamic_rnn(kg.nn.RNNCell(2, 5), kg.tensor(x),
                                 sequence_length=sequence_length)[0].shape
    with kg.Graph().as_default():
        inputs = kg.placeholder(kg.float32, [3 if batch_known else None, 4, 2])
        out, _ = kg.nn.dynamic_rnn(kg.nn.RNNCell(2, 5), inputs,
                                   sequence_length=sequence_length)
        with kg.Session() as sess:
            sess.run(kg.global_variables_initializer())
            return sess.run(out, {inputs: x}).shape


@pytest.mark.parametrize("mode", ["eager", "static"])
@pytest.mark.parametrize("case", LENGTHS)
def test_sequence_length_of_the_wrong_size_is_refused(rec, mode, case):
    assert _TF_SIZE_WORDS in _message(rec["tf1"]["sequence_length"]["matrix"])
    assert "error" in rec["tf1"]["sequence_length"][case]  # TF1 refuses each of them too
    shape = np.shape(LENGTHS[case])
    with pytest.raises(ValueError) as e:
        _rnn(mode, LENGTHS[case])
    assert _raised(e) == (f"dynamic_rnn: {_TF_SIZE_WORDS} (3), one int per sequence. "
                          f"Received sequence_length of shape: {kg.graph.shape_str(shape)}")


@pytest.mark.parametrize("mode", ["eager", "static"])
@pytest.mark.parametrize("lengths", [[4.0, 2.0, 1.0], [4.5, 2, 1], [True, False, True]])
def test_sequence_length_must_hold_ints(mode, lengths):
    # TF1 would truncate 4.5 to 4 without a word; kernelgraph refuses it.
    dtype = np.asarray(lengths).dtype.name
    with pytest.raises(TypeError, match=re.escape(
            "Argument sequence_length must hold ints (int32 or int64), one length per "
            f"sequence. Received sequence_length of dtype: {dtype}")):
        _rnn(mode, lengths)


def test_sequence_length_nodes_are_checked_when_the_graph_is_built():
    with kg.Graph().as_default():
        inputs = kg.placeholder(kg.float32, [3, 4, 2])
        cell = kg.nn.RNNCell(2, 5)
        with pytest.raises(TypeError, match="must hold ints.*dtype: float32"):
            kg.nn.dynamic_rnn(cell, inputs, sequence_length=kg.placeholder(kg.float32, [3]))
        with pytest.raises(ValueError, match=re.escape("shape: (3, 1)")):
            kg.nn.dynamic_rnn(cell, inputs, sequence_length=kg.placeholder(kg.int32, [3, 1]))
        with pytest.raises(ValueError, match=re.escape("batch_size (3), one int per sequence. "
                                                       "Received sequence_length of shape: "
                                                       "(2,)")):
            kg.nn.dynamic_rnn(cell, inputs, sequence_length=kg.placeholder(kg.int32, [2]))


@pytest.mark.parametrize("fed", [[4, 2], [1], [4, 2, 1, 0]])
def test_sequence_length_fed_at_run_time_must_match_the_batch(fed):
    x = np.ones((3, 4, 2), np.float32)
    with kg.Graph().as_default():
        inputs = kg.placeholder(kg.float32, [None, 4, 2])
        lengths = kg.placeholder(kg.int32, [None])
        out, _ = kg.nn.dynamic_rnn(kg.nn.RNNCell(2, 5), inputs, sequence_length=lengths)
        with kg.Session() as sess:
            sess.run(kg.global_variables_initializer())
            assert sess.run(out, {inputs: x, lengths: [4, 2, 1]}).shape == (3, 4, 5)
            with pytest.raises(InvalidArgumentError) as e:
                sess.run(out, {inputs: x, lengths: fed})
    text = str(e.value)
    assert "sequence_length_must_have_one_entry_per_sequence" in text
    assert f"({len(fed)} vs 3)" in text
    assert "kg.nn.dynamic_rnn(kg.nn.RNNCell(2, 5), inputs, sequence_length=lengths)" in text


def test_sequence_length_errors_do_not_quote_a_whole_value():
    lengths = list(range(-1, 10_000))
    with pytest.raises(ValueError) as e:
        kg.nn.dynamic_rnn(kg.nn.RNNCell(2, 5), kg.ones(len(lengths), 1, 2),
                          sequence_length=lengths)
    assert "must not be negative" in str(e.value) and len(str(e.value)) < 200


def test_sequence_length_may_be_a_cuda_tensor():
    with kg.device("cuda"):  # the cell's weights too
        x, cell = kg.ones(3, 2, 2), kg.nn.RNNCell(2, 3)
    out, _ = kg.nn.dynamic_rnn(cell, x, sequence_length=kg.tensor([2, 1, 0], device="cuda"))
    assert out.cpu().tolist()[2] == [[0.0] * 3] * 2


# -- messages never quote a whole value -------------------------------------------------------
HUGE = list(range(100_000))
LONG = "x" * 100_000


def _fetch_huge():
    with kg.Graph().as_default(), kg.Session() as sess:
        sess.run(np.arange(100_000.0))


def _feed_huge():
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float32, shape=[None])
        with kg.Session() as sess:
            sess.run(x, {x: [LONG] * 10})


@pytest.mark.parametrize("call", [
    _fetch_huge, _feed_huge,
    lambda: kg.split(kg.ones(4), [LONG]),
    lambda: kg.random.normal([1.5] + HUGE),
    lambda: kg.random.seed(LONG),
    lambda: kg.ones(2).to(LONG),
    lambda: kg.device(LONG),
    lambda: kg.tensor(1.0, dtype=HUGE),
    lambda: kg.nn.Dropout(p=HUGE),
    lambda: kg.nn.Linear(HUGE, 2),
    lambda: kg.autobatch(LONG),
    lambda: kg.pad(kg.ones(2), paddings=[LONG]),
    lambda: kg.optim.Adam([kg.ones(1, requires_grad=True)], betas=HUGE),
    lambda: kg.save(os.devnull, {LONG: np.ones(1)}),
    lambda: kg.placeholder(kg.float32, shape=[LONG]),
    lambda: kg.placeholder(kg.float32, shape=LONG),
], ids=lambda c: getattr(c, "__name__", "call"))
def test_no_message_quotes_a_whole_value(call):
    with pytest.raises(Exception) as e:  # noqa: B017, PT011 - each raises its own kind
        _in_mode("static", call)
    text = str(e.value)
    assert 0 < len(text) < 600, text[:1000]
    assert "x" * 200 not in text and "99999" not in text


def test_shown_caps_a_value_built_piece_by_piece():
    assert shown(HUGE) == "[0, 1, 2, 3, 4, 5, 6, 7, ...]"
    assert len(shown(np.arange(10**6))) <= 80 and shown(1.5) == "1.5" and shown("0") == "'0'"


# -- checkpoints ------------------------------------------------------------------------------
def test_a_name_too_long_for_the_file_format_is_refused_at_save_time(tmp_path):
    path = tmp_path / "w.npz"
    limit = checkpoint.MAX_NAME_BYTES
    assert limit == 65535 - len(".npy")
    kg.save(path, {"w" * limit: np.ones(1)})  # the longest name the .npz format holds
    assert list(kg.load(path)) == ["w" * limit]
    before = path.read_bytes()
    for name in ("w" * (limit + 1), "é" * (limit // 2 + 1)):  # é is two bytes in UTF-8
        with pytest.raises(ValueError, match=rf"is too long to save: {limit + 1} bytes in "
                                             rf"UTF-8, .* at most {limit} bytes"):
            kg.save(path, {"ok": np.ones(1), name: np.ones(1)})
    with pytest.raises(ValueError, match="not valid Unicode"):
        kg.save(path, {"\udc80": np.ones(1)})
    assert path.read_bytes() == before  # nothing was written
    assert sorted(os.listdir(tmp_path)) == ["w.npz"]


_CHILD = textwrap.dedent("""
    import os, signal, sys, time
    import numpy as np
    import kernelgraph as kg

    write = np.lib.format.write_array

    def write_then_stop(*args, **kwargs):
        write(*args, **kwargs)
        if sys.argv[2] == "kill":
            os.kill(os.getpid(), signal.SIGKILL)  # killed in the middle of the save
        print("writing", flush=True)
        time.sleep(60)  # a save in progress, holding its temporary file

    np.lib.format.write_array = write_then_stop
    kg.save(sys.argv[1], {"a": np.ones(3), "b": np.zeros(3)})
""")


def _temps(directory, base):
    pattern = checkpoint._temp_name_pattern(base)
    return sorted(n for n in os.listdir(directory) if pattern.match(n))


def test_the_next_save_removes_what_a_killed_save_left(tmp_path):
    pytest.importorskip("fcntl")
    path = tmp_path / "model.npz"
    kg.save(path, {"a": np.full(3, 7.0)})
    child = subprocess.run([sys.executable, "-c", _CHILD, str(path), "kill"],
                           capture_output=True, timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-2000:]
    left = _temps(tmp_path, "model.npz")
    assert len(left) == 1  # the killed save's temporary file
    assert kg.load(path)["a"].tolist() == [7.0] * 3  # the old checkpoint is whole
    kg.save(path, {"a": np.ones(3)})
    assert _temps(tmp_path, "model.npz") == []
    assert kg.load(path)["a"].tolist() == [1.0] * 3


def test_a_save_never_removes_a_save_in_progress_or_another_targets_files(tmp_path):
    pytest.importorskip("fcntl")
    path = tmp_path / "model.npz"
    # Files a save must leave alone: another target's abandoned temporary file, and a
    # user's file whose name merely looks alike.
    other = tmp_path / ".model.npz.bak.kgsave-abcd1234.tmp"
    mine_alike = tmp_path / ".model.npz.kgsave-notes.tmp"
    for f in (other, mine_alike):
        f.write_text("keep me")
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(path), "hold"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert child.stdout.readline().strip() == b"writing", child.stderr.read()[-2000:]
        held = _temps(tmp_path, "model.npz")
        assert len(held) == 1
        kg.save(path, {"a": np.ones(3)})  # meanwhile, this process saves to the same path
        assert _temps(tmp_path, "model.npz") == held  # the other save's file is untouched
    finally:
        child.kill()
        child.wait(timeout=60)
        child.stdout.close()
        child.stderr.close()
    kg.save(path, {"a": np.ones(3)})  # its writer is gone now: the file is abandoned
    assert _temps(tmp_path, "model.npz") == []
    assert other.read_text() == "keep me" and mine_alike.read_text() == "keep me"
    assert kg.load(path)["a"].tolist() == [1.0] * 3


@pytest.mark.parametrize("call", [lambda x: kg.exp(x, 3), lambda x: kg.softplus(x, x),
                                  lambda x: kg.add(x, x, 1.0), lambda x: kg.where(x > 0, x)])
def test_a_wrong_number_of_inputs_names_the_op_in_every_mode(call):
    graph = kg.Graph()
    with graph.as_default():
        node = kg.placeholder(kg.float32, [2])
    for x in (kg.tensor([1.0, 2.0]), node, np.ones(2, np.float32)):
        with pytest.raises(TypeError) as info:
            call(x)
        assert re.match(r"\w+\(\) takes \d tensor input", str(info.value)), str(info.value)
