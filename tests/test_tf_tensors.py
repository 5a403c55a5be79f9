"""TF1's tensors (issue 21) against recorded TF1 answers: ``tf.constant``'s fill, reshape and
pad rules and dtypes, string tensors, ``tf.shape`` / ``size`` / ``rank`` / ``range`` /
``unstack`` / ``convert_to_tensor``, gradients' TF1 arguments, ``tf.stop_gradient``,
``tf.hessians``, reductions with ``reduction_indices=`` / ``keep_dims=``, and the dtypes TF1
tutorials use. Recorded by tests/recorded/record_tf21.py (tf21.json)."""

from __future__ import annotations

import numpy as np
import pytest

import kernelgraph.compat.v1 as tf  # a TF1 program: kernelgraph itself is not imported here
from tests.tf21_cases import check, run_kg

TENSOR_CASES = [
    "constant_shapes", "constant_too_many_values", "constant_verify_shape",
    "constant_fractional_float_for_int", "constant_integral_float_for_int", "constant_dtypes",
    "hello_tensorflow", "string_feeds_and_fetches", "shape_size_rank", "ranges", "unstacks",
    "convert_to_tensor", "convert_to_tensor_wrong_dtype",
    "stop_gradient_and_gradients_arguments", "gradients_bad_unconnected", "hessians",
    "reductions_with_tf1_arguments", "shapes_and_fills", "logic_and_integer_division",
    "small_dtypes_arithmetic_without_overflow",
]


@pytest.mark.parametrize("name", TENSOR_CASES)
def test_tensors_as_tf1(name, recorded):
    check(name, recorded)


def test_small_dtypes_store_feed_fetch_and_cast(recorded):
    """Stored, fed, fetched and cast exactly as TF1; only the fetched placeholder value
    itself is compared with its dtype (arithmetic on them computes in the wide dtype)."""
    check("small_dtypes_store_feed_fetch_and_cast", recorded)


def test_small_dtypes_are_stored_narrow_after_each_op():
    """``int8 + int8`` computes wide and is stored as int8 again, wrapping at 127 as TF1 (and
    PyTorch) do, whether written with operators or with TF1's functions; a comparison is
    bool, and a cast is what it says."""
    with tf.Graph().as_default():
        a = tf.constant([100, 7], tf.int8)
        s = a + a
        t = tf.add(a, a)
        assert a.dtype == tf.int8 and s.dtype == tf.int8 and t.dtype == tf.int8
        with tf.Session() as sess:
            assert sess.run(s).tolist() == [-56, 14] and sess.run(s).dtype == np.int8
            assert sess.run(t).tolist() == [-56, 14] and sess.run(t).dtype == np.int8
            assert sess.run(a > 50).tolist() == [True, False]
            wide = tf.cast(a, tf.int16) * 2
            assert sess.run(wide).tolist() == [200, 14] and sess.run(wide).dtype == np.int16


def test_dtypes_read_as_tf1_dtypes_in_a_tf1_program():
    with tf.Graph().as_default():
        x = tf.constant(1.0)
        d = x.dtype
        assert (str(d), repr(d), d.base_dtype, d.as_numpy_dtype) == (
            "<dtype: 'float32'>", "tf.float32", d, np.float32)
        assert d == tf.float32 and d.is_floating and not d.is_integer
        assert tf.placeholder(d).dtype == tf.float32 and tf.cast(x, d).dtype == "float32"
        assert str(tf.constant("s").dtype) == "<dtype: 'string'>"


def test_a_fetched_fed_string_is_the_fed_value():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.string)
        with tf.Session() as sess:
            out = sess.run(p, {p: "fed text"})
            assert out.dtype == object and out.item() == "fed text"
            assert sess.run(tf.identity(p), {p: "fed text"}) == b"fed text"


def test_string_math_is_refused():
    with tf.Graph().as_default():
        s = tf.constant("ab")
        with pytest.raises(TypeError, match="no string math"):
            s + s


def test_dynamic_shape_is_computed_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, shape=[None, None, 2])
        with tf.Session() as sess:
            for shape in [(1, 3, 2), (4, 5, 2)]:
                out = sess.run([tf.shape(x), tf.size(x)], {x: np.zeros(shape)})
                assert out[0].tolist() == list(shape) and out[0].dtype == np.int32
                assert out[1] == np.prod(shape)


def test_gradient_of_stop_gradient_against_finite_differences():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64)
        y = tf.stop_gradient(tf.exp(x)) * x + x * x
        (g,) = tf.gradients(y, x)
        with tf.Session() as sess:
            x0 = 0.7
            assert np.isclose(sess.run(g, {x: x0}), np.exp(x0) + 2 * x0)


def test_torch_dtype_aliases():
    import kernelgraph as kg  # noqa: PLC0415 - kept out of this TF1 program's globals

    assert (kg.float, kg.double, kg.long, kg.int, kg.half) == (
        kg.float32, kg.float64, kg.int64, kg.int32, kg.float16)
    assert (kg.uint8, kg.int8, kg.int16, kg.bool) == (
        np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16), np.dtype(bool))


def test_case_runner_sees_tf_face():
    assert run_kg("fetch_by_name") == {"value": {"scalar": 4.0, "dtype": "float32"}}


# -- outputs below were checked by hand against TF 2.21 compat.v1 -------------------------------
def test_zeros_and_ones_with_run_time_sizes():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, shape=[None, 2])
        z = tf.zeros([tf.shape(a)[0], tf.shape(a)[0]])
        o = tf.ones([tf.shape(a)[0], 3, tf.shape(a)[1]], tf.int32)
        assert z.shape.as_list() == [None, None] and o.shape.as_list() == [None, 3, 2]
        with tf.Session() as sess:
            zv, ov = sess.run([z, o], {a: np.full((4, 2), np.inf, np.float32)})
        np.testing.assert_array_equal(zv, np.zeros((4, 4), np.float32))
        np.testing.assert_array_equal(ov, np.ones((4, 3, 2), np.int32))
        assert zv.dtype == np.float32 and ov.dtype == np.int32


def test_matmul_transpose_arguments():
    a0 = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    b0 = np.arange(12.0, dtype=np.float32).reshape(2, 3, 2)
    with tf.Graph().as_default():
        a, b = tf.constant(a0), tf.constant(b0)
        with tf.Session() as sess:
            ab, at, bb = sess.run([tf.matmul(a, a, transpose_b=True),
                                   tf.matmul(a, a, transpose_a=True, adjoint_b=True),
                                   tf.matmul(b, b, transpose_a=True)])
    np.testing.assert_allclose(ab, [[5.0, 11.0], [11.0, 25.0]])
    np.testing.assert_allclose(at, a0.T @ a0.T)
    np.testing.assert_allclose(bb, np.swapaxes(b0, 1, 2) @ b0)


def test_report_uninitialized_and_initializer_class():
    with tf.Graph().as_default():
        v = tf.get_variable("v", [2], dtype=tf.int32, initializer=tf.zeros_initializer)
        tf.Variable(1.0, name="w")
        report = tf.report_uninitialized_variables()
        with tf.Session() as sess:
            first = sess.run(report)
            assert first.tolist() == [b"v", b"w"] and first.dtype == object
            assert not sess.run(tf.is_variable_initialized(v))
            sess.run(tf.variables_initializer([v]))
            assert sess.run(report).tolist() == [b"w"]
            assert sess.run(tf.is_variable_initialized(v))
            assert sess.run(v).tolist() == [0, 0] and sess.run(v).dtype == np.int32
            sess.run(tf.global_variables_initializer())
            assert sess.run(report).shape == (0,)
