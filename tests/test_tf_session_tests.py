"""TF1's Session as TF1's own session tests see it (``session_test.py``): names fetched and
fed as TF1 reads them (an op name fetches the Operation and answers None; bytes names),
TF1's errors (a missing name, a fed op name, a tensor fed as a value, an empty graph, a
closed session) with ``e.op`` TF1's Operation, numpy scalar types, threads, and
``partial_run``. Each case runs on kernelgraph's TF1 face and is compared with real TF's
recorded answer (tests/recorded/record_tf_session_tests.py)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

import kernelgraph.compat.v1 as tf

_spec = importlib.util.spec_from_file_location(
    "record_tf_session_tests",
    Path(__file__).parent / "recorded" / "record_tf_session_tests.py")
R = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(R)


def same(want, got) -> bool:
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(same(a, b) for a, b in zip(want, got))
    if isinstance(want, float) and isinstance(got, float | int) and not isinstance(got, bool):
        return math.isclose(want, got, rel_tol=1e-6)
    return want == got


@pytest.mark.parametrize("name", list(R.CASES))
def test_as_tf1(name, recorded):
    want = recorded("tf_session_tests")["cases"][name]
    got = R.run(tf, name)
    if want[0] == "ok":
        assert same(want, got), f"{name}: TF answered {want}, kernelgraph {got}"
        return
    assert got[0] == want[0], f"{name}: TF raised {want}, kernelgraph {got}"
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
