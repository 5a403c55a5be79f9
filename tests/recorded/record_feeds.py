"""Record what TF1's ``Session.run`` returns when ``feed_dict`` feeds nodes that are not
placeholders (a constant, a Variable, an intermediate, a value a loop or cond reads), into
``feeds.json`` (read by tests/test_feeds.py).

Run with an environment that has tensorflow-cpu (see README.md here)::

    python tests/recorded/record_feeds.py

The programs are written once, here, against a namespace ``ns`` that is TF1
(``tensorflow.compat.v1`` in graph mode) when recording and ``kernelgraph`` when testing, so
both frameworks run the very same program. Each case returns ``(fetches, feeds)``; cases
named in :data:`NEEDS_INIT` run the variables' initializer first. Variables are TF1's
reference variables (``use_resource=False``, TF1's default): ops read the variable's own
tensor, so feeding it overrides what they read, as a kernelgraph Variable node does.
"""

from __future__ import annotations

import json
from pathlib import Path

CASES: dict = {}
NEEDS_INIT = {"variable", "variable_fed_and_assigned"}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# -- constants -----------------------------------------------------------------------------------
@case
def constant(ns):
    c = ns.constant(5.0)
    return c * 2.0, [(c, 1.0)]


@case
def constant_fetched_itself(ns):
    c = ns.constant(5.0)
    return c, [(c, 1.0)]


@case
def constant_read_twice(ns):
    c = ns.constant(5.0)
    return c * 2.0 + c * 3.0, [(c, 1.0)]


@case
def constant_vector(ns):
    c = ns.constant([1.0, 2.0, 3.0])
    return c * c + 1.0, [(c, [2.0, 0.0, -1.0])]


@case
def equal_constants_first_fed(ns):
    # Two constants of one value: common-subexpression elimination must not merge them.
    x = ns.placeholder(ns.float32, shape=[])
    c, d = ns.constant(2.0), ns.constant(2.0)
    return x * c + x * d, [(x, 3.0), (c, 1.0)]


@case
def equal_constants_second_fed(ns):
    x = ns.placeholder(ns.float32, shape=[])
    c, d = ns.constant(2.0), ns.constant(2.0)
    return x * c + x * d, [(x, 3.0), (d, 1.0)]


@case
def times_one_fed(ns):
    # x * 1 is simplified to x, unless the 1 is fed.
    x = ns.placeholder(ns.float32, shape=[])
    one = ns.constant(1.0)
    return [x * one, one * x], [(x, 2.0), (one, 3.0)]


@case
def plus_zero_fed(ns):
    x = ns.placeholder(ns.float32, shape=[])
    zero = ns.constant(0.0)
    return [x + zero, zero + x, x - zero], [(x, 2.0), (zero, 5.0)]


@case
def divided_by_one_fed(ns):
    x = ns.placeholder(ns.float32, shape=[])
    one = ns.constant(1.0)
    return x / one, [(x, 2.0), (one, 4.0)]


# -- intermediates -------------------------------------------------------------------------------
@case
def intermediate(ns):
    # The fed node's input, a placeholder, need not be fed: it is not computed.
    x = ns.placeholder(ns.float32, shape=[])
    m = x * 3.0
    return m + 1.0, [(m, 10.0)]


@case
def intermediate_and_its_input(ns):
    x = ns.placeholder(ns.float32, shape=[])
    m = x * 3.0
    return [m + 1.0, x + 1.0], [(x, 2.0), (m, 10.0)]


@case
def intermediate_of_constants(ns):
    # m would be folded to 6: a fed m, and everything after it, must not be.
    m = ns.constant(2.0) * ns.constant(3.0)
    return [m + 1.0, m], [(m, 10.0)]


@case
def intermediate_read_twice(ns):
    x = ns.placeholder(ns.float32, shape=[])
    m = x * 3.0
    return m * m + x, [(m, 10.0), (x, 1.0)]


@case
def twin_of_fed(ns):
    # a and b compute the same thing; only a is fed: they must not be merged.
    x = ns.placeholder(ns.float32, shape=[])
    a, b = x * 2.0, x * 2.0
    return a + b, [(a, 100.0), (x, 1.0)]


@case
def inside_elementwise_chain(ns):
    # t would be fused into one kernel with what reads it.
    x = ns.placeholder(ns.float32, shape=[3])
    t = x * 2.0
    y = ns.relu(t + 1.0) * 3.0
    return [y, t], [(t, [-5.0, 0.0, 5.0])]


@case
def partly_known_shape(ns):
    x = ns.placeholder(ns.float32, shape=[None, 3])
    m = x * 2.0
    return ns.exp(m) * 0.0 + m, [(m, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])]


# -- variables -----------------------------------------------------------------------------------
@case
def variable(ns):
    v = ns.Variable(4.0)
    return v * 2.0, [(v, 1.0)]


@case
def variable_uninitialized(ns):
    # The variable is not read (its value is fed), so it need not be initialized.
    v = ns.Variable(4.0)
    return v * 2.0, [(v, 1.0)]


@case
def variable_fed_and_assigned(ns):
    # The assign writes the variable itself, which a feed cannot stand for: TF1 refuses.
    v = ns.Variable(4.0)
    return v.assign_sub(v * 0.5), [(v, 2.0)]


# -- control flow --------------------------------------------------------------------------------
@case
def while_reads_fed_constant(ns):
    c = ns.constant(2.0)
    _, a = ns.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * c),
                         [ns.constant(0), ns.constant(1.0)])
    return a, [(c, 3.0)]


@case
def while_fed_initial_value(ns):
    a0 = ns.constant(1.0)
    _, a = ns.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2.0),
                         [ns.constant(0), a0])
    return a, [(a0, 2.0)]


@case
def while_result_fed(ns):
    _, a = ns.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2.0),
                         [ns.constant(0), ns.constant(1.0)])
    return a + 1.0, [(a, 5.0)]


@case
def cond_predicate_fed(ns):
    x = ns.placeholder(ns.float32, shape=[])
    p = ns.greater(x, 0.0)
    return ns.cond(p, lambda: x * 2.0, lambda: x - 1.0), [(x, 3.0), (p, False)]


@case
def cond_reads_fed_constant(ns):
    x = ns.placeholder(ns.float32, shape=[])
    c = ns.constant(2.0)
    return ns.cond(ns.greater(x, 0.0), lambda: x * c, lambda: x - c), [(x, 3.0), (c, 10.0)]


# -- wrong values --------------------------------------------------------------------------------
@case
def constant_wrong_shape(ns):
    c = ns.constant([1.0, 2.0, 3.0])
    return c * 2.0, [(c, [1.0, 2.0])]


@case
def scalar_constant_fed_vector(ns):
    c = ns.constant(5.0)
    return c * 2.0, [(c, [1.0, 2.0])]


@case
def intermediate_wrong_shape(ns):
    x = ns.placeholder(ns.float32, shape=[None, 3])
    m = x * 2.0
    return m + 1.0, [(m, [[1.0, 2.0], [3.0, 4.0]])]


@case
def int_constant_fed_float(ns):
    # TF1 converts with np.asarray(value, dtype): 1.5 becomes 1.
    c = ns.constant(5, dtype=ns.int32)
    return c * 2, [(c, 1.5)]


@case
def int_constant_fed_too_large(ns):
    c = ns.constant(5, dtype=ns.int32)
    return c * 2, [(c, 2 ** 40)]


@case
def float_constant_fed_text(ns):
    c = ns.constant(5.0)
    return c * 2.0, [(c, "five")]


def _as_json(value):
    import numpy as np

    if isinstance(value, list | tuple):
        return [_as_json(v) for v in value]
    return np.asarray(value).tolist()


def main() -> None:
    import os
    from functools import partial
    from types import SimpleNamespace

    import numpy as np

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf2
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    ns = SimpleNamespace(
        constant=tf.constant, placeholder=tf.placeholder, float32=tf.float32, int32=tf.int32,
        Variable=partial(tf.Variable, use_resource=False), while_loop=tf.while_loop,
        cond=tf.cond, greater=tf.greater, relu=tf.nn.relu, exp=tf.exp)
    cases = {}
    for name, build in CASES.items():
        graph = tf.Graph()
        with graph.as_default():
            fetches, feeds = build(ns)
            init = tf.global_variables_initializer()
            with tf.Session() as sess:
                if name in NEEDS_INIT:
                    sess.run(init)
                try:
                    value = sess.run(fetches, dict(feeds))
                    cases[name] = {"value": _as_json(value)}
                except Exception as e:  # noqa: BLE001 - recorded: the tests compare it
                    cases[name] = {"error": {"type": type(e).__name__,
                                             "message": " ".join(str(e).split())[:300]}}
    rec = {"versions": {"tensorflow": tf2.__version__, "numpy": np.__version__},
           "cases": cases}
    path = Path(__file__).with_name("feeds.json")
    path.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
