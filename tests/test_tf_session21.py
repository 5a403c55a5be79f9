"""TF1's Session.run semantics (issue 21) against recorded TF1 answers: any tensor may be
fed (also through ``t.eval(feed_dict)`` in a default session); fetching an Operation
(``t.op``, ``tf.no_op()``, an initializer, a train op) answers None; nested fetches keep
their structure; ``op.run()``; TF1's tensor names, ops and shapes.
Recorded by tests/recorded/record_tf21.py (tf21.json)."""

from __future__ import annotations

import numpy as np
import pytest

# A TF1 program: its tensors are TF1's types (kernelgraph.compat.v1.face), so t.op, t.name
# and t.shape mean what TF1 says.
import kernelgraph.compat.v1 as tf
from kernelgraph.ops import OPS
from tests.tf21_cases import check

SESSION_CASES = [
    "eval_feeds_a_constant", "eval_feeds_an_intermediate_in_as_default",
    "eval_feeds_a_variable_in_an_interactive_session", "eval_with_session_argument",
    "eval_without_default_session", "fetch_operations_gives_none",
    "train_op_runs_and_gives_none", "op_run_assigns", "nested_fetches", "fetch_by_name",
    "tensor_names_ops_and_graph", "variable_and_initializer_names",
    "get_tensor_by_name_of_an_operation_name", "static_shapes", "unknown_rank_as_list",
    "set_shape_refines", "set_shape_contradiction", "control_dependencies_and_make_callable",
    "variables_convert_as_tf1", "python_values_make_graph_nodes",
    "fetched_fed_tensor_is_an_array", "collections_and_math_namespace",
    "linalg_and_unconnected_gradients_enum",
]


@pytest.mark.parametrize("name", SESSION_CASES)
def test_session_semantics_as_tf1(name, recorded):
    check(name, recorded)


def test_feeds_override_folded_merged_and_cond_read_nodes():
    """A fed node takes the fed value wherever it is read: a constant the compiler would
    fold, one it would merge with an equal constant, and inside a cond branch."""
    with tf.Graph().as_default():
        a, b = tf.constant(2.0), tf.constant(2.0)
        c = a * b
        d = (tf.constant(1.0) + tf.constant(1.0)) * 3.0
        r = tf.cond(tf.constant(True), lambda: a * 5.0, lambda: a)
        with tf.Session():
            assert c.eval({a: 10.0}) == 20.0 and c.eval({b: 3.0}) == 6.0
            assert d.eval({d.op.inputs[0]: 10.0}) == 30.0
            assert r.eval({a: 3.0}) == 15.0


def test_kernelgraph_code_keeps_its_own_meanings():
    """Code that holds kernelgraph itself (here a namespace with both ``kg`` and ``tf``)
    reads kernelgraph's meanings: node.op is the op card, node.name the bare name,
    node.shape a tuple."""
    import kernelgraph as kg  # noqa: PLC0415 - not in this module's globals (see the top)

    namespace = {"kg": kg, "tf": tf}
    exec("g = kg.Graph()\nwith g.as_default():\n    c = kg.constant(1.0) * 2.0\n"
         "out = (c.op, c.name, c.shape, repr(c))", namespace)
    card, name, shape, text = namespace["out"]
    assert card is OPS["mul"] and name == "mul" and shape == () and type(shape) is tuple
    assert text.startswith("<kg.Node 'mul'")


def test_a_tf1_program_reads_tf1_meanings():
    with tf.Graph().as_default():
        c = tf.constant(1.0) * 2.0
        assert c.name == "mul:0" and c.op.name == "mul" and c.op.type == "Mul"
        assert isinstance(c.op, tf.Operation) and c.shape == [] and c.shape.ndims == 0
        assert repr(c) == "<tf.Tensor 'mul:0' shape=() dtype=float32>"


def test_operations_are_one_object_per_node_and_hashable():
    with tf.Graph().as_default():
        c = tf.constant(1.0) + 1.0
        assert c.op is c.op and {c.op: 1}[c.op] == 1 and c.op != (c + 1.0).op
        assert tf.get_default_graph().get_operation_by_name(c.op.name) is c.op
        with pytest.raises(TypeError, match="Operation"):
            with tf.Session() as sess:
                sess.run(c, {c.op: 1.0})


def test_scalar_fetches_are_numpy_scalars_as_in_tf1():
    with tf.Graph().as_default():
        a = tf.constant(3.0)
        with tf.Session() as sess:
            out = sess.run([a, a * 2.0])
    assert [type(v) for v in out] == [np.float32, np.float32] and out == [3.0, 6.0]


def test_op_run_without_session_says_so():
    with tf.Graph().as_default():
        init = tf.global_variables_initializer()
        with pytest.raises(ValueError, match="No default session"):
            init.run()


class _TFStyleTest(tf.test.TestCase):
    """A test in the manner of TF1's own kernel tests (run by the test below)."""

    def testEvaluateInCachedSession(self):
        x = tf.constant([1.0, 4.0])
        with self.cached_session() as sess:
            self.assertAllClose(self.evaluate(tf.sqrt(x)), [1.0, 2.0])
            self.assertAllEqual(tf.reduce_sum(x, keep_dims=True).eval(), [5.0])
            self.assertIs(sess, self.evaluate.__self__._cached)

    def testEachTestHasAFreshGraph(self):
        self.assertEqual(len(tf.get_default_graph().nodes), 0)
        tf.constant(1.0)


def test_tf_test_case_runs_tf1_style_tests():
    import unittest  # noqa: PLC0415 - only this test needs it

    suite = unittest.defaultTestLoader.loadTestsFromTestCase(_TFStyleTest)
    result = unittest.TestResult()
    suite.run(result)
    assert result.testsRun == 2 and result.wasSuccessful(), result.failures + result.errors
