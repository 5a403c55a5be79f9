"""TF1 as TF1's own tests see it. The Session as ``session_test.py`` does: names fetched and
fed as TF1 reads them (an op name fetches the Operation and answers None; bytes names),
TF1's errors (a missing name, a fed op name, a tensor fed as a value, an empty graph, a
closed session) with ``e.op`` TF1's Operation, numpy scalar types, threads, and
``partial_run``. ``tf.gradients`` as ``gradients_test.py`` does, and ``tf.while_loop`` as the
control-flow tests do. Each case runs on kernelgraph's TF1 face and is compared with real
TF's recorded answer (tests/recorded/record_tf_own_tests.py)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

import kernelgraph.compat.v1 as tf

_spec = importlib.util.spec_from_file_location(
    "record_tf_own_tests",
    Path(__file__).parent / "recorded" / "record_tf_own_tests.py")
R = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(R)


# Errors raised with the same type as TF's, in kernelgraph's own words (they name the loop
# variable, the shapes and the user's line where TF names its internal nodes).
SAME_TYPE_OF_ERROR = {"while_loop_wrong_body_structure", "while_loop_body_changes_shape_error",
                      "while_loop_cond_not_boolean"}


def same(want, got) -> bool:
    if isinstance(want, dict) and isinstance(got, dict):
        return want.keys() == got.keys() and all(same(want[k], got[k]) for k in want)
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(same(a, b) for a, b in zip(want, got))
    if isinstance(want, float) and isinstance(got, float | int) and not isinstance(got, bool):
        return math.isclose(want, got, rel_tol=1e-6)
    return want == got


@pytest.mark.parametrize("name", list(R.CASES))
def test_as_tf1(name, recorded):
    want = recorded("tf_own_tests")["cases"][name]
    got = R.run(tf, name)
    if want[0] == "ok":
        assert same(want, got), f"{name}: TF answered {want}, kernelgraph {got}"
        return
    assert got[0] == want[0], f"{name}: TF raised {want}, kernelgraph {got}"
    if name in SAME_TYPE_OF_ERROR:
        return
    # TF 2 prefixes run-time errors with "Graph execution error:"; the message is TF1's
    assert got[1] == want[1] or want[1].endswith("\n" + got[1]), (name, want[1], got[1])


def test_a_partial_run_feeds_each_input_once():
    with tf.Graph().as_default(), tf.Session() as sess:
        a = tf.placeholder(tf.float32, shape=[])
        b = tf.placeholder(tf.float32, shape=[])
        h = sess.partial_run_setup([a + b], [a, b])
        sess.partial_run(h, [], feed_dict={a: 1.0})
        with pytest.raises(tf.errors.InvalidArgumentError, match="already been fed"):
            sess.partial_run(h, a + b, feed_dict={a: 2.0})
        with pytest.raises(tf.errors.InvalidArgumentError, match="not valid"):
            sess.partial_run("no such handle", a)


def test_a_body_that_reads_and_assigns_a_variable_is_refused():
    """TF1 reads a variable anew after each assign in a loop; kernelgraph reads a captured
    variable once, so it refuses rather than compute something else."""
    with tf.Graph().as_default():
        v = tf.Variable(0)

        def body(i):
            with tf.control_dependencies([tf.assign(v, v + i)]):
                return i + 1

        with pytest.raises(NotImplementedError, match="both reads and assigns"):
            tf.while_loop(lambda i: i < 5, body, [0])
