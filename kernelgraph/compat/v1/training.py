"""TF1's training-loop helpers in ``tf.train``: ``exponential_decay``,
``ExponentialMovingAverage``, ``global_step``, ``Server``, and ``MonitoredSession`` /
``MonitoredTrainingSession`` with their hooks (``StopAtStepHook``, checkpoints).

``tf.train.Server`` is in-process: kernelgraph has no gRPC runtime, so a server serves
nothing; its ``target`` is a name that ``tf.Session(server.target)`` accepts and runs
locally (a real cluster is kernelgraph's Dask pool: ``kg.distributed``). A ``ps`` task's
``server.join()`` waits for ever, as TF's does; each worker process trains on its own.

>>> import kernelgraph.compat.v1 as tf
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     train = tf.assign_add(step, 1)
...     with tf.train.MonitoredTrainingSession(
...             hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
...         while not sess.should_stop():
...             _ = sess.run(train)
...             print(tf.train.global_step(sess.raw_session(), step))
1
2
3
"""

from __future__ import annotations

import itertools
import os
import threading
import time

import numpy as np

from ... import errors, ops
from ...dtypes import float32
from ...graph import Node, get_default_graph
from ...static.variables import Variable, constant, global_variables_initializer, group
from ...utils.tensorboard import summaries as S
from . import graph_collections as C
from .graph_import import unscoped
from .graph_io import write_graph
from .optimizers import get_global_step
from .saver import Saver, latest_checkpoint
from .session import LOCAL_TARGET, Session
from .summary import FileWriter, merge_all


# -- schedules and averages ------------------------------------------------------------------
def exponential_decay(learning_rate, global_step, decay_steps, decay_rate,
                      staircase: bool = False, name=None):
    """TF1's ``learning_rate * decay_rate ** (global_step / decay_steps)`` (the exponent
    floored with ``staircase``), a float32 tensor named 'ExponentialDecay'."""
    if global_step is None:
        raise ValueError("global_step is required for exponential_decay.")
    graph = global_step.graph if isinstance(global_step, Node) else get_default_graph()
    with graph.as_default(), graph.name_scope(name or "ExponentialDecay") as scope:
        lr = constant(np.float32(learning_rate), name="learning_rate") if not \
            isinstance(learning_rate, Node) else learning_rate
        step = ops.cast(global_step, float32) if isinstance(global_step, Node) else \
            constant(np.float32(global_step))
        p = ops.div(step, constant(np.float32(decay_steps), name="Cast_1"))
        if staircase:
            p = ops.floor(p)
        rate = constant(np.float32(decay_rate), name="Cast_2")
        decayed = ops.mul(lr, ops.pow(rate, p))
    decayed.name = scope.rstrip("/")  # TF1 names the result as its scope, which holds the name
    return decayed


MOVING_AVERAGE_VARIABLES = "moving_average_variables"


class ExponentialMovingAverage:
    """TF1's ``tf.train.ExponentialMovingAverage(decay, num_updates=None)``: ``apply(vars)``
    makes a shadow variable per variable or tensor (named ``<name>/ExponentialMovingAverage``,
    starting at a variable's initial value, or at zeros for a tensor such as a loss) and
    returns the op that moves each shadow: ``shadow -= (1 - decay) * (shadow - value)``, with
    ``decay = min(decay, (1 + n) / (10 + n))`` where ``num_updates`` (n) is given. A tensor's
    average is debiased with ``zero_debias=True``, as TF1's: a ``biased`` variable is moved
    and the shadow is ``biased / (1 - decay ** steps)``. ``average(var)`` is the shadow;
    ``variables_to_restore()`` maps checkpoint names to variables so that a Saver restores
    the averages into the model's variables."""

    def __init__(self, decay, num_updates=None, zero_debias: bool = False,
                 name: str = "ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict = {}

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list=None):
        var_list = list(C.trainable_variables() if var_list is None else var_list)
        for var in var_list:
            if not isinstance(var, Node):
                raise TypeError(f"ExponentialMovingAverage.apply: expected variables or "
                                f"tensors, got a {type(var).__name__}")
            if np.dtype(var.dtype).kind != "f":
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var in self._averages:
                raise ValueError(f"Moving average already computed for: {var.name}")
        graph = var_list[0].graph if var_list else get_default_graph()
        with graph.as_default():
            debiased = {}
            for var in var_list:
                with unscoped(graph):
                    if isinstance(var, Variable):
                        start = var.initial_value
                        C.add_to_collection(MOVING_AVERAGE_VARIABLES, var)
                    else:  # a tensor's average starts at zeros (TF1's zeros slot)
                        start = np.zeros(var.shape, var.dtype)
                    shadow = Variable(start, name=self.average_name(var), trainable=False)
                    if self._zero_debias and not isinstance(var, Variable):
                        debiased[var] = (
                            Variable(np.zeros(var.shape, var.dtype), trainable=False,
                                     name=shadow.name + "/biased"),
                            Variable(np.zeros((), var.dtype), trainable=False,
                                     name=shadow.name + "/local_step"))
                self._averages[var] = shadow
            with graph.name_scope(self._name) as scope:
                decay = constant(np.float32(self._decay), name="decay")
                if self._num_updates is not None:
                    n = ops.cast(self._num_updates, float32)
                    decay = ops.minimum(decay, ops.div(ops.add(n, np.float32(1.0)),
                                                       ops.add(n, np.float32(10.0))))
                updates = []
                for var in var_list:
                    shadow = self._averages[var]
                    rate = ops.cast(ops.sub(np.float32(1.0), decay), var.dtype)
                    if var in debiased:
                        biased, steps = debiased[var]
                        moved = biased.assign_sub(ops.mul(ops.sub(biased, var), rate))
                        counted = steps.assign_add(np.ones((), var.dtype))
                        factor = ops.sub(np.ones((), var.dtype), ops.pow(
                            ops.sub(np.ones((), var.dtype), rate), counted))
                        updates.append(shadow.assign(ops.div(moved, factor)))
                    else:
                        updates.append(shadow.assign_sub(ops.mul(ops.sub(shadow, var), rate)))
                done = group(*updates)
            done.name = scope.rstrip("/")  # as TF1: the op is named as its scope
            return done

    def average(self, var):
        return self._averages.get(var)

    def average_name(self, var) -> str:
        return f"{var.name}/{self._name}"  # a node's name is TF's op name (no ':0')

    def variables_to_restore(self, moving_avg_variables=None) -> dict:
        if moving_avg_variables is None:
            moving_avg_variables = C.trainable_variables() + C.get_collection(
                MOVING_AVERAGE_VARIABLES)
        moving = list(dict.fromkeys(moving_avg_variables))
        names = {self.average_name(v): v for v in moving}
        for v in C.get_collection(C.GraphKeys.GLOBAL_VARIABLES):
            if v not in moving and v.name not in names:
                names[v.name] = v
        return names


def global_step(sess, global_step_tensor) -> int:
    """TF1's ``tf.train.global_step(sess, step)``: the step's value as a Python int."""
    return int(sess.run(global_step_tensor))


# -- an in-process server --------------------------------------------------------------------
_servers = itertools.count()


class Server:
    """TF1's ``tf.train.Server``, in-process (see the module's text): ``target`` names it,
    and ``tf.Session(server.target)`` runs in this process."""

    def __init__(self, server_or_cluster_def=None, job_name=None, task_index=None,
                 protocol=None, config=None, start: bool = True):
        self.server_def = server_or_cluster_def
        self.job_name, self.task_index = job_name, task_index
        self.target = f"{LOCAL_TARGET}{next(_servers)}"  # tf.Session runs it locally
        self._stopped = threading.Event()

    @staticmethod
    def create_local_server(config=None, start: bool = True) -> Server:
        return Server({"localhost": ["localhost:0"]}, job_name="local", task_index=0)

    def start(self) -> None:
        """Nothing to start: the server is in-process."""

    def join(self) -> None:
        """Wait for ever, as a TF1 ps task does (there is nothing for it to serve)."""
        self._stopped.wait()




# -- monitored sessions ----------------------------------------------------------------------
class SessionRunArgs:
    """What a hook's ``before_run`` asks to fetch (and feed) with the run."""

    def __init__(self, fetches, feed_dict=None, options=None):
        self.fetches, self.feed_dict, self.options = fetches, feed_dict, options


class SessionRunValues:
    def __init__(self, results, options=None, run_metadata=None):
        self.results, self.options, self.run_metadata = results, options, run_metadata


class SessionRunContext:
    """A hook's view of one run: ``original_args``, ``session``, ``request_stop()``."""

    def __init__(self, original_args, session):
        self.original_args, self.session = original_args, session
        self.stop_requested = False

    def request_stop(self) -> None:
        self.stop_requested = True


class SessionRunHook:
    """TF1's hook: ``begin``, ``after_create_session``, ``before_run``, ``after_run``,
    ``end``; each does nothing unless a subclass says otherwise."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches ``last_step`` (or ``num_steps`` past the
    step the session started at)."""

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and num_steps < 0:
            raise ValueError("num_steps must be >= 0")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self):
        self._step = get_global_step()
        if self._step is None:
            raise RuntimeError("Global step should be created to use StopAtStepHook.")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._step)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._step)

    def after_run(self, run_context, run_values):
        if int(run_values.results) + 1 >= self._last_step:
            if int(run_context.session.run(self._step)) >= self._last_step:
                run_context.request_stop()


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint in ``checkpoint_dir`` when the session starts (with the graph, as
    ``graph.pbtxt``), every ``save_steps`` steps or ``save_secs`` seconds, and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename: str = "model.ckpt", scaffold=None, listeners=None):
        if (save_secs is None) == (save_steps is None):
            raise ValueError("exactly one of save_secs or save_steps must be given")
        self._dir, self._secs, self._steps = os.fspath(checkpoint_dir), save_secs, save_steps
        self._saver, self._basename = saver, checkpoint_basename

    def begin(self):
        self._step = get_global_step()
        if self._step is None:
            raise RuntimeError("Global step should be created to use CheckpointSaverHook.")
        if self._saver is None:
            self._saver = Saver()

    def _save(self, session):
        step = int(session.run(self._step))
        self._saver.save(session, os.path.join(self._dir, self._basename), global_step=step)
        self._last_step, self._last_time = step, time.monotonic()

    def after_create_session(self, session, coord):
        write_graph(session.graph, self._dir, "graph.pbtxt")  # as TF1's hook does
        self._save(session)

    def after_run(self, run_context, run_values):
        step = int(run_context.session.run(self._step))
        due = (step - self._last_step >= self._steps) if self._steps else \
            (time.monotonic() - self._last_time >= self._secs)
        if due and step != self._last_step:
            self._save(run_context.session)

    def end(self, session):
        if int(session.run(self._step)) != self._last_step:
            self._save(session)


class SummarySaverHook(SessionRunHook):
    """Writes the summaries (``summary_op``, else every summary merged) to an event file in
    ``output_dir`` on the first step and every ``save_steps`` steps after, at the step the
    run reached, as TF1's hook does (with a SessionLog START first)."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (save_secs is None) == (save_steps is None):
            raise ValueError("exactly one of save_secs or save_steps must be given")
        self._steps, self._secs = save_steps, save_secs
        self._dir, self._writer, self._op = output_dir, summary_writer, summary_op

    def begin(self):
        if self._writer is None and self._dir:
            self._writer = FileWriter(self._dir)
        self._step = get_global_step()
        if self._step is None:
            raise RuntimeError("Global step should be created to use SummarySaverHook.")
        if self._op is None:
            self._op = merge_all()
        self._next = self._last = None

    def _due(self, step) -> bool:
        if self._last is None:
            return True
        if step == self._last:
            return False
        if self._steps:
            return step >= self._last + self._steps
        return time.monotonic() - self._last_time >= self._secs

    def before_run(self, run_context):
        self._request = self._next is None or self._due(self._next)
        fetches = {"global_step": self._step}
        if self._request and self._op is not None:
            fetches["summary"] = self._op
        return SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        if self._writer is None:
            return
        step = int(run_values.results["global_step"]) + 1
        if self._next is None or self._request:
            step = int(run_context.session.run(self._step))
        if self._next is None:
            self._writer.add_session_log(
                S.protos().event.SessionLog(status=S.protos().event.SessionLog.START), step)
        if self._request:
            self._last, self._last_time = step, time.monotonic()
            if "summary" in run_values.results:
                self._writer.add_summary(run_values.results["summary"], step)
        self._next = step + 1

    def end(self, session=None):
        if self._writer is not None:
            self._writer.flush()


class Scaffold:
    """What a monitored session builds with: ``init_op`` (default: initialise the global
    and local variables) and ``saver``."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 local_init_op=None, summary_op=None, saver=None, copy_from_scaffold=None):
        self.init_op, self.init_feed_dict, self.init_fn = init_op, init_feed_dict, init_fn
        self.local_init_op, self.saver = local_init_op, saver

    def finalize(self) -> None:
        if self.init_op is None:
            self.init_op = group(global_variables_initializer(),
                                 C.local_variables_initializer())
        if self.saver is None and C.get_collection(C.GraphKeys.GLOBAL_VARIABLES):
            self.saver = Saver()


class ChiefSessionCreator:
    """Makes the session: restores the latest checkpoint of ``checkpoint_dir`` (or
    ``checkpoint_filename_with_path``) where there is one, else runs the init op."""

    def __init__(self, scaffold=None, master: str = "", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._dir, self._path = checkpoint_dir, checkpoint_filename_with_path

    def create_session(self):
        self._scaffold.finalize()
        sess = Session(self._master, graph=get_default_graph(), config=self._config)
        path = self._path or (latest_checkpoint(self._dir) if self._dir else None)
        if path and self._scaffold.saver is not None:
            self._scaffold.saver.restore(sess, path)
            if self._scaffold.local_init_op is not None:
                sess.run(self._scaffold.local_init_op)
        else:
            sess.run(self._scaffold.init_op, feed_dict=self._scaffold.init_feed_dict)
            if self._scaffold.init_fn is not None:
                self._scaffold.init_fn(self._scaffold, sess)
        return sess


class MonitoredSession:
    """TF1's ``tf.train.MonitoredSession``: a session whose ``run`` also runs the hooks'
    fetches and asks them whether to stop (``should_stop()``); leaving its ``with`` block on
    ``OutOfRangeError`` (a dataset's end) ends training quietly, as TF1's does."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._sess = (session_creator or ChiefSessionCreator()).create_session()
        for hook in self._hooks:
            hook.after_create_session(self._sess, None)
        self._stop = False
        self._closed = False

    @property
    def graph(self):
        return self._sess.graph

    def raw_session(self):
        return self._sess

    def should_stop(self) -> bool:
        return self._stop or self._closed

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._closed or self._stop:
            raise RuntimeError("Run called even after should_stop requested.")
        context = SessionRunContext((fetches, feed_dict), self._sess)
        asks = [hook.before_run(context) for hook in self._hooks]
        feeds = dict(feed_dict or {})
        for ask in asks:
            if ask is not None and ask.feed_dict:
                feeds.update(ask.feed_dict)
        extra = [ask.fetches if ask is not None else None for ask in asks]
        outs = self._sess.run([fetches, [e for e in extra if e is not None]], feeds or None,
                              options, run_metadata)
        hook_results = iter(outs[1])
        for hook, e in zip(self._hooks, extra):
            hook.after_run(context, SessionRunValues(
                next(hook_results) if e is not None else None, options, run_metadata))
        self._stop = self._stop or context.stop_requested
        return outs[0]

    def close(self) -> None:
        if self._closed:
            return
        try:
            for hook in self._hooks:
                hook.end(self._sess)
        finally:
            self._sess.close()
            self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind in (errors.OutOfRangeError, StopIteration):
            kind = None
        if kind is None:
            self.close()
        else:
            self._sess.close()
            self._closed = True
        return kind is None and value is not None


USE_DEFAULT = object()


def MonitoredTrainingSession(master: str = "", is_chief: bool = True,  # noqa: N802
                             checkpoint_dir=None, scaffold=None, hooks=None,
                             chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT,
                             config=None, stop_grace_period_secs=120,
                             log_step_count_steps=100, max_wait_secs=7200,
                             save_checkpoint_steps=USE_DEFAULT, summary_dir=None):
    """TF1's ``tf.train.MonitoredTrainingSession``: a MonitoredSession that restores from
    and saves to ``checkpoint_dir`` (a checkpoint every 600 seconds by default, or every
    ``save_checkpoint_steps``; one at the start and one at the end), writing the summaries
    there every ``save_summaries_steps`` (100) steps, with ``hooks``."""
    hooks = list(hooks or [])
    if is_chief:
        hooks += list(chief_only_hooks or [])
        if checkpoint_dir:
            steps = None if save_checkpoint_steps is USE_DEFAULT else save_checkpoint_steps
            secs = None if save_checkpoint_secs is USE_DEFAULT else save_checkpoint_secs
            if steps is None and secs is None and save_checkpoint_secs is USE_DEFAULT:
                secs = 600
            if steps or secs:
                scaffold = scaffold or Scaffold()
                scaffold.finalize()
                hooks.append(CheckpointSaverHook(checkpoint_dir, save_secs=secs,
                                                 save_steps=steps, saver=scaffold.saver))
        summary_dir = summary_dir or checkpoint_dir
        every = 100 if save_summaries_steps is USE_DEFAULT else save_summaries_steps
        secs = None if save_summaries_secs is USE_DEFAULT else save_summaries_secs
        if summary_dir and (every or secs):
            hooks.append(SummarySaverHook(save_steps=None if secs and not every else every,
                                          save_secs=secs if secs and not every else None,
                                          output_dir=summary_dir))
    creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                  checkpoint_dir=checkpoint_dir)
    return MonitoredSession(creator, hooks=hooks)


TRAIN_NAMES = {
    "exponential_decay": exponential_decay, "ExponentialMovingAverage": ExponentialMovingAverage,
    "global_step": global_step, "Server": Server, "SessionRunArgs": SessionRunArgs,
    "SessionRunContext": SessionRunContext, "SessionRunValues": SessionRunValues,
    "SessionRunHook": SessionRunHook, "StopAtStepHook": StopAtStepHook,
    "CheckpointSaverHook": CheckpointSaverHook, "SummarySaverHook": SummarySaverHook,
    "Scaffold": Scaffold,
    "ChiefSessionCreator": ChiefSessionCreator, "MonitoredSession": MonitoredSession,
    "MonitoredTrainingSession": MonitoredTrainingSession,
}
