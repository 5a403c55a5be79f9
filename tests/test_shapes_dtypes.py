"""Shapes, axes and dtypes are checked as the framework each mode follows checks them, and
values are converted exactly or refused, never wrapped or rounded in silence.

Compared with what the real frameworks did, recorded in ``tests/recorded/``:

- ``shapes.json`` (record_shapes.py): PyTorch's ``reshape`` in both modes; PyTorch's
  ``permute``/``transpose`` in eager mode and TF1's ``tf.transpose`` in static mode;
- ``promotion.json`` (record_promotion.py): PyTorch's type promotion for add, sub, mul, div,
  pow and maximum over bool, int32, int64, float32, float64, tensors and Python scalars, and
  the bool cases beside the table (unary ops, reductions, where, matmul, comparisons);
- ``dtypes.json`` (record_dtypes.py): what ``torch.tensor(data, dtype=...)`` keeps, converts
  or refuses;
- ``dtype_rules.json`` (record_dtype_rules.py): the dtypes of PyTorch's reductions, its and
  TF1's refusals of products of two dtypes, TF1's constants of NumPy scalars, Python ints
  beyond a tensor's dtype in both, PyTorch's big ints among floats, TF1's text feeds.

Raw NumPy arrays handed to ops are checked against kg.tensor of the same arrays.

Where kernelgraph departs from the recording on purpose, the case is listed with the reason
(``*_DEVIATIONS``) and the test checks what kernelgraph does instead.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kernelgraph as kg
import kernelgraph.compat.v1 as tf1
from kernelgraph import dtypes as D
from kernelgraph.errors import InvalidArgumentError

RECORDED = Path(__file__).parent / "recorded"
# The recorded inputs make NaN and infinity on purpose (0 / 0, (-2.0) ** 0.5).
pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")


def _names(name: str, key: str) -> list:
    """Case names of a recording, read at collection time for the test ids."""
    data = json.loads((RECORDED / f"{name}.json").read_text(encoding="utf-8"))
    cases = data[key]
    return list(cases) if isinstance(cases, dict) else [c.get("name") or _table_id(c)
                                                        for c in cases]


def _table_id(c) -> str:
    return f"{c['op']}-{c['x']}-{c['y']}-{c['form']}"


def _case(cases: list, name: str) -> dict:
    return next(c for c in cases if (c.get("name") or _table_id(c)) == name)


def decode(v):
    """A value written by ``encode`` in record_shapes.py."""
    (tag, value), *rest = v.items()
    if tag == "ndarray":
        return np.array(value, dtype=v["dtype"])
    if tag == "numpy":
        return np.dtype(v["dtype"]).type(value)
    if tag == "tuple":
        return tuple(decode(x) for x in value)
    if tag == "list":
        return [decode(x) for x in value]
    return None if tag == "none" else value


# -- comparing errors ------------------------------------------------------------------------
# The Python class a kernelgraph error must be an instance of, for the recorded type.
_CLASSES = {"RuntimeError": RuntimeError, "NotImplementedError": RuntimeError,
            "IndexError": IndexError, "TypeError": TypeError, "ValueError": ValueError,
            "InvalidArgumentError": ValueError}


def _offending_type(message: str) -> str:
    """The type a TypeError names (``float`` in "... found element of type float at pos 0")."""
    m = re.search(r"(?:of type|but got|, not) ([\w.]+)", message)
    assert m, message
    return m.group(1).rstrip(".")


def same_error(error: Exception, expected: dict, also=()) -> None:
    """``error`` is what the recording says: an instance of its type's class, and its
    message holds the recorded one (for a TypeError about an argument's type, the type it
    names: PyTorch words those by the way the argument was passed). ``also``: other
    messages that count (TF1 words one error two ways)."""
    assert isinstance(error, _CLASSES[expected["type"]]), (type(error), error, expected)
    text = str(error)
    if expected["type"] == "TypeError" and "tuple of ints" in expected["message"]:
        assert _offending_type(expected["message"]) in text, (text, expected)
        return
    assert any(m in text for m in (expected["message"], *also)), (text, expected)


def outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - compared with the recording by the caller
        return None, e


# -- reshape ---------------------------------------------------------------------------------
RESHAPES = _names("shapes", "reshape")


def _reshape_args(case):
    return decode(case["args"])


def _function_target(case):
    """The target a ``kg.reshape(x, target)`` call passes for the case's arguments."""
    args = _reshape_args(case)
    if case["form"] == "function":
        return args[0]
    return args[0] if len(args) == 1 and isinstance(args[0], tuple | list) else tuple(args)


def _check_reshape(fn, x_value, expected):
    out, error = outcome(fn)
    if "shape" in expected:
        assert error is None, error
        assert list(out.shape) == expected["shape"]
        np.testing.assert_array_equal(np.asarray(out).ravel(), x_value.ravel())
    else:
        assert error is not None, f"expected {expected['error']}, got shape {out.shape}"
        same_error(error, expected["error"])


@pytest.mark.parametrize("name", RESHAPES)
def test_reshape_eager_is_pytorchs(name, recorded):
    case = _case(recorded("shapes")["reshape"], name)
    shape, args = tuple(case["input"]), _reshape_args(case)
    value = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    x = kg.tensor(value)
    fn = (lambda: x.reshape(*args)) if case["form"] == "method" else \
        (lambda: kg.reshape(x, *args))
    _check_reshape(lambda: fn().numpy(), value, case["torch"])


@pytest.mark.parametrize("name", ["infer_middle", "count_mismatch", "zero_size_ambiguous",
                                  "to_0d", "float", "f_two_inferred"])
def test_reshape_on_cuda_is_pytorchs(name, recorded):
    case = _case(recorded("shapes")["reshape"], name)
    shape, args = tuple(case["input"]), _reshape_args(case)
    value = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    x = kg.tensor(value, device="cuda")
    fn = (lambda: x.reshape(*args)) if case["form"] == "method" else \
        (lambda: kg.reshape(x, *args))
    _check_reshape(lambda: fn().cpu().numpy(), value, case["torch"])


@pytest.mark.parametrize("dims", ["known", "unknown"])
@pytest.mark.parametrize("name", RESHAPES)
def test_reshape_static_is_pytorchs(name, dims, recorded):
    """The same rules when the graph is built (known shape) or, for unknown dims, when the
    fed shape makes them known: then the run fails as TF1's does (InvalidArgumentError)
    with PyTorch's message."""
    case = _case(recorded("shapes")["reshape"], name)
    shape = tuple(case["input"])
    value = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    expected = case["torch"]
    graph = kg.Graph()
    with graph.as_default():
        x = kg.placeholder(kg.float32, shape=shape if dims == "known" else [None] * len(shape))
        y, error = outcome(lambda: kg.reshape(x, _function_target(case)))
    if error is None:
        with kg.Session(graph) as sess:
            out, error = outcome(lambda: sess.run(y, {x: value}))
        if error is not None and "error" in expected:
            assert isinstance(error, InvalidArgumentError), error
            assert expected["error"]["message"] in str(error)
            return
    if "shape" in expected:
        assert error is None, error
        assert list(out.shape) == expected["shape"]
        np.testing.assert_array_equal(out.ravel(), value.ravel())
    else:
        assert error is not None, f"expected {expected['error']}"
        same_error(error, expected["error"])
        assert "test_shapes_dtypes.py" in str(error)  # built: it names the user's line


def test_reshape_partly_known_shape_fails_where_it_is_built():
    """A count that cannot divide the known part of the input's size is refused at once."""
    with kg.Graph().as_default():
        x = kg.placeholder(kg.float32, shape=[None, 3])
        assert kg.reshape(x, (-1,)).shape == (None,)
        assert kg.reshape(x, (2, -1, 3)).shape == (2, None, 3)
        with pytest.raises(RuntimeError, match=r"shape '\[4, 2\]' is invalid"):
            kg.reshape(x, (4, 2))
        z = kg.placeholder(kg.float32, shape=[0, None])
        with pytest.raises(RuntimeError, match="ambiguous"):
            kg.reshape(z, (-1, 0))


@pytest.mark.parametrize("name", _names("shapes", "zeros"))
def test_zeros_and_ones_take_sizes_as_pytorch(name, recorded):
    case = _case(recorded("shapes")["zeros"], name)
    args, expected = decode(case["args"]), case["torch"]
    for factory, fill in ((kg.zeros, 0.0), (kg.ones, 1.0)):
        out, error = outcome(lambda f=factory: f(*args).numpy())
        if "shape" in expected:
            assert error is None, error
            np.testing.assert_array_equal(out, np.full(expected["shape"], fill, np.float32))
        else:
            assert error is not None, out
            same_error(error, expected["error"], also=("Dimension size must be non-negative",))


# -- permutations ----------------------------------------------------------------------------
PERMS = _names("shapes", "permute")
# kernelgraph takes a 1-D integer array as a perm, as TF1 does; PyTorch wants a tuple.
EAGER_PERM_DEVIATIONS = {"numpy_array"}
# TF1 reads [True, False] as [1, 0]; kernelgraph refuses bools as axes in both modes.
STATIC_PERM_DEVIATIONS = {"bool"}
# With an unknown input rank the perm's length is the rank: (1,) can be no permutation of one
# axis, so kernelgraph refuses it when the node is built, in TF1's words for that error
# (TF1 builds the node and fails when it runs).
UNKNOWN_RANK_DEVIATIONS = {"too_short": "perm dim 1 is out of range of input rank 1"}


def _check_perm(fn, value, expected, perm, also=()):
    out, error = outcome(fn)
    if "shape" in expected:
        assert error is None, error
        np.testing.assert_array_equal(out, np.transpose(value, perm))
    else:
        assert error is not None, f"expected {expected['error']}, got {out.shape}"
        same_error(error, expected["error"], also)


# The simulator is slow: on CUDA, the cases that exercise each kind of check.
CUDA_PERMS = ("swap", "out_of_range", "duplicate", "too_long", "rank3_negative", "float")


@pytest.mark.parametrize("name, device", [(n, "cpu") for n in PERMS] +
                         [(n, "cuda") for n in PERMS if n in CUDA_PERMS])
def test_permute_eager_is_pytorchs(name, device, recorded):
    case = _case(recorded("shapes")["permute"], name)
    shape, perm = tuple(case["input"]), decode(case["perm"])
    value = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    x = kg.tensor(value, device=device)
    expected = case["tf"] if name in EAGER_PERM_DEVIATIONS else case["torch"]
    _check_perm(lambda: kg.transpose(x, perm).cpu().numpy(), value, expected, perm)
    if isinstance(perm, tuple):  # x.permute(1, 0) as well as x.permute((1, 0))
        _check_perm(lambda: x.permute(*perm).cpu().numpy(), value, expected, perm)
    if not isinstance(perm, int):  # x.permute(1) means dims (1,) to PyTorch's method
        _check_perm(lambda: x.permute(perm).cpu().numpy(), value, expected, perm)


@pytest.mark.parametrize("rank", ["known", "unknown"])
@pytest.mark.parametrize("name", PERMS)
def test_transpose_static_is_tf1s(name, rank, recorded):
    """TF1's errors when the node is built; with an unknown rank TF1 checks a perm against
    its own length, and a wrong rank fails the run. kernelgraph refuses a repeated axis when
    the node is built (TF1 only when it runs)."""
    case = _case(recorded("shapes")["permute"], name)
    shape, perm = tuple(case["input"]), decode(case["perm"])
    value = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    expected = case["tf" if rank == "known" else "tf_unknown_rank"]
    if name in STATIC_PERM_DEVIATIONS:
        expected = {"error": {"type": "TypeError", "message": "has DataType bool"}}
    if rank == "unknown" and name in UNKNOWN_RANK_DEVIATIONS:
        expected = {"error": {"type": "ValueError",
                              "message": UNKNOWN_RANK_DEVIATIONS[name]}}

    def run():
        graph = kg.Graph()
        with graph.as_default():
            x = kg.placeholder(kg.float32, shape=shape if rank == "known" else None)
            y = kg.transpose(x, perm)
        with kg.Session(graph) as sess:
            return sess.run(y, {x: value})

    # The same error as TF1 reports for a known rank counts too (see the docstring).
    known = case["tf"].get("error", {}).get("message")
    _check_perm(run, value, expected, perm, also=(known,) if known else ())


@pytest.mark.parametrize("name", _names("shapes", "transpose"))
def test_transpose_method_is_pytorchs(name, recorded):
    case = _case(recorded("shapes")["transpose"], name)
    shape, (d0, d1) = tuple(case["input"]), decode(case["dims"])
    value = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    x = kg.tensor(value)
    out, error = outcome(lambda: x.transpose(d0, d1).numpy())
    if "shape" in case["torch"]:
        assert error is None, error
        np.testing.assert_array_equal(out, np.swapaxes(value, d0, d1) if shape else value)
    else:
        same_error(error, case["torch"]["error"])


def test_out_of_range_axis_is_not_ignored():
    """The issue's example: an axis out of range was dropped in silence (shape (2, 3))."""
    with pytest.raises(IndexError, match="Dimension out of range"):
        kg.transpose(kg.ones(2, 3), (0, 5))
    with kg.Graph().as_default(), pytest.raises(ValueError, match="perm dim 5 is out of range"):
        kg.transpose(kg.placeholder(kg.float32, shape=[2, 3]), (0, 5))
    with kg.Graph().as_default(), pytest.raises(ValueError, match="perm dim 5 is out of"):
        tf1.transpose(tf1.placeholder(tf1.float32, shape=[2, 3]), [0, 5])


@pytest.mark.parametrize("optimize", [True, False])
def test_negative_perms_through_the_compiler(optimize):
    """The compiler's own readings of a perm (a transpose undone by a transpose, a matrix
    transpose bound as ``x.T``) see the checked, non-negative perm."""
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    graph = kg.Graph()
    with graph.as_default():
        x = kg.placeholder(kg.float32, shape=[2, 3])
        back = kg.transpose(kg.transpose(x, (-1, 0)), (1, -2)) * 2.0
        t = kg.transpose(x, (-1, -2)) + 1.0
        u = kg.transpose(kg.placeholder(kg.float32, shape=None, name="u"), (-1, 0))
    assert u.shape == (None, None)  # the perm's length is the rank, as in TF1
    with kg.Session(graph, optimize=optimize) as sess:
        b, tt = sess.run([back, t], {x: value})
    np.testing.assert_array_equal(b, value * 2.0)
    np.testing.assert_array_equal(tt, value.T + 1.0)


# -- converting values -----------------------------------------------------------------------
def _dtype_cases():
    spec = importlib.util.spec_from_file_location("record_dtypes", RECORDED / "record_dtypes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CASES


DTYPE_CASES = _dtype_cases()
# The kept dtype holding each of PyTorch's dtypes exactly.
KEPT = {"uint8": "int64", "uint16": "int64", "uint32": "int64", "uint64": "int64",
        "int8": "int64", "int16": "int64", "float16": "float32"}
# Where kernelgraph departs from torch.tensor: values it refuses (PyTorch keeps a dtype
# kernelgraph has not, or wraps an array's values in silence) and values it converts
# exactly (PyTorch refuses the byte order or long double).
REFUSED = {"uint64_big", "complex", "complex_python", "int_array_too_big_for_int32",
           "uint64_big_to_int64", "nan_array_to_int64"}
CONVERTED = {"big_endian_float32", "big_endian_int64", "long_double"}


def _expected_conversion(name, recorded):
    make, dtype = DTYPE_CASES[name]
    rec = recorded("dtypes")["cases"][name]
    if name in REFUSED:
        return None
    if name in CONVERTED:
        arr = np.asarray(make())
        return D.kept_dtype(arr.dtype).name, arr.tolist()
    if "error" in rec:
        return rec["error"]
    return KEPT.get(rec["dtype"], rec["dtype"]), rec["value"]


def _check_conversion(name, result, error, expected):
    make, _ = DTYPE_CASES[name]
    if expected is None:  # refused on purpose: the message names the value's dtype
        assert isinstance(error, D.ConversionError), (error, result)
        source = np.asarray(make()).dtype.name if not isinstance(make(), complex) else \
            "complex"
        assert source in str(error), (source, str(error))
    elif isinstance(expected, dict):
        assert error is not None, f"expected {expected}, got {result}"
        same_error(error, expected, also=("expects", "cannot hold"))
    else:
        assert error is None, error
        dtype, value = expected
        assert result.dtype.name == dtype
        np.testing.assert_array_equal(result, np.asarray(value, dtype=result.dtype))


@pytest.mark.parametrize("name", list(DTYPE_CASES))
def test_tensor_converts_as_pytorch_or_refuses(name, recorded):
    make, dtype = DTYPE_CASES[name]
    result, error = outcome(lambda: kg.tensor(make(), dtype=dtype).numpy())
    _check_conversion(name, result, error, _expected_conversion(name, recorded))


@pytest.mark.parametrize("name", list(DTYPE_CASES))
def test_constant_and_variable_convert_as_tensor_does(name, recorded):
    """Static mode converts what eager mode converts, the same way, and refuses the same."""
    make, dtype = DTYPE_CASES[name]
    expected = _expected_conversion(name, recorded)
    for factory in (kg.constant, kg.Variable):
        graph = kg.Graph()
        with graph.as_default():
            node, error = outcome(lambda f=factory: f(make(), dtype=dtype))
            init = kg.global_variables_initializer()
        result = None
        if error is None:
            with kg.Session(graph) as sess:
                sess.run(init)
                result = sess.run(node)
        _check_conversion(name, result, error, expected)


FEEDS = [  # (placeholder dtype, value, the array a run returns, or None: refused)
    ("int64", np.array([1, 2 ** 63 - 1], np.uint64), [1, 2 ** 63 - 1]),
    ("int64", np.array([1, 2 ** 63 + 1], np.uint64), None),
    ("int32", np.array([2 ** 40]), None),
    ("int32", [2 ** 40], None),
    ("int64", 2 ** 63, None),
    ("int64", [float("nan")], None),
    ("int32", np.array([np.inf]), None),
    ("int32", [1.5, -1.5], [1, -1]),  # TF1 truncates a fed float toward zero
    ("float32", np.array([1 + 2j]), None),
    ("float32", np.array([0.5, -2.0], ">f4"), [0.5, -2.0]),
    ("int64", np.array([7, -8], ">i8"), [7, -8]),
    ("float32", np.array([0.1, 1e300]), [np.float32(0.1), np.inf]),  # rounded, as in TF1
    ("float32", np.array([1, 255], np.uint8), [1.0, 255.0]),
    ("int32", np.array([-3, 300], np.int16), [-3, 300]),
    ("bool", [2, 0], [True, False]),
    ("float32", ["1.5"], [1.5]),  # TF1 parses fed text
]


@pytest.mark.parametrize("dtype, value, want", FEEDS,
                         ids=[f"{d}-{i}" for i, (d, _, _) in enumerate(FEEDS)])
def test_feed_converts_exactly_or_refuses(dtype, value, want):
    graph = kg.Graph()
    with graph.as_default():
        x = kg.placeholder(dtype, shape=None, name="x")
        y = kg.identity(x)
    with kg.Session(graph) as sess:
        if want is None:
            with pytest.raises(TypeError, match="Cannot feed value .* to 'x'"):
                sess.run(y, {x: value})
        else:
            out = sess.run(y, {x: value})
            assert out.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(out, np.asarray(want, dtype))


def test_assign_converts_exactly_or_refuses():
    graph = kg.Graph()
    with graph.as_default():
        v = kg.Variable(np.zeros(2, np.int32), name="v")
        small = v.assign(np.array([1, 2], np.uint8))
        with pytest.raises(D.ConversionError, match=r"int32 without overflow: \d+ \(int64"):
            v.assign(np.array([2 ** 40, 1]))
        with pytest.raises(D.ConversionError, match="uint64"):
            kg.Variable(np.array([2 ** 63 + 1], np.uint64))
        init = kg.global_variables_initializer()
    with kg.Session(graph) as sess:
        sess.run(init)
        out = sess.run(small)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [1, 2])


_NOT_KEPT = st.sampled_from([np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64,
                             np.float16, ">f4", ">f8", ">i4", ">i8", "<f4", "<i8", "?"])


@st.composite
def _foreign_arrays(draw):
    """Arrays of dtypes kernelgraph holds exactly after converting, some non-contiguous or
    read-only (uint64 values within int64's range)."""
    dtype = np.dtype(draw(_NOT_KEPT))
    elements = hnp.from_dtype(dtype, allow_nan=True, allow_infinity=True)
    if dtype == np.uint64:
        elements = st.integers(0, 2 ** 63 - 1)
    arr = draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                          elements=elements))
    if arr.ndim and draw(st.booleans()):
        arr = arr[..., ::2]
    if draw(st.booleans()):
        arr.setflags(write=False)
    return arr


@given(_foreign_arrays())
def test_foreign_dtypes_convert_exactly_in_both_modes(arr):
    kept = D.kept_dtype(arr.dtype)
    eager = kg.tensor(arr).numpy()
    assert eager.dtype == kept and eager.shape == arr.shape
    # Every value comes back: compared in the source dtype (NaN equal to NaN).
    np.testing.assert_array_equal(eager.astype(arr.dtype), arr)
    assert (eager == arr)[~np.isnan(eager)].all() if kept.kind == "f" else (eager == arr).all()
    graph = kg.Graph()
    with graph.as_default():
        c = kg.constant(arr)
        x = kg.placeholder(kept, shape=arr.shape)
        y = kg.identity(x)
    with kg.Session(graph) as sess:
        const, fed = sess.run([c, y], {x: arr})
    np.testing.assert_array_equal(const, eager)
    np.testing.assert_array_equal(fed, eager)
    assert const.dtype == fed.dtype == kept


def test_python_ints_beyond_int64_are_refused_not_rounded():
    """NumPy reads [2**63, 1] as float64 (rounding 2**63 + 1 to 2**63); PyTorch refuses."""
    for data in (2 ** 63, [2 ** 63 + 1, 1], [-2 ** 63 - 1], [[1], [2 ** 64]]):
        with pytest.raises(D.ConversionError, match="Overflow when unpacking long long"):
            kg.tensor(data)
        with kg.Graph().as_default(), pytest.raises(D.ConversionError, match="Overflow"):
            kg.constant(data)
    assert kg.tensor([2 ** 63 - 1, -2 ** 63]).tolist() == [2 ** 63 - 1, -2 ** 63]
    assert kg.tensor([1e20, 2]).dtype == kg.float32  # floats stay floats


def test_arange_of_floats_is_float32():
    assert kg.arange(0, 1, 0.25).dtype == kg.float32  # np.arange's float64 was kept
    assert kg.arange(4, dtype=kg.float64).dtype == kg.float64
    assert kg.arange(3).dtype == kg.int64


# -- promotion -------------------------------------------------------------------------------
TABLE = _names("promotion", "table")
# PyTorch's pow computes a bool tensor to a Python bool power (a copy for True, all True
# for False), and so does eager mode; with any other bool operands it refuses. A graph node
# refuses bool ** bool, as TF1 (no bool pow) does.
STATIC_DEVIATIONS = {"pow-bool-bool-scalar"}
_BINARY = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
           "div": lambda x, y: x / y, "pow": lambda x, y: x ** y, "maximum": kg.maximum}


def _kind(dtype):
    return "bool" if dtype == "bool" else dtype.rstrip("0123456789")


def _operands(rec, case):
    a, b, form = case["x"], case["y"], case["form"]
    x = np.array(rec["x"][_kind(a)], dtype=a) if form != "scalar_left" else \
        rec["scalar_x"][_kind(a)]
    y = np.array(rec["y"][_kind(b)], dtype=b) if form != "scalar" else \
        rec["scalar_y"][_kind(b)]
    return x, y


def _check_value(out, expected):
    """A result against PyTorch's: same dtype, and the same values (floats to the last few
    ulps: the frameworks' pow and division may round differently)."""
    if "error" in expected:
        raise AssertionError(f"expected {expected['error']}, got {out}")
    out = np.asarray(out)
    assert out.dtype.name == expected["dtype"], (out.dtype, expected)
    want = np.asarray(expected["value"], dtype=out.dtype).reshape(expected["shape"])
    if out.dtype.kind == "f":
        tol = 1e-6 if out.dtype == np.float32 else 1e-13
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(out, want)


def _compare(fn, expected, deviation=False):
    """``fn()`` against PyTorch's ``expected`` (a ``deviation``: refused as TF1 refuses
    it). A static graph that fails only when it runs (a value is at fault, not a dtype)
    raises TF1's InvalidArgumentError."""
    out, error = outcome(fn)
    if deviation:
        assert isinstance(error, D.DtypeError) and "not implemented for 'Bool'" in str(error)
    elif "error" in expected:
        assert error is not None, f"expected {expected['error']}, got {out}"
        if isinstance(error, InvalidArgumentError):
            assert expected["error"]["message"] in str(error), (error, expected)
        else:
            same_error(error, expected["error"])
    else:
        assert error is None, error
        _check_value(out, expected)


def _eager(op, x, y, device="cpu"):
    def wrap(v):
        return kg.tensor(v, device=device) if isinstance(v, np.ndarray) else v
    return lambda: _BINARY[op](wrap(x), wrap(y)).cpu().numpy()


def _static(op, x, y, optimize=True, device="cpu"):
    def run():
        graph = kg.Graph()
        feeds = {}
        with graph.as_default(), kg.device(device):
            operands = []
            for v in (x, y):
                if isinstance(v, np.ndarray):
                    p = kg.placeholder(v.dtype, shape=v.shape)
                    feeds[p] = v
                    v = p
                operands.append(v)
            out = _BINARY[op](*operands)
        with kg.Session(graph, optimize=optimize) as sess:
            return sess.run(out, feeds)
    return run


@pytest.mark.parametrize("name", TABLE)
def test_promotion_eager_is_pytorchs(name, recorded):
    rec = recorded("promotion")
    case = _case(rec["table"], name)
    _compare(_eager(case["op"], *_operands(rec, case)), case["torch"])


@pytest.mark.parametrize("name", TABLE)
def test_promotion_static_is_pytorchs(name, recorded):
    rec = recorded("promotion")
    case = _case(rec["table"], name)
    _compare(_static(case["op"], *_operands(rec, case)), case["torch"],
             name in STATIC_DEVIATIONS)


CUDA_TABLE = ["add-bool-bool-tensor", "mul-bool-bool-tensor", "sub-bool-int32-tensor",
              "add-bool-int64-scalar", "div-bool-bool-tensor", "maximum-bool-bool-tensor",
              "pow-int32-float64-tensor", "add-int64-float32-scalar_left",
              "pow-bool-bool-tensor"]


@pytest.mark.parametrize("mode", ["eager", "static"])
@pytest.mark.parametrize("name", CUDA_TABLE)
def test_promotion_on_cuda_is_pytorchs(name, mode, recorded):
    rec = recorded("promotion")
    case = _case(rec["table"], name)
    x, y = _operands(rec, case)
    fn = _eager(case["op"], x, y, "cuda") if mode == "eager" else \
        _static(case["op"], x, y, device="cuda")
    _compare(fn, case["torch"], mode == "static" and name in STATIC_DEVIATIONS)


def _extra_inputs():
    return {"b": np.array([True, False, True, False]), "c": np.array([True, True, False, False]),
            "i": np.array([3, -2, 0, 5]), "i32": np.array([3, -2, 0, 5], np.int32),
            "b2": np.array([[True, False], [True, True]]),
            "i2": np.array([[1, 2], [3, 4]], np.int32)}


EXTRA = {
    "neg_bool": lambda t: -t["b"],
    "abs_bool": lambda t: kg.abs(t["b"]),
    "relu_bool": lambda t: kg.relu(t["b"]),
    "sign_bool": lambda t: kg.sign(t["b"]),
    "exp_bool": lambda t: kg.exp(t["b"]),
    "sum_bool": lambda t: kg.sum(t["b"]),
    "sum_bool_axis": lambda t: kg.sum(t["b2"], 0),
    "mean_bool": lambda t: kg.mean(t["b"]),
    "mean_int": lambda t: kg.mean(t["i"]),
    "max_bool": lambda t: kg.max(t["b"]),
    "where_bool_bool": lambda t: kg.where(t["b"], t["b"], t["c"]),
    "where_bool_int_scalar": lambda t: kg.where(t["b"], t["b"], 1),
    "where_scalars": lambda t: kg.where(t["b"], 1.5, 2),
    "where_int32_scalar": lambda t: kg.where(t["b"], t["i32"], 2),
    "where_bool_scalars": lambda t: kg.where(t["b"], True, 2),
    "matmul_bool": lambda t: kg.matmul(t["b2"], t["b2"]),
    "matmul_int32": lambda t: kg.matmul(t["i2"], t["i2"]),
    "less_bool": lambda t: t["b"] < t["c"],
    "equal_bool_int": lambda t: kg.equal(t["b"], 1),
    "greater_bool_float": lambda t: kg.greater(t["b"], 0.5),
    "pow_int_negative": lambda t: t["i"] ** -1,
    "pow_bool_scalar_true": lambda t: t["b"] ** True,
    "add_int32_big_scalar": lambda t: t["i32"] + 2 ** 40,
    "add_bool_bool_then_float": lambda t: (t["b"] + t["c"]) * 2.5,
    "square_bool": lambda t: kg.square(t["b"]),
    "clip_bool_int": lambda t: kg.clip(t["b"], 0, 1),
    "clip_int_float": lambda t: kg.clip(t["i"], 0.5, 2.5),
    "clip_int32_int": lambda t: kg.clip(t["i32"], -1, 2),
}
STATIC_EXTRA_DEVIATIONS = {
    # See STATIC_DEVIATIONS.
    "pow_bool_scalar_true": {"error": {"type": "RuntimeError",
                                       "message": "\"pow\" not implemented for 'Bool'"}},
}
EXTRA_DEVIATIONS = {
    # PyTorch names the kernel it lacks ("addmm_impl_cpu_" here, "dot" or "bmm" for other
    # shapes); kernelgraph names the op.
    "matmul_bool": {"error": {"type": "RuntimeError",
                              "message": "\"matmul\" not implemented for 'Bool'"}},
    # PyTorch wraps 2**40 to 0 in an int32 sum; kernelgraph refuses the scalar.
    "add_int32_big_scalar": {"error": {"type": "ValueError", "message": "1099511627776"}},
}


@pytest.mark.parametrize("mode", ["eager", "static", "static-unoptimized"])
@pytest.mark.parametrize("name", list(EXTRA))
def test_bools_beside_the_table_are_pytorchs(name, mode, recorded):
    expected = EXTRA_DEVIATIONS.get(name) or (mode != "eager" and STATIC_EXTRA_DEVIATIONS.get(
        name)) or recorded("promotion")["extra"][name]["torch"]
    values = _extra_inputs()
    if mode == "eager":
        def fn():
            return np.asarray(EXTRA[name]({k: kg.tensor(v) for k, v in values.items()}).numpy())
    else:
        def fn():
            graph = kg.Graph()
            with graph.as_default():
                nodes = {k: kg.placeholder(v.dtype, shape=v.shape, name=k)
                         for k, v in values.items()}
                out = EXTRA[name](nodes)
            with kg.Session(graph, optimize=mode == "static") as sess:
                return sess.run(out, {nodes[k]: v for k, v in values.items()})
    if name == "add_int32_big_scalar":  # in both modes, never NumPy's OverflowError
        with pytest.raises(D.ConversionError, match="1099511627776 does not fit the "
                           "tensor's dtype int32"):
            fn()
        return
    _compare(fn, expected)


def test_bool_sum_in_a_fused_chain_stays_logical():
    """``(b + c)`` is a logical or even inside an elementwise chain the compiler fuses: the
    fused body would carry True + True as 2 into the multiplication."""
    b, c = np.array([True, False, True]), np.array([True, True, False])
    graph = kg.Graph()
    with graph.as_default():
        x, y = kg.placeholder(kg.bool_, shape=[3]), kg.placeholder(kg.bool_, shape=[3])
        out = kg.equal((x + y) * 3.0, 3.0)
    with kg.Session(graph) as sess:
        np.testing.assert_array_equal(sess.run(out, {x: b, y: c}), [True, True, True])


@pytest.mark.parametrize("mode", ["eager", "static"])
def test_pow_gradient_with_a_bool_exponent(mode):
    """d/dx x ** b is b * x ** (b - 1) with b read as 0 or 1 (as PyTorch computes it); the
    rule must not subtract from a bool, which is refused."""
    x, b = np.array([1.5, 2.0], np.float32), np.array([True, False])
    if mode == "eager":
        t = kg.tensor(x, requires_grad=True)
        (t ** kg.tensor(b)).sum().backward()
        grad = t.grad.numpy()
    else:
        graph = kg.Graph()
        with graph.as_default():
            px, pb = kg.placeholder(kg.float32, shape=[2]), kg.placeholder(kg.bool_, shape=[2])
            (g,) = kg.gradients(kg.sum(px ** pb), [px])
            (g_true,) = kg.gradients(kg.sum(px ** True), [px])
        with kg.Session(graph) as sess:
            grad, grad_true = sess.run([g, g_true], {px: x, pb: b})
        np.testing.assert_array_equal(grad_true, [1.0, 1.0])
    np.testing.assert_array_equal(grad, [1.0, 0.0])


def test_arrays_of_other_dtypes_as_operands_convert_exactly():
    """A NumPy array handed to an op (beside a tensor, or alone) counts as the kept dtype
    holding its values, as kg.tensor would make it; what cannot be held is refused."""
    out = kg.add(kg.tensor([1.0]), np.array([2], np.uint8))
    assert out.dtype == kg.float32 and out.tolist() == [3.0]
    raw = kg.add(np.array([1.5], np.float16), np.array([2], ">i4"))
    assert raw.dtype == np.float32 and raw.tolist() == [3.5]
    assert kg.add(-0.0, np.array(3, ">i4")).dtype == np.float32
    with pytest.raises(D.ConversionError, match="uint64"):
        kg.add(np.array([1]), np.array([2 ** 63 + 1], np.uint64))
    with pytest.raises(TypeError, match="uint64"):  # eager names the dtype it refuses
        kg.add(kg.tensor([1]), np.array([2 ** 63 + 1], np.uint64))
    with pytest.raises(D.ConversionError, match=r"mul\(\): argument 1 cannot hold complex "
                       r"numbers \(complex128\)"):  # refused as kg.tensor refuses it
        kg.mul(np.array([1 + 1j]), 2)


# -- raw NumPy arrays handed to ops ------------------------------------------------------------
# Arrays of dtypes kernelgraph does not keep: an op converts each as kg.tensor does.
RAW_ARRAYS = {
    "float16": np.array([1.5, -0.0, np.nan], np.float16),
    "big_endian_float64": np.array([0.5, 3.0, -2.0], ">f8"),
    "big_endian_float32": np.array([1.5, 2.5, 0.5], ">f4"),
    "big_endian_int32": np.array([7, -8, 2], ">i4"),
    "int16": np.array([32767, 1, -3], np.int16),
    "uint8": np.array([255, 1, 0], np.uint8),
    "uint64": np.array([2 ** 63 - 1, 0, 1], np.uint64),
    "bool": np.array([True, False, True]),
}
RAW_OPS = {
    "sum": lambda x: kg.sum(x),
    "max": lambda x: kg.max(x, axis=0),
    "transpose": lambda x: kg.transpose(x),
    "reshape": lambda x: kg.reshape(x, (3, 1)),
    "softmax": lambda x: kg.softmax(x, axis=0),
    "neg": lambda x: kg.neg(x),
    "exp": lambda x: kg.exp(x),
    "equal": lambda x: kg.ops.equal(x, x),
}


def _same_result(got, want):
    assert type(got) is np.ndarray, type(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", list(RAW_OPS))
@pytest.mark.parametrize("name", list(RAW_ARRAYS))
def test_raw_arrays_compute_what_tensors_of_them_compute(name, op):
    """``kg.sum(array)`` (the raw front-end) and ``kg.add(tensor, array)`` (eager) read an
    array as kg.tensor(array) holds it: the same dtype and bits, or the same refusal."""
    arr, fn = RAW_ARRAYS[name], RAW_OPS[op]
    want, error = outcome(lambda: fn(kg.tensor(arr)).numpy())
    got, raw_error = outcome(lambda: fn(arr))
    if error is not None:  # refused alike (neg of bools, as in PyTorch)
        assert type(raw_error) is type(error) and str(raw_error) == str(error), raw_error
        return
    assert raw_error is None, raw_error
    _same_result(got, want)
    binary = kg.ops.equal if arr.dtype.kind == "b" else kg.add
    if op == "equal":  # beside a tensor: eager mode's conversion of operands
        _same_result(binary(kg.tensor(arr), arr).numpy(),
                     binary(kg.tensor(arr), kg.tensor(arr)).numpy())


def test_raw_arrays_the_issue_named():
    _same_result(kg.sum(np.array([32767, 1], np.int16)), np.array(32768))  # not int16 -32768
    _same_result(kg.sum(np.array(np.nan, np.float16)), np.array(np.nan, np.float32))
    _same_result(kg.transpose(np.array([1.5], np.float16)), np.array([1.5], np.float32))
    _same_result(kg.reshape(np.array([1, 2], np.uint64), (2, 1)), np.array([[1], [2]]))
    out = kg.softmax(np.array([1.0, 2.0], ">f8"), axis=0)
    _same_result(out, kg.softmax(kg.tensor([1.0, 2.0], dtype=kg.float64), axis=0).numpy())
    assert kg.add(kg.tensor([1.0]), np.array([2], np.float16)).dtype == kg.float32


def test_raw_arrays_are_refused_as_tensor_refuses_them():
    """Naming the op, the argument and the array's dtype."""
    with pytest.raises(D.ConversionError, match=r"sum\(\): argument 1 cannot hold complex "
                       r"numbers \(complex128\)"):
        kg.sum(np.array([1 + 1j]))
    with pytest.raises(D.ConversionError, match=r"add\(\): argument 2: value cannot be "
                       r"converted to type int64 without overflow: 9223372036854775809 "
                       r"\(uint64\)"):
        kg.add(kg.tensor([1]), np.array([2 ** 63 + 1], np.uint64))
    with pytest.raises(D.ConversionError, match=r"transpose\(\): argument 1 cannot hold text"):
        kg.transpose(np.array(["1.5"]))
    with pytest.raises(D.ConversionError, match=r"add\(\): argument 2: the Python int"):
        kg.add(kg.tensor([1.0]), [2 ** 70])


def test_raw_arrays_of_kept_dtypes_are_used_as_they_are():
    """No copy (gradient rules hand the engine's own arrays through this path)."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.shares_memory(kg.reshape(a, (3, 2)), a)
    assert np.shares_memory(kg.transpose(a), a)
    assert kg.transpose(a[:, ::-1]).base is not None  # a view: no copy of the strided array


def test_raw_arrays_that_do_not_broadcast_raise_a_shape_error():
    with pytest.raises(kg.errors.ShapeError, match=r"add: shapes \(2,\) and \(3,\) cannot be "
                       r"broadcast together") as info:
        kg.add(np.ones(2), np.ones(3))
    assert "operands could not be broadcast" not in str(info.value)
    with pytest.raises(kg.errors.ShapeError, match="inner dimensions differ"):
        kg.matmul(np.ones((2, 3)), np.ones((2, 3)))


# -- dtype rules against the recordings (dtype_rules.json, record_dtype_rules.py) --------------
def _rules_module():
    spec = importlib.util.spec_from_file_location("record_dtype_rules",
                                                  RECORDED / "record_dtype_rules.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RULES = _rules_module()
REDUCTIONS = {
    "sum": lambda x: kg.sum(x), "sum_axis": lambda x: kg.sum(x, axis=0),
    "max": lambda x: kg.max(x), "mean": lambda x: kg.mean(x),
    "argmax": lambda x: kg.argmax(x), "argmax_axis": lambda x: kg.argmax(x, axis=1),
}


def _reduced_input(op, dtype):
    x = RULES.REDUCED[dtype]
    return np.array([x, x] if op.endswith("_axis") else x, dtype=dtype)


def _check_recorded(out, error, expected):
    """A result against a recorded one: the dtype (as kernelgraph keeps it: int16 -> int64)
    and the values, or an error holding the recorded message."""
    if "error" in expected:
        assert error is not None, f"expected {expected['error']}, got {out!r}"
        same_error(error, expected["error"])
        return
    assert error is None, error
    out = np.asarray(out)
    assert out.dtype.name == KEPT.get(expected["dtype"], expected["dtype"]), (out, expected)
    np.testing.assert_array_equal(out, np.asarray(expected["value"], dtype=out.dtype))


def _run_static(fn, value, device="cpu"):
    graph = kg.Graph()
    with graph.as_default(), kg.device(device):
        x = kg.placeholder(D.kept_dtype(value.dtype), shape=value.shape)
        out = fn(x)
    with kg.Session(graph) as sess:
        return sess.run(out, {x: value})


@pytest.mark.parametrize("mode", ["eager", "static"])
@pytest.mark.parametrize("dtype", RULES.DTYPES)
@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_reductions_take_pytorchs_dtypes(op, dtype, mode, recorded):
    """Integer and bool sums are int64 (not wrapped: PyTorch's rule; TF1 keeps int32 and
    wraps), max keeps the dtype, mean refuses integers, argmax is int64 and refuses bools
    (TF1 takes them): one rule in both modes."""
    expected = recorded("dtype_rules")["torch"][f"{op}({dtype})"]
    x, fn = _reduced_input(op, dtype), REDUCTIONS[op]
    if mode == "eager":
        out, error = outcome(lambda: fn(kg.tensor(x)).numpy())
    else:
        out, error = outcome(lambda: _run_static(fn, x))
    if "error" in expected and dtype in ("int8", "int16"):  # held as int64: "Got: Long"
        assert isinstance(error, D.DtypeError) and "could not infer output dtype" in str(error)
        return
    _check_recorded(out, error, expected)


@pytest.mark.parametrize("mode", ["eager", "static"])
@pytest.mark.parametrize("op, dtype", [("sum", "int32"), ("sum_axis", "bool"),
                                       ("argmax", "bool"), ("max", "int32")])
def test_reductions_on_cuda_take_pytorchs_dtypes(op, dtype, mode, recorded):
    expected = recorded("dtype_rules")["torch"][f"{op}({dtype})"]
    x, fn = _reduced_input(op, dtype), REDUCTIONS[op]
    if mode == "eager":
        out, error = outcome(lambda: fn(kg.tensor(x, device="cuda")).cpu().numpy())
    else:
        out, error = outcome(lambda: _run_static(fn, x, device="cuda"))
    _check_recorded(out, error, expected)


PRODUCTS = {
    "matmul": (lambda a, b: kg.matmul(a, b), [[1, 2], [3, 4]], [[1, 0], [0, 1]]),
    "batched_matmul": (lambda a, b: kg.matmul(a, b), np.ones((2, 1, 2)), np.ones((2, 2, 1))),
    "conv2d": (lambda a, b: kg.conv2d(a, b), np.ones((1, 1, 2, 2)), np.ones((1, 1, 1, 1))),
}
_PAIRS = [(a, b) for a in RULES.PRODUCT_DTYPES for b in RULES.PRODUCT_DTYPES]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("a, b", _PAIRS)
@pytest.mark.parametrize("op", list(PRODUCTS))
def test_products_of_two_dtypes_are_refused_in_pytorchs_words(op, a, b, device, recorded):
    """matmul and conv2d take one dtype, as PyTorch does (no promotion); eager mode says
    so in PyTorch's words. conv2d computes integers in float32 (documented)."""
    expected = recorded("dtype_rules")["torch"][f"{op}({a},{b})"]
    fn, x, w = PRODUCTS[op]
    out, error = outcome(lambda: fn(kg.tensor(np.array(x, a), device=device),
                                    kg.tensor(np.array(w, b), device=device)).cpu().numpy())
    if op == "conv2d" and "dtype" in expected and a.startswith("int"):
        assert error is None and out.dtype == np.float32, (out, error)
        np.testing.assert_array_equal(out, np.asarray(expected["value"], np.float32))
        return
    _check_recorded(out, error, expected)
    assert error is None or isinstance(error, D.DtypeError)


@pytest.mark.parametrize("a, b", _PAIRS)
@pytest.mark.parametrize("op", ["matmul", "conv2d"])
def test_products_of_two_dtypes_are_refused_where_the_graph_is_built(op, a, b, recorded):
    """In TF1's words, naming the line that built the node."""
    tf1_rec = recorded("dtype_rules")["tf1"][f"{op}({a},{b})"]
    fn, x, w = PRODUCTS[op]
    graph = kg.Graph()
    with graph.as_default():
        pa = kg.placeholder(a, shape=np.shape(x))
        pb = kg.placeholder(b, shape=np.shape(w))
        node, error = outcome(lambda: fn(pa, pb))
    if a == b:
        assert error is None, error
        with kg.Session(graph) as sess:
            out = sess.run(node, {pa: np.array(x, a), pb: np.array(w, b)})
        assert out.dtype == (np.dtype(a) if op == "matmul" or a.startswith("float")
                             else np.float32)
        return
    assert isinstance(error, D.DtypeError) and "test_shapes_dtypes.py" in str(error), error
    if "does not match" in tf1_rec["error"]["message"]:  # TF1 refuses int64 conv input first
        assert tf1_rec["error"]["message"].rstrip(".") in str(error), (error, tf1_rec)


@pytest.mark.parametrize("a, b", [("float32", "float64"), ("float64", "float32")])
def test_linear_layers_take_one_dtype(a, b, recorded):
    """nn.Linear is F.linear: an input of another dtype than its weights is refused."""
    expected = recorded("dtype_rules")["torch"][f"linear({a},{b})"]
    layer = kg.nn.Linear(2, 2, bias=False, dtype=getattr(kg, b))
    out, error = outcome(lambda: layer(kg.tensor(np.array([[1, 2]], a))))
    _check_recorded(out, error, expected)
    # the layer in its own dtype still computes
    assert layer(kg.tensor(np.array([[1, 2]], b))).dtype == np.dtype(b)


@pytest.mark.parametrize("name", ["numpy_int32", "numpy_float64_nan", "numpy_bool",
                                  "numpy_float16", "python_int", "python_float"])
def test_constants_of_numpy_scalars_keep_their_dtype(name, recorded):
    """As TF1's tf.constant (and kg.tensor): np.int32(1) is int32, np.float64(nan) float64;
    a float16 scalar is held as float32. A Python int is int64 (PyTorch's default; TF1's
    is int32)."""
    value = {"numpy_int32": np.int32(1), "numpy_float64_nan": np.float64("nan"),
             "numpy_bool": np.bool_(True), "numpy_float16": np.float16(0.5),
             "python_int": 1, "python_float": 1.5}[name]
    expected = recorded("dtype_rules")["tf1"][f"constant:{name}"]
    want = {"python_int": "int64"}.get(name, KEPT.get(expected["dtype"], expected["dtype"]))
    graph = kg.Graph()
    with graph.as_default():
        c = kg.constant(value)
    assert c.dtype.name == want == kg.tensor(value).dtype.name
    with kg.Session(graph) as sess:
        out = sess.run(c)
    assert out.dtype.name == want
    np.testing.assert_array_equal(out, np.asarray(expected["value"], dtype=want))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("mode", ["eager", "static"])
@pytest.mark.parametrize("dtype, op, value", RULES.BIG_INTS)
def test_python_ints_beyond_an_integer_tensor_are_refused(dtype, op, value, mode, device,
                                                          recorded):
    """Never NumPy's OverflowError: a ConversionError naming the value and the tensor's
    dtype. PyTorch and TF1 wrap the arithmetic in silence (compared below)."""
    torch_rec = recorded("dtype_rules")["torch"][f"{op}({dtype},{value})"]
    if op in ("add", "mul"):  # PyTorch's value is wrapped: not 1 + value, not 1 * value
        assert torch_rec["value"][0] != (1 + value if op == "add" else value)
    fn = getattr(kg, op)
    x = np.array([1], dtype)
    if mode == "eager":
        run = lambda: fn(kg.tensor(x, device=device), value)  # noqa: E731
    else:
        run = lambda: _run_static(lambda n: fn(n, value), x, device=device)  # noqa: E731
    with pytest.raises(D.ConversionError, match=rf"{op}: the Python int {value} does not "
                       rf"fit the tensor's dtype {dtype}"):
        run()


@pytest.mark.parametrize("name", list(RULES.BIG_INT_DATA) + ["ints_only_float32"])
def test_big_python_ints_among_floats_are_floats(name, recorded):
    """A list holding a float is read as floats (float32), a big int rounded as PyTorch
    rounds it; ints alone beyond int64 are refused ("Overflow when unpacking long long")."""
    data = RULES.BIG_INT_DATA.get(name, [1, 2 ** 70])
    dtype = kg.float32 if name == "ints_only_float32" else None
    expected = recorded("dtype_rules")["torch"][f"tensor:{name}"]
    for make in (lambda: kg.tensor(data, dtype=dtype).numpy(),
                 lambda: _constant_value(data, dtype)):
        out, error = outcome(make)
        if "error" in expected:
            assert isinstance(error, D.ConversionError), (out, error)
            assert expected["error"]["message"] in str(error), error
        else:
            _check_recorded(out, error, expected)


def _constant_value(data, dtype):
    graph = kg.Graph()
    with graph.as_default():
        c = kg.constant(data, dtype=dtype)
    with kg.Session(graph) as sess:
        return sess.run(c)


@pytest.mark.parametrize("name", list(RULES.TEXT_FEEDS))
def test_text_fed_to_a_placeholder_is_read_as_tf1_reads_it(name, recorded):
    """TF1's feed_dict reads text (and bytes, and text in object arrays) as numbers;
    kernelgraph too, refusing what does not read. Dates are refused (TF1 would feed the
    days since 1970 as numbers)."""
    dtype, make = RULES.TEXT_FEEDS[name]
    expected = recorded("dtype_rules")["tf1"][f"feed:{name}"]
    graph = kg.Graph()
    with graph.as_default():
        x = kg.placeholder(dtype, shape=[None], name="x")
        y = kg.identity(x)
    with kg.Session(graph) as sess:
        out, error = outcome(lambda: sess.run(y, {x: make()}))
    if name == "dates":
        assert isinstance(error, TypeError) and "cannot hold dates" in str(error), out
    elif "error" in expected:
        assert isinstance(error, ValueError) and "Cannot feed value" in str(error), out
    else:
        assert error is None, error
        assert out.dtype.name == expected["dtype"]
        np.testing.assert_array_equal(out, np.asarray(expected["value"], expected["dtype"]))


# -- NumPy's floating-point warnings -----------------------------------------------------------
def test_kernelgraph_prints_no_numpy_warnings_where_pytorch_prints_none():
    """NaN to int, float32 sums past 3.4e38 and Python ints past float32 warn in NumPy,
    never in PyTorch; kernelgraph's filter (by the module making the call) drops them for
    its own calls only: the same NumPy calls in the user's code still warn."""
    from kernelgraph.kernels import cpu

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cpu.ignore_fp_warnings()  # as ``import kernelgraph`` installs it
        assert kg.cast(kg.tensor([float("nan")]), kg.int32).dtype == kg.int32
        assert np.isinf(kg.sum(kg.tensor([3e38, 3e38])).item())
        assert np.isinf(kg.tensor([0.5, 2 ** 200]).numpy()[1])
        assert kg.sum(np.array([6e4, 6e4], np.float16)).item() == 1.2e5
        assert not caught, [str(w.message) for w in caught]
        np.array([np.nan]).astype(np.int32)
        np.float32(3e38) * np.float32(3e38)
    assert sorted(str(w.message) for w in caught) == [
        "invalid value encountered in cast", "overflow encountered in scalar multiply"]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("mode", ["eager", "static"])
@pytest.mark.parametrize("name", list(RULES.INT_POWERS))
def test_integer_powers_wrap_as_pytorch_and_tf1(name, mode, device, recorded):
    """Integer powers are exact modulo the dtype's range (PyTorch and TF1 agree), also for
    exponents numba's own integer ``**`` would take through floating point; a negative
    exponent is refused, as TF1 and PyTorch (for a number exponent) refuse it."""
    dtype, base, exponent = RULES.INT_POWERS[name]
    x = np.array(base, dtype)
    y = np.array(exponent, "int64" if dtype == "bool" else dtype)
    if mode == "eager":
        out, error = outcome(lambda: kg.pow(kg.tensor(x, device=device),
                                            kg.tensor(y, device=device)).cpu().numpy())
    else:
        out, error = outcome(lambda: _run_static(lambda p: kg.pow(p, kg.constant(y)), x,
                                                 device))
    if name == "negative_exponent":  # PyTorch computes 3 ** tensor(-1) as 0; TF1 refuses
        expected = recorded("dtype_rules")["torch"]["pow:negative_number_exponent"]
        if mode == "static":  # a run-time error of the graph: TF1's InvalidArgumentError
            assert recorded("dtype_rules")["tf1"][f"pow:{name}"]["error"]["type"] == \
                "InvalidArgumentError"
            assert isinstance(error, kg.errors.InvalidArgumentError), error
            assert expected["error"]["message"] in str(error)
            return
    else:
        expected = recorded("dtype_rules")["torch"][f"pow:{name}"]
        if dtype != "bool":
            assert recorded("dtype_rules")["tf1"][f"pow:{name}"] == expected
    _check_recorded(out, error, expected)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_bool_tensor_to_a_python_bool_power_is_pytorchs(device, recorded):
    """PyTorch computes ``bool_tensor ** True`` (and refuses a bool tensor exponent); a graph
    node follows TF1, which has no bool pow."""
    rules = recorded("dtype_rules")["torch"]
    x = kg.tensor([True, False], device=device)
    for e in (True, False):
        _check_recorded(*outcome(lambda e=e: (x ** e).cpu().numpy()),
                        rules[f"pow:bool_to_python_bool_{e}"])
    _check_recorded(*outcome(lambda: (x ** x).cpu().numpy()), rules["pow:bool_to_bool_tensor"])
    with kg.Graph().as_default(), pytest.raises(D.DtypeError, match="not implemented for 'Bool'"):
        kg.pow(kg.placeholder("bool", [2]), True)
