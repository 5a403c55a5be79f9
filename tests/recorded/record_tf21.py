"""Record what real TF1 (``tensorflow.compat.v1``, graph mode) answers for issue 21's static
semantics: Session.run's fetches and feeds, tensors' names, ops and shapes, ``tf.constant``'s
rules, string tensors, ``tf.shape`` / ``range`` / ``unstack``, gradients and the TF1 spellings
of reductions, into ``tf21.json`` (read by tests/test_tf_session21.py and
tests/test_tf_tensors.py).

Run with an environment that has tensorflow-cpu (see README.md here)::

    python tests/recorded/record_tf21.py

Each case is a function of ``tf`` (TF1 when recording, ``kernelgraph.compat.v1`` when
testing), run in a fresh default graph; it returns what a program would print, as plain
values (:func:`plain`). A case raising is recorded as the error's type and message.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

CASES: dict = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def plain(value):
    """``value`` (what Session.run returns, names, shapes ...) as JSON data: an array as its
    values and dtype name, a NumPy scalar likewise (``scalar``), bytes as text."""
    import numpy as np

    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes):
        return {"bytes": value.decode("utf-8")}
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            return {"array": plain(value.tolist()), "dtype": "string"}
        return {"array": value.tolist(), "dtype": value.dtype.name}
    if isinstance(value, np.generic):
        return {"scalar": value.item(), "dtype": value.dtype.name}
    if hasattr(value, "_fields"):
        return {"namedtuple": type(value).__name__, "items": [plain(v) for v in value]}
    if isinstance(value, tuple):
        return {"tuple": [plain(v) for v in value]}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {"dict": {k: plain(v) for k, v in value.items()}}
    return {"str": str(value)}


# -- Session.run: feeds -------------------------------------------------------------------------
@case
def eval_feeds_a_constant(tf):
    a = tf.constant(2.0)
    b = tf.constant(3.0)
    c = a * b
    with tf.Session():
        return [c.eval(), c.eval({a: 10.0}), c.eval(feed_dict={b: 5.0})]


@case
def eval_feeds_an_intermediate_in_as_default(tf):
    x = tf.placeholder(tf.float32, shape=[2])
    h = x * 2.0
    y = h + 1.0
    sess = tf.Session()
    with sess.as_default():
        out = [y.eval({x: [1.0, 2.0]}), y.eval({h: [10.0, 20.0]})]
    sess.close()
    return out


@case
def eval_feeds_a_variable_in_an_interactive_session(tf):
    v = tf.Variable([1.0, 2.0])
    w = v * 3.0
    sess = tf.InteractiveSession()
    v.initializer.run()
    out = [w.eval(), w.eval({v: [5.0, 6.0]}), v.eval()]
    sess.close()
    return out


@case
def eval_with_session_argument(tf):
    a = tf.constant([1, 2])
    b = a + 1
    sess = tf.Session()
    out = b.eval(session=sess, feed_dict={a: [5, 6]})
    sess.close()
    return out


@case
def eval_without_default_session(tf):
    return tf.constant(1.0).eval()


# -- Session.run: fetching operations and structures --------------------------------------------
@case
def fetch_operations_gives_none(tf):
    a = tf.constant(42.0)
    v = tf.Variable(1.0)
    init = tf.global_variables_initializer()
    with tf.Session() as sess:
        return [sess.run(init), sess.run(a.op), sess.run(tf.no_op()),
                sess.run([a, a.op]), sess.run(tf.group(a, v)), sess.run(v.initializer)]


@case
def train_op_runs_and_gives_none(tf):
    w = tf.Variable(1.0)
    loss = (w - 3.0) * (w - 3.0)
    train = tf.train.GradientDescentOptimizer(0.25).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(train)
        train.run()
        return [first, sess.run(w)]


@case
def op_run_assigns(tf):
    v = tf.Variable([1.0, 2.0])
    assign = tf.assign(v, [3.0, 4.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        assign.op.run()
        after = sess.run(v)
        tf.assign_add(v, [1.0, 1.0]).op.run(session=sess)
        return [after, v.eval()]


@case
def nested_fetches(tf):
    pair = collections.namedtuple("Pair", "x y")
    a = tf.constant(1.0)
    b = tf.constant([2, 3])
    with tf.Session() as sess:
        return sess.run({"a": [a, (b, a)], "p": pair(a, b), "t": (b,), "e": []})


@case
def fetch_by_name(tf):
    tf.constant(4.0, name="four")
    with tf.Session() as sess:
        return sess.run("four:0")


# -- names, ops and the graph -------------------------------------------------------------------
@case
def tensor_names_ops_and_graph(tf):
    a = tf.constant(2.0, name="a")
    x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
    c = a * 3.0
    d = c * 2.0
    g = tf.get_default_graph()
    return [a.name, c.name, d.name, c.op.name, d.op.name, c.op.type, x.op.type, a.op.type,
            c.graph is g, g.get_tensor_by_name("mul:0") is c,
            g.get_operation_by_name("mul") == c.op, c.op.outputs[0] is c,
            [t.name for t in c.op.inputs][:1], str(x), repr(x), repr(c.op)]


@case
def variable_and_initializer_names(tf):
    v = tf.Variable([1.0, 2.0], name="weights")
    init = tf.global_variables_initializer()
    return [v.name, v.op.name, v.initializer.name, init.name, init.type]


@case
def get_tensor_by_name_of_an_operation_name(tf):
    tf.constant(1.0, name="c")
    return tf.get_default_graph().get_tensor_by_name("c")


# -- shapes ------------------------------------------------------------------------------------
@case
def static_shapes(tf):
    x = tf.placeholder(tf.float32, shape=[None, 3])
    s = x.get_shape()
    y = tf.reduce_sum(x, axis=1)
    return [s.as_list(), s.ndims, s.rank, s[1].value, s[0].value, s == [None, 3],
            x.shape[1] == 3, str(s), str(y.shape), int(s[1]) * 2, str(s[1] * 2),
            str(tf.TensorShape(None)), tf.TensorShape([2, 3]).num_elements(),
            s.is_fully_defined(), s.merge_with([4, None]).as_list(), s[1:].as_list(),
            [d.value for d in s]]


@case
def unknown_rank_as_list(tf):
    return tf.placeholder(tf.float32).get_shape().as_list()


@case
def set_shape_refines(tf):
    x = tf.placeholder(tf.float32)
    x.set_shape([None, 2])
    y = tf.placeholder(tf.float32, shape=[None, 2])
    y.set_shape([5, 2])
    return [x.get_shape().as_list(), y.get_shape().as_list()]


@case
def set_shape_contradiction(tf):
    tf.placeholder(tf.float32, shape=[3]).set_shape([4])


# -- tf.constant -------------------------------------------------------------------------------
@case
def constant_shapes(tf):
    with tf.Session() as sess:
        return sess.run([tf.constant([1, 2, 3], shape=[3, 1]), tf.constant(7, shape=[2, 2]),
                         tf.constant([1, 2], shape=[3]), tf.constant([[1.0, 2.0]], shape=[2, 2]),
                         tf.constant([], shape=[2]), tf.constant([1, 2], dtype=tf.float32,
                                                                 shape=[2, 1]),
                         tf.constant(2.5, shape=[])])


@case
def constant_too_many_values(tf):
    tf.constant([1, 2, 3, 4, 5, 6, 7], shape=[3, 2])


@case
def constant_verify_shape(tf):
    tf.constant([1, 2, 3], shape=[3, 1], verify_shape=True)


@case
def constant_fractional_float_for_int(tf):
    tf.constant(1.5, dtype=tf.int32)


@case
def constant_dtypes(tf):
    with tf.Session() as sess:
        return sess.run([tf.constant(1), tf.constant([1, 2]), tf.constant(1.5),
                         tf.constant([1, 2.5]), tf.constant(True), tf.constant(3, tf.float64),
                         tf.constant(2**40), tf.constant([-3, 4], dtype=tf.int64)])


@case
def constant_integral_float_for_int(tf):
    tf.constant(2.0, dtype=tf.int32)


# -- strings ------------------------------------------------------------------------------------
@case
def hello_tensorflow(tf):
    hello = tf.constant("Hello, TensorFlow!")
    with tf.Session() as sess:
        out = sess.run(hello)
        return [out, out.decode()]


@case
def string_feeds_and_fetches(tf):
    s = tf.placeholder(tf.string)
    t = tf.identity(s)
    words = tf.constant(["ab", "c"])
    with tf.Session() as sess:
        return [sess.run(t, {s: "hi"}), sess.run(t, {s: ["a", b"b"]}), sess.run(words),
                sess.run(tf.constant(b"raw"))]


# -- shape ops, range, unstack, convert_to_tensor -----------------------------------------------
@case
def shape_size_rank(tf):
    x = tf.placeholder(tf.float32, shape=[None, 3])
    c = tf.constant([[1, 2], [3, 4], [5, 6]])
    with tf.Session() as sess:
        return sess.run([tf.shape(x), tf.size(x), tf.rank(x), tf.shape(c), tf.size(c)],
                        {x: [[0.0] * 3] * 4})


@case
def ranges(tf):
    with tf.Session() as sess:
        return sess.run([tf.range(5), tf.range(1, 5, 2), tf.range(0.0, 1.0, 0.25),
                         tf.range(3, dtype=tf.float32), tf.range(2, 5.0), tf.range(5, 1, -1),
                         tf.range(start=1, limit=4)])


@case
def unstacks(tf):
    c = tf.constant([[1, 2], [3, 4], [5, 6]])
    with tf.Session() as sess:
        return [sess.run(tf.unstack(c)), sess.run(tf.unstack(c, axis=1)),
                sess.run(tf.unstack(c, axis=-1))]


@case
def convert_to_tensor(tf):
    a = tf.constant([1.0, 2.0])
    with tf.Session() as sess:
        return [sess.run(tf.convert_to_tensor([1, 2.5])),
                sess.run(tf.convert_to_tensor(3)),
                sess.run(tf.convert_to_tensor([1, 2], dtype=tf.float32)),
                tf.convert_to_tensor(a) is a]


@case
def convert_to_tensor_wrong_dtype(tf):
    tf.convert_to_tensor(tf.constant([1, 2]), dtype=tf.float32)


# -- gradients ----------------------------------------------------------------------------------
@case
def stop_gradient_and_gradients_arguments(tf):
    x = tf.placeholder(tf.float32)
    y = x * x
    z = tf.stop_gradient(y) + 3.0 * x
    u = tf.placeholder(tf.float32)
    gz = tf.gradients(z, x)
    gs = tf.gradients(y * 2.0, [x], stop_gradients=[y])
    gn = tf.gradients(y, [x, u])
    gzero = tf.gradients(y, [x, u], unconnected_gradients="zero")
    gagg = tf.gradients(y + y, x, aggregation_method=tf.AggregationMethod.ADD_N
                        if hasattr(tf, "AggregationMethod") else None)
    with tf.Session() as sess:
        return [sess.run(gz, {x: 2.0}), gs[0] is None, gn[1] is None,
                sess.run(gzero, {x: 2.0, u: 1.0}), sess.run(gagg, {x: 2.0})]


@case
def gradients_bad_unconnected(tf):
    x = tf.placeholder(tf.float32)
    tf.gradients(x * 2.0, x, unconnected_gradients="nan")


@case
def hessians(tf):
    x = tf.Variable([1.0, 2.0])
    y = tf.reduce_sum(x * x * x)
    h = tf.hessians(y, x)
    with tf.Session() as sess:
        sess.run(x.initializer)
        return sess.run(h)


# -- reductions and spellings -------------------------------------------------------------------
@case
def reductions_with_tf1_arguments(tf):
    x = tf.constant([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    i = tf.constant([[1, 2], [3, 4]])
    with tf.Session() as sess:
        return sess.run([
            tf.reduce_sum(x, reduction_indices=1), tf.reduce_sum(x, reduction_indices=[0, 1]),
            tf.reduce_mean(x, reduction_indices=[0], keep_dims=True),
            tf.reduce_max(x, 1, keep_dims=True), tf.reduce_min(x, axis=0),
            tf.reduce_prod(x, reduction_indices=1), tf.reduce_sum(i), tf.reduce_mean(i),
            tf.reduce_any(x > 5.0, reduction_indices=1), tf.reduce_all(x > 0.0),
            tf.argmax(x, 1), tf.argmax(x, dimension=0), tf.argmin(x, 1),
            tf.arg_max(x, 1), tf.arg_min(x, 0), tf.count_nonzero(x - 1.0),
            tf.reduce_logsumexp(x, 1), tf.reduce_logsumexp(x),
            tf.add_n([x, x, x]), tf.reduce_sum(x, 1, keepdims=True)])


@case
def shapes_and_fills(tf):
    x = tf.constant([[1.0, 2.0, 3.0]])
    with tf.Session() as sess:
        return sess.run([tf.fill([2, 3], 9), tf.fill([2], 0.5), tf.eye(2), tf.eye(2, 3),
                         tf.linspace(0.0, 1.0, 5), tf.lin_space(1.0, 2.0, 3),
                         tf.expand_dims(x, 0), tf.expand_dims(x, -1), tf.squeeze(x),
                         tf.squeeze(tf.expand_dims(x, 2), axis=[2])])


@case
def logic_and_integer_division(tf):
    a = tf.constant([True, False, True])
    b = tf.constant([True, True, False])
    x = tf.constant([7.0, -7.0, 5.5])
    y = tf.constant([2.0, 2.0, -2.0])
    with tf.Session() as sess:
        return sess.run([tf.logical_and(a, b), tf.logical_or(a, b), tf.logical_not(a),
                         tf.floordiv(x, y), tf.mod(x, y), tf.floormod(x, y),
                         tf.floordiv(tf.constant([7, -7]), tf.constant([2, 2]))])


# -- the dtypes TF1 tutorials use ---------------------------------------------------------------
@case
def small_dtypes_store_feed_fetch_and_cast(tf):
    p = tf.placeholder(tf.uint8, shape=[3])
    f = tf.cast(p, tf.float32) / 255.0
    q = tf.placeholder(tf.int16)
    with tf.Session() as sess:
        return sess.run([
            p, f, tf.cast(tf.constant([-1.5, 30.0, 2.7]), tf.int8),
            tf.cast(tf.constant([1.5, 2.25]), tf.float16), tf.constant([1, 2], tf.int16),
            tf.cast(tf.cast(tf.constant([0.1, 0.5]), tf.float16), tf.float32),
            tf.constant(200, tf.uint8), tf.cast(q, tf.int32)],
            {p: [0, 128, 255], q: [-3, 300]})


@case
def small_dtypes_arithmetic_without_overflow(tf):
    a = tf.constant([100, 7], tf.int16)
    b = tf.constant([3, 9], tf.uint8)
    with tf.Session() as sess:
        return [sess.run(a * 2).tolist(), sess.run(b + b).tolist(),
                sess.run(tf.reduce_sum(b)).item()]


# -- more of TF1's graph API ---------------------------------------------------------------------
@case
def control_dependencies_and_make_callable(tf):
    x = tf.placeholder(tf.float32, shape=[None])
    counter = tf.Variable(0)
    inc = tf.assign_add(counter, 1)
    with tf.control_dependencies([inc]):
        y = tf.identity(x * 2.0)
    with tf.Session() as sess:
        sess.run(counter.initializer)
        run = sess.make_callable(y, [x])
        return [run([1.0, 2.0]), run([3.0]), sess.run(counter), inc.name, y.name]


@case
def variables_convert_as_tf1(tf):
    v = tf.Variable([7])
    c = tf.Variable(lambda: tf.constant(2.5))
    w = tf.Variable(tf.zeros([2, 3]), name="weights")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return [sess.run([v, c]), str(w), w.get_shape().as_list()]


@case
def python_values_make_graph_nodes(tf):
    s = tf.add(1, 2)
    m = tf.matmul([[1.0, 2.0]], [[3.0], [4.0]])
    r = tf.reduce_sum([1, 2, 3])
    with tf.Session() as sess:
        return [s.name, m.name, r.name, tf.reduce_mean(m).name, tf.cast(s, tf.float32).name,
                tf.reshape(m, [-1]).name, tf.argmax([1, 3]).name, sess.run([s, m, r])]


@case
def fetched_fed_tensor_is_an_array(tf):
    a = tf.constant(2.0)
    b = tf.constant(2.0)
    with tf.Session() as sess:
        return [sess.run([a, b], {a: 5.0}), sess.run(a * 3.0, {a: 1.0})]


@case
def collections_and_math_namespace(tf):
    with tf.variable_scope("layer"):
        w = tf.Variable(tf.ones([2]), name="w")
    tf.Variable(0.0, name="b", trainable=False)
    tf.add_to_collection("mine", w * 2.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return [[v.name for v in tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)],
                [v.name for v in tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)],
                [v.name for v in tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, "layer")],
                len(tf.get_collection("mine")), tf.get_collection(tf.GraphKeys.UPDATE_OPS),
                sess.run([tf.math.reduce_sum(w), tf.math.log(tf.constant(1.0)),
                          tf.math.argmax([1, 3, 2])])]


@case
def linalg_and_unconnected_gradients_enum(tf):
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    v = tf.constant([1.0, -1.0])
    u = tf.constant(1.0)
    g = tf.gradients(a * 2.0, [u], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    with tf.Session() as sess:
        return sess.run([tf.linalg.matvec(a, v), tf.linalg.matmul(a, a), g])


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
    rec = {"versions": {"tensorflow": tf2.__version__, "numpy": np.__version__},
           "cases": cases}
    path = Path(__file__).with_name("tf21.json")
    path.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def run_case(build, tf) -> dict:
    """``{"value": ...}`` or ``{"error": {"type", "message"}}`` for one case."""
    try:
        return {"value": plain(build(tf))}
    except Exception as e:  # noqa: BLE001 - recorded: the tests compare it
        return {"error": {"type": type(e).__name__,
                          "message": " ".join(str(e).split())[:300]}}


if __name__ == "__main__":
    main()
