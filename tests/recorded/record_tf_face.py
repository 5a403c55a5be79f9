"""Record what real TF1 (``tensorflow.compat.v1``, graph mode) answers for the TF1 face:
what a TF1 program reads off its tensors, operations and variables
(tests/import_styles/tf1_program.py's ``facts``), ``tf.gradients`` with ``stop_gradients``,
and ``tf.cast`` to and from ``tf.string``, into ``tf_face.json`` (read by
tests/test_tf_import_styles.py).

Run with an environment that has tensorflow-cpu (see README.md here)::

    python tests/recorded/record_tf_face.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
PROGRAM = HERE.parent / "import_styles" / "tf1_program.py"
CASES: dict = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _run(sess, fetches, feed=None):
    values = sess.run(fetches, feed)
    return [v.tolist() if hasattr(v, "tolist") else v for v in values]


@case
def stop_gradients_give_partials(tf):
    a = tf.constant(0.0)
    b = 2 * a
    with tf.Session() as sess:
        return {"total": _run(sess, tf.gradients(a + b, [a, b])),
                "partial": _run(sess, tf.gradients(a + b, [a, b], stop_gradients=[a, b])),
                "one tensor": _run(sess, tf.gradients(a + b, [a], stop_gradients=b))}


@case
def stop_gradients_at_an_intermediate(tf):
    x = tf.placeholder(tf.float32, shape=[2])
    h = x * x
    z = tf.reduce_sum(h + 3.0 * x)
    w = tf.reduce_sum(h * h)
    with tf.Session() as sess:
        feed = {x: [2.0, -1.0]}
        return {"stopped": _run(sess, tf.gradients(z, [x, h], stop_gradients=[h]), feed),
                "both": _run(sess, tf.gradients([z, w], [x], stop_gradients=[h]), feed),
                "unstopped": _run(sess, tf.gradients(z, [x, h]), feed)}


@case
def stop_gradients_leave_other_paths(tf):
    x = tf.constant(3.0)
    y = x * x
    z = y * x + x  # x reaches z through y, directly, and as y's input
    with tf.Session() as sess:
        return {"stop y": _run(sess, tf.gradients(z, [x], stop_gradients=[y])),
                "stop x": _run(sess, tf.gradients(z, [x, y], stop_gradients=[x]))}


@case
def iterator_initializer_is_an_operation(tf):
    import numpy as np

    it = tf.data.make_initializable_iterator(tf.data.Dataset.from_tensor_slices(
        np.arange(4.0, dtype=np.float32)).batch(2))
    nxt = it.get_next()
    with tf.Session() as sess:
        ran = sess.run(it.initializer)
        return [isinstance(it.initializer, tf.Operation), it.initializer.type, ran,
                isinstance(nxt, tf.Tensor), nxt.name, sess.run(nxt).tolist()]


@case
def iterators_keep_a_position_per_session(tf):
    import numpy as np

    it = tf.data.make_initializable_iterator(tf.data.Dataset.from_tensor_slices(
        np.arange(6.0, dtype=np.float32)).batch(2))
    nxt = it.get_next()
    s1, s2 = tf.Session(), tf.Session()
    s1.run(it.initializer)
    s2.run(it.initializer)
    got = [s1.run(nxt).tolist(), s2.run(nxt).tolist(), s1.run(nxt).tolist(),
           s1.run(nxt).tolist(), s2.run(nxt).tolist()]
    s1.close()
    s2.close()
    return got


def _refusal(e) -> dict:
    """An error as its type and the sentence that says what is refused (TF's message
    starts with the traceback of the node that failed)."""
    import re

    text = " ".join(str(e).split())
    found = re.search(r"Cast \w+ to \w+ is not supported", text)
    return {"type": type(e).__name__, "message": found.group(0) if found else text[:200]}


def _cast_case(tf, value, dtype):
    """Where TF1 refuses a cast: ``build`` (the graph) or ``run`` (the session)."""
    try:
        c = tf.cast(tf.constant(value), dtype)
    except Exception as e:  # noqa: BLE001 - recorded
        return {"build": _refusal(e)}
    try:
        with tf.Session() as sess:
            out = sess.run(c)
    except Exception as e:  # noqa: BLE001 - recorded
        return {"run": _refusal(e)}
    out = out.tolist() if hasattr(out, "tolist") else out
    return {"value": [v.decode() if isinstance(v, bytes) else v for v in out]}


@case
def cast_float_to_string(tf):
    return _cast_case(tf, [1.5, 2.0], tf.string)


@case
def cast_int_to_string(tf):
    return _cast_case(tf, [1, 2], tf.string)


@case
def cast_bool_to_string(tf):
    return _cast_case(tf, [True], tf.string)


@case
def cast_string_to_float(tf):
    return _cast_case(tf, ["1.5"], tf.float32)


@case
def cast_string_to_string(tf):
    return _cast_case(tf, ["a"], tf.string)


def program_facts(tf) -> dict:
    """tests/import_styles/tf1_program.py's ``facts`` on ``tf`` (its kernelgraph import left
    out: the recording environment has TF1, not kernelgraph)."""
    source = PROGRAM.read_text(encoding="utf-8").replace("import kernelgraph.compat.v1 as tf",
                                                         "")
    scope: dict = {"tf": tf}
    exec(compile(source, str(PROGRAM), "exec"), scope)  # noqa: S102 - our own test program
    return scope["facts"](tf)


def run_case(build, tf) -> dict:
    try:
        return {"value": build(tf)}
    except Exception as e:  # noqa: BLE001 - recorded: the tests compare it
        return {"error": {"type": type(e).__name__,
                          "message": " ".join(str(e).split())[:300]}}


def main() -> None:
    import os

    import numpy as np

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf2
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    cases = {}
    for name, build in CASES.items():
        with tf.Graph().as_default():
            cases[name] = run_case(build, tf)
    cases["program_facts"] = run_case(program_facts, tf)
    rec = {"versions": {"tensorflow": tf2.__version__, "numpy": np.__version__},
           "cases": cases}
    path = HERE / "tf_face.json"
    path.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
