"""Record TF1 feeding and fetching an LSTM's state tuple (``feed_dict={init_state:
final_state}``, the truncated-backpropagation pattern of TF1's char-RNN and PTB tutorials)
into ``tf_state_tuples.json`` (read by tests/test_tf_state_tuples.py).

Each case is a function of the ``tf`` module, written once against TF1's API; the weights
are assigned from NumPy, so the numbers do not depend on TF's generator. Run::

    TF_USE_LEGACY_KERAS=1 /tmp/ref/bin/python tests/recorded/record_tf_state_tuples.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # the recording helpers, next to this file
from record_tf_control_flow21 import encode, record  # noqa: E402, F401 - encode: for the test

X = (np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 12.0 - 1.0)


def _lstm(tf, units=5, cells=1):
    x = tf.placeholder(tf.float32, [2, 3, 4])
    make = [tf.nn.rnn_cell.BasicLSTMCell(units) for _ in range(cells)]
    cell = make[0] if cells == 1 else tf.nn.rnn_cell.MultiRNNCell(make)
    init_state = cell.zero_state(2, tf.float32)
    out, final_state = tf.nn.dynamic_rnn(cell, x, initial_state=init_state)
    assigns = []
    for k, v in enumerate(tf.trainable_variables()):
        shape = v.shape.as_list()
        value = np.cos(np.arange(np.prod(shape)) * 0.7 + k).reshape(shape) * 0.3
        assigns.append(tf.assign(v, value.astype(np.float32)))
    return x, init_state, out, final_state, assigns


def feed_state_tuple_back(tf):
    """Three runs, each fed the state the one before fetched."""
    x, init_state, out, final_state, assigns = _lstm(tf)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(assigns)
        state = sess.run(init_state)
        kinds = [type(state).__name__]
        outs = []
        for _ in range(3):
            o, state = sess.run([out, final_state], feed_dict={x: X, init_state: state})
            outs.append(o[:, -1])
        kinds.append(type(state).__name__)
        return [kinds, outs, state.c, state.h]


def feed_multi_cell_state(tf):
    """A MultiRNNCell's state: a tuple of LSTMStateTuples, fed back whole."""
    x, init_state, out, final_state, assigns = _lstm(tf, units=3, cells=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(assigns)
        state = sess.run(init_state)
        for _ in range(2):
            state = sess.run(final_state, feed_dict={x: X, init_state: state})
        return [type(state).__name__, type(state[0]).__name__, state[1].h]


def feed_state_as_plain_tuple(tf):
    """The value may be any sequence of the key's structure (here a tuple of arrays)."""
    x, init_state, out, final_state, assigns = _lstm(tf)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(assigns)
        zeros = np.full((2, 5), 0.5, np.float32)
        return sess.run(out, feed_dict={x: X, init_state: (zeros, zeros * 2)})[:, -1]


def feed_state_of_wrong_structure(tf):
    x, init_state, out, final_state, assigns = _lstm(tf)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(out, feed_dict={x: X, init_state: np.zeros((2, 5), np.float32)})


CASES = [feed_state_tuple_back, feed_multi_cell_state, feed_state_as_plain_tuple,
         feed_state_of_wrong_structure]


def main() -> None:
    record(CASES, Path(__file__).with_name("tf_state_tuples.json"))


if __name__ == "__main__":
    main()
