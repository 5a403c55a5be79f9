"""TF1's training-loop helpers in ``tf.train``: ``exponential_decay``,
``ExponentialMovingAverage``, ``MonitoredTrainingSession`` with ``StopAtStepHook`` and
checkpoints, the in-process ``Server``, checked against ``tests/recorded/tf_graph_io.json``."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import kernelgraph.compat.v1 as tf
from kernelgraph import errors


@pytest.mark.parametrize("kind", ["smooth", "staircase"])
def test_exponential_decay_as_tf(recorded, kind):
    rec = recorded("tf_graph_io")["decay"]
    with tf.Graph().as_default():
        step = tf.Variable(0, trainable=False, dtype=tf.int64)
        lr = tf.train.exponential_decay(0.1, step, 3, 0.5, staircase=kind == "staircase")
        assert lr.name == rec["name"] and lr.dtype == tf.float32
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = []
            for i in range(8):
                sess.run(step.assign(i))
                got.append(float(sess.run(lr)))
    np.testing.assert_allclose(got, rec[kind], rtol=1e-6)


@pytest.mark.parametrize("kind", ["plain", "num_updates"])
def test_exponential_moving_average_as_tf(recorded, kind):
    rec = recorded("tf_graph_io")["ema"][kind]
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        step = tf.Variable(0, trainable=False, name="step")
        avg = tf.train.ExponentialMovingAverage(
            0.9, num_updates=step if kind == "num_updates" else None)
        update = avg.apply([v])
        shadow = avg.average(v)
        assert shadow.name == rec["shadow_name"] and avg.average_name(v) == rec["average_name"]
        assert update.name == "ExponentialMovingAverage"
        restore = avg.variables_to_restore()
        assert {k: t.op.name for k, t in restore.items()} == rec["restore"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            seen = []
            for i, new in enumerate([[3.0, 0.0], [5.0, -1.0], [4.0, 4.0]]):
                sess.run([v.assign(new), step.assign(i + 1)])
                sess.run(update)
                seen.append(sess.run(shadow).tolist())
    np.testing.assert_allclose(seen, rec["values"], rtol=1e-6)


@pytest.mark.parametrize("kind", ["plain", "debiased"])
def test_moving_average_of_a_tensor_as_tf(recorded, kind):
    rec = recorded("tf_graph_io")["ema_tensor"][kind]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        loss = tf.square(x, name="loss")
        avg = tf.train.ExponentialMovingAverage(0.9, zero_debias=kind == "debiased", name="avg")
        update = avg.apply([loss])
        shadow = avg.average(loss)
        assert shadow.name == rec["shadow_name"]
        assert sorted(v.op.name for v in tf.global_variables()) == rec["variables"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            seen = []
            for value in [2.0, 1.0, 3.0]:
                sess.run(update, {x: value})
                seen.append(float(sess.run(shadow)))
    np.testing.assert_allclose(seen, rec["values"], rtol=1e-6)


def test_moving_average_of_something_else_is_refused():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="expected variables or tensors"):
            tf.train.ExponentialMovingAverage(0.9).apply([1.0])
        with pytest.raises(TypeError, match="must be half, float, or double"):
            tf.train.ExponentialMovingAverage(0.9).apply([tf.Variable(1, name="i")])


def _model():
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(1.0, name="w")
    return step, w, tf.group(w.assign_add(1.0), step.assign_add(1))


def test_monitored_training_session_stops_saves_and_restores(recorded, tmp_path):
    rec = recorded("tf_graph_io")["monitored"]
    ckpt = str(tmp_path)
    with tf.Graph().as_default():
        step, w, train = _model()
        seen = []
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=ckpt, hooks=[tf.train.StopAtStepHook(last_step=5)],
                save_summaries_steps=None, save_summaries_secs=None) as sess:
            while not sess.should_stop():
                sess.run(train)
                seen.append(len(seen) + 1)
            with pytest.raises(RuntimeError, match="even after should_stop"):
                sess.run(train)
    assert seen == rec["steps"]
    assert os.path.basename(tf.train.latest_checkpoint(ckpt)) == rec["latest"]
    with tf.Graph().as_default():
        step, w, _ = _model()
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt) as sess:
            assert [int(sess.run(step)), float(sess.run(w))] == rec["restored"]


def test_monitored_training_session_writes_summaries_as_tf(recorded, tmp_path):
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    rec = recorded("tf_graph_io")["monitored_summaries"]
    ckpt = str(tmp_path)
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(1.0, name="w")
        tf.summary.scalar("w", w)
        train = tf.group(w.assign_add(1.0), step.assign_add(1))
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=ckpt, hooks=[tf.train.StopAtStepHook(last_step=7)],
                save_summaries_steps=2, log_step_count_steps=None) as sess:
            while not sess.should_stop():
                sess.run(train)
    seen = []
    for name in sorted(os.listdir(ckpt)):
        if name.startswith("events.out.tfevents"):
            for event in EventFileLoader(os.path.join(ckpt, name)).Load():
                seen += [[int(event.step), v.tag, _scalar(v)] for v in event.summary.value]
    # TF1's .index and .data files are kernelgraph's .npz; the rest is TF1's list
    files = sorted(n if not n.startswith("events.") else "events.out.tfevents..."
                   for n in os.listdir(ckpt))
    assert files == sorted({f.replace(".data-00000-of-00001", ".npz").replace(".index", ".npz")
                            for f in rec["files"]})
    assert rec["w"] and [s[:2] for s in seen] == [s[:2] for s in rec["w"]]  # steps and tags
    # w is read in the run that also moves it: TF's order of the two is its own, so the
    # value is w's before or after that run's step
    for (_, _, got), (_, _, want) in zip(seen, rec["w"]):
        assert got in (want, want - 1.0, want + 1.0)


def _scalar(value) -> float:
    from tensorboard.util import tensor_util

    if value.HasField("tensor"):
        return float(tensor_util.make_ndarray(value.tensor))
    return value.simple_value


def test_monitored_session_ends_quietly_at_a_datasets_end():
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        ran = []
        with tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=100)]) as sess:
            for _ in range(3):
                ran.append(sess.run(tf.assign_add(step, 1)))
            raise errors.OutOfRangeError(None, None, "End of sequence")
        assert ran == [1, 2, 3] and sess.should_stop()
    with tf.Graph().as_default():
        with pytest.raises(RuntimeError, match="Global step should be created"):
            tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(last_step=1)])
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        tf.train.StopAtStepHook()


def test_a_hook_sees_its_fetches_and_can_stop():
    class Watch(tf.train.SessionRunHook):
        def __init__(self):
            self.values = []

        def begin(self):
            self.x = tf.get_default_graph().get_tensor_by_name("x:0")

        def before_run(self, run_context):
            return tf.train.SessionRunArgs(self.x)

        def after_run(self, run_context, run_values):
            self.values.append(float(run_values.results))
            if len(self.values) == 2:
                run_context.request_stop()

    with tf.Graph().as_default():
        x = tf.Variable(0.0, name="x")
        inc = tf.assign_add(x, 2.0)
        watch = Watch()
        with tf.train.MonitoredSession(hooks=[watch]) as sess:
            while not sess.should_stop():
                sess.run(inc)
    assert len(watch.values) == 2


def test_server_is_in_process_and_its_target_runs_a_session():
    server = tf.train.Server.create_local_server()
    assert server.target.startswith("inprocess://")
    with tf.Graph().as_default():
        c = tf.constant(3.0) * 2.0
        with tf.Session(server.target) as sess:
            assert sess.run(c) == 6.0
        step = tf.train.get_or_create_global_step()
        with tf.train.MonitoredTrainingSession(master=server.target) as sess:
            assert sess.run(tf.assign_add(step, 1)) == 1
    waiting = threading.Thread(target=server.join, daemon=True)
    waiting.start()
    waiting.join(timeout=0.2)
    assert waiting.is_alive()  # a ps task's join() waits, as TF's


def test_global_step_and_all_variables():
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        v = tf.Variable(1.0, name="v")
        assert tf.all_variables() == tf.global_variables() == [step, v]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign_add(step, 7))
            got = tf.train.global_step(sess, step)
    assert got == 7 and type(got) is int


def test_clear_session_starts_a_new_default_graph():
    tf.constant(1.0, name="before")
    old = tf.get_default_graph()
    tf.keras.backend.clear_session()
    assert tf.get_default_graph() is not old and tf.get_default_graph().get_operations() == []


def test_enable_eager_execution_is_refused_with_the_reason():
    with pytest.raises(NotImplementedError, match="graph mode only"):
        tf.enable_eager_execution()
    assert tf.executing_eagerly() is False
